"""Force sensing on real recordings (core, no ROS): each estimator's free-motion residual and the threshold it implies.

Real recordings have no ground truth, but they are free motion: whatever an estimator outputs there is its error,
and the smallest external torque it could detect is the threshold that error forces. Per recording (loaded as
``deadzone-id compare`` loads it, :func:`deadzone_id_ros.training.pipeline.load_inputs`; the DFKI CSVs converted as
``demo-real`` does), the samples are split in time: the first half fits the product's identified rigid body
(:func:`~deadzone_id_ros.models.fit_rigid_body` on its URDF, the "rbd" method) and the static-friction band
(:func:`~deadzone_id_ros.sensing.calibrate_band`, stuck below 0.1 sigma of each joint's velocity, the paper's alpha;
its fade outside the dead zone chosen there too) and, for the estimator ``deadzone-id sense`` and the nodes run by
default, the friction correction of that model's residual
(:func:`~deadzone_id_ros.sensing.friction.identify_run_friction`: Coulomb, Stribeck, load-dependent and viscous
terms) with its load-aware band, as in ``deadzone-id sense``. The held-out second half gives each estimator's RMS
output (the free-motion residual) and its implied threshold, 1.5 x the largest excess over the half
(:func:`~deadzone_id_ros.sensing.calibrate_thresholds`).

Caveat: the loader's velocity is Savitzky–Golay smoothed (non-causal), so these residuals are a lower bound on what a
causal estimator on the raw velocity sees.
"""

from __future__ import annotations

import dataclasses
import math
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ...jsonrecord import JsonRecord
from ...sensing import (
    ExternalTorqueEstimator,
    MomentumObserver,
    ResidualEstimator,
    StaticFrictionBand,
    calibrate_band,
    calibrate_thresholds,
)
from ...sensing.friction import identify_run_friction
from .calibration import FADE_FACTORS

__all__ = ["RealEstimatorFigures", "RealSenseResult", "real_markdown", "sense_real"]

CUTOFF = 100.0  # [rad/s] the estimators' filter, as in ``deadzone-id sense``


@dataclass(frozen=True)
class RealEstimatorFigures(JsonRecord):
    """One estimator on one recording's held-out half.

    Attributes:
        name: as in ``deadzone-id sense``, "residual_band" (identified rbd + friction correction + load-aware band,
        the sensor's default) and "residual" (the same without the band); "uncorrected_band" and "uncorrected" (the
        identified rbd without the correction, with and without its band); "momentum" (URDF nominal).
        rms: (J,) RMS of the estimate [N·m].  threshold: (J,) implied contact threshold [N·m].
    """

    name: str
    rms: list[float]
    threshold: list[float]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready (``dataclasses.asdict``)."""
        return dataclasses.asdict(self)


@dataclass(frozen=True)
class RealSenseResult(JsonRecord):
    """Force sensing figures of one real recording.

    Attributes:
        name: the recording.  urdf: the robot model.  joint_names: (J,).  rate_hz: sample rate.
        held_out_s: length of the held-out half [s].  band: (J,) tau_s [N·m] of the first estimator's band (the
        sensor's default).  estimators: one entry each.
        correction: "" or why the friction correction could not be fitted (then no "residual_band" and "residual").
        corrected: (J,) whether each joint kept its friction correction (it lowered the error of the held-out block
        of its fit, :func:`~deadzone_id_ros.sensing.friction.identify_load_friction`).
    """

    name: str
    urdf: str
    joint_names: list[str]
    rate_hz: float
    held_out_s: float
    band: list[float]
    estimators: list[RealEstimatorFigures]
    correction: str = ""
    corrected: list[bool] = dataclasses.field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready (``dataclasses.asdict``)."""
        return dataclasses.asdict(self)


def _run(est: ExternalTorqueEstimator, t: np.ndarray, q: np.ndarray, dq: np.ndarray, tau: np.ndarray) -> np.ndarray:
    return np.array([est.update(float(t[k]), q[k], dq[k], tau[k]).copy() for k in range(len(t))])


def sense_real(name: str, bags: list[Path], urdf: str, block_seconds: float = 2.0,
               savgol_window_s: float = 0.1, log: Callable[[str], None] = print) -> RealSenseResult:
    """The figures of one recording (module docstring).

    Raises:
        FileNotFoundError, DataError, RobotDescriptionError: the recording or its URDF cannot be loaded.
        ValueError: the recording is too short to split (fewer than 100 samples a half).
    """
    from ...data.dataset import DatasetConfig
    from ...models import LearnedModel, RigidBodyRegressor, fit_rigid_body
    from ...models.runtime import NominalRigidBodyModel
    from ...training.pipeline import load_inputs

    inputs = load_inputs(bags, DatasetConfig(savgol_window_s=savgol_window_s), simulator="no", urdf=urdf, log=log)
    ep = max(inputs.episodes, key=lambda e: len(e.t))  # the longest stretch of uniform samples
    n = len(ep.t) // 2
    if n < 100:
        raise ValueError(f"{name}: {len(ep.t)} samples in its longest episode; too short to split in halves")
    names = tuple(inputs.joint_names)
    xml = inputs.urdf_xml or ""
    reg = RigidBodyRegressor(xml, names, joint_map=inputs.joint_map or None, locked=inputs.locked or None)
    rbd = fit_rigid_body(reg, ep.q[:n], ep.dq[:n], ep.ddq[:n], ep.tau[:n])
    vthr = 0.1 * ep.dq[:n].std(axis=0)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "robot.urdf"
        path.write_text(xml)
        mo = (MomentumObserver(NominalRigidBodyModel(path, names, friction=True, locked=inputs.locked or None),
                               np.full(len(names), CUTOFF)) if not inputs.joint_map else None)
        est_mo = _run(mo, ep.t, ep.q, ep.dq, ep.tau) if mo is not None else None
    model = LearnedModel(names, "rbd", rbd=rbd)  # the product's "rbd" method
    est_rbd = _run(ResidualEstimator(model, np.full(len(names), CUTOFF)), ep.t, ep.q, ep.dq, ep.tau)
    band = calibrate_band(est_rbd[:n], ep.dq[:n], vthr, names, 0.999, fade_factors=FADE_FACTORS)
    zeros = StaticFrictionBand.none(names)
    candidates = [("uncorrected_band", est_rbd, band), ("uncorrected", est_rbd, zeros)]
    # the sensor's default: the friction the model lacks, fitted on the first half's raw residual, then its band
    raw = _run(ResidualEstimator(model, np.full(len(names), math.inf)), ep.t, ep.q, ep.dq, ep.tau)
    try:
        law, _ = identify_run_friction(raw[:n], ep.dq[:n], ep.tau[:n], vthr, names)
    except ValueError as err:
        correction, corrected = f"no friction correction: {err}", [False] * len(names)
        log(f"{name}: {correction}")
    else:
        correction, corrected = "", [bool(np.any(row)) for row in law.theta]
        est_c = _run(ResidualEstimator(model, np.full(len(names), CUTOFF), friction=law), ep.t, ep.q, ep.dq, ep.tau)
        band_c = calibrate_band(est_c[:n], ep.dq[:n], vthr, names, 0.999, fade_factors=FADE_FACTORS,
                                tau=ep.tau[:n], load_gain=law.load_gain())
        candidates = [("residual_band", est_c, band_c), ("residual", est_c, zeros), *candidates]
    if est_mo is not None:
        candidates.append(("momentum", est_mo, zeros))
    figures = []
    for key, est, b in candidates:
        held = est[n:]
        half = b.interval_half_width(ep.dq[n:], ep.tau[n:])
        figures.append(RealEstimatorFigures(key, np.sqrt((held ** 2).mean(axis=0)).tolist(),
                                            calibrate_thresholds(held, half).tolist()))
    rate = 1.0 / float(np.median(np.diff(ep.t)))
    return RealSenseResult(name, urdf, list(names), rate, float(ep.t[-1] - ep.t[n]),
                           candidates[0][2].half_width.tolist(), figures, correction, corrected)


def real_markdown(results: list[RealSenseResult]) -> str:
    """One table per recording: RMS free-motion residual and implied threshold per joint and estimator."""
    lines = ["# Force sensing on real recordings", "",
             "Free motion only: each estimator's RMS output on the held-out half (its error) and the contact threshold "
             "it implies (1.5 x its largest excess there) [N·m]; the identified rigid body, the friction correction "
             "of residual_band and residual (as in deadzone-id sense) and the bands are fitted on the first half. "
             "Velocity from the loader's Savitzky-Golay filter (non-causal).", ""]
    for r in results:
        lines += [f"## {r.name}", "", f"URDF {r.urdf}; {r.rate_hz:.0f} Hz; held-out {r.held_out_s:.1f} s; band tau_s "
                  f"{[round(v, 3) for v in r.band]} N·m; "
                  + (r.correction or "friction correction kept on "
                     + (", ".join(j for j, c in zip(r.joint_names, r.corrected) if c) or "no joint")), "",
                  "| estimator | joint | RMS residual | implied threshold |", "|---|---|---|---|"]
        for e in r.estimators:
            for j, joint in enumerate(r.joint_names):
                lines.append(f"| {e.name} | {joint} | {e.rms[j]:.3g} | {e.threshold[j]:.3g} |")
        lines.append("")
    return "\n".join(lines)


def sense_real_sets(runs: Sequence[tuple[str, Sequence[Path], str, float]], out: Path,
                    log: Callable[[str], None] = print) -> list[RealSenseResult]:
    """:func:`sense_real` on each (name, bags, urdf, block_seconds) of ``runs``; writes ``out/sense_real.md`` and
    ``out/sense_real.json``.

    Raises:
        as :func:`sense_real`.
    """
    import json

    from ...training.evaluate import json_clean

    out.mkdir(parents=True, exist_ok=True)
    results = [sense_real(name, list(bags), urdf, block_seconds=block, log=log) for name, bags, urdf, block in runs]
    (out / "sense_real.md").write_text(real_markdown(results))
    (out / "sense_real.json").write_text(json.dumps(json_clean([r.to_dict() for r in results]), indent=1))
    return results
