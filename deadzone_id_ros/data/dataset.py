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

Steps 1–3 live in :mod:`.bag`, steps 4–6 in :mod:`.stages` (one ordered list of stage functions, run by
:func:`~deadzone_id_ros.data.episodes.build_episodes`; the settings: :class:`~.dataset_config.DatasetConfig`).

Every problem met on the way is counted in ``Dataset.report``; problems that leave nothing usable raise
:class:`~deadzone_id_ros.errors.DataError` naming the bag, topic, message index and field. Dead-zone masks
(``|dq_ij| > alpha * sigma_j``, Inami, Yamane, Sakaino, arXiv 2402.00393) come from :meth:`Dataset.dead_zone`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypedDict

import numpy as np

from ..errors import DataError
from .bag import JointStateSeries, open_bag, select_joint_state_topic, series_from_recording
from .cleaning_log import CleaningLog
from .cleaning_report import BagReport, CleaningReport, merge_reports
from .dataset_config import TIME_SOURCES, VELOCITY_SOURCES, DatasetConfig
from .deadzone import DeadZone, DeadZoneConfig, fit_dead_zone
from .effort_units import NEWTON_METRE, UNKNOWN, effort_units, guess_effort_units
from .episodes import build_episodes
from .types import Episode, Recording

__all__ = [
    "TIME_SOURCES",
    "VELOCITY_SOURCES",
    "BagLoad",
    "Dataset",
    "DatasetConfig",
    "bag_effort_units",
    "dataset_from_recordings",
    "load_bag",
    "load_dataset",
    "recorded_effort_unit",
]


class MovingFractions(TypedDict):
    """Fractions (0..1) of a data set outside the dead zone: per joint, of samples with every joint moving
    (``all_joints``) and of (sample, joint) pairs (``pairs``)."""

    per_joint: dict[str, float]
    all_joints: float
    pairs: float

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

    def moving_fractions(self, dead_zone: DeadZoneConfig | None = None) -> MovingFractions:
        """Per-joint fraction of samples outside the dead zone, and the fraction with every joint moving.

        Returns ``{"per_joint": {name: fraction}, "all_joints": fraction, "pairs": fraction}`` (fractions in 0..1),
        using :meth:`dead_zone` (with ``dead_zone``) fitted on all episodes.
        """
        dz = self.dead_zone(dead_zone=dead_zone)
        r = np.concatenate([dz.mask(ep.dq) for ep in self.episodes], axis=0)
        return MovingFractions(per_joint={n: float(r[:, j].mean()) for j, n in enumerate(self.joint_names)},
                               all_joints=float(r.all(axis=1).mean()), pairs=float(r.mean()))


def _check_joint_names(per_bag: list[tuple[str, tuple[str, ...]]]) -> tuple[str, ...]:
    first_bag, names = per_bag[0]
    for bag, other in per_bag[1:]:
        if other != names:
            raise DataError(f"{bag}: joints {list(other)} differ from {first_bag}: {list(names)}; "
                            "pass --joints NAME [NAME ...] to choose the same joints in every bag "
                            "(DatasetConfig.joints in Python)")
    return names


@dataclass(frozen=True)
class BagLoad:
    """One bag's part of a data set (:func:`load_bag`), as a Ray ingest task hands it back.

    Attributes:
        path: the bag as given.  episodes: its episodes (q/dq/ddq/tau (N, J) in ``joints`` order).
        joints: (J,) its joints.  report: its cleaning report (:class:`~.cleaning_report.BagReport`).
        unit: ({joint: unit}, reason) guessed for its effort, per joint.
    """

    path: str
    episodes: list[Episode]
    joints: tuple[str, ...]
    report: BagReport
    unit: tuple[dict[str, str], str]


def load_bag(path: str | Path, config: DatasetConfig) -> BagLoad:
    """Open, clean and resample one bag (steps 1-6 of the module docstring).

    Raises:
        FileNotFoundError: ``path`` does not exist.  DataError: the bag gives no usable data (names bag, topic,
            message index, field and joint).
    """
    with open_bag(path) as handle:
        series = select_joint_state_topic(handle, config.topic)
        log = CleaningLog(stage="open_bag")  # what reading found comes first in the report
        log.note("bag", str(path))
        log.note("format", handle.format)
        log.note("recovered", handle.recovered)
        log.warn(*(f"{path}: {n}" for n in handle.notes))
        eps, joints, rep = build_episodes(series, config, log)
        unit = bag_effort_units(path, {c.msgtype for c in handle.reader.connections}, series, joints, config)
    return BagLoad(str(path), eps, tuple(joints), rep, unit)


def _load_bag_task(arg: tuple[str | Path, DatasetConfig]) -> BagLoad:
    """:func:`load_bag` as an engine cell (module level, so that Ray pickles it by reference)."""
    return load_bag(*arg)


def _load_bags_as_tasks(paths: Sequence[str | Path], config: DatasetConfig, engine: str, address: str | None,
                        num_cpus: int | None, log: Callable[[str], None]) -> list[BagLoad]:
    """One :func:`~deadzone_id_ros.engine.run_cells` task per bag; each bag's cleaning report is logged
    as it arrives; the first failed bag's own error is raised (after every task ended)."""
    from ..engine import CellOutcome, run_cells

    def done(o: CellOutcome[BagLoad]) -> None:
        if o.result is not None:
            r = o.result.report
            log(f"ingest {o.result.path}: {r.episodes} episode(s), {r.samples} samples in {o.seconds:.1f} s"
                + (f"; {len(r.warnings)} warning(s)" if r.warnings else ""))

    cells = {f"bag{i}:{p}": (p, config) for i, p in enumerate(paths)}
    outcomes = run_cells(_load_bag_task, cells, engine=engine, address=address, num_cpus=num_cpus, on_done=done,
                         log=log)
    for o in outcomes:
        if o.error is not None:
            raise o.error
    return [o.result for o in outcomes if o.result is not None]


def load_dataset(paths: Sequence[str | Path], config: DatasetConfig | None = None, *, engine: str = "local",
                 address: str | None = None, num_cpus: int | None = None,
                 log: Callable[[str], None] = print) -> Dataset:
    """Build training episodes from bags (ROS 1 ``.bag``, rosbag2 directories with sqlite3 or MCAP storage).

    Args:
        paths: one or more bags; their episodes are combined (joints must agree; see ``DatasetConfig.joints``).
        config: see :class:`DatasetConfig` (default: auto topic, all usable joints, median rate, 0.1 s gaps).
        engine: "local" (default: the bags one after the other in this process) or "ray": one Ray task per bag
            (:func:`~deadzone_id_ros.engine.run_cells` with ``address`` and ``num_cpus`` as there; the
            workers read the bags, so they need them at the same paths), each bag's cleaning report sent to ``log``.

    Returns:
        a :class:`Dataset` whose ``report`` counts every dropped, sorted, split or recovered item.

    Raises:
        FileNotFoundError: a path does not exist.
        DataError: a bag gives no usable data (names bag, topic, message index, field and joint), or bags disagree
            on the joints.
        ConfigError: an unknown engine, or Ray missing (from ``run_cells``).
    """
    config = config or DatasetConfig()
    if isinstance(paths, (str, Path)):
        paths = [paths]
    if not paths:
        raise DataError("load_dataset: no bag given")
    if engine == "local":
        loads = [load_bag(path, config) for path in paths]
    else:
        loads = _load_bags_as_tasks(paths, config, engine, address, num_cpus, log)
    joint_names = _check_joint_names([(b.path, b.joints) for b in loads])
    unit, why = _combine_guesses([b.unit for b in loads], [str(p) for p in paths])
    if config.effort_unit is not None:
        why = "stated by the user (--effort-unit)"
    units = effort_units(joint_names, unit, effort_unit=config.effort_unit, torque_constants=config.torque_constants)
    return Dataset(episodes=[ep for b in loads for ep in b.episodes], joint_names=joint_names,
                   report=merge_reports([b.report for b in loads]), config=config, effort_units=units,
                   effort_unit_reason=why)


def bag_effort_units(path: str | Path, msgtypes: set[str], series: JointStateSeries, joints: Sequence[str],
                     config: DatasetConfig) -> tuple[dict[str, str], str]:
    """({joint: unit}, reason) of one bag's effort as recorded, the one rule of the loader and ``inspect``: the unit
    the bag's episode.yaml states (:func:`recorded_effort_unit`), else guessed from its message types and each
    joint's own largest |effort| and whether every effort is a whole number
    (:func:`~.effort_units.guess_effort_units`); joints with a torque constant are not judged (N·m by it, later).

    Args:
        path: the bag.  msgtypes: its message type names.  series: its selected /joint_states series.
        joints: (J,) the joints used.  config: the loader settings (``torque_constants``).
    """
    stated = recorded_effort_unit(path)
    if stated:
        return dict.fromkeys(joints, stated[0]), stated[1]
    effort = np.abs(np.asarray(series.effort, float))
    peaks: dict[str, float] = {}
    whole = True
    for j in joints:
        if j in (config.torque_constants or {}):
            continue
        col = effort[:, series.joint_names.index(j)] if effort.ndim == 2 and len(effort) else np.zeros(0)
        finite = col[np.isfinite(col)]
        peaks[j] = float(finite.max()) if finite.size else 0.0
        whole = whole and bool(np.all(finite == np.round(finite)))
    units, why = guess_effort_units(msgtypes, peaks, whole_numbers=whole and any(peaks.values()))
    return {j: units.get(j, NEWTON_METRE) for j in joints}, why


def recorded_effort_unit(path: str | Path) -> tuple[str, str] | None:
    """(unit, reason) of the effort as the bag's episode.yaml states it (``effort_unit``: a converted LeRobot
    dataset's servo load or current), or None when it states none."""
    import yaml

    p = Path(path)
    doc_path = p / "episode.yaml" if p.is_dir() else p.parent / "episode.yaml"
    try:
        doc = yaml.safe_load(doc_path.read_text()) if doc_path.is_file() else None
    except (OSError, yaml.YAMLError):
        return None
    if not isinstance(doc, dict):
        return None
    unit = doc.get("effort_unit")
    if not isinstance(unit, str) or not unit:
        return None
    return unit, f"stated in {doc_path}: {doc.get('effort_unit_reason') or 'effort_unit'}"


def _combine_guesses(guesses: Sequence[tuple[dict[str, str], str]], paths: Sequence[str]
                     ) -> tuple[dict[str, str], str]:
    """One ({joint: unit}, reason) for several bags: per joint their common guess, else "unknown" naming each bag's
    guess of that joint."""
    if not guesses:
        return {}, "no bag"
    out: dict[str, str] = {}
    disagree: list[str] = []
    for joint in guesses[0][0]:
        units = {g[0].get(joint, UNKNOWN) for g in guesses}
        out[joint] = units.pop() if len(units) == 1 else UNKNOWN
        if out[joint] == UNKNOWN and len({g[0].get(joint) for g in guesses}) > 1:
            disagree.append(f"{joint} (" + "; ".join(f"{p}: {g[0].get(joint)}" for p, g in zip(paths, guesses))
                            + ")")
    reasons = list(dict.fromkeys(g[1] for g in guesses))
    why = "; ".join(reasons) + (f"; the bags disagree on {', '.join(disagree)}" if disagree else "")
    return out, why


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
        log = CleaningLog()
        log.note("bag", label)
        eps, joints, rep = build_episodes(series_from_recording(rec, label), config, log)
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
