"""Parameters of the bag_replay node (ROS-free: no rclpy import).

The node has no parameter file of its own; its parameters come from launch/replay.launch.yaml or the command line.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..config import check_positive

__all__ = ["BagReplayNodeConfig"]


@dataclass(frozen=True)
class BagReplayNodeConfig:
    """Parameters of the bag_replay node (ROS parameters; see :mod:`deadzone_id_ros.nodes.bag_replay`).

    Attributes:
        bag: the bag to play (directory or file); required.
        command_joint_names: (J,) joint order of /effort_controller/commands (the sim's ``joint_names``); required
            (no default): a robot profile's ``command_joints``
            (:func:`deadzone_id_ros.sim.robot_configs.bag_replay_config`).
        joint_state_topic: JointState topic inside the bag.
        command_topic: command topic inside the bag.
        start_delay: wait this long after the simulator's first /joint_states before playing [s] (>= 0); not used
            with ``lockstep`` (simulated time stands still until the first command).
        rate: playback timer rate [Hz]; each tick publishes the latest command that is due (not used with
            ``lockstep``).
        lockstep: answer every /joint_states with the command due at its header stamp instead of playing on a timer;
            for a simulator in lockstep (``sim_arm`` ``clock_mode: sim``, ``lockstep: true``), where each physics
            tick waits for that answer, so the replay does not depend on CPU load or DDS latency and matches the
            offline open-loop replay. Times then come from the header stamps, not the node's clock (simulated time
            stands at 0 until the first answer, so ``use_sim_time`` is not needed).
        report_dir: directory for report.json (RMSE per joint); "" = log only.
        clock_timeout: with ``use_sim_time``, give up (exit status 1) when no /clock message arrives within this
            many seconds of wall time [s] (> 0).
        max_skipped: most recorded commands that may be skipped (superseded before a late timer tick published them)
            for the replay to count as valid (>= 0); more fails the replay (exit 1), since the arm then did not
            receive the recorded input and the RMSE is not the model's or the simulator's.

    Raises:
        ValueError: a bad value; the message names the field and the value.
    """

    bag: str = ""
    command_joint_names: tuple[str, ...] = field(kw_only=True)
    joint_state_topic: str = "/joint_states"
    command_topic: str = "/effort_controller/commands"
    start_delay: float = 0.5
    rate: float = 1000.0
    report_dir: str = ""
    clock_timeout: float = 30.0
    max_skipped: int = 0
    lockstep: bool = False

    def __post_init__(self) -> None:
        if not self.bag:
            raise ValueError("bag = '' : the bag to replay is required (bag:=PATH)")
        if not self.command_joint_names or len(set(self.command_joint_names)) != len(self.command_joint_names):
            raise ValueError(f"command_joint_names = {list(self.command_joint_names)} must be non-empty and unique")
        check_positive("start_delay", self.start_delay, allow_zero=True)
        check_positive("clock_timeout", self.clock_timeout)
        if not (isinstance(self.rate, (int, float)) and 1.0 <= self.rate <= 10000.0):
            raise ValueError(f"rate = {self.rate!r} must be in [1, 10000] Hz")
        if not isinstance(self.lockstep, bool):
            raise ValueError(f"lockstep = {self.lockstep!r} must be true or false")
        check_positive("max_skipped", self.max_skipped, integer=True, allow_zero=True)
