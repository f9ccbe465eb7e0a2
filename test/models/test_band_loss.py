"""The dead-zone band loss (extension of Inami et al., arXiv 2402.00393) and the identification of its band."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from deadzone_id_ros.models import LOSSES, BandLoss, MSELoss, identify_band


def band_mse(pred, target, mask, band):
    return BandLoss(band)(pred, target, mask)


def mse(a, b):
    return MSELoss()(a, b, torch.ones_like(a))

torch.set_num_threads(1)


def _grad(pred, target, mask, band):
    p = torch.tensor(pred, dtype=torch.float64, requires_grad=True)
    band_mse(p, torch.tensor(target, dtype=torch.float64), torch.tensor(mask, dtype=torch.float64),
             torch.tensor(band, dtype=torch.float64)).backward()
    return p.grad.numpy()


def test_stuck_pair_inside_band_has_zero_gradient_outside_the_squared_error_of_the_excess():
    band = np.array([0.5, 0.2])
    target = np.zeros((3, 2))
    pred = np.array([[0.3, -0.1],    # both stuck, both inside their band
                     [0.9, -0.5],    # both stuck, outside: excess 0.4 and -0.3
                     [0.3, -0.1]])   # both moving: squared error even inside the band
    mask = np.array([[0, 0], [0, 0], [1, 1]])
    g = _grad(pred, target, mask, band)
    n = pred.size
    np.testing.assert_array_equal(g[0], [0.0, 0.0])
    np.testing.assert_allclose(g[1], [2 * 0.4 / n, 2 * -0.3 / n], rtol=1e-12)
    np.testing.assert_allclose(g[2], [2 * 0.3 / n, 2 * -0.1 / n], rtol=1e-12)


def test_value_limits_zero_band_is_mse_and_moving_pairs_ignore_the_band():
    g = torch.Generator().manual_seed(0)
    pred, target = torch.randn(50, 3, generator=g), torch.randn(50, 3, generator=g)
    stuck = torch.zeros(50, 3)
    assert float(band_mse(pred, target, stuck, torch.zeros(3))) == pytest.approx(float(mse(pred, target)), rel=1e-6)
    moving = torch.ones(50, 3)
    assert float(band_mse(pred, target, moving, torch.full((3,), 10.0))) == pytest.approx(float(mse(pred, target)),
                                                                                          rel=1e-6)
    # every stuck pair inside a huge band: loss 0
    assert float(band_mse(pred, target, stuck, torch.full((3,), 100.0))) == 0.0
    # hand-computed value: one stuck pair 0.25 outside its band, one moving pair with error 1, divided by 4 pairs
    v = band_mse(torch.tensor([[0.75, 1.0], [0.0, 0.0]]), torch.zeros(2, 2), torch.tensor([[0.0, 1.0], [0.0, 0.0]]),
                 torch.tensor([0.5, 0.5]))
    assert float(v) == pytest.approx((0.25 ** 2 + 1.0) / 4)
    assert LOSSES["band"] is BandLoss


def test_band_loss_rejects_bad_input():
    x = torch.zeros(4, 2)
    with pytest.raises(ValueError, match="same shape"):
        band_mse(x, torch.zeros(4, 3), x, torch.zeros(2))
    with pytest.raises(ValueError, match=r"band must be \(J,\) = \(2,\)"):
        band_mse(x, x, x, torch.zeros(3))
    with pytest.raises(ValueError, match="band must be"):
        band_mse(x, x, x, torch.tensor([0.1, -0.1]))


def test_identify_band_recovers_a_known_half_width_robustly():
    rng = np.random.default_rng(0)
    n = 20000
    mask = rng.random((n, 3)) < 0.6
    residual = rng.normal(0.0, 0.01, (n, 3))  # moving pairs: small model error
    half = np.array([0.3, 1.2, 0.05])
    stuck_res = rng.uniform(-half, half, (n, 3))
    residual = np.where(mask, residual, stuck_res)
    residual[np.flatnonzero(~mask[:, 0])[:20], 0] = 50.0  # a few outliers must not widen the band
    tau_s = identify_band(residual, mask, quantile=0.95)
    np.testing.assert_allclose(tau_s, 0.95 * half, rtol=0.03)
    # the Coulomb floor: a joint whose stuck residuals are tiny still gets at least |Fc|
    tau_s2 = identify_band(residual, mask, coulomb=np.array([0.0, -2.0, 0.0]))
    assert tau_s2[1] == 2.0 and tau_s2[0] == pytest.approx(tau_s[0])
    # a joint that never sticks: |Fc| (or 0)
    always = mask.copy()
    always[:, 2] = True
    assert identify_band(residual, always, coulomb=np.array([0.0, 0.0, 0.7]))[2] == 0.7
    assert identify_band(residual, always)[2] == 0.0


def test_identify_band_errors():
    with pytest.raises(ValueError, match="same shape"):
        identify_band(np.zeros((4, 2)), np.zeros((4, 3), bool))
    with pytest.raises(ValueError, match="quantile = 0 must be in"):
        identify_band(np.zeros((4, 2)), np.zeros((4, 2), bool), quantile=0)
    with pytest.raises(ValueError, match="coulomb must be"):
        identify_band(np.zeros((4, 2)), np.zeros((4, 2), bool), coulomb=np.zeros(3))
    with pytest.raises(ValueError, match="non-finite"):
        identify_band(np.full((4, 2), np.nan), np.zeros((4, 2), bool))
