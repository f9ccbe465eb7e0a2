"""The derived simulated noise and bandwidth (issue 36): white-noise propagation through the joint-space inertia, the
default noise scaled down on an arm whose excitation is slow, the bandwidth raised on a light joint held by its
friction, and the shipped profiles keeping the plain defaults."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import needs_erd

from deadzone_id_ros.robot import derive_robot, resolve_profile
from deadzone_id_ros.robot.derived import (
    NOISE_ACCELERATION_FRACTION,
    STICK_ERROR,
    TORQUE_NOISE_FRACTION,
    VELOCITY_NOISE_STD,
)
from deadzone_id_ros.robot.inertia import mass_matrices, noise_acceleration, sample_poses


def test_noise_acceleration_is_the_row_norm_of_the_inverse_inertia_times_the_gains():
    """Two poses of a 2-joint inertia: the slow reference (a loop over poses and rows) against the function."""
    masses = np.array([[[2.0, 0.5], [0.5, 1.0]], [[3.0, -1.0], [-1.0, 1.5]]])
    armature = np.array([0.1, 0.2])
    gains = np.array([1.0, 4.0])
    want = np.zeros(2)
    for m in masses:
        inv = np.linalg.inv(m + np.diag(armature))
        for j in range(2):
            want[j] = max(want[j], float(np.sqrt(sum((inv[j, k] * gains[k]) ** 2 for k in range(2)))))
    np.testing.assert_allclose(noise_acceleration(masses, armature, gains), want, rtol=1e-12)
    with pytest.raises(ValueError, match=r"masses must be \(P, J, J\) and armature, gains \(J,\)"):
        noise_acceleration(masses, armature, np.ones(3))


def _accelerations(robot):
    poses = sample_poses(robot.description.lower, robot.description.upper, robot.home)
    masses = mass_matrices(robot.urdf_path, robot.joint_names, robot.profile.locked, poses)
    torque = noise_acceleration(masses, robot.armature, robot.torque_noise_std)
    velocity = noise_acceleration(masses, robot.armature,
                                  robot.nominal_inertia * (robot.kd + robot.dob_cutoff) * robot.velocity_noise_std)
    return torque / robot.acceleration_limit, velocity / robot.acceleration_limit


@needs_erd
def test_the_kinova_gets_less_noise_than_the_plain_defaults_and_says_why():
    """The Jaco's slow excitation (0.63 rad/s) and light wrist: the plain defaults would shake it by up to 0.94 of
    its acceleration limit; the derived noise stays within the fraction, marked derived with the reason."""
    robot = derive_robot(resolve_profile("catalog:kinova"))
    assert np.all(robot.velocity_noise_std < VELOCITY_NOISE_STD)
    assert np.all(robot.torque_noise_std < TORQUE_NOISE_FRACTION * robot.effort_limit)
    torque, velocity = _accelerations(robot)
    assert torque.max() == pytest.approx(NOISE_ACCELERATION_FRACTION, rel=1e-6)
    assert velocity.max() == pytest.approx(NOISE_ACCELERATION_FRACTION, rel=1e-6)
    assert set(robot.origin["velocity_noise_std"]) == {"derived"} and "velocity_noise_std" in robot.reasons


@needs_erd
@pytest.mark.parametrize("name", ["panda", "so101"])
def test_the_shipped_profiles_keep_the_plain_defaults(name):
    robot = derive_robot(resolve_profile(name))
    np.testing.assert_allclose(robot.bandwidth, 20.0)  # no joint's friction asks for more
    np.testing.assert_allclose(robot.velocity_noise_std, VELOCITY_NOISE_STD)
    np.testing.assert_allclose(robot.torque_noise_std, TORQUE_NOISE_FRACTION * robot.effort_limit)
    torque, velocity = _accelerations(robot)
    assert torque.max() < NOISE_ACCELERATION_FRACTION and velocity.max() < NOISE_ACCELERATION_FRACTION


@needs_erd
def test_a_light_joint_dominated_by_friction_gets_a_higher_bandwidth_within_the_cap():
    """The Talos wrist: URDF friction 1 N*m on Jn 0.013 kg*m^2 asks sqrt(F / (Jn STICK_ERROR)) = 40 rad/s; the loop
    delay and the inertia spread cap it at w_max / (2 zeta kappa); the heavy joints keep the profile's 20."""
    robot = derive_robot(resolve_profile("catalog:talos_left_arm"))
    i = robot.joint_names.index("arm_left_5_joint")
    cap = robot.loop_crossover_limit / (2 * robot.profile.damping_ratio * robot.inertia_gain)
    want = np.sqrt(robot.frictionloss / (robot.nominal_inertia * STICK_ERROR))
    np.testing.assert_allclose(robot.bandwidth, np.minimum(np.maximum(20.0, want), cap))
    assert robot.bandwidth[i] == pytest.approx(cap) and robot.bandwidth[0] == 20.0
    assert "static friction dominates a light joint" in robot.reasons["bandwidth"]
