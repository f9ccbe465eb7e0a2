"""The external forces' fast paths give the plain expressions' bits: the operator's hand (K (r - q) - D dq, added to
the applied force and removed after) and the box's contact torque (J^T of the contact rows of efc_force)."""

from __future__ import annotations

import dataclasses

import mujoco
import numpy as np
import pytest

from deadzone_id_ros.experiments.teleop.run import _probe
from deadzone_id_ros.sim import external_forces
from deadzone_id_ros.sim.arm import SimArm
from deadzone_id_ros.sim.external_forces import ExternalForces, ObstacleConfig
from deadzone_id_ros.teleop.build import arm_setup
from deadzone_id_ros.teleop.sim import OperatorHand

_CONTACT = [int(mujoco.mjtConstraint.mjCNSTR_CONTACT_FRICTIONLESS), int(mujoco.mjtConstraint.mjCNSTR_CONTACT_PYRAMIDAL),
            int(mujoco.mjtConstraint.mjCNSTR_CONTACT_ELLIPTIC)]


def test_hand_torque_is_the_plain_impedance_bit_for_bit() -> None:
    setup = arm_setup("", "identified")
    home = np.asarray(setup.sim.initial_position, float)
    k, d = np.array([10.0, 7.0, 0.0]), np.array([0.5, 0.0, 0.3])
    hand = OperatorHand(reference=lambda t: home + 0.2 * np.sin(3.0 * t), stiffness=k, damping=d)
    arm = SimArm(dataclasses.replace(setup.sim, seed=3), external=hand)
    arm.reset(home)
    dof, qadr = arm._dof, arm._qadr
    for i in range(300):
        q, dq, t = arm.data.qpos[qadr].copy(), arm.data.qvel[dof].copy(), float(arm.data.time)
        expected = k * (np.asarray(home + 0.2 * np.sin(3.0 * t), dtype=float) - q) - d * dq
        force = arm.data.qfrc_applied.copy()
        arm.external.step(arm.model, arm.data)  # the hand's step alone, on whatever force the arm left
        assert hand.hand_torque.tobytes() == expected.tobytes()
        assert hand.true_torque.tobytes() == (np.zeros(3) + expected).tobytes()
        restored = force.copy()
        restored[dof] = (force[dof] + expected) - expected
        assert arm.data.qfrc_applied.tobytes() == restored.tobytes()
        arm.step(np.full(3, 0.3 * np.sin(0.01 * i)))


@pytest.mark.parametrize("few_rows", [32, 0])  # the rows picked in Python floats, and by numpy
def test_contact_torque_is_jt_of_the_contact_rows_bit_for_bit(few_rows: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(external_forces, "_FEW_ROWS", few_rows)
    setup = arm_setup("", "identified")
    home = np.asarray(setup.sim.initial_position, float)
    link, point = _probe(setup)
    probe = SimArm(setup.sim, external=ExternalForces(obstacle=ObstacleConfig(position=(9.0, 9.0, 9.0),
                                                                              probe_link=link, probe_point=point)))
    probe.reset(home)
    tip = probe.data.geom("sense_probe").xpos.copy()
    box = ObstacleConfig(position=tuple(tip - np.array([0.0, 0.0, 0.05 + 0.01 - 0.002])), probe_link=link,
                         probe_point=point, half_size=(0.05,) * 3, probe_radius=0.01)  # 2 mm into the top face
    ext = ExternalForces(obstacle=box)
    arm = SimArm(dataclasses.replace(setup.sim, seed=4), external=ext)
    arm.reset(home)
    touching = 0
    for i in range(400):
        arm.step(np.array([0.0, -0.4, 0.2]) * (1.0 + np.sin(0.02 * i)))
        m, d, n = arm.model, arm.data, arm.data.nefc
        efc = np.where(np.isin(d.efc_type[:n], _CONTACT), d.efc_force[:n], 0.0)
        jt = np.zeros(m.nv)
        mujoco.mj_mulJacTVec(m, d, jt, efc)
        expected = (np.zeros(m.nv) + jt)[arm._dof]
        assert ext.true_torque.tobytes() == expected.tobytes()
        touching += bool(np.any(efc != 0))
    assert touching > 100  # the probe pressed the box
