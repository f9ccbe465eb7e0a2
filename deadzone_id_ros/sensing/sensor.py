"""One force sensor per arm (core, no ROS): estimator + dead-zone interval + contact detector + wrench, per sample.

:class:`SensingConfig` is the one setting of all of it (the controller node, the estimator node and ``deadzone-id
sense`` build from it with :func:`build_sensor`); :class:`ForceSensor` runs it tick by tick.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import numpy as np

from ..data.effort_units import PRESENT_LOAD, normalize_unit
from ..models.base import InverseDynamicsModel
from ..models.runtime import RigidBodySettings
from .contact import CONFIRM_SAMPLES, ContactDetector, ContactState, StaticFrictionBand
from .effort import EFFORT_UNITS, EffortReading
from .friction import FRICTION_TERMS, LoadFriction

if TYPE_CHECKING:
    from ..models.runtime import NominalRigidBodyModel
from .estimators import DobEstimator, ExternalTorqueEstimator, MomentumObserver, ResidualEstimator
from .wrench import WrenchEstimate, WrenchEstimator

__all__ = ["ESTIMATOR_KINDS", "SENSING_CHOICES", "SENSING_RANGES", "ForceSensor", "NominalSettings", "SensingConfig",
           "SensingSample", "build_sensor", "nominal_rigid_body"]

#: estimator kinds :func:`build_sensor` knows (:mod:`.estimators`)
ESTIMATOR_KINDS = ("residual", "momentum", "dob")
#: the allowed values of the string ``sensing_*`` node parameters that take one of a few
SENSING_CHOICES: dict[str, tuple[str, ...]] = {"sensing_estimator": ESTIMATOR_KINDS,
                                               "sensing_effort_unit": EFFORT_UNITS}
#: (lo, hi) of every numeric ``sensing_*`` node parameter, in its unit (per-joint lists: each value)
SENSING_RANGES: dict[str, tuple[float, float]] = {
    "sensing_cutoff": (1e-3, 1e6), "sensing_velocity_threshold": (0.0, 100.0), "sensing_band": (0.0, 1e4),
    "sensing_fade_velocity": (0.0, 100.0), "sensing_band_load_gain": (0.0, 10.0), "sensing_friction": (-1e4, 1e4),
    "sensing_friction_stribeck": (1e-6, 1e3),
    "sensing_threshold": (0.0, 1e4), "sensing_release": (0.0, 1.0), "sensing_confirm": (1, 1000),
    "sensing_publish_every": (1, 10000),
    "sensing_point": (-100.0, 100.0),
    "sensing_no_load_speed": (1e-6, 1e4)}


def _nonneg(name: str, values: tuple[float, ...]) -> tuple[float, ...]:
    out = tuple(float(v) for v in values)
    if not all(math.isfinite(v) and v >= 0 for v in out):
        raise ValueError(f"{name} = {list(values)} must be finite values >= 0")
    return out


@dataclass(frozen=True)
class SensingConfig:
    """How external torque, contact and wrench are sensed.

    Field names carry the prefix ``sensing_``: they are parameters of the controller and estimator nodes too.

    Attributes:
        sensing: the controller senses at all (default off: it adds five topics a tick; ``sensing:=true`` turns it on;
            the force_estimator node always senses).
        sensing_estimator: "residual" (the controller's model, any kind), "momentum" (momentum observer on the URDF's
            nominal rigid body) or "dob" (disturbance observer, nominal inertia + URDF rigid body).
        sensing_cutoff: output filter cutoff / observer gain [rad/s] (> 0), every joint.
        sensing_dead_zone: report a stuck joint's estimate as an interval of half width ``sensing_band`` and test
            intervals.
        sensing_velocity_threshold: (J,) stuck when |dq| <= this [rad/s]; empty = the model artifact's dead zone
            (alpha sigma of its training data); without either the band is off (:func:`build_sensor` says so).
        sensing_band: (J,) tau_s [N·m]; empty = the URDF's static friction ``<dynamics friction>``.
        sensing_fade_velocity: (J,) [rad/s]: the band fades outside the dead zone as ``tau_s exp(-(|dq| -
            threshold) / fade)`` (:class:`~.contact.StaticFrictionBand`, the breakaway of static friction; ``deadzone-id
            sense`` calibrates it); empty = no fade (exact as soon as the joint moves).
        sensing_band_load_gain: (J,) [1]: the band grows with the motor torque, ``tau_s + gain |tau_m|`` (static
            friction of a geared joint grows with its load; ``deadzone-id sense`` identifies it); empty = none.
        sensing_friction: (J x 5,) "residual" only: the friction correction of :mod:`.friction` identified on the
            model's free-motion residual (``deadzone-id sense`` prints it), per joint its coefficients of
            :data:`~.friction.FRICTION_TERMS`, joint after joint; empty = none.
        sensing_friction_stribeck: (2,) its Stribeck velocity [rad/s] and exponent (with ``sensing_friction``).
        sensing_threshold: (J,) contact thresholds [N·m] (> 0; e.g. from ``deadzone-id sense``); empty = no contact
            detection.
        sensing_release: hysteresis, in (0, 1]: the contact ends when every excess < release * threshold.
        sensing_confirm: >= 1, consecutive samples above threshold that start a contact (:mod:`.contact`).
        sensing_frame: wrench frame (a URDF link); "" = no wrench.
        sensing_point: (3,) where on the frame the wrench acts, in its axes [m]; empty = its origin.
        sensing_effort_unit: the unit of the measured /joint_states effort: "N*m" (torque; "N" on a prismatic
            joint) or "0.1%duty", a servo's Present_Load (:mod:`.effort`), converted to N·m with the effort limit as
            stall torque and ``sensing_no_load_speed``.
        sensing_no_load_speed: (J,) the servos' no-load speed [rad/s] for "0.1%duty"; empty = the back-EMF term left
            out (right only at rest).
        sensing_publish_every: >= 1: the nodes publish the estimate, its band, the per-joint contact state and the
            wrench on every N-th state (the wrench is computed only then), ``~/contact`` on every N-th state and on
            every change of the flag; the estimate and the contact test run on every state whatever N (the filter
            and the onset need each sample). 1 (default): every topic on every state. On a CPU where the sensor and
            its five topics do not fit in the control period beside the law (``bench/bench_realtime.py``'s
            ``loaded_rt_sensing``), 10 at 1 kHz gives 100 Hz topics.

    Raises:
        ValueError: a bad field (named with its value).
    """

    sensing: bool = False
    sensing_estimator: str = "residual"
    sensing_cutoff: float = 100.0
    sensing_dead_zone: bool = True
    sensing_velocity_threshold: tuple[float, ...] = ()
    sensing_band: tuple[float, ...] = ()
    sensing_fade_velocity: tuple[float, ...] = ()
    sensing_band_load_gain: tuple[float, ...] = ()
    sensing_friction: tuple[float, ...] = ()
    sensing_friction_stribeck: tuple[float, ...] = ()
    sensing_threshold: tuple[float, ...] = ()
    sensing_release: float = 0.5
    sensing_confirm: int = CONFIRM_SAMPLES
    sensing_frame: str = ""
    sensing_point: tuple[float, ...] = ()
    sensing_effort_unit: str = "N*m"
    sensing_no_load_speed: tuple[float, ...] = ()
    sensing_publish_every: int = 1

    def __post_init__(self) -> None:
        if self.sensing_estimator not in ESTIMATOR_KINDS:
            raise ValueError(f"sensing_estimator = {self.sensing_estimator!r} must be one of {list(ESTIMATOR_KINDS)}")
        c = self.sensing_cutoff
        if not (isinstance(c, (int, float)) and math.isfinite(c) and c > 0):
            raise ValueError(f"sensing_cutoff = {c!r} must be a finite number > 0 rad/s")
        for name in ("sensing_velocity_threshold", "sensing_band", "sensing_fade_velocity", "sensing_band_load_gain",
                     "sensing_threshold"):
            object.__setattr__(self, name, _nonneg(name, getattr(self, name)))
        if self.sensing_threshold and not all(v > 0 for v in self.sensing_threshold):
            raise ValueError(f"sensing_threshold = {list(self.sensing_threshold)} must be > 0 N·m per joint")
        if not 0.0 < self.sensing_release <= 1.0:
            raise ValueError(f"sensing_release = {self.sensing_release!r} must be in (0, 1]")
        if isinstance(self.sensing_confirm, bool) or not isinstance(self.sensing_confirm, int) or \
                self.sensing_confirm < 1:
            raise ValueError(f"sensing_confirm = {self.sensing_confirm!r} must be a whole number of samples >= 1")
        if isinstance(self.sensing_publish_every, bool) or not isinstance(self.sensing_publish_every, int) or \
                self.sensing_publish_every < 1:
            raise ValueError(f"sensing_publish_every = {self.sensing_publish_every!r} must be a whole number of "
                             "states >= 1 (1: publish on every state)")
        point = tuple(float(v) for v in self.sensing_point)
        if point and (len(point) != 3 or not all(math.isfinite(v) for v in point)):
            raise ValueError(f"sensing_point = {list(self.sensing_point)} must be 3 finite numbers [m] or empty")
        object.__setattr__(self, "sensing_point", point)
        unit = normalize_unit(self.sensing_effort_unit)
        if unit not in EFFORT_UNITS:
            raise ValueError(f"sensing_effort_unit = {self.sensing_effort_unit!r} must be one of {list(EFFORT_UNITS)} "
                             "(convert another unit, e.g. motor current, to N·m before the sensor)")
        object.__setattr__(self, "sensing_effort_unit", unit)
        speeds = tuple(float(v) for v in self.sensing_no_load_speed)
        if not all(math.isfinite(v) and v > 0 for v in speeds):
            raise ValueError(f"sensing_no_load_speed = {list(speeds)} must be values > 0 rad/s")
        object.__setattr__(self, "sensing_no_load_speed", speeds)
        friction = tuple(float(v) for v in self.sensing_friction)
        stribeck = tuple(float(v) for v in self.sensing_friction_stribeck)
        if not all(math.isfinite(v) for v in friction) or len(friction) % len(FRICTION_TERMS):
            raise ValueError(f"sensing_friction = {list(friction)} must be {len(FRICTION_TERMS)} finite values per "
                             f"joint ({', '.join(FRICTION_TERMS)}) or empty")
        if bool(friction) != (len(stribeck) == 2) or not all(math.isfinite(v) and v > 0 for v in stribeck):
            raise ValueError(f"sensing_friction_stribeck = {list(stribeck)} must be the Stribeck velocity and "
                             "exponent (2 values > 0) exactly when sensing_friction is given")
        object.__setattr__(self, "sensing_friction", friction)
        object.__setattr__(self, "sensing_friction_stribeck", stribeck)


@dataclass(frozen=True)
class SensingSample:
    """What the sensor says at one sample.

    Attributes:
        t: stamp of the state it was computed from [s].
        tau_ext: (J,) external joint torque estimate, centre of the interval [N·m] (the environment on the arm).
        half_width: (J,) interval half width [N·m]: 0 = exact (joint moving), tau_s = stuck (known only within
            tau_ext +- tau_s).
        stuck: (J,) bool.
        contact: the detector's state, or None without thresholds.
        wrench: the wrench at the frame, or None without a frame.
    """

    t: float
    tau_ext: np.ndarray
    half_width: np.ndarray
    stuck: np.ndarray
    contact: ContactState | None
    wrench: WrenchEstimate | None


class ForceSensor:
    """Runs an estimator, the dead-zone band, the contact detector and the wrench on every sample.

    Args:
        estimator: any :class:`~.estimators.ExternalTorqueEstimator`.  band: the dead-zone band
            (:meth:`StaticFrictionBand.none` for an estimator without one).  detector: or None.  wrench: or None.
        effort: the unit of the measured effort :meth:`update_effort` takes (default N·m).

    Raises:
        ValueError: the band's or the effort's joints are not the estimator's.
    """

    def __init__(self, estimator: ExternalTorqueEstimator, band: StaticFrictionBand,
                 detector: ContactDetector | None = None, wrench: WrenchEstimator | None = None,
                 effort: EffortReading | None = None) -> None:
        if band.joint_names != estimator.joint_names:
            raise ValueError(f"band joints {list(band.joint_names)} differ from the estimator's "
                             f"{list(estimator.joint_names)}")
        self.estimator, self.band, self.detector, self.wrench = estimator, band, detector, wrench
        self.joint_names = estimator.joint_names
        self.effort = effort if effort is not None else EffortReading()
        self.effort.check_joints(self.joint_names)

    def reset(self) -> None:
        """Forget the history and any contact."""
        self.estimator.reset()
        if self.detector is not None:
            self.detector.reset()

    def update(self, t: float, q: np.ndarray, dq: np.ndarray, tau: np.ndarray,
               with_wrench: bool = True) -> SensingSample:
        """Take one sample (see :meth:`~.estimators.ExternalTorqueEstimator.update`) and return what it says;
        ``with_wrench`` False leaves the wrench out (None) on this sample (it keeps no state).

        Raises:
            ValueError: shapes or non-finite values (names the argument).
        """
        est = self.estimator.update(t, q, dq, tau).copy()
        stuck = self.band.stuck(dq)
        half = self.band.interval_half_width(dq, tau)
        contact = self.detector.update(t, est, half) if self.detector is not None else None
        wrench = self.wrench.estimate(q, est) if self.wrench is not None and with_wrench else None
        return SensingSample(float(t), est, half, stuck, contact, wrench)

    def update_effort(self, t: float, q: np.ndarray, dq: np.ndarray, effort: np.ndarray) -> SensingSample:
        """:meth:`update` with the measured ``effort`` (J,) in the unit of :attr:`effort` (a servo's Present_Load:
        converted to N·m at the sample's velocity ``dq``).

        Raises:
            ValueError: shapes or non-finite values (names the argument).
        """
        return self.update(t, q, dq, self.effort.to_torque(effort, dq))


class NominalSettings(RigidBodySettings, Protocol):
    """What the sensor takes of the robot's nominal model (:class:`~deadzone_id_ros.control.ControllerConfig` and
    :class:`~.node_config.ForceEstimatorConfig` have it): the settings of the controller's "rbd" model
    (:class:`~deadzone_id_ros.models.runtime.NominalRigidBodyModel`) and the effort limit.

    Attributes:
        armature: (J,) rotor inertia [kg·m²] (empty: none).  frictionloss, damping: (J,) Coulomb [N·m] and viscous
            [N·m·s/rad] friction (None: the URDF's ``<dynamics>``).  friction_velocity: [rad/s].
        effort_limit: (J,) [N·m] (empty: unknown): the stall torque of a servo that reports Present_Load.
    """

    @property
    def effort_limit(self) -> tuple[float, ...]: ...


def nominal_rigid_body(urdf_path: str | Path, joint_names: Sequence[str], nominal: NominalSettings | None = None,
                       locked: Mapping[str, float] | None = None) -> NominalRigidBodyModel:
    """The robot's nominal rigid body with friction, as the controller's "rbd" model with ``model_friction``
    (:func:`~deadzone_id_ros.models.runtime.load_model`): the URDF's inertia plus ``nominal``'s armature, Coulomb and
    viscous friction (None, or unset there: no armature, the URDF's ``<dynamics>`` friction); the URDF joints outside
    ``joint_names`` locked at ``locked`` (a robot profile's ``locked``; the rest at 0).

    Raises:
        FileNotFoundError, RobotDescriptionError: the URDF.  ValueError: per-joint values of the wrong length.
    """
    from ..models.runtime import NominalRigidBodyModel

    if nominal is None:
        return NominalRigidBodyModel(urdf_path, joint_names, friction=True, locked=locked)
    return NominalRigidBodyModel(urdf_path, joint_names, friction=True, friction_velocity=nominal.friction_velocity,
                                 armature=nominal.armature or None, coulomb=nominal.frictionloss,
                                 viscous=nominal.damping, locked=locked)


def build_sensor(config: SensingConfig, model: InverseDynamicsModel, urdf_path: str | Path,
                 joint_names: Sequence[str], nominal_inertia: Sequence[float] | None = None,
                 nominal: NominalSettings | None = None,
                 warn: Callable[[str], object] | None = None,
                 locked: Mapping[str, float] | None = None) -> ForceSensor:
    """The :class:`ForceSensor` of ``config`` for an arm.

    Args:
        config: the settings.  model: the controller's inverse-dynamics model (used by "residual").
        urdf_path: the URDF (momentum, dob, wrench and the default band).  joint_names: (J,).
        nominal_inertia: (J,) Jn [kg·m²] of "dob" (the controller's); required for "dob".
        nominal: the robot's nominal-model settings: "momentum" and "dob" use the same rigid body as the
            controller's "rbd" model (the URDF plus the profile's armature and friction), and a Present_Load effort
            is converted with the effort limit as stall torque; None: the URDF alone (no armature, its friction).
        warn: called with a sentence when the band is off for want of a stuck threshold (default: ignored).
        locked: URDF joint -> position [rad or m] of the URDF joints outside ``joint_names`` in every rigid-body
            model here (a robot profile's ``locked``; the rest at 0).

    Raises:
        ValueError: per-joint settings of the wrong length (names the field), "dob" without nominal_inertia, a
            Present_Load effort without effort limits.
        FileNotFoundError, RobotDescriptionError: the URDF cannot be read, or the frame is not in it.
    """
    from ..robot import load_robot_description

    names = tuple(joint_names)
    n = len(names)
    for field_name in ("sensing_velocity_threshold", "sensing_band", "sensing_fade_velocity", "sensing_band_load_gain",
                       "sensing_threshold", "sensing_no_load_speed"):
        v = getattr(config, field_name)
        if v and len(v) != n:
            raise ValueError(f"{field_name} has {len(v)} values for the {n} joints {list(names)}")
    cutoff = np.full(n, float(config.sensing_cutoff))
    estimator: ExternalTorqueEstimator
    if config.sensing_friction and len(config.sensing_friction) != n * len(FRICTION_TERMS):
        raise ValueError(f"sensing_friction has {len(config.sensing_friction)} values for the {n} joints {list(names)}"
                         f" ({len(FRICTION_TERMS)} each)")
    if config.sensing_estimator == "residual":
        friction = (LoadFriction(names, np.reshape(config.sensing_friction, (n, len(FRICTION_TERMS))),
                                 *config.sensing_friction_stribeck) if config.sensing_friction else None)
        estimator = ResidualEstimator(model, cutoff, names, friction=friction)
    else:
        rigid = nominal_rigid_body(urdf_path, names, nominal, locked)
        if config.sensing_estimator == "momentum":
            estimator = MomentumObserver(rigid, cutoff)
        elif nominal_inertia is None:
            raise ValueError("sensing estimator 'dob' needs the nominal inertia Jn (the controller's)")
        else:
            estimator = DobEstimator(rigid, nominal_inertia, cutoff)
    band = StaticFrictionBand.none(names)
    if config.sensing_dead_zone:
        thr = np.asarray(config.sensing_velocity_threshold, float) if config.sensing_velocity_threshold else None
        dz = getattr(model, "dead_zone", None)
        if thr is None and dz is not None and tuple(dz.joint_names) == names:
            thr = np.asarray(dz.threshold, float)
        if thr is None:
            if warn is not None:
                warn("sensing: the dead-zone band is off: the model has no dead zone (not a trained artifact) and "
                     "sensing_velocity_threshold is empty; set it [rad/s per joint] to report stuck joints as "
                     "intervals")
        else:
            tau_s = (np.asarray(config.sensing_band, float) if config.sensing_band
                     else load_robot_description(urdf_path, names).friction.copy())
            fade = np.asarray(config.sensing_fade_velocity, float) if config.sensing_fade_velocity else None
            gain = np.asarray(config.sensing_band_load_gain, float) if config.sensing_band_load_gain else None
            band = StaticFrictionBand(names, thr, tau_s, fade, gain)
    detector = (ContactDetector(config.sensing_threshold, config.sensing_release, config.sensing_confirm)
                if config.sensing_threshold else None)
    wrench = (WrenchEstimator(urdf_path, names, config.sensing_frame, point=config.sensing_point or (0.0, 0.0, 0.0),
                              locked=locked) if config.sensing_frame else None)
    if config.sensing_effort_unit == PRESENT_LOAD:
        stall = tuple(nominal.effort_limit) if nominal is not None else ()
        if len(stall) != n:
            raise ValueError(f"sensing_effort_unit {PRESENT_LOAD!r} (Present_Load) needs the {n} servos' stall "
                             f"torques (the effort limits of joints {list(names)}), got {list(stall)}")
        unit = EffortReading(PRESENT_LOAD, stall, config.sensing_no_load_speed)
    else:
        unit = EffortReading(config.sensing_effort_unit)
        if config.sensing_no_load_speed and warn is not None:
            warn(f"sensing: sensing_no_load_speed is used only with sensing_effort_unit {PRESENT_LOAD!r}; "
                 "ignored")
    return ForceSensor(estimator, band, detector, wrench, unit)
