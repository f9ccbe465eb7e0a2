"""Recording defects that the cleaning stages (:data:`~deadzone_id_ros.data.stages.STAGES`) handle (core, no ROS),
one pure function per kind, each returning what it found plus its warnings so that it can be tested alone:

- :func:`merge_split_publishers`: joints split across publishers (one driver per joint group, each message carrying
  a subset of the joints) are merged by name over time; the stated tolerance is ``DatasetConfig.merge_tolerance_s``;
- :func:`find_resets`: time that jumps backwards by more than ``max_gap_s`` is a reset (simulation reset, clock
  reset, two runs appended); the data are split there, only smaller disorder is sorted;
- :func:`sort_and_dedup`: messages out of stamp order are sorted, exact duplicates and same-stamp conflicts dropped;
- :func:`drop_nan`: samples with NaN/inf or a missing value are dropped;
- :func:`check_velocity`: a velocity field that is not the derivative of position (a constant, a configured
  maximum, wrong units, wrong sign) is found by comparing its integral with the change of q over short windows;
- :func:`effort_problems`: effort beyond what the robot's effort limits allow is marked unusable (the numerically
  garbage case, magnitudes at the denormal level, is in :func:`~deadzone_id_ros.data.bag.field_usability`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import numpy as np

from ..errors import DataError
from ..stamps import NS_PER_S, ns_to_s
from .bag import JointStateSeries
from .samples import Samples, subset_series

if TYPE_CHECKING:
    from .dataset_config import DatasetConfig

__all__ = [
    "EFFORT_LIMIT_FACTOR",
    "RESET_STEPS",
    "VELOCITY_CORRELATION_MIN",
    "VELOCITY_GAIN_RANGE",
    "check_velocity",
    "drop_nan",
    "effort_problems",
    "find_resets",
    "merge_split_publishers",
    "sort_and_dedup",
    "subset_series",
]

VELOCITY_GAIN_RANGE = (0.7, 1.4)
"""Accepted least-squares gain of the integrated message velocity against the change of q (1 when consistent)."""
VELOCITY_CORRELATION_MIN = 0.8
"""Least accepted correlation between the integrated message velocity and the change of q."""
RESET_STEPS = 5
"""A backward jump of more than this many median steps is a reset, not messages received out of order."""
EFFORT_LIMIT_FACTOR = 3.0
"""Effort beyond this multiple of a joint's effort limit is physically implausible (another unit, or garbage)."""


def _named(series: JointStateSeries, cols: list[int]) -> np.ndarray:
    """(M, K) True where a message names joint ``cols[k]`` (carries a value in any field)."""
    missing = np.isnan(series.position[:, cols]) & np.isnan(series.velocity[:, cols]) & np.isnan(series.effort[:, cols])
    return ~missing


def merge_split_publishers(series: JointStateSeries, t_ns: np.ndarray, config: DatasetConfig,
                           ) -> tuple[JointStateSeries, np.ndarray, dict[str, int], list[str]]:
    """Merge JointState messages that each carry a subset of the joints (one publisher per joint group) by name.

    When no message names every joint considered (``config.joints`` or all), the messages of the largest group
    (same set of named joints; on a tie the one naming more joints, then the first) are the time base. For every
    other joint, its value at a base stamp is interpolated
    linearly between that joint's own messages just before and just after (or at) the stamp, provided both lie
    within ``config.merge_tolerance_s`` of it; otherwise the value stays missing and the sample is dropped later
    (counted here as ``merge_unmatched``). Messages that name none of the considered joints are dropped and counted.

    Args:
        series: the decoded topic.  t_ns: (M,) the time of each message [ns] (from :func:`choose_time`).

    Returns:
        (series of the kept messages, their times (M',) [ns], counts ``messages_merged``, ``merge_unmatched``,
        ``messages_without_joints``, warnings).

    Raises:
        DataError: joints are split across publishers and no base message has every other joint within the
            tolerance (names the topic and the groups, and suggests ``--joints``).
    """
    counts = {"messages_merged": 0, "merge_unmatched": 0, "messages_without_joints": 0}
    names = list(config.joints) if config.joints is not None else list(series.joint_names)
    cols = [series.joint_names.index(n) for n in names if n in series.joint_names]
    if len(series) == 0 or not cols:
        return series, t_ns, counts, []
    where = f"{series.bag}: topic {series.topic}"
    named = _named(series, cols)
    warnings: list[str] = []
    any_named: np.ndarray = np.asarray(named.any(axis=1))
    if not any_named.all():
        counts["messages_without_joints"] = int((~any_named).sum())
        warnings.append(f"{where}: {counts['messages_without_joints']} message(s) carry none of the joints "
                        f"{[series.joint_names[c] for c in cols]} (first: message "
                        f"{int(series.index[np.argmax(~any_named)])}); another publisher's joints, not used")
        series, t_ns, named = subset_series(series, any_named), t_ns[any_named], named[any_named]
    if named.all(axis=1).any():
        return series, t_ns, counts, warnings  # some message carries every joint: not split across publishers
    groups, group_of = np.unique(named, axis=0, return_inverse=True)
    group_of = group_of.ravel()
    base_g = int(np.lexsort((-np.arange(len(groups)), groups.sum(axis=1), np.bincount(group_of)))[-1])
    base = group_of == base_g
    first_seen = sorted(range(len(groups)), key=lambda g: int(np.argmax(group_of == g)))
    label = "; ".join(str([series.joint_names[cols[k]] for k in np.nonzero(groups[g])[0]]) for g in first_seen)
    merged = subset_series(series, base)
    tb = t_ns[base]
    tol = config.merge_tolerance_s * NS_PER_S
    complete = np.ones(len(tb), dtype=bool)
    for k, c in enumerate(cols):
        if groups[base_g][k]:
            continue
        rows = np.nonzero(named[:, k])[0]
        rows = rows[np.argsort(t_ns[rows], kind="stable")]
        tj = t_ns[rows]
        right = np.clip(np.searchsorted(tj, tb, side="left"), 0, len(tj) - 1)
        left = np.clip(np.searchsorted(tj, tb, side="right") - 1, 0, len(tj) - 1)
        ok = (np.abs(tj[left] - tb) <= tol) & (np.abs(tj[right] - tb) <= tol) & (tj[left] <= tb) & (tj[right] >= tb)
        complete &= ok
        for fname in ("position", "velocity", "effort"):
            src = getattr(series, fname)[rows, c]
            col = np.interp(tb.astype(np.float64), tj.astype(np.float64), src) if len(tj) else np.full(len(tb), np.nan)
            getattr(merged, fname)[:, c] = np.where(ok, col, np.nan)
    counts["messages_merged"] = int(len(series) - len(tb))
    counts["merge_unmatched"] = int((~complete).sum())
    renamed = _renamed_part_way(series, cols, groups, group_of)
    if renamed:
        raise DataError(f"{where}: {renamed}")
    if not complete.any():
        raise DataError(
            f"{where}: joints are split across publishers (messages carry {label} in turn) and no message of the "
            f"other groups lies within merge_tolerance_s = {config.merge_tolerance_s} s of a message of the largest "
            f"group; choose the joints of one publisher with --joints, or raise the tolerance")
    warnings.append(
        f"{where}: joints are split across publishers (messages carry {label} in turn); merged by name onto the "
        f"{int(base.sum())} messages carrying {[series.joint_names[cols[k]] for k in np.nonzero(groups[base_g])[0]]}, "
        "other joints interpolated between their messages within "
        f"merge_tolerance_s = {config.merge_tolerance_s} s; {counts['merge_unmatched']} sample(s) without a match "
        "are dropped")
    return merged, tb, counts, warnings


def _renamed_part_way(series: JointStateSeries, cols: list[int], groups: np.ndarray,
                      group_of: np.ndarray) -> str | None:
    """Why the name groups are one run renamed part-way, not two publishers, or None.

    Two publishers interleave their messages; a driver relaunched with other joint names (a prefix, ros_kortex issue
    188, Universal_Robots_ROS2_Driver issue 924) gives groups of the same size that follow each other, each one
    contiguous block of messages with no joint in common.
    """
    if len(groups) < 2 or len({int(g.sum()) for g in groups}) != 1 or np.any(groups.sum(axis=0) > 1):
        return None
    blocks = []
    for g in range(len(groups)):
        rows = np.nonzero(group_of == g)[0]
        if rows[-1] - rows[0] + 1 != len(rows):
            return None  # interleaved: two publishers
        blocks.append((int(rows[0]), g))
    blocks.sort()
    names = [[series.joint_names[cols[k]] for k in np.nonzero(groups[g])[0]] for _, g in blocks]
    start = int(series.index[blocks[1][0]])
    mapping = " ".join(f"{new}:{old}" for old, new in zip(names[0], names[1]))
    return (f"joint names change at message {start}: {names[0]} before it, {names[1]} from it on"
            + (f" ({len(blocks)} runs)" if len(blocks) > 2 else "")
            + ": the driver was restarted with other joint names (a prefix?), not two publishers; join the runs with "
            f"a bag-side joint map, --rename-joint {mapping} (in the order of the names; check it), or take one run "
            "with --joints")


def find_resets(t_ns: np.ndarray, msg_index: np.ndarray, max_back_s: float, where: str,
                ) -> tuple[list[slice], list[str]]:
    """Split a time series (in bag/file order) where time jumps backwards by more than ``max_back_s`` [s] or more
    than :data:`RESET_STEPS` median steps, whichever is less.

    Such a jump is a reset (a simulation reset, a clock reset, two runs appended): the runs on either side are
    separate episodes. Smaller backward steps are disorder (messages received out of order), sorted later.

    Returns:
        (one slice per run (R,), a warning per reset naming the message (or line) index and the size of the jump).
    """
    step = np.diff(np.asarray(t_ns, dtype=np.int64))
    forward = step[step > 0]
    limit = float(max_back_s * NS_PER_S)
    if len(forward):
        limit = min(limit, RESET_STEPS * float(np.median(forward)))
    jumps = np.nonzero(np.less(step, -limit))[0]
    bounds = [0, *(jumps + 1).tolist(), len(t_ns)]
    warnings = [f"{where}: time jumps back by {ns_to_s(float(-step[k])):.3f} s before message "
                f"{int(msg_index[k + 1])} (a reset: simulation or clock reset, or runs appended); split into "
                "separate episodes there" for k in jumps]
    return [slice(a, b) for a, b in zip(bounds[:-1], bounds[1:], strict=True)], warnings


def sort_and_dedup(samples: Samples, where: str) -> tuple[Samples, np.ndarray, dict[str, int], list[str]]:
    """Sort by stamp (stable) and mark repeated stamps.

    A row repeating the previous row's stamp is dropped: an exact duplicate when every value matches (NaN equal
    to NaN), else a same-stamp conflict (the first is kept).

    Returns:
        (sorted samples, keep (M,) bool mask of rows to keep, counts ``out_of_order_sorted``,
        ``duplicates_dropped``, ``same_stamp_conflicts_dropped``, warnings).
    """
    t_ns, msg_index = samples.t_ns, samples.msg_index
    warnings = []
    back = np.diff(t_ns) < 0
    if back.any():
        warnings.append(f"{where}: {int(back.sum())} message(s) out of stamp order (first: message "
                        f"{int(msg_index[1:][back][0])}); sorted by stamp")
    s = samples.take(np.argsort(t_ns, kind="stable"))
    same = np.concatenate([[False], np.diff(s.t_ns) == 0])
    exact = same.copy()
    if same.any():
        rows = np.nonzero(same)[0]
        prev = rows - 1
        for arr in (s.q, s.tau, s.vel):
            eq = (arr[rows] == arr[prev]) | (np.isnan(arr[rows]) & np.isnan(arr[prev]))
            exact[rows] &= eq.all(axis=1)
        warnings.append(
            f"{where}: dropped {int(exact.sum())} exact duplicate(s) and {int((same & ~exact).sum())} message(s) "
            f"repeating a stamp with other values (kept the first; first: message {int(s.msg_index[same][0])})"
        )
    counts = {"out_of_order_sorted": int(back.sum()), "duplicates_dropped": int(exact.sum()),
              "same_stamp_conflicts_dropped": int((same & ~exact).sum())}
    return s, ~same, counts, warnings


def drop_nan(samples: Samples, keep: np.ndarray, use_msg_vel: bool, where: str) -> tuple[Samples, int, list[str]]:
    """Keep the rows in ``keep`` whose q and tau (and the message velocity when used) are all finite.

    Returns:
        (kept samples, number of rows in ``keep`` dropped for NaN/inf, warnings).
    """
    finite = np.isfinite(samples.q).all(axis=1) & np.isfinite(samples.tau).all(axis=1)
    if use_msg_vel:
        finite &= np.isfinite(samples.vel).all(axis=1)
    nan_rows = keep & ~finite
    warnings = []
    if nan_rows.any():
        warnings.append(f"{where}: dropped {int(nan_rows.sum())} sample(s) with NaN/inf or a missing value "
                        f"(first: message {int(samples.msg_index[nan_rows][0])})")
    return samples.take(keep & finite), int(nan_rows.sum()), warnings


def _increments(s: Samples, max_gap_s: float, window_s: float) -> tuple[np.ndarray, np.ndarray]:
    """Mean velocities over ``window_s`` windows inside gap-free segments: from the change of q, and from the
    integral of the message velocity (each (W, J) [rad/s])."""
    dq_parts, iv_parts = [], []
    step = np.diff(s.t_ns)
    bounds = [0, *(np.nonzero((ns_to_s(step) > max_gap_s) | (step <= 0))[0] + 1).tolist(), len(s.t_ns)]
    for a, b in zip(bounds[:-1], bounds[1:], strict=True):
        if b - a < 3:
            continue
        t = ns_to_s((s.t_ns[a:b] - s.t_ns[a]).astype(np.float64))
        lag = max(1, int(round(window_s / max(float(np.median(np.diff(t))), 1e-9))))
        if b - a <= lag:
            continue
        v = s.vel[a:b]
        integral = np.concatenate([np.zeros((1, v.shape[1])),
                                   np.cumsum(0.5 * (v[1:] + v[:-1]) * np.diff(t)[:, None], axis=0)])
        span = (t[lag:] - t[:-lag])[:, None]  # window durations [s]: compare mean velocities over each window
        dq_parts.append((s.q[a + lag:b] - s.q[a:b - lag]) / span)
        iv_parts.append((integral[lag:] - integral[:-lag]) / span)
    if not dq_parts:
        return np.zeros((0, s.q.shape[1])), np.zeros((0, s.q.shape[1]))
    return np.concatenate(dq_parts), np.concatenate(iv_parts)


def check_velocity(s: Samples, joints: tuple[str, ...], config: DatasetConfig, where: str,
                   ) -> tuple[dict[str, dict[str, float]], list[str]]:
    """Cross-check the message velocity against the derivative of q, per joint.

    Over windows of ``config.savgol_window_s`` (at least 0.05 s) inside gap-free stretches, the mean of the
    message velocity (its integral over the window's duration) is compared with the change of q over the duration:
    a consistent field gives a least-squares gain near 1 (:data:`VELOCITY_GAIN_RANGE`) and a high correlation
    (:data:`VELOCITY_CORRELATION_MIN`); a constant field has no correlation. Integrating, rather
    than differentiating q, keeps encoder quantization noise out of the comparison. Joints whose q changes by more
    than ten encoder steps (the smallest change of q seen) in fewer than three windows are not judged.

    Args:
        s: clean samples (sorted, finite q and velocity), velocity in ``s.vel`` (M, J) [rad/s].

    Returns:
        ({joint: {"gain": g, "correlation": r}} for each joint whose velocity disagrees, warnings naming the joint and
        the figures).
    """
    window = max(config.savgol_window_s, 0.05)
    dq, iv = _increments(s, config.max_gap_s, window)
    bad: dict[str, dict[str, float]] = {}
    for k, name in enumerate(joints):
        x, y = dq[:, k], iv[:, k]
        steps = np.abs(np.diff(s.q[:, k]))
        quantum = float(steps[steps > 0].min()) if np.any(steps > 0) else 0.0
        if np.count_nonzero(np.abs(x) * window > max(10 * quantum, 1e-9)) < 3:
            continue  # q hardly changes (a holding joint: encoder flicker only): nothing to judge by
        gain = float(np.dot(x, y) / np.dot(x, x))
        # a constant field has no variation beyond rounding: correlation 0
        corr = float(np.corrcoef(x, y)[0, 1]) if np.std(y) > 1e-9 * (1.0 + np.abs(y).max()) else 0.0
        if not (VELOCITY_GAIN_RANGE[0] <= gain <= VELOCITY_GAIN_RANGE[1] and corr >= VELOCITY_CORRELATION_MIN):
            bad[name] = {"gain": gain, "correlation": corr}
    warnings = []
    if bad:
        figures = ", ".join(f"{n}: gain {f['gain']:.3g}, correlation {f['correlation']:.2f}" for n, f in bad.items())
        warnings.append(f"{where}: field velocity is not the derivative of position ({figures}; a consistent field "
                        f"gives gain {VELOCITY_GAIN_RANGE[0]}..{VELOCITY_GAIN_RANGE[1]} and correlation >= "
                        f"{VELOCITY_CORRELATION_MIN}: a constant, a configured maximum, wrong units or sign?)")
    return bad, warnings


def effort_problems(series: JointStateSeries, joints: tuple[str, ...], limits: Mapping[str, float] | None,
                    torque_constants: Mapping[str, float] | None = None) -> dict[str, str]:
    """Joints whose effort (times ``torque_constants[joint]`` when given) is physically implausible for their
    effort limit ``limits[joint]`` [N·m].

    Effort beyond :data:`EFFORT_LIMIT_FACTOR` times the limit cannot be a joint torque of this robot (another unit,
    such as motor current in mA, or garbage).

    Returns:
        {joint: reason} for each implausible joint (joints without a limit are not judged).
    """
    out: dict[str, str] = {}
    for name in joints:
        if not limits or name not in limits:
            continue
        col = np.abs(series.effort[:, series.joint_names.index(name)] * (torque_constants or {}).get(name, 1.0))
        peak = float(np.nanmax(col)) if np.isfinite(col).any() else 0.0
        if peak > EFFORT_LIMIT_FACTOR * limits[name]:
            out[name] = (f"reaches {peak:.4g}, more than {EFFORT_LIMIT_FACTOR:g}x its effort limit "
                         f"{limits[name]:.4g} N·m: physically implausible (another unit? see --torque-constant)")
    return out
