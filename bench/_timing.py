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


def _sim_loop(arms: Sequence, k0: int, n: int) -> float:
    """Wall seconds of ``n`` physics steps of ``arms`` (step + measure each per step) from torque index ``k0``."""
    tau = np.zeros(arms[0].n_joints)
    t0 = time.perf_counter()
    for k in range(k0, k0 + n):
        tau[:] = _torque(k)
        for arm in arms:
            arm.step(tau)
        for arm in arms:
            arm.measure()
    return time.perf_counter() - t0


def _raw_loops(arms: Sequence, copy_state: bool) -> list:
    """(model, fresh MjData, dof addresses) per arm for the bare loop (MjData from the arm's qpos if
    ``copy_state``)."""
    import mujoco

    loops = []
    for arm in arms:
        model = arm.model
        data = mujoco.MjData(model)
        if copy_state:
            data.qpos[:] = arm.data.qpos
            mujoco.mj_forward(model, data)
        loops.append((model, data, [model.jnt_dofadr[model.joint(j).id] for j in arm.joint_names]))
    return loops


def _raw_loop(loops: list, k0: int, n: int) -> float:
    """Wall seconds of ``n`` bare ``mj_step`` calls per loop of :func:`_raw_loops`, torque into ``qfrc_applied``."""
    import mujoco

    t0 = time.perf_counter()
    for k in range(k0, k0 + n):
        v = _torque(k)
        for model, data, dof in loops:
            data.qfrc_applied[dof] = v
            mujoco.mj_step(model, data)
    return time.perf_counter() - t0


def sim_arm_factor(arms: Sequence, sim_seconds: float) -> float:
    """Simulated seconds per wall second of ``arms`` (SimArm instances with the same dt) stepped together, step +
    measure each per physics step, for ``sim_seconds`` of simulated time."""
    return sim_seconds / _sim_loop(arms, 0, int(sim_seconds / arms[0].dt))


def paired_factors(arms: Sequence, raw_arms: Sequence, sim_seconds: float, blocks: int = 10,
                   copy_state: bool = True) -> tuple[float, float, float]:
    """The simulator and the bare MuJoCo loop timed in alternating blocks, so that both see the same load.

    ``sim_seconds`` of simulated time are split into ``blocks`` blocks; each block runs ``arms`` (step + measure,
    :func:`sim_arm_factor`'s loop) and then the bare loop on the models of ``raw_arms`` (:func:`_raw_loop`'s)
    for the same simulated time, each continuing where its previous block ended. A load burst on a busy machine then
    slows one block pair, not one side of the comparison.

    Returns:
        (simulator factor, raw factor, ratio): each factor the simulated seconds per wall second over all its blocks,
        the ratio the median over the blocks of simulator factor / raw factor.
    """
    n = max(1, int(sim_seconds / arms[0].dt / blocks))
    loops = _raw_loops(raw_arms, copy_state)
    sim_wall, raw_wall = [], []
    for b in range(blocks):
        sim_wall.append(_sim_loop(arms, b * n, n))
        raw_wall.append(_raw_loop(loops, b * n, n))
    total = blocks * n * arms[0].dt
    return (total / sum(sim_wall), total / sum(raw_wall),
            float(np.median(np.asarray(raw_wall) / np.asarray(sim_wall))))
