"""Timed step loops shared by the simulator benchmarks (bench_sim.py, bench_teleop.py): the product's SimArm and a
bare MuJoCo loop on the same compiled models, driven by the same sinusoidal torque, so each figure has its raw-library
counterpart measured the same way."""

from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np


def _torque(k: int) -> float:
    """The benchmark torque at physics step k [N·m]: 0.5 sin(0.002 k) on every joint."""
    return 0.5 * np.sin(0.002 * k)


def sim_arm_factor(arms: Sequence, sim_seconds: float) -> float:
    """Simulated seconds per wall second of ``arms`` (SimArm instances with the same dt) stepped together, step +
    measure each per physics step, for ``sim_seconds`` of simulated time."""
    n = int(sim_seconds / arms[0].dt)
    tau = np.zeros(arms[0].n_joints)
    t0 = time.perf_counter()
    for k in range(n):
        tau[:] = _torque(k)
        for arm in arms:
            arm.step(tau)
        for arm in arms:
            arm.measure()
    return sim_seconds / (time.perf_counter() - t0)


def raw_mujoco_factor(arms: Sequence, sim_seconds: float, copy_state: bool = True) -> float:
    """Simulated seconds per wall second of bare ``mujoco.mj_step`` loops on the compiled models of ``arms`` (fresh
    MjData each, from the arm's qpos when ``copy_state``), torque into ``qfrc_applied`` of the arm's joints."""
    import mujoco

    loops = []
    for arm in arms:
        model = arm.model
        data = mujoco.MjData(model)
        if copy_state:
            data.qpos[:] = arm.data.qpos
            mujoco.mj_forward(model, data)
        loops.append((model, data, [model.jnt_dofadr[model.joint(j).id] for j in arm.joint_names]))
    n = int(sim_seconds / arms[0].model.opt.timestep)
    t0 = time.perf_counter()
    for k in range(n):
        v = _torque(k)
        for model, data, dof in loops:
            data.qfrc_applied[dof] = v
            mujoco.mj_step(model, data)
    return sim_seconds / (time.perf_counter() - t0)
