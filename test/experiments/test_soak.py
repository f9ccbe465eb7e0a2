"""Shortened soak (the full one: bench/bench_soak.py): the controller against the simulated arm with random reference
switches, live parameter sets, measurement gaps, NaNs and runaways; no command breaks the clamp or the rate limit,
none is NaN, and the safe state is entered exactly on the ticks where a limit is crossed."""

from __future__ import annotations

import pytest

from deadzone_id_ros.experiments.soak.run import run_soak


def test_short_soak_keeps_every_limit():
    res = run_soak(15.0, seed=3)
    assert res.violations == []
    # the run exercised what it claims to
    assert res.reference_switches >= 2 and res.parameter_sets >= 3 and res.gaps >= 3
    assert res.faults >= 1 and res.faults == res.expected_faults
    assert res.resets >= 1
    assert res.max_clamp_ratio <= 1.0 and res.max_rate_ratio <= 1.0 + 1e-9


def test_soak_refuses_a_duration_that_is_not_a_positive_number():
    for bad in (0.0, -1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError, match=f"duration = {bad!r} must be a positive number"):
            run_soak(bad)
