"""Markdown of the closed-loop comparison (``deadzone-id closed-loop`` and the demo): the in-process tables over
held-out seeds (default and weak DOB), the live-vs-in-process check and the verdict on issue 15's targets."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .closed_loop_results import ClosedLoopResult, ClosedLoopSettings

if TYPE_CHECKING:
    from .closed_loop_results import ClosedLoopSummary

__all__ = ["closed_loop_markdown", "closed_loop_targets", "in_process_table", "live_table"]


def _joints(v: list[float], digits: int = 2) -> str:
    return " / ".join("n/a" if x is None or x != x else f"{x:.{digits}f}" for x in v)


def _mrad(values: list[float]) -> list[float]:
    return [x * 1e3 for x in values]


def in_process_table(entries: dict[str, ClosedLoopSummary]) -> list[str]:
    """Rows per controller: tracking RMSE per joint (mean over seeds), mean ± std, max error, at reversals [mrad]."""
    if not entries:
        return ["(no in-process run)"]
    lines = ["| controller | tracking RMSE per joint [mrad] | mean over joints, ± std over seeds [mrad] | "
             "max error per joint [mrad] | at reversals [mrad] | rate-limited ticks (max joint) |",
             "|---|---|---|---|---|---|"]
    for e in entries.values():
        lines.append(f"| {e.label} | {_joints(_mrad(e.tracking_rmse_per_joint), 3)} | "
                     f"{e.tracking_rmse_mean * 1e3:.3f} ± {e.tracking_rmse_std * 1e3:.3f} | "
                     f"{_joints(_mrad(e.max_abs_error_per_joint), 1)} | {e.reversal_rmse_mean * 1e3:.3f} ± "
                     f"{e.reversal_rmse_std * 1e3:.3f} | {max(e.rate_limit_fraction):.2%} |")
    return lines


def live_table(live: dict[str, ClosedLoopResult]) -> list[str]:
    """Rows per controller: live tracking RMSE (mean over joints) beside the in-process run of the same seed."""
    if not live:
        return []
    lines = ["| controller | live over DDS: tracking RMSE per joint [mrad] | live mean [mrad] | in-process mean, same "
             "seed and duration [mrad] | live / in-process | time base | zero-stamp states: not recorded / in bag |",
             "|---|---|---|---|---|---|---|"]
    for name, live_run in live.items():
        r = live_run.metrics
        inproc = live_run.inprocess_tracking_rmse_mean
        ratio = f"{r.tracking_rmse_mean / inproc:.2f}" if inproc else "n/a"
        inproc_txt = f"{inproc * 1e3:.3f}" if inproc is not None else "n/a"
        lines.append(f"| {name} | {_joints([x * 1e3 for x in r.tracking_rmse_per_joint], 3)} | "
                     f"{r.tracking_rmse_mean * 1e3:.3f} | {inproc_txt} | {ratio} | {r.time_base} | "
                     f"{r.zero_stamp_states_dropped} / {r.zero_stamp_states} |")
    return lines


def closed_loop_targets(entries: dict[str, ClosedLoopSummary]) -> list[str]:
    """Issue 15's two targets, measured: pick <= 0.5x pd_dob, and masked below conventional, with the spread."""
    out = []
    pd, pick = entries.get("pd_dob"), entries.get("ctc_dob_pick")
    if pd and pick:
        m_pd, s_pd = pd.tracking_rmse_mean * 1e3, pd.tracking_rmse_std * 1e3
        m_p, s_p = pick.tracking_rmse_mean * 1e3, pick.tracking_rmse_std * 1e3
        ratio = m_p / m_pd
        worst = (m_p + s_p) / max(m_pd - s_pd, 1e-12)
        verdict = "met" if worst <= 0.5 else ("met on the means, not beyond the spread" if ratio <= 0.5 else "missed")
        out.append(f"- ctc_dob + pick ({pick.label}) vs pd_dob: {m_p:.3f} ± {s_p:.3f} vs {m_pd:.3f} ± {s_pd:.3f} "
                   f"mrad, ratio {ratio:.2f} (target <= 0.5; with one std against it {worst:.2f}): **{verdict}**.")
    mk, cv = entries.get("ctc_dob_masked"), entries.get("ctc_dob_conventional")
    if mk and cv:
        m_m, s_m = mk.tracking_rmse_mean * 1e3, mk.tracking_rmse_std * 1e3
        m_c, s_c = cv.tracking_rmse_mean * 1e3, cv.tracking_rmse_std * 1e3
        if m_m + s_m < m_c - s_c:
            verdict = "met: below by more than the spread"
        elif m_m < m_c:
            verdict = "met on the means only: the spreads overlap"
        else:
            verdict = "missed"
        out.append(f"- ctc_dob + masked vs ctc_dob + conventional: {m_m:.3f} ± {s_m:.3f} vs {m_c:.3f} ± {s_c:.3f} "
                   f"mrad: **{verdict}**.")
    return out


def _ranking(entries: dict[str, ClosedLoopSummary]) -> str:
    ranked = sorted(entries.values(), key=lambda e: e.tracking_rmse_mean)
    return " < ".join(f"{e.label} ({e.tracking_rmse_mean * 1e3:.3f})" for e in ranked)


def closed_loop_markdown(closed: dict[str, ClosedLoopSummary], weak: dict[str, ClosedLoopSummary],
                         live: dict[str, ClosedLoopResult], settings: ClosedLoopSettings, plot: str) -> list[str]:
    """The closed-loop section: settings, both in-process tables, targets, rankings, the live check, the plot."""
    lines = [f"Held-out excitation seeds {settings.seeds} (in no training data), {settings.duration_s:g} s each, "
             f"simulator profile `{settings.sim_profile}` (config/sim_arm.yaml, the live sim_arm's "
             "physics), run in-process: the nodes' FeedforwardController and SimArm code without DDS. Every "
             "controller shares the PD gains, DOB and limits of config/feedforward_controller.yaml; ctc_dob adds the "
             "model's torque as feedforward. Errors are reference minus measured position; \"mean\" is the mean "
             "over joints of the per-joint RMSE, then mean ± std over seeds. At reversals: within 50 ms of a sign "
             "change of the reference velocity (where the dead zone acts).",
             "",
             f"Pick: `{settings.pick}` ({settings.pick_source}).",
             ""]
    if settings.missing:
        lines += [f"Not trained, so left out: {settings.missing}.", ""]
    lines += ["### Default DOB", "", *in_process_table(closed), "", *closed_loop_targets(closed), "",
              f"Ranking (mean tracking RMSE, mrad): {_ranking(closed)}." if closed else "", "",
              f"### Weak DOB (cutoff x{settings.weak_dob_fraction:g} of the default)", "",
              "A lower DOB cutoff, as a user with a noisy velocity sensor would set it: the feedforward has to carry "
              "more of the load.", "", *in_process_table(weak), "",
              f"Ranking (mean tracking RMSE, mrad): {_ranking(weak)}." if weak else "", "",
              f"![tracking error around velocity reversals]({plot})", ""]
    if live:
        lines += [f"### Live over DDS (one run each, seed {settings.live_seed}, "
                  f"{settings.live_duration_s:g} s, lockstep)", "",
                  "sim_arm, excitation, feedforward_controller and recorder as separate processes in simulated time "
                  "(the simulator waits for each command). The metric uses the states' header stamps; states "
                  "stamped zero (lockstep's state before the first command) are not recorded and are counted. The "
                  "live run starts from the arm held on its brakes and its reference starts after a start delay, so "
                  "it is not sample-for-sample the in-process run; a ratio near 1 says the nodes behave like the "
                  "in-process loop.", "", *live_table(live), ""]
    for name, why in settings.live_failures.items():
        lines += [f"Live run of {name} failed (twice): {why}", ""]
    return lines
