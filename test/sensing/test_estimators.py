"""The external-torque estimators against the simulator's true external torque (real MuJoCo, real pinocchio)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from deadzone_id_ros.errors import RobotDescriptionError
from deadzone_id_ros.experiments.sense.run import effort_reading
from deadzone_id_ros.models.runtime import NominalRigidBodyModel
from deadzone_id_ros.resources import default_urdf
from deadzone_id_ros.robot_configs import bundled_controller_config, bundled_sim_config
from deadzone_id_ros.sensing import (
    ContactDetector,
    DobEstimator,
    ForceSensor,
    MomentumObserver,
    ResidualEstimator,
    SensingConfig,
    StaticFrictionBand,
    WrenchEstimator,
    ZohLowPass,
    build_sensor,
)
from deadzone_id_ros.sim.arm import SimArm
from deadzone_id_ros.sim.external_forces import ExternalForces, ObstacleConfig, PushConfig

TIP = (0.0, 0.0, 0.22)  # end of the bundled arm's last link, in link3's frame [m]


def ideal_arm(external: ExternalForces, **explicit) -> SimArm:
    """The bundled arm without friction, damping, noise or quantization: the rigid body of the URDF + armature."""
    cfg = bundled_sim_config(profile="ideal", frictionloss=(0.0,) * 3, damping=(0.0,) * 3,
                             torque_noise_std=(0.0,) * 3, velocity_noise_std=(0.0,) * 3, encoder_resolution=0.0,
                             **explicit)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the URDF's friction differs on purpose
        return SimArm(cfg, external=external)


def drive(arm: SimArm, estimators, n: int, model: NominalRigidBodyModel):
    """Run ``n`` ticks of a gravity-compensating sine command; per tick the estimates and the true torque of the
    interval that ended at the sample (J,) [N·m]."""
    est = {name: [] for name in estimators}
    truth, prev_truth = [], np.zeros(arm.n_joints)
    for k in range(n):
        m = arm.measure()
        for name, e in estimators.items():
            est[name].append(e.update(m.t, m.q, m.dq, m.effort).copy())
        truth.append(prev_truth)
        tau = model.predict(m.q, np.zeros(3), np.zeros(3)) + 0.3 * np.sin(0.01 * k + np.arange(3))
        arm.step(tau)
        prev_truth = arm.external.true_torque.copy()
    return {k: np.array(v) for k, v in est.items()}, np.array(truth)


def test_residual_equals_jt_f_of_a_known_push_on_the_ideal_arm_with_the_exact_model():
    push = PushConfig(link="link3", magnitude=2.0, point=TIP, direction=(1.0, 0.5, -0.3), start=0.1, duration=0.4)
    arm = ideal_arm(ExternalForces(pushes=[push]))
    model = NominalRigidBodyModel(default_urdf(), arm.joint_names, armature=arm.config.armature)
    raw = ResidualEstimator(model, [np.inf] * 3)
    filtered = ResidualEstimator(model, [200.0] * 3)
    est, truth = drive(arm, {"raw": raw, "filtered": filtered}, 450, model)
    assert np.abs(truth).max() > 0.1  # the push acts
    # the interval form is exact for MuJoCo's Euler step: J^T F to rounding
    np.testing.assert_allclose(est["raw"][1:], truth[1:], rtol=0, atol=1e-10)
    # the filtered estimate is the same low-pass of the true torque
    lpf = ZohLowPass([200.0] * 3)
    expected = np.array([np.zeros(3)] + [lpf.update(arm.dt, t).copy() for t in truth[1:]])
    np.testing.assert_allclose(est["filtered"], expected, rtol=0, atol=1e-10)


def test_true_torque_is_jt_f_of_the_force_at_the_point():
    push = PushConfig(link="link3", magnitude=3.0, point=TIP, direction=(0.0, 1.0, 0.0), duration=1.0)
    arm = ideal_arm(ExternalForces(pushes=[push]))
    arm.step(np.zeros(3))
    wrench = WrenchEstimator(default_urdf(), arm.joint_names, "link3", point=TIP)
    q0 = arm.config.initial_position
    expected = wrench.jacobian(np.asarray(q0))[:3].T @ np.array([0.0, 3.0, 0.0])
    np.testing.assert_allclose(arm.external.true_torque, expected, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(arm.external.true_force, [0.0, 3.0, 0.0])


def test_wrench_recovers_the_applied_force_and_names_unobservable_components():
    arm = ideal_arm(ExternalForces())
    wrench = WrenchEstimator(default_urdf(), arm.joint_names, "link3", point=TIP)
    q = np.array([0.4, 0.3, 0.6])
    force = np.array([1.0, -2.0, 0.5])
    tau = wrench.jacobian(q)[:3].T @ force
    got = wrench.estimate(q, tau)
    np.testing.assert_allclose(got.wrench[:3], force, atol=1e-9)
    assert got.observable[:3].all() and not got.near_singular
    assert "moments assumed zero" in got.note
    # at the frame origin the elbow axis passes through the point: singular, and said so
    at_joint = WrenchEstimator(default_urdf(), arm.joint_names, "link3").estimate(q, tau)
    assert at_joint.near_singular and "singular" in at_joint.note
    full = WrenchEstimator(default_urdf(), arm.joint_names, "link3", point=TIP, components="wrench")
    assert full.estimate(q, tau).observable.sum() <= 3  # 3 joints resolve at most 3 of 6 components


def test_momentum_observer_and_dob_converge_to_a_held_push():
    push = PushConfig(link="link3", magnitude=2.0, point=TIP, direction=(1.0, 0.0, 0.0), start=0.05, duration=1.0)
    arm = ideal_arm(ExternalForces(pushes=[push]))
    model = NominalRigidBodyModel(default_urdf(), arm.joint_names, armature=arm.config.armature)
    mo = MomentumObserver(model, [100.0] * 3)
    dob = DobEstimator(model, [0.03, 0.09, 0.011], [100.0] * 3)
    est, truth = drive(arm, {"mo": mo, "dob": dob}, 400, model)
    lpf = ZohLowPass([100.0] * 3)
    expected = np.array([lpf.update(arm.dt, t).copy() for t in truth])
    scale = np.abs(truth).max()
    err_mo = np.abs(est["mo"][100:] - expected[100:]).max()
    err_dob = np.abs(est["dob"][100:] - expected[100:]).max()
    # the momentum observer's discretization error is O(dt): within 2 % of the push's torque
    assert err_mo < 0.02 * scale
    # the DOB's nominal plant Jn ddq misses (M(q) - Jn) ddq while this arm accelerates freely
    assert err_dob > err_mo


def test_dob_estimate_equals_a_push_the_motor_balances():
    # the motor cancels gravity and the (known) push: the arm stays at rest, ddq = 0, so the DOB sees exactly -tau_ext
    push = PushConfig(link="link3", magnitude=2.0, point=TIP, direction=(1.0, 0.0, 0.0), duration=1.0)
    arm = ideal_arm(ExternalForces(pushes=[push]))
    model = NominalRigidBodyModel(default_urdf(), arm.joint_names, armature=arm.config.armature)
    dob = DobEstimator(model, [0.03, 0.09, 0.011], [100.0] * 3)
    arm.step(model.predict(arm.q, np.zeros(3), np.zeros(3)))
    push_torque = arm.external.true_torque.copy()
    arm.reset()
    for _ in range(300):
        m = arm.measure()
        e = dob.update(m.t, m.q, m.dq, m.effort)
        arm.step(model.predict(m.q, np.zeros(3), np.zeros(3)) - push_torque)
    assert np.abs(arm.dq).max() < 1e-9
    np.testing.assert_allclose(e, push_torque, rtol=0, atol=1e-9)


def test_contact_with_the_obstacle_is_in_the_true_torque():
    # the probe at the tip of link3 starts 5 mm from the box face
    arm = ideal_arm(ExternalForces())
    tip = arm.data.xpos[arm.model.body("link3").id] + arm.data.xmat[arm.model.body("link3").id].reshape(3, 3) @ TIP
    box = tip + np.array([0.05 + 0.01 + 0.005, 0.0, 0.0])
    ext = ExternalForces(obstacle=ObstacleConfig(position=tuple(box), probe_link="link3", probe_point=TIP))
    arm = ideal_arm(ext)
    model = NominalRigidBodyModel(default_urdf(), arm.joint_names, armature=arm.config.armature)
    raw = ResidualEstimator(model, [np.inf] * 3)
    truths = []
    for _ in range(300):  # push the arm towards +x with joint 2
        m = arm.measure()
        raw.update(m.t, m.q, m.dq, m.effort)
        arm.step(model.predict(m.q, np.zeros(3), np.zeros(3)) + np.array([0.0, 0.3, 0.0]))
        truths.append(arm.external.true_torque.copy())
    assert np.abs(truths[-1]).max() > 0.1  # it touched
    m = arm.measure()
    np.testing.assert_allclose(raw.update(m.t, m.q, m.dq, m.effort), truths[-1], rtol=0, atol=1e-9)


def test_sim_arms_obstacle_parameters_make_the_same_contact():
    # the sim_arm node's obstacle_* parameters (ScriptedObstacleConfig) build that box and probe
    from deadzone_id_ros.sim.external_forces import ScriptedObstacleConfig, ScriptedPushConfig, scripted_forces

    assert scripted_forces(ScriptedPushConfig(), ScriptedObstacleConfig()) is None  # neither: no external forces
    pushed = scripted_forces(ScriptedPushConfig(push_link="link3"), ScriptedObstacleConfig())
    assert pushed is not None and len(pushed.pushes) == 1 and pushed.obstacle is None
    with pytest.raises(ValueError, match="obstacle_probe_link is empty"):
        ScriptedObstacleConfig(obstacle_position=(0.1, 0.0, 0.3))
    arm = ideal_arm(ExternalForces())
    tip = arm.data.xpos[arm.model.body("link3").id] + arm.data.xmat[arm.model.body("link3").id].reshape(3, 3) @ TIP
    box = tuple(tip + np.array([0.05 + 0.01 + 0.005, 0.0, 0.0]))
    ext = scripted_forces(ScriptedPushConfig(), ScriptedObstacleConfig(
        obstacle_position=box, obstacle_probe_link="link3", obstacle_probe_point=TIP))
    assert ext is not None and ext.obstacle == ObstacleConfig(position=box, probe_link="link3", probe_point=TIP)
    arm = ideal_arm(ext)
    model = NominalRigidBodyModel(default_urdf(), arm.joint_names, armature=arm.config.armature)
    for _ in range(300):
        arm.step(model.predict(arm.measure().q, np.zeros(3), np.zeros(3)) + np.array([0.0, 0.3, 0.0]))
    assert np.abs(arm.external.true_torque).max() > 0.1  # it touched


def test_no_contact_while_a_joint_is_held_by_static_friction_alone():
    # the geared arm holding still with a torque below its static friction: every joint stuck, no external force
    cfg = bundled_sim_config(velocity_noise_std=(0.0005,) * 3)
    arm = SimArm(cfg, external=ExternalForces())
    model = NominalRigidBodyModel(default_urdf(), arm.joint_names, armature=cfg.armature)
    band = StaticFrictionBand(arm.joint_names, np.full(3, 0.01), np.asarray(arm.config.frictionloss) * 1.5)
    est = ResidualEstimator(model, [100.0] * 3)
    threshold = np.full(3, 0.05)
    aware, naive = ContactDetector(threshold), ContactDetector(threshold)
    offset = 0.8 * np.asarray(arm.config.frictionloss) * np.array([1.0, -1.0, 1.0])  # held by friction
    fired_aware = fired_naive = 0
    for k in range(600):
        m = arm.measure()
        e = est.update(m.t, m.q, m.dq, m.effort)
        if k < 100:  # the first command takes hold (actuation delay, the arm settles on its friction)
            arm.step(model.predict(m.q, np.zeros(3), np.zeros(3)) + offset)
            continue
        assert np.all(band.stuck(m.dq))
        fired_aware += aware.update(m.t, e, band.interval_half_width(m.dq)).in_contact
        fired_naive += naive.update(m.t, e, np.zeros(3)).in_contact
        arm.step(model.predict(m.q, np.zeros(3), np.zeros(3)) + offset)
    assert np.abs(arm.dq).max() < 1e-3  # it stayed put
    assert fired_aware == 0
    assert fired_naive > 0  # the same estimate without the band fires on the static friction


def test_bad_inputs_are_named():
    model = NominalRigidBodyModel(default_urdf(), ("joint1", "joint2", "joint3"))
    with pytest.raises(ValueError, match="cutoff must have 3 values"):
        ResidualEstimator(model, [1.0, 2.0])
    est = ResidualEstimator(model, [10.0] * 3)
    with pytest.raises(ValueError, match="dq has non-finite"):
        est.update(0.0, np.zeros(3), np.array([0.0, np.nan, 0.0]), np.zeros(3))
    with pytest.raises(RobotDescriptionError, match="no frame .tool0."):
        WrenchEstimator(default_urdf(), model.joint_names, "tool0")
    with pytest.raises(ValueError, match="shape = .kick. must be one of"):
        PushConfig(link="link3", magnitude=1.0, shape="kick")
    with pytest.raises(ValueError, match="push link 'hand'"):
        ideal_arm(ExternalForces(pushes=[PushConfig(link="hand", magnitude=1.0)]))


def test_baselines_use_the_profiles_armature_and_friction():
    # the profile's nominal rigid body (the controller's "rbd" model): URDF + armature + the profile's friction
    push = PushConfig(link="link3", magnitude=2.0, point=TIP, direction=(1.0, 0.0, 0.0), start=0.05, duration=1.0)
    arm = ideal_arm(ExternalForces(pushes=[push]))
    ctrl = bundled_controller_config(frictionloss=(0.0,) * 3, damping=(0.0,) * 3)  # as the ideal arm
    assert np.any(np.asarray(ctrl.armature) > 0)
    model = NominalRigidBodyModel(default_urdf(), arm.joint_names, armature=arm.config.armature)
    sensor = build_sensor(SensingConfig(sensing_estimator="momentum"), model, default_urdf(), arm.joint_names,
                          nominal=ctrl)
    est, truth = drive(arm, {"mo": sensor.estimator}, 400, model)
    lpf = ZohLowPass([100.0] * 3)
    expected = np.array([lpf.update(arm.dt, t).copy() for t in truth])
    # with the armature in M the observer is as exact as with the hand-built model above (2 % of the push)
    assert np.abs(est["mo"][100:] - expected[100:]).max() < 0.02 * np.abs(truth).max()
    # the profile's friction is the DOB's and the observer's friction law
    rough = bundled_controller_config(frictionloss=(0.05, 0.1, 0.02), damping=(0.01, 0.02, 0.03))
    dq = np.array([0.3, -0.2, 0.1])
    expected_f = np.array([0.01, 0.02, 0.03]) * dq + np.array([0.05, 0.1, 0.02]) * np.tanh(dq / 0.01)
    for kind in ("momentum", "dob"):
        est_k = build_sensor(SensingConfig(sensing_estimator=kind), model, default_urdf(), arm.joint_names,
                             rough.nominal_inertia, nominal=rough).estimator
        rigid = est_k.rigid_body if kind == "momentum" else est_k.model
        np.testing.assert_allclose(rigid.friction_torque(dq), expected_f, rtol=1e-12)
        np.testing.assert_allclose(rigid.mass_matrix_diagonal(np.zeros(3)) - model.mass_matrix_diagonal(np.zeros(3)),
                                   0.0, atol=1e-12)  # the same armature as the exact model


def test_a_servo_present_load_is_converted_before_the_estimate():
    # the simulator reports Present_Load (PWM duty in 0.1 %): the sensor converts it with the motor model
    push = PushConfig(link="link3", magnitude=2.0, point=TIP, direction=(1.0, 0.5, -0.3), start=0.1, duration=0.4)
    arm = ideal_arm(ExternalForces(pushes=[push]), effort_readout="present_load", no_load_speed=(5.0, 6.0, 7.0))
    model = NominalRigidBodyModel(default_urdf(), arm.joint_names, armature=arm.config.armature)
    effort = effort_reading(arm.config, bundled_controller_config())
    sensor = ForceSensor(ResidualEstimator(model, [np.inf] * 3), StaticFrictionBand.none(arm.joint_names),
                         effort=effort)
    got, truth, prev = [], [], np.zeros(3)
    for k in range(300):
        m = arm.measure()
        assert np.all(m.effort == np.round(m.effort))  # whole numbers of 0.1 % duty
        got.append(sensor.update_effort(m.t, m.q, m.dq, m.effort).tau_ext)
        truth.append(prev)
        arm.step(model.predict(m.q, np.zeros(3), np.zeros(3)) + 0.3 * np.sin(0.01 * k + np.arange(3)))
        prev = arm.external.true_torque.copy()
    quantum = arm.effort_limit / 1000  # one unit of Present_Load [N·m]
    assert np.abs(np.array(truth)).max() > 0.1
    # J^T F to half a reading's quantum, as exact as the torque readout otherwise
    err = np.abs(np.array(got[1:]) - np.array(truth[1:]))
    assert np.all(err <= quantum / 2 + 1e-9), (err.max(axis=0), quantum)
