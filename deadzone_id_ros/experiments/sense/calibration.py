"""The calibration step of ``deadzone-id sense`` (core, no ROS): from one free-motion run on its own seed, the
friction correction of the model's residual, the dead-zone band and every estimator's contact thresholds.

Order: (1) :func:`~deadzone_id_ros.sensing.friction.identify_run_friction` on the model's raw residual (the
load-dependent friction the model lacks, fitted on the moving samples); (2) the corrected residual, filtered as the
estimator filters it online (the filter is linear and starts at zero, so this is the online estimate);
(3) :func:`~deadzone_id_ros.sensing.calibrate_band` on it (tau_s, the fade, and the band's growth with the motor
torque: the identified load gain of the friction law); (4)
:func:`~deadzone_id_ros.sensing.calibrate_thresholds` per estimator.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ...sensing import StaticFrictionBand, ZohLowPass, calibrate_band, calibrate_thresholds
from ...sensing.friction import LoadFriction, identify_run_friction

__all__ = ["FADE_FACTORS", "Calibration", "calibrate"]

#: candidate fade velocities of the band, in multiples of the stuck threshold (:func:`calibrate_band`)
FADE_FACTORS = (0.0, 1.0, 2.0, 4.0)


@dataclass(frozen=True)
class Calibration:
    """What the calibration run gives.

    Attributes:
        friction: the friction correction of the model's residual.  bands: {estimator: band}.
        thresholds: {estimator: (J,) thresholds [N·m]}.  velocity_threshold: (J,) stuck below this [rad/s].
    """

    friction: LoadFriction
    bands: dict[str, StaticFrictionBand]
    thresholds: dict[str, np.ndarray]
    velocity_threshold: np.ndarray


def calibrate(estimates: Mapping[str, np.ndarray], raw: np.ndarray, dq: np.ndarray, tau: np.ndarray,
              velocity_threshold: np.ndarray, joint_names: Sequence[str], floor: np.ndarray, cutoff: float,
              dt: float, quantile: float, margin: float) -> Calibration:
    """The calibration of the module docstring.

    Args:
        estimates: {"model", "momentum", "dob": (N, J) filtered estimates on free motion [N·m]}.
        raw: (N, J) the model's unfiltered residual w_k = f - tau [N·m].  dq: (N, J) [rad/s].
        tau: (N, J) motor torque of each interval [N·m].  velocity_threshold: (J,) [rad/s].  joint_names: (J,).
        floor: (J,) the band's least tau_s [N·m] (the URDF's static friction).  cutoff: the estimators' [rad/s].
        dt: the sampling period [s].  quantile, margin: the threshold rule.

    Raises:
        ValueError: from the fits (too few moving samples, shapes).
    """
    names = tuple(joint_names)
    friction, dq0 = identify_run_friction(raw, dq, tau, velocity_threshold, names)
    corrected = raw - friction.torque(dq0, tau)
    corrected[0] = 0.0  # the first sample of a run has no interval
    lpf = ZohLowPass(np.full(len(names), cutoff))
    est = np.array([lpf.update(dt, w).copy() for w in corrected])
    est[0] = 0.0
    band = calibrate_band(est, dq, velocity_threshold, names, 0.999, floor, fade_factors=FADE_FACTORS,
                          threshold_quantile=quantile, margin=margin, tau=tau, load_gain=friction.load_gain())
    none = StaticFrictionBand.none(names)
    bands = {"residual_band": band, "residual": none, "model": none, "momentum": none, "dob": none}
    series = {"residual_band": est, "residual": est, **estimates}
    thresholds = {k: calibrate_thresholds(series[k], bands[k].interval_half_width(dq, tau), quantile, margin)
                  for k in bands}
    return Calibration(friction, bands, thresholds, np.asarray(velocity_threshold, float))
