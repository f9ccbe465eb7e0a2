"""One force sensor per arm (core, no ROS): estimator + dead-zone interval + contact detector + wrench, per sample.

:class:`SensingConfig` is the one setting of all of it (the controller node, the estimator node and ``deadzone-id
sense`` build from it with :func:`build_sensor`); :class:`ForceSensor` runs it tick by tick.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..models.base import InverseDynamicsModel
from .contact import ContactDetector, ContactState, StaticFrictionBand
from .estimators import DobEstimator, ExternalTorqueEstimator, MomentumObserver, ResidualEstimator
from .wrench import WrenchEstimate, WrenchEstimator

__all__ = ["ESTIMATOR_KINDS", "ForceSensor", "SensingConfig", "SensingSample", "build_sensor"]

#: estimator kinds :func:`build_sensor` knows (:mod:`.estimators`)
ESTIMATOR_KINDS = ("residual", "momentum", "dob")


def _nonneg(name: str, values: tuple[float, ...]) -> tuple[float, ...]:
    out = tuple(float(v) for v in values)
    if not all(math.isfinite(v) and v >= 0 for v in out):
        raise ValueError(f"{name} = {list(values)} must be finite values >= 0")
    return out


@dataclass(frozen=True)
class SensingConfig:
    """How external torque, contact and wrench are sensed.

    Attributes:
        estimator: "residual" (the controller's model, any kind), "momentum" (momentum observer on the URDF's nominal
            rigid body) or "dob" (disturbance observer, nominal inertia + URDF rigid body).
        cutoff: output filter cutoff / observer gain [rad/s] (> 0), every joint.
        dead_zone: report a stuck joint's estimate as an interval of half width ``band`` and test intervals.
        velocity_threshold: (J,) stuck when |dq| <= this [rad/s]; () = the model artifact's dead zone if it has
            one, else 0.1 times the profile's velocity scale (see :func:`build_sensor`).
        band: (J,) tau_s [N·m]; () = the URDF's static friction ``<dynamics friction>``.
        threshold: (J,) contact thresholds [N·m] (> 0); () = no contact detection.
        release: hysteresis, in (0, 1].
        frame: wrench frame (a URDF link); "" = no wrench.

    Raises:
        ValueError: a bad field (named with its value).
    """

    estimator: str = "residual"
    cutoff: float = 100.0
    dead_zone: bool = True
    velocity_threshold: tuple[float, ...] = ()
    band: tuple[float, ...] = ()
    threshold: tuple[float, ...] = ()
    release: float = 0.5
    frame: str = ""

    def __post_init__(self) -> None:
        if self.estimator not in ESTIMATOR_KINDS:
            raise ValueError(f"estimator = {self.estimator!r} must be one of {list(ESTIMATOR_KINDS)}")
        if not (isinstance(self.cutoff, (int, float)) and math.isfinite(self.cutoff) and self.cutoff > 0):
            raise ValueError(f"cutoff = {self.cutoff!r} must be a finite number > 0 rad/s")
        for name in ("velocity_threshold", "band", "threshold"):
            object.__setattr__(self, name, _nonneg(name, getattr(self, name)))
        if self.threshold and not all(v > 0 for v in self.threshold):
            raise ValueError(f"threshold = {list(self.threshold)} must be > 0 N·m per joint")
        if not 0.0 < self.release <= 1.0:
            raise ValueError(f"release = {self.release!r} must be in (0, 1]")


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
    """

    def __init__(self, estimator: ExternalTorqueEstimator, band: StaticFrictionBand,
                 detector: ContactDetector | None = None, wrench: WrenchEstimator | None = None) -> None:
        if band.joint_names != estimator.joint_names:
            raise ValueError(f"band joints {list(band.joint_names)} differ from the estimator's "
                             f"{list(estimator.joint_names)}")
        self.estimator, self.band, self.detector, self.wrench = estimator, band, detector, wrench
        self.joint_names = estimator.joint_names

    def reset(self) -> None:
        """Forget the history and any contact."""
        self.estimator.reset()
        if self.detector is not None:
            self.detector.reset()

    def update(self, t: float, q: np.ndarray, dq: np.ndarray, tau: np.ndarray) -> SensingSample:
        """Take one sample (see :meth:`~.estimators.ExternalTorqueEstimator.update`) and return what it says.

        Raises:
            ValueError: shapes or non-finite values (names the argument).
        """
        est = self.estimator.update(t, q, dq, tau).copy()
        stuck = self.band.stuck(dq)
        half = np.where(stuck, self.band.half_width, 0.0)
        contact = self.detector.update(t, est, half) if self.detector is not None else None
        wrench = self.wrench.estimate(q, est) if self.wrench is not None else None
        return SensingSample(float(t), est, half, stuck, contact, wrench)


def build_sensor(config: SensingConfig, model: InverseDynamicsModel, urdf_path: str | Path,
                 joint_names: Sequence[str], nominal_inertia: Sequence[float] | None = None,
                 armature: Sequence[float] | None = None,
                 velocity_scale: Sequence[float] | None = None) -> ForceSensor:
    """The :class:`ForceSensor` of ``config`` for an arm.

    Args:
        config: the settings.  model: the controller's inverse-dynamics model (used by "residual").
        urdf_path: the URDF (momentum, dob, wrench and the default band).  joint_names: (J,).
        nominal_inertia: (J,) Jn [kg·m²] of "dob" (default: diag M at zero from the URDF... required for "dob").
        armature: (J,) rotor inertia [kg·m²] added to the momentum observer's M (None: the URDF's, i.e. none).
        velocity_scale: (J,) a velocity scale [rad/s] (e.g. the std of the training data's dq) whose 0.1 is the
            stuck threshold when neither the config nor the model's dead zone gives one.

    Raises:
        ValueError: per-joint settings of the wrong length (names the field), "dob" without nominal_inertia, or no
            stuck threshold to be found with ``dead_zone`` on.
        FileNotFoundError, RobotDescriptionError: the URDF cannot be read, or the frame is not in it.
    """
    from ..models.runtime import NominalRigidBodyModel
    from ..robot import load_robot_description

    names = tuple(joint_names)
    n = len(names)
    for field_name in ("velocity_threshold", "band", "threshold"):
        v = getattr(config, field_name)
        if v and len(v) != n:
            raise ValueError(f"sensing {field_name} has {len(v)} values for the {n} joints {list(names)}")
    cutoff = np.full(n, float(config.cutoff))
    estimator: ExternalTorqueEstimator
    if config.estimator == "residual":
        estimator = ResidualEstimator(model, cutoff)
    elif config.estimator == "momentum":
        estimator = MomentumObserver(urdf_path, names, cutoff, armature=armature)
    else:
        if nominal_inertia is None:
            raise ValueError("sensing estimator 'dob' needs the nominal inertia Jn (the controller's)")
        estimator = DobEstimator(NominalRigidBodyModel(urdf_path, names, friction=True), nominal_inertia, cutoff)
    if config.dead_zone:
        thr = np.asarray(config.velocity_threshold, float) if config.velocity_threshold else None
        dz = getattr(model, "dead_zone", None)
        if thr is None and dz is not None and tuple(dz.joint_names) == names:
            thr = np.asarray(dz.threshold, float)
        if thr is None and velocity_scale is not None:
            thr = 0.1 * np.asarray(velocity_scale, float)
        if thr is None:
            raise ValueError("sensing with dead_zone needs a stuck threshold: give velocity_threshold, a model with a "
                             "dead zone (an artifact), or a velocity scale")
        tau_s = (np.asarray(config.band, float) if config.band
                 else load_robot_description(urdf_path, names).friction.copy())
        band = StaticFrictionBand(names, thr, tau_s)
    else:
        band = StaticFrictionBand.none(names)
    detector = ContactDetector(config.threshold, config.release) if config.threshold else None
    wrench = WrenchEstimator(urdf_path, names, config.frame) if config.frame else None
    return ForceSensor(estimator, band, detector, wrench)
