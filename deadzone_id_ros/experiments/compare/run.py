"""The comparison experiment: every method on the same split over several seeds, as a typed :class:`CompareReport`
written to report.json, report.md and plots (rendering: :mod:`.compare.report`, :mod:`.compare.plots`).

Reproduces the experiment of Inami, Yamane, Sakaino (arXiv 2402.00393, Sec. IV) and adds the rigid-body and hybrid
baselines, a data-efficiency curve and, on simulator data, the noise floor (the simulator's own inverse dynamics
with friction, fed the same measured inputs).

Protocol (nothing is tuned on the test split; the steps are :mod:`.pipeline`'s, shared with ``train``):

- the episodes are cut into time blocks and split train/val/test once (``split_seed``);
- the dead-zone thresholds are fitted on the training split only and used for every method and for evaluation;
- each MLP method is trained with ``seeds`` seeds (weight init and batch order); early stopping uses the validation
  split with the method's own loss; each method is planned from its registry entry alone
  (:mod:`~deadzone_id_ros.training.planner`): rbd is deterministic and fitted once, and hybrid and band reuse that
  fit (band identifies its per-joint band tau_s,j from it: :func:`~.fit.identify_band_halfwidth`);
- every network of the comparison (methods x seeds and the data-efficiency points) is trained alone, over one
  worker process per core (:func:`~deadzone_id_ros.training.parallel.train_each`): each keeps its own init, batches,
  early stopping and result, the same bit for bit whatever the number of workers (test/training/test_parallel.py);
- accuracy: torque RMSE per joint on test pairs where that joint moves (r_ij = 1), mean ± std over seeds;
- the pick (:mod:`.compare.pick`): the model to deploy is the method with the lowest validation RMSE, exported to
  ``pick/``; its test error is reported, never used to choose. With fewer than 3 validation blocks it is the lowest
  cross-validation RMSE over time blocks of train+validation instead (:mod:`.compare.pick_cv`, every method refitted per
  fold); either way the pick states its margin over the runner-up against the seed (and fold) spread;
- a training split smaller than the validation or test split is warned about (log, report.json, report.md);
- data efficiency: masked vs conventional trained on the first 10-100% of the (shuffled) training blocks, one row
  per distinct training size (:mod:`.compare.efficiency`).
"""

from __future__ import annotations

import dataclasses
import json
import math
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import SupportsFloat, TypedDict

import numpy as np

from ...data.effort_units import tau_unit, unit_label
from ...errors import DataError
from ...models.methods import get_method, resolve_methods
from ...training.blocks import MISSING, fmt_values
from ...training.config import TrainConfig
from ...training.evaluate import TorqueMetrics, evaluate_model, evaluate_predictions, torque_noise
from ...training.fit import FitPlan, FitResult, Stacked, fit_plans, predict_stacked
from ...training.pipeline import (
    MethodRun,
    PreparedData,
    TrainingInputs,
    evaluate_on_test,
    prepare_data,
    rigid_body_regressor,
    save_method,
    shared_fits,
)
from ...training.planner import plan_methods
from ...training.records import RunMetrics
from .efficiency import EfficiencyRow, collect_efficiency, plan_efficiency
from .pick import choose_pick, diagnose_stuck, pick_seed
from .pick_cv import cross_validate, needs_cv, share_warnings
from .report import write_report
from .results import (
    PICK_DIR,
    CompareReport,
    DeadZoneSummary,
    MeasurementNoise,
    MethodDeadZone,
    MethodResult,
    NoiseFloor,
    Pick,
)

__all__ = ["quick_config", "run_compare"]

Band = tuple[np.ndarray, np.ndarray, np.ndarray]


def quick_config(config: TrainConfig) -> TrainConfig:
    """A shortened configuration for ``--quick``: at most 600 steps, 2 seeds, efficiency at 25% and 100%."""
    return config.with_overrides(max_steps=min(config.max_steps, 600), eval_interval=min(config.eval_interval, 50),
                                 seeds=min(config.seeds, 2), efficiency_fractions=(0.25, 1.0))


def compare_config(config: TrainConfig, *, quick: bool, seeds: int | None = None) -> TrainConfig:
    """The configuration ``compare`` runs with: ``config``, shortened by :func:`quick_config` with ``quick``, then
    ``seeds`` seeds when given (``--seeds`` wins over ``--quick``'s two).

    Raises:
        ValueError: ``seeds`` not a positive integer.
    """
    return (quick_config(config) if quick else config).with_overrides(seeds=seeds)


def _opt(v: SupportsFloat) -> float | None:
    """``v`` as a float, or None where it could not be measured (NaN, inf): how the results hold a missing figure."""
    f = float(v)
    return f if math.isfinite(f) else None


def _opts(values: Sequence[float]) -> list[float | None]:
    """:func:`_opt` of each value."""
    return [_opt(v) for v in values]


def _mean_std(values: Sequence[Sequence[float | None]]) -> tuple[list[float | None], list[float | None]]:
    """Per-column mean and std over the rows of ``values`` (None and NaN left out; a column without any: None)."""
    import warnings

    a = np.asarray([[np.nan if v is None else v for v in row] for row in values], dtype=float)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN columns (a joint that never moves in test)
        mean = _opts(np.atleast_1d(np.nanmean(a, axis=0)).tolist())
        spread = np.nanstd(a, axis=0) if len(a) > 1 else np.zeros(a.shape[1:])
        std = _opts(np.atleast_1d(spread).tolist())
    return mean, std


def _sim_band(inputs: TrainingInputs, data: Stacked) -> Band | None:
    """(noise-floor prediction with the joint effects, band centre, band half width) on ``data``.

    The noise floor is the simulator's own inverse dynamics with every joint effect it models (rigid body, armature,
    viscous, Stribeck and load-dependent friction, ripple; :meth:`SimArm.inverse_dynamics` with ``friction=True``)
    fed the measured inputs. The half width is per joint: the static (breakaway) friction plus the load term at the
    median band centre of the data.
    """
    from ...robot_configs import bundled_sim_config
    from ...sim import SimArm

    cfg = inputs.sim_config or bundled_sim_config()
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
    tol = np.nan_to_num(np.asarray(evaluate_predictions(band[0], test).rmse_per_joint, dtype=float))
    return band[0], band[1], band[2] + tol


def _evaluate(fit: FitResult, data: PreparedData, band: Band | None) -> tuple[RunMetrics, np.ndarray]:
    """(metrics on the test and validation splits, test prediction) of one fit; each split predicted once."""
    metrics, pred = evaluate_on_test(fit, data, {"band_center": band[1], "band_halfwidth": band[2]} if band else None)
    val = evaluate_predictions(predict_stacked(fit.model, data.val), data.val)
    return dataclasses.replace(metrics, validation=val), pred


def _run_all(inputs: TrainingInputs, data: PreparedData, config: TrainConfig, plans: dict[str, list[FitPlan]],
             eff_rows: list[EfficiencyRow], band: Band | None, out: Path, log: Callable[[str], None]):
    """Train every planned model (over the worker processes), evaluate each, save the seed-0 artifacts.

    Returns ({method: [MethodRun]}, {method: seed-0 test prediction}, {method: seed-0 validation metrics},
    {id(plan): FitResult} of the efficiency plans)."""
    eff_plans = [p for row in eff_rows for ps in row.plans.values() if not isinstance(ps, str) for p in ps]
    flat = [p for ps in plans.values() for p in ps] + eff_plans
    n_nets = sum(p.spec is not None for p in flat)
    log(f"training {n_nets} networks (each alone, over the worker processes) and {len(flat) - n_nets} "
        "rigid-body model(s)")
    fits = dict(zip(map(id, flat), fit_plans(flat, config)))
    runs: dict[str, list[MethodRun]] = {}
    preds: dict[str, np.ndarray] = {}
    val_metrics: dict[str, TorqueMetrics] = {}
    width = max(map(len, plans), default=0)  # the log's method column
    for method, ps in plans.items():
        runs[method] = []
        for s, plan in enumerate(ps):
            fit = fits[id(plan)]
            metrics, pred = _evaluate(fit, data, band)
            run = MethodRun(fit, metrics)
            runs[method].append(run)
            val = metrics.validation
            assert val is not None  # _evaluate fills it
            log(f"{method:>{width}s} seed {plan.seed}: test RMSE per joint {fmt_values(metrics.test.rmse_per_joint)} "
                f"{unit_label(inputs.effort_units)} (mean "
                f"{fmt_values([metrics.test.rmse_mean])}); validation {fmt_values([val.rmse_mean])}"
                + "".join(f"; {j}: {MISSING} ({why})" for j, why in metrics.missing.items()))
            if s == 0:
                preds[method], val_metrics[method] = pred, val
                save_method(run, out / "models" / method, inputs, data, config.with_overrides(seed=plan.seed),
                            onnx=False)
    return runs, preds, val_metrics, {k: v for k, v in fits.items() if k in set(map(id, eff_plans))}


def _summarize(method: str, runs: list[MethodRun], band: Band | None) -> MethodResult:
    """One method's result over its seeds (missing figures as None)."""
    per_seed = [r.metrics for r in runs]
    tests = [r.test for r in per_seed]
    vals = [r.validation for r in per_seed if r.validation is not None]
    mean, std = _mean_std([t.rmse_per_joint for t in tests])
    nmean, nstd = _mean_std([t.nrmse_per_joint for t in tests])
    dzm, dzs = _mean_std([t.dead_zone.rmse_vs_measured_per_joint for t in tests])
    in_band = [t.dead_zone.pred_within_band_per_joint for t in tests]
    dead_zone = MethodDeadZone(dzm, dzs, _mean_std([b for b in in_band if b is not None])[0]
                               if band is not None else None)
    return MethodResult(
        rmse_per_joint=mean, rmse_per_joint_std=std,
        rmse_mean=_opt(np.mean([t.rmse_mean for t in tests])),
        rmse_mean_std=_opt(np.std([t.rmse_mean for t in tests])),
        nrmse_per_joint=nmean, nrmse_per_joint_std=nstd,
        nrmse_mean=_opt(np.mean([t.nrmse_mean for t in tests])),
        usable_fraction=per_seed[0].usable_fraction, seeds=[r.seed for r in per_seed],
        dead_zone=dead_zone, per_seed=per_seed, artifact=str(Path("models") / method),
        validation_rmse_mean=_opt(np.mean([v.rmse_mean for v in vals])),
        validation_rmse_per_joint=_mean_std([v.rmse_per_joint for v in vals])[0],
        validation_rmse_per_seed=_opts([v.rmse_mean for v in vals]),
        steps_per_seed=[r.train.steps for r in per_seed if r.train.steps is not None],
        **_consistency(runs[0].fit.model))


class _Consistency(TypedDict, total=False):
    """MethodResult's ``n_bodies``, ``inconsistent_bodies`` and ``urdf_refusal``."""

    n_bodies: int
    inconsistent_bodies: list[str] | None
    urdf_refusal: str


def _consistency(model: object) -> _Consistency:
    """MethodResult's ``n_bodies``, ``inconsistent_bodies`` and ``urdf_refusal`` of ``model``'s rigid body (none
    without one)."""
    from ...errors import ArtifactError
    from ...models import RigidBodyModel
    from ...models.urdf_export import identified_urdf

    rb = getattr(model, "rbd", None)
    if not isinstance(rb, RigidBodyModel):
        return {}
    n = int(rb.regressor.model.njoints) - 1
    try:  # a report line: a fit it cannot judge (a non-finite parameter) must not stop the comparison
        bad = rb.inconsistent_bodies()
    except (ValueError, np.linalg.LinAlgError) as err:
        return {"n_bodies": n, "inconsistent_bodies": None, "urdf_refusal": f"cannot be checked: {err}"}
    try:
        identified_urdf(rb, "its rigid body")
        refusal = ""
    except (ArtifactError, ValueError, np.linalg.LinAlgError) as err:
        refusal = str(err)
    return {"n_bodies": n, "inconsistent_bodies": bad, "urdf_refusal": refusal}


def _noise_floor(band: Band, test: Stacked) -> NoiseFloor:
    floor = evaluate_predictions(band[0], test, band_center=band[1], band_halfwidth=band[2])
    return NoiseFloor(
        description="RMSE of the simulator's own inverse dynamics (rigid body + armature + viscous + dry friction "
                    "with its Stribeck and load terms + ripple, as configured) fed the same measured q, dq, ddq, on "
                    "the same test pairs",
        rmse_per_joint=_opts(floor.rmse_per_joint), rmse_mean=_opt(floor.rmse_mean),
        nrmse_per_joint=_opts(floor.nrmse_per_joint),
        measured_within_band_per_joint=None if floor.dead_zone.measured_within_band_per_joint is None
        else _opts(floor.dead_zone.measured_within_band_per_joint),
        band_halfwidth_per_joint=_opts(band[2].tolist()))


def _measurement_noise(test: Stacked) -> MeasurementNoise:
    sigma, nsigma, pairs = torque_noise(test)

    def mean(v: np.ndarray) -> float | None:
        return _opt(np.nanmean(v)) if np.isfinite(v).any() else None

    return MeasurementNoise(
        description="white noise of the measured torque on the test pairs, from its second differences "
                    "(Gasser, Sroka and Jennen-Steinmetz 1986)",
        rmse_per_joint=_opts(sigma.tolist()), rmse_mean=mean(sigma), nrmse_per_joint=_opts(nsigma.tolist()),
        nrmse_mean=mean(nsigma), pairs_per_joint=pairs.astype(int).tolist())


def _dead_zone_summary(data: PreparedData) -> DeadZoneSummary:
    train, test = data.train, data.test
    return DeadZoneSummary(data.dead_zone, train.r.mean(axis=0).tolist(), float(train.r.all(axis=1).mean()),
                           float(train.r.mean()), test.r.mean(axis=0).tolist())


def run_compare(inputs: TrainingInputs, out_dir: str | Path, config: TrainConfig, *,
                methods: Sequence[str] | None = None, log: Callable[[str], None] = print) -> CompareReport:
    """Run the comparison and write ``out_dir``/report.md, report.json, ``plots/*.png`` and ``models/<method>/``.

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
    methods = [m.name for m in resolve_methods(methods)]
    data = prepare_data(inputs, config, log)
    log(f"split: {len(data.train)} train / {len(data.val)} val / {len(data.test)} test samples "
        f"({len(data.split.train)}/{len(data.split.val)}/{len(data.split.test)} blocks); joints "
        f"{list(inputs.joint_names)}")
    shares = share_warnings(len(data.train), len(data.val), len(data.test))
    for line in shares:
        log(f"WARNING: {line}")
    shared = shared_fits(inputs, data, config, log, unit_label(inputs.effort_units))
    plans, skipped = plan_methods(methods, config.seed_list, shared)
    for m, why in skipped.items():
        log(f"skipping {m}: {why}")
    band = _noise_band(inputs, data.test)
    eff_methods = [m for m in plans if get_method(m).efficiency_curve]
    eff_rows = plan_efficiency(data, config, eff_methods, shared.regressor)
    runs, preds, val_metrics, eff_fits = _run_all(inputs, data, config, plans, eff_rows, band, out, log)
    report = CompareReport(
        joint_names=list(inputs.joint_names),
        units={"rmse": tau_unit(inputs.effort_units), "nrmse": "1 (RMSE / std of the measured torque)"},
        data=data.fingerprint(inputs, config), dead_zone=_dead_zone_summary(data), config=config,
        methods={m: _summarize(m, r, band) for m, r in runs.items()}, skipped_methods=skipped, split_warnings=shares,
        measurement_noise=_measurement_noise(data.test))
    if band is not None:
        report.noise_floor = _noise_floor(band, data.test)
        preds["noise floor (simulator ID)"] = band[0]
    report.data_efficiency = collect_efficiency(
        eff_rows, eff_fits, {m: [r.metrics.test.rmse_mean for r in runs[m]] for m in eff_methods}, data.train,
        lambda fit: evaluate_model(fit.model, data.test).rmse_mean, eff_methods, log)
    if runs:
        try:
            report.pick = _export_pick(report, runs, inputs, data, config, out, log)
        except ValueError as err:  # no method has a validation RMSE (a joint never moves in the validation blocks)
            log(f"no pick: {err}; set --block-seconds so that every joint moves in the validation blocks")
        report.data_diagnosis = diagnose_stuck(report.methods, val_metrics)
    report.seconds = time.perf_counter() - t_start
    (out / "report.json").write_text(json.dumps(report.to_dict(), indent=2) + "\n")
    n_plots = write_report(out, report, data.test, preds, band)
    log(f"wrote {out / 'report.md'}, {out / 'report.json'} and {n_plots} plots in {report.seconds:.1f} s")
    return report


def _export_pick(report: CompareReport, runs: dict[str, list[MethodRun]], inputs: TrainingInputs,
                 data: PreparedData, config: TrainConfig, out: Path, log: Callable[[str], None]) -> Pick:
    """Choose the model to deploy by validation RMSE (by cross-validation when the validation split has too few
    blocks: :mod:`.compare.pick_cv`), export it to ``out``/pick (ONNX when it has a network)."""
    why_cv = needs_cv(data.split)
    cv = None
    if why_cv is not None:
        reg = (lambda dz: rigid_body_regressor(inputs, dz, config)) if inputs.urdf_xml is not None else None
        try:
            cv = cross_validate(data.split, list(runs), config, why_cv, reg, log)
        except DataError as err:
            log(f"WARNING: no cross-validation ({err}); picking on the {len(data.split.val)} validation block(s)")
    if cv is None:
        pick = choose_pick({m: e.validation_rmse_mean for m, e in report.methods.items()}, report.torque_unit,
                           scores={m: [e.validation_rmse_per_seed] for m, e in report.methods.items()})
    else:
        pick = choose_pick(cv.rmse_mean, report.torque_unit, scores=cv.rmse_per_fold, basis="cross-validation")
        pick.cv, pick.validation_rmse_mean = cv, report.methods[pick.method].validation_rmse_mean
    run = runs[pick.method][pick_seed(report.methods[pick.method])]
    pick.seed = run.metrics.seed
    pick.test_rmse_mean, pick.test_nrmse_mean = _opt(run.metrics.test.rmse_mean), _opt(run.metrics.test.nrmse_mean)
    has_net = run.fit.model.mlp is not None
    saved = save_method(run, out / PICK_DIR, inputs, data, config.with_overrides(seed=pick.seed), onnx=has_net)
    pick.onnx = f"{PICK_DIR}/{saved.onnx_file}" if saved.onnx_file else None
    log(f"pick: {pick.method} seed {pick.seed} ({pick.reason}); its test RMSE {fmt_values([pick.test_rmse_mean])} "
        f"{unit_label(inputs.effort_units)}; "
        f"exported to {out / PICK_DIR}; how sure: {pick.confidence}")
    return pick
