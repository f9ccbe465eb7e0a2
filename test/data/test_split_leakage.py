"""No leakage at split boundaries: no test sample's dq/ddq is computed from a training sample's recorded data."""

from __future__ import annotations

import numpy as np
import pytest

from deadzone_id_ros.data.dataset import DatasetConfig, dataset_from_recordings
from deadzone_id_ros.data.split import split_episodes, time_blocks
from deadzone_id_ros.data.types import Recording

RATE = 200.0  # Hz; 0.05 s Savitzky–Golay window = 11 samples, half window 5


def _recording(seed: int = 0, n: int = 4000) -> Recording:
    rng = np.random.default_rng(seed)
    t = np.arange(n) / RATE
    q = np.stack([np.sin(0.7 * t + k) + 0.01 * rng.standard_normal(n) for k in range(2)], axis=1)
    dq = np.gradient(q, t, axis=0)
    tau = rng.standard_normal((n, 2))
    return Recording(("a", "b"), (t * 1e9).round().astype(np.int64), q, dq, tau)


def _perturbed_at(rec: Recording, windows: list[tuple[float, float]]) -> Recording:
    """``rec`` with position, velocity and effort changed at every message inside one of the time windows [s]."""
    t = rec.state_t_ns / 1e9
    hit = np.zeros(len(t), bool)
    for a, b in windows:
        hit |= (t >= a - 1e-9) & (t <= b + 1e-9)
    q, dq, tau = rec.position.copy(), rec.velocity.copy(), rec.effort.copy()
    q[hit] += 0.3
    dq[hit] -= 0.5
    tau[hit] += 1.0
    return Recording(rec.joint_names, rec.state_t_ns, q, dq, tau)


@pytest.mark.parametrize("velocity", ["message", "differentiate"])
@pytest.mark.parametrize("guarded", [True, False])
def test_no_test_sample_uses_a_training_sample(velocity, guarded):
    cfg = DatasetConfig(velocity=velocity)
    rec = _recording()
    ep = dataset_from_recordings([rec], cfg).episodes[0]
    assert ep.edge_reach == (5 if velocity == "message" else 10) + 1
    if not guarded:
        ep.edge_reach = 0  # what the split did before the guard
    split = split_episodes([ep], (0.6, 0.2, 0.2), block_seconds=2.0, seed=3)
    # change every recorded message that lies inside a training block: test samples must not notice
    windows = [(float(b.t[0]), float(b.t[-1])) for b in split.train]
    again = dataset_from_recordings([_perturbed_at(rec, windows)], cfg).episodes[0]
    changed = 0
    for block in split.test:
        rows = np.searchsorted(ep.t, block.t)
        for name in ("q", "dq", "ddq", "tau"):
            changed += int(np.sum(~np.isclose(getattr(again, name)[rows], getattr(block, name), rtol=0, atol=1e-9)))
    if guarded:
        assert changed == 0
        assert split.guard_samples > 0
    else:  # the check can fail: without the guard, test samples next to training blocks change
        assert changed > 0


def test_guard_drops_edge_reach_samples_on_each_side_of_a_cut():
    ep = dataset_from_recordings([_recording(n=1000)], DatasetConfig(velocity="message")).episodes[0]
    blocks = time_blocks(ep, 1.0)  # 200 samples per block, 5 blocks
    g = ep.edge_reach
    assert [len(b) for b in blocks] == [200 - g, 200 - 2 * g, 200 - 2 * g, 200 - 2 * g, 200 - g]
    starts = [int(np.searchsorted(ep.t, b.t[0])) for b in blocks]
    ends = [int(np.searchsorted(ep.t, b.t[-1])) for b in blocks]
    assert all(s - e - 1 == 2 * g for e, s in zip(ends[:-1], starts[1:]))
    with pytest.raises(ValueError, match="use longer blocks"):
        time_blocks(ep, 2 * g / RATE)
