"""The one time module: ROS stamp <-> integer ns <-> float s."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from deadzone_id_ros.stamps import NS_PER_S, EpochSeconds, ns_to_s, ns_to_stamp, s_to_ns, stamp_to_ns, stamp_to_s

EPOCH_NS = 1_700_000_000_123_456_789


def test_stamp_ns_round_trip_keeps_every_nanosecond():
    sec, nanosec = ns_to_stamp(EPOCH_NS)
    assert (sec, nanosec) == (1_700_000_000, 123_456_789)
    assert stamp_to_ns(SimpleNamespace(sec=sec, nanosec=nanosec)) == EPOCH_NS
    assert ns_to_stamp(np.int64(1_999_999_999)) == (1, 999_999_999)
    assert ns_to_stamp(-1) == (-1, 999_999_999)  # nanosec stays in 0..1e9-1, as ROS requires


def test_seconds_conversions_match_the_inline_forms_they_replace():
    t = np.array([0, 1, 5_000_000, 1_234_567_891], dtype=np.int64)
    np.testing.assert_array_equal(ns_to_s(t), t * 1e-9)
    assert ns_to_s(1_500_000_000) == 1.5 and ns_to_s(3) == 3 * 1e-9
    assert stamp_to_s(SimpleNamespace(sec=2, nanosec=250_000_000)) == 2.25
    assert s_to_ns(0.0015) == 1_500_000 and isinstance(s_to_ns(0.0015), int)
    assert s_to_ns(1e-10) == 0 and s_to_ns(6e-10) == 1  # rounded to the nearest ns, not truncated
    np.testing.assert_array_equal(s_to_ns(np.array([0.1, 2.5e-9])), [100_000_000, 2])
    assert NS_PER_S * 0.3 == 0.3 * 1e9


def test_increasing_rows_skips_zero_repeated_and_older_stamps():
    from deadzone_id_ros.stamps import increasing_rows

    t = np.array([5, 6, 6, 0, 4, 7, 9], dtype=np.int64)
    np.testing.assert_array_equal(increasing_rows(t), [1, 1, 0, 0, 0, 1, 1])
    np.testing.assert_array_equal(increasing_rows(np.array([0, 1_000_000, 2_000_000])), [1, 1, 1])  # sim time
    np.testing.assert_array_equal(increasing_rows(np.array([0, 1_700_000_000 * NS_PER_S])), [0, 1])  # unset stamp
    assert increasing_rows(np.zeros(0, dtype=np.int64)).shape == (0,)


def test_epoch_seconds_keep_nanoseconds_at_wall_clock_times():
    clock = EpochSeconds()
    t0 = 1_796_092_750_997_751_480  # a wall-clock time [ns]
    assert clock.to_s(t0) == pytest.approx(0.997751480, abs=1e-12) and clock.epoch_ns == 1_796_092_750_000_000_000
    for dt in (1, 999_999, 1_000_007, 3_600_000_000_001):
        assert clock.to_ns(clock.to_s(t0 + dt)) == t0 + dt  # exact round trip
        assert clock.to_s(t0 + dt) - clock.to_s(t0) == pytest.approx(dt * 1e-9, rel=1e-9, abs=1e-15)
    assert clock.text(clock.to_s(t0)) == "1796092750.997751480" and clock.text(None) == "?"
    sim = EpochSeconds()
    assert sim.to_s(350_000_000) == ns_to_s(350_000_000) and sim.epoch_ns == 0  # simulated time from 0: epoch 0
