"""Limits that hold on every path (issue 12): the rate limit after a gap, the runaway safe state and its reset, live
parameter changes, and the DOB cutoff bound. Each test drives the controller where the unprotected law breaks the
limit."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from deadzone_id_ros.control import FeedforwardController, SafetyMonitor, dob_cutoff_limit
from deadzone_id_ros.control.feedforward_controller_params import load_controller_config
from deadzone_id_ros.errors import ConfigError
from deadzone_id_ros.models.runtime import NominalRigidBodyModel
from deadzone_id_ros.resources import default_urdf
from deadzone_id_ros.robot_configs import bundled_controller_config

NAMES = ("joint1", "joint2", "joint3")
Q0 = np.array([0.0, 0.3, 0.6])
RATE = np.array([100.0, 200.0, 50.0])


def make(**kw) -> FeedforwardController:
    cfg = bundled_controller_config(**{"mode": "pd", "model": "rbd", "torque_rate_limit": tuple(RATE), **kw})
    return FeedforwardController(cfg, NominalRigidBodyModel(default_urdf(), NAMES))


# ---- item 1: the rate limit after a gap ---------------------------------------------------------------------------
def test_first_command_after_a_stamp_gap_ramps():
    ctrl = make(tracking_error_limit=1.0)
    ctrl.step(0.0, Q0, np.zeros(3))
    prev = ctrl.parts.command.copy()
    # 0.4 rad error asks for Jn kp 0.4 = 4.8 / 14.4 / 1.8 N m; a 1 s gap would allow rate * 1 s = 100 N m
    tau = ctrl.step(1.0, Q0 - 0.4, np.zeros(3))
    assert np.all(np.abs(tau - prev) <= RATE * ctrl.config.rate_limit_max_period + 1e-12)
    assert np.all(np.abs(tau - prev) > 0.5 * RATE * ctrl.config.rate_limit_max_period)  # it does move, at the cap


def test_first_command_after_the_watchdog_zero_ramps_from_zero():
    ctrl = make(torque_rate_limit=(300.0,) * 3, watchdog_timeout=0.05, watchdog_hold_time=0.1)
    for k in range(5):
        ctrl.step(0.001 * k, Q0, np.zeros(3))
    ctrl.check_watchdog(0.1)
    np.testing.assert_array_equal(ctrl.check_watchdog(0.5), np.zeros(3))  # zero torque
    # resume 0.3 rad off target: Jn kp 0.3 = 3.6 / 10.8 / 1.3 N m wanted at once, 0.6 N m allowed per capped period
    tau = ctrl.step(0.6, Q0 - 0.3, np.zeros(3))
    np.testing.assert_allclose(np.abs(tau), 300.0 * ctrl.config.rate_limit_max_period, rtol=1e-12)


def test_rate_limit_counts_from_the_last_watchdog_command():
    """After a gap the watchdog commands zero at t = 0.499; a state stamped 1 ms later may move the command by rate x
    1 ms, not rate x rate_limit_max_period (what the stamp gap alone would allow): the limit holds on the wire."""
    ctrl = make(torque_rate_limit=(300.0,) * 3, watchdog_timeout=0.05, watchdog_hold_time=0.1)
    for k in range(5):
        ctrl.step(0.001 * k, Q0, np.zeros(3))
    ctrl.check_watchdog(0.1)
    np.testing.assert_array_equal(ctrl.check_watchdog(0.499), np.zeros(3))
    tau = ctrl.step(0.500, Q0 - 0.3, np.zeros(3))
    np.testing.assert_allclose(np.abs(tau), 300.0 * 0.001, rtol=1e-9)


def test_a_command_no_later_than_the_previous_one_does_not_move():
    """No time since the previous command (a state stamped at the watchdog's time, or a non-finite stamp): the rate
    limit allows no change at all."""
    ctrl = make(torque_rate_limit=(300.0,) * 3, watchdog_timeout=0.05, watchdog_hold_time=10.0)
    for k in range(5):
        ctrl.step(0.001 * k, Q0, np.zeros(3))
    held = ctrl.check_watchdog(0.5)  # hold: ramps from the last command toward the static torque
    np.testing.assert_array_equal(ctrl.step(0.5, Q0 - 0.3, np.zeros(3)), held)
    np.testing.assert_array_equal(ctrl.step(math.nan, Q0 - 0.3, np.zeros(3)), held)
    assert np.any(ctrl.step(0.501, Q0 - 0.3, np.zeros(3)) != held)  # 1 ms later it moves again


def test_rate_limit_holds_across_a_live_parameter_change():
    ctrl = make(tracking_error_limit=1.0)
    ctrl.step(0.0, Q0, np.zeros(3))
    faster = np.array([1e3, 2e3, 5e2])
    ctrl.update_config(dataclasses.replace(ctrl.config, torque_rate_limit=tuple(faster), kp=(2000.0,) * 3))
    prev = ctrl.parts.command.copy()
    tau = ctrl.step(0.5, Q0 - 0.4, np.zeros(3))  # a gap and a new gain at once
    assert np.all(np.abs(tau - prev) <= faster * ctrl.config.rate_limit_max_period + 1e-12)
    with pytest.raises(ValueError, match="mode cannot change while the controller runs"):
        ctrl.update_config(dataclasses.replace(ctrl.config, mode="pd_dob"))


# ---- item 3: runaway -> safe state -> explicit reset --------------------------------------------------------------
def test_tracking_error_limit_latches_hold_then_zero_until_reset():
    ctrl = make(tracking_error_limit=0.1, fault_hold_time=0.05, torque_rate_limit=(1e3,) * 3)
    t, q = 0.0, Q0.copy()
    for k in range(10):  # drift away from the held position by 20 mrad per tick: crosses 0.1 rad at tick 6
        t = 0.001 * k
        q = Q0 - np.array([0.0, 0.02 * k, 0.0])
        ctrl.step(t, q, np.zeros(3))
        tripped = 0.02 * k > 0.1 + 1e-12
        assert (ctrl.status.safe_state != "ok") == tripped, k
        if k == 6:
            assert ctrl.status.fault.startswith("tracking error of joint2 |q_d - q| = 0.1200 rad exceeds")
    for k in range(10, 15):  # hold at q: ramps (rate-limited) to the static torque, gravity at q
        ctrl.step(0.001 * k, q, np.zeros(3))
    np.testing.assert_allclose(ctrl.parts.command, ctrl.static_torque(q), atol=1e-12)
    assert ctrl.status.safe_state == "hold"
    # back on target: the fault stays latched, and after fault_hold_time the command is zero
    tau = ctrl.step(0.2, Q0, np.zeros(3))
    np.testing.assert_array_equal(tau, np.zeros(3))
    assert ctrl.status.safe_state == "zero" and ctrl.status.faults == 1
    assert ctrl.reset_fault() == ""
    assert ctrl.status.safe_state == "ok" and ctrl.status.fault == ""
    tau = ctrl.step(0.201, Q0 - 0.05, np.zeros(3))  # control resumes (asks for 1.8 N m on joint2), ramping from zero
    assert np.all(np.abs(tau) <= 1e3 * 0.001 + 1e-12) and abs(tau[1]) == pytest.approx(1.0)


def test_position_limit_with_margin_latches_and_reset_is_refused_outside():
    ctrl = make(position_limit_margin=0.05, tracking_error_limit=10.0)
    upper = ctrl.description.upper[1]  # 1.6 rad
    ctrl.step(0.0, np.array([0.0, upper + 0.04, 0.6]), np.zeros(3))  # inside the margin: no fault
    assert ctrl.status.safe_state == "ok"
    ctrl.step(0.001, np.array([0.0, upper + 0.06, 0.6]), np.zeros(3))
    assert "position of joint2 q = 1.6600 rad is outside its URDF limits [-1.6, 1.6]" in ctrl.status.fault
    assert "move it back inside" in ctrl.reset_fault()
    assert ctrl.status.safe_state == "hold"
    ctrl.step(0.002, np.array([0.0, upper - 0.1, 0.6]), np.zeros(3))
    assert ctrl.reset_fault() == "" and ctrl.status.safe_state == "ok"


def test_watchdog_during_a_fault_ends_in_zero():
    ctrl = make(tracking_error_limit=0.1, fault_hold_time=0.05)
    ctrl.step(0.0, Q0, np.zeros(3))
    ctrl.step(0.001, Q0 - 0.2, np.zeros(3))
    assert ctrl.status.safe_state == "hold"
    np.testing.assert_array_equal(ctrl.check_watchdog(1.0), np.zeros(3))


def test_safety_monitor_rejects_bad_limits():
    with pytest.raises(ValueError, match=r"tracking_error_limit must have shape \(2,\)"):
        SafetyMonitor(("a", "b"), np.ones(3), -np.ones(2), np.ones(2), 0.0, 1.0)
    with pytest.raises(ValueError, match="margin = -0.1 must be finite and >= 0"):
        SafetyMonitor(("a",), np.ones(1), -np.ones(1), np.ones(1), -0.1, 1.0)


# ---- item 5: the DOB cutoff bound -----------------------------------------------------------------------------
def test_dob_cutoff_above_nyquist_or_the_bilinear_bound_is_refused(tmp_path):
    assert dob_cutoff_limit(1000.0, "zoh")[0] == pytest.approx(math.pi * 1000.0)
    assert dob_cutoff_limit(1000.0, "bilinear")[0] == 2000.0
    with pytest.raises(ValueError, match=r"dob_cutoff\[1\] = 3200.0 rad/s must be below 3141.59 rad/s: the Nyquist"):
        bundled_controller_config(dob_cutoff=(150.0, 3200.0, 150.0))
    bundled_controller_config(dob_cutoff=(150.0, 2500.0, 150.0))  # zoh: fine below Nyquist
    with pytest.raises(ValueError, match=r"dob_cutoff\[1\] = 2500.0 rad/s must be below 2000 rad/s: with "
                                         r"dob_discretization 'bilinear'"):
        bundled_controller_config(dob_cutoff=(150.0, 2500.0, 150.0), dob_discretization="bilinear")
    bad = tmp_path / "ffc.yaml"
    bad.write_text("/**:\n  ros__parameters:\n    control_rate: 100.0\n    dob_cutoff: [150.0, 400.0, 150.0]\n")
    with pytest.raises(ConfigError, match=r"ffc.yaml: dob_cutoff\[1\] = 400.0 rad/s must be below 314.159 rad/s"):
        load_controller_config(bad)
