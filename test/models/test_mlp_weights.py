"""MLP config validation, standardization, and the numpy inference path against torch."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from deadzone_id_ros.models import ACTIVATIONS, MLPConfig, Standardizer, build_torch_mlp, mlp_from_torch, torch_from_mlp

torch.set_num_threads(1)


@pytest.mark.parametrize("activation", ACTIVATIONS)
def test_numpy_forward_matches_torch(activation):
    torch.manual_seed(0)
    net = build_torch_mlp(9, 3, MLPConfig((32, 16), activation))
    rng = np.random.default_rng(0)
    xn = Standardizer(rng.normal(size=9), rng.uniform(0.5, 2.0, 9))
    yn = Standardizer(rng.normal(size=3), rng.uniform(0.5, 2.0, 3))
    w = mlp_from_torch(net, activation, xn, yn)
    x = rng.normal(size=(50, 9))
    with torch.no_grad():
        ref = net(torch.tensor((x - xn.mean) / xn.std, dtype=torch.float32)).numpy() * yn.std + yn.mean
    np.testing.assert_allclose(w.forward(x), ref, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(w.forward(x[7]), w.forward(x)[7], atol=1e-12)
    with torch.no_grad():
        rebuilt = torch_from_mlp(w)(torch.tensor(x, dtype=torch.float32)).numpy()
    np.testing.assert_allclose(rebuilt, w.forward(x), rtol=1e-5, atol=1e-5)
    assert w.hidden_sizes == (32, 16) and w.n_inputs == 9 and w.n_outputs == 3


def test_standardizer_uses_only_masked_entries():
    x = np.array([[1.0, 10.0], [3.0, 1000.0], [5.0, 30.0]])
    mask = np.array([[True, True], [True, False], [True, True]])
    s = Standardizer.fit(x, mask)
    np.testing.assert_allclose(s.mean, [3.0, 20.0])
    np.testing.assert_allclose(s.std, [np.std([1, 3, 5]), 10.0])
    const = Standardizer.fit(np.ones((4, 2)))
    np.testing.assert_array_equal(const.std, [1.0, 1.0])  # constant columns are not divided by zero


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"hidden_sizes": ()}, "hidden_sizes is empty"),
        ({"hidden_sizes": (64, 0)}, r"hidden_sizes\[1\] = 0 must be a positive integer"),
        ({"hidden_sizes": (64.5,)}, r"hidden_sizes\[0\] = 64.5"),
        ({"activation": "sigmoid"}, "activation = 'sigmoid' must be one of"),
    ],
)
def test_config_errors(kwargs, match):
    with pytest.raises(ValueError, match=match):
        MLPConfig(**kwargs)


def test_standardizer_errors():
    with pytest.raises(ValueError, match="x must be 2-D"):
        Standardizer.fit(np.zeros(3))
    with pytest.raises(ValueError, match="mask must have the shape of x"):
        Standardizer.fit(np.zeros((3, 2)), np.ones((3, 3), bool))
