"""The report of ``deadzone-id teleop`` (core, no ROS): teleop.json, teleop.md and
plots/teleop_<model>_<mode>_<scenario>.png (leader and follower positions; the felt vs the true contact torque and
the reflected estimate, over time)."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import numpy as np

from ...teleop.sim import TeleopTrace
from .results import FIGURES, TeleopResults
from .run import IDEAL
from .sizing import HAND_LOAD_SHARE

__all__ = ["done_when", "markdown", "plot_case", "plot_name", "write_teleop"]

#: the issue's targets: free-motion tracking RMSE [rad], felt-force error, improvement over nominal
TRACKING_TARGET = 2e-3
FELT_TARGET = 0.15
IMPROVEMENT_TARGET = 2.0


def _f(x: float, fmt: str = ".3g") -> str:
    return "n/a" if x is None or (isinstance(x, float) and math.isnan(x)) else format(x, fmt)


def done_when(res: TeleopResults, model: str = "identified") -> list[tuple[str, bool | None, str]]:
    """The issue's "Done when" items this run measures: (item, met (None: not measured), the figures)."""
    out: list[tuple[str, bool | None, str]] = []
    free = res.case(model, "bilateral", "free")
    if free is not None:
        w = free.worst["tracking_rmse"]
        out.append((f"free motion: follower tracking RMSE <= {TRACKING_TARGET * 1e3:g} mrad (bilateral, worst seed)",
                    w <= TRACKING_TARGET, f"{w * 1e3:.2f} mrad (mean {free.mean['tracking_rmse'] * 1e3:.2f})"))
    for scen in ("push", "hold"):
        c, n = res.case(model, "bilateral", scen), res.case("nominal", "bilateral", scen)
        if c is None:
            continue
        e, m = c.worst["felt_error"], c.worst["felt_error_main"]
        out.append((f"{scen}: felt vs true contact torque <= {FELT_TARGET:.0%} RMS, all joints (worst seed)",
                    e <= FELT_TARGET, f"{e:.1%} (main joint alone {m:.1%})"))
        if n is not None and model != "nominal":
            ratio = n.mean["felt_error"] / c.mean["felt_error"]
            out.append((f"{scen}: >= {IMPROVEMENT_TARGET:g}x better than the nominal rigid body (mean over seeds)",
                        ratio >= IMPROVEMENT_TARGET, f"{ratio:.2f}x ({n.mean['felt_error']:.1%} -> "
                                                     f"{c.mean['felt_error']:.1%})"))
    hold = res.case(model, "bilateral", "hold")
    if hold is not None:
        r = hold.worst["oscillation_ratio"]
        out.append(("hold: oscillation against the box decays (contact-torque std, last / first window < 0.5)",
                    r < 0.5, f"ratio {r:.3f}, final std {hold.worst['oscillation_final']:.3g} N·m"))
    stuck = res.case(model, "bilateral", "stuck")
    if stuck is not None and not stuck.worst["push_peak"] > 0:
        out.append(("stuck joint, gentle push", None, "n/a: no joint of the follower has static friction, so "
                    "nothing sticks and the scenario pushes with 0 N"))
    elif stuck is not None:
        cov, ph = stuck.worst["coverage"], stuck.worst["phantom"]
        out.append(("stuck joint, gentle push: not lost (the interval holds the truth on every pushed tick) and no "
                    "phantom (reflected < 10% of the push)", cov >= 1.0 and ph < 0.1 * stuck.worst["push_peak"],
                    f"coverage {cov:.1%}, largest reflected {ph:.3g} N·m, push {stuck.worst['push_peak']:.3g} N·m"))
    return out


_HAND_AUTO = (f" (sized to the arm: at the reference's overshoot into the box the hand asks for "
              f"{HAND_LOAD_SHARE:.3g} of the moved joint's effort limit; --hand-stiffness sets it)")


def markdown(res: TeleopResults) -> str:
    """The report: settings, the Done-when check, one table row per (model, mode, scenario)."""
    lines = [f"# Teleoperation with force feedback: {res.robot}", "",
             f"Leader and follower: {res.robot}, in process at the simulator's rate; seeds {res.seeds}, "
             f"{res.duration:g} s per scenario. Operator: joint impedance {res.hand_stiffness:.3g} N·m/rad, "
             f"{res.hand_damping:.3g} N·m·s/rad{_HAND_AUTO if res.hand_auto else ''}. Bilateral law: force gain "
             f"{res.force_gain:g}, common-mode damping "
             f"{res.force_damping:g} 1/s, position scale {res.position_scale:g}, force scale {res.force_scale:g}. "
             f"Wall time {res.wall_s:.0f} s.", "", "## Done when (bilateral, the dead-zone-aware model)", ""]
    aware = [m for m in dict.fromkeys(c.model for c in res.cases) if m not in ("nominal", IDEAL)]
    for model in aware or ["identified"]:
        if len(aware) > 1:
            lines += ([""] if model != aware[0] else []) + [f"Model `{model}`:", ""]
        for item, met, fig in done_when(res, model):
            mark = "n/a" if met is None else ("met" if met else "NOT met")
            lines.append(f"- **{mark}**: {item}: {fig}")
    cols = ["tracking_rmse", "felt_error", "felt_error_main", "free_phantom", "oscillation_ratio", "phantom",
            "coverage"]
    lines += ["", "## Every case (mean over seeds; worst seed in brackets)", "",
              "| model | mode | scenario | " + " | ".join(f"{c} [{FIGURES[c][1]}]" for c in cols) + " | faults |",
              "|" + "---|" * (len(cols) + 4)]
    for c in res.cases:
        cells = [f"{_f(c.mean[k])} ({_f(c.worst[k])})" if not math.isnan(c.mean[k]) else "" for k in cols]
        lines.append(f"| {c.model} | {c.mode} | {c.scenario} | " + " | ".join(cells) + f" | {len(c.faults)} |")
    why = ["felt_error", "felt_error_settled", "felt_law", "felt_dead_zone", "felt_est_leader", "felt_est_follower",
           "stuck_share", "felt_beyond_band"]
    contact = [c for c in res.cases if c.mode == "bilateral" and c.scenario in ("push", "hold")]
    if contact:  # no section without a bilateral contact case (e.g. --scenarios free stuck)
        lines += ["", "## Why the felt force misses (bilateral, in contact; each part RMS / RMS contact torque)", "",
                  "| model | scenario | " + " | ".join(why) + " |", "|" + "---|" * (len(why) + 2)]
        lines += [f"| {c.model} | {c.scenario} | " + " | ".join(f"{_f(c.mean[k])} ({_f(c.worst[k])})" for k in why)
                  + " |" for c in contact]
        lines += ["", "The parts add up per tick (felt - target = law - dead zone - leader estimate - follower "
                  "estimate), not in RMS."]
    lines += ["", "Figures: " + "; ".join(f"`{k}`: {v[0]}" for k, v in FIGURES.items()) + ".", ""]
    return "\n".join(lines)


def plot_case(tr: TeleopTrace, path: Path, title: str) -> None:
    """Positions of both arms and the felt vs true contact torque (and the reflected estimate) on the joint with the
    largest contact torque (its first joint when nothing touches), over time (matplotlib, Agg)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    j = int(np.argmax(np.abs(tr.true_f).max(axis=0))) if np.abs(tr.true_f).max() > 0 else 0
    fig, (a0, a1) = plt.subplots(2, 1, figsize=(9, 6), sharex=True)
    a0.plot(tr.t, tr.q_ref[:, j], "k:", lw=1, label="operator reference")
    a0.plot(tr.t, tr.q_l[:, j], lw=1.5, label="leader")
    a0.plot(tr.t, tr.q_f[:, j], "--", lw=1.5, label="follower")
    a0.set_ylabel(f"joint {j + 1} [rad]")
    a0.legend(fontsize=7)
    a0.set_title(title, fontsize=9)
    a1.plot(tr.t, tr.true_l[:, j], lw=1.5, label="felt: hand torque on the leader")
    a1.plot(tr.t, -tr.true_f[:, j], "k", lw=1, label="true contact torque (follower on the world)")
    a1.plot(tr.t, -tr.reflected_f[:, j], lw=0.8, alpha=0.8, label="reflected estimate")
    a1.set_xlabel("simulated time [s]")
    a1.set_ylabel(f"torque, joint {j + 1} [N·m]")
    a1.legend(fontsize=7)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def plot_name(model: str, mode: str, scenario: str) -> str:
    """The file name of a case's plot: ``teleop_<model>_<mode>_<scenario>.png``, a learned model's path (which may
    hold "/" and other characters a file name should not) written with "_" for each run of them, so two artifacts
    of the same folder name in different places get different plots (two paths that differ only in those
    characters, ``a/b`` and ``a_b``, share one)."""
    slug = re.sub(r"[^A-Za-z0-9.-]+", "_", model).strip("_") or "model"
    return f"teleop_{slug}_{mode}_{scenario}.png"


def write_teleop(out: Path, res: TeleopResults, traces: dict[tuple[str, str, str], TeleopTrace]) -> str:
    """Write teleop.json, teleop.md and the plots (bilateral runs, and unilateral push) under ``out``; return the
    markdown. ``traces``: (model, mode, scenario) -> the first seed's trace (:func:`.run.run_teleop`)."""
    from ...training.evaluate import json_clean

    out.mkdir(parents=True, exist_ok=True)
    (out / "teleop.json").write_text(json.dumps(json_clean(res.to_dict()), indent=1))
    md = markdown(res)
    for (model, mode, scenario), tr in traces.items():
        if mode != "bilateral" and scenario != "push":
            continue
        name = plot_name(model, mode, scenario)
        plot_case(tr, out / "plots" / name, f"{model}, {mode}, {scenario} (seed {res.seeds[0]})")
        md += f"\n![{model} {mode} {scenario}](plots/{name})\n"
    (out / "teleop.md").write_text(md)
    return md
