"""The cleaning stages (core, no ROS): ONE ordered list, :data:`STAGES`, that turns one decoded JointState topic
into clean, uniformly resampled episodes.

Every stage is a function ``stage(data, config, log) -> data``: it takes the topic's data so far
(:class:`~deadzone_id_ros.data.samples.TopicData`), the :class:`~deadzone_id_ros.data.dataset_config.DatasetConfig`
and the :class:`~deadzone_id_ros.data.cleaning_log.CleaningLog`, returns the data with its step done, and records
what it did in the log: counts, notes (its decisions) and warnings. :func:`~deadzone_id_ros.data.episodes.
build_episodes` runs them in this order and builds the bag's report from the log
(:meth:`~deadzone_id_ros.data.cleaning_report.BagReport.from_log`). A stage that leaves nothing usable raises
:class:`~deadzone_id_ros.errors.DataError` naming the bag, topic, message index, field and joint. The decisions and
detectors they call are pure functions, tested alone: :mod:`.decisions`, :mod:`.defects`, :mod:`.resample`.

0. :func:`rename_joints`: ``DatasetConfig.joint_renames`` (a bag-side joint map) renames joints in every message,
   joining the runs of a recording whose joint names changed part-way;
   :func:`~.sign_bit.decode_effort_sign_bit`: effort recorded as a sign-and-magnitude register
   (``DatasetConfig.effort_sign_bit``, Feetech's raw Present_Load) is decoded; undecoded joints that look encoded
   are warned about;
1. :func:`check_messages`: messages the reader could not map by joint name (empty names, length mismatch) are
   counted; joint-order changes (mapped by name) are warned about;
2. :func:`stamp_time`: header stamps, falling back to log (receive) time when stamps are zero; a few unset stamps
   among set ones are dropped;
3. :func:`drop_zero_publisher`: messages whose every position, velocity and effort is exactly 0.0, among messages
   that are not, come from a second publisher filling placeholders (a driver's stub beside the real one): dropped,
   counted (``zero_filled_dropped``) and warned about;
4. :func:`merge_publishers`: joints split across publishers are merged by name over time, on each run between
   resets (never interpolating across one);
5. :func:`pick_joints`: ``DatasetConfig.joints``, or every joint with usable position and effort;
6. :func:`pick_velocity`: dq from the message when usable, else Savitzky–Golay differentiation of q;
7. :func:`make_samples`: the chosen joints' rows (effort times ``DatasetConfig.torque_constants``);
8. :func:`split_resets`: time that jumps back by more than ``max_gap_s`` is a reset: the runs between resets are
   cleaned and resampled separately from here on;
9. :func:`sort_runs`: sort by stamp, drop exact duplicates and same-stamp conflicts (keeping the first);
   :func:`unwrap_angles`: a joint whose angle wraps at ±pi (a continuous joint) is unwrapped, counted;
10. :func:`verify_velocity`: a message velocity that is not the derivative of q is replaced by the Savitzky–Golay
    derivative (``velocity="auto"``);
11. :func:`drop_invalid`: drop samples with NaN/inf or a missing value;
12. :func:`resample`: split where the stamp step exceeds ``max_gap_s`` (never interpolated), resample each segment
    to ``rate_hz`` by linear interpolation, ddq (and dq when differentiated) by zero-phase Savitzky–Golay
    differentiation (:func:`scipy.signal.savgol_filter`; never a raw finite difference of quantized encoder data);
13. :func:`flag_still_joints`: joints that never move are warned about; nothing moving at all is an error.

Adding a cleaning stage (a new bag quirk) is one function here and its entry in :data:`STAGES`: detect the quirk in
``data``, drop or fix what it spoils, record it (``log.count("my_quirk_dropped", n)`` is summed over bags and shown
under that name by ``deadzone-id inspect`` and in ``Dataset.report.to_dict()``; ``log.warn(f"{data.where}: ...")``
names the first message and joins the loader warnings; ``log.note(name, value)`` for a decision, which needs a field
of that name in :class:`~deadzone_id_ros.data.cleaning_report.BagReport`), and return the data. Nothing else needs
editing (``test/data/test_cleaning_stages.py`` adds such a stage).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import numpy as np

from ..errors import DataError
from ..stamps import ns_to_s
from .bag import why_unusable
from .cleaning_log import CleaningLog
from .dataset_config import DatasetConfig
from .decisions import choose_time, choose_velocity, select_joints
from .defects import check_velocity, drop_nan, find_resets, merge_split_publishers, sort_and_dedup
from .quirks import drop_zero_publisher, rename_joints, unwrap_angles
from .resample import Resampled, split_and_resample
from .samples import Samples, TopicData, subset_series
from .sign_bit import decode_effort_sign_bit

__all__ = [
    "DIFFERENTIATED",
    "FROM_MESSAGE",
    "STAGES",
    "Stage",
    "check_messages",
    "drop_invalid",
    "drop_zero_publisher",
    "flag_still_joints",
    "make_samples",
    "merge_publishers",
    "pick_joints",
    "pick_velocity",
    "rename_joints",
    "resample",
    "sort_runs",
    "split_resets",
    "stamp_time",
    "unwrap_angles",
    "verify_velocity",
]

Stage = Callable[[TopicData, DatasetConfig, CleaningLog], TopicData]
"""A cleaning stage: (the topic's data so far, the settings, the log to record into) -> the data after it."""

FROM_MESSAGE = "message"
DIFFERENTIATED = "savgol derivative of position"
"""The two values of the report's ``velocity_source``."""


def check_messages(data: TopicData, config: DatasetConfig, log: CleaningLog) -> TopicData:
    """Count what the reader dropped (messages it could not map by joint name) and the joint-order changes.

    Raises:
        DataError: no message could be mapped (names the bag, topic and why).
    """
    series = data.series
    dropped = series.report.get("dropped", {})
    order_changes = series.report.get("joint_order_changes", 0)
    if len(series) == 0:
        raise DataError(f"{data.where}: {why_unusable(series)}")
    log.count("messages", series.report.get("messages", len(series)))
    log.count("messages_dropped", sum(d["count"] for d in dropped.values()))
    log.note("dropped", dropped)
    log.note("joint_order_changes", order_changes)
    log.warn(*(f"{data.where}: dropped {d['count']} message(s): {reason} (first: message {d['first_message']})"
               for reason, d in dropped.items()))
    if order_changes:
        log.warn(f"{data.where}: joint order changed {order_changes} time(s); mapped by name")
    return data


def stamp_time(data: TopicData, config: DatasetConfig, log: CleaningLog) -> TopicData:
    """The time of every message (:func:`~.decisions.choose_time`); messages with an unset header stamp among set
    ones are dropped and counted (``zero_stamps_dropped``).

    Raises:
        DataError: ``time_source="header"`` and a header stamp is zero.
    """
    t_ns, source, fallback, warnings = choose_time(data.series, config)
    log.note("time_source", source)
    log.note("log_time_fallback", fallback)
    log.warn(*warnings)
    stamped = t_ns >= 0  # -1: a header stamp left unset
    log.count("zero_stamps_dropped", int((~stamped).sum()))
    data = replace(data, t_ns=t_ns)
    return data if stamped.all() else data.take_messages(stamped)


def merge_publishers(data: TopicData, config: DatasetConfig, log: CleaningLog) -> TopicData:
    """:func:`~.defects.merge_split_publishers` on each run between resets (never interpolating across a reset).

    Raises:
        DataError: joints split across publishers cannot be merged within ``merge_tolerance_s`` in any run.
    """
    series, t_ns = data.series, data.t_ns
    slices, _ = find_resets(t_ns, series.index, config.max_gap_s, series.where)
    if len(slices) == 1:
        merged, t_merged, counts, warnings = merge_split_publishers(series, t_ns, config)
    else:
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
        merged, t_merged = replace(series, **fields), np.concatenate([p[1] for p in parts])
        counts = {k: sum(p[2][k] for p in parts) for k in parts[0][2]}
        warnings = list(dict.fromkeys([w for p in parts for w in p[3]] + [str(e) for e in errors]))
    for name, n in counts.items():
        log.count(name, n)
    log.warn(*warnings)
    return replace(data, series=merged, t_ns=t_merged)


def pick_joints(data: TopicData, config: DatasetConfig, log: CleaningLog) -> TopicData:
    """The joints to train on (:func:`~.decisions.select_joints`); the others are noted as skipped.

    Raises:
        DataError: a requested joint is missing or unusable, or no joint is usable.
    """
    joints, warnings = select_joints(data.series, config)
    log.note("joints_skipped", tuple(n for n in data.series.joint_names if n not in joints))
    log.warn(*warnings)
    return replace(data, joints=joints)


def pick_velocity(data: TopicData, config: DatasetConfig, log: CleaningLog) -> TopicData:
    """dq from the message or from q (:func:`~.decisions.choose_velocity`).

    Raises:
        DataError: ``velocity="message"`` but the field is unusable for a joint.
    """
    use_msg_vel, warnings = choose_velocity(data.series, data.joints, config)
    log.note("velocity_source", FROM_MESSAGE if use_msg_vel else DIFFERENTIATED)
    log.warn(*warnings)
    return replace(data, use_msg_vel=use_msg_vel)


def make_samples(data: TopicData, config: DatasetConfig, log: CleaningLog) -> TopicData:
    """The chosen joints' columns as rows of samples, effort [recorded unit] times the joint's torque constant."""
    series, joints = data.series, data.joints
    cols = [series.joint_names.index(j) for j in joints]
    effort = series.effort[:, cols] * np.asarray([(config.torque_constants or {}).get(j, 1.0) for j in joints])
    raw = Samples(data.t_ns, series.position[:, cols], effort, series.velocity[:, cols], series.index)
    return replace(data, runs=(raw,))


def split_resets(data: TopicData, config: DatasetConfig, log: CleaningLog) -> TopicData:
    """Split the samples (bag order) into runs at each reset (:func:`~.defects.find_resets`), counted."""
    raw = Samples.concat(data.runs)
    slices, warnings = find_resets(raw.t_ns, raw.msg_index, config.max_gap_s, data.where)
    log.count("resets_split", len(slices) - 1)
    log.warn(*warnings)
    return replace(data, runs=tuple(raw.take(np.arange(sl.start, sl.stop)) for sl in slices))


def sort_runs(data: TopicData, config: DatasetConfig, log: CleaningLog) -> TopicData:
    """Sort each run by stamp and drop repeated stamps (:func:`~.defects.sort_and_dedup`), counted."""
    runs = []
    for run in data.runs:
        s, keep, counts, warnings = sort_and_dedup(run, data.where)
        for name, n in counts.items():
            log.count(name, n)
        log.warn(*warnings)
        runs.append(s.take(keep))
    return replace(data, runs=tuple(runs))


def verify_velocity(data: TopicData, config: DatasetConfig, log: CleaningLog) -> TopicData:
    """Cross-check the message velocity with q (:func:`~.defects.check_velocity`) on the rows with finite values;
    with ``velocity="auto"`` a field that disagrees is replaced by the Savitzky–Golay derivative of q."""
    if not data.use_msg_vel:
        return data
    s = Samples.concat(data.runs)
    s = s.take(np.isfinite(s.q).all(axis=1) & np.isfinite(s.tau).all(axis=1) & np.isfinite(s.vel).all(axis=1))
    bad, warnings = check_velocity(s, data.joints, config, data.where)
    log.note("velocity_mismatch", bad)
    if bad and config.velocity == "auto":
        data = replace(data, use_msg_vel=False)
        log.note("velocity_source", DIFFERENTIATED)
        warnings = [w + "; dq from zero-phase Savitzky–Golay differentiation of position instead" for w in warnings]
    log.warn(*warnings)
    return data


def drop_invalid(data: TopicData, config: DatasetConfig, log: CleaningLog) -> TopicData:
    """Drop samples with NaN/inf or a missing value (:func:`~.defects.drop_nan`), counted; runs left with fewer than
    2 samples are dropped.

    Raises:
        DataError: no run has 2 usable samples (names the bag, topic and the warnings so far).
    """
    runs = []
    for run in data.runs:
        s, nan_dropped, warnings = drop_nan(run, np.ones(len(run.t_ns), dtype=bool), data.use_msg_vel, data.where)
        log.count("nan_samples_dropped", nan_dropped)
        log.warn(*warnings)
        runs.append(s)
    usable = tuple(s for s in runs if len(s.t_ns) >= 2)
    if not usable:
        raise DataError(f"{data.where}: fewer than 2 usable samples after cleaning (see report warnings: "
                        f"{log.warnings_of(split_resets, sort_runs, drop_invalid)})")
    return replace(data, runs=usable)


def resample(data: TopicData, config: DatasetConfig, log: CleaningLog) -> TopicData:
    """Split each run at gaps and resample it into episodes (:func:`~.resample.split_and_resample`) at
    ``config.rate_hz``, or 1 / (median stamp step of every run); a run too short to give an episode is dropped
    (counted in ``short_segments_dropped``, warned) when others remain.

    Raises:
        DataError: no run gives an episode (the first run's reason).
    """
    steps = np.concatenate([np.diff(s.t_ns) for s in data.runs])
    median_step_s = ns_to_s(float(np.median(steps)))
    if config.rate_hz is None:
        config = replace(config, rate_hz=1.0 / median_step_s)
    results: list[Resampled] = []
    errors: list[DataError] = []
    for s in data.runs:
        try:
            results.append(split_and_resample(s, data.series, data.joints, data.use_msg_vel, config,
                                              first_episode=sum(len(r.episodes) for r in results)))
        except DataError as err:
            errors.append(err)
    if not results:
        raise errors[0]
    episodes = tuple(e for r in results for e in r.episodes)
    log.note("rate_hz", results[0].rate_hz)
    log.note("median_step_s", median_step_s)
    log.note("savgol_window_samples", results[0].window)
    log.count("gaps_split", sum(r.gaps_split for r in results))
    log.count("short_segments_dropped", sum(r.short_segments_dropped for r in results) + len(errors))
    log.count("samples", sum(len(e) for e in episodes))
    log.count("episodes", len(episodes))
    log.warn(*(w for r in results for w in r.warnings), *(str(e) for e in errors))
    return replace(data, episodes=episodes)


def flag_still_joints(data: TopicData, config: DatasetConfig, log: CleaningLog) -> TopicData:
    """Note the joints whose position is constant or whose dq is zero throughout (always in the dead zone).

    Raises:
        DataError: that is every joint: no inverse-dynamics data (names the field, joints and messages).
    """
    joints, s = data.joints, Samples.concat(data.runs)
    dq_all = np.concatenate([e.dq for e in data.episodes])
    q_all = np.concatenate([e.q for e in data.episodes])
    still = [j for k, j in enumerate(joints) if np.ptp(q_all[:, k]) == 0.0 or np.all(dq_all[:, k] == 0.0)]
    if len(still) == len(joints):
        raise DataError(f"{data.where}: nothing moves: field position is constant for every joint {list(joints)} "
                        f"over messages {int(s.msg_index.min())}..{int(s.msg_index.max())}; no inverse-dynamics data")
    log.note("joints_never_moving", tuple(still))
    if still:
        log.warn(f"{data.where}: joint(s) {still} never move (every sample is in the dead zone)")
    return data


STAGES: tuple[Stage, ...] = (
    rename_joints,
    decode_effort_sign_bit,
    check_messages,
    stamp_time,
    drop_zero_publisher,
    merge_publishers,
    pick_joints,
    pick_velocity,
    make_samples,
    split_resets,
    sort_runs,
    unwrap_angles,
    verify_velocity,
    drop_invalid,
    resample,
    flag_still_joints,
)
"""The cleaning stages in the order they run (see the module docstring)."""
