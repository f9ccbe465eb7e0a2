"""The six stages of build_episodes, each alone on hand-made JointStateSeries (joints, velocity, time, order, NaN,
gaps), and the typed cleaning report."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest
from data_helpers import T0

from deadzone_id_ros.data.bag import JointStateSeries
from deadzone_id_ros.data.cleaning_report import CleaningReport, merge_reports
from deadzone_id_ros.data.dataset import DatasetConfig
from deadzone_id_ros.data.episodes import (
    Samples,
    build_episodes,
    choose_time,
    choose_velocity,
    drop_nan,
    select_joints,
    sort_and_dedup,
    split_and_resample,
)
from deadzone_id_ros.errors import DataError

STEP = 5_000_000  # 200 Hz [ns]


def _series(n=200, names=("a", "b", "c"), stamp=None, log=None, velocity=None, effort=None) -> JointStateSeries:
    """A moving arm: q = sin, dq analytic, tau = 2 q + 1; stamps every 5 ms from T0 (header = log)."""
    t = np.arange(n) * STEP
    phase = np.arange(len(names))
    q = np.sin(2 * np.pi * 1.5 * t[:, None] * 1e-9 + phase)
    dq = 2 * np.pi * 1.5 * np.cos(2 * np.pi * 1.5 * t[:, None] * 1e-9 + phase)
    t_ns = T0 + t
    return JointStateSeries(
        bag="/x/bag", topic="/joint_states", joint_names=tuple(names),
        stamp_ns=t_ns.copy() if stamp is None else stamp, log_ns=t_ns.copy() if log is None else log,
        position=q, velocity=dq if velocity is None else velocity, effort=2 * q + 1 if effort is None else effort,
        index=np.arange(n, dtype=np.int64),
        report={"messages": n, "messages_used": n, "dropped": {}, "joint_order_changes": 0,
                "messages_with_field": {"position": n, "velocity": n, "effort": n}},
    )


def _samples(t_ns, q=None) -> Samples:
    t_ns = np.asarray(t_ns, dtype=np.int64)
    q = np.arange(len(t_ns), dtype=float)[:, None] if q is None else q
    return Samples(t_ns, q, 2 * q, 3 * q, np.arange(len(t_ns)))


# --- stage 1: joints


def test_select_joints_skips_unusable_and_checks_requested():
    s = _series()
    s.effort[:, 1] = 0.0  # joint b: effort never filled
    joints, warnings = select_joints(s, DatasetConfig())
    assert joints == ("a", "c")
    assert warnings == ["/x/bag: topic /joint_states: skipped joint(s) without usable position/effort: "
                        "b (exactly zero in every message)"]
    assert select_joints(s, DatasetConfig(joints=("c", "a"))) == (("c", "a"), [])
    with pytest.raises(DataError, match=r"field effort of joint b: exactly zero in every message"):
        select_joints(s, DatasetConfig(joints=("a", "b")))
    with pytest.raises(DataError, match=r"joint\(s\) \['z'\] not in the messages"):
        select_joints(s, DatasetConfig(joints=("z",)))


# --- stage 2: velocity


def test_choose_velocity_message_or_derivative():
    good = _series()
    assert choose_velocity(good, ("a", "b", "c"), DatasetConfig()) == (True, [])
    assert choose_velocity(good, ("a", "b", "c"), DatasetConfig(velocity="differentiate")) == (False, [])
    vel = good.velocity.copy()
    vel[:, 2] = np.nan
    bad = _series(velocity=vel)
    use, warnings = choose_velocity(bad, ("a", "b", "c"), DatasetConfig())
    assert use is False and len(warnings) == 1 and "c: NaN in every message" in warnings[0]
    assert choose_velocity(bad, ("a", "b"), DatasetConfig()) == (True, [])  # c not used: its velocity is irrelevant
    with pytest.raises(DataError, match=r"field velocity unusable for \['c \(NaN in every message\)'\]"):
        choose_velocity(bad, ("a", "b", "c"), DatasetConfig(velocity="message"))


# --- stage 3: time


def test_choose_time_header_log_and_fallback():
    s = _series(n=10, log=T0 + 7 + np.arange(10) * STEP)
    t, src, fallback, warnings = choose_time(s, DatasetConfig())
    np.testing.assert_array_equal(t, s.stamp_ns)
    assert (src, fallback, warnings) == ("header", False, [])
    t, src, fallback, warnings = choose_time(s, DatasetConfig(time_source="log"))
    np.testing.assert_array_equal(t, s.log_ns)
    assert (src, fallback, warnings) == ("log", False, [])
    stamp = s.stamp_ns.copy()
    stamp[3:5] = 0
    z = _series(n=10, stamp=stamp, log=s.log_ns)
    t, src, fallback, warnings = choose_time(z, DatasetConfig())
    np.testing.assert_array_equal(t, z.log_ns)
    assert (src, fallback) == ("log", True)
    assert warnings == ["/x/bag: topic /joint_states: 2 message(s) have a zero header stamp (first: message 3); "
                        "using log (receive) time for this topic"]
    with pytest.raises(DataError, match=r"message 3 field header.stamp is zero"):
        choose_time(z, DatasetConfig(time_source="header"))


# --- stage 4: order, duplicates


def test_sort_and_dedup_counts_and_keeps_first():
    t = T0 + np.array([0, 1, 3, 2, 3, 3, 4]) * STEP
    q = np.array([0.0, 1.0, 3.0, 2.0, 3.0, 9.0, 4.0])[:, None]  # row 4 repeats row 2 exactly; row 5 conflicts
    s, keep, counts, warnings = sort_and_dedup(_samples(t, q), "W")
    np.testing.assert_array_equal(s.t_ns, np.sort(t))
    np.testing.assert_array_equal(s.msg_index, [0, 1, 3, 2, 4, 5, 6])  # stable: equal stamps keep bag order
    np.testing.assert_array_equal(keep, [True, True, True, True, False, False, True])
    assert counts == {"out_of_order_sorted": 1, "duplicates_dropped": 1, "same_stamp_conflicts_dropped": 1}
    assert warnings[0] == "W: 1 message(s) out of stamp order (first: message 3); sorted by stamp"
    assert warnings[1].startswith("W: dropped 1 exact duplicate(s) and 1 message(s) repeating a stamp")
    s, keep, counts, warnings = sort_and_dedup(_samples(T0 + np.arange(5) * STEP), "W")
    assert keep.all() and warnings == [] and set(counts.values()) == {0}


# --- stage 5: NaN


def test_drop_nan_counts_only_kept_rows_and_message_velocity_when_used():
    s = _samples(T0 + np.arange(6) * STEP)
    q, vel = s.q.copy(), s.vel.copy()
    q[1] = np.nan
    q[4] = np.inf
    vel[2] = np.nan
    s = Samples(s.t_ns, q, s.tau, vel, s.msg_index)
    keep = np.array([True, True, True, True, False, True])  # row 4 is a duplicate already: not counted again
    out, dropped, warnings = drop_nan(s, keep, use_msg_vel=False, where="W")
    assert dropped == 1 and warnings == ["W: dropped 1 sample(s) with NaN/inf or a missing value (first: message 1)"]
    np.testing.assert_array_equal(out.msg_index, [0, 2, 3, 5])
    out, dropped, _ = drop_nan(s, keep, use_msg_vel=True, where="W")
    assert dropped == 2
    np.testing.assert_array_equal(out.msg_index, [0, 3, 5])


# --- stage 6: gaps, resampling


def test_split_and_resample_splits_at_gaps_and_drops_short_segments():
    series = _series(n=400)
    t = series.stamp_ns.copy()
    t[200:] += 500_000_000  # a 0.5 s hole after 1 s
    t[390:] += 500_000_000  # a second hole leaving a 10-sample segment, shorter than the window
    s = Samples(t, series.position, series.effort, series.velocity, series.index)
    cfg = DatasetConfig(max_gap_s=0.1, savgol_window_s=0.1)  # 21 samples at 200 Hz
    res = split_and_resample(s, series, ("a", "b", "c"), True, cfg)
    assert res.rate_hz == pytest.approx(200.0, rel=1e-12) and res.median_step_s == pytest.approx(0.005, rel=1e-12)
    assert (res.gaps_split, res.window, res.short_segments_dropped) == (2, 21, 1)
    first, second = res.episodes
    assert (len(first), len(second)) == (200, 190)
    assert first.name == "bag#0" and second.name == "bag#1"
    assert first.t[-1] == pytest.approx(0.995) and second.t[0] == pytest.approx(1.5)  # nothing inside the hole
    np.testing.assert_allclose(np.diff(second.t), 0.005, rtol=1e-9)
    np.testing.assert_array_equal(first.q, series.position[:200])  # on-grid stamps: interpolation is exact
    assert any("2 gap(s) longer than max_gap_s = 0.1 s" in w for w in res.warnings)
    assert any("dropped 1 segment(s) (10 messages) shorter" in w for w in res.warnings)
    with pytest.raises(DataError, match=r"no segment is longer than the Savitzky–Golay window \(201 samples"):
        split_and_resample(s, series, ("a", "b", "c"), True, DatasetConfig(savgol_window_s=1.0))


def test_split_and_resample_differentiates_position_when_told():
    series = _series(n=400)
    s = Samples(series.stamp_ns, series.position, series.effort, series.velocity, series.index)
    (ep,) = split_and_resample(s, series, ("a", "b", "c"), False, DatasetConfig()).episodes
    inner = slice(20, -20)
    np.testing.assert_allclose(ep.dq[inner], series.velocity[inner], atol=1e-4)  # Savitzky–Golay of a smooth sine
    assert not np.array_equal(ep.dq, series.velocity)


# --- the typed report


def test_build_episodes_report_is_typed_and_merges():
    s = _series(n=400)
    _, joints, rep = build_episodes(s, DatasetConfig())
    assert joints == ("a", "b", "c") and rep.samples == 400 and rep.episodes == 1
    assert (rep.velocity_source, rep.time_source, rep.log_time_fallback) == ("message", "header", False)
    with pytest.raises(dataclasses.FrozenInstanceError):
        rep.samples = 3  # type: ignore[misc]
    other = dataclasses.replace(rep, bag="/y/bag", samples=100, nan_samples_dropped=2, recovered=True,
                                warnings=("w",), velocity_source="savgol derivative of position")
    total = merge_reports([rep, other], extra_warnings=["first"])
    assert isinstance(total, CleaningReport)
    assert (total.samples, total.episodes, total.nan_samples_dropped) == (500, 2, 2)
    assert total.recovered == ("/y/bag",) and total.log_time_fallback == ()
    assert total.velocity_source == {"/x/bag": "message", "/y/bag": "savgol derivative of position"}
    assert total.warnings == ("first", "w")
    d = json.loads(json.dumps(total.to_dict()))  # JSON-ready
    assert list(d)[:3] == ["bags", "episodes", "samples"] and d["bags"]["/y/bag"]["warnings"] == ["w"]
    assert d["samples"] == 500 and d["bags"]["/x/bag"]["joints_skipped"] == []
