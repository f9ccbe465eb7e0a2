"""Reference sampler continuity and the excitation generator's limits, seeding and dead-zone phases."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from deadzone_id_ros.control import ExcitationConfig, TrajectoryPoints, TrajectorySampler, generate_excitation
from deadzone_id_ros.errors import ConfigError
from deadzone_id_ros.resources import default_urdf
from deadzone_id_ros.robot import load_robot_description

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


def test_excitation_stays_within_limits_and_is_consistent():
    cfg = ExcitationConfig(duration=30.0, seed=4)
    pts = generate_excitation(cfg, start=[0.0, 0.3, 0.6])
    desc = load_robot_description(default_urdf(), NAMES)
    assert np.all(pts.position >= desc.lower + cfg.position_margin - 1e-9)
    assert np.all(pts.position <= desc.upper - cfg.position_margin + 1e-9)
    assert np.all(np.abs(pts.velocity) <= cfg.velocity_fraction * desc.velocity_limit + 1e-9)
    assert np.all(np.abs(pts.acceleration) <= np.asarray(cfg.acceleration_limit) + 1e-9)
    assert np.all(np.abs(pts.position - [0.0, 0.3, 0.6]) <= np.asarray(cfg.amplitude) + 1e-9)
    # velocity and acceleration are the derivatives of the position (trapezoid-integrated phase: ~1e-3 relative)
    dq_fd = np.gradient(pts.position, pts.t, axis=0)
    assert np.max(np.abs(dq_fd - pts.velocity)) < 0.02 * np.abs(pts.velocity).max()
    ddq_fd = np.gradient(pts.velocity, pts.t, axis=0)
    assert np.max(np.abs(ddq_fd - pts.acceleration)) < 0.05 * np.abs(pts.acceleration).max()
    np.testing.assert_allclose(pts.position[0], [0.0, 0.3, 0.6])
    assert not np.any(pts.velocity[0])


def test_excitation_has_hold_and_slow_phases_per_joint():
    cfg = ExcitationConfig(duration=60.0, seed=1)
    pts = generate_excitation(cfg, start=[0.0, 0.3, 0.6])
    speed = np.abs(pts.velocity)
    held = (speed < 1e-3).mean(axis=0)
    slow = ((speed > 1e-3) & (speed < 0.1 * speed.std(axis=0))).mean(axis=0)
    # hold segments include their smooth rate transitions, so the still time is somewhat below hold_fraction
    assert np.all((held > 0.3 * cfg.hold_fraction) & (held < 1.5 * cfg.hold_fraction)), held
    assert np.all(slow > 0.5 * cfg.slow_fraction), slow
    # joints hold at different times
    assert (speed < 1e-3).all(axis=1).mean() < 0.5 * held.min()


def test_excitation_is_seeded():
    cfg = ExcitationConfig(duration=5.0, seed=7)
    a = generate_excitation(cfg, start=[0.0, 0.3, 0.6])
    b = generate_excitation(cfg, start=[0.0, 0.3, 0.6])
    c = generate_excitation(dataclasses.replace(cfg, seed=8), start=[0.0, 0.3, 0.6])
    np.testing.assert_array_equal(a.position, b.position)
    assert np.abs(a.position - c.position).max() > 0.01


def test_excitation_start_outside_the_range_is_moved_inside_and_bad_center_refused():
    pts = generate_excitation(ExcitationConfig(duration=2.0), start=[0.0, 1.6, 0.6])  # shoulder resting on its limit
    assert pts.position[0, 1] < 1.6 - 0.2
    with pytest.raises(ConfigError, match=r"outside the position limits .* for joint\(s\) \['joint2'\]"):
        generate_excitation(ExcitationConfig(duration=2.0, center=(0.0, 1.5, 0.0), center_from_start=False))
    with pytest.raises(ValueError, match="start must have 3 values"):
        generate_excitation(ExcitationConfig(duration=2.0), start=[0.0, 0.1])


def test_excitation_config_validation_names_the_field():
    with pytest.raises(ValueError, match="leaves too little motion"):
        ExcitationConfig(hold_fraction=0.5, slow_fraction=0.5)
    with pytest.raises(ValueError, match=r"amplitude has 2 values but joint_names has 3"):
        ExcitationConfig(amplitude=(1.0, 1.0))
    with pytest.raises(ValueError, match="duration = -1.0 must be a positive number"):
        ExcitationConfig(duration=-1.0)
    with pytest.raises(ValueError, match="velocity_fraction = 1.5 must be in"):
        ExcitationConfig(velocity_fraction=1.5)
