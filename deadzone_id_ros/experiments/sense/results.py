"""Typed results of ``deadzone-id sense`` (core, no ROS), written as JSON by ``to_dict`` and read back by ``from_dict``
(:mod:`deadzone_id_ros.jsonrecord`)."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any

from ...jsonrecord import JsonRecord

__all__ = ["EstimatorFigures", "FalseContact", "PushFigure", "SenseResults"]


@dataclass(frozen=True)
class PushFigure(JsonRecord):
    """One scripted push of the push scenario.

    Attributes:
        seed: the run.  start: onset of the push [s].  magnitude: [N] at the end-effector point.
        detected: the contact flag rose during the push.  delay_ms: onset of the flag minus start [ms] (NaN if not).
    """

    seed: int
    start: float
    magnitude: float
    detected: bool
    delay_ms: float

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready (``dataclasses.asdict``)."""
        return dataclasses.asdict(self)


@dataclass(frozen=True)
class FalseContact(JsonRecord):
    """One contact onset in free motion (no push): where and in what motion the estimate crossed the threshold.

    Attributes:
        seed: the run.  scenario: "pushes" (outside the push windows) or "free" (the free-motion run without pushes).
        t: onset [s] of simulated time in that run.  joints: the joints whose excess passed their threshold.
        dq: (J,) measured velocity at the onset [rad/s].  ratio: (J,) excess / threshold at the onset.
    """

    seed: int
    scenario: str
    t: float
    joints: list[str]
    dq: list[float]
    ratio: list[float]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready (``dataclasses.asdict``)."""
        return dataclasses.asdict(self)


@dataclass(frozen=True)
class EstimatorFigures(JsonRecord):
    """The figures of one estimator over every scenario and seed.

    Attributes:
        name: key ("residual_band", "residual", "momentum", "dob").  label: for tables.
        threshold: (J,) contact thresholds from the calibration run [N·m].  band: (J,) tau_s [N·m] (zeros: no band).
        fade_velocity: (J,) the band's calibrated fade [rad/s] (zeros: none; the nodes' ``sensing_fade_velocity``).
        load_gain: (J,) the band's growth with |motor torque| [1] (zeros: none; ``sensing_band_load_gain``).
        free_minutes: simulated free motion [min] (the push runs outside their windows, and the free-motion runs).
        false_contacts: contact onsets in free motion (no push).
        false_contacts_per_min: the same per simulated minute.
        hold_false_contacts: contact onsets while the arm holds still without any push.
        rmse_contact: (J,) RMSE of the estimate vs the true external torque over the push windows and the collision
            (from its onset) [N·m].
        rmse_contact_mean: mean over joints [N·m].  rmse_over_noise: rmse_contact_mean / the torque noise floor.
        rmse_moving: (J,) the RMSE over the push windows on the ticks where the joint moves (|dq| above the stuck
            threshold: the estimate is exact there; a stuck joint's is an interval, see interval_coverage) [N·m].
        rmse_moving_over_noise: mean of rmse_moving / the torque noise floor.
        smallest_detected_force: smallest push [N] such that it and every larger one were all detected (NaN: none).
        max_delay_ms_at_1n: the largest detection delay of the pushes of 1 N or more [ms] (NaN: one missed).
        interval_coverage: share of stuck (joint, tick) pairs of the push windows whose interval holds the truth.
        pushes: every push.
        collision_delay_ms: per seed, the detection delay of the collision with the obstacle [ms] (NaN: missed).
        false_contact_events: every false contact onset (empty in results written before it was recorded).
        hold_push_force: per seed, the force [N] of the quasi-static push (a ramp over the second half of the hold,
            the arm held still by its controller: inside the dead zone) when a contact was first flagged (NaN: not
            flagged before the run ended).  hold_push_coverage: share of that push's stuck (joint, tick) pairs whose
            interval holds the truth (NaN: no stuck pair, an estimator without band).  Both empty / NaN in results
            written before they were recorded.
    """

    name: str
    label: str
    threshold: list[float]
    band: list[float]
    fade_velocity: list[float]
    load_gain: list[float]
    free_minutes: float
    false_contacts: int
    false_contacts_per_min: float
    hold_false_contacts: int
    rmse_contact: list[float]
    rmse_contact_mean: float
    rmse_over_noise: float
    rmse_moving: list[float]
    rmse_moving_over_noise: float
    smallest_detected_force: float
    max_delay_ms_at_1n: float
    interval_coverage: float
    pushes: list[PushFigure]
    collision_delay_ms: list[float]
    false_contact_events: list[FalseContact] = dataclasses.field(default_factory=list)
    hold_push_force: list[float] = dataclasses.field(default_factory=list)
    hold_push_coverage: float = math.nan

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready (``dataclasses.asdict``)."""
        return dataclasses.asdict(self)


@dataclass(frozen=True)
class SenseResults(JsonRecord):
    """Everything ``deadzone-id sense`` measured on one robot.

    Attributes:
        robot: profile name.  model: what the residual estimators used ("learned: <path>" or the URDF nominal).
        joint_names: (J,).  seeds: the evaluation seeds (held out: the calibration run uses its own seed).
        calibration_seed: the free-motion run thresholds and band come from.
        noise_floor: (J,) the simulator's torque noise std [N·m].  noise_floor_mean: its mean [N·m].
        frame: the end-effector link.  point: (3,) the pushed point in that link's frame [m].
        cutoff: estimator filter cutoff [rad/s].  quantile, margin: threshold rule (:func:`calibrate_thresholds`).
        confirm: consecutive samples above threshold that started a contact (1 in results written before it was
            recorded).
        lag_rmse_moving: (J,) the RMSE that the output filter's lag alone leaves (the true torque through the same
            filter, vs the true torque) where ``rmse_moving`` is taken: the floor of any causal estimate with this
            cutoff [N·m].
        friction: (J x 5,) the friction correction of the residual identified on the calibration run
            (:mod:`deadzone_id_ros.sensing.friction`; the nodes' ``sensing_friction``).
        friction_stribeck: (2,) its Stribeck velocity [rad/s] and exponent (``sensing_friction_stribeck``).
        estimators: one entry per estimator.  wall_s: run time [s].
        calibration_speed: (J,) the calibration run's peak |dq| [rad/s] (empty in results written before it was
            recorded).  evaluation_speed: (J,) the peak |dq| of every evaluation run (pushes, free motion, hold,
            collision) [rad/s]: above the calibration's, the friction correction and thresholds are extrapolated.
        velocity_threshold: (J,) the stuck velocity the band and the friction fit used [rad/s] (the nodes'
            ``sensing_velocity_threshold``; empty in results written before it was recorded).
    """

    robot: str
    model: str
    joint_names: list[str]
    seeds: list[int]
    calibration_seed: int
    noise_floor: list[float]
    noise_floor_mean: float
    frame: str
    point: list[float]
    cutoff: float
    lag_rmse_moving: list[float]
    quantile: float
    margin: float
    friction: list[float]
    friction_stribeck: list[float]
    estimators: list[EstimatorFigures]
    wall_s: float
    confirm: int = 1
    calibration_speed: list[float] = dataclasses.field(default_factory=list)
    evaluation_speed: list[float] = dataclasses.field(default_factory=list)
    velocity_threshold: list[float] = dataclasses.field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready (``dataclasses.asdict``)."""
        return dataclasses.asdict(self)
