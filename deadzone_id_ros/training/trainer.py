"""The one training loop: Adam on one or several MLPs, each with its own loss, data, seed and early stopping.

:func:`train_mlps` trains M networks together as one stacked model (:class:`~.batched.StackedMLP`: layer k of all
networks is one batched matmul, one backward pass, one ``torch.optim.Adam``); :func:`train_mlp` is the same loop with
one network. Each network keeps what it would get alone: its own weight init (``torch.manual_seed(seed)`` then
:func:`build_torch_mlp`), batch order (a generator seeded with ``seed``), standardization, loss
(:class:`~deadzone_id_ros.models.losses.Loss`), validation split and early stopping (:class:`EarlyStopping`).

Budget (issue 19 item 5): a network trains until its validation loss has not improved by ``min_delta`` (relative)
for ``patience`` evaluations, ``eval_interval`` steps apart, or ``max_steps``; then it leaves the stack with its best
weights (lowest validation loss) and stops costing anything. :attr:`TrainInfo.steps` is the steps it took.
Deterministic on CPU for fixed seeds and thread count.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import DataError
from ..models.losses import Loss, make_loss
from ..models.mlp import MLPConfig, MLPWeights, Standardizer, block_masks, build_torch_mlp
from .batched import Activation, StackedMLP, forward_one
from .config import TrainConfig

if TYPE_CHECKING:
    from torch import Tensor

__all__ = ["EarlyStopping", "MLPSpec", "TrainArrays", "TrainInfo", "stopping_rows", "train_mlp", "train_mlps"]

_CHUNK = 65536  # validation samples per forward pass

@dataclass
class TrainArrays:
    """Stacked training data.

    Attributes:
        x: (N, 3J) inputs [q (rad), dq (rad/s), ddq (rad/s²)].
        y: (N, J) targets [N·m].
        r: (N, J) bool, pairs that enter the loss (all True for plain MSE).
    """

    x: np.ndarray
    y: np.ndarray
    r: np.ndarray

    def __post_init__(self) -> None:
        n = len(self.x)
        if self.x.ndim != 2 or self.y.ndim != 2 or self.y.shape[0] != n or self.r.shape != self.y.shape:
            raise ValueError(f"x {self.x.shape}, y {self.y.shape}, r {self.r.shape} must be (N, D), (N, J), (N, J)")

    def __len__(self) -> int:
        return len(self.x)


@dataclass
class TrainInfo:
    """What happened during training.

    Attributes:
        steps: gradient steps taken.  best_step: step of the returned weights.
        best_val_loss / final_train_loss: losses in standardized torque units (dimensionless).
        stopped_early: early stopping triggered.  seconds: wall time [s].  samples_per_s: training throughput.
        history: one dict per evaluation (step, train_loss, val_loss).
    """

    steps: int = 0
    best_step: int = 0
    best_val_loss: float = float("nan")
    final_train_loss: float = float("nan")
    stopped_early: bool = False
    seconds: float = 0.0
    samples_per_s: float = 0.0
    history: list[dict[str, float]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready summary (without the history)."""
        return {k: getattr(self, k) for k in ("steps", "best_step", "best_val_loss", "final_train_loss",
                                               "stopped_early", "seconds", "samples_per_s")}


@dataclass
class EarlyStopping:
    """The stopping rule of one network, fed its validation loss at each evaluation.

    The weights kept are those of the lowest loss seen (any decrease). Patience counts evaluations since the last
    *significant* improvement: a loss below ``(1 - min_delta)`` times the loss of that improvement; after
    ``patience`` evaluations without one, training stops (only when there is a validation split: without one the
    training loss is tracked and the network trains to the maximum).

    Attributes:
        patience: evaluations without significant improvement before stopping (>= 1).  min_delta: relative
        improvement that counts (>= 0).  best: lowest loss so far.  best_step: its step.  reference: loss of the
        last significant improvement.  bad: evaluations since then.
    """

    patience: int
    min_delta: float = 0.0
    best: float = math.inf
    best_step: int = 0
    reference: float = math.inf
    bad: int = 0

    def update(self, loss: float, step: int, can_stop: bool = True) -> tuple[bool, bool]:
        """Record ``loss`` at ``step``; returns (keep these weights: new lowest loss, stop now)."""
        keep = loss < self.best or self.best_step == 0
        if keep:
            self.best, self.best_step = loss, step
        if loss < self.reference * (1.0 - self.min_delta) or self.reference == math.inf:
            self.reference, self.bad = loss, 0
        else:
            self.bad += 1
        return keep, can_stop and self.bad >= self.patience


@dataclass
class MLPSpec:
    """One network of a training run.

    Attributes:
        train: training arrays (x (N, D), y (N, J), r (N, J)); D and J must be the same for every spec of a run.
        val: validation arrays, or None (then trains ``max_steps`` and keeps the weights of the lowest training loss).
        loss: a :class:`~deadzone_id_ros.models.losses.Loss`, or the name of a registered loss without parameters.
        seed: weight-init and batch-order seed (``config.seed`` is not used by :func:`train_mlps`).
        desc: label for errors.
        init: warm start (``deadzone-id improve``): start from these weights and keep their standardizers instead
            of a seeded initialization and the training split's mean/std; its architecture must be ``config``'s
            and its widths the data's (``ValueError`` otherwise). None (default): a fresh network.
        circular: the continuous joints' indices; ``train.x`` holds their (sin q, cos q) features
            (:func:`~deadzone_id_ros.models.mlp.circle_features`), and the trained network keeps the indices.
        hidden_sizes: its hidden widths (() : ``config.hidden_sizes``).  weight_decay: its Adam L2 coefficient
            (None: ``config.weight_decay``).  activation: its hidden activation ("": ``config.activation``).
        blocks: per output joint, the feature columns its own sub-network reads
            (:func:`~deadzone_id_ros.models.mlp.block_masks`: the per-joint residual); () for a dense network.
        extra_inputs: feature columns after [q, dq, ddq] that the trained network keeps as raw inputs
            (:attr:`~deadzone_id_ros.models.mlp.MLPWeights.extra_inputs`).

    Specs that share a TrainArrays object (the seeds of one method) share its standardized tensors.
    """

    train: TrainArrays
    val: TrainArrays | None
    loss: Loss | str
    seed: int
    desc: str = "train"
    init: MLPWeights | None = None
    circular: tuple[int, ...] = ()
    hidden_sizes: tuple[int, ...] = ()
    weight_decay: float | None = None
    blocks: tuple[tuple[int, ...], ...] = ()
    extra_inputs: int = 0
    activation: str = ""


def _warm_state(init: MLPWeights, d: int, j: int, config: MLPConfig) -> list[Tensor]:
    """The parameters of ``init`` in nn.Sequential order (weight0 (out, in), bias0, ...) as float32 tensors.

    Raises:
        ValueError: ``init`` is not a ``config`` network with ``d`` inputs and ``j`` outputs.
    """
    import torch

    widths = init.hidden_sizes
    if (init.n_inputs, init.n_outputs, widths, init.activation) != (d, j, tuple(config.hidden_sizes),
                                                                    config.activation):
        raise ValueError(f"warm start: network {init.n_inputs}-{list(widths)}-{init.n_outputs} ({init.activation}) "
                         f"does not fit {d}-{list(config.hidden_sizes)}-{j} ({config.activation})")
    return [torch.from_numpy(np.asarray(a, dtype=np.float32).copy()) for wb in zip(init.weights, init.biases)
            for a in wb]


class _Net:
    """One network's data (standardized tensors), loss, batch order and stopping state."""

    def __init__(self, spec: MLPSpec, config: TrainConfig, cache: dict[tuple[int, ...], Any]) -> None:
        import torch

        loss = make_loss(spec.loss) if isinstance(spec.loss, str) else spec.loss
        loss.check(spec.train.y.shape[1], spec.desc)
        if len(spec.train) == 0:
            raise DataError(f"{spec.desc}: no training samples")
        needs_moving = not type(loss).learns_stuck
        if needs_moving and not spec.train.r.any():
            raise DataError(f"{spec.desc}: every (sample, joint) pair of the training split is inside the dead zone")
        val = stopping_rows(spec.val, config.stop_val_samples)
        self.desc = spec.desc
        self.circular = tuple(spec.circular)
        self.has_val = val is not None and len(val) > 0 and (not needs_moving or bool(val.r.any()))
        key = (id(spec.train), id(spec.val), int(type(loss).uses_mask), int(self.has_val), id(spec.init))
        if key not in cache:  # the seeds of one method standardize the same arrays once
            if spec.init is not None:  # a warm start keeps the units its weights were trained in
                x_norm, y_norm = spec.init.x_norm, spec.init.y_norm
            else:
                x_norm = Standardizer.fit(spec.train.x)
                y_norm = Standardizer.fit(spec.train.y, spec.train.r if type(loss).uses_mask else None)
            tv = _tensors(val, x_norm, y_norm) if val is not None and self.has_val else None
            cache[key] = (x_norm, y_norm, _tensors(spec.train, x_norm, y_norm), tv)
        self.x_norm, self.y_norm, (self.xt, self.yt, self.rt), self.val_t = cache[key]
        self.loss = loss.in_units(self.y_norm.std)
        d, j = spec.train.x.shape[1], spec.train.y.shape[1]
        self.activation = spec.activation or config.activation
        arch = MLPConfig(spec.hidden_sizes or tuple(config.hidden_sizes), self.activation)
        self.arch = (arch.hidden_sizes, spec.blocks,
                     config.weight_decay if spec.weight_decay is None else spec.weight_decay)
        self.extra_inputs = spec.extra_inputs
        self.masks = block_masks(spec.blocks, arch.hidden_sizes, d) if spec.blocks else None
        if spec.init is not None:
            self.init = _warm_state(spec.init, d, j, arch)
        else:
            torch.manual_seed(spec.seed)
            self.init = [t.detach().clone() for t in build_torch_mlp(d, j, arch).parameters()]
        if self.masks is not None:  # a masked-out weight starts at 0 and stays there (its gradient is masked)
            self.init[0::2] = [w * torch.from_numpy(m.astype(np.float32)) for w, m in zip(self.init[0::2], self.masks)]
        self.gen = torch.Generator().manual_seed(spec.seed)
        self.n = len(self.xt)
        self.perm = torch.randperm(self.n, generator=self.gen)
        self.pos = 0
        self.info = TrainInfo()
        self.stop = EarlyStopping(config.patience, config.min_delta)
        self.best_state: list[np.ndarray] | None = None
        self.running: list[float] = []

    def next_batch(self, bs: int) -> tuple[Tensor, Tensor, Tensor]:
        """The next ``bs`` training rows (a new permutation of this network's generator when one runs out)."""
        import torch

        if self.pos + bs > self.n:
            self.perm = torch.randperm(self.n, generator=self.gen)
            self.pos = 0
        idx = self.perm[self.pos:self.pos + bs]
        self.pos += bs
        return self.xt[idx], self.yt[idx], self.rt[idx]

    def val_loss(self, params: list[Tensor], activation: Activation) -> float:
        """The loss on the validation split, summed in chunks (:meth:`Loss.sums`) in float64."""
        import torch

        xv, yv, rv = self.val_t
        total, count = 0.0, 0.0
        with torch.no_grad():
            for s in range(0, len(xv), _CHUNK):
                t, c = self.loss.sums(forward_one(params, xv[s:s + _CHUNK], activation), yv[s:s + _CHUNK],
                                      rv[s:s + _CHUNK])
                total += float(t)
                count += float(c)
        return total / max(count, 1.0)

    def evaluate(self, params: list[Tensor], activation: Activation, step: int) -> bool:
        """Evaluation at ``step``: history, best weights, the stopping rule; True when this network stops now."""
        train_l = sum(self.running) / len(self.running)
        self.running = []
        self.info.final_train_loss = train_l
        v = self.val_loss(params, activation) if self.has_val else train_l
        self.info.history.append({"step": step, "train_loss": train_l, "val_loss": v})
        keep, stop = self.stop.update(v, step, can_stop=self.has_val)
        if keep:
            self.best_state = [p.clone().numpy() for p in params]
            self.info.best_step = step
        self.info.stopped_early = stop
        return stop


def stopping_rows(val: TrainArrays | None, n: int) -> TrainArrays | None:
    """The validation rows early stopping evaluates: all of ``val`` when ``n`` is 0 or ``val`` has at most ``n``
    rows, else ``n`` of them evenly spaced over the split (the same rows for every network with these arrays)."""
    if val is None or n == 0 or len(val) <= n:
        return val
    rows = np.linspace(0, len(val) - 1, n).round().astype(np.int64)
    return TrainArrays(val.x[rows], val.y[rows], val.r[rows])


def _tensors(a: TrainArrays, x_norm: Standardizer, y_norm: Standardizer) -> tuple[Tensor, Tensor, Tensor]:
    """(x, y, r) of ``a`` as float32 torch tensors, x and y standardized."""
    import torch

    x = torch.from_numpy(((a.x - x_norm.mean) / x_norm.std).astype(np.float32))
    y = torch.from_numpy(((a.y - y_norm.mean) / y_norm.std).astype(np.float32))
    return x, y, torch.from_numpy(a.r.astype(np.float32))


def train_mlps(specs: Sequence[MLPSpec], config: TrainConfig) -> list[tuple[MLPWeights, TrainInfo]]:
    """Train one MLP per spec in one loop (the one training loop of the package).

    Inputs are standardized with each training split's mean/std; targets with the mean/std of the pairs the loss
    uses as ground truth (r_ij = 1 when :attr:`Loss.uses_mask`). The loss is computed on standardized torques, so
    joints of different torque scale weigh alike (:meth:`Loss.in_units` rescales a loss's parameters). Each step
    draws every running network's batch, one stacked forward/backward and one Adam step; every
    ``config.eval_interval`` steps (and at the last) each network is evaluated on its validation split and may stop
    (:class:`EarlyStopping`); a stopped network leaves the stack.

    Args:
        specs: the networks (same input width D and output width J; data, loss, seed and validation per network).
        config: architecture, optimizer, steps, early stopping, threads (shared; ``config.seed`` is not used).

    Returns:
        [(best weights, info)] in the order of ``specs``; ``info.steps`` is the steps each network took;
        ``info.seconds`` and ``info.samples_per_s`` are those of the whole run (every network's samples counted).

    Raises:
        ValueError: no spec, different D or J among the specs, an unknown loss or one whose parameters do not fit J,
            or different batch sizes (``min(batch_size, N)`` must be the same for every network).
        DataError: a network without training samples, or (a loss that ignores stuck pairs) without a moving pair.
    """
    import torch

    if not specs:
        raise ValueError("train_mlps needs at least one spec")
    shapes = {(s.train.x.shape[1], s.train.y.shape[1], s.hidden_sizes, s.blocks, s.weight_decay, s.activation)
              for s in specs}
    if len(shapes) != 1:
        raise ValueError(f"every spec needs the same input and output widths and architecture, got {len(shapes)}")
    torch.set_num_threads(config.num_threads)
    cache: dict[tuple[int, ...], Any] = {}
    nets = [_Net(s, config, cache) for s in specs]
    sizes = {min(config.batch_size, m.n) for m in nets}
    if len(sizes) != 1:
        raise ValueError(f"batch sizes differ between models ({sorted(sizes)}): train those with N < batch_size apart")
    bs = sizes.pop()
    stack = StackedMLP([m.init for m in nets], nets[0].activation, config.learning_rate, nets[0].arch[2],
                       nets[0].masks)
    alive = list(range(len(nets)))
    t0 = time.perf_counter()
    samples = 0
    for step in range(1, config.max_steps + 1):
        batches = [nets[i].next_batch(bs) for i in alive]
        pred = stack.forward(torch.stack([b[0] for b in batches]))
        losses = torch.stack([nets[i].loss(pred[j], b[1], b[2]) for j, (i, b) in enumerate(zip(alive, batches))])
        stack.step(losses)
        samples += bs * len(alive)
        evaluate = step % config.eval_interval == 0 or step == config.max_steps
        stopped = []
        for j, (i, v) in enumerate(zip(alive, losses.detach().tolist())):
            nets[i].running.append(v)
            nets[i].info.steps = step
            if evaluate and nets[i].evaluate(stack.network(j), stack.act, step):
                stopped.append(j)
        if stopped:
            alive = [i for j, i in enumerate(alive) if j not in stopped]
            if not alive:
                break
            stack.keep([j for j in range(len(stack)) if j not in stopped])
    return _results(nets, time.perf_counter() - t0, samples)


def train_mlp(train: TrainArrays, val: TrainArrays | None, loss: Loss | str, config: TrainConfig,
              desc: str = "train") -> tuple[MLPWeights, TrainInfo]:
    """Train one MLP: :func:`train_mlps` with the single spec ``MLPSpec(train, val, loss, config.seed, desc)``.

    Args:
        train: training arrays; ``train.r`` is the dead-zone mask r_ij for a loss that reads it.
        val: validation arrays (same loss); None or empty trains for ``config.max_steps``.
        loss: e.g. ``MaskedLoss()`` (Inami et al. Eq. (3)), ``"mse"``, ``BandLoss(band)``.
        config: architecture, optimizer, early stopping, seed, threads.
        desc: label for errors.

    Returns:
        (best weights, info).

    Raises:
        DataError, ValueError: as :func:`train_mlps`.
    """
    return train_mlps([MLPSpec(train, val, loss, config.seed, desc)], config)[0]


def _results(nets: list[_Net], seconds: float, samples: int) -> list[tuple[MLPWeights, TrainInfo]]:
    """[(best weights, info)] per network; every info gets the whole run's ``seconds`` [s] and throughput."""
    out = []
    for m in nets:
        m.info.seconds = seconds
        m.info.samples_per_s = samples / max(seconds, 1e-9)
        m.info.best_val_loss = m.stop.best
        state = m.best_state if m.best_state is not None else [p.numpy() for p in m.init]
        out.append((MLPWeights(tuple(np.asarray(w, dtype=np.float32).copy() for w in state[0::2]),
                               tuple(np.asarray(b, dtype=np.float32).copy() for b in state[1::2]), m.activation,
                               m.x_norm, m.y_norm, m.circular, m.extra_inputs), m.info))
    return out
