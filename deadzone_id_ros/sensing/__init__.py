"""Sensing force without a force sensor: external joint torque, its dead-zone interval, contact and the wrench, from
the product's inverse-dynamics model (core, no ROS). See docs/sensing.md.

- :mod:`.estimators`: the direct residual (any model), the momentum observer (URDF rigid body), the DOB.
- :mod:`.contact`: the static-friction band (interval per joint and tick), thresholds, the contact detector.
- :mod:`.wrench`: the wrench at a named frame by least squares on the URDF Jacobian.
- :mod:`.sensor`: :class:`ForceSensor`, all of it per sample, and its one config, :class:`SensingConfig`.
"""

from .contact import ContactDetector, ContactState, StaticFrictionBand, calibrate_band, calibrate_thresholds
from .estimators import DobEstimator, ExternalTorqueEstimator, MomentumObserver, ResidualEstimator, ZohLowPass
from .sensor import ESTIMATOR_KINDS, ForceSensor, SensingConfig, SensingSample, build_sensor
from .wrench import COMPONENTS, WrenchEstimate, WrenchEstimator

__all__ = [
    "COMPONENTS",
    "ESTIMATOR_KINDS",
    "ContactDetector",
    "ContactState",
    "DobEstimator",
    "ExternalTorqueEstimator",
    "ForceSensor",
    "MomentumObserver",
    "ResidualEstimator",
    "SensingConfig",
    "SensingSample",
    "StaticFrictionBand",
    "WrenchEstimate",
    "WrenchEstimator",
    "ZohLowPass",
    "build_sensor",
    "calibrate_band",
    "calibrate_thresholds",
]
