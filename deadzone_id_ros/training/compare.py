"""The comparison experiment: every method on the same split over several seeds, written as report.md/json + plots.

Reproduces the experiment of Inami, Yamane, Sakaino (arXiv 2402.00393, Sec. IV) and adds the rigid-body and hybrid
baselines, a data-efficiency curve and, on simulator data, the noise floor (the simulator's own inverse dynamics
with friction, fed the same measured inputs).

Protocol (nothing is tuned on the test split):
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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from ..data.deadzone import DeadZone, fit_dead_zone
from ..data.split import split_episodes
from ..data.types import Episode
from ..errors import DataError, RobotDescriptionError
from ..models.artifact import save_artifact
from ..models.predictor import METHODS
from ..models.rbd import RigidBodyRegressor
from .config import TrainConfig
from .evaluate import evaluate_model, evaluate_predictions, json_clean
from .fit import Stacked, fit_method, stack_episodes

__all__ = ["CompareInputs", "quick_config", "run_compare"]

REPORT_VERSION = 1


@dataclass
class CompareInputs:
    """What the comparison runs on.

    Attributes:
        episodes: all episodes (split inside).
        joint_names: (J,) joint order.
        sources: one dict per bag: ``path`` and ``sha256`` (fingerprint; see the CLI).
        simulator: the data came from the simulated arm (enables the noise floor and the friction band).
        sim_config: the simulator's physics (a SimArmConfig) when ``simulator``; None uses the default.
        urdf_xml / urdf_source: the URDF for rbd/hybrid (None: those methods are skipped, with the reason).
        dataset_report: the data loader's report (counts, warnings), copied into report.json.
    """

    episodes: list[Episode]
    joint_names: tuple[str, ...]
    sources: list[dict[str, Any]] = field(default_factory=list)
    simulator: bool = False
    sim_config: Any = None
    urdf_xml: str | None = None
    urdf_source: str = ""
    dataset_report: dict[str, Any] = field(default_factory=dict)


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


def _sim_band(inputs: CompareInputs, data: Stacked) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
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


def run_compare(inputs: CompareInputs, out_dir: str | Path, config: TrainConfig, *,
                methods: Sequence[str] | None = None, log: Callable[[str], None] = print) -> dict[str, Any]:
    """Run the comparison and write ``out_dir``/report.md, report.json, plots/*.png and models/<method>/.

    Args:
        inputs: episodes, fingerprint, simulator flag, URDF.
        out_dir: output directory (created).
        config: training settings (``seeds``, ``efficiency_fractions``, split, alpha, ...).
        methods: subset of :data:`~deadzone_id_ros.models.METHODS` (default: all).
        log: progress messages.

    Returns:
        the report dict written to report.json.

    Raises:
        DataError: too few blocks to split, or data no method can learn from.
        ValueError: unknown method names.
    """
    t_start = time.perf_counter()
    out = Path(out_dir)
    (out / "plots").mkdir(parents=True, exist_ok=True)
    methods = list(methods or METHODS)
    unknown = [m for m in methods if m not in METHODS]
    if unknown:
        raise ValueError(f"unknown method(s) {unknown}; choose from {list(METHODS)}")
    try:
        split = split_episodes(inputs.episodes, tuple(config.split_fractions), config.block_seconds or None,
                               seed=config.split_seed)
    except ValueError as err:
        raise DataError(f"cannot split {sum(len(e) for e in inputs.episodes)} samples: {err}") from err
    dz: DeadZone = fit_dead_zone(split.train, alpha=config.alpha)
    train, val, test = (stack_episodes(s, dz) for s in (split.train, split.val, split.test))
    log(f"split: {len(train)} train / {len(val)} val / {len(test)} test samples "
        f"({len(split.train)}/{len(split.val)}/{len(split.test)} blocks); joints {list(inputs.joint_names)}")

    regressor = None
    skipped: dict[str, str] = {}
    if inputs.urdf_xml is not None:
        try:
            regressor = RigidBodyRegressor(inputs.urdf_xml, inputs.joint_names, config.friction_eps_for(dz.threshold),
                                           source=inputs.urdf_source)
        except RobotDescriptionError as err:
            reason = str(err)
            skipped.update({m: reason for m in methods if METHODS[m][0]})
    else:
        skipped.update({m: "no URDF matching the data's joints (pass --urdf)" for m in methods if METHODS[m][0]})
    run_methods = [m for m in methods if m not in skipped]
    for m, why in skipped.items():
        log(f"skipping {m}: {why}")

    band = _sim_band(inputs, test) if inputs.simulator else None
    band_kw: dict[str, Any] = {}
    if band is not None:
        # Tolerance of the band test: the exact simulator model's own RMSE on moving pairs (measurement noise).
        tol = np.nan_to_num(np.asarray(evaluate_predictions(band[0], test)["rmse_per_joint"], dtype=float))
        band = (band[0], band[1], band[2] + tol)
        band_kw = {"band_center": band[1], "band_halfwidth": band[2]}

    results: dict[str, list[dict[str, Any]]] = {m: [] for m in run_methods}
    preds: dict[str, np.ndarray] = {}
    rbd_cache = None
    for method in run_methods:
        seeds = 1 if method == "rbd" else config.seeds
        for s in range(seeds):
            cfg = config.with_overrides(seed=config.seed + s)
            fit = fit_method(method, train, val, dz, cfg, regressor=regressor, rbd=rbd_cache,
                             desc=f"{method} seed {cfg.seed}")
            if method == "rbd":
                rbd_cache = fit.model.rbd
            elif method == "hybrid" and rbd_cache is None:
                rbd_cache = fit.model.rbd
            metrics = evaluate_model(fit.model, test, **band_kw)
            metrics.update({"seed": cfg.seed, "usable_fraction": fit.usable_fraction, "train": fit.info})
            results[method].append(metrics)
            log(f"{method:>12s} seed {cfg.seed}: test RMSE per joint "
                f"{np.round(metrics['rmse_per_joint'], 4).tolist()} N*m (mean {metrics['rmse_mean']:.4f})")
            if s == 0:
                preds[method] = fit.model.predict(test.q, test.dq, test.ddq)
                save_artifact(fit.model, out / "models" / method,
                              metrics={k: metrics[k] for k in ("rmse_per_joint", "nrmse_per_joint", "rmse_mean",
                                                               "usable_fraction", "seed")},
                              training_data=_fingerprint(inputs, train, val, test, config),
                              extra={"train_config": _config_dict(cfg)}, onnx=False)

    report: dict[str, Any] = {
        "report_version": REPORT_VERSION,
        "joint_names": list(inputs.joint_names),
        "units": {"rmse": "N*m", "nrmse": "1 (RMSE / std of the measured torque)"},
        "data": _fingerprint(inputs, train, val, test, config),
        "dead_zone": {**dz.to_dict(),
                      "moving_fraction_train_per_joint": train.r.mean(axis=0).tolist(),
                      "all_moving_fraction_train": float(train.r.all(axis=1).mean()),
                      "pairs_moving_fraction_train": float(train.r.mean()),
                      "moving_fraction_test_per_joint": test.r.mean(axis=0).tolist()},
        "config": _config_dict(config),
        "methods": {},
        "skipped_methods": skipped,
    }
    for method, runs in results.items():
        mean, std = _mean_std([r["rmse_per_joint"] for r in runs])
        nmean, nstd = _mean_std([r["nrmse_per_joint"] for r in runs])
        dzm, dzs = _mean_std([r["dead_zone"]["rmse_vs_measured_per_joint"] for r in runs])
        entry = {
            "rmse_per_joint": mean, "rmse_per_joint_std": std,
            "rmse_mean": float(np.mean([r["rmse_mean"] for r in runs])),
            "rmse_mean_std": float(np.std([r["rmse_mean"] for r in runs])),
            "nrmse_per_joint": nmean, "nrmse_per_joint_std": nstd,
            "nrmse_mean": float(np.mean([r["nrmse_mean"] for r in runs])),
            "usable_fraction": runs[0]["usable_fraction"],
            "seeds": [r["seed"] for r in runs],
            "dead_zone": {"rmse_vs_measured_per_joint": dzm, "rmse_vs_measured_per_joint_std": dzs},
            "per_seed": runs,
            "artifact": str(Path("models") / method),
        }
        if band is not None:
            entry["dead_zone"]["pred_within_band_per_joint"] = _mean_std(
                [r["dead_zone"]["pred_within_band_per_joint"] for r in runs])[0]
        report["methods"][method] = entry

    if band is not None:
        floor = evaluate_predictions(band[0], test, band_center=band[1], band_halfwidth=band[2])
        report["noise_floor"] = {
            "description": "RMSE of the simulator's own inverse dynamics (rigid body + armature + viscous + dry "
                           "friction with its Stribeck and load terms + ripple, as configured) fed the same measured "
                           "q, dq, ddq, on the same test pairs",
            "rmse_per_joint": floor["rmse_per_joint"], "rmse_mean": floor["rmse_mean"],
            "nrmse_per_joint": floor["nrmse_per_joint"],
            "measured_within_band_per_joint": floor["dead_zone"].get("measured_within_band_per_joint"),
            "band_halfwidth_per_joint": band[2].tolist(),
        }
        preds["noise floor (simulator ID)"] = band[0]

    report["data_efficiency"] = _data_efficiency(split.train, val, test, dz, config, results, log,
                                                 [m for m in ("masked", "conventional") if m in run_methods])
    report["seconds"] = time.perf_counter() - t_start
    report = json_clean(report)
    (out / "report.json").write_text(json.dumps(report, indent=2) + "\n")
    plots = _plots(out / "plots", report, test, preds, band)
    (out / "report.md").write_text(_markdown(report, plots))
    log(f"wrote {out / 'report.md'}, {out / 'report.json'} and {len(plots)} plots in {report['seconds']:.1f} s")
    return report


def _config_dict(config: TrainConfig) -> dict[str, Any]:
    import dataclasses

    return {k: (list(v) if isinstance(v, tuple) else v) for k, v in dataclasses.asdict(config).items()}


def _fingerprint(inputs: CompareInputs, train: Stacked, val: Stacked, test: Stacked, config: TrainConfig) -> dict:
    return {
        "sources": inputs.sources,
        "simulator": inputs.simulator,
        "samples": {"train": len(train), "val": len(val), "test": len(test)},
        "split": {"fractions": list(config.split_fractions), "block_seconds": config.block_seconds,
                  "split_seed": config.split_seed},
        "loader_report": {k: v for k, v in inputs.dataset_report.items() if k in (
            "samples", "episodes", "messages", "messages_dropped", "warnings", "velocity_source")},
    }


def _data_efficiency(train_eps: list[Episode], val: Stacked, test: Stacked, dz: DeadZone, config: TrainConfig,
                     results: dict[str, list[dict]], log: Callable[[str], None], methods: list[str]) -> dict[str, Any]:
    """Train masked and conventional on growing prefixes of the shuffled training blocks; test RMSE per fraction."""
    fractions = sorted(set(float(f) for f in config.efficiency_fractions))
    order = np.random.default_rng(config.split_seed + 1).permutation(len(train_eps))
    out: dict[str, Any] = {"fractions": fractions, "train_samples": [], "train_blocks": []}
    for m in methods:
        out[m] = {"rmse_mean": [], "rmse_mean_std": [], "usable_samples": [], "failed": []}
    for f in fractions:
        k = max(1, int(math.ceil(f * len(train_eps))))
        subset = [train_eps[i] for i in order[:k]]
        sub = stack_episodes(subset, dz)
        out["train_samples"].append(len(sub))
        out["train_blocks"].append(k)
        for m in methods:
            if k == len(train_eps):  # the full training split: reuse the main runs
                vals = [r["rmse_mean"] for r in results[m]]
                fail = ""
            else:
                vals, fail = [], ""
                for s in range(config.seeds):
                    cfg = config.with_overrides(seed=config.seed + s)
                    try:
                        fit = fit_method(m, sub, val, dz, cfg, desc=f"{m} {f:.0%} seed {cfg.seed}")
                    except DataError as err:
                        fail = str(err)
                        break
                    vals.append(evaluate_model(fit.model, test)["rmse_mean"])
            out[m]["rmse_mean"].append(float(np.mean(vals)) if vals else float("nan"))
            out[m]["rmse_mean_std"].append(float(np.std(vals)) if vals else float("nan"))
            out[m]["usable_samples"].append(int(sub.r.all(axis=1).sum()) if m == "conventional" else int(sub.r.sum()))
            out[m]["failed"].append(fail)
            log(f"data efficiency {f:.0%} ({len(sub)} samples): {m} mean RMSE "
                f"{out[m]['rmse_mean'][-1]:.4f}{' (' + fail + ')' if fail else ''}")
    out["usable_samples_note"] = "masked: (sample, joint) pairs with r = 1; conventional: samples with all joints moving"
    return out


def _plots(folder: Path, report: dict, test: Stacked, preds: dict[str, np.ndarray], band) -> list[str]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = report["joint_names"]
    files: list[str] = []
    methods = list(report["methods"])
    J = len(names)

    # 1. RMSE per joint, mean ± std over seeds
    fig, ax = plt.subplots(figsize=(max(6, 1.6 * J + 3), 4))
    width = 0.8 / max(1, len(methods) + ("noise_floor" in report))
    x = np.arange(J)
    for k, m in enumerate(methods):
        e = report["methods"][m]
        ax.bar(x + k * width, np.nan_to_num(np.asarray(e["rmse_per_joint"], float)), width,
               yerr=np.nan_to_num(np.asarray(e["rmse_per_joint_std"], float)), capsize=3, label=m)
    if "noise_floor" in report:
        ax.bar(x + len(methods) * width, np.nan_to_num(np.asarray(report["noise_floor"]["rmse_per_joint"], float)),
               width, color="k", alpha=0.4, label="noise floor")
    ax.set_xticks(x + width * (len(methods) - 1) / 2, names)
    ax.set_ylabel("test RMSE where the joint moves [N·m]")
    ax.set_title("Torque RMSE per joint (mean ± std over seeds)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(folder / "rmse_per_joint.png", dpi=110)
    plt.close(fig)
    files.append("plots/rmse_per_joint.png")

    # 2. data efficiency
    de = report["data_efficiency"]
    if any(m in de for m in ("masked", "conventional")):
        fig, ax = plt.subplots(figsize=(6, 4))
        for m in ("masked", "conventional"):
            if m in de:
                y = np.asarray(de[m]["rmse_mean"], dtype=float)
                ax.errorbar(de["train_samples"], y, yerr=np.asarray(de[m]["rmse_mean_std"], dtype=float),
                            marker="o", capsize=3, label=m)
        ax.set_xscale("log")
        ax.set_xlabel("training samples (all, before any dropping)")
        ax.set_ylabel("mean test RMSE [N·m]")
        ax.set_title("Data efficiency")
        ax.legend()
        fig.tight_layout()
        fig.savefig(folder / "data_efficiency.png", dpi=110)
        plt.close(fig)
        files.append("plots/data_efficiency.png")

    # 3. predicted vs measured on moving test pairs
    rng = np.random.default_rng(0)
    rows = list(preds)
    if rows:
        fig, axes = plt.subplots(len(rows), J, figsize=(2.6 * J, 2.4 * len(rows)), squeeze=False)
        for i, m in enumerate(rows):
            for j in range(J):
                ax = axes[i, j]
                idx = np.flatnonzero(test.r[:, j])
                if idx.size > 3000:
                    idx = rng.choice(idx, 3000, replace=False)
                ax.plot(test.tau[idx, j], preds[m][idx, j], ".", ms=1.5, alpha=0.4)
                lo, hi = (float(test.tau[:, j].min()), float(test.tau[:, j].max())) if len(test) else (0.0, 1.0)
                ax.plot([lo, hi], [lo, hi], "k-", lw=0.8)
                if i == 0:
                    ax.set_title(names[j], fontsize=9)
                if j == 0:
                    ax.set_ylabel(f"{m}\npredicted [N·m]", fontsize=8)
                if i == len(rows) - 1:
                    ax.set_xlabel("measured [N·m]", fontsize=8)
        fig.suptitle("Predicted vs measured torque (test, joint moving)")
        fig.tight_layout()
        fig.savefig(folder / "pred_vs_measured.png", dpi=100)
        plt.close(fig)
        files.append("plots/pred_vs_measured.png")

    # 4. inside the dead zone: a test stretch with stuck phases
    if rows and len(test) > 10:
        stuck_any = ~test.r.all(axis=1)
        n = min(len(test), 3000)
        starts = np.arange(0, len(test) - n + 1, max(1, n // 4))
        best = int(starts[np.argmax([stuck_any[s:s + n].mean() for s in starts])])
        sl = slice(best, best + n)
        t = np.arange(n)
        fig, axes = plt.subplots(J, 1, figsize=(10, 2.2 * J), sharex=True, squeeze=False)
        for j in range(J):
            ax = axes[j, 0]
            ax.fill_between(t, 0, 1, where=~test.r[sl, j], transform=ax.get_xaxis_transform(), color="0.85",
                            label="stuck (r=0)" if j == 0 else None)
            if band is not None:
                c, hw = band[1][sl, j], band[2][j]
                ax.fill_between(t, c - hw, c + hw, color="tab:orange", alpha=0.15,
                                label="friction band" if j == 0 else None)
            ax.plot(t, test.tau[sl, j], "k-", lw=1.0, label="measured" if j == 0 else None)
            for m in rows:
                if m in report["methods"]:  # the simulator's exact sign() friction chatters here: not drawn
                    ax.plot(t, preds[m][sl, j], lw=0.8, label=m if j == 0 else None)
            ax.set_ylabel(f"{names[j]} [N·m]", fontsize=8)
        axes[-1, 0].set_xlabel("test sample")
        axes[0, 0].legend(fontsize=7, ncol=4, loc="upper right")
        fig.suptitle("Predictions inside and outside the dead zone (grey: joint stuck)")
        fig.tight_layout()
        fig.savefig(folder / "dead_zone_timeseries.png", dpi=100)
        plt.close(fig)
        files.append("plots/dead_zone_timeseries.png")
    return files


def _fmt(v: Any, std: Any = None, digits: int = 4) -> str:
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return "n/a"
    s = f"{v:.{digits}f}"
    if std is not None and isinstance(std, (int, float)) and math.isfinite(std):
        s += f" ± {std:.{digits}f}"
    return s


def _markdown(report: dict, plots: list[str]) -> str:
    names = report["joint_names"]
    ms = report["methods"]
    dz = report["dead_zone"]
    data = report["data"]
    lines: list[str] = ["# Dead-zone loss comparison", ""]
    src = ", ".join(f"`{s.get('path')}`" for s in data["sources"]) or "(in-memory episodes)"
    lines += [
        f"Data: {src}; {'simulated arm' if data['simulator'] else 'real robot'}; joints {', '.join(names)}.",
        f"Split by time blocks of {report['config']['block_seconds']} s (seed {report['config']['split_seed']}): "
        f"{data['samples']['train']} train / {data['samples']['val']} validation / {data['samples']['test']} test "
        "samples. Nothing was tuned on the test split.",
        "",
        "## The dead zone in this data",
        "",
        f"A joint counts as moving when |dq| > alpha·sigma with alpha = {dz['alpha']} (sigma: velocity std on the "
        "training split). Only those (sample, joint) pairs carry a meaningful torque label.",
        "",
        "| joint | sigma [rad/s] | threshold [rad/s] | moving (train) | moving (test) |",
        "|---|---|---|---|---|",
    ]
    for j, n in enumerate(names):
        lines.append(f"| {n} | {_fmt(dz['sigma'][j])} | {_fmt(dz['threshold'][j])} | "
                     f"{_fmt(dz['moving_fraction_train_per_joint'][j], digits=3)} | "
                     f"{_fmt(dz['moving_fraction_test_per_joint'][j], digits=3)} |")
    lines += ["", f"Pairs with r = 1 (what the masked loss uses): **{dz['pairs_moving_fraction_train']:.1%}**; "
              f"samples with every joint moving (what the conventional method keeps): "
              f"**{dz['all_moving_fraction_train']:.1%}** (the paper reports about 70% vs 34%).", ""]

    lines += ["## Accuracy on held-out samples where the joint moves", "",
              "Torque RMSE [N·m] on test pairs with r_ij = 1, mean ± std over seeds "
              f"({report['config']['seeds']} seeds; rbd is deterministic). nRMSE = RMSE / std of the measured torque "
              "of that joint on the same pairs.", ""]
    head = "| method | usable data | " + " | ".join(f"RMSE {n}" for n in names) + " | mean RMSE | mean nRMSE |"
    lines += [head, "|" + "---|" * (len(names) + 4)]
    for m, e in ms.items():
        cells = " | ".join(_fmt(v, s) for v, s in zip(e["rmse_per_joint"], e["rmse_per_joint_std"]))
        lines.append(f"| {m} | {e['usable_fraction']:.1%} | {cells} | {_fmt(e['rmse_mean'], e['rmse_mean_std'])} | "
                     f"{_fmt(e['nrmse_mean'], digits=3)} |")
    nf = report.get("noise_floor")
    if nf:
        cells = " | ".join(_fmt(v) for v in nf["rmse_per_joint"])
        lines.append(f"| noise floor (simulator ID) | — | {cells} | {_fmt(nf['rmse_mean'])} | "
                     f"{_fmt(float(np.nanmean([v for v in nf['nrmse_per_joint'] if v is not None])), digits=3)} |")
    for m, why in report.get("skipped_methods", {}).items():
        lines.append(f"| {m} | skipped: {why} |" + " |" * (len(names) + 2))
    lines += ["", "Usable data: masked/hybrid = fraction of (sample, joint) pairs with r = 1; conventional = fraction "
              "of samples with all joints moving; mse_all = everything (stuck labels included); rbd = per-joint "
              "moving rows.", ""]
    if nf:
        lines += ["The noise floor is the simulator's own inverse dynamics (exact rigid body, armature, viscous and "
                  "Coulomb friction) evaluated on the same *measured* q, dq, ddq. It is not zero because ddq is "
                  "estimated by Savitzky–Golay filtering, dq is noisy and the torque ripple is not measured; the "
                  "distance of each method above it is what remains to learn.", ""]

    lines += ["## Verdict", ""] + _verdict(report) + [""]

    de = report["data_efficiency"]
    dm = [m for m in ("masked", "conventional") if m in de]
    if dm:
        lines += ["## Data efficiency", "",
                  "Mean test RMSE [N·m] when training on a fraction of the training blocks (same validation and "
                  "test sets).", "",
                  "| fraction | train samples | " + " | ".join(dm) + (" | masked gain |" if len(dm) == 2 else " |"),
                  "|" + "---|" * (2 + len(dm) + (len(dm) == 2))]
        for i, f in enumerate(de["fractions"]):
            cells = " | ".join(_fmt(de[m]["rmse_mean"][i], de[m]["rmse_mean_std"][i]) for m in dm)
            gain = ""
            if len(dm) == 2:
                a, b = de["masked"]["rmse_mean"][i], de["conventional"]["rmse_mean"][i]
                gain = f" {(b - a) / b:+.1%} |" if a is not None and b not in (None, 0) else " n/a |"
            lines.append(f"| {f:.0%} | {de['train_samples'][i]} | {cells} |{gain}")
        fails = {m: [x for x in de[m]["failed"] if x] for m in dm}
        for m, f in fails.items():
            if f:
                lines.append(f"\n{m} could not train at some fractions: {f[0]}")
        lines += ["", "Positive gain: the masked loss has the lower error.", ""]

    lines += ["## Inside the dead zone", "",
              "While a joint is stuck its measured torque can be anything in the friction band, so no model can "
              "match it; a good model stays near the band (on simulator data the band is known: rigid-body + viscous "
              "torque ± (static friction + the exact model's RMSE on moving pairs, for measurement noise)). RMSE against the measured torque on stuck test pairs [N·m]"
              + (", and the fraction of predictions inside the band:" if nf else ":"), ""]
    head = "| method | " + " | ".join(f"{n} RMSE" for n in names)
    if nf:
        head += " | " + " | ".join(f"{n} in band" for n in names)
    lines += [head + " |", "|" + "---|" * (1 + len(names) * (2 if nf else 1))]
    for m, e in ms.items():
        row = f"| {m} | " + " | ".join(_fmt(v) for v in e["dead_zone"]["rmse_vs_measured_per_joint"])
        if nf:
            row += " | " + " | ".join(_fmt(v, digits=2) for v in e["dead_zone"].get("pred_within_band_per_joint", []))
        lines.append(row + " |")
    if nf and nf.get("measured_within_band_per_joint"):
        lines.append("| (measured torque) | " + " | ".join("—" for _ in names) + " | "
                     + " | ".join(_fmt(v, digits=2) for v in nf["measured_within_band_per_joint"]) + " |")
    lines += [""]
    if plots:
        lines += ["## Plots", ""] + [f"![{p}]({p})" for p in plots] + [""]
    lines += ["## How to reproduce", "",
              f"Models of seed {report['config']['seed']} are in `models/<method>/` (load with "
              "`deadzone_id_ros.models.load_artifact`); every number above is in `report.json` under stable keys "
              "(`methods.<name>.rmse_per_joint`, `.rmse_mean`, `.usable_fraction`, `noise_floor.rmse_per_joint`, "
              f"`data_efficiency`). Total time: {report['seconds']:.0f} s.", ""]
    return "\n".join(lines)


def _verdict(report: dict) -> list[str]:
    ms = report["methods"]
    out: list[str] = []
    if not ms:
        return ["No method could be run."]
    ranking = sorted(ms, key=lambda m: ms[m]["rmse_mean"] if ms[m]["rmse_mean"] is not None else math.inf)
    out.append("Ranking by mean test RMSE: " + ", ".join(f"{m} ({_fmt(ms[m]['rmse_mean'])})" for m in ranking) + ".")
    best_n = min((ms[m]["nrmse_mean"] for m in ms if ms[m]["nrmse_mean"] is not None), default=None)
    if best_n is not None and best_n >= 0.7:
        out.append(f"**Caution:** the best mean nRMSE is {best_n:.2f}"
                   + (" (worse than predicting each joint's mean torque)" if best_n >= 1 else "")
                   + ": no model generalizes well to the held-out blocks. With "
                   f"{report['data']['samples']['train']} training samples for {len(report['joint_names'])} joints "
                   "the test blocks visit states the training blocks do not cover, so the differences between "
                   "methods below say little about the loss functions.")
    if "masked" in ms and "conventional" in ms:
        a, b = ms["masked"], ms["conventional"]
        diff = (b["rmse_mean"] - a["rmse_mean"]) / b["rmse_mean"] if b["rmse_mean"] else float("nan")
        noise = math.hypot(a["rmse_mean_std"] or 0.0, b["rmse_mean_std"] or 0.0)
        one_seed = len(a.get("seeds") or []) < 2 or len(b.get("seeds") or []) < 2
        clear = not one_seed and abs(b["rmse_mean"] - a["rmse_mean"]) > 2 * noise
        if one_seed:
            out.append("One training seed only (--quick): there is no seed-to-seed spread to judge differences by.")
        dz = report["dead_zone"]
        if diff > 0 and clear:
            out.append(f"The masked (dead-zone) loss is {diff:.1%} more accurate than the conventional method "
                       "(beyond twice the seed-to-seed spread), while learning from "
                       f"{a['usable_fraction']:.0%} of the pairs instead of {b['usable_fraction']:.0%} of the samples.")
        elif diff > 0:
            out.append(f"Masked and conventional are not clearly different here: masked is {diff:.1%} lower, but "
                       "within twice the seed-to-seed spread (it learns from "
                       f"{a['usable_fraction']:.0%} of the pairs, conventional from {b['usable_fraction']:.0%} of the "
                       "samples).")
        else:
            out.append(f"The masked loss does NOT beat the conventional method here ({-diff:.1%} worse, "
                       f"{'beyond' if clear else 'within'} twice the seed-to-seed spread).")
            why = []
            if dz["all_moving_fraction_train"] > 0.6:
                why.append(f"most samples have every joint moving ({dz['all_moving_fraction_train']:.0%}), so "
                           "dropping the others costs little data")
            if report["data"]["samples"]["train"] > 50000:
                why.append("the training set is large, so the extra data of the masked loss adds little; see the "
                           "data-efficiency table for the small-data regime")
            out.append("Why: " + ("; ".join(why) if why else "the extra pairs the masked loss uses come from "
                       "samples where another joint is stuck, whose other inputs may be less informative; compare the "
                       "data-efficiency table") + ".")
    if "mse_all" in ms and "masked" in ms:
        a, c = ms["masked"]["rmse_mean"], ms["mse_all"]["rmse_mean"]
        spread = 2 * math.hypot(ms["masked"]["rmse_mean_std"] or 0.0, ms["mse_all"]["rmse_mean_std"] or 0.0)
        seeds_ok = len(ms["masked"].get("seeds") or []) >= 2 and len(ms["mse_all"].get("seeds") or []) >= 2
        significant = seeds_ok and abs(c - a) > spread
        out.append(f"Plain MSE on all samples (stuck labels included) has {(c - a) / a:+.1%} error relative to "
                   "masked" + ("" if significant else " (not beyond twice the seed-to-seed spread)") + ": "
                   + ("the stuck labels hurt, as the paper predicts." if c > a and significant else
                      "no clear effect of the stuck labels here." if not significant else
                      "here the stuck labels did not hurt on moving pairs."))
        if c <= a:
            dz_err = ms["mse_all"]["dead_zone"]["rmse_vs_measured_per_joint"]
            mov_err = ms["mse_all"]["rmse_per_joint"]
            pairs = [(d, m) for d, m in zip(dz_err, mov_err) if d is not None and m is not None]
            if pairs:
                ratio = float(np.mean([d / m for d, m in pairs if m > 0]))
                out.append(f"Inside the dead zone mse_all's error against the measured torque is {ratio:.2f}× its "
                           "error on moving pairs (mean over joints). "
                           + ("A ratio near or below one means the torques recorded while a joint is stuck are as "
                              "predictable as the others: this torque signal shows no friction band to mask, as "
                              "with a link-side joint-torque sensor, which measures after the gear friction." if
                              ratio < 1.5 else "The stuck labels are less predictable, yet still helped the fit."))
    if "rbd" in ms and "masked" in ms:
        out.append(f"The rigid-body model (identified base parameters + friction) reaches {_fmt(ms['rbd']['rmse_mean'])} "
                   f"N·m mean RMSE vs {_fmt(ms['masked']['rmse_mean'])} for the masked MLP.")
    nf = report.get("noise_floor")
    if nf and nf.get("rmse_mean"):
        best = ranking[0]
        out.append(f"Best method {best} is {ms[best]['rmse_mean'] / nf['rmse_mean']:.2f}× the simulator's own noise "
                   f"floor ({_fmt(nf['rmse_mean'])} N·m).")
    return out
