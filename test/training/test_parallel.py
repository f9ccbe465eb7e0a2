"""train_each: networks trained alone over worker processes give what each gets alone in this process, bit for bit.

Each network is the same single-network computation on one thread whichever process runs it, so the weights, step
counts and stopping flags must be equal exactly (no tolerance); a network trained with another seed differs (checked,
so the comparison can fail). Errors raised in a worker reach the caller with their type and message.
"""

from __future__ import annotations

import numpy as np
import pytest

from deadzone_id_ros.errors import DataError
from deadzone_id_ros.training.parallel import available_cores, train_each, worker_count
from deadzone_id_ros.training.trainer import MLPSpec, TrainArrays, train_mlp


def _arrays(n, seed):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 6))
    y = np.c_[np.sin(x[:, 0]) + x[:, 1], x[:, 2] * x[:, 3]] + 0.1 * rng.normal(size=(n, 2))
    return TrainArrays(x, y, rng.random((n, 2)) > 0.3)


def _same(a, b):
    return all(np.array_equal(p, q) for p, q in zip(a.weights + a.biases, b.weights + b.biases))


def test_workers_give_each_network_what_it_gets_alone(tiny_config):
    train, val = _arrays(3000, 0), _arrays(600, 1)
    specs = [MLPSpec(train, val, loss, seed) for loss in ("masked", "mse") for seed in (0, 1, 2)]
    one = train_each(specs, tiny_config.with_overrides(workers=1))
    two = train_each(specs, tiny_config.with_overrides(workers=2))
    for spec, (w1, i1), (w2, i2) in zip(specs, one, two):
        alone, info = train_mlp(spec.train, spec.val, spec.loss, tiny_config.with_overrides(seed=spec.seed))
        assert _same(w1, w2) and _same(w1, alone)
        assert (i1.steps, i1.best_step, i1.stopped_early) == (i2.steps, i2.best_step, i2.stopped_early)
        assert i1.steps == info.steps
    assert not _same(one[0][0], one[1][0])  # seeds 0 and 1 of the masked loss: a real difference shows


def test_worker_error_reaches_the_caller(tiny_config):
    train = _arrays(500, 0)
    stuck = TrainArrays(train.x, train.y, np.zeros_like(train.r))
    specs = [MLPSpec(train, None, "mse", 0), MLPSpec(stuck, None, "masked", 0, desc="stuck net")]
    with pytest.raises(DataError, match="stuck net: every .* pair .* is inside the dead zone"):
        train_each(specs, tiny_config.with_overrides(workers=2, max_steps=10, eval_interval=10))


def test_worker_count(tiny_config):
    assert worker_count(tiny_config.with_overrides(workers=3), 10) == 3
    assert worker_count(tiny_config.with_overrides(workers=3), 2) == 2
    assert worker_count(tiny_config.with_overrides(workers=0), 100) == available_cores()
    assert worker_count(tiny_config.with_overrides(workers=0, num_threads=available_cores()), 100) == 1
    assert worker_count(tiny_config, 0) == 1
