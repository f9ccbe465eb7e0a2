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
from ..models.losses import masked_mse, mse
from ..models.mlp import MLPWeights, Standardizer, build_torch_mlp, mlp_from_torch
from .config import TrainConfig

__all__ = ["TrainArrays", "TrainInfo", "train_mlp"]


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
              desc: str = "train") -> tuple[MLPWeights, TrainInfo]:
    """Train an MLP on ``train`` and keep the weights with the lowest validation loss.

    Args:
        train: training arrays; for ``loss="masked"`` ``train.r`` is the dead-zone mask r_ij.
        val: validation arrays (same loss); None or empty trains for ``config.max_steps`` and keeps the last weights.
        loss: "masked" (Inami et al. Eq. (3): sum r (y - f)^2 / max(1, sum r)) or "mse".
        config: architecture, optimizer, early stopping, seed, threads, progress bar.
        desc: progress-bar label.

    Inputs are standardized with the training split's mean/std; targets with the mean/std of the pairs the loss
    uses (r_ij = 1 for masked). The loss is computed on standardized torques, so joints of different torque scale
    weigh alike.

    Returns:
        (weights, info).

    Raises:
        DataError: no training sample, or (masked) no pair with r_ij = 1.
        ValueError: unknown loss name.
    """
    import torch
    from tqdm.auto import tqdm

    if loss not in ("masked", "mse"):
        raise ValueError(f"loss = {loss!r} must be 'masked' or 'mse'")
    if len(train) == 0:
        raise DataError(f"{desc}: no training samples")
    if loss == "masked" and not train.r.any():
        raise DataError(f"{desc}: every (sample, joint) pair of the training split is inside the dead zone")
    torch.set_num_threads(config.num_threads)
    torch.manual_seed(config.seed)
    gen = torch.Generator().manual_seed(config.seed)

    x_norm = Standardizer.fit(train.x)
    y_norm = Standardizer.fit(train.y, train.r if loss == "masked" else None)

    def tensors(a: TrainArrays):
        x = torch.from_numpy(((a.x - x_norm.mean) / x_norm.std).astype(np.float32))
        y = torch.from_numpy(((a.y - y_norm.mean) / y_norm.std).astype(np.float32))
        r = torch.from_numpy(a.r.astype(np.float32))
        return x, y, r

    xt, yt, rt = tensors(train)
    has_val = val is not None and len(val) > 0 and (loss != "masked" or bool(val.r.any()))
    xv: Any
    yv: Any
    rv: Any
    xv, yv, rv = tensors(val) if val is not None and has_val else (None, None, None)

    J = train.y.shape[1]
    net = build_torch_mlp(train.x.shape[1], J, config.mlp)
    opt = torch.optim.Adam(net.parameters(), lr=config.learning_rate, weight_decay=config.weight_decay)

    def loss_fn(pred, y, r):
        return masked_mse(pred, y, r) if loss == "masked" else mse(pred, y)

    def val_loss() -> float:
        net.eval()
        with torch.no_grad():
            total, weight = 0.0, 0.0
            for s in range(0, len(xv), 65536):
                p = net(xv[s:s + 65536])
                yy, rr = yv[s:s + 65536], rv[s:s + 65536]
                if loss == "masked":
                    total += float((rr * (p - yy) ** 2).sum())
                    weight += float(rr.sum())
                else:
                    total += float(((p - yy) ** 2).sum())
                    weight += float(yy.numel())
        net.train()
        return total / max(weight, 1.0)

    info = TrainInfo()
    n = len(xt)
    bs = min(config.batch_size, n)
    best_state = None
    best = float("inf")
    bad = 0
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
            pred = net(xt[idx])
            batch_loss = loss_fn(pred, yt[idx], rt[idx])
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
                v = val_loss() if has_val else train_l
                info.history.append({"step": step, "train_loss": train_l, "val_loss": v})
                bar.set_postfix(train=f"{train_l:.4f}", val=f"{v:.4f}", best=f"{min(best, v):.4f}")
                if v < best * (1.0 - config.min_delta) or best_state is None:
                    best, bad = v, 0
                    best_state = {k: t.detach().clone() for k, t in net.state_dict().items()}
                    info.best_step = step
                else:
                    bad += 1
                    if has_val and bad >= config.patience:
                        info.stopped_early = True
                        bar.update(1)
                        break
            bar.update(1)
    finally:
        bar.close()
    info.seconds = time.perf_counter() - t0
    info.samples_per_s = samples / max(info.seconds, 1e-9)
    info.best_val_loss = best
    if best_state is not None:
        net.load_state_dict(best_state)
    return mlp_from_torch(net, config.activation, x_norm, y_norm), info
