"""The compiled kernels of the simulator's hot path give the plain expressions' bits, a refused command changes no
number of the run, and the kernels still work where no cache directory is writable."""

from __future__ import annotations

import dataclasses
import math
import subprocess
import sys

import numba
import numpy as np
import pytest

from deadzone_id_ros.robot_configs import bundled_sim_config
from deadzone_id_ros.sim import SimArm, kernels
from deadzone_id_ros.sim.geared import friction_budget
from deadzone_id_ros.sim.normals import NormalPool

RNG = np.random.default_rng(7)


def _vectors(n: int = 200, j: int = 3, scale: float = 3.0) -> np.ndarray:
    return scale * RNG.standard_normal((n, j))


def test_clip_is_numpys_and_refuses_non_finite_values_untouched() -> None:
    high = np.array([4.0, 10.0, 0.5])
    limits = np.array([-high, high])
    for tau in _vectors(scale=8.0):
        out = np.empty(3)
        assert kernels.clip_finite(tau, -high, high, out)
        assert out.tobytes() == np.clip(tau, -high, high).tobytes()
    for bad in ([np.nan, 0.0, 0.0], [0.0, np.inf, 0.0], [1e308, 1e308, -np.inf]):
        out = np.full(3, 7.0)
        assert not kernels.clip_finite(np.array(bad), -high, high, out)
        assert not kernels.geared_step(np.array(bad), limits, out, out, np.zeros(3), np.ones((5, 3)), 1.3, np.zeros(3),
                                       out, out, True)
        assert out.tolist() == [7.0, 7.0, 7.0]


@pytest.mark.parametrize("load", [0.0, 0.05])
def test_budget_is_the_per_joint_expression_and_the_documented_one(load: float) -> None:
    """The kernel's budget equals the per-joint expression in Python floats (math.exp, float pow) bit for bit, and
    geared.friction_budget (numpy's vectorized exp and pow) within 1e-15 relative; the force is tau + noise."""
    fc, r, kls, vs, alpha = np.array([0.05, 0.1, 0.02]), np.array([0.388, 0.2, 0.0]), np.array([0.234, 0.1, 0.3]), \
        np.array([1.52, 0.5, 2.0]), 1.33
    kl = np.full(3, load)
    friction = np.array([fc, kl, fc * r, kls, 1.0 / vs])
    for v, tau, z in zip(_vectors(), _vectors(), _vectors(scale=0.01)):
        budget, force = np.empty(3), np.empty(3)
        kernels.geared_force(tau, v, friction, alpha, z, budget, force, True)
        plain = [(c + k * abs(t)) + math.exp(-((abs(x) * i) ** alpha)) * (cr + ks * abs(t))
                 for x, t, c, k, cr, ks, i in zip(v.tolist(), tau.tolist(), fc.tolist(), kl.tolist(),
                                                  (fc * r).tolist(), kls.tolist(), (1.0 / vs).tolist())]
        assert budget.tobytes() == np.array(plain).tobytes()
        np.testing.assert_allclose(budget, friction_budget(v, tau, fc, r, kl, kls, vs, alpha), rtol=1e-15, atol=0)
        assert force.tobytes() == (tau + z).tobytes()
    budget = np.full(3, 9.0)
    kernels.geared_force(tau, v, friction, alpha, z, budget, force, False)
    assert budget.tolist() == [9.0] * 3  # left alone where the budget does not vary


def test_measurement_and_hand_kernels_are_the_numpy_expressions() -> None:
    res = np.array([1e-3, 2e-3, 1.5e-3])
    for qpos, qvel, z, tau in zip(_vectors(), _vectors(), _vectors(scale=0.01), _vectors()):
        q, dq, effort = np.empty(3), np.empty(3), np.empty(3)
        kernels.measure_plain(qpos, qvel, res, z, tau, q, dq, effort)
        assert q.tobytes() == (np.rint(qpos / res) * res).tobytes()
        assert dq.tobytes() == (qvel + z).tobytes() and effort.tobytes() == tau.tobytes()
        k, d, ref, other = np.array([10.0, 0.0, 3.0]), np.array([0.5, 0.2, 0.0]), qpos + z, tau * 0.1
        qfrc, hand, true = tau.copy(), np.empty(3), np.empty(3)
        kernels.hand_apply(ref, qpos, qvel, k, d, qfrc, hand)
        expected = k * (ref - qpos) - d * qvel
        assert hand.tobytes() == expected.tobytes() and qfrc.tobytes() == (tau + expected).tobytes()
        kernels.hand_remove(qfrc, hand, other, true)
        assert qfrc.tobytes() == ((tau + expected) - expected).tobytes()
        assert true.tobytes() == (other + expected).tobytes()


@pytest.mark.parametrize(("profile", "n_steps"), [("geared_desktop_arm", 1), ("geared_desktop_arm", 2), ("ideal", 1)])
def test_a_refused_command_changes_no_number(profile: str, n_steps: int) -> None:
    """A command refused for its shape or a non-finite value draws no noise and moves nothing: the run goes on with
    the numbers of a run that never saw it (the one-step kernel takes its noise row before it validates)."""
    config = dataclasses.replace(bundled_sim_config(profile=profile), seed=11)
    arm, twin = SimArm(config), SimArm(config)
    for k in range(300):
        if k % 7 == 3:
            with pytest.raises(ValueError, match=r"tau has non-finite values: \[nan, 0\.0, 1\.0\]"):
                arm.step(np.array([np.nan, 0.0, 1.0]), n_steps)
            with pytest.raises(ValueError, match=r"tau must have shape \(3,\), got \(2,\)"):
                arm.step(np.zeros(2), n_steps)
        tau = 2.0 * np.sin(0.01 * k + np.arange(3))
        assert arm.step(tau, n_steps).tobytes() == twin.step(tau, n_steps).tobytes()
        a, b = arm.measure(), twin.measure()
        for name in ("q", "dq", "effort"):
            assert getattr(a, name).tobytes() == getattr(b, name).tobytes()
        assert arm.data.qfrc_applied.tobytes() == twin.data.qfrc_applied.tobytes()
        assert arm.model.dof_frictionloss.tobytes() == twin.model.dof_frictionloss.tobytes()


def test_an_unread_row_comes_out_again_and_the_stream_goes_on() -> None:
    scales = (np.array([0.1, 0.2]), np.array([1.0, 3.0]))
    pool, reference = NormalPool(np.random.default_rng(3), scales, rows=4), np.random.default_rng(3)
    for k in range(30):
        row = pool.next_row()
        if k % 3 == 0:
            pool.unread(row)
            again = pool.next_row()
            assert all(a is b for a, b in zip(again, row))
        z = reference.standard_normal(2)
        assert row[0].tobytes() == (scales[0] * z).tobytes() and row[1].tobytes() == (scales[1] * z).tobytes()


def test_kernels_compile_without_a_disk_cache_where_none_is_writable(monkeypatch: pytest.MonkeyPatch) -> None:
    """numba refuses ``cache=True`` when neither the module's folder nor a user cache folder is writable; the kernels
    are then compiled per process, with one warning."""

    class NoCache:
        @staticmethod
        def njit(cache: bool = False, **options: str):
            if cache:
                def refuse(fn):
                    raise RuntimeError(f"cannot cache function {fn.__name__!r}: no locator available for file 'x'")
                return refuse
            return numba.njit(cache=False, **options)

    monkeypatch.setattr(kernels, "numba", NoCache)
    monkeypatch.setattr(kernels, "_uncached", [])

    def twice(x: np.ndarray) -> None:
        x[0] = 2.0 * x[0]

    with pytest.warns(RuntimeWarning, match="compiled in every process.*NUMBA_CACHE_DIR"):
        kernel = kernels._jit(twice)
    x = np.array([1.5])
    kernel(x)
    assert x.tolist() == [3.0] and kernels._uncached == ["twice"]


def test_building_an_arm_loads_the_kernels_its_steps_call() -> None:
    """SimArm's constructor loads every kernel for the types of the hot path's calls (kernels.warm_up), so the first
    physics steps of the arm, of the operator's hand (any reference; with a push) and of the box load or compile
    nothing, whatever command a caller gives (strided, read-only, a list): a real-time loop's first tick is not late
    by numba's start-up. In a fresh process: this one has loaded them already."""
    code = """
import numpy as np
from deadzone_id_ros.experiments.teleop.run import _probe
from deadzone_id_ros.sim import SimArm, kernels
from deadzone_id_ros.sim.external_forces import ExternalForces, ObstacleConfig, PushConfig
from deadzone_id_ros.teleop.build import arm_setup
from deadzone_id_ros.teleop.sim import OperatorHand
names = [n for n in kernels.__all__ if n != "warm_up"]
assert not any(getattr(kernels, n).signatures for n in names)
setup = arm_setup("", "identified")
home = np.asarray(setup.sim.initial_position, float)
fixed = home.copy()
fixed.flags.writeable = False
link, point = _probe(setup)
hand = OperatorHand(reference=lambda t: home, stiffness=[10.0] * 3, damping=[0.5] * 3)
# a read-only reference, one value for every joint, and a hand that also pushes (its other torque is writable)
held = OperatorHand(reference=lambda t: fixed, stiffness=[10.0] * 3, damping=[0.5] * 3)
scalar = OperatorHand(reference=lambda t: 0.0, stiffness=[10.0] * 3, damping=[0.5] * 3,
                      pushes=[PushConfig(link=link, magnitude=1.0, point=point, duration=1.0)])
box = ObstacleConfig(position=(9.0, 9.0, 9.0), probe_link=link, probe_point=point)
arms = [SimArm(), SimArm(setup.sim, external=hand), SimArm(setup.sim, external=ExternalForces(obstacle=box)),
        SimArm(setup.sim, external=held), SimArm(setup.sim, external=scalar)]
loaded = {n: list(getattr(kernels, n).signatures) for n in names}
for k in range(5):
    tau = np.full(6, 0.1 * k)
    strided, frozen = tau[::2], tau[:3].copy()
    frozen.flags.writeable = False
    for arm in arms:
        for command in (tau[:3], strided, frozen, [0.1 * k] * 3):  # any command a caller may give
            arm.step(command)
        arm.measure()
print(all(loaded.values()), {n: list(getattr(kernels, n).signatures) for n in names} == loaded)
"""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0 and proc.stdout.split() == ["True", "True"], (proc.stdout, proc.stderr[-2000:])
