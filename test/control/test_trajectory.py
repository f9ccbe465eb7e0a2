"""Reference sampler continuity (the excitation generator: test_excitation_generator.py)."""

from __future__ import annotations

import numpy as np
import pytest

from deadzone_id_ros.control import TrajectoryPoints, TrajectorySampler

NAMES = ("joint1", "joint2", "joint3")


def _random_points(with_vel: bool, with_acc: bool, seed: int = 0) -> TrajectoryPoints:
    rng = np.random.default_rng(seed)
    t = np.cumsum(rng.uniform(0.2, 0.6, 8))
    pos = rng.normal(size=(8, 3))
    vel = rng.normal(size=(8, 3)) if with_vel else None
    acc = rng.normal(size=(8, 3)) if with_acc else None
    return TrajectoryPoints(NAMES, t, pos, vel, acc)


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("with_acc", [True, False])
def test_sampler_coefficients_are_bit_identical_to_scipy_per_joint(seed, with_acc):
    """The vectorized Hermite construction equals BPoly.from_derivatives joint by joint, bit for bit."""
    from scipy.interpolate import BPoly, PPoly

    pts = _random_points(True, with_acc, seed)
    vel = pts.velocity
    acc = pts.acceleration if with_acc else np.gradient(vel, pts.t, axis=0)
    per_joint = [PPoly.from_bernstein_basis(BPoly.from_derivatives(
        pts.t, np.stack([pts.position[:, j], vel[:, j], acc[:, j]], axis=1))).c for j in range(3)]
    np.testing.assert_array_equal(TrajectorySampler(pts)._pp.c, np.stack(per_joint, axis=-1))


@pytest.mark.parametrize("with_vel,with_acc", [(True, True), (True, False), (False, False)])
def test_sampler_is_continuous_in_q_dq_ddq_at_the_knots(with_vel, with_acc):
    pts = _random_points(with_vel, with_acc)
    s = TrajectorySampler(pts)
    eps = 1e-7
    for tk in pts.t[1:-1]:
        left, right = s.sample(tk - eps), s.sample(tk + eps)
        for a, b, scale in zip(left, right, (1.0, 10.0, 100.0)):
            # Continuous: a jump would show as a difference of order one, not of order eps * derivative.
            assert np.max(np.abs(a - b)) < 1e-4 * scale
    knots = s.sample_many(pts.t)
    np.testing.assert_allclose(knots[0], pts.position, atol=1e-9)
    if with_vel:
        np.testing.assert_allclose(knots[1][1:-1], pts.velocity[1:-1], atol=1e-9)
    if with_acc:
        np.testing.assert_allclose(knots[2][1:-1], pts.acceleration[1:-1], atol=1e-9)


def test_sampler_derivatives_match_finite_differences_and_fast_path():
    s = TrajectorySampler(_random_points(True, True))
    t = np.linspace(s.t_start + 0.01, s.t_end - 0.01, 400)
    q, dq, ddq = s.sample_many(t)
    np.testing.assert_allclose(np.gradient(q, t, axis=0)[1:-1], dq[1:-1], atol=5e-3 * np.abs(dq).max())
    for k in (0, 123, 399):
        for a, b in zip(s.sample(t[k]), (q[k], dq[k], ddq[k])):
            np.testing.assert_allclose(a, b, atol=1e-10)


def test_sampler_holds_outside_the_points():
    pts = _random_points(True, True)
    s = TrajectorySampler(pts)
    q, dq, ddq = s.sample(pts.t[-1] + 5.0)
    np.testing.assert_array_equal(q, pts.position[-1])
    assert not dq.any() and not ddq.any()
    np.testing.assert_array_equal(s.sample(pts.t[0] - 1.0)[0], pts.position[0])


def test_trajectory_points_are_validated():
    with pytest.raises(ValueError, match="t must be finite and strictly increasing"):
        TrajectoryPoints(NAMES, np.array([0.0, 0.0]), np.zeros((2, 3)))
    with pytest.raises(ValueError, match=r"position must have shape \(2, 3\)"):
        TrajectoryPoints(NAMES, np.array([0.0, 1.0]), np.zeros((2, 2)))
    with pytest.raises(ValueError, match="velocity has non-finite values"):
        TrajectoryPoints(NAMES, np.array([0.0, 1.0]), np.zeros((2, 3)), np.full((2, 3), np.nan))
