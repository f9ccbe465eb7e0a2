"""The typed record of one fit, written into report.json (``per_seed[].train``) and model.json (``train_info``) and
read back by :meth:`FitSummary.from_dict` (core, no ROS)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from ..jsonrecord import JsonRecord

__all__ = ["FitSummary"]


@dataclass(frozen=True)
class FitSummary(JsonRecord):
    """The record of one fit (report.json ``per_seed[].train``, model.json ``train_info``): what was fitted on what,
    and, for a network, how its training went (:class:`~.trainer.TrainInfo` without the history).

    Attributes:
        method: the registered method.  seed: its training seed.
        loss: the loss of its network (None: nothing trained by gradient descent).
        train_samples / val_samples: rows its network trained / stopped early on (None: no network).
        rbd_rows: (sample, joint) pairs the rigid body was identified on (None: no rigid body, or one identified
            for another call).
        band_halfwidth: tau_s,j (J,) [N·m] of a band loss (None: no band).
        steps, best_step, best_val_loss, final_train_loss, stopped_early, seconds, samples_per_s: the network's
            training (None before it trained, or without a network); losses in standardized torque units.
    """

    method: str
    seed: int
    loss: str | None = None
    train_samples: int | None = None
    val_samples: int | None = None
    rbd_rows: int | None = None
    band_halfwidth: list[float] | None = None
    steps: int | None = None
    best_step: int | None = None
    best_val_loss: float | None = None
    final_train_loss: float | None = None
    stopped_early: bool | None = None
    seconds: float | None = None
    samples_per_s: float | None = None

    def with_training(self, steps: int, best_step: int, best_val_loss: float, final_train_loss: float,
                      stopped_early: bool, seconds: float, samples_per_s: float) -> FitSummary:
        """This record with the network's training figures."""
        return dataclasses.replace(self, steps=steps, best_step=best_step, best_val_loss=best_val_loss,
                                   final_train_loss=final_train_loss, stopped_early=stopped_early, seconds=seconds,
                                   samples_per_s=samples_per_s)

    def to_dict(self) -> dict[str, Any]:
        """The JSON form: the fields that are set (None left out)."""
        return {k: v for k, v in dataclasses.asdict(self).items() if v is not None}
