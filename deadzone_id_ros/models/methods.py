"""The registry of methods: one :class:`Method` entry per method, everything the rest of the package asks about it.

A method is a rigid-body part, a network part, or both (:class:`~deadzone_id_ros.models.predictor.LearnedModel`),
the loss its network trains with (a class registered in :data:`~deadzone_id_ros.models.losses.LOSSES`), and the
rows it trains on. Training (``training/fit.py``), evaluation, the artifact loader, ``compare`` and the command line
read this table and nothing else; adding a method is one :func:`register_method` call here (and, for a new loss, one
class in losses.py). Methods: Inami, Yamane, Sakaino, "Loss Function Considering Dead Zone for Neural Networks",
arXiv 2402.00393 (masked, conventional, mse_all, rbd) and this project's extensions (band, hybrid).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .losses import LOSSES, Loss, conventional_keep, make_loss

__all__ = ["METHODS", "ROWS", "Method", "get_method", "register_method"]

#: Which training rows a method keeps: every sample, or only the samples where every joint moves.
ROWS = ("all", "all_moving")


@dataclass(frozen=True)
class Method:
    """One method.

    Attributes:
        name: the registered name (``--method``, report keys, model.json's ``method``).
        rigid_body: has an identified rigid-body part (needs a URDF); with a loss, the network learns the residual
            tau - rbd(q, dq, ddq).
        loss: the registered loss name of its network (:data:`~deadzone_id_ros.models.losses.LOSSES`), or None:
            nothing is learned by gradient descent (the rigid body alone).
        rows: "all" or "all_moving" (drop every sample with a stuck joint, the conventional method's rule).
        description: one line for the report.

    Raises:
        ValueError: no part at all, an unknown loss or rows value.
    """

    name: str
    rigid_body: bool
    loss: str | None
    rows: str = "all"
    description: str = ""

    def __post_init__(self) -> None:
        if not self.rigid_body and self.loss is None:
            raise ValueError(f"method {self.name!r} has neither a rigid body nor a loss")
        if self.loss is not None and self.loss not in LOSSES:
            raise ValueError(f"method {self.name!r}: loss = {self.loss!r} must be one of {sorted(LOSSES)}")
        if self.rows not in ROWS:
            raise ValueError(f"method {self.name!r}: rows = {self.rows!r} must be one of {list(ROWS)}")

    @property
    def learned(self) -> bool:
        """The method trains a network."""
        return self.loss is not None

    @property
    def loss_class(self) -> type[Loss] | None:
        """The class of its loss (None when nothing is learned)."""
        return LOSSES[self.loss] if self.loss is not None else None

    def make_loss(self, **params: Any) -> Loss:
        """Its loss built with ``params`` (``band`` when :attr:`Loss.needs_band`).

        Raises:
            ValueError: the method learns nothing.
        """
        if self.loss is None:
            raise ValueError(f"method {self.name!r} has no network to train")
        return make_loss(self.loss, **params)

    def train_rows(self, r: np.ndarray) -> np.ndarray | None:
        """(N,) bool rows it trains on for the mask r (N, J), or None for every row."""
        return conventional_keep(r) if self.rows == "all_moving" else None

    def usable_fraction(self, r: np.ndarray) -> float:
        """Fraction of the training data the method learns from, for the mask r (N, J): the share of rows it keeps,
        times the share of their (sample, joint) pairs that carry a term (every pair when its loss learns from stuck
        pairs; otherwise the moving pairs, r_ij = 1, as the rigid body's fit).

        masked / hybrid / rbd: fraction of pairs with r_ij = 1; conventional: fraction of samples with every joint
        moving; mse_all and band: 1.
        """
        r = np.asarray(r, dtype=bool)
        if r.size == 0:
            return 0.0
        rows = self.train_rows(r)
        kept = r if rows is None else r[rows]
        cls = self.loss_class
        if cls is not None and cls.learns_stuck:
            return float(len(kept) / len(r))
        return float(kept.sum() / r.size)


#: Every method by name (filled by :func:`register_method`, in the order of the report).
METHODS: dict[str, Method] = {}


def register_method(method: Method) -> Method:
    """Add ``method`` to :data:`METHODS`.

    Raises:
        ValueError: its name is taken.
    """
    if method.name in METHODS:
        raise ValueError(f"method {method.name!r} is already registered")
    METHODS[method.name] = method
    return method


def get_method(name: str) -> Method:
    """The registered method ``name``.

    Raises:
        ValueError: unknown name (the known ones are listed).
    """
    if name not in METHODS:
        raise ValueError(f"method = {name!r} must be one of {list(METHODS)}")
    return METHODS[name]


register_method(Method("masked", rigid_body=False, loss="masked",
                       description="dead-zone loss: stuck (sample, joint) pairs masked out"))
register_method(Method("conventional", rigid_body=False, loss="mse", rows="all_moving",
                       description="samples with any stuck joint dropped, plain MSE"))
register_method(Method("mse_all", rigid_body=False, loss="mse", description="plain MSE on every sample"))
register_method(Method("band", rigid_body=False, loss="band",
                       description="dead-zone band loss: stuck pairs penalized outside the static-friction band"))
register_method(Method("rbd", rigid_body=True, loss=None,
                       description="identified rigid body (RNEA base parameters + friction)"))
register_method(Method("hybrid", rigid_body=True, loss="masked", description="rbd + MLP residual, dead-zone loss"))

