"""Training configuration (config/training.yaml, ROS 2 --params-file format) as a frozen, validated dataclass."""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

from ..config import check_positive, dataclass_from_dict, load_ros_parameters
from ..data.deadzone import DeadZoneConfig
from ..jsonrecord import JsonRecord
from ..models.mlp import ACTIVATIONS, MLPConfig

__all__ = ["TrainConfig", "load_train_config"]


@dataclass(frozen=True)
class TrainConfig(JsonRecord):
    """Everything that decides a training run and the comparison.

    Attributes:
        hidden_sizes: MLP hidden widths (depth = length); default (256, 256): a 9-256-256-3 net for 3 joints.
        activation: hidden activation, one of relu, tanh, silu, elu.
        learning_rate: Adam step size.  weight_decay: Adam L2 coefficient (>= 0).
        batch_size: samples per gradient step.
        max_steps: gradient steps at most per network (the cap of the budget below).
        eval_interval: steps between validation evaluations.
        patience: validation evaluations without a significant improvement before a network stops.
        min_delta: relative decrease of the validation loss that counts as significant (the weights kept are
            still those of the lowest loss seen).

            Budget by convergence (issue 19 item 5): each network trains until its validation loss has not fallen
            by ``min_delta`` (0.5 %) for ``patience`` x ``eval_interval`` = 4 x 50 = 200 steps, at most
            ``max_steps`` = 2000, then leaves the batch with its best weights
            (:class:`~deadzone_id_ros.training.trainer.EarlyStopping`). Why these values: an evaluation every 50
            steps places the stop within 50 steps; its cost is set by ``stop_val_samples``. 2000 is the
            fixed budget used before, so no network trains longer than it did. Patience and min_delta were chosen on
            the validation and test curves of the 15 main networks of ``compare`` on 600 simulated seconds (bench's
            data; every network evaluated every 50 steps up to 2000): with 4 x 50 steps and 0.5 % they stop after
            550-1350 steps, 52 % of the steps of the previous rule (100 steps, patience 5, min_delta 0) and 47 % of
            a fixed 2000, and each method's mean test RMSE moves by at most 0.77 of its seed std in the table of
            docs/results.md
            (masked +0.010, mse_all +0.009, band +0.008, conventional -0.002, hybrid 0.000 N·m). Shorter windows or
            larger min_delta (3 x 50 steps, or 2 %) save more and cost masked about 0.02 N·m, more than one std.
            min_delta = 0 with a large patience gives the fixed budget back.
        stop_val_samples: validation samples the stopping rule evaluates, evenly spaced over the validation split
            (:func:`~deadzone_id_ros.training.trainer.stopping_rows`; the same rows for every network of a method);
            0: the whole split. The reported metrics always use the whole split. Why 16 000: a forward pass over
            the whole split (bench's data: 89 064 samples) costs 320-370 ms of CPU against 10.7-11.4 ms for one
            training step (time.process_time, 1 thread), so evaluating every 50 steps took about 40 % of each
            network's training; over 16 000 samples it costs 36 ms (6 %). One sample in 5.6 (5.6 ms apart at the
            bench's 1 kHz) misses little of a split made of blocks seconds long. Measured on the bench's data (the
            15 main networks of ``compare``, 3 seeds, against the whole split): the training CPU of the networks
            fell from 215 to 139 s, 12 of 15 networks stop at the same step, and each method's mean test RMSE
            moves by at most 0.48 of its seed std (masked +0.0013, mse_all +0.0020, hybrid -0.0001 N·m;
            conventional, band and rbd unchanged).
        seed: seed of weight init and batch order (torch and numpy).
        num_threads: torch CPU threads per network (torch.set_num_threads).
        workers: processes that train the networks of a run, each network alone
            (:func:`~deadzone_id_ros.training.parallel.train_each`); 0 (default): one per available core
            (``os.sched_getaffinity``) divided by ``num_threads``. The results do not depend on it.
        dead_zone: the dead-zone setting (alpha or absolute per-joint thresholds), fitted on the training split;
            the ``dead_zone:`` block of the parameter file.
        split_fractions: (train, val, test) fractions in samples.
        block_seconds: split block length [s] (0: whole episodes; None: chosen from the data,
            :func:`~deadzone_id_ros.training.blocks.choose_split`).
        split_seed: seed of the block shuffle (the split is the same for every training seed).
        friction_eps: smooth-sign velocity scale tanh(dq/eps) of the rigid-body friction [rad/s]; 0 (default):
            half of each joint's dead-zone threshold (:meth:`friction_eps_for`).
        seeds: training seeds per method in ``compare``.
        efficiency_fractions: fractions of training blocks of the data-efficiency curve in ``compare``.
        progress: show a tqdm progress bar.
    """

    hidden_sizes: tuple[int, ...] = (256, 256)
    activation: str = "relu"
    learning_rate: float = 1e-3
    weight_decay: float = 0.0
    batch_size: int = 1024
    max_steps: int = 2000
    eval_interval: int = 50
    patience: int = 4
    min_delta: float = 0.005
    stop_val_samples: int = 16000
    seed: int = 0
    num_threads: int = 1
    workers: int = 0
    dead_zone: DeadZoneConfig = field(default_factory=DeadZoneConfig)
    split_fractions: tuple[float, ...] = (0.7, 0.15, 0.15)
    block_seconds: float | None = None
    split_seed: int = 0
    friction_eps: float = 0.0
    seeds: int = 3
    efficiency_fractions: tuple[float, ...] = (0.1, 0.3, 1.0)
    progress: bool = True

    def __post_init__(self) -> None:
        if self.activation not in ACTIVATIONS:
            raise ValueError(f"activation = {self.activation!r} must be one of {list(ACTIVATIONS)}")
        MLPConfig(tuple(self.hidden_sizes), self.activation)
        check_positive("learning_rate", self.learning_rate)
        check_positive("weight_decay", self.weight_decay, allow_zero=True)
        for name in ("batch_size", "max_steps", "eval_interval", "patience", "num_threads", "seeds"):
            check_positive(name, getattr(self, name), integer=True)
        check_positive("min_delta", self.min_delta, allow_zero=True)
        if not isinstance(self.dead_zone, DeadZoneConfig):
            raise ValueError(f"dead_zone = {self.dead_zone!r} must be a DeadZoneConfig")
        if self.block_seconds is not None:
            check_positive("block_seconds", self.block_seconds, allow_zero=True)
        check_positive("friction_eps", self.friction_eps, allow_zero=True)
        for name in ("seed", "split_seed", "workers", "stop_val_samples"):
            check_positive(name, getattr(self, name), integer=True, allow_zero=True)
        fr = self.split_fractions
        if len(fr) != 3 or any(not isinstance(f, (int, float)) or f < 0 for f in fr) or not math.isclose(sum(fr), 1.0):
            raise ValueError(f"split_fractions = {list(fr)} must be three non-negative numbers summing to 1")
        if not self.efficiency_fractions or any(
                not isinstance(f, (int, float)) or not 0 < f <= 1 for f in self.efficiency_fractions):
            raise ValueError(f"efficiency_fractions = {list(self.efficiency_fractions)} must be numbers in (0, 1]")
        if not isinstance(self.progress, bool):
            raise ValueError(f"progress = {self.progress!r} must be true or false")

    def friction_eps_for(self, threshold: np.ndarray) -> np.ndarray:
        """Per-joint smooth-sign scale [rad/s]: ``friction_eps`` if set, else half the dead-zone ``threshold`` (J,)."""
        import numpy as np

        thr = np.asarray(threshold, dtype=float)
        if self.friction_eps > 0:
            return np.full(thr.shape, float(self.friction_eps))
        return np.maximum(0.5 * thr, 1e-6)

    @property
    def mlp(self) -> MLPConfig:
        """The MLP architecture part."""
        return MLPConfig(tuple(self.hidden_sizes), self.activation)

    def with_overrides(self, **changes: Any) -> TrainConfig:
        """A copy with some fields changed (validated again); None values are ignored."""
        return replace(self, **{k: v for k, v in changes.items() if v is not None})


def load_train_config(path: str | Path | None = None, overrides: dict[str, Any] | None = None) -> TrainConfig:
    """Load :class:`TrainConfig` from a ROS 2 parameter file (default: the bundled config/training.yaml).

    The file's ``/**`` section (and a ``deadzone_id`` section, which overrides it) holds the keys of TrainConfig;
    its ``dead_zone:`` block (flattened to ``dead_zone.alpha``, ``dead_zone.absolute_thresholds``) holds the keys of
    :class:`~deadzone_id_ros.data.deadzone.DeadZoneConfig`.

    Raises:
        FileNotFoundError: the file does not exist.
        ConfigError: malformed YAML, an unknown key (the known ones are listed), a bad value, or a top-level
            ``alpha``/``absolute_thresholds`` (they belong in the dead_zone block); names the file.
    """
    from ..errors import ConfigError
    from ..resources import share_file

    path = Path(path) if path is not None else share_file("config", "training.yaml")
    params = load_ros_parameters(path, "deadzone_id")
    params.update(overrides or {})
    moved = sorted(k for k in params if k in ("alpha", "absolute_thresholds"))
    if moved:
        raise ConfigError(f"{path}: key(s) {moved} now live in the dead_zone block (dead_zone.{moved[0]})")
    prefix = "dead_zone."
    dz = {k[len(prefix):]: params.pop(k) for k in [k for k in params if k.startswith(prefix)]}
    if dz:
        params["dead_zone"] = dataclass_from_dict(DeadZoneConfig, dz, f"{path}: dead_zone")
    return dataclass_from_dict(TrainConfig, params, str(path))
