"""The measured torque's white-noise estimate (second differences, Gasser, Sroka and Jennen-Steinmetz 1986) that
compare reports beside the methods' errors: it recovers a known noise, stays inside each episode and counts only
the moving pairs."""

from __future__ import annotations

import numpy as np
import pytest

from deadzone_id_ros.training.evaluate import torque_noise
from deadzone_id_ros.training.fit import Stacked


def _stacked(tau: np.ndarray, r: np.ndarray, episode_index: np.ndarray) -> Stacked:
    z = np.zeros_like(tau)
    return Stacked(tuple(f"j{k}" for k in range(tau.shape[1])), z, z, z, tau, r, episode_index, 0.001)


def test_a_known_white_noise_is_recovered_under_a_smooth_torque():
    rng = np.random.default_rng(0)
    t = np.arange(20000) * 0.001
    sigma = np.array([0.01, 0.2])
    smooth = np.stack([2.0 * np.sin(2 * np.pi * 0.5 * t), 30.0 * np.cos(2 * np.pi * 1.0 * t)], axis=1)
    tau = smooth + rng.normal(size=smooth.shape) * sigma
    data = _stacked(tau, np.ones_like(tau, dtype=bool), np.zeros(len(t), dtype=int))
    got, normalized, pairs = torque_noise(data)
    # 20000 pseudo-residuals: the estimate's relative standard error is about 0.5 % (lag-correlated residuals)
    np.testing.assert_allclose(got, sigma, rtol=0.03)
    np.testing.assert_allclose(normalized, got / tau.std(axis=0), rtol=1e-12)
    assert pairs.tolist() == [len(t) - 2] * 2
    # the smooth torque alone (0.5 and 1 Hz at 1 kHz) leaves almost nothing: the estimate is the noise, not the motion
    assert np.all(torque_noise(_stacked(smooth, data.r, data.episode_index))[0] < 0.01 * sigma)


def test_episode_seams_and_stuck_pairs_are_not_counted():
    rng = np.random.default_rng(1)
    n = 4000
    tau = rng.normal(size=(n, 1)) * 0.05
    tau[n // 2:] += 100.0  # a jump where one episode ends and the next begins
    episode = np.repeat([0, 1], n // 2)
    r = np.ones((n, 1), dtype=bool)
    tau[500:1000] += rng.normal(size=(500, 1)) * 5.0  # a wild torque while the joint is stuck
    r[490:1010] = False  # (a margin: a moving middle sample's neighbours are not wild)
    got, _, pairs = torque_noise(_stacked(tau, r, episode))
    assert got[0] == pytest.approx(0.05, rel=0.1)  # 3476 pairs: relative standard error about 2 %
    # every triple whose middle row moves and lies inside one episode (not the first or last row of either)
    assert pairs[0] == r[:, 0].sum() - 4
    # counted across the seam, the one jump alone would give sqrt(2 * 100**2 / 6 / 3500) = 0.98 N·m; counted on
    # the stuck rows, their torque would give about 5 * sqrt(500 / 4000) = 1.8 N·m
    merged, _, _ = torque_noise(_stacked(tau, r, np.zeros(n, dtype=int)))
    everywhere, _, _ = torque_noise(_stacked(tau, np.ones_like(r), episode))
    assert merged[0] > 10 * got[0] and everywhere[0] > 10 * got[0]


def test_a_joint_that_never_moves_has_no_estimate():
    tau = np.random.default_rng(2).normal(size=(100, 2))
    r = np.ones((100, 2), dtype=bool)
    r[:, 1] = False
    got, normalized, pairs = torque_noise(_stacked(tau, r, np.zeros(100, dtype=int)))
    assert np.isfinite(got[0]) and np.isnan(got[1]) and np.isnan(normalized[1]) and pairs.tolist() == [98, 0]
