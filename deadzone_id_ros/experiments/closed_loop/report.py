"""Markdown of the closed-loop comparison (``deadzone-id closed-loop`` and the demo): the in-process tables over
held-out seeds (default and weak DOB), the live-vs-in-process check and the verdict on issue 15's targets."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from ...control.config import ControlMode
from ..compare.formatting import mean_std
from .results import ClosedLoopResult, ClosedLoopSettings

if TYPE_CHECKING:
    from .results import ClosedLoopSummary

__all__ = ["closed_loop_markdown", "closed_loop_targets", "flagged_lines", "in_process_table", "live_table", "run_flag",
           "worse_than_no_model"]


def _joints(v: list[float], digits: int = 2) -> str:
    return " / ".join("n/a" if x is None or x != x else f"{x:.{digits}f}" for x in v)


def _mrad(values: list[float]) -> list[float]:
    return [x * 1e3 for x in values]


def run_flag(faults: list[str], max_abs_error: list[float], rmse: list[float], limit: float | None) -> str:
    """Why a closed-loop run cannot be read as tracking, or "" when it can.

    Args:
        faults: the controller's latched faults (:attr:`ClosedLoopSummary.faults`).  max_abs_error: (J,) largest
        |q_d - q| [rad].  rmse: (J,) tracking RMSE [rad].  limit: the controllers' tracking-error limit [rad], or
        None when not known.

    Returns:
        "FAULT (...)" naming the controller's reason(s); else "RAN AWAY (...)" when the largest error is above
        ``limit``; else "DIVERGED (...)" when an error is not finite; else "".
    """
    if faults:
        return f"FAULT ({'; '.join(faults)})"
    worst = max(range(len(max_abs_error)), key=lambda k: max_abs_error[k], default=None)
    if limit is not None and worst is not None and max_abs_error[worst] > limit:
        return (f"RAN AWAY (joint {worst + 1}: max |error| {max_abs_error[worst] * 1e3:.0f} mrad above the "
                f"tracking-error limit {limit * 1e3:.4g} mrad)")
    if not all(math.isfinite(x) for x in [*max_abs_error, *rmse]):
        return "DIVERGED (a non-finite tracking error)"
    return ""


def _flag(e: ClosedLoopSummary, limit: float | None) -> str:
    return run_flag(e.faults, e.max_abs_error_per_joint, e.tracking_rmse_per_joint, limit)


def in_process_table(entries: dict[str, ClosedLoopSummary], limit: float | None = None) -> list[str]:
    """Rows per controller: tracking RMSE per joint (mean over seeds), mean ± std, max error, at reversals [mrad],
    and the run's status ("ok", or :func:`run_flag`'s reason; ``limit``: the tracking-error limit [rad])."""
    if not entries:
        return ["(no in-process run)"]
    lines = ["| controller | tracking RMSE per joint [mrad] | mean over joints, ± std over seeds [mrad] | "
             "max error per joint [mrad] | at reversals [mrad] | rate-limited ticks (max joint) | run |",
             "|---|---|---|---|---|---|---|"]
    for e in entries.values():
        flag = _flag(e, limit)
        lines.append(f"| {e.label} | {_joints(_mrad(e.tracking_rmse_per_joint), 3)} | "
                     f"{mean_std(e.tracking_rmse_mean * 1e3, e.tracking_rmse_std * 1e3, len(e.seeds), '.3f')} | "
                     f"{_joints(_mrad(e.max_abs_error_per_joint), 1)} | "
                     f"{_reversal_cell(e)} | {max(e.rate_limit_fraction):.2%} | "
                     f"{'**' + flag.split(' (')[0] + '**' if flag else 'ok'} |")
    return lines


def _no_reversal_note(entries: dict[str, ClosedLoopSummary]) -> list[str]:
    """One line naming the joints whose reference never reverses (their reversal panels are empty), or none."""
    first = next(iter(entries.values()), None)
    if first is None:
        return []
    none = [j for j, v in zip(first.joint_names, first.reversal_rmse_per_joint, strict=False)
            if v is None or not math.isfinite(v)]
    if not none:
        return []
    which = "that joint" if len(none) == 1 else "those joints"
    return [f"No velocity reversal on {', '.join(none)}: the reference of {which} never changes direction (a "
            "continuous joint turning one way), so there is no error at reversals to measure and its panels below "
            "are empty.", ""]


def _reversal_cell(e: ClosedLoopSummary) -> str:
    """The at-reversals cell [mrad]: mean (± std over seeds), or why there is none (a reference that never reverses,
    e.g. a continuous joint turning one way, has no reversal to measure: its plot stays empty)."""
    if not math.isfinite(e.reversal_rmse_mean):
        return "none (the reference never reverses)"
    return mean_std(e.reversal_rmse_mean * 1e3, e.reversal_rmse_std * 1e3, len(e.seeds), ".3f")


def flagged_lines(entries: dict[str, ClosedLoopSummary], limit: float | None) -> list[str]:
    """One sentence per controller whose run faulted, ran away or diverged, with the reason; empty when none."""
    out = []
    for e in entries.values():
        flag = _flag(e, limit)
        if flag.startswith("FAULT"):
            out.append(f"- **{e.label}: {flag}.** From the fault on, the controller held the static torque, then "
                       "zero torque (its safe state): the figures measure that, not the tracking of its control law.")
        elif flag:
            out.append(f"- **{e.label}: {flag}.** The figures measure an arm that left the reference, not tracking.")
    return out


def live_table(live: dict[str, ClosedLoopResult], limit: float | None = None) -> list[str]:
    """Rows per controller: live tracking RMSE (mean over joints) beside the in-process run of the same seed, and
    the run's status (:func:`run_flag` against ``limit`` [rad])."""
    if not live:
        return []
    lines = ["| controller | live over DDS: tracking RMSE per joint [mrad] | live mean [mrad] | in-process mean, same "
             "seed and duration [mrad] | live / in-process | time base | run |",
             "|---|---|---|---|---|---|---|"]
    for name, live_run in live.items():
        r = live_run.metrics
        inproc = live_run.inprocess_tracking_rmse_mean
        ratio = f"{r.tracking_rmse_mean / inproc:.2f}" if inproc else "n/a"
        inproc_txt = f"{inproc * 1e3:.3f}" if inproc is not None else "n/a"
        lines.append(f"| {name} | {_joints([x * 1e3 for x in r.tracking_rmse_per_joint], 3)} | "
                     f"{r.tracking_rmse_mean * 1e3:.3f} | {inproc_txt} | {ratio} | {r.time_base} | "
                     f"{run_flag([], r.max_abs_error_per_joint, r.tracking_rmse_per_joint, limit) or 'ok'} |")
    return lines


def closed_loop_targets(entries: dict[str, ClosedLoopSummary], limit: float | None = None) -> list[str]:
    """Issue 15's two targets, measured: pick <= 0.5x pd_dob, and masked below conventional, with the spread.

    With one seed there is no spread: the verdict then says it rests on the means alone. A controller whose run
    faulted or ran away (:func:`run_flag` against ``limit`` [rad]) is named beside the verdict."""
    out = []
    pd, pick = entries.get("pd_dob"), entries.get("ctc_dob_pick")
    if pd and pick:
        m_pd, s_pd = pd.tracking_rmse_mean * 1e3, pd.tracking_rmse_std * 1e3
        m_p, s_p = pick.tracking_rmse_mean * 1e3, pick.tracking_rmse_std * 1e3
        ratio = m_p / m_pd
        if _one_seed(pd, pick):
            verdict = ("met on the means of one seed (no spread to judge by)" if ratio <= 0.5 else "missed")
            spread = "one seed: no spread"
        else:
            worst = (m_p + s_p) / max(m_pd - s_pd, 1e-12)
            verdict = ("met" if worst <= 0.5 else
                       "met on the means, not beyond the spread" if ratio <= 0.5 else "missed")
            spread = f"with one std against it {worst:.2f}"
        out.append(f"- ctc_dob + pick ({pick.label}) vs pd_dob: {mean_std(m_p, s_p, len(pick.seeds), '.3f')} vs "
                   f"{mean_std(m_pd, s_pd, len(pd.seeds), '.3f')} mrad, ratio {ratio:.2f} (target <= 0.5; "
                   f"{spread}): **{verdict}**{_flag_note(limit, pd, pick)}.")
    mk, cv = entries.get("ctc_dob_masked"), entries.get("ctc_dob_conventional")
    if mk and cv:
        m_m, s_m = mk.tracking_rmse_mean * 1e3, mk.tracking_rmse_std * 1e3
        m_c, s_c = cv.tracking_rmse_mean * 1e3, cv.tracking_rmse_std * 1e3
        if m_m >= m_c:
            verdict = "missed"
        elif _one_seed(mk, cv):
            verdict = "met on the means of one seed (no spread to judge by)"
        elif m_m + s_m < m_c - s_c:
            verdict = "met: below by more than the spread"
        else:
            verdict = "met on the means only: the spreads overlap"
        out.append(f"- ctc_dob + masked vs ctc_dob + conventional: {mean_std(m_m, s_m, len(mk.seeds), '.3f')} vs "
                   f"{mean_std(m_c, s_c, len(cv.seeds), '.3f')} mrad: **{verdict}**{_flag_note(limit, mk, cv)}.")
    return out


def worse_than_no_model(entries: dict[str, ClosedLoopSummary], limit: float | None = None) -> list[str]:
    """One plain sentence per controller with a model (the computed-torque modes) that tracks worse than pd_dob,
    the same loop without a model; empty when none does or pd_dob did not run.

    Compared on the mean tracking RMSE over joints and seeds; a run that faulted, ran away or diverged
    (:func:`run_flag` against ``limit`` [rad]) is compared all the same and says so.
    """
    pd = entries.get("pd_dob")
    if pd is None or not math.isfinite(pd.tracking_rmse_mean) or pd.tracking_rmse_mean <= 0:
        return []
    out = []
    for e in entries.values():
        if (e is pd or ControlMode.parse(e.mode).feedforward != "model"
                or not e.tracking_rmse_mean > pd.tracking_rmse_mean):
            continue
        advice = ("the nominal model is the URDF's rigid body plus the robot profile's armature and friction: "
                  "check the URDF's inertias and the profile's actuator figures" if e.model == "rbd" else
                  "check that the model was trained on this robot and on motions like these")
        note = f" (and the run did not track: {_flag(e, limit).split(' (')[0]})" if _flag(e, limit) else ""
        out.append(f"- **{e.label} tracks worse than pd_dob, which uses no model: {e.tracking_rmse_mean * 1e3:.3f} "
                   f"vs {pd.tracking_rmse_mean * 1e3:.3f} mrad ({e.tracking_rmse_mean / pd.tracking_rmse_mean:.2f} "
                   f"times the error).** Its torque model makes tracking worse here{note}; {advice}.")
    return out


def _one_seed(*entries: ClosedLoopSummary) -> bool:
    return any(len(e.seeds) < 2 for e in entries)


def _flag_note(limit: float | None, *entries: ClosedLoopSummary) -> str:
    bad = [e.label for e in entries if _flag(e, limit)]
    return f" (but {' and '.join(bad)} did not track: see the run column)" if bad else ""


def _ranking(entries: dict[str, ClosedLoopSummary], limit: float | None = None) -> str:
    ranked = sorted(entries.values(), key=lambda e: e.tracking_rmse_mean)
    return " < ".join(f"{e.label} ({e.tracking_rmse_mean * 1e3:.3f}"
                      f"{', ' + _flag(e, limit).split(' (')[0] if _flag(e, limit) else ''})" for e in ranked)


def _flagged(entries: dict[str, ClosedLoopSummary], limit: float | None) -> list[str]:
    lines = flagged_lines(entries, limit)
    if not lines:
        return []
    limit_txt = f" (tracking-error limit {limit * 1e3:.4g} mrad)" if limit is not None else ""
    return [f"Runs that did not track{limit_txt}:", "", *lines, ""]


def _velocity(source: str) -> str:
    """How the ctc_dob models saw the velocity (``ClosedLoopSettings.feedforward_velocity``), for the report."""
    if source == "desired":
        return "evaluated at the reference's velocity (feedforward_velocity: desired)"
    return "evaluated at the measured velocity" + (" (feedforward_velocity: measured)" if source else "")


def closed_loop_markdown(closed: dict[str, ClosedLoopSummary], weak: dict[str, ClosedLoopSummary],
                         live: dict[str, ClosedLoopResult], settings: ClosedLoopSettings, plot: str,
                         tracking: str | None = None) -> list[str]:
    """The closed-loop section: settings, both in-process tables with each run's status, targets, rankings, the
    reversal plot ``plot``, the tracking plot ``tracking`` (linked when given and a default-DOB summary carries a
    trace, :func:`~deadzone_id_ros.experiments.compare.plots.tracking_plot`) and the live check."""
    arm, gains = ((f"robot profile `{settings.robot}`", "of that profile") if settings.robot
                  else ("the bundled arm (config/sim_arm.yaml, the live sim_arm's physics)",
                        "of config/feedforward_controller.yaml"))
    lines = [f"Held-out excitation seeds {settings.seeds} (in no training data), {settings.duration_s:g} s each, "
             f"{arm}, simulator physics `{settings.sim_profile}`, run in-process: the nodes' FeedforwardController "
             f"and SimArm code without DDS. Every controller shares the PD gains, DOB and limits {gains}; ctc_dob "
             f"adds the model's torque as feedforward, {_velocity(settings.feedforward_velocity)}. Errors are "
             "reference minus measured position; \"mean\" is the mean over joints of the per-joint RMSE, then "
             "mean ± std over seeds. At reversals: within 50 ms of a sign change of the reference velocity (where the "
             "dead zone acts).",
             "",
             f"Pick: `{settings.pick}` ({settings.pick_source}).",
             ""]
    if settings.missing:
        lines += [f"Not trained, so left out: {settings.missing}.", ""]
    lim = settings.tracking_error_limit
    lines += ["### Default DOB", "", *in_process_table(closed, lim), "", *_flagged(closed, lim),
              *closed_loop_targets(closed, lim), *worse_than_no_model(closed, lim), "",
              f"Ranking (mean tracking RMSE, mrad): {_ranking(closed, lim)}." if closed else "", "",
              f"### Weak DOB (cutoff x{settings.weak_dob_fraction:g} of the default)", "",
              "A lower DOB cutoff, as a user with a noisy velocity sensor would set it: the feedforward has to carry "
              "more of the load.", "", *in_process_table(weak, lim), "", *_flagged(weak, lim),
              *worse_than_no_model(weak, lim), *([""] if worse_than_no_model(weak, lim) else []),
              f"Ranking (mean tracking RMSE, mrad): {_ranking(weak, lim)}." if weak else "", "",
              *_no_reversal_note(closed), f"![tracking error around velocity reversals]({plot})", ""]
    if tracking and any(e.trace for e in closed.values()):
        lines += [f"Tracking on seed {settings.seeds[0] if settings.seeds else '?'} with the default DOB (q and "
                  f"q_d over time per joint, and the error): [{tracking}]({tracking})", "",
                  f"![tracking: q and q_d over time]({tracking})", ""]
    if live:
        lines += [f"### Live over DDS (one run each, seed {settings.live_seed}, "
                  f"{settings.live_duration_s:g} s, lockstep)", "",
                  "sim_arm, excitation, feedforward_controller and recorder as separate processes in simulated time "
                  "(the simulator waits for each command). The metric uses the states' header stamps; states "
                  "stamped zero (lockstep's state before the first command) are not recorded and are counted. The "
                  "live run starts from the arm held on its brakes and its reference starts after a start delay, so "
                  "it is not sample-for-sample the in-process run; a ratio near 1 says the nodes behave like the "
                  "in-process loop.", "", *live_table(live, lim), ""]
    for name, why in settings.live_failures.items():
        lines += [f"Live run of {name} failed (twice): {why}", ""]
    return lines
