"""Typed results of ``deadzone-id teleop`` (core, no ROS), written as JSON by ``to_dict`` and read back by
``from_dict`` (:mod:`deadzone_id_ros.jsonrecord`)."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ...jsonrecord import JsonRecord

#: The scenarios of ``deadzone-id teleop``: name -> what the operator does.
SCENARIOS = {"free": "free motion", "push": "push against the box and back", "hold": "holding a contact",
             "stuck": "gentle push on a stuck follower joint"}

__all__ = ["CaseFigures", "TeleopResults"]

#: figure name -> (meaning, unit), the keys of :attr:`CaseFigures.mean` and :attr:`CaseFigures.worst`
FIGURES = {
    "tracking_rmse": ("follower tracking RMSE |x_l - q_f| after 0.5 s", "rad"),
    "felt_error": ("RMS of felt - true contact torque over RMS contact torque, during contact", "1"),
    "felt_error_main": ("felt_error on the joint of the largest contact torque alone", "1"),
    "free_phantom": ("RMS follower torque reflected in free motion (nothing touches it)", "N·m"),
    "contact_rms": ("RMS true contact torque during contact", "N·m"),
    "contact_s": ("time in contact", "s"),
    "oscillation_ratio": ("contact-torque std, last window of the hold / first window after onset", "1"),
    "oscillation_final": ("contact-torque std over the last window of the hold", "N·m"),
    "phantom": ("largest reflected follower torque in the stuck scenario", "N·m"),
    "push_peak": ("largest true follower torque of the stuck scenario's push", "N·m"),
    "coverage": ("share of pushed ticks whose interval holds the true follower torque", "1"),
    "felt_law": ("felt_error's part left by the force law: r_l + s_f r_f (gain, lag, transients)", "1"),
    "felt_dead_zone": ("felt_error's part from shrinking stuck joints' estimates toward zero", "1"),
    "felt_est_leader": ("felt_error's part from the leader's estimation error", "1"),
    "felt_est_follower": ("felt_error's part from the follower's estimation error", "1"),
    "felt_beyond_band": ("felt_error_settled beyond the two arms' intervals +-(half_l + s_f half_f), per joint", "1"),
    "felt_error_settled": ("felt_error after the first window s of contact (the impact)", "1"),
    "stuck_share": ("share of contact ticks on which either arm's sensor reports a stuck joint (0: no band)", "1"),
}
#: figures where larger is worse (the worst seed is the max); the others (coverage) the min
_LOWER_BETTER = {"tracking_rmse", "felt_error", "felt_error_main", "free_phantom", "oscillation_ratio",
                 "oscillation_final", "phantom", "felt_law", "felt_dead_zone", "felt_est_leader", "felt_est_follower",
                 "stuck_share", "felt_beyond_band", "felt_error_settled"}


def _nanmean(xs: Sequence[float]) -> float:
    v = [x for x in xs if not math.isnan(x)]
    return sum(v) / len(v) if v else math.nan


@dataclass(frozen=True)
class CaseFigures(JsonRecord):
    """The figures of one (model, mode, scenario) over the seeds.

    Attributes:
        model: "nominal", "identified" or a path.  model_label: what it is.  mode: "unilateral"/"bilateral".
        scenario: see :data:`~.run.SCENARIOS`.  per_seed: one {figure: value} per seed (NaN: does not apply).
        mean: {figure: mean over seeds}.  worst: {figure: worst seed}.  faults: latched faults (one per faulted run).
    """

    model: str
    model_label: str
    mode: str
    scenario: str
    per_seed: list[dict[str, float]]
    mean: dict[str, float]
    worst: dict[str, float]
    faults: list[str]

    @classmethod
    def from_seeds(cls, model: str, label: str, mode: str, scenario: str, per_seed: list[dict[str, float]],
                   faults: Sequence[str]) -> CaseFigures:
        """Aggregate the per-seed figures (mean, worst)."""
        keys = list(per_seed[0]) if per_seed else []
        mean = {k: _nanmean([s[k] for s in per_seed]) for k in keys}
        worst = {}
        for k in keys:
            v = [s[k] for s in per_seed if not math.isnan(s[k])]
            worst[k] = (max(v) if k in _LOWER_BETTER else min(v)) if v else math.nan
        return cls(model, label, mode, scenario, per_seed, mean, worst, [f for f in faults if f])

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready (``dataclasses.asdict``)."""
        return dataclasses.asdict(self)


@dataclass(frozen=True)
class TeleopResults(JsonRecord):
    """Every case of one ``deadzone-id teleop`` run.

    Attributes:
        robot: the profile of both arms.  joint_names: (J,).  seeds: the runs.  duration: per scenario [s].
        hand_stiffness [N·m/rad], hand_damping [N·m·s/rad]: the scripted operator.  force_gain, force_damping [1/s],
        position_scale, force_scale: the bilateral law.  cases: every (model, mode, scenario).  wall_s: [s].
        hand_auto: the operator's impedance was sized to the arm (:func:`.sizing.hand_impedance`), not given.
    """

    robot: str
    joint_names: list[str]
    seeds: list[int]
    duration: float
    hand_stiffness: float
    hand_damping: float
    force_gain: float
    force_damping: float
    position_scale: float
    force_scale: float
    cases: list[CaseFigures]
    wall_s: float
    hand_auto: bool = False

    def case(self, model: str, mode: str, scenario: str) -> CaseFigures | None:
        """The case of (model, mode, scenario), or None."""
        for c in self.cases:
            if (c.model, c.mode, c.scenario) == (model, mode, scenario):
                return c
        return None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready (``dataclasses.asdict``)."""
        return dataclasses.asdict(self)
