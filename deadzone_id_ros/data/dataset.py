"""Bags -> training data (core, no ROS): name-mapped, cleaned, uniformly resampled episodes of q, dq, ddq, tau.

Pipeline per bag (DESIGN.md, "Data pipeline"):

1. open the bag by content (ROS 1, ROS 2 sqlite3/MCAP; damaged ROS 2 bags are recovered, see :mod:`.bag`);
2. select the JointState topic (``DatasetConfig.topic``, or the only one with named joints and usable effort);
3. map joints by name in every message; drop messages that cannot be mapped (empty names, length mismatch) and
   count them;
4. use header stamps (fall back to log time when stamps are zero, and say so); sort out-of-order messages; drop
   exact duplicates (and same-stamp conflicts, keeping the first), counting both; drop samples with NaN;
5. split where the stamp step exceeds ``max_gap_s`` (never interpolate across a gap), resample each segment to a
   uniform grid of ``rate_hz`` by linear interpolation;
6. dq from the message when usable, else zero-phase Savitzky–Golay differentiation of q; ddq by zero-phase
   Savitzky–Golay differentiation of dq (:func:`scipy.signal.savgol_filter`; never a raw finite difference of
   quantized encoder data).

Steps 1–3 live in :mod:`.bag`, steps 4–6 in :mod:`.episodes` (one function per stage of
:func:`~deadzone_id_ros.data.episodes.build_episodes`).

Every problem met on the way is counted in ``Dataset.report``; problems that leave nothing usable raise
:class:`~deadzone_id_ros.errors.DataError` naming the bag, topic, message index and field. Dead-zone masks
(``|dq_ij| > alpha * sigma_j``, Inami, Yamane, Sakaino, arXiv 2402.00393) come from :meth:`Dataset.dead_zone`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from ..config import check_positive
from ..errors import DataError
from .bag import open_bag, select_joint_state_topic, series_from_recording
from .cleaning_report import BagReport, CleaningReport, merge_reports
from .deadzone import DeadZone, DeadZoneConfig, fit_dead_zone
from .effort_units import NEWTON_METRE, UNKNOWN, effort_units, guess_effort_unit
from .episodes import build_episodes
from .types import Episode, Recording

__all__ = [
    "Dataset",
    "DatasetConfig",
    "VELOCITY_SOURCES",
    "dataset_from_recordings",
    "load_dataset",
]

VELOCITY_SOURCES = ("auto", "message", "differentiate")
TIME_SOURCES = ("auto", "header", "log")


@dataclass(frozen=True)
class DatasetConfig:
    """How bags become training episodes.

    Attributes:
        topic: the JointState topic; None selects the only JointState topic with named joints and usable effort
            (several candidates are refused with the list).
        joints: joints to keep, in this order; None keeps every joint with usable position and effort, in the
            order first seen on the topic.
        rate_hz: resampling rate [Hz] > 0; None uses 1 / (median stamp step) of each bag.
        max_gap_s: a stamp step longer than this [s] splits the data into separate episodes (> 0).
        velocity: ``"auto"`` (message velocity when usable, else differentiate q), ``"message"`` (require it) or
            ``"differentiate"`` (always Savitzky–Golay derivative of q).
        time_source: ``"auto"`` (header stamps; log time when stamps are zero), ``"header"`` or ``"log"``.
        savgol_window_s: Savitzky–Golay window [s] for dq (when differentiated) and ddq; turned into an odd number
            of samples, at least ``savgol_order + 2``.
        savgol_order: Savitzky–Golay polynomial order (1..5).
        merge_tolerance_s: joints split across publishers (each message carrying some joints) are merged by name:
            another publisher's value at a stamp is interpolated between its messages just before and after, both
            within this many seconds of the stamp (> 0; default 0.02 s).
        effort_limits: ``{joint: limit [N·m]}`` (e.g. the URDF's effort limits), or None; effort beyond 3x the limit
            is physically implausible and the joint's effort unusable.
        torque_constants: ``{joint: k [N·m per unit of the recorded effort]}`` (e.g. for motor current in mA), or
            None; the effort of each named joint is multiplied by its k when the data are loaded (its unit is then
            N·m).
        effort_unit: the unit of the recorded effort of the joints without a torque constant, as the user states it
            (e.g. "N*m", "mA"); None guesses it from the bag (:func:`~deadzone_id_ros.data.effort_units.
            guess_effort_unit`). Carried into the report, the model artifact and the controller's check.

    The dead-zone setting is not part of this: it is :class:`~deadzone_id_ros.data.deadzone.DeadZoneConfig`.
    """

    topic: str | None = None
    joints: tuple[str, ...] | None = None
    rate_hz: float | None = None
    max_gap_s: float = 0.1
    velocity: str = "auto"
    time_source: str = "auto"
    savgol_window_s: float = 0.05
    savgol_order: int = 3
    merge_tolerance_s: float = 0.02
    effort_limits: Mapping[str, float] | None = None
    torque_constants: Mapping[str, float] | None = None
    effort_unit: str | None = None

    def __post_init__(self) -> None:
        if self.topic is not None and (not isinstance(self.topic, str) or not self.topic):
            raise ValueError(f"DatasetConfig.topic = {self.topic!r} must be a non-empty string or None")
        if self.joints is not None:
            if isinstance(self.joints, str) or not all(isinstance(j, str) and j for j in self.joints):
                raise ValueError(f"DatasetConfig.joints = {self.joints!r} must be a sequence of joint names or None")
            if not self.joints or len(set(self.joints)) != len(self.joints):
                raise ValueError(f"DatasetConfig.joints = {self.joints!r} must be non-empty without duplicates")
            object.__setattr__(self, "joints", tuple(self.joints))
        if self.rate_hz is not None:
            check_positive("DatasetConfig.rate_hz", self.rate_hz)
        check_positive("DatasetConfig.max_gap_s", self.max_gap_s)
        if self.velocity not in VELOCITY_SOURCES:
            raise ValueError(f"DatasetConfig.velocity = {self.velocity!r} must be one of {VELOCITY_SOURCES}")
        if self.time_source not in TIME_SOURCES:
            raise ValueError(f"DatasetConfig.time_source = {self.time_source!r} must be one of {TIME_SOURCES}")
        check_positive("DatasetConfig.savgol_window_s", self.savgol_window_s)
        if not isinstance(self.savgol_order, int) or not 1 <= self.savgol_order <= 5:
            raise ValueError(f"DatasetConfig.savgol_order = {self.savgol_order!r} must be an integer in 1..5")

        check_positive("DatasetConfig.merge_tolerance_s", self.merge_tolerance_s)
        if self.effort_limits is not None:
            bad = {k: v for k, v in dict(self.effort_limits).items() if not (np.isfinite(v) and v > 0)}
            if bad:
                raise ValueError(f"DatasetConfig.effort_limits: limits {bad} must be > 0 [N·m]")
            object.__setattr__(self, "effort_limits", dict(self.effort_limits))

        if self.torque_constants is not None:
            bad = {k: v for k, v in dict(self.torque_constants).items() if not (np.isfinite(v) and v != 0)}
            if bad:
                raise ValueError(f"DatasetConfig.torque_constants: constants {bad} must be finite and non-zero")
            object.__setattr__(self, "torque_constants", dict(self.torque_constants))
        if self.effort_unit is not None and (not isinstance(self.effort_unit, str) or not self.effort_unit.strip()):
            raise ValueError(f"DatasetConfig.effort_unit = {self.effort_unit!r} must be a non-empty string or None")

    def window_samples(self, rate_hz: float) -> int:
        """The Savitzky–Golay window length in samples at ``rate_hz`` [Hz] (odd, >= savgol_order + 2)."""
        n = int(round(self.savgol_window_s * rate_hz))
        n = max(n, self.savgol_order + 2)
        return n if n % 2 else n + 1


@dataclass
class Dataset:
    """Training data built from one or more bags.

    Attributes:
        episodes: uniformly sampled, gap-free episodes (each q/dq/ddq/tau (N, J) in ``joint_names`` order).
        joint_names: (J,) the joints of every episode.
        report: counts and warnings of the cleaning (:class:`~deadzone_id_ros.data.cleaning_report.CleaningReport`;
            ``report.to_dict()`` for JSON).
        config: the configuration used.
        effort_units: {joint: unit of its effort (the training label)}: "N*m" with a torque constant, else the
            configured ``effort_unit`` or the unit guessed from the bags ("N*m", "mA" or "unknown").
        effort_unit_reason: why (the guess's reason, or that the user stated it).
    """

    episodes: list[Episode]
    joint_names: tuple[str, ...]
    report: CleaningReport
    config: DatasetConfig = field(default_factory=DatasetConfig)
    effort_units: dict[str, str] = field(default_factory=dict)
    effort_unit_reason: str = ""

    @property
    def num_samples(self) -> int:
        """Total number of samples over all episodes."""
        return sum(len(ep) for ep in self.episodes)

    def dead_zone(self, episodes: Sequence[Episode] | None = None,
                  dead_zone: DeadZoneConfig | None = None) -> DeadZone:
        """Fit dead-zone thresholds (``dead_zone``: alpha or absolute thresholds; default alpha 0.1) on ``episodes``.

        Pass the training split in training; the default (all episodes) is for inspection only.

        Raises:
            ValueError: ``dead_zone.absolute_thresholds`` does not have one value per joint.
        """
        eps = list(self.episodes if episodes is None else episodes)
        return fit_dead_zone(eps, dead_zone)

    def moving_fractions(self, dead_zone: DeadZoneConfig | None = None) -> dict[str, Any]:
        """Per-joint fraction of samples outside the dead zone, and the fraction with every joint moving.

        Returns ``{"per_joint": {name: fraction}, "all_joints": fraction, "pairs": fraction}`` (fractions in 0..1),
        using :meth:`dead_zone` (with ``dead_zone``) fitted on all episodes.
        """
        dz = self.dead_zone(dead_zone=dead_zone)
        r = np.concatenate([dz.mask(ep.dq) for ep in self.episodes], axis=0)
        return {
            "per_joint": {n: float(r[:, j].mean()) for j, n in enumerate(self.joint_names)},
            "all_joints": float(r.all(axis=1).mean()),
            "pairs": float(r.mean()),
        }


def _check_joint_names(per_bag: list[tuple[str, tuple[str, ...]]]) -> tuple[str, ...]:
    first_bag, names = per_bag[0]
    for bag, other in per_bag[1:]:
        if other != names:
            raise DataError(f"{bag}: joints {list(other)} differ from {first_bag}: {list(names)}; "
                            "pass --joints NAME [NAME ...] to choose the same joints in every bag "
                            "(DatasetConfig.joints in Python)")
    return names


def load_dataset(paths: Sequence[str | Path], config: DatasetConfig | None = None) -> Dataset:
    """Build training episodes from bags (ROS 1 ``.bag``, rosbag2 directories with sqlite3 or MCAP storage).

    Args:
        paths: one or more bags; their episodes are combined (joints must agree; see ``DatasetConfig.joints``).
        config: see :class:`DatasetConfig` (default: auto topic, all usable joints, median rate, 0.1 s gaps).

    Returns:
        a :class:`Dataset` whose ``report`` counts every dropped, sorted, split or recovered item.

    Raises:
        FileNotFoundError: a path does not exist.
        DataError: a bag gives no usable data (names bag, topic, message index, field and joint), or bags disagree
            on the joints.
    """
    config = config or DatasetConfig()
    if isinstance(paths, (str, Path)):
        paths = [paths]
    if not paths:
        raise DataError("load_dataset: no bag given")
    episodes: list[Episode] = []
    reports: list[BagReport] = []
    names: list[tuple[str, tuple[str, ...]]] = []
    guesses: list[tuple[str, str]] = []
    for path in paths:
        with open_bag(path) as handle:
            series = select_joint_state_topic(handle, config.topic)
            eps, joints, rep = build_episodes(series, config)
            rep = replace(rep, bag=str(path), format=handle.format, recovered=handle.recovered,
                          warnings=(*(f"{path}: {n}" for n in handle.notes), *rep.warnings))
            guesses.append(_guess_unit(handle, series, joints, config))
        episodes.extend(eps)
        reports.append(rep)
        names.append((str(path), joints))
    joint_names = _check_joint_names(names)
    unit, why = _combine_guesses(guesses, [str(p) for p in paths])
    if config.effort_unit is not None:
        why = "stated by the user (--effort-unit)"
    units = effort_units(joint_names, unit, effort_unit=config.effort_unit, torque_constants=config.torque_constants)
    return Dataset(episodes=episodes, joint_names=joint_names, report=merge_reports(reports), config=config,
                   effort_units=units, effort_unit_reason=why)


def _guess_unit(handle, series, joints: Sequence[str], config: DatasetConfig) -> tuple[str, str]:
    """(unit, reason) of one bag's effort, from its message types and the largest |effort| of the joints that have
    no torque constant."""
    msgtypes = {c.msgtype for c in handle.reader.connections}
    cols = [series.joint_names.index(j) for j in joints if j not in (config.torque_constants or {})]
    eff = np.abs(np.asarray(series.effort, float)[:, cols]) if cols else np.zeros((0, 0))
    finite = eff[np.isfinite(eff)]
    return guess_effort_unit(msgtypes, float(finite.max()) if finite.size else 0.0)


def _combine_guesses(guesses: Sequence[tuple[str, str]], paths: Sequence[str]) -> tuple[str, str]:
    """One (unit, reason) for several bags: their common guess, else "unknown" naming each bag's."""
    units = {u for u, _ in guesses}
    if len(units) <= 1:
        return guesses[0] if guesses else (NEWTON_METRE, "no bag")
    return UNKNOWN, "the bags disagree: " + "; ".join(f"{p}: {u}" for p, (u, _) in zip(paths, guesses))


def dataset_from_recordings(recordings: Sequence[Recording], config: DatasetConfig | None = None,
                            names: Sequence[str] | None = None) -> Dataset:
    """Build a :class:`Dataset` directly from in-memory recordings (same pipeline as :func:`load_dataset`).

    Args:
        recordings: e.g. from :func:`deadzone_id_ros.sim.offline.simulate`.
        names: a source label per recording (default ``recording0``, ``recording1``, ...).

    Raises:
        DataError: as :func:`load_dataset`.
    """
    config = config or DatasetConfig()
    labels = list(names) if names is not None else [f"recording{i}" for i in range(len(recordings))]
    episodes: list[Episode] = []
    reports, joint_sets = [], []
    for rec, label in zip(recordings, labels):
        eps, joints, rep = build_episodes(series_from_recording(rec, label), config)
        rep = replace(rep, bag=label)
        episodes.extend(eps)
        reports.append(rep)
        joint_sets.append((label, joints))
    if not joint_sets:
        raise DataError("dataset_from_recordings: no recording given")
    joint_names = _check_joint_names(joint_sets)
    unit = config.effort_unit or NEWTON_METRE  # in-memory recordings: the simulator's N·m unless stated
    units = effort_units(joint_names, unit, torque_constants=config.torque_constants)
    return Dataset(episodes, joint_names, merge_reports(reports), config, effort_units=units,
                   effort_unit_reason="in-memory recordings (the simulator's N·m)" if config.effort_unit is None
                   else "stated by the user")
