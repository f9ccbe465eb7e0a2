"""The cleaning pipeline as one ordered list of stages writing into a log, and the report built from that log:
a stage added to the list is reported (counts summed over bags, in JSON and inspect's counts) with no other edit."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest
from data_helpers import T0

from deadzone_id_ros.data.bag import JointStateSeries
from deadzone_id_ros.data.cleaning_log import CleaningLog
from deadzone_id_ros.data.cleaning_report import COUNT_FIELDS, BagReport, merge_reports
from deadzone_id_ros.data.dataset_config import DatasetConfig
from deadzone_id_ros.data.episodes import build_episodes
from deadzone_id_ros.data.samples import Samples, TopicData
from deadzone_id_ros.data.stages import STAGES, drop_invalid, make_samples, sort_runs, split_resets, stamp_time
from deadzone_id_ros.errors import DataError

STEP = 5_000_000  # 200 Hz [ns]


def _series(n: int = 400, names=("a", "b")) -> JointStateSeries:
    """A moving arm: q = sin (rad), dq analytic (rad/s), tau = 2 q + 1 (N·m); stamps every 5 ms (header = log)."""
    t = np.arange(n) * STEP
    arg = 2 * np.pi * 1.5 * t[:, None] * 1e-9 + np.arange(len(names))
    q = np.sin(arg)
    return JointStateSeries(bag="/x/bag", topic="/joint_states", joint_names=tuple(names), stamp_ns=T0 + t,
                            log_ns=T0 + t, position=q, velocity=2 * np.pi * 1.5 * np.cos(arg), effort=2 * q + 1,
                            index=np.arange(n), report={"messages": n})


def test_each_warning_is_tagged_with_the_stage_that_wrote_it():
    s = _series()
    s.stamp_ns[5] = s.stamp_ns[4]  # a same-stamp conflict
    s.stamp_ns[7] = 0  # an unset stamp
    s.stamp_ns[200:] += 300_000_000  # a gap of 0.3 s
    log = CleaningLog()
    _, _, rep = build_episodes(s, DatasetConfig(), log)
    assert [stage for stage, _ in log.entries] == ["stamp_time", "sort_runs", "resample"]
    assert "zero header stamp" in log.entries[0][1] and "repeating a stamp" in log.entries[1][1]
    assert "1 gap(s) longer than max_gap_s" in log.entries[2][1]
    assert rep.warnings == log.warnings and (rep.zero_stamps_dropped, rep.same_stamp_conflicts_dropped,
                                             rep.gaps_split, rep.episodes) == (1, 1, 1, 2)


def test_fewer_than_two_usable_samples_names_the_warnings_of_the_runs_only():
    s = _series(200)
    s.effort[1:, 0] = np.nan  # every sample but the first
    s.stamp_ns[5] = s.stamp_ns[4]
    s.stamp_ns[7] = 0  # warned by stamp_time: not a run's warning, so not in the message
    log = CleaningLog()
    with pytest.raises(DataError) as err:
        build_episodes(s, DatasetConfig(), log)
    runs = log.warnings_of(split_resets, sort_runs, drop_invalid)
    assert len(runs) == 2 and "zero header stamp" in log.warnings[0] and log.warnings[0] not in str(err.value)
    assert str(err.value) == ("/x/bag: topic /joint_states: fewer than 2 usable samples after cleaning (see report "
                              f"warnings: {runs})")
    assert "dropped 197 sample(s) with NaN/inf" in runs[1]


def _flag_saturated(data: TopicData, config: DatasetConfig, log: CleaningLog) -> TopicData:
    """A new bag quirk: samples whose |effort| reaches the joint's effort limit (a saturated drive: the torque label
    is the limit, not the torque) are dropped."""
    limits = np.asarray([(config.effort_limits or {}).get(j, np.inf) for j in data.joints])
    runs = []
    for run in data.runs:
        saturated = (np.abs(run.tau) >= limits).any(axis=1)
        log.count("effort_saturated_dropped", int(saturated.sum()))
        if saturated.any():
            log.warn(f"{data.where}: dropped {int(saturated.sum())} sample(s) with saturated effort (first: message "
                     f"{int(run.msg_index[saturated][0])})")
        runs.append(run.take(~saturated))
    return replace(data, runs=tuple(runs))


def test_a_new_stage_is_one_function_in_the_list_and_is_reported_without_other_edits():
    stages = list(STAGES)
    stages.insert(stages.index(drop_invalid), _flag_saturated)
    s = _series()
    s.effort[-50:, 0] = 9.0  # the drive saturates for the last 50 messages
    config = DatasetConfig(effort_limits={"a": 9.0, "b": 9.0})
    _, _, rep = build_episodes(s, config, stages=stages)
    _, _, plain = build_episodes(s, config)
    n = rep.extra_counts["effort_saturated_dropped"]
    assert (n, rep.samples, plain.samples, plain.extra_counts) == (50, 350, 400, {})  # found, dropped, counted
    assert "effort_saturated_dropped" not in COUNT_FIELDS and rep.counts()["effort_saturated_dropped"] == n
    assert rep.warnings[-1] == ("/x/bag: topic /joint_states: dropped 50 sample(s) with saturated effort (first: "
                                "message 350)")
    d = json.loads(json.dumps(rep.to_dict()))
    assert d["effort_saturated_dropped"] == n and "extra_counts" not in d  # a top-level count, as any other
    total = merge_reports([rep, replace(rep, bag="/y/bag")])
    assert total.extra_counts == {"effort_saturated_dropped": 2 * n}
    assert json.loads(json.dumps(total.to_dict()))["effort_saturated_dropped"] == 2 * n


def test_the_report_without_extra_counts_has_the_keys_it_always_had():
    _, _, rep = build_episodes(_series(), DatasetConfig())
    keys = list(rep.to_dict())
    assert "extra_counts" not in keys and keys[:3] == ["bag", "topic", "messages"]
    assert keys[-2:] == ["zero_stamps_dropped", "velocity_mismatch"] and len(keys) == 31
    total = merge_reports([rep]).to_dict()
    assert "extra_counts" not in total and list(total)[-5:] == ["zero_stamps_dropped", "log_time_fallback",
                                                                "recovered", "velocity_source", "warnings"]


def test_report_from_log_refuses_notes_without_a_field_and_names_used_twice():
    _, _, rep = build_episodes(_series(), DatasetConfig())
    log = CleaningLog()
    log.note("effort_offset", 0.1)
    with pytest.raises(ValueError, match=r"notes \['effort_offset'\] are not BagReport fields"):
        BagReport.from_log(log)
    log = CleaningLog(notes={"episodes": 1}, counts={"episodes": 1})
    with pytest.raises(ValueError, match=r"names \['episodes'\] are both notes and counts"):
        BagReport.from_log(log)
    with pytest.raises(TypeError, match="rate_hz"):  # a stage that records rate_hz did not run
        BagReport.from_log(CleaningLog(notes={k: v for k, v in rep.to_dict().items() if k not in (
            "rate_hz", "warnings", *COUNT_FIELDS, "samples", "episodes")}))


def test_counts_add_up_and_refuse_negative_values():
    log = CleaningLog(stage="sort_runs")
    log.count("duplicates_dropped", 2)
    log.count("duplicates_dropped", 3)
    log.count("out_of_order_sorted", 0)
    assert log.counts == {"duplicates_dropped": 5, "out_of_order_sorted": 0}
    with pytest.raises(ValueError, match=r"cleaning stage 'sort_runs': count duplicates_dropped = -1 must be >= 0"):
        log.count("duplicates_dropped", -1)


def test_a_stage_alone_takes_and_returns_the_topic_data():
    s = _series(10)
    s.stamp_ns[3] = 0
    log = CleaningLog(stage="stamp_time")
    data = stamp_time(TopicData.of(s), DatasetConfig(), log)
    assert len(data.series) == 9 and np.array_equal(data.t_ns, np.delete(s.stamp_ns, 3))
    assert log.counts == {"zero_stamps_dropped": 1} and log.notes == {"time_source": "header",
                                                                      "log_time_fallback": False}
    data = make_samples(replace(data, joints=("b",)), DatasetConfig(torque_constants={"b": 2.0}), log)
    (run,) = data.runs
    assert isinstance(run, Samples) and run.tau.shape == (9, 1)
    np.testing.assert_array_equal(run.tau[:, 0], 2.0 * np.delete(s.effort[:, 1], 3))
