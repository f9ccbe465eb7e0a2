"""The simulated arm: dead-zone physics, ground-truth inverse dynamics, limits, noise, configuration errors."""

from __future__ import annotations

import dataclasses

import mujoco
import numpy as np
import pinocchio as pin
import pytest

from deadzone_id_ros.errors import RobotDescriptionError
from deadzone_id_ros.resources import default_urdf
from deadzone_id_ros.robot_configs import bundled_sim_config
from deadzone_id_ros.sim import SimArm

# The ideal profile: rigid body + constant Coulomb friction, no delays (the geared effects have test_geared.py).
QUIET = bundled_sim_config(profile="ideal", torque_noise_std=(0.0, 0.0, 0.0), velocity_noise_std=(0.0, 0.0, 0.0))
FRICTION = (0.12, 0.40, 0.15)  # the URDF's <dynamics friction>


def _displacement_under_constant_torque(joint: int, fraction: float, seconds: float = 1.0) -> float:
    """Gravity off, arm at rest at q = 0: push one joint with fraction * its friction torque; return |dq| travelled."""
    arm = SimArm(QUIET)
    arm.model.opt.gravity[:] = 0.0
    arm.reset(np.zeros(3))
    tau = np.zeros(3)
    tau[joint] = fraction * FRICTION[joint]
    q0 = arm.q
    for _ in range(int(round(seconds / arm.dt))):
        arm.step(tau)
    return float(abs(arm.q[joint] - q0[joint]))


@pytest.mark.parametrize("joint", [0, 1, 2])
def test_joint_stays_put_below_its_friction_threshold(joint):
    assert _displacement_under_constant_torque(joint, 0.8) < 1e-3


@pytest.mark.parametrize("joint", [0, 1, 2])
def test_joint_moves_above_its_friction_threshold(joint):
    # 20% of the friction torque left over accelerates the joint: 0.5 * (0.2 f / I) t^2 is tens of mrad at least.
    assert _displacement_under_constant_torque(joint, 1.2) > 0.05


def test_inverse_dynamics_matches_pinocchio_rnea_without_friction():
    arm = SimArm(QUIET)
    model = pin.buildModelFromUrdf(str(default_urdf()))
    model.armature[:] = QUIET.armature  # the simulator's rotor inertia, which RNEA includes
    data = model.createData()
    rng = np.random.default_rng(1)
    q = rng.uniform(arm.description.lower, arm.description.upper, (50, 3))
    dq = rng.uniform(-3, 3, (50, 3))
    ddq = rng.uniform(-20, 20, (50, 3))
    tau_sim = arm.inverse_dynamics(q, dq, ddq)
    tau_pin = np.array([pin.rnea(model, data, q[k], dq[k], ddq[k]) for k in range(50)])
    rel = np.abs(tau_sim - tau_pin) / np.maximum(np.abs(tau_pin), 1e-3)
    assert rel.max() < 1e-6


def test_inverse_dynamics_agrees_with_forward_simulation_when_moving():
    """Torque from mj_inverse, applied in the simulator, reproduces the acceleration (friction included, moving)."""
    arm = SimArm(QUIET)
    arm.reset(np.array([0.1, 0.2, 0.3]), np.array([1.0, -1.0, 0.8]))
    ddq_target = np.array([2.0, -3.0, 4.0])
    tau = arm.inverse_dynamics(arm.q, arm.dq, ddq_target, friction=True)
    dq0 = arm.dq
    arm.step(tau)
    ddq = (arm.dq - dq0) / arm.dt
    np.testing.assert_allclose(ddq, ddq_target, atol=0.5)  # one Euler step; implicit damping differs by O(dt)


def test_torque_is_clipped_to_urdf_effort_limits_and_reported_as_effort():
    arm = SimArm(QUIET)
    applied = arm.step(np.array([100.0, -100.0, 1.0]))
    np.testing.assert_array_equal(applied, [4.0, -10.0, 1.0])
    np.testing.assert_array_equal(arm.measure().effort, applied)


def test_non_finite_or_wrong_length_torque_is_rejected():
    arm = SimArm(QUIET)
    with pytest.raises(ValueError, match="non-finite"):
        arm.step(np.array([0.0, np.nan, 0.0]))
    with pytest.raises(ValueError, match=r"shape \(3,\)"):
        arm.step(np.zeros(2))


def test_encoder_quantization_and_velocity_noise():
    cfg = dataclasses.replace(bundled_sim_config(), velocity_noise_std=(0.01, 0.01, 0.01), encoder_resolution=0.001,
                              measurement_delay=0.0)
    arm = SimArm(cfg)
    arm.reset(np.array([0.12345, 0.3, 0.6]))
    meas = [arm.measure() for _ in range(2000)]
    q = np.array([m.q for m in meas])
    np.testing.assert_allclose(q / 0.001, np.round(q / 0.001), atol=1e-9)
    assert abs(q[0, 0] - 0.12345) <= 0.0005
    dq = np.array([m.dq for m in meas])
    assert 0.009 < dq.std(axis=0).min() and dq.std(axis=0).max() < 0.011


def test_urdf_without_the_named_joints_is_refused(tmp_path):
    cfg = dataclasses.replace(bundled_sim_config(), joint_names=("joint1", "elbow", "wrist"))
    with pytest.raises(RobotDescriptionError, match=r"three_dof_arm\.urdf.*\['elbow', 'wrist'\] not in the URDF"):
        SimArm(cfg)


def test_missing_urdf_file_is_a_file_not_found(tmp_path):
    with pytest.raises(FileNotFoundError, match="nope.urdf"):
        SimArm(dataclasses.replace(bundled_sim_config(), urdf_path=str(tmp_path / "nope.urdf")))


def test_the_simulator_loads_the_same_urdf_file():
    """MuJoCo's own URDF import of the file gives the same joints and masses as the SimArm model."""
    raw = mujoco.MjModel.from_xml_path(str(default_urdf()))
    arm = SimArm()
    assert [raw.joint(i).name for i in range(raw.njnt)] == list(arm.joint_names)
    np.testing.assert_allclose(raw.body_mass, arm.model.body_mass)


def test_hold_brakes_the_joints_against_gravity_and_advances_time():
    arm = SimArm(QUIET)
    q0 = arm.q
    arm.hold(500)
    assert arm.time == pytest.approx(0.5)
    np.testing.assert_array_equal(arm.q, q0)
    np.testing.assert_array_equal(arm.dq, np.zeros(3))
    np.testing.assert_array_equal(arm.measure().effort, np.zeros(3))
    arm.step(np.zeros(3), 200)  # brakes released, no torque: joint2 carries gravity and falls
    assert abs(arm.q[1] - q0[1]) > 0.01
