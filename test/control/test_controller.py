"""The controller's law and safety: each safety feature is shown active where the raw law would break the limit."""

from __future__ import annotations

import numpy as np
import pytest

from deadzone_id_ros.config import dataclass_from_dict
from deadzone_id_ros.control import ControllerConfig, FeedforwardController, TrajectoryPoints
from deadzone_id_ros.errors import ConfigError, SafetyError
from deadzone_id_ros.models.runtime import NominalRigidBodyModel, ZeroModel
from deadzone_id_ros.resources import default_urdf
from deadzone_id_ros.robot_configs import bundled_controller_config

NAMES = ("joint1", "joint2", "joint3")
LIMITS = np.array([4.0, 10.0, 5.0])  # URDF effort limits of the bundled arm [N m]
Q0 = np.array([0.0, 0.3, 0.6])


class NanModel:
    joint_names = NAMES

    def predict(self, q, dq, ddq):
        return np.full(np.shape(q), np.nan)


def make(id_model=None, **kw) -> FeedforwardController:
    cfg = bundled_controller_config(**{"mode": "pd", "model": "rbd", **kw})
    return FeedforwardController(
        cfg, id_model if id_model is not None else NominalRigidBodyModel(default_urdf(), NAMES)
    )


def test_model_joint_mismatch_is_refused_naming_the_joints():
    with pytest.raises(SafetyError, match=r"missing from the model \['joint3'\], not controlled \['elbow'\]"):
        make(ZeroModel(("joint1", "joint2", "elbow")))


def test_model_joints_are_mapped_by_name():
    q, dq = np.array([0.1, 0.5, -0.4]), np.array([0.2, -0.1, 0.3])
    ref = make(NominalRigidBodyModel(default_urdf(), NAMES), mode="ctc")
    rev = make(NominalRigidBodyModel(default_urdf(), NAMES[::-1]), mode="ctc")
    np.testing.assert_allclose(rev.step(0.0, q, dq), ref.step(0.0, q, dq), rtol=0, atol=1e-12)
    assert np.any(ref.parts.command != 0)


def test_effort_clamp_keeps_commands_within_urdf_limits():
    ctrl = make(kp=(1e6,) * 3, torque_rate_limit=(1e9,) * 3, tracking_error_limit=2.0)
    ctrl.step(0.0, Q0, np.zeros(3))
    tau = ctrl.step(0.001, Q0 - 1.0, np.zeros(3))  # 1 rad error * 1e6 gain * Jn: far beyond the limits
    raw = np.asarray(ctrl.config.nominal_inertia) * 1e6 * 1.0
    assert np.all(raw > LIMITS)  # the unclamped law would exceed every limit
    np.testing.assert_allclose(np.abs(tau), LIMITS)
    assert np.all(ctrl.status.clamp_events == 1)


def test_effort_limit_scale_reduces_the_clamp():
    ctrl = make(kp=(1e6,) * 3, torque_rate_limit=(1e9,) * 3, effort_limit_scale=0.5, tracking_error_limit=2.0)
    ctrl.step(0.0, Q0, np.zeros(3))
    np.testing.assert_allclose(np.abs(ctrl.step(0.001, Q0 - 1.0, np.zeros(3))), 0.5 * LIMITS)


def test_torque_rate_limit_bounds_the_change_per_tick():
    rate = np.array([100.0, 200.0, 50.0])
    ctrl = make(torque_rate_limit=tuple(rate), tracking_error_limit=1.0)
    ctrl.step(0.0, Q0, np.zeros(3))
    prev = ctrl.parts.command.copy()
    t = 0.0
    for k in range(20):
        dt = 0.001 if k % 2 else 0.0015
        t += dt
        tau = ctrl.step(t, Q0 - 0.5, np.zeros(3))  # a 0.5 rad step asks for ~ Jn*kp*0.5 = 6..18 N m at once
        assert np.all(np.abs(tau - prev) <= rate * dt + 1e-12)
        prev = tau
    assert np.all(ctrl.status.rate_limit_events > 0)


def test_nan_model_output_never_reaches_the_command():
    ctrl = make(NanModel(), mode="ctc_dob", model="learned", model_path="x.onnx")
    for k in range(5):
        tau = ctrl.step(0.001 * k, Q0, np.zeros(3))
        assert np.all(np.isfinite(tau))
    assert ctrl.status.nonfinite_events == 5


def test_nan_measurement_commands_the_static_torque():
    ctrl = make(torque_rate_limit=(1e9,) * 3)
    ctrl.step(0.0, Q0, np.zeros(3))
    tau = ctrl.step(0.001, np.array([np.nan, 0.3, 0.6]), np.zeros(3))
    np.testing.assert_allclose(tau, ctrl.static_torque(Q0), atol=1e-12)
    assert ctrl.status.nonfinite_events == 1
    tau = ctrl.step(0.002, Q0, np.array([0.0, np.inf, 0.0]))
    assert np.all(np.isfinite(tau)) and ctrl.status.nonfinite_events == 2


def test_stale_or_repeated_stamps_are_rejected():
    ctrl = make()
    first = ctrl.step(1.0, Q0, np.zeros(3))
    np.testing.assert_array_equal(ctrl.step(1.0, Q0 + 0.1, np.zeros(3)), first)
    assert ctrl.status.rejected_measurements == 1


def test_watchdog_holds_static_torque_then_zero_then_recovers():
    ctrl = make(watchdog_timeout=0.05, watchdog_hold_time=0.2, torque_rate_limit=(1e9,) * 3)
    assert ctrl.check_watchdog(0.0) is None  # nothing measured yet
    for k in range(10):
        ctrl.step(0.001 * k, Q0, np.zeros(3))
    assert ctrl.check_watchdog(0.009 + 0.04) is None and ctrl.status.watchdog == "running"
    hold = ctrl.check_watchdog(0.009 + 0.06)
    gravity = ctrl.static_torque(Q0)
    assert abs(gravity[1]) > 0.5  # the shoulder carries the arm: holding matters
    np.testing.assert_allclose(hold, gravity, atol=1e-12)
    assert ctrl.status.watchdog == "hold"
    zero = ctrl.check_watchdog(0.009 + 0.26)
    np.testing.assert_array_equal(zero, np.zeros(3))
    assert ctrl.status.watchdog == "zero"
    ctrl.step(0.3, Q0, np.zeros(3))
    assert ctrl.status.watchdog == "running"


def test_watchdog_trips_count_each_time_it_leaves_running():
    """A trip is counted when the watchdog leaves "running" (hold, or straight to zero when it was checked late),
    once per stale spell however often it is checked: a hold of a few ms shows on /diagnostics by this count."""
    ctrl = make(watchdog_timeout=0.05, watchdog_hold_time=0.2)
    assert ctrl.status.watchdog_trips == 0
    ctrl.step(0.0, Q0, np.zeros(3))
    assert ctrl.check_watchdog(0.04) is None and ctrl.status.watchdog_trips == 0
    ctrl.check_watchdog(0.06)
    ctrl.check_watchdog(0.07)
    ctrl.check_watchdog(0.3)  # hold -> zero: the same spell
    assert ctrl.status.watchdog == "zero" and ctrl.status.watchdog_trips == 1
    ctrl.step(0.301, Q0, np.zeros(3))
    ctrl.check_watchdog(0.302)
    assert ctrl.status.watchdog == "running" and ctrl.status.watchdog_trips == 1
    ctrl.check_watchdog(0.301 + 0.3)  # checked late: straight to zero, still one trip more
    assert ctrl.status.watchdog == "zero" and ctrl.status.watchdog_trips == 2


def test_pd_dob_removes_a_constant_load_that_pd_leaves():
    """Unit-inertia double integrators with a constant load: PD keeps an offset d/(Jn kp), the DOB removes it."""
    jn = np.array([0.03, 0.09, 0.011])
    load = np.array([0.05, 0.2, 0.03])
    err = {}
    for mode in ("pd", "pd_dob"):
        ctrl = make(ZeroModel(NAMES), mode=mode, model="none", torque_rate_limit=(1e4,) * 3)
        q, dq = np.zeros(3), np.zeros(3)
        ctrl.step(0.0, q, dq)
        ctrl.set_reference(TrajectoryPoints(NAMES, np.array([0.0]), np.zeros((1, 3))))
        for k in range(1, 3000):
            tau = ctrl.parts.command
            dq = dq + (tau - load) / jn * 0.001
            q = q + dq * 0.001
            ctrl.step(0.001 * k, q, dq)
        err[mode] = np.abs(q)
    np.testing.assert_allclose(err["pd"], load / (jn * 400.0), rtol=0.02)
    assert np.all(err["pd_dob"] < 0.01 * err["pd"])


def test_reference_is_mapped_by_name_and_checked():
    ctrl = make()
    ctrl.step(0.0, Q0, np.zeros(3))
    pts = TrajectoryPoints(
        ("joint3", "joint1", "joint2"), np.array([1.0, 2.0]), np.array([[0.6, 0.0, 0.3], [0.9, 0.2, 0.4]])
    )
    ctrl.set_reference(pts, now=0.0)
    np.testing.assert_allclose(ctrl.reference.sample(2.0)[0], [0.2, 0.4, 0.9])
    np.testing.assert_allclose(ctrl.reference.sample(0.0)[0], Q0)  # continues from the held position
    with pytest.raises(SafetyError, match=r"reference lacks joint\(s\) \['joint3'\]"):
        ctrl.set_reference(TrajectoryPoints(("joint1", "joint2"), np.array([1.0]), np.zeros((1, 2))))


def test_config_validation_names_the_field():
    with pytest.raises(ValueError, match="mode = 'ctc' needs a model"):
        bundled_controller_config(mode="ctc", model="none")
    with pytest.raises(ValueError, match=r"kp has 2 values but joint_names has 3"):
        bundled_controller_config(kp=(1.0, 2.0))
    with pytest.raises(ValueError, match=r"dob_cutoff\[1\] = -1.0 must be a finite positive number"):
        bundled_controller_config(dob_cutoff=(1.0, -1.0, 1.0))
    with pytest.raises(ValueError, match="effort_limit_scale = 2 must be <= 1"):
        bundled_controller_config(effort_limit_scale=2)
    with pytest.raises(ConfigError, match=r"unknown key\(s\) \['kp_gain'\]"):
        dataclass_from_dict(ControllerConfig, {"kp_gain": 1.0})


def test_build_controller_loads_the_configured_model_and_uses_the_given_description():
    from deadzone_id_ros.control import build_controller
    from deadzone_id_ros.robot import load_robot_description

    desc = load_robot_description(default_urdf(), NAMES)
    rbd = build_controller(bundled_controller_config(model="rbd"), desc)
    assert isinstance(rbd.model, NominalRigidBodyModel) and rbd.description is desc
    none = build_controller(bundled_controller_config(model="none"))  # description loaded from the config's URDF
    assert isinstance(none.model, ZeroModel) and none.description.joint_names == NAMES
    with pytest.raises(FileNotFoundError, match="model_path /nonexistent/model does not exist"):
        build_controller(bundled_controller_config(model="learned", model_path="/nonexistent/model"))
    with pytest.raises(SafetyError, match="robot description joints"):
        build_controller(bundled_controller_config(model="none"),
                         load_robot_description(default_urdf(), ("joint1", "joint2")))


def test_mode_strings_parse_into_separate_fields_in_one_place():
    """Today's mode strings are accepted and become a feedforward source and a DOB switch; nothing else parses them."""
    from deadzone_id_ros.control import MODES, ControlMode

    fields = {m: (ControlMode.parse(m).feedforward, ControlMode.parse(m).dob) for m in MODES}
    assert fields == {"pd": ("nominal_inertia", False), "pd_dob": ("nominal_inertia", True),
                      "ctc": ("model", False), "ctc_dob": ("model", True)}
    assert all(ControlMode.parse(m).name == m for m in MODES)
    cfg = bundled_controller_config(mode="ctc_dob", model="rbd")
    assert cfg.control_mode == ControlMode("model", dob=True) and cfg.uses_model and cfg.uses_dob
    assert not bundled_controller_config(mode="pd").uses_dob and not bundled_controller_config(mode="pd").uses_model
    with pytest.raises(ValueError, match=r"mode = 'ctc_dob_rbd_nominal' must be one of \['pd', 'pd_dob'"):
        bundled_controller_config(mode="ctc_dob_rbd_nominal")
    with pytest.raises(ValueError, match=r"feedforward = 'rbd' must be one of \['nominal_inertia', 'model'\]"):
        ControlMode("rbd", dob=True)
    # the mode strings are parsed in exactly one place: no startswith/endswith on a mode anywhere in the package
    import re
    from pathlib import Path

    package = Path(__file__).resolve().parents[2] / "deadzone_id_ros"
    hits = [f"{p}:{n}" for p in package.rglob("*.py") for n, line in enumerate(p.read_text().splitlines(), 1)
            if re.search(r"mode\.(startswith|endswith)\(", line)]
    assert not hits, hits


def test_rate_limit_counts_from_the_latest_command_after_late_states():
    """A watchdog command at T, then states stamped before T (late on a busy machine, the clock ran ahead): the
    command stays where the watchdog left it until a state passes T. Measured in the live soak under load: the time
    of the last command went back to the late state's stamp and the next late state moved the command by
    rate x 64 ms, with no time passed since the watchdog's command."""
    rate = np.array([100.0, 200.0, 50.0])
    ctrl = make(torque_rate_limit=tuple(rate), watchdog_timeout=0.05, watchdog_hold_time=0.2,
                tracking_error_limit=1.0)
    for k in range(10):
        ctrl.step(0.001 * k, Q0, np.zeros(3))
    hold = ctrl.check_watchdog(0.2)  # the ROS clock is at 0.2 s; states up to 0.009 s arrived
    assert ctrl.status.watchdog == "hold"
    for t in (0.1, 0.15, 0.19):  # late states, all before the watchdog's command
        np.testing.assert_array_equal(ctrl.step(t, Q0 - 0.5, np.zeros(3)), hold)
    tau = ctrl.step(0.201, Q0 - 0.5, np.zeros(3))  # 1 ms after the watchdog's command
    assert np.all(np.abs(tau - hold) <= rate * 0.001 + 1e-12) and np.any(tau != hold)


class RecordingModel:
    """Zero torque; keeps the velocity of every call."""

    joint_names = NAMES

    def __init__(self):
        self.dq: list[np.ndarray] = []

    def predict(self, q, dq, ddq):
        self.dq.append(np.array(dq, dtype=float))
        return np.zeros(np.shape(q))


def _ramp_reference(ctrl: FeedforwardController) -> np.ndarray:
    """A reference that moves every joint at a known velocity from t = 0 to 1 s; returns that velocity."""
    v = np.array([0.4, -0.2, 0.3])
    ctrl.set_reference(TrajectoryPoints(NAMES, np.array([0.0, 1.0]), np.stack([Q0, Q0 + v]),
                                        velocity=np.stack([v, v])), now=0.0)
    return v


@pytest.mark.parametrize("source", ["desired", "measured"])
def test_the_feedforward_model_sees_the_configured_velocity(source):
    model = RecordingModel()
    ctrl = make(model, mode="ctc_dob", feedforward_velocity=source)
    ctrl.step(0.0, Q0, np.zeros(3))
    v = _ramp_reference(ctrl)
    dq = np.array([0.05, 0.07, -0.01])  # measured: not the reference's
    model.dq.clear()
    ctrl.step(0.5, Q0 + 0.5 * v, dq)
    np.testing.assert_allclose(model.dq[-1], v if source == "desired" else dq)


def test_feedforward_velocity_changes_live_and_is_validated():
    model = RecordingModel()
    ctrl = make(model, mode="ctc", feedforward_velocity="measured")
    ctrl.step(0.0, Q0, np.zeros(3))
    v = _ramp_reference(ctrl)
    ctrl.update_config(bundled_controller_config(mode="ctc", model="rbd", feedforward_velocity="desired"))
    for t in np.arange(1, 301) * 1e-3:  # 0.3 s of ticks: the probe keeps every few
        ctrl.step(t, Q0 + t * v, np.zeros(3))
    np.testing.assert_allclose(model.dq[-1], v)
    # the model a swap is checked on is probed where the law evaluates it (the recent (q, v, ddq_ref))
    _, dq_probe, _ = ctrl._probe.states(None)
    np.testing.assert_allclose(dq_probe[-1], v)
    with pytest.raises(ValueError,
                       match=r"feedforward_velocity = 'reference' must be one of \['desired', 'measured'\]"):
        bundled_controller_config(feedforward_velocity="reference")
