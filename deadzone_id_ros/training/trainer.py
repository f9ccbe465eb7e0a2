"""Adam training of the MLP with the dead-zone (masked) loss or plain MSE, early stopping on validation loss.

Deterministic on CPU for a fixed seed and thread count: the weight init and the batch order come from seeded torch
generators, and the best weights (lowest validation loss) are returned.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import DataError
from ..models.losses import band_mse, masked_mse, mse
from ..models.mlp import MLPWeights, Standardizer, build_torch_mlp, mlp_from_torch
from .config import TrainConfig

__all__ = ["LOSS_NAMES", "TrainArrays", "TrainInfo", "check_loss", "loss_of", "loss_sums", "train_mlp"]

#: Losses the trainers know (models/losses.py): the masked loss of the paper, plain MSE and the band extension.
LOSS_NAMES = ("masked", "mse", "band")


def check_loss(loss: str, band: np.ndarray | None, n_joints: int, desc: str) -> None:
    """Refuse an unknown loss name, or a ``band`` loss without a (J,) finite, non-negative band.

    Raises:
        ValueError: naming ``desc``, the loss and the band's shape.
    """
    if loss not in LOSS_NAMES:
        raise ValueError(f"{desc}: loss = {loss!r} must be one of {list(LOSS_NAMES)}")
    if loss == "band":
        b = None if band is None else np.asarray(band, dtype=np.float64)
        if b is None or b.shape != (n_joints,) or not np.all(np.isfinite(b)) or np.any(b < 0):
            raise ValueError(f"{desc}: the band loss needs band = (J,) = ({n_joints},) finite values >= 0 [N·m], "
                             f"got {None if b is None else b.shape}")


def loss_of(loss: str, pred, y, r, band_s):
    """The training loss of one model on a batch (torch): masked_mse, mse or band_mse (``band_s``: (J,) band in
    standardized torque units, only for "band")."""
    if loss == "masked":
        return masked_mse(pred, y, r)
    if loss == "band":
        return band_mse(pred, y, r, band_s)
    return mse(pred, y)


def loss_sums(loss: str, pred, y, r, band_s) -> tuple[float, float]:
    """(sum of the loss terms, their count) of a validation chunk, so chunks add up to :func:`loss_of`."""
    import torch

    if loss == "masked":
        return float((r * (pred - y) ** 2).sum()), float(r.sum())
    if loss == "band":
        e = pred - y
        out = torch.clamp(e.abs() - band_s, min=0.0)
        return float((r * e ** 2 + (1.0 - r) * out ** 2).sum()), float(y.numel())
    return float(((pred - y) ** 2).sum()), float(y.numel())


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


def train_mlp(train: TrainArrays, val: TrainArrays | None, loss: str, config: TrainConfig,
              desc: str = "train", band: np.ndarray | None = None) -> tuple[MLPWeights, TrainInfo]:
    """Train an MLP on ``train`` and keep the weights with the lowest validation loss.

    Args:
        train: training arrays; for ``loss="masked"`` ``train.r`` is the dead-zone mask r_ij.
        val: validation arrays (same loss); None or empty trains for ``config.max_steps`` and keeps the last weights.
        loss: "masked" (Inami et al. Eq. (3): sum r (y - f)^2 / max(1, sum r)), "mse", or "band"
            (:func:`~deadzone_id_ros.models.losses.band_mse`; ``train.r`` marks the moving pairs).
        config: architecture, optimizer, early stopping, seed, threads, progress bar.
        desc: progress-bar label.
        band: (J,) static-friction half-width tau_s,j [N·m] of the band loss (only for ``loss="band"``).

    Inputs are standardized with the training split's mean/std; targets with the mean/std of the pairs the loss
    uses as ground truth (r_ij = 1 for masked and band). The loss is computed on standardized torques, so joints of
    different torque scale weigh alike; the band is divided by the same per-joint output std.

    Returns:
        (weights, info).

    Raises:
        DataError: no training sample, or (masked) no pair with r_ij = 1.
        ValueError: unknown loss name, or a band loss without a valid band.
    """
    import torch

    check_loss(loss, band, train.y.shape[1], desc)
    if len(train) == 0:
        raise DataError(f"{desc}: no training samples")
    if loss == "masked" and not train.r.any():
        raise DataError(f"{desc}: every (sample, joint) pair of the training split is inside the dead zone")
    torch.set_num_threads(config.num_threads)
    torch.manual_seed(config.seed)
    gen = torch.Generator().manual_seed(config.seed)

    x_norm = Standardizer.fit(train.x)
    y_norm = Standardizer.fit(train.y, train.r if loss in ("masked", "band") else None)
    band_s = torch.from_numpy((np.asarray(band) / y_norm.std).astype(np.float32)) if loss == "band" else None
    train_t = _tensors(train, x_norm, y_norm)
    has_val = val is not None and len(val) > 0 and (loss != "masked" or bool(val.r.any()))
    val_t = _tensors(val, x_norm, y_norm) if val is not None and has_val else None

    net = build_torch_mlp(train.x.shape[1], train.y.shape[1], config.mlp)
    opt = torch.optim.Adam(net.parameters(), lr=config.learning_rate, weight_decay=config.weight_decay)
    info, best_state = _fit(net, opt, gen, train_t, val_t, loss, band_s, config, desc)
    if best_state is not None:
        net.load_state_dict(best_state)
    return mlp_from_torch(net, config.activation, x_norm, y_norm), info


def _tensors(a: TrainArrays, x_norm: Standardizer, y_norm: Standardizer) -> tuple[Any, Any, Any]:
    """(x, y, r) of ``a`` as float32 torch tensors, x and y standardized."""
    import torch

    x = torch.from_numpy(((a.x - x_norm.mean) / x_norm.std).astype(np.float32))
    y = torch.from_numpy(((a.y - y_norm.mean) / y_norm.std).astype(np.float32))
    r = torch.from_numpy(a.r.astype(np.float32))
    return x, y, r


def _val_loss(net: Any, loss: str, val_t: tuple[Any, Any, Any], band_s: Any) -> float:
    """The validation loss of ``net`` on the standardized ``val_t`` = (x, y, r), summed in chunks of 65536 samples."""
    import torch

    xv, yv, rv = val_t
    net.eval()
    with torch.no_grad():
        total, weight = 0.0, 0.0
        for s in range(0, len(xv), 65536):
            t, w = loss_sums(loss, net(xv[s:s + 65536]), yv[s:s + 65536], rv[s:s + 65536], band_s)
            total += t
            weight += w
    net.train()
    return total / max(weight, 1.0)


@dataclass
class _Best:
    """Early-stopping memory: the lowest evaluation loss, the weights that gave it, evaluations since then."""

    loss: float = float("inf")
    state: dict[str, Any] | None = None
    bad: int = 0

    def update(self, v: float, net: Any, step: int, info: TrainInfo, config: TrainConfig, has_val: bool) -> bool:
        """Record the evaluation loss ``v`` of ``net`` at ``step``; True when training stops (only with validation:
        ``config.patience`` evaluations without a relative improvement of ``config.min_delta``)."""
        if v < self.loss * (1.0 - config.min_delta) or self.state is None:
            self.loss, self.bad = v, 0
            self.state = {k: t.detach().clone() for k, t in net.state_dict().items()}
            info.best_step = step
            return False
        self.bad += 1
        return has_val and self.bad >= config.patience


def _fit(net: Any, opt: Any, gen: Any, train_t: tuple[Any, Any, Any], val_t: tuple[Any, Any, Any] | None, loss: str,
         band_s: Any, config: TrainConfig, desc: str) -> tuple[TrainInfo, dict[str, Any] | None]:
    """The training loop: Adam steps on batches in the order of ``gen`` (a new permutation when one runs out), an
    evaluation every ``config.eval_interval`` steps and at the last, early stopping on ``val_t`` (None: train loss).

    Returns:
        (info, the best weights' state dict or None).
    """
    import torch
    from tqdm.auto import tqdm

    xt, yt, rt = train_t
    info = TrainInfo()
    n = len(xt)
    bs = min(config.batch_size, n)
    best = _Best()
    running = 0.0
    running_n = 0
    perm = torch.randperm(n, generator=gen)
    pos = 0
    t0 = time.perf_counter()
    samples = 0
    bar = tqdm(total=config.max_steps, desc=desc, disable=not config.progress, leave=False, unit="step")
    try:
        net.train()
        for step in range(1, config.max_steps + 1):
            if pos + bs > n:
                perm = torch.randperm(n, generator=gen)
                pos = 0
            idx = perm[pos:pos + bs]
            pos += bs
            batch_loss = loss_of(loss, net(xt[idx]), yt[idx], rt[idx], band_s)
            opt.zero_grad(set_to_none=True)
            batch_loss.backward()
            opt.step()
            samples += bs
            running += float(batch_loss.detach())
            running_n += 1
            info.steps = step
            if step % config.eval_interval == 0 or step == config.max_steps:
                train_l = running / running_n
                running, running_n = 0.0, 0
                info.final_train_loss = train_l
                v = _val_loss(net, loss, val_t, band_s) if val_t is not None else train_l
                info.history.append({"step": step, "train_loss": train_l, "val_loss": v})
                bar.set_postfix(train=f"{train_l:.4f}", val=f"{v:.4f}", best=f"{min(best.loss, v):.4f}")
                if best.update(v, net, step, info, config, val_t is not None):
                    info.stopped_early = True
                    bar.update(1)
                    break
            bar.update(1)
    finally:
        bar.close()
    info.seconds = time.perf_counter() - t0
    info.samples_per_s = samples / max(info.seconds, 1e-9)
    info.best_val_loss = best.loss
    return info, best.state
