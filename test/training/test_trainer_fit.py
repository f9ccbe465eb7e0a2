"""Training loop (determinism, early stopping) and method fitting (what each method learns from)."""

from __future__ import annotations

import numpy as np
import pytest

from deadzone_id_ros.data.deadzone import fit_dead_zone
from deadzone_id_ros.errors import DataError
from deadzone_id_ros.models import RigidBodyRegressor
from deadzone_id_ros.resources import default_urdf
from deadzone_id_ros.training.fit import identify_band_halfwidth, stack_episodes, usable_fraction
from deadzone_id_ros.training.planner import fit_method
from deadzone_id_ros.training.trainer import TrainArrays, stopping_rows, train_mlp


def _arrays(n=1500, seed=0, noise_only=False):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 6))
    y = rng.normal(size=(n, 2)) if noise_only else np.c_[np.sin(x[:, 0]) + x[:, 1], x[:, 2] * x[:, 3]]
    return TrainArrays(x, y, rng.random((n, 2)) > 0.3)


def test_same_seed_same_weights_other_seed_differs(tiny_config):
    a, b, c = (
        train_mlp(_arrays(), _arrays(300, 1), "masked", tiny_config.with_overrides(seed=s))[0] for s in (4, 4, 5)
    )
    for wa, wb in zip(a.weights, b.weights):
        np.testing.assert_array_equal(wa, wb)
    assert not np.array_equal(a.weights[0], c.weights[0])


def test_learns_and_early_stops_on_noise(tiny_config):
    _, info = train_mlp(_arrays(), _arrays(300, 1), "mse", tiny_config.with_overrides(max_steps=300))
    assert info.history[-1]["train_loss"] < 0.5 * info.history[0]["train_loss"] or info.best_val_loss < 0.3
    cfg = tiny_config.with_overrides(max_steps=3000, eval_interval=20, patience=2, learning_rate=0.01)
    _, info = train_mlp(_arrays(noise_only=True), _arrays(300, 1, noise_only=True), "mse", cfg)
    assert info.stopped_early and info.steps < 3000
    assert info.best_step <= info.steps - 2 * 20  # the returned weights are the best, not the last
    assert info.samples_per_s > 0


def test_early_stopping_evaluates_a_fixed_subset_of_the_validation_split(tiny_config):
    val = _arrays(1000, 1)
    assert stopping_rows(val, 0) is val and stopping_rows(val, 1000) is val and stopping_rows(None, 10) is None
    sub = stopping_rows(val, 100)
    assert sub is not None and len(sub) == 100
    rows = [int(np.flatnonzero((val.x == row).all(1))[0]) for row in sub.x]
    assert rows[0] == 0 and rows[-1] == 999 and np.all(np.diff(rows) >= 10) and np.all(np.diff(rows) <= 11)
    np.testing.assert_array_equal(sub.y, val.y[rows])
    np.testing.assert_array_equal(sub.r, val.r[rows])
    # training evaluates exactly those rows: the same run as one given only them, another than on all rows
    cfg = tiny_config.with_overrides(max_steps=200, eval_interval=20)
    a = train_mlp(_arrays(), val, "masked", cfg.with_overrides(stop_val_samples=100))
    b = train_mlp(_arrays(), sub, "masked", cfg.with_overrides(stop_val_samples=0))
    full = train_mlp(_arrays(), val, "masked", cfg.with_overrides(stop_val_samples=0))
    assert a[1].history == b[1].history != full[1].history
    for wa, wb in zip(a[0].weights, b[0].weights):
        np.testing.assert_array_equal(wa, wb)


def test_trainer_errors(tiny_config):
    data = _arrays()
    with pytest.raises(ValueError, match="loss = 'huber' must be"):
        train_mlp(data, None, "huber", tiny_config)
    stuck = TrainArrays(data.x, data.y, np.zeros_like(data.r))
    with pytest.raises(DataError, match="every .* pair of the training split is inside the dead zone"):
        train_mlp(stuck, None, "masked", tiny_config)
    with pytest.raises(ValueError, match=r"must be \(N, D\), \(N, J\), \(N, J\)"):
        TrainArrays(data.x, data.y, data.r[:, :1])


def test_methods_learn_from_what_they_should(sim_dataset, tiny_config):
    eps = sim_dataset.episodes
    dz = fit_dead_zone(eps[:1])
    train, val = stack_episodes(eps[:1], dz), stack_episodes(eps[1:], dz)
    all_moving = train.r.all(axis=1)
    assert 0.05 < all_moving.mean() < 0.95  # the data has a real dead zone
    conv = fit_method("conventional", train, val, dz, tiny_config)
    assert conv.info.train_samples == int(all_moving.sum())  # exactly the samples with no stuck joint
    assert conv.usable_fraction == pytest.approx(all_moving.mean())
    masked = fit_method("masked", train, val, dz, tiny_config)
    assert masked.info.train_samples == len(train)
    assert masked.usable_fraction == pytest.approx(train.r.mean())
    assert usable_fraction("mse_all", train.r) == 1.0
    reg = RigidBodyRegressor(default_urdf().read_text(), train.joint_names)
    rbd = fit_method("rbd", train, val, dz, tiny_config, regressor=reg)
    assert rbd.info.rbd_rows == int(train.r.sum()) and rbd.model.mlp is None
    hybrid = fit_method("hybrid", train, val, dz, tiny_config, rbd=rbd.model.rbd)
    assert hybrid.model.rbd is rbd.model.rbd and hybrid.model.mlp is not None


def test_fit_errors(sim_dataset, tiny_config):
    eps = sim_dataset.episodes
    dz = fit_dead_zone(eps[:1])
    train, val = stack_episodes(eps[:1], dz), stack_episodes(eps[1:], dz)
    with pytest.raises(DataError, match=r"method 'rbd' needs a URDF whose joints are \['joint1', 'joint2', 'joint3'\]"):
        fit_method("rbd", train, val, dz, tiny_config)
    nobody_moves = train.subset(~train.r.all(axis=1))
    with pytest.raises(DataError, match="conventional: no training sample has every joint outside its dead zone"):
        fit_method("conventional", nobody_moves, val, dz, tiny_config)
    with pytest.raises(ValueError, match=r"unknown method\(s\) \['lasso'\]"):
        fit_method("lasso", train, val, dz, tiny_config)
    other = fit_dead_zone([eps[0]])
    renamed = type(eps[0])("x", "y", ("a", "b", "c"), eps[0].t, eps[0].q, eps[0].dq, eps[0].ddq, eps[0].tau)
    with pytest.raises(DataError, match=r"episode x \(y\) has joints \['a', 'b', 'c'\]"):
        stack_episodes([renamed], other)


def test_band_method_trains_on_every_pair_with_an_identified_band(sim_dataset, tiny_config):
    """band: trained on all pairs (usable 1.0), its tau_s identified from stuck training pairs (with and without
    the rigid-body model), and the trainer refuses a band loss without a band."""
    dz = fit_dead_zone(sim_dataset.episodes, tiny_config.dead_zone)
    data = stack_episodes(sim_dataset.episodes, dz)
    reg = RigidBodyRegressor(default_urdf().read_text(), data.joint_names, 0.01)
    fit = fit_method("band", data, data, dz, tiny_config, regressor=reg)
    band = np.asarray(fit.info.band_halfwidth)
    assert fit.usable_fraction == 1.0 and fit.model.rbd is None and fit.model.mlp is not None
    assert band.shape == (3,) and np.all(band > 0)
    # The band is the spread of stuck torques around the moving-pairs model: well below the torques' own spread.
    stuck_spread = np.array([np.ptp(data.tau[~data.r[:, j], j]) for j in range(3)])
    assert np.all(band < stuck_spread)
    lin = identify_band_halfwidth(data, None)  # no URDF: linear-model residual
    assert lin.shape == (3,) and np.all(lin > 0) and np.all(lin < stuck_spread)
    arrays = TrainArrays(data.x, data.tau, data.r)
    with pytest.raises(ValueError, match="band loss needs band"):
        train_mlp(arrays, None, "band", tiny_config)


def test_stopping_rule_patience_min_delta_and_best_weights():
    """The rule alone, on a fixed sequence of validation losses (no floats from training: nothing can flip)."""
    from deadzone_id_ros.training.trainer import EarlyStopping

    rule = EarlyStopping(patience=2, min_delta=0.01)
    seq = [1.0, 0.9, 0.895, 0.893]  # 0.895 and 0.893: lower, but by less than 1 % of 0.9
    out = [rule.update(v, step) for step, v in zip((100, 200, 300, 400), seq)]
    assert out == [(True, False), (True, False), (True, False), (True, True)]  # kept (new lowest), then stop
    assert (rule.best, rule.best_step, rule.reference) == (0.893, 400, 0.9)
    assert rule.update(0.5, 500) == (True, False) and rule.bad == 0  # a real improvement resets the count
    plain = EarlyStopping(patience=1)
    assert [plain.update(v, s) for s, v in ((1, 1.0), (2, 1.0), (3, 0.5))] == [(True, False), (False, True),
                                                                                 (True, False)]
    assert EarlyStopping(patience=1).update(2.0, 1, can_stop=False) == (True, False)
    no_val = EarlyStopping(patience=1)
    no_val.update(1.0, 1, can_stop=False)
    assert no_val.update(1.0, 2, can_stop=False) == (False, False)  # without validation: never stops


def test_warm_start_starts_from_the_given_network_and_keeps_its_units(tiny_config):
    """A warm start (``MLPSpec.init``) continues from the given weights and standardizers: with a vanishing step
    size it returns them unchanged, whatever the seed; it trains on from there; a network of another shape is
    refused."""
    from deadzone_id_ros.training.trainer import MLPSpec, train_mlps

    first, info0 = train_mlp(_arrays(), _arrays(300, 1), "masked", tiny_config)
    still = tiny_config.with_overrides(learning_rate=1e-30, max_steps=30)
    (same, _), = train_mlps([MLPSpec(_arrays(2000, 7), _arrays(300, 1), "masked", 9, "warm", first)], still)
    for a, b in zip(first.weights + first.biases, same.weights + same.biases):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(same.x_norm.mean, first.x_norm.mean)  # not the new data's mean
    (cold, _), = train_mlps([MLPSpec(_arrays(2000, 7), _arrays(300, 1), "masked", 9, "cold")], still)
    assert not np.array_equal(cold.weights[0], first.weights[0])
    (_, info), = train_mlps([MLPSpec(_arrays(), _arrays(300, 1), "masked", 0, "warm", first)], tiny_config)
    assert info.history[0]["val_loss"] < info0.history[0]["val_loss"]  # it starts where the first one ended
    with pytest.raises(ValueError, match=r"warm start: network 6-\[32, 32\]-2 \(relu\) does not fit 6-\[16\]-2"):
        train_mlps([MLPSpec(_arrays(), None, "masked", 0, "warm", first)],
                   tiny_config.with_overrides(hidden_sizes=(16,)))
