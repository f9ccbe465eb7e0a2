"""The controller's per-tick command limits (control/limits.py) against numpy's clips."""

from __future__ import annotations

import numpy as np

from deadzone_id_ros.control.limits import all_finite, rate_limit_and_clamp


def test_rate_limit_and_clamp_is_bit_identical_to_numpy_and_counts_events():
    rng = np.random.default_rng(3)
    rate_events, clamp_events = np.zeros(4, dtype=np.int64), np.zeros(4, dtype=np.int64)
    want_rate, want_clamp = np.zeros(4, dtype=np.int64), np.zeros(4, dtype=np.int64)
    for _ in range(2000):
        x, prev = rng.normal(0.0, 5.0, 4), rng.normal(0.0, 5.0, 4)
        rate, limit, dt = rng.uniform(0.0, 2000.0, 4), rng.uniform(0.5, 8.0, 4), float(rng.uniform(0.0, 0.003))
        x[0] = prev[0] + rate[0] * dt  # exactly on the rate bound: not an event
        step = rate * dt
        limited = np.clip(x, prev - step, prev + step)
        want = np.clip(limited, -limit, limit)
        want_rate += (x < prev - step) | (x > prev + step)
        want_clamp += np.abs(limited) > limit
        got = rate_limit_and_clamp(x.tolist(), prev.tolist(), rate.tolist(), limit.tolist(), dt, rate_events,
                                   clamp_events)
        assert got.dtype == np.float64 and got.tobytes() == want.tobytes()
    np.testing.assert_array_equal(rate_events, want_rate)
    np.testing.assert_array_equal(clamp_events, want_clamp)
    assert rate_events[1:].min() > 0 and clamp_events.min() > 0  # both limits were exercised on every joint


def test_all_finite():
    assert all_finite(np.array([0.0, -1e300, 2.0]))
    for bad in (np.nan, np.inf, -np.inf):
        assert not all_finite(np.array([0.0, bad, 2.0]))
