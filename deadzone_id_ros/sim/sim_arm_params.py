"""Parameters of the sim_arm node (ROS-free: no rclpy import, so the loader works without ROS).

The parameter file (config/sim_arm.yaml) holds two configs: the physics, :class:`deadzone_id_ros.sim.SimArmConfig`,
and the node-only timing :class:`SimArmNodeConfig` below.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..config import check_positive, load_node_configs
from ..control.config import DEFAULT_CONTROL_RATE
from ..realtime import check_realtime
from .config import SimArmConfig

__all__ = ["SimArmNodeConfig", "load_sim_config"]


@dataclass(frozen=True)
class SimArmNodeConfig:
    """Timing of the sim_arm node.

    Attributes:
        publish_rate: /joint_states rate [Hz]; the physics advances by wall time between ticks. 0 (the default): the
            robot profile's ``control_rate`` (the rate its hardware delivers states; 1000 Hz without a profile).
        command_timeout: no command for this long -> zero torque [s].
        clock_mode: "wall" (stamps from the system clock) or "sim" (the node publishes /clock and owns time).
        real_time_factor: clock_mode "sim" only: simulated seconds per wall second.
        brake_until_first_command: hold the joints at ``initial_position`` (as motor brakes do) until the first
            effort command arrives, instead of letting the arm fall under gravity with zero torque.
        lockstep: clock_mode "sim" only: advance one tick only once an effort command has answered the last
            published /joint_states (synchronous co-simulation, like Gazebo's lockstep), so closed-loop results do
            not depend on CPU load; time then runs at most ``real_time_factor``. Simulated time stays at zero (the
            initial state repeated at 10 Hz) until the first command arrives.
        lockstep_timeout: lockstep only: wall seconds to wait for that command before stepping without it [s].
        wait_for_subscriber_nodes: lockstep only: names of the nodes (``recorder`` or ``/ns/recorder``) whose
            /joint_states subscriptions must be in the ROS graph, and every subscription the graph shows matched by
            this node's publisher, before the first state goes out; simulated time cannot start before (nothing to
            answer), so a recorder that starts slower than the controller still records from the first state. Empty
            (the default): publish at once. Ignored without ``lockstep`` (the wall clock runs whoever listens).
        step_on_answer: lockstep only: step the physics as soon as the answering command arrives, instead of at the
            next ``publish_rate`` timer tick (still capped by ``real_time_factor``): lockstep then runs as fast as
            the controller answers (the demo's live recording: 69 s -> 43-63 s). Off by default: a subscriber
            that takes every 1 kHz message in one Python process (a test probe, the live soak's relay) falls behind
            the faster pace on a busy machine.
        thread_priority: SCHED_FIFO priority (1..99) of the node's threads, as ros2_control_node's
            ``thread_priority``; 0 keeps normal scheduling. Refused by the kernel: a warning, normal scheduling.
        lock_memory: mlockall(MCL_CURRENT | MCL_FUTURE) at start; refused: a warning.
        cpu_affinity: CPUs the node's threads may run on (empty: any CPU); refused: a warning.
        exit_after: clock_mode "sim" only: once simulated time reaches this [s], the node exits (status 0), so a
            launch file whose scenario is scripted ends with it (``on_exit: shutdown``); until then it logs the
            simulated time once per simulated second. 0 (the default): run until stopped.

    Raises:
        ValueError: a bad value; the message names the field and the value.
    """

    publish_rate: float = 0.0
    command_timeout: float = 0.1
    clock_mode: str = "wall"
    real_time_factor: float = 1.0
    brake_until_first_command: bool = True
    lockstep: bool = False
    lockstep_timeout: float = 1.0
    wait_for_subscriber_nodes: tuple[str, ...] = ()
    step_on_answer: bool = False
    thread_priority: int = 0
    lock_memory: bool = False
    cpu_affinity: tuple[int, ...] = ()
    exit_after: float = 0.0

    def __post_init__(self) -> None:
        check_realtime(self.thread_priority, self.lock_memory, self.cpu_affinity)
        for name in ("brake_until_first_command", "lockstep", "step_on_answer"):
            if not isinstance(getattr(self, name), bool):
                raise ValueError(f"{name} = {getattr(self, name)!r} must be true or false")
        if self.lockstep and self.clock_mode != "sim":
            raise ValueError(
                "lockstep = true needs clock_mode = 'sim' (the simulator must own time to wait for commands)"
            )
        check_positive("lockstep_timeout", self.lockstep_timeout)
        object.__setattr__(self, "wait_for_subscriber_nodes", tuple(self.wait_for_subscriber_nodes))
        bad = [n for n in self.wait_for_subscriber_nodes if not isinstance(n, str) or not n.strip("/")]
        if bad:
            raise ValueError(f"wait_for_subscriber_nodes = {list(self.wait_for_subscriber_nodes)!r}: {bad!r} is not a "
                             "node name")
        if self.publish_rate == 0:
            object.__setattr__(self, "publish_rate", DEFAULT_CONTROL_RATE)
        if not 1.0 <= self.publish_rate <= 10000.0:
            raise ValueError(f"publish_rate = {self.publish_rate} must be in [1, 10000] Hz")
        check_positive("command_timeout", self.command_timeout)
        if self.clock_mode not in ("wall", "sim"):
            raise ValueError(f"clock_mode = {self.clock_mode!r} must be 'wall' or 'sim'")
        check_positive("real_time_factor", self.real_time_factor)
        check_positive("exit_after", self.exit_after, allow_zero=True)
        if self.exit_after and self.clock_mode != "sim":
            raise ValueError("exit_after needs clock_mode = 'sim' (it counts simulated time)")


def load_sim_config(
    path: str | Path | None = None, overrides: dict | None = None, robot: str | None = None
) -> tuple[SimArmConfig, SimArmNodeConfig]:
    """Load both configs from a parameter file (default: the bundled config/sim_arm.yaml).

    Args:
        path: parameter file in ROS 2 format; None for the bundled default.
        overrides: parameter name -> value applied on top of the file.
        robot: robot profile (a shipped name or a profile file; else the file's or the overrides' ``robot``
            key, else the bundled arm) whose values fill the joints, URDF and per-joint values the file
            leaves out (:func:`deadzone_id_ros.robot.defaults.fill_required`); the file's own values win.

    Raises:
        FileNotFoundError: the file does not exist.
        ConfigError: malformed YAML, an unknown key, or a bad value; the message names the file and key.
    """
    from ..robot.defaults import fill_required

    return load_node_configs(SimArmConfig, SimArmNodeConfig, "sim_arm", "sim_arm.yaml", path,
                             {**(overrides or {}), **({"robot": robot} if robot else {})},
                             fill=fill_required)
