"""The dead-zone loss (Inami et al., arXiv 2402.00393): gradients only from pairs with r = 1, count normalization."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from deadzone_id_ros.models import MaskedLoss, MLPConfig, MSELoss, build_torch_mlp, conventional_keep

masked_mse = MaskedLoss()


def mse(a, b):
    return MSELoss()(a, b, torch.ones_like(a))

torch.set_num_threads(1)


def _net_and_batch(n=64, d=9, j=3, seed=0):
    torch.manual_seed(seed)
    net = build_torch_mlp(d, j, MLPConfig((16, 16), "tanh"))
    g = torch.Generator().manual_seed(seed + 1)
    return net, torch.randn(n, d, generator=g), torch.randn(n, j, generator=g)


def test_joint_masked_everywhere_gets_no_gradient_on_its_output_row():
    net, x, y = _net_and_batch()
    mask = torch.ones_like(y)
    mask[:, 1] = 0.0  # joint 1 stuck in every sample
    masked_mse(net(x), y, mask).backward()
    last = net[-1]
    assert torch.count_nonzero(last.weight.grad[1]) == 0
    assert last.bias.grad[1] == 0
    # the other joints do learn
    assert torch.count_nonzero(last.weight.grad[0]) > 0 and torch.count_nonzero(last.weight.grad[2]) > 0
    assert last.bias.grad[0] != 0 and last.bias.grad[2] != 0


def test_labels_of_masked_pairs_do_not_matter():
    net, x, y = _net_and_batch()
    mask = (torch.rand(y.shape, generator=torch.Generator().manual_seed(3)) > 0.4).float()
    grads = []
    for labels in (y, torch.where(mask > 0, y, y + 100.0)):  # change only the stuck labels, wildly
        net.zero_grad()
        loss = masked_mse(net(x), labels, mask)
        loss.backward()
        grads.append((float(loss.detach()), [p.grad.clone() for p in net.parameters()]))
    assert grads[0][0] == pytest.approx(grads[1][0], rel=1e-6)
    for a, b in zip(grads[0][1], grads[1][1]):
        torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-7)


def test_mostly_masked_batch_equals_loss_of_valid_entries_alone():
    rng = np.random.default_rng(0)
    pred, target = rng.normal(size=(500, 3)), rng.normal(size=(500, 3))
    mask = np.zeros((500, 3), bool)
    valid = rng.choice(500 * 3, size=17, replace=False)
    mask.flat[valid] = True  # about 1% of the pairs
    expected = np.mean((pred.flat[valid] - target.flat[valid]) ** 2)
    got = masked_mse(torch.tensor(pred), torch.tensor(target), torch.tensor(mask))
    assert float(got) == pytest.approx(expected, rel=1e-12)
    # and it is not the mask-then-mean value, which under-counts by the masked fraction
    assert float(got) > 10 * float(((torch.tensor(pred) - torch.tensor(target)) ** 2 * torch.tensor(mask)).mean())


def test_all_masked_batch_gives_zero_not_nan():
    pred = torch.randn(8, 3, requires_grad=True)
    loss = masked_mse(pred, torch.randn(8, 3), torch.zeros(8, 3))
    loss.backward()
    assert float(loss.detach()) == 0.0 and torch.all(pred.grad == 0)


def test_mse_is_plain_mean():
    a, b = torch.randn(10, 3), torch.randn(10, 3)
    assert float(mse(a, b)) == pytest.approx(float(((a - b) ** 2).sum() / 30), rel=1e-6)


def test_conventional_drops_exactly_the_samples_with_a_stuck_joint():
    rng = np.random.default_rng(1)
    r = rng.random((1000, 4)) > 0.2
    keep = conventional_keep(r)
    expected = np.array([all(row) for row in r])
    np.testing.assert_array_equal(keep, expected)
    assert 0 < keep.sum() < len(r)


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: masked_mse(torch.zeros(3, 2), torch.zeros(3, 2), torch.zeros(3, 3)), "same shape"),
        (lambda: mse(torch.zeros(3, 2), torch.zeros(2, 3)), "same shape"),
        (lambda: conventional_keep(np.ones(5, bool)), r"mask must be \(N, J\)"),
    ],
)
def test_shape_errors(call, match):
    with pytest.raises(ValueError, match=match):
        call()
