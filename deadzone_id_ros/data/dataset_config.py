"""How bags become training episodes (core, no ROS): :class:`DatasetConfig`, in a module of its own.

Every cleaning module (:mod:`.stages`, :mod:`.decisions`, :mod:`.defects`, :mod:`.resample`) and the loader
(:mod:`.dataset`) read it; it imports nothing of theirs, so the data package has no import cycle, type-only imports
included (``test/data/test_import_graph.py``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from ..config import check_positive

__all__ = ["TIME_SOURCES", "VELOCITY_SOURCES", "DatasetConfig"]

VELOCITY_SOURCES = ("auto", "message", "differentiate")
TIME_SOURCES = ("auto", "header", "log")


@dataclass(frozen=True)
class DatasetConfig:
    """How bags become training episodes.

    Attributes:
        topic: the JointState topic; None selects the only JointState topic with named joints and usable effort
            (several candidates are refused with the list).
        joints: joints to keep, in this order; None keeps every joint with usable position and effort, in the
            order first seen on the topic.
        rate_hz: resampling rate [Hz] > 0; None uses 1 / (median stamp step) of each bag.
        max_gap_s: a stamp step longer than this [s] splits the data into separate episodes (> 0).
        velocity: ``"auto"`` (message velocity when usable, else differentiate q), ``"message"`` (require it) or
            ``"differentiate"`` (always Savitzky–Golay derivative of q).
        time_source: ``"auto"`` (header stamps; log time when stamps are zero), ``"header"`` or ``"log"``.
        savgol_window_s: Savitzky–Golay window [s] for dq (when differentiated) and ddq; turned into an odd number
            of samples, at least ``savgol_order + 2``.
        savgol_order: Savitzky–Golay polynomial order (1..5).
        merge_tolerance_s: joints split across publishers (each message carrying some joints) are merged by name:
            another publisher's value at a stamp is interpolated between its messages just before and after, both
            within this many seconds of the stamp (> 0; default 0.02 s).
        effort_limits: ``{joint: limit [N·m]}`` (e.g. the URDF's effort limits), or None; effort beyond 3x the limit
            is physically implausible and the joint's effort unusable.
        torque_constants: ``{joint: k [N·m per unit of the recorded effort]}`` (e.g. for motor current in mA), or
            None; the effort of each named joint is multiplied by its k when the data are loaded (its unit is then
            N·m).
        joint_renames: ``{name in the bag: name to use}`` (a bag-side joint map), or None: applied to every message
            before anything else, so a recording whose joints were renamed part-way (a driver relaunched with a
            prefix) reads as one run. A message that carries both a name and its new name is refused.
        effort_unit: the unit of the recorded effort of the joints without a torque constant, as the user states it
            (e.g. "N*m", "mA"); None guesses it from the bag (:func:`~deadzone_id_ros.data.effort_units.
            guess_effort_unit`). Carried into the report, the model artifact and the controller's check.
        effort_sign_bit: ``{joint: bit}`` for effort recorded as a sign-and-magnitude register (Feetech's raw
            Present_Load: bit 10), decoded before anything else reads it (:mod:`~deadzone_id_ros.data.sign_bit`);
            None decodes nothing.

    The dead-zone setting is not part of this: it is :class:`~deadzone_id_ros.data.deadzone.DeadZoneConfig`.
    """

    topic: str | None = None
    joints: tuple[str, ...] | None = None
    rate_hz: float | None = None
    max_gap_s: float = 0.1
    velocity: str = "auto"
    time_source: str = "auto"
    savgol_window_s: float = 0.05
    savgol_order: int = 3
    merge_tolerance_s: float = 0.02
    effort_limits: Mapping[str, float] | None = None
    torque_constants: Mapping[str, float] | None = None
    effort_unit: str | None = None
    joint_renames: Mapping[str, str] | None = None
    effort_sign_bit: Mapping[str, int] | None = None

    def __post_init__(self) -> None:
        if self.topic is not None and (not isinstance(self.topic, str) or not self.topic):
            raise ValueError(f"DatasetConfig.topic = {self.topic!r} must be a non-empty string or None")
        if self.joints is not None:
            if isinstance(self.joints, str) or not all(isinstance(j, str) and j for j in self.joints):
                raise ValueError(f"DatasetConfig.joints = {self.joints!r} must be a sequence of joint names or None")
            if not self.joints or len(set(self.joints)) != len(self.joints):
                raise ValueError(f"DatasetConfig.joints = {self.joints!r} must be non-empty without duplicates")
            object.__setattr__(self, "joints", tuple(self.joints))
        if self.rate_hz is not None:
            check_positive("DatasetConfig.rate_hz", self.rate_hz)
        check_positive("DatasetConfig.max_gap_s", self.max_gap_s)
        if self.velocity not in VELOCITY_SOURCES:
            raise ValueError(f"DatasetConfig.velocity = {self.velocity!r} must be one of {VELOCITY_SOURCES}")
        if self.time_source not in TIME_SOURCES:
            raise ValueError(f"DatasetConfig.time_source = {self.time_source!r} must be one of {TIME_SOURCES}")
        check_positive("DatasetConfig.savgol_window_s", self.savgol_window_s)
        if not isinstance(self.savgol_order, int) or not 1 <= self.savgol_order <= 5:
            raise ValueError(f"DatasetConfig.savgol_order = {self.savgol_order!r} must be an integer in 1..5")

        check_positive("DatasetConfig.merge_tolerance_s", self.merge_tolerance_s)
        if self.effort_limits is not None:
            bad = {k: v for k, v in dict(self.effort_limits).items() if not (np.isfinite(v) and v > 0)}
            if bad:
                raise ValueError(f"DatasetConfig.effort_limits: limits {bad} must be > 0 [N·m]")
            object.__setattr__(self, "effort_limits", dict(self.effort_limits))

        if self.torque_constants is not None:
            bad = {k: v for k, v in dict(self.torque_constants).items() if not (np.isfinite(v) and v != 0)}
            if bad:
                raise ValueError(f"DatasetConfig.torque_constants: constants {bad} must be finite and non-zero")
            object.__setattr__(self, "torque_constants", dict(self.torque_constants))
        if self.joint_renames is not None:
            renames = dict(self.joint_renames)
            if not all(isinstance(k, str) and k and isinstance(v, str) and v and k != v for k, v in renames.items()):
                raise ValueError(f"DatasetConfig.joint_renames = {renames!r} must map bag joint names to other, "
                                 "non-empty names")
            object.__setattr__(self, "joint_renames", renames)
        if self.effort_unit is not None and (not isinstance(self.effort_unit, str) or not self.effort_unit.strip()):
            raise ValueError(f"DatasetConfig.effort_unit = {self.effort_unit!r} must be a non-empty string or None")
        if self.effort_sign_bit is not None:
            bits = dict(self.effort_sign_bit)
            bad = {k: v for k, v in bits.items() if not (isinstance(v, int) and 1 <= v <= 30)}
            if bad:
                raise ValueError(f"DatasetConfig.effort_sign_bit: bits {bad} must be whole numbers in 1..30")
            object.__setattr__(self, "effort_sign_bit", bits)

    def window_samples(self, rate_hz: float) -> int:
        """The Savitzky–Golay window length in samples at ``rate_hz`` [Hz] (odd, >= savgol_order + 2)."""
        n = int(round(self.savgol_window_s * rate_hz))
        n = max(n, self.savgol_order + 2)
        return n if n % 2 else n + 1
