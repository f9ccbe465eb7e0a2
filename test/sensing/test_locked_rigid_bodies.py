"""Every rigid-body model holds a locked joint where the robot profile locks it (review of issues 39/40), as the
simulator welds it (:mod:`deadzone_id_ros.sim.locked`): the controller's nominal model, the momentum observer, the
DOB estimator and the wrench estimator. Before, they placed it at pinocchio's neutral configuration (0), so with
the bundled arm's elbow joint2 locked at 0.7 rad their gravity torque of joint3 was that of another pose.
"""

from __future__ import annotations

import warnings

import mujoco
import numpy as np
import pytest

from deadzone_id_ros.models.runtime import NominalRigidBodyModel, load_model
from deadzone_id_ros.resources import default_urdf
from deadzone_id_ros.robot.derived import derive_robot
from deadzone_id_ros.robot.profile import load_profile
from deadzone_id_ros.robot.reduced import locked_positions
from deadzone_id_ros.robot_configs import controller_config, sim_config
from deadzone_id_ros.sensing import SensingConfig, build_sensor
from deadzone_id_ros.sensing.wrench import WrenchEstimator
from deadzone_id_ros.sim import SimArm

LOCK = 0.7  # [rad], joint2 (parallel to joint3's axis: joint3's gravity torque depends on it)
Q = np.array([0.4, -0.5])  # joint1, joint3 [rad]


@pytest.fixture(scope="module")
def locked_robot(tmp_path_factory):
    """The bundled arm controlled at joint1 and joint3, its joint2 locked at :data:`LOCK`, and its simulated arm."""
    path = tmp_path_factory.mktemp("locked") / "elbow_locked.yaml"
    path.write_text(f"name: elbow_locked\nurdf: {default_urdf()}\njoints: [joint1, joint3]\n"
                    f"locked: {{joint2: {LOCK}}}\n")
    robot = derive_robot(load_profile(path))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # FrictionSourceWarning
        arm = SimArm(sim_config(robot))
    return robot, arm


def _gravity_mujoco(arm: SimArm) -> np.ndarray:
    """(J,) the simulator's torque to hold :data:`Q` at rest [N·m] (mj_inverse, the locked joint welded)."""
    return arm.inverse_dynamics(Q, np.zeros(2), np.zeros(2))


def test_the_controllers_nominal_model_holds_the_locked_joint_at_the_profiles_angle(locked_robot):
    robot, arm = locked_robot
    tau_mj = _gravity_mujoco(arm)
    neutral = NominalRigidBodyModel(default_urdf(), robot.joint_names).predict(Q, np.zeros(2), np.zeros(2))
    assert abs(neutral[1] - tau_mj[1]) > 0.05, "joint2 at 0 or at LOCK must differ, or the test sees nothing"
    ctrl = controller_config(robot, mode="ctc_dob", model="rbd", armature=(0.0, 0.0))
    assert locked_positions(ctrl.locked_joints) == {"joint2": LOCK}
    tau = load_model(ctrl).predict(Q, np.zeros(2), np.zeros(2))
    np.testing.assert_allclose(tau, tau_mj, rtol=0, atol=1e-9)


@pytest.mark.parametrize("kind", ["momentum", "dob"])
def test_the_sensing_estimators_see_no_external_torque_when_the_arm_holds_still(locked_robot, kind):
    """The arm held at rest by exactly the simulator's gravity torque: no external torque. An estimator whose rigid
    body puts joint2 elsewhere reads the gravity difference as a push."""
    robot, arm = locked_robot
    tau = _gravity_mujoco(arm)
    ctrl = controller_config(robot, mode="pd_dob", model="rbd")
    sensor = build_sensor(SensingConfig(sensing_estimator=kind, sensing_cutoff=50.0), load_model(ctrl),
                          default_urdf(), robot.joint_names, nominal_inertia=ctrl.nominal_inertia,
                          locked=locked_positions(ctrl.locked_joints))
    est = np.zeros(2)
    for k in range(400):  # 0.4 s at 1 kHz: about 20 time constants of the 50 rad/s filter
        est = sensor.estimator.update(k * 1e-3, Q, np.zeros(2), tau)
    np.testing.assert_allclose(est, 0.0, rtol=0, atol=1e-6)


def test_the_wrench_estimators_jacobian_is_the_simulators_at_the_locked_angle(locked_robot):
    robot, arm = locked_robot
    wrench = WrenchEstimator(default_urdf(), robot.joint_names, "link3", locked=dict(robot.profile.locked))
    m, d = arm.model, arm.data
    arm.reset(Q)
    mujoco.mj_kinematics(m, d)
    mujoco.mj_comPos(m, d)
    jacp, jacr = np.zeros((3, m.nv)), np.zeros((3, m.nv))
    mujoco.mj_jacBody(m, d, jacp, jacr, m.body("link3").id)
    dofs = [m.jnt_dofadr[m.joint(n).id] for n in robot.joint_names]
    np.testing.assert_allclose(wrench.jacobian(Q), np.vstack([jacp, jacr])[:, dofs], rtol=0, atol=1e-9)
