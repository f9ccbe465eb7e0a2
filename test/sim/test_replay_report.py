"""The replay report's sentence is generated from its numbers, one test per branch (issue 22: a replay report
showed 3 rad open-loop errors with no word on what they mean)."""

from __future__ import annotations

import numpy as np

from deadzone_id_ros.sim.replay_report import DRIFT_RAD, replay_meaning


def test_open_loop_drift_is_explained_with_the_worst_joint_and_the_span():
    text = replay_meaning("open_loop", ("j1", "j2"), np.array([0.2, 3.1]), 12.0)
    assert "3.1 rad on j2 over 12 s" in text and "not that anything is broken" in text and "--closed-loop" in text


def test_an_open_loop_match_says_the_dynamics_match():
    text = replay_meaning("open_loop", ("j1",), np.array([0.5 * DRIFT_RAD]), 2.0)
    assert "to within 0.025 rad (j1)" in text and "match the recording" in text


def test_closed_loop_says_tracking():
    text = replay_meaning("closed_loop", ("a", "b"), np.array([0.01, 0.002]), 5.0)
    assert "closed loop" in text and "0.01 rad (a)" in text and "tracking error" in text
