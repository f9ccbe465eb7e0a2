"""Settings of the ``teleop_bilateral`` node (core, no ROS): one ROS parameter per field.

The pair is built exactly as ``deadzone-id teleop`` builds it in process (:func:`.build.arm_setup`,
:func:`.build.build_teleop_pair`), so a live run over DDS and an in-process run of the same settings run the same
control law.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..config import check_positive
from .bilateral import BilateralConfig, BilateralController

__all__ = ["TeleopNodeConfig"]


@dataclass(frozen=True)
class TeleopNodeConfig:
    """Parameters of the ``teleop_bilateral`` node.

    Attributes:
        leader_robot: the leader's robot profile (a shipped name or a profile FILE; "" = the bundled arm).
        follower_robot: the follower's ("" = the bundled arm).
        model: both arms' model: nominal, identified, or a learned model path (teleop.build.arm_setup).
        mode: bilateral (force feedback) or unilateral (position copy).
        position_scale: s_p, follower motion per leader motion (> 0).  force_scale: s_f, felt torque per contact
            torque (> 0).
        force_gain: k_f (>= 0).  force_damping: common-mode damping d_c [1/s] (>= 0).
        dead_zone: reflect the dead-zone-aware interval's point nearest zero (only where the model has a band).
        joint_map: "follower_joint:leader_joint" entries; empty: map the two arms' joints by name.
        cutoff: the force estimators' cutoff [rad/s] (> 0).
        max_stamp_skew: the largest stamp difference [s] (>= 0) of a leader and a follower state answered as one
            pair (0: equal stamps, as two simulators in lockstep give).
        watchdog_steady_timeout: steady-clock backstop of the watchdog [s] (> 0): no pair of states for this long
            in wall time runs both controllers' watchdogs even when the ROS clock stands still (a stalled /clock).

    Raises:
        ValueError: a bad value (named with it).
    """

    leader_robot: str = ""
    follower_robot: str = ""
    model: str = "identified"
    mode: str = "bilateral"
    position_scale: float = 1.0
    force_scale: float = 1.0
    force_gain: float = 1.0
    force_damping: float = 0.0
    dead_zone: bool = True
    joint_map: tuple[str, ...] = ()
    cutoff: float = 100.0
    max_stamp_skew: float = 0.0
    watchdog_steady_timeout: float = 2.0

    def __post_init__(self) -> None:
        if not self.model:
            raise ValueError("model must be nominal, identified or a learned model path, got ''")
        self.mapping()
        self.bilateral()  # mode, scales and gains: BilateralConfig checks them
        check_positive("cutoff", self.cutoff)
        check_positive("watchdog_steady_timeout", self.watchdog_steady_timeout)
        check_positive("max_stamp_skew", self.max_stamp_skew, allow_zero=True)

    def mapping(self) -> dict[str, str] | None:
        """{follower joint: leader joint} of ``joint_map``, or None (map by name).

        Raises:
            ValueError: an entry not of the form "follower:leader", or a follower joint given twice.
        """
        if not self.joint_map:
            return None
        out: dict[str, str] = {}
        for entry in self.joint_map:
            f, sep, ldr = str(entry).partition(":")
            if not sep or not f.strip() or not ldr.strip() or f.strip() in out:
                raise ValueError(f"joint_map entry {entry!r} must be 'follower_joint:leader_joint', each follower "
                                 f"joint once (joint_map = {list(self.joint_map)})")
            out[f.strip()] = ldr.strip()
        return out

    def bilateral(self) -> BilateralConfig:
        """The :class:`.bilateral.BilateralConfig` of these settings.

        Raises:
            ValueError: a bad mode, scale or gain.
        """
        return BilateralConfig(mode=self.mode, position_scale=self.position_scale, force_scale=self.force_scale,
                               force_gain=self.force_gain, force_damping=self.force_damping, dead_zone=self.dead_zone)

    def build(self) -> BilateralController:
        """The pair's controller, as in process (:func:`.build.build_teleop_pair`).

        Raises:
            SafetyError: the two profiles' joints cannot be mapped (names them), "refusing to start".
            FileNotFoundError, ConfigError, ArtifactError: a profile or the model cannot be loaded.
        """
        from .build import arm_setup, build_teleop_pair

        leader, follower = arm_setup(self.leader_robot, self.model), arm_setup(self.follower_robot, self.model)
        return build_teleop_pair(leader, follower, self.bilateral(), self.mapping(), self.cutoff)
