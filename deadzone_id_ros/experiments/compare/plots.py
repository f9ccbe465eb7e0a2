"""Plots of the reports: the comparison's four figures, the closed-loop reversal and tracking plots and the demo's
closed-loop bars (matplotlib, Agg). Every plot colours a method or controller with :func:`method_colour`, so one
method has one colour across every plot of every report."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ...models.methods import METHODS

if TYPE_CHECKING:
    from ...training.fit import Stacked
    from ..closed_loop.results import ClosedLoopResult, ClosedLoopSummary
    from .results import CompareReport

__all__ = ["LABEL_COLOURS", "closed_loop_plot", "compare_plots", "method_colour", "reversal_error_plot",
           "tracking_plot"]

Band = tuple[np.ndarray, np.ndarray, np.ndarray]

#: The colours of the labels that are not methods (a method's colour is its registry entry's
#: :attr:`~deadzone_id_ros.models.methods.Method.colour`): controllers that run no method's model, the noise floor.
#: A controller that runs a method's model (``ctc_dob_<method>``) takes the method's colour; the pick has its own.
LABEL_COLOURS: dict[str, str] = {
    "pd_dob": "tab:gray", "ctc_dob_rbd_nominal": "tab:pink", "ctc_dob_pick": "tab:olive", "noise floor": "black",
}
_SPARE = ("tab:cyan", "darkgoldenrod", "teal", "indigo", "crimson", "darkseagreen")


def method_colour(name: str) -> str:
    """The colour of a method (its registry entry's) or controller (:data:`LABEL_COLOURS`) in every plot.

    ``ctc_dob_<method>`` (a controller running that method's model) takes the method's colour; a noise-floor label
    is black; a name not in the map gets a spare colour chosen by a stable hash of the name (the same in every plot
    and every run).
    """
    if name in LABEL_COLOURS:
        return LABEL_COLOURS[name]
    method = name[len("ctc_dob_"):] if name.startswith("ctc_dob_") else name
    if method in METHODS and METHODS[method].colour:
        return METHODS[method].colour
    if name.startswith("noise floor"):
        return LABEL_COLOURS["noise floor"]
    import zlib

    return _SPARE[zlib.crc32(name.encode()) % len(_SPARE)]


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _save(fig, path: Path, dpi: int) -> None:
    fig.tight_layout()
    fig.savefig(path, dpi=dpi)
    _pyplot().close(fig)


def compare_plots(folder: Path, report: CompareReport, test: Stacked, preds: dict[str, np.ndarray],
                  band: Band | None) -> list[str]:
    """Draw the comparison's plots into ``folder``; returns their paths relative to the report ("plots/x.png").

    Args:
        report: the comparison's results.  test: the test split.  preds: label -> (N, J) prediction [N·m, or
        ``report.torque_unit``] on
        ``test`` (seed 0 of each method, and the noise floor).  band: (noise-floor prediction, band centre (N, J),
        half width (J,)) [N·m] on simulator data.
    """
    files = [_rmse_bars(folder, report)]
    de = report.data_efficiency
    if de is not None and de.curves:
        files.append(_efficiency(folder, report))
    if preds:
        files.append(_pred_vs_measured(folder, report.joint_names, test, preds, report.torque_unit))
        if len(test) > 10:
            files.append(_dead_zone_timeseries(folder, report, test, preds, band))
    return files


def _rmse_bars(folder: Path, report: CompareReport) -> str:
    """RMSE per joint, mean ± std over seeds, and the noise floor."""
    _save(_rmse_figure(report), folder / "rmse_per_joint.png", 110)
    return "plots/rmse_per_joint.png"


def _rmse_figure(report: CompareReport):
    plt = _pyplot()
    names, methods, floor = report.joint_names, list(report.methods), report.noise_floor
    J = len(names)
    fig, ax = plt.subplots(figsize=(max(6, 1.6 * J + 3), 4))
    width = 0.8 / max(1, len(methods) + (floor is not None))
    x = np.arange(J)
    for k, m in enumerate(methods):
        e = report.methods[m]
        ax.bar(x + k * width, np.nan_to_num(np.asarray(e.rmse_per_joint, float)), width,
               yerr=np.nan_to_num(np.asarray(e.rmse_per_joint_std, float)), capsize=3, label=m,
               color=method_colour(m))
    if floor is not None:
        ax.bar(x + len(methods) * width, np.nan_to_num(np.asarray(floor.rmse_per_joint, float)),
               width, color=method_colour("noise floor"), alpha=0.4, label="noise floor")
    ax.set_xticks(x + width * (len(methods) - 1) / 2, names)
    ax.set_ylabel(f"test RMSE where the joint moves [{report.torque_unit}]")
    ax.set_title("Torque RMSE per joint (mean ± std over seeds)")
    ax.legend(fontsize=8)
    return fig


def _efficiency(folder: Path, report: CompareReport) -> str:
    """Mean test RMSE against the number of training samples, one line per method on the curve (masked vs
    conventional)."""
    plt = _pyplot()
    de = report.data_efficiency
    assert de is not None
    fig, ax = plt.subplots(figsize=(6, 4))
    for m in de.curves:
        y = np.asarray(de.curves[m].rmse_mean, dtype=float)
        ax.errorbar(de.train_samples, y, yerr=np.asarray(de.curves[m].rmse_mean_std, dtype=float),
                    marker="o", capsize=3, label=m, color=method_colour(m))
    ax.set_xscale("log")
    ax.set_xlabel("training samples (all, before any dropping)")
    ax.set_ylabel(f"mean test RMSE [{report.torque_unit}]")
    ax.set_title("Data efficiency")
    ax.legend()
    _save(fig, folder / "data_efficiency.png", 110)
    return "plots/data_efficiency.png"


def _pred_vs_measured(folder: Path, names: Sequence[str], test: Stacked, preds: dict[str, np.ndarray],
                      unit: str = "N·m") -> str:
    """Predicted vs measured torque on moving test pairs (at most 3000 per joint, seeded choice)."""
    plt = _pyplot()
    rng = np.random.default_rng(0)
    rows, J = list(preds), len(names)
    fig, axes = plt.subplots(len(rows), J, figsize=(2.6 * J, 2.4 * len(rows)), squeeze=False)
    for i, m in enumerate(rows):
        for j in range(J):
            ax = axes[i, j]
            idx = np.flatnonzero(test.r[:, j])
            if idx.size > 3000:
                idx = rng.choice(idx, 3000, replace=False)
            ax.plot(test.tau[idx, j], preds[m][idx, j], ".", ms=1.5, alpha=0.4, color=method_colour(m))
            lo, hi = (float(test.tau[:, j].min()), float(test.tau[:, j].max())) if len(test) else (0.0, 1.0)
            ax.plot([lo, hi], [lo, hi], "k-", lw=0.8)
            if i == 0:
                ax.set_title(names[j], fontsize=9)
            if j == 0:
                ax.set_ylabel(f"{m}\npredicted [{unit}]", fontsize=8)
            if i == len(rows) - 1:
                ax.set_xlabel(f"measured [{unit}]", fontsize=8)
    fig.suptitle("Predicted vs measured torque (test, joint moving)")
    _save(fig, folder / "pred_vs_measured.png", 100)
    return "plots/pred_vs_measured.png"


def _dead_zone_timeseries(folder: Path, report: CompareReport, test: Stacked, preds: dict[str, np.ndarray],
                          band: Band | None) -> str:
    """Inside the dead zone: the test stretch of 3000 samples with the most stuck phases."""
    plt = _pyplot()
    names = report.joint_names
    J = len(names)
    stuck_any = np.asarray(~test.r.all(axis=1))
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
        for m in preds:
            if m in report.methods:  # the simulator's exact sign() friction chatters here: not drawn
                ax.plot(t, preds[m][sl, j], lw=0.8, label=m if j == 0 else None, color=method_colour(m))
        ax.set_ylabel(f"{names[j]} [{report.torque_unit}]", fontsize=8)
    axes[-1, 0].set_xlabel("test sample")
    axes[0, 0].legend(fontsize=7, ncol=4, loc="upper right")
    fig.suptitle("Predictions inside and outside the dead zone (grey: joint stuck)")
    _save(fig, folder / "dead_zone_timeseries.png", 100)
    return "plots/dead_zone_timeseries.png"


def closed_loop_plot(results: dict[str, ClosedLoopResult], path: Path) -> None:
    """Tracking RMSE [mrad] and applied torque RMS [N·m] per joint of each closed-loop run (controller name -> run),
    as grouped bars, each controller in its :func:`method_colour`; written to the PNG ``path``."""
    _save(_closed_loop_figure(results), path, 110)


def _closed_loop_figure(results: dict[str, ClosedLoopResult]):
    plt = _pyplot()
    labels = list(results)
    joints = results[labels[0]].metrics.joint_names
    x = np.arange(len(joints))
    width = 0.8 / len(labels)
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    for i, label in enumerate(labels):
        r = results[label]
        colour = method_colour(label)
        axes[0].bar(x + i * width, np.asarray(r.metrics.tracking_rmse_per_joint) * 1e3, width, label=label,
                    color=colour)
        axes[1].bar(x + i * width, r.metrics.effort_rms_per_joint, width, label=label, color=colour)
    for ax, title, unit in ((axes[0], "tracking RMSE (held-out reference)", "mrad"),
                            (axes[1], "applied torque RMS", "N·m")):
        ax.set_xticks(x + 0.4 - width / 2, joints)
        ax.set_title(title)
        ax.set_ylabel(unit)
        ax.grid(axis="y", alpha=0.3)
    axes[0].legend(fontsize=8)
    return fig


def reversal_error_plot(settings: dict[str, dict[str, ClosedLoopSummary]], path: Path) -> None:
    """Mean |tracking error| [mrad] around velocity reversals of the reference, per joint and controller.

    Args:
        settings: setting label (e.g. "default DOB") -> {controller name: summary with ``reversal_profile``}; one row
            of panels per setting, one panel per joint, one line per controller (the first seed's reversals).
        path: PNG to write (nothing is written when no setting has a run).
    """
    fig = _reversal_figure(settings)
    if fig is not None:
        _save(fig, path, 100)


def _reversal_figure(settings: dict[str, dict[str, ClosedLoopSummary]]):
    plt = _pyplot()
    rows = [(label, runs) for label, runs in settings.items() if runs]
    if not rows:
        return None
    joints = next(iter(rows[0][1].values())).joint_names
    fig, axes = plt.subplots(len(rows), len(joints), figsize=(4 * len(joints), 3.2 * len(rows)), squeeze=False)
    for r, (setting, runs) in enumerate(rows):
        positive = [False] * len(joints)
        for name, s in runs.items():
            prof = s.reversal_profile
            if not prof:
                continue
            t = np.asarray(prof["t"]) * 1e3
            err = np.asarray(prof["mean_abs_error"], dtype=float) * 1e3
            for k in range(len(joints)):
                axes[r, k].plot(t, err[:, k], label=s.label, lw=1.2, color=method_colour(name))
                positive[k] |= bool(np.any(err[:, k] > 0))
        for k, joint in enumerate(joints):
            ax = axes[r, k]
            if not positive[k]:  # say why the panel is empty instead of leaving it blank
                ax.text(0.5, 0.5, "no velocity reversal\nof the reference on this joint\n(e.g. a continuous joint "
                        "turning one way)", transform=ax.transAxes, ha="center", va="center", fontsize=8)
            ax.axvline(0.0, color="k", lw=0.6)
            ax.set_title(f"{joint}, {setting}", fontsize=9)
            ax.set_xlabel("time from velocity reversal [ms]")
            ax.set_ylabel("mean |error| [mrad]")
            if positive[k]:  # log: an unstable controller is orders of magnitude above the rest
                ax.set_yscale("log")
            ax.grid(alpha=0.3, which="both")
    axes[0, 0].legend(fontsize=7)
    return fig


def tracking_plot(runs: dict[str, ClosedLoopSummary], path: Path) -> bool:
    """The tracking itself: reference q_d and measured q over time per joint [rad], and the error q_d - q [mrad]
    below, one colour per controller (:func:`method_colour`), from each summary's ``trace`` (its first seed).

    Args:
        runs: controller name -> summary.  path: PNG to write.

    Returns:
        True when written; False when no summary carries a trace (nothing is written).
    """
    have = {n: s for n, s in runs.items() if s.trace}
    if not have:
        return False
    _save(_tracking_figure(have), path, 100)
    return True


def _tracking_figure(runs: dict[str, ClosedLoopSummary]):
    plt = _pyplot()
    joints = next(iter(runs.values())).joint_names
    fig, axes = plt.subplots(2, len(joints), figsize=(4.5 * len(joints), 6), sharex=True, squeeze=False)
    first = True
    for name, s in runs.items():
        t = np.asarray(s.trace["t"], dtype=float)
        q, q_d = np.asarray(s.trace["q"], dtype=float), np.asarray(s.trace["q_d"], dtype=float)
        if first:  # every controller follows the same reference (same seed)
            for k in range(len(joints)):
                axes[0, k].plot(t, q_d[:, k], "k--", lw=1.0, label="q_d (reference)")
            first = False
        for k in range(len(joints)):
            axes[0, k].plot(t, q[:, k], lw=0.9, color=method_colour(name), label=s.label)
            axes[1, k].plot(t, (q_d[:, k] - q[:, k]) * 1e3, lw=0.9, color=method_colour(name), label=s.label)
    for k, joint in enumerate(joints):
        axes[0, k].set_title(joint, fontsize=9)
        axes[0, k].set_ylabel("q [rad]")
        axes[1, k].set_ylabel("error q_d - q [mrad]")
        axes[1, k].set_xlabel("time [s]")
        for ax in axes[:, k]:
            ax.grid(alpha=0.3)
    axes[0, 0].legend(fontsize=7)
    fig.suptitle("Tracking on the first held-out seed: measured q against the reference q_d, and the error")
    return fig
