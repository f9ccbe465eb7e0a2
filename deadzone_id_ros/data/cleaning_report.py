"""What cleaning did to the data (core, no ROS): typed, frozen reports instead of free-form dicts.

:class:`BagReport` holds one bag's (one JointState topic's) counts and warnings; it is built from the
:class:`~deadzone_id_ros.data.cleaning_log.CleaningLog` the stages of :func:`~deadzone_id_ros.data.episodes.
build_episodes` recorded into (:meth:`BagReport.from_log`), never filled field by field. :func:`merge_reports` sums
them into the :class:`CleaningReport` of a :class:`~deadzone_id_ros.data.dataset.Dataset`. ``to_dict()`` gives the
JSON form (the same keys the loader report has always had in ``report.json``).

A count that a stage records under a name of its own (a new bag quirk) needs no field here: it is carried in
``extra_counts``, summed over bags, written to JSON beside the other counts and listed by ``deadzone-id inspect``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .cleaning_log import CleaningLog

__all__ = ["BagReport", "CleaningReport", "COUNT_FIELDS", "merge_reports"]

COUNT_FIELDS = (
    "messages",
    "messages_dropped",
    "duplicates_dropped",
    "same_stamp_conflicts_dropped",
    "out_of_order_sorted",
    "gaps_split",
    "nan_samples_dropped",
    "short_segments_dropped",
    "resets_split",
    "messages_merged",
    "merge_unmatched",
    "messages_without_joints",
    "zero_stamps_dropped",
)
"""The integer counts with a report field of their own, summed over bags (and listed by ``deadzone-id inspect``);
counts of other names are summed too (``extra_counts``)."""


def _fields_dict(report: Any) -> dict[str, Any]:
    """A report dataclass's fields as JSON-ready Python, its ``extra_counts`` spliced in at their place."""
    out: dict[str, Any] = {}
    for f in dataclasses.fields(report):
        value = getattr(report, f.name)
        if f.name == "extra_counts":
            out.update(value)
        else:
            out[f.name] = _plain(value)
    return out


def _plain(value: object) -> Any:
    """Tuples -> lists and mappings -> dicts, recursively (JSON/YAML-ready)."""
    if isinstance(value, (tuple, list)):
        return [_plain(v) for v in value]
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return value.to_dict()  # type: ignore[attr-defined]
    return value


@dataclass(frozen=True)
class BagReport:
    """Counts and warnings from cleaning one bag's JointState topic (one :func:`build_episodes` call).

    Attributes:
        bag: the bag path (or the recording's label).  topic: the JointState topic.
        messages: messages on the topic.  messages_dropped: messages that could not be mapped by joint name.
        dropped: ``{reason: {"count": n, "first_message": index}}`` for those dropped messages.
        joint_order_changes: how often the joint order changed between consecutive messages (mapped by name).
        joints_skipped: (K,) joints on the topic that were not used.
        velocity_source: ``"message"`` or ``"savgol derivative of position"``.
        time_source: ``"header"`` or ``"log"``.  log_time_fallback: header stamps were zero, log time used.
        out_of_order_sorted: messages whose stamp went backwards (sorted).
        duplicates_dropped: exact repeats of the previous message's stamp and values.
        same_stamp_conflicts_dropped: repeats of a stamp with other values (the first is kept).
        nan_samples_dropped: samples with NaN/inf or a missing value.
        rate_hz: the resampling rate [Hz].  median_step_s: the median stamp step [s].
        gaps_split: stamp steps longer than ``max_gap_s`` (each splits an episode).
        savgol_window_samples: the Savitzky–Golay window [samples].
        short_segments_dropped: segments shorter than that window.
        samples: resampled samples kept.  episodes: episodes kept.
        joints_never_moving: (K,) joints that never move (always in the dead zone).
        warnings: (W,) human-readable warnings, one per problem, naming the bag, topic and first message.
        format: ``"ros1"``, ``"mcap"`` or ``"sqlite3"`` for a bag, None for an in-memory recording.
        recovered: the bag was damaged and read from a recovered copy.
        resets_split: backward time jumps longer than ``max_gap_s`` (resets; each starts a new run of episodes).
        messages_merged: messages of other publishers merged by joint name onto the base messages.
        merge_unmatched: base messages without a message of every other publisher within the merge tolerance.
        messages_without_joints: messages naming none of the joints used (another publisher's joints).
        zero_stamps_dropped: messages with an unset (zero) header stamp among stamped ones.
        extra_counts: ``{name: n}``, the counts a stage recorded under a name that has no field here (written to
            JSON among the other counts, not as a nested entry).
        velocity_mismatch: ``{joint: {"gain": g, "correlation": r}}`` where the message velocity disagrees with the
            derivative of position.
    """

    bag: str
    topic: str
    messages: int
    messages_dropped: int
    dropped: Mapping[str, Mapping[str, int]]
    joint_order_changes: int
    joints_skipped: tuple[str, ...]
    velocity_source: str
    time_source: str
    log_time_fallback: bool
    out_of_order_sorted: int
    duplicates_dropped: int
    same_stamp_conflicts_dropped: int
    nan_samples_dropped: int
    rate_hz: float
    median_step_s: float
    gaps_split: int
    savgol_window_samples: int
    short_segments_dropped: int
    samples: int
    episodes: int
    joints_never_moving: tuple[str, ...]
    warnings: tuple[str, ...] = ()
    format: str | None = None
    recovered: bool = False
    resets_split: int = 0
    messages_merged: int = 0
    merge_unmatched: int = 0
    messages_without_joints: int = 0
    zero_stamps_dropped: int = 0
    extra_counts: Mapping[str, int] = field(default_factory=dict)
    velocity_mismatch: Mapping[str, Mapping[str, float]] = field(default_factory=dict)

    @classmethod
    def from_log(cls, log: CleaningLog) -> BagReport:
        """The report of one bag from what its cleaning stages recorded: each note and count fills the field of its
        name, counts of other names go to ``extra_counts``, ``warnings`` are the log's in order.

        Raises:
            ValueError: a note names no field of this report, or a name is both a note and a count.
            TypeError: a field without a default was never recorded (a stage of the pipeline did not run).
        """
        names = {f.name for f in dataclasses.fields(cls)} - {"extra_counts", "warnings"}
        unknown = sorted(set(log.notes) - names)
        if unknown:
            raise ValueError(f"cleaning log notes {unknown} are not BagReport fields: give each decision a field")
        both = sorted(set(log.notes) & set(log.counts))
        if both:
            raise ValueError(f"cleaning log names {both} are both notes and counts")
        values: dict[str, Any] = {**log.notes, **{k: v for k, v in log.counts.items() if k in names}}
        extra = {k: v for k, v in log.counts.items() if k not in names}
        return cls(**values, warnings=log.warnings, extra_counts=extra)

    def counts(self) -> dict[str, int]:
        """``{name: n}``: the :data:`COUNT_FIELDS` in that order, then ``extra_counts``."""
        return {**{k: getattr(self, k) for k in COUNT_FIELDS}, **self.extra_counts}

    def to_dict(self) -> dict[str, Any]:
        """The report as plain JSON-ready Python (tuples become lists; ``extra_counts`` spliced in as top-level
        counts)."""
        return _fields_dict(self)


@dataclass(frozen=True)
class CleaningReport:
    """Counts and warnings of a whole data set: the :data:`COUNT_FIELDS`, ``episodes`` and ``samples`` summed over
    bags, plus per-bag details.

    Attributes:
        bags: ``{bag: BagReport}`` in loading order.
        episodes, samples, messages, messages_dropped, duplicates_dropped, same_stamp_conflicts_dropped,
            out_of_order_sorted, gaps_split, nan_samples_dropped, short_segments_dropped, resets_split,
            messages_merged, merge_unmatched, messages_without_joints, zero_stamps_dropped: sums over ``bags``.
        extra_counts: the sums of the bags' ``extra_counts`` (JSON: among the other counts).
        log_time_fallback: bags whose header stamps were zero (log time used).
        recovered: bags read from a recovered copy.
        velocity_source: ``{bag: "message" | "savgol derivative of position"}``.
        warnings: every warning, bag by bag.
    """

    bags: Mapping[str, BagReport] = field(default_factory=dict)
    episodes: int = 0
    samples: int = 0
    messages: int = 0
    messages_dropped: int = 0
    duplicates_dropped: int = 0
    same_stamp_conflicts_dropped: int = 0
    out_of_order_sorted: int = 0
    gaps_split: int = 0
    nan_samples_dropped: int = 0
    short_segments_dropped: int = 0
    resets_split: int = 0
    messages_merged: int = 0
    merge_unmatched: int = 0
    messages_without_joints: int = 0
    zero_stamps_dropped: int = 0
    extra_counts: Mapping[str, int] = field(default_factory=dict)
    log_time_fallback: tuple[str, ...] = ()
    recovered: tuple[str, ...] = ()
    velocity_source: Mapping[str, str] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """The report as plain JSON-ready Python (per-bag reports nested as dicts, tuples as lists, ``extra_counts``
        spliced in as top-level counts)."""
        return _fields_dict(self)


def merge_reports(reports: Sequence[BagReport], extra_warnings: Sequence[str] = ()) -> CleaningReport:
    """Sum per-bag reports into one :class:`CleaningReport` (a later report of the same bag replaces an earlier).

    ``extra_warnings`` come first in ``warnings``, then each bag's warnings in order.
    """
    sums = {key: sum(getattr(r, key) for r in reports) for key in ("episodes", "samples", *COUNT_FIELDS)}
    extra: dict[str, int] = {}
    for rep in reports:
        for key, n in rep.extra_counts.items():
            extra[key] = extra.get(key, 0) + n
    warnings = list(extra_warnings)
    for rep in reports:
        warnings.extend(rep.warnings)
    return CleaningReport(
        bags={r.bag: r for r in reports},
        **sums,
        extra_counts=extra,
        log_time_fallback=tuple(r.bag for r in reports if r.log_time_fallback),
        recovered=tuple(r.bag for r in reports if r.recovered),
        velocity_source={r.bag: r.velocity_source for r in reports},
        warnings=tuple(warnings),
    )
