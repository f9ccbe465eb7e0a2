"""One decoded JointState topic -> clean, uniformly resampled episodes (core, no ROS), one function per stage.

:func:`build_episodes` runs the stages in order; each stage is a pure function that returns what it decided plus
its warnings, so it can be tested alone:

0. :func:`~.defects.merge_split_publishers`: joints split across publishers are merged by name over time;
1. :func:`select_joints`: the joints to use (``DatasetConfig.joints``, or every joint with usable position and
   effort);
2. :func:`choose_velocity`: dq from the message when usable, else Savitzky–Golay differentiation of q;
3. :func:`choose_time`: header stamps, falling back to log (receive) time when stamps are zero;
4. :func:`~.defects.find_resets`: time that jumps back by more than ``max_gap_s`` is a reset: stages 4–6 run on
   each run between resets separately; :func:`sort_and_dedup`: sort by stamp, drop exact duplicates and
   same-stamp conflicts (keeping the first);
5. :func:`~.defects.check_velocity`: a message velocity that is not the derivative of q is replaced by the
   Savitzky–Golay derivative (``velocity="auto"``); :func:`drop_nan`: drop samples with NaN/inf or a missing value;
6. :func:`split_and_resample`: split where the stamp step exceeds ``max_gap_s`` (never interpolated), resample each
   segment to ``rate_hz`` by linear interpolation; ddq (and dq when differentiated) by zero-phase Savitzky–Golay
   differentiation (:func:`scipy.signal.savgol_filter`; never a raw finite difference of quantized encoder data).

Every problem is counted in the returned :class:`~deadzone_id_ros.data.cleaning_report.BagReport`; problems that
leave nothing usable raise :class:`~deadzone_id_ros.errors.DataError` naming the bag, topic, message index, field
and joint.
"""


from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import DataError
from ..stamps import ns_to_s
from .bag import JointStateSeries, why_unusable
from .cleaning_report import BagReport
from .defects import check_velocity, find_resets, merge_split_publishers, subset_series
from .stages import (
    Resampled,
    Samples,
    choose_time,
    choose_velocity,
    drop_nan,
    edge_reach,
    select_joints,
    sort_and_dedup,
    split_and_resample,
)
from .types import Episode

if TYPE_CHECKING:
    from .dataset import DatasetConfig

__all__ = [
    "Samples",
    "build_episodes",
    "choose_time",
    "choose_velocity",
    "drop_nan",
    "edge_reach",
    "select_joints",
    "sort_and_dedup",
    "split_and_resample",
]


def _never_moving(episodes: list[Episode], joints: tuple[str, ...], s: Samples, where: str) -> list[str]:
    """Joints whose position is constant or whose dq is zero throughout; raises DataError if that is every joint."""
    dq_all = np.concatenate([e.dq for e in episodes])
    q_all = np.concatenate([e.q for e in episodes])
    still = [j for k, j in enumerate(joints) if np.ptp(q_all[:, k]) == 0.0 or np.all(dq_all[:, k] == 0.0)]
    if len(still) == len(joints):
        raise DataError(f"{where}: nothing moves: field position is constant for every joint {list(joints)} over "
                        f"messages {int(s.msg_index.min())}..{int(s.msg_index.max())}; no inverse-dynamics data")
    return still


@dataclass
class _Runs:
    """The runs between resets, sorted and deduplicated: samples, rows to keep, summed counts, warnings."""

    samples: list[Samples]
    keep: list[np.ndarray]
    counts: dict[str, Any]
    warnings: list[str]

    def finite(self) -> Samples:
        """Every kept row with finite q, tau and velocity, runs one after the other."""
        parts = []
        for s, k in zip(self.samples, self.keep, strict=True):
            ok = k & np.isfinite(s.q).all(axis=1) & np.isfinite(s.tau).all(axis=1) & np.isfinite(s.vel).all(axis=1)
            parts.append(s.take(ok))
        return Samples(*(np.concatenate([getattr(p, f) for p in parts]) for f in ("t_ns", "q", "tau", "vel",
                                                                                   "msg_index")))


def _sorted_runs(raw: Samples, where: str, config: DatasetConfig) -> _Runs:
    """Split ``raw`` (bag order) at resets, then sort and deduplicate each run."""
    slices, warnings = find_resets(raw.t_ns, raw.msg_index, config.max_gap_s, where)
    runs = _Runs([], [], {"out_of_order_sorted": 0, "duplicates_dropped": 0, "same_stamp_conflicts_dropped": 0},
                 warnings)
    for sl in slices:
        s, keep, counts, w = sort_and_dedup(raw.take(np.arange(sl.start, sl.stop)), where)
        runs.samples.append(s)
        runs.keep.append(keep)
        runs.warnings += w
        for key, v in counts.items():
            runs.counts[key] += v
    return runs


def _resample_runs(runs: _Runs, series: JointStateSeries, joints: tuple[str, ...], use_msg_vel: bool,
                   config: DatasetConfig) -> tuple[Resampled, Samples, int, list[str]]:
    """Stages 5–6 on every run; a run too short to give an episode is dropped (counted) when others remain.

    Returns (the runs' episodes and numbers combined, the clean samples, NaN rows dropped, warnings).
    """
    where = series.where
    cleaned = [drop_nan(s, k, use_msg_vel, where) for s, k in zip(runs.samples, runs.keep, strict=True)]
    warnings = [w for c in cleaned for w in c[2]]
    nan_dropped = sum(c[1] for c in cleaned)
    usable = [c[0] for c in cleaned if len(c[0].t_ns) >= 2]
    if not usable:
        raise DataError(f"{where}: fewer than 2 usable samples after cleaning (see report warnings: "
                        f"{runs.warnings + warnings})")
    if config.rate_hz is None:
        steps = np.concatenate([np.diff(s.t_ns) for s in usable])
        config = replace(config, rate_hz=1.0 / ns_to_s(float(np.median(steps))))
    results: list[Resampled] = []
    errors: list[DataError] = []
    short_runs = 0
    for s in usable:
        try:
            results.append(split_and_resample(s, series, joints, use_msg_vel, config,
                                              first_episode=sum(len(r.episodes) for r in results)))
        except DataError as err:
            errors.append(err)
            short_runs += 1
    if not results:
        raise errors[0]
    episodes = [e for r in results for e in r.episodes]
    steps = np.concatenate([np.diff(s.t_ns) for s in usable])
    res = Resampled(episodes, results[0].rate_hz, ns_to_s(float(np.median(steps))),
                    sum(r.gaps_split for r in results), results[0].window,
                    sum(r.short_segments_dropped for r in results) + short_runs,
                    [w for r in results for w in r.warnings] + [str(e) for e in errors])
    clean = Samples(*(np.concatenate([getattr(s, f) for s in usable]) for f in ("t_ns", "q", "tau", "vel",
                                                                                 "msg_index")))
    return res, clean, nan_dropped, warnings


def _merge_per_run(series: JointStateSeries, t_ns: np.ndarray, config: DatasetConfig,
                   ) -> tuple[JointStateSeries, np.ndarray, dict[str, int], list[str]]:
    """:func:`merge_split_publishers` on each run between resets (never interpolating across a reset)."""
    slices, _ = find_resets(t_ns, series.index, config.max_gap_s, series.where)
    if len(slices) == 1:
        return merge_split_publishers(series, t_ns, config)
    parts, errors = [], []
    for sl in slices:
        rows = np.arange(sl.start, sl.stop)
        try:
            parts.append(merge_split_publishers(subset_series(series, rows), t_ns[rows], config))
        except DataError as err:
            errors.append(err)
    if not parts:
        raise errors[0]
    fields: dict[str, Any] = {f: np.concatenate([getattr(p[0], f) for p in parts]) for f in (
        "stamp_ns", "log_ns", "position", "velocity", "effort", "index")}
    merged = replace(series, **fields)
    counts = {k: sum(p[2][k] for p in parts) for k in parts[0][2]}
    warnings = list(dict.fromkeys([w for p in parts for w in p[3]] + [str(e) for e in errors]))
    return merged, np.concatenate([p[1] for p in parts]), counts, warnings


def build_episodes(series: JointStateSeries, config: DatasetConfig) -> tuple[list[Episode], tuple[str, ...], BagReport]:
    """Clean, split and resample one decoded JointState topic into episodes (stages 0–6 of the module docstring).

    Returns:
        (episodes, joint_names (J,), this bag's :class:`BagReport`).

    Raises:
        DataError: nothing usable (names bag, topic, message index, field and joint), or joints split across
            publishers that cannot be merged within the tolerance.
    """
    where = series.where
    dropped = series.report.get("dropped", {})
    order_changes = series.report.get("joint_order_changes", 0)
    if len(series) == 0:
        raise DataError(f"{where}: {why_unusable(series)}")
    warnings = [f"{where}: dropped {d['count']} message(s): {reason} (first: message {d['first_message']})"
                for reason, d in dropped.items()]
    if order_changes:
        warnings.append(f"{where}: joint order changed {order_changes} time(s); mapped by name")
    t_ns, time_source, log_fallback, w = choose_time(series, config)
    warnings += w
    stamped = t_ns >= 0  # -1: a header stamp left unset
    if not stamped.all():
        series, t_ns = subset_series(series, stamped), t_ns[stamped]
    series, t_ns, counts, w = _merge_per_run(series, t_ns, config)
    merge_counts: dict[str, Any] = dict(counts)
    warnings += w
    joints, w = select_joints(series, config)
    warnings += w
    use_msg_vel, w = choose_velocity(series, joints, config)
    warnings += w
    cols = [series.joint_names.index(j) for j in joints]
    effort = series.effort[:, cols] * np.asarray([(config.torque_constants or {}).get(j, 1.0) for j in joints])
    raw = Samples(t_ns, series.position[:, cols], effort, series.velocity[:, cols], series.index)
    runs = _sorted_runs(raw, where, config)
    warnings += runs.warnings
    bad_velocity: dict[str, dict[str, float]] = {}
    if use_msg_vel:
        bad_velocity, w = check_velocity(runs.finite(), joints, config, where)
        if bad_velocity and config.velocity == "auto":
            use_msg_vel = False
            w = [x + "; dq from zero-phase Savitzky–Golay differentiation of position instead" for x in w]
        warnings += w
    res, s, nan_dropped, w = _resample_runs(runs, series, joints, use_msg_vel, config)
    warnings += w + res.warnings
    still = _never_moving(res.episodes, joints, s, where)
    if still:
        warnings.append(f"{where}: joint(s) {still} never move (every sample is in the dead zone)")
    report = BagReport(
        bag=str(series.bag), topic=series.topic, messages=series.report.get("messages", len(series)),
        messages_dropped=sum(d["count"] for d in dropped.values()), dropped=dropped,
        joint_order_changes=order_changes, joints_skipped=tuple(n for n in series.joint_names if n not in joints),
        velocity_source="message" if use_msg_vel else "savgol derivative of position", time_source=time_source,
        log_time_fallback=log_fallback, nan_samples_dropped=nan_dropped, rate_hz=res.rate_hz,
        median_step_s=res.median_step_s, gaps_split=res.gaps_split, savgol_window_samples=res.window,
        short_segments_dropped=res.short_segments_dropped, samples=sum(len(e) for e in res.episodes),
        episodes=len(res.episodes), joints_never_moving=tuple(still), warnings=tuple(warnings),
        resets_split=len(runs.samples) - 1, zero_stamps_dropped=int((~stamped).sum()),
        velocity_mismatch=bad_velocity, **runs.counts, **merge_counts,
    )
    return res.episodes, joints, report
