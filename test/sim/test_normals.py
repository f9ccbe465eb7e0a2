"""The block-drawn noise pool hands out the numbers of per-call draws; SimArm's fast path is the plain one."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from deadzone_id_ros.sim import SimArm
from deadzone_id_ros.sim.normals import NormalPool


@pytest.mark.parametrize("rows", [1, 3, 1024])
def test_pool_rows_equal_per_call_draws(rows: int) -> None:
    scales = (np.array([0.1, 0.02, 3.0]), np.array([1e-3, 0.5, 0.0]))
    pool = NormalPool(np.random.default_rng(42), scales, rows=rows)
    reference = np.random.default_rng(42)
    for _ in range(2500):  # several refills of the largest block
        row = pool.next_row()
        z = reference.standard_normal(3)
        assert len(row) == 2
        for got, scale in zip(row, scales):
            assert got.tobytes() == (scale * z).tobytes()  # bit for bit, not approximately


def test_pool_rows_are_read_only() -> None:
    row = NormalPool(np.random.default_rng(0), [np.ones(2)]).next_row()[0]
    with pytest.raises(ValueError, match="read-only"):
        row[0] = 1.0


@pytest.mark.parametrize(("kwargs", "match"), [({"rows": 0}, "rows"), ({"scales": []}, "scales"),
                                               ({"scales": [np.ones(2), np.ones(3)]}, "scales")])
def test_pool_rejects_bad_arguments(kwargs: dict, match: str) -> None:
    args = {"rng": np.random.default_rng(0), "scales": [np.ones(2)], **kwargs}
    with pytest.raises(ValueError, match=match):
        NormalPool(**args)


def _plain_step(arm: SimArm, tau: np.ndarray, rng: np.random.Generator) -> None:
    """The simulator's step written as the array expressions of sim/geared.py, one numpy call per draw; the Stribeck
    curve per joint with the platform's exp and pow, as the simulator evaluates it (numpy's vectorized exp and pow
    can differ from them in the last bit; test_geared.py compares the budget with geared.friction_budget)."""
    commanded = np.clip(tau, -arm.effort_limit, arm.effort_limit)
    d, dof = arm.data, arm._dof
    t = np.abs(commanded)
    s = np.array([math.exp(-((abs(v) * i) ** arm._alpha)) for v, i in zip(d.qvel[dof].tolist(), arm._inv_vs)])
    arm.model.dof_frictionloss[dof] = arm._coulomb + arm._load * t + s * (arm._coulomb_r + arm._load_s * t)
    d.qfrc_applied[dof] = commanded + arm._noise_std * rng.standard_normal(arm.n_joints)
    import mujoco

    mujoco.mj_step(arm.model, d)


@pytest.mark.parametrize("load", [0.05, 0.0])  # Kl and Kls; Kls alone (F1 evaluated inside the per-joint budget)
def test_fast_step_and_measure_match_the_plain_expressions(load: float) -> None:
    """Without actuation delay, SimArm.step + measure give the same bits as the plain numpy expressions with the
    same seed (so the block-drawn noise, the clip and the friction budget on lists change no number)."""
    fast = SimArm()
    config = dataclasses.replace(fast.config, actuation_delay=0.0, load_friction=(load,) * fast.n_joints)
    assert any(config.load_friction_stribeck)
    fast, plain = SimArm(config), SimArm(config)
    rng = np.random.default_rng(config.seed)
    res = plain._resolution
    for k in range(400):
        tau = 1.5 * fast.effort_limit * np.sin(0.01 * k + np.arange(fast.n_joints))
        fast.step(tau)
        _plain_step(plain, tau, rng)
        m = fast.measure()
        q = np.round(plain.data.qpos[plain._qadr] / res) * res
        dq = plain.data.qvel[plain._dof] + np.asarray(config.velocity_noise_std) * rng.standard_normal(plain.n_joints)
        assert m.q.tobytes() == q.tobytes()
        assert m.dq.tobytes() == dq.tobytes()
        assert fast.model.dof_frictionloss.tobytes() == plain.model.dof_frictionloss.tobytes()
    assert np.any(fast.dq != 0)  # the arm moved
