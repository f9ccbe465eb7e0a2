"""One decoded JointState topic -> clean, uniformly resampled episodes and the bag's report (core, no ROS).

:func:`build_episodes` runs the cleaning stages of :data:`~deadzone_id_ros.data.stages.STAGES` in order (the list
and how to add a stage: :mod:`.stages`) and builds the
:class:`~deadzone_id_ros.data.cleaning_report.BagReport` from the
:class:`~deadzone_id_ros.data.cleaning_log.CleaningLog` they recorded into. Problems that leave nothing usable raise
:class:`~deadzone_id_ros.errors.DataError` naming the bag, topic, message index, field and joint.

The decisions and detectors the stages call are re-exported here, each testable alone: :func:`select_joints`,
:func:`choose_velocity`, :func:`choose_time` (:mod:`.decisions`), :func:`sort_and_dedup`, :func:`drop_nan`
(:mod:`.defects`), :func:`split_and_resample`, :func:`edge_reach` (:mod:`.resample`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from .bag import JointStateSeries
from .cleaning_log import CleaningLog
from .cleaning_report import BagReport
from .decisions import choose_time, choose_velocity, select_joints
from .defects import drop_nan, sort_and_dedup
from .resample import edge_reach, split_and_resample
from .samples import Samples, TopicData
from .stages import STAGES, Stage
from .types import Episode

if TYPE_CHECKING:
    from .dataset_config import DatasetConfig

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


def build_episodes(series: JointStateSeries, config: DatasetConfig, log: CleaningLog | None = None,
                   stages: Sequence[Stage] = STAGES) -> tuple[list[Episode], tuple[str, ...], BagReport]:
    """Clean, split and resample one decoded JointState topic into episodes (every stage of ``stages``, in order).

    Args:
        series: the decoded topic.
        config: the loader settings.
        log: a log holding what was known before cleaning (the label to report the bag under as note ``bag``, the
            bag's ``format``, whether it was ``recovered``, the reader's warnings); default a new one. The stages
            record into it.
        stages: the cleaning stages to run (default, and what every loader runs:
            :data:`~deadzone_id_ros.data.stages.STAGES`).

    Returns:
        (episodes, joint_names (J,), this bag's :class:`BagReport`, built from the log; ``bag`` is the log's note,
        else the series' bag).

    Raises:
        DataError: nothing usable (names bag, topic, message index, field and joint), or joints split across
            publishers that cannot be merged within the tolerance.
    """
    log = CleaningLog() if log is None else log
    log.notes.setdefault("bag", str(series.bag))
    log.note("topic", series.topic)
    data = TopicData.of(series)
    for stage in stages:
        log.stage = stage.__name__
        data = stage(data, config, log)
    return list(data.episodes), data.joints, BagReport.from_log(log)
