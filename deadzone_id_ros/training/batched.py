"""Several MLPs trained together as one batched model: the seeds and methods of one comparison in one loop.

Each model keeps what :func:`~deadzone_id_ros.training.trainer.train_mlp` gives it when trained alone with the same
seed: its own weight init (``torch.manual_seed(seed)`` then :func:`build_torch_mlp`), its own batch order (a
generator seeded with ``seed``), its own standardization, loss, validation split and early stopping, and its own
Adam state. Only the arithmetic is shared: layer k of all M models is one ``torch.baddbmm`` on (M, B, width)
stacks, and one backward pass computes every model's gradient (the summed loss has independent parts). A model that
stops early leaves the stack (its parameters and Adam moments are dropped), so the rest run on M - 1 models.

The Adam update is written out (torch.optim.Adam's formulas: bias-corrected moments, ``eps`` added after the square
root, L2 ``weight_decay`` added to the gradient) because the stack shrinks as models stop. Batched and one-at-a-time
training are equal up to float32 rounding of the batched matmuls (test/training/test_batched.py states the
tolerance).
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import DataError
from ..models.mlp import MLPWeights, Standardizer, build_torch_mlp
from .config import TrainConfig
from .trainer import TrainArrays, TrainInfo, check_loss, loss_of, loss_sums

__all__ = ["MLPSpec", "train_mlps"]

_BETAS = (0.9, 0.999)
_EPS = 1e-8


@dataclass
class MLPSpec:
    """One model of a batched run.

    Attributes:
        train: training arrays (x (N, D), y (N, J), r (N, J)); D and J must be the same for every spec.
        val: validation arrays, or None (then trains ``max_steps`` and keeps the last weights, like train_mlp).
        loss: "masked", "mse" or "band".
        seed: weight-init and batch-order seed (``config.seed`` is ignored).
        desc: label for errors.
        band: (J,) tau_s,j [N·m] of the band loss (only for ``loss="band"``; see train_mlp).

    Specs that share a TrainArrays object (the seeds of one method) share its standardized tensors.
    """

    train: TrainArrays
    val: TrainArrays | None
    loss: str
    seed: int
    desc: str = "train"
    band: np.ndarray | None = None


class _Model:
    """Per-model tensors and bookkeeping (standardized data, generator, early-stopping state)."""

    def __init__(self, spec: MLPSpec, config: TrainConfig, cache: dict) -> None:
        import torch

        check_loss(spec.loss, spec.band, spec.train.y.shape[1], spec.desc)
        if len(spec.train) == 0:
            raise DataError(f"{spec.desc}: no training samples")
        if spec.loss == "masked" and not spec.train.r.any():
            raise DataError(f"{spec.desc}: every (sample, joint) pair of the training split is inside the dead zone")
        self.spec = spec
        use_r = spec.loss in ("masked", "band")
        val = spec.val
        self.has_val = val is not None and len(val) > 0 and (spec.loss != "masked" or bool(val.r.any()))
        self.xv: Any
        self.yv: Any
        self.rv: Any
        key = (id(spec.train), id(val), use_r, self.has_val)
        if key not in cache:  # the seeds of one method standardize the same arrays once
            self.x_norm = Standardizer.fit(spec.train.x)
            self.y_norm = Standardizer.fit(spec.train.y, spec.train.r if use_r else None)
            tv = self._tensors(val) if self.has_val else (None, None, None)  # type: ignore[arg-type]
            cache[key] = (self.x_norm, self.y_norm, self._tensors(spec.train), tv)
        self.x_norm, self.y_norm, (self.xt, self.yt, self.rt), (self.xv, self.yv, self.rv) = cache[key]
        self.band_s = (torch.from_numpy((np.asarray(spec.band) / self.y_norm.std).astype(np.float32))
                       if spec.loss == "band" else None)
        torch.manual_seed(spec.seed)
        self.init = [t.detach().clone() for t in build_torch_mlp(spec.train.x.shape[1], spec.train.y.shape[1],
                                                                 config.mlp).parameters()]
        self.gen = torch.Generator().manual_seed(spec.seed)
        self.n = len(self.xt)
        self.perm = torch.randperm(self.n, generator=self.gen)
        self.pos = 0
        self.info = TrainInfo()
        self.best = float("inf")
        self.best_state: list | None = None
        self.bad = 0
        self.running = 0.0
        self.running_n = 0

    def _tensors(self, a: TrainArrays):
        import torch

        x = torch.from_numpy(((a.x - self.x_norm.mean) / self.x_norm.std).astype(np.float32))
        y = torch.from_numpy(((a.y - self.y_norm.mean) / self.y_norm.std).astype(np.float32))
        return x, y, torch.from_numpy(a.r.astype(np.float32))

    def next_batch(self, bs: int):
        import torch

        if self.pos + bs > self.n:
            self.perm = torch.randperm(self.n, generator=self.gen)
            self.pos = 0
        idx = self.perm[self.pos:self.pos + bs]
        self.pos += bs
        return self.xt[idx], self.yt[idx], self.rt[idx]

    def val_loss(self, params: list, activation) -> float:
        """Validation loss with this model's parameters (the same chunked sums as train_mlp)."""
        import torch
        import torch.nn.functional as F

        total, weight = 0.0, 0.0
        with torch.no_grad():
            for s in range(0, len(self.xv), 65536):
                h = self.xv[s:s + 65536]
                for k in range(0, len(params) - 2, 2):
                    h = activation(F.linear(h, params[k], params[k + 1]))
                p = F.linear(h, params[-2], params[-1])
                t, w = loss_sums(self.spec.loss, p, self.yv[s:s + 65536], self.rv[s:s + 65536], self.band_s)
                total += t
                weight += w
        return total / max(weight, 1.0)


def train_mlps(specs: Sequence[MLPSpec], config: TrainConfig) -> list[tuple[MLPWeights, TrainInfo]]:
    """Train one MLP per spec, all in one batched loop; result k is what ``train_mlp`` gives spec k alone.

    Args:
        specs: the models (same input width D and output width J; data, loss, seed and validation per model).
        config: architecture, optimizer, steps, early stopping, threads (shared; ``config.seed`` is not used).

    Returns:
        [(weights, info)] in the order of ``specs``; ``info.seconds`` and ``info.samples_per_s`` are those of the
        whole batched run (every model's samples counted).

    Raises:
        ValueError: no spec, different D or J among the specs, unknown loss, or different batch sizes
            (``min(batch_size, N)`` must be the same for every model).
        DataError: a model without training samples, or (masked) without a pair with r_ij = 1.
    """
    import torch

    if not specs:
        raise ValueError("train_mlps needs at least one spec")
    shapes = {(s.train.x.shape[1], s.train.y.shape[1]) for s in specs}
    if len(shapes) != 1:
        raise ValueError(f"every spec needs the same input and output widths, got {sorted(shapes)}")
    torch.set_num_threads(config.num_threads)
    cache: dict = {}
    models = [_Model(s, config, cache) for s in specs]
    sizes = {min(config.batch_size, m.n) for m in models}
    if len(sizes) != 1:
        raise ValueError(f"batch sizes differ between models ({sorted(sizes)}): train those with N < batch_size apart")
    bs = sizes.pop()
    act = {"relu": torch.relu, "tanh": torch.tanh, "silu": torch.nn.functional.silu,
           "elu": torch.nn.functional.elu}[config.activation]
    # Stacked parameters (M, ...) in nn.Sequential order: weight0, bias0, weight1, ...; Adam moments alike.
    params = [torch.stack([m.init[k] for m in models]).requires_grad_() for k in range(len(models[0].init))]
    exp_avg = [torch.zeros_like(p) for p in params]
    exp_avg_sq = [torch.zeros_like(p) for p in params]
    alive = list(range(len(models)))
    t0 = time.perf_counter()
    samples = 0
    for step in range(1, config.max_steps + 1):
        batches = [models[i].next_batch(bs) for i in alive]
        x = torch.stack([b[0] for b in batches])
        y = torch.stack([b[1] for b in batches])
        r = torch.stack([b[2] for b in batches])
        h = x
        for k in range(0, len(params) - 2, 2):
            h = act(torch.baddbmm(params[k + 1].unsqueeze(1), h, params[k].transpose(1, 2)))
        pred = torch.baddbmm(params[-1].unsqueeze(1), h, params[-2].transpose(1, 2))
        losses = torch.stack([loss_of(models[i].spec.loss, pred[j], y[j], r[j], models[i].band_s)
                              for j, i in enumerate(alive)])
        grads = torch.autograd.grad(losses.sum(), params)
        _adam(params, grads, exp_avg, exp_avg_sq, step, config)
        samples += bs * len(alive)
        values = losses.detach().tolist()
        stopped = []
        for j, i in enumerate(alive):
            m = models[i]
            m.running += values[j]
            m.running_n += 1
            m.info.steps = step
            if step % config.eval_interval == 0 or step == config.max_steps:
                if _evaluate(m, [p[j].detach() for p in params], act, step, config):
                    stopped.append(j)
        if stopped:
            keep = [j for j in range(len(alive)) if j not in stopped]
            alive = [alive[j] for j in keep]
            if not alive:
                break
            params = [p.detach()[keep].clone().requires_grad_() for p in params]
            exp_avg = [a[keep].clone() for a in exp_avg]
            exp_avg_sq = [a[keep].clone() for a in exp_avg_sq]
    return _results(models, time.perf_counter() - t0, samples, config.activation)


def _results(models: list[_Model], seconds: float, samples: int, activation: str) -> list[tuple[MLPWeights, TrainInfo]]:
    """[(best weights, info)] per model; every info gets the whole run's ``seconds`` [s] and throughput
    (``samples`` of all models per second)."""
    out = []
    for m in models:
        m.info.seconds = seconds
        m.info.samples_per_s = samples / max(seconds, 1e-9)
        m.info.best_val_loss = m.best
        state = m.best_state
        if state is None:  # max_steps < eval_interval never happens (the last step evaluates); kept for safety
            state = [p.detach().numpy() for p in m.init]
        out.append((_weights(state, activation, m.x_norm, m.y_norm), m.info))
    return out


def _adam(params, grads, exp_avg, exp_avg_sq, step: int, config: TrainConfig) -> None:
    """One Adam step on the stacked parameters (torch.optim.Adam's update, elementwise per model)."""
    import torch

    beta1, beta2 = _BETAS
    bc1 = 1 - beta1 ** step
    bc2_sqrt = math.sqrt(1 - beta2 ** step)
    with torch.no_grad():
        for p, g, m, v in zip(params, grads, exp_avg, exp_avg_sq):
            if config.weight_decay:
                g = g.add(p, alpha=config.weight_decay)
            m.lerp_(g, 1 - beta1)
            v.mul_(beta2).addcmul_(g, g, value=1 - beta2)
            denom = (v.sqrt() / bc2_sqrt).add_(_EPS)
            p.addcdiv_(m, denom, value=-config.learning_rate / bc1)


def _evaluate(m: _Model, params: list, act, step: int, config: TrainConfig) -> bool:
    """The early-stopping bookkeeping of train_mlp for one model; True when it stops now."""
    train_l = m.running / m.running_n
    m.running, m.running_n = 0.0, 0
    m.info.final_train_loss = train_l
    v = m.val_loss(params, act) if m.has_val else train_l
    m.info.history.append({"step": step, "train_loss": train_l, "val_loss": v})
    if v < m.best * (1.0 - config.min_delta) or m.best_state is None:
        m.best, m.bad = v, 0
        m.best_state = [p.clone().numpy() for p in params]
        m.info.best_step = step
        return False
    m.bad += 1
    if m.has_val and m.bad >= config.patience:
        m.info.stopped_early = True
        return True
    return False


def _weights(state: list, activation: str, x_norm: Standardizer, y_norm: Standardizer) -> MLPWeights:
    return MLPWeights(tuple(np.asarray(w, dtype=np.float32).copy() for w in state[0::2]),
                      tuple(np.asarray(b, dtype=np.float32).copy() for b in state[1::2]), activation, x_norm, y_norm)
