"""M MLPs of one architecture as one stacked model, optimized by one torch Adam (the arithmetic of the training loop).

Layer k of all M networks is one ``torch.baddbmm`` on (M, B, width) stacks, and one backward pass of the summed
losses gives every network its own gradient (the parts are independent). ``torch.optim.Adam`` updates elementwise,
so one optimizer over the stacked tensors is M independent Adams. A network that stops leaves the stack:
:meth:`StackedMLP.keep` slices the parameters and the optimizer's moments and step count, so the others run on
M - 1 networks with exactly the state they had. The loop itself is :func:`~deadzone_id_ros.training.trainer.train_mlps`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from torch import Tensor

#: A hidden activation: tensor -> tensor, elementwise.
Activation = Callable[["Tensor"], "Tensor"]

__all__ = ["Activation", "StackedMLP", "forward_one", "torch_activation"]


def torch_activation(name: str) -> Activation:
    """The torch function of an activation name (relu, tanh, silu, elu; see models.mlp.ACTIVATIONS).

    Raises:
        KeyError: unknown name.
    """
    import torch
    import torch.nn.functional as F

    return {"relu": torch.relu, "tanh": torch.tanh, "silu": F.silu, "elu": F.elu}[name]


def forward_one(params: Sequence[Tensor], x: Tensor, activation: Activation) -> Tensor:
    """One network's output (N, J) for x (N, D), ``params`` in nn.Sequential order (weight0 (out, in), bias0, ...)."""
    import torch.nn.functional as F

    h = x
    for k in range(0, len(params) - 2, 2):
        h = activation(F.linear(h, params[k], params[k + 1]))
    return F.linear(h, params[-2], params[-1])


class StackedMLP:
    """M networks as stacked parameters (M, ...) with one ``torch.optim.Adam``.

    Args:
        inits: per network, its initial parameters in nn.Sequential order (from ``build_torch_mlp(...).parameters()``);
            every network has the same shapes.
        activation: hidden activation name.
        learning_rate: Adam step size.  weight_decay: Adam's L2 coefficient (added to the gradient).
        masks: per layer, an (out, in) 0/1 array every network's weight is multiplied by in the forward pass
            (:func:`~deadzone_id_ros.models.mlp.block_masks`), or None (dense networks).
    """

    def __init__(self, inits: Sequence[Sequence[Tensor]], activation: str, learning_rate: float,
                 weight_decay: float, masks: Sequence[np.ndarray] | None = None) -> None:
        import torch

        self.masks = None if masks is None else [torch.from_numpy(np.asarray(m, dtype=np.float32)) for m in masks]
        self.act = torch_activation(activation)
        self._lr, self._wd = learning_rate, weight_decay
        self.params = [torch.stack([init[k] for init in inits]).requires_grad_() for k in range(len(inits[0]))]
        self.opt = torch.optim.Adam(self.params, lr=learning_rate, weight_decay=weight_decay)

    def __len__(self) -> int:
        return int(self.params[0].shape[0])

    def forward(self, x: Tensor) -> Tensor:
        """(M, B, J) outputs for x (M, B, D): network m sees x[m]."""
        import torch

        h = x
        p = self._masked(self.params)
        for k in range(0, len(p) - 2, 2):
            h = self.act(torch.baddbmm(p[k + 1].unsqueeze(1), h, p[k].transpose(1, 2)))
        return torch.baddbmm(p[-1].unsqueeze(1), h, p[-2].transpose(1, 2))

    def _masked(self, params: list[Tensor]) -> list[Tensor]:
        """``params`` with every weight multiplied by its layer's mask (as they are without masks)."""
        if self.masks is None:
            return params
        out = list(params)
        for k, m in enumerate(self.masks):
            out[2 * k] = params[2 * k] * m
        return out

    def step(self, losses: Tensor) -> None:
        """One Adam step on the sum of ``losses`` (M,) (each network gets the gradient of its own loss)."""
        self.opt.zero_grad(set_to_none=True)
        losses.sum().backward()
        self.opt.step()

    def network(self, j: int) -> list[Tensor]:
        """Network j's parameters (detached, masked, nn.Sequential order)."""
        return [p.detach()[j] for p in self._masked(self.params)]

    def keep(self, rows: Sequence[int]) -> None:
        """Keep only the networks ``rows`` (in that order), parameters and Adam state (moments, step) alike."""
        import torch

        idx = torch.as_tensor(list(rows), dtype=torch.long)
        new = [p.detach()[idx].clone().requires_grad_() for p in self.params]
        opt = torch.optim.Adam(new, lr=self._lr, weight_decay=self._wd)
        for old_p, new_p in zip(self.params, new):
            state = self.opt.state.get(old_p)
            if state:
                opt.state[new_p] = {k: (v[idx].clone() if k != "step" else v.clone()) for k, v in state.items()}
        self.params, self.opt = new, opt
