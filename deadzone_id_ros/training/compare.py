"""The comparison experiment: every method on the same split over several seeds, as a typed :class:`CompareReport`
written to report.json, report.md and plots (rendering: :mod:`.report`, :mod:`.report_plots`).

Reproduces the experiment of Inami, Yamane, Sakaino (arXiv 2402.00393, Sec. IV) and adds the rigid-body and hybrid
baselines, a data-efficiency curve and, on simulator data, the noise floor (the simulator's own inverse dynamics
with friction, fed the same measured inputs).

Protocol (nothing is tuned on the test split; the steps are :mod:`.pipeline`'s, shared with ``train``):
- the episodes are cut into time blocks and split train/val/test once (``split_seed``);
- the dead-zone thresholds are fitted on the training split only and used for every method and for evaluation;
- each MLP method is trained with ``seeds`` seeds (weight init and batch order); early stopping uses the validation
  split with the method's own loss; rbd is deterministic and fitted once;
- accuracy: torque RMSE per joint on test pairs where that joint moves (r_ij = 1), mean ± std over seeds;
- data efficiency: masked vs conventional trained on the first 10-100% of the (shuffled) training blocks.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..data.deadzone import DeadZone
from ..data.types import Episode
from ..errors import DataError, RobotDescriptionError
from ..models.predictor import METHODS
from .config import TrainConfig
from .evaluate import evaluate_model, evaluate_predictions
from .fit import Stacked, fit_method, stack_episodes
from .pipeline import (
    MethodRun,
    PreparedData,
    TrainingInputs,
    config_dict,
    prepare_data,
    rigid_body_regressor,
    run_method,
    save_method,
)
from .report import write_report
from .results import CompareReport, DataEfficiency, EfficiencyCurve, MethodResult, NoiseFloor

__all__ = ["quick_config", "run_compare"]

Band = tuple[np.ndarray, np.ndarray, np.ndarray]


def quick_config(config: TrainConfig) -> TrainConfig:
    """A shortened configuration for ``--quick``: at most 600 steps, 2 seeds, efficiency at 25% and 100%."""
    return config.with_overrides(max_steps=min(config.max_steps, 600), eval_interval=min(config.eval_interval, 50),
                                 seeds=min(config.seeds, 2), efficiency_fractions=(0.25, 1.0))


def _mean_std(values: list[list[float]]) -> tuple[list[float], list[float]]:
    import warnings

    a = np.asarray(values, dtype=float)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN columns (a joint that never moves in test)
        return np.nanmean(a, axis=0).tolist(), (np.nanstd(a, axis=0) if len(a) > 1 else np.zeros(a.shape[1:])).tolist()


def _sim_band(inputs: TrainingInputs, data: Stacked) -> Band | None:
    """(noise-floor prediction with the joint effects, band centre, band half width) on ``data``.

    The noise floor is the simulator's own inverse dynamics with every joint effect it models (rigid body, armature,
    viscous, Stribeck and load-dependent friction, ripple; :meth:`SimArm.inverse_dynamics` with ``friction=True``)
    fed the measured inputs. The half width is per joint: the static (breakaway) friction plus the load term at the
    median band centre of the data.
    """
    from ..sim import SimArm, SimArmConfig

    cfg = inputs.sim_config or SimArmConfig()
    if set(cfg.joint_names) != set(data.joint_names):
        return None
    arm = SimArm(cfg)
    order = [arm.joint_names.index(n) for n in data.joint_names]
    inv = [list(data.joint_names).index(n) for n in arm.joint_names]
    q, dq, ddq = data.q[:, inv], data.dq[:, inv], data.ddq[:, inv]
    with_f = arm.inverse_dynamics(q, dq, ddq, friction=True)[:, order]
    centre, half = arm.band(q, dq, ddq)
    return with_f, centre[:, order], np.median(half, axis=0)[order]


def _noise_band(inputs: TrainingInputs, test: Stacked) -> Band | None:
    """The friction band on the test split, widened by the exact simulator model's RMSE on moving pairs."""
    band = _sim_band(inputs, test) if inputs.simulator else None
    if band is None:
        return None
    # Tolerance of the band test: the exact simulator model's own RMSE on moving pairs (measurement noise).
    tol = np.nan_to_num(np.asarray(evaluate_predictions(band[0], test)["rmse_per_joint"], dtype=float))
    return band[0], band[1], band[2] + tol


def _regressor(inputs: TrainingInputs, data: PreparedData, config: TrainConfig, methods: list[str]):
    """(regressor or None, {method: reason skipped}) for the methods that need the rigid-body model."""
    needs = [m for m in methods if METHODS[m][0]]
    if not needs:
        return None, {}
    try:
        return rigid_body_regressor(inputs, data.dead_zone, config), {}
    except (DataError, RobotDescriptionError) as err:
        return None, {m: str(err) for m in needs}


def _run_methods(inputs: TrainingInputs, data: PreparedData, config: TrainConfig, methods: list[str], regressor,
                 band: Band | None, out: Path, log: Callable[[str], None]):
    """Every method over its seeds; saves the seed-0 artifacts. Returns ({method: [MethodRun]}, {label: pred})."""
    band_kw = {"band_center": band[1], "band_halfwidth": band[2]} if band is not None else None
    runs: dict[str, list[MethodRun]] = {m: [] for m in methods}
    preds: dict[str, np.ndarray] = {}
    rbd_cache = None
    for method in methods:
        for s in range(1 if method == "rbd" else config.seeds):
            cfg = config.with_overrides(seed=config.seed + s)
            run = run_method(method, data, cfg, regressor=regressor, rbd=rbd_cache, band=band_kw,
                             desc=f"{method} seed {cfg.seed}")
            if method in ("rbd", "hybrid") and rbd_cache is None:
                rbd_cache = run.fit.model.rbd
            runs[method].append(run)
            m = run.metrics
            log(f"{method:>12s} seed {cfg.seed}: test RMSE per joint "
                f"{np.round(m['rmse_per_joint'], 4).tolist()} N*m (mean {m['rmse_mean']:.4f})")
            if s == 0:
                preds[method] = run.fit.model.predict(data.test.q, data.test.dq, data.test.ddq)
                save_method(run, out / "models" / method, inputs, data, cfg, onnx=False)
    return runs, preds


def _summarize(method: str, runs: list[MethodRun], band: Band | None) -> MethodResult:
    per_seed = [r.metrics for r in runs]
    mean, std = _mean_std([r["rmse_per_joint"] for r in per_seed])
    nmean, nstd = _mean_std([r["nrmse_per_joint"] for r in per_seed])
    dzm, dzs = _mean_std([r["dead_zone"]["rmse_vs_measured_per_joint"] for r in per_seed])
    dead_zone: dict[str, Any] = {"rmse_vs_measured_per_joint": dzm, "rmse_vs_measured_per_joint_std": dzs}
    if band is not None:
        dead_zone["pred_within_band_per_joint"] = _mean_std(
            [r["dead_zone"]["pred_within_band_per_joint"] for r in per_seed])[0]
    return MethodResult(
        rmse_per_joint=mean, rmse_per_joint_std=std,
        rmse_mean=float(np.mean([r["rmse_mean"] for r in per_seed])),
        rmse_mean_std=float(np.std([r["rmse_mean"] for r in per_seed])),
        nrmse_per_joint=nmean, nrmse_per_joint_std=nstd,
        nrmse_mean=float(np.mean([r["nrmse_mean"] for r in per_seed])),
        usable_fraction=per_seed[0]["usable_fraction"], seeds=[r["seed"] for r in per_seed],
        dead_zone=dead_zone, per_seed=per_seed, artifact=str(Path("models") / method))


def _noise_floor(band: Band, test: Stacked) -> NoiseFloor:
    floor = evaluate_predictions(band[0], test, band_center=band[1], band_halfwidth=band[2])
    return NoiseFloor(
        description="RMSE of the simulator's own inverse dynamics (rigid body + armature + viscous + dry friction "
                    "with its Stribeck and load terms + ripple, as configured) fed the same measured q, dq, ddq, on "
                    "the same test pairs",
        rmse_per_joint=floor["rmse_per_joint"], rmse_mean=floor["rmse_mean"],
        nrmse_per_joint=floor["nrmse_per_joint"],
        measured_within_band_per_joint=floor["dead_zone"].get("measured_within_band_per_joint"),
        band_halfwidth_per_joint=band[2].tolist())


def _dead_zone_summary(data: PreparedData) -> dict[str, Any]:
    train, test = data.train, data.test
    return {**data.dead_zone.to_dict(),
            "moving_fraction_train_per_joint": train.r.mean(axis=0).tolist(),
            "all_moving_fraction_train": float(train.r.all(axis=1).mean()),
            "pairs_moving_fraction_train": float(train.r.mean()),
            "moving_fraction_test_per_joint": test.r.mean(axis=0).tolist()}


def run_compare(inputs: TrainingInputs, out_dir: str | Path, config: TrainConfig, *,
                methods: Sequence[str] | None = None, log: Callable[[str], None] = print) -> CompareReport:
    """Run the comparison and write ``out_dir``/report.md, report.json, plots/*.png and models/<method>/.

    Args:
        inputs: episodes, fingerprint, simulator flag, URDF.
        out_dir: output directory (created).
        config: training settings (``seeds``, ``efficiency_fractions``, split, dead zone, ...).
        methods: subset of :data:`~deadzone_id_ros.models.METHODS` (default: all).
        log: progress messages.

    Returns:
        the report, exactly as written to report.json (:meth:`CompareReport.to_dict`).

    Raises:
        DataError: too few blocks to split, or data no method can learn from.
        ConfigError: dead-zone thresholds that do not fit the joints.
        ValueError: unknown method names.
    """
    t_start = time.perf_counter()
    out = Path(out_dir)
    (out / "plots").mkdir(parents=True, exist_ok=True)
    methods = list(methods or METHODS)
    unknown = [m for m in methods if m not in METHODS]
    if unknown:
        raise ValueError(f"unknown method(s) {unknown}; choose from {list(METHODS)}")
    data = prepare_data(inputs, config)
    log(f"split: {len(data.train)} train / {len(data.val)} val / {len(data.test)} test samples "
        f"({len(data.split.train)}/{len(data.split.val)}/{len(data.split.test)} blocks); joints "
        f"{list(inputs.joint_names)}")
    regressor, skipped = _regressor(inputs, data, config, methods)
    run_methods = [m for m in methods if m not in skipped]
    for m, why in skipped.items():
        log(f"skipping {m}: {why}")
    band = _noise_band(inputs, data.test)
    runs, preds = _run_methods(inputs, data, config, run_methods, regressor, band, out, log)
    report = CompareReport(
        joint_names=list(inputs.joint_names),
        units={"rmse": "N*m", "nrmse": "1 (RMSE / std of the measured torque)"},
        data=data.fingerprint(inputs, config), dead_zone=_dead_zone_summary(data), config=config_dict(config),
        methods={m: _summarize(m, r, band) for m, r in runs.items()}, skipped_methods=skipped)
    if band is not None:
        report.noise_floor = _noise_floor(band, data.test)
        preds["noise floor (simulator ID)"] = band[0]
    report.data_efficiency = _data_efficiency(data, config, runs, log,
                                              [m for m in ("masked", "conventional") if m in run_methods])
    report.seconds = time.perf_counter() - t_start
    report = CompareReport.from_dict(report.to_dict())  # NaN -> None, numpy -> Python: what report.json holds
    (out / "report.json").write_text(json.dumps(report.to_dict(), indent=2) + "\n")
    n_plots = write_report(out, report, data.test, preds, band)
    log(f"wrote {out / 'report.md'}, {out / 'report.json'} and {n_plots} plots in {report.seconds:.1f} s")
    return report


def _data_efficiency(data: PreparedData, config: TrainConfig, runs: dict[str, list[MethodRun]],
                     log: Callable[[str], None], methods: list[str]) -> DataEfficiency:
    """Train masked and conventional on growing prefixes of the shuffled training blocks; test RMSE per fraction."""
    train_eps: list[Episode] = data.split.train
    dz: DeadZone = data.dead_zone
    fractions = sorted(set(float(f) for f in config.efficiency_fractions))
    order = np.random.default_rng(config.split_seed + 1).permutation(len(train_eps))
    out = DataEfficiency(fractions, curves={m: EfficiencyCurve() for m in methods})
    for f in fractions:
        k = max(1, int(math.ceil(f * len(train_eps))))
        sub = stack_episodes([train_eps[i] for i in order[:k]], dz)
        out.train_samples.append(len(sub))
        out.train_blocks.append(k)
        for m in methods:
            if k == len(train_eps):  # the full training split: reuse the main runs
                vals, fail = [r.metrics["rmse_mean"] for r in runs[m]], ""
            else:
                vals, fail = _efficiency_point(m, sub, data, config, f)
            c = out.curves[m]
            c.rmse_mean.append(float(np.mean(vals)) if vals else float("nan"))
            c.rmse_mean_std.append(float(np.std(vals)) if vals else float("nan"))
            c.usable_samples.append(int(sub.r.all(axis=1).sum()) if m == "conventional" else int(sub.r.sum()))
            c.failed.append(fail)
            log(f"data efficiency {f:.0%} ({len(sub)} samples): {m} mean RMSE "
                f"{c.rmse_mean[-1]:.4f}{' (' + fail + ')' if fail else ''}")
    out.usable_samples_note = "masked: (sample, joint) pairs with r = 1; conventional: samples with all joints moving"
    return out


def _efficiency_point(method: str, sub: Stacked, data: PreparedData, config: TrainConfig,
                      fraction: float) -> tuple[list[float], str]:
    """Mean test RMSE of each seed trained on ``sub``; stops at the first seed that cannot train (with why)."""
    vals: list[float] = []
    for s in range(config.seeds):
        cfg = config.with_overrides(seed=config.seed + s)
        try:
            fit = fit_method(
                method, sub, data.val, data.dead_zone, cfg, desc=f"{method} {fraction:.0%} seed {cfg.seed}"
            )
        except DataError as err:
            return vals, str(err)
        vals.append(evaluate_model(fit.model, data.test)["rmse_mean"])
    return vals, ""
