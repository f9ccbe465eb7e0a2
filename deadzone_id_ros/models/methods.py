"""The registry of methods: one :class:`Method` entry per method, everything the rest of the package asks about it.

A method is a rigid-body part, a network part, or both (:class:`~deadzone_id_ros.models.predictor.LearnedModel`),
the loss its network trains with (a class registered in :data:`~deadzone_id_ros.models.losses.LOSSES`), and the
rows it trains on. Its entry says everything its fit needs (a rigid body, the static-friction band, which rows, the
mask, a residual target: :attr:`Method.needs`) and how the experiments show it (colour, role, curves); the
one planner, :mod:`deadzone_id_ros.training.planner`, turns an entry into fit plans for train, compare,
cross-validation, the data-efficiency curve, improve and sweep. Nothing outside this module compares a method's
name, and :func:`resolve_methods` is the one place a name is resolved. Adding a method is one
:func:`register_method` call (and, for a new loss, one class in losses.py). Methods: Inami, Yamane, Sakaino,
"Loss Function Considering Dead Zone for Neural Networks", arXiv 2402.00393 (masked, conventional, mse_all, rbd) and
this project's extensions (band, hybrid, hybrid_joint; their opt-in mse_all twins hybrid_mse_all and
hybrid_joint_mse_all, the same fits with plain MSE on every sample, measure what the dead-zone loss adds there; the
opt-in hybrid_history and its twin, whose residual network reads the last 90 ms of joint states as FACTR 2,
arXiv 2606.12406, does with an LSTM).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from .losses import LOSSES, Loss, conventional_keep, make_loss

__all__ = ["BASELINES", "CONSISTENT_RIGID_BODY", "CONSTANT", "CONVENTIONAL", "DEFAULT_METHODS", "GRAVITY",
           "IDENTIFICATIONS", "METHODS", "NAIVE", "PROPOSED", "RIGID_BODY", "ROLES", "ROWS", "Method", "MethodNeeds",
           "get_method", "method_with_role", "register_method", "resolve_methods"]

#: Which training rows a method keeps: every sample, or only the samples where every joint moves.
ROWS = ("all", "all_moving")

#: The roles the reports compare by (a method has at most one; the reports name the method holding it):
#: the paper's proposed dead-zone loss, the conventional drop-stuck-samples baseline, the naive plain MSE on every
#: sample, the identified rigid body alone, the band loss (this project's stuck-pair loss), the constant baseline
#: (each joint's mean torque), the URDF's gravity torque alone, and the physically consistent rigid body.
PROPOSED, CONVENTIONAL, NAIVE, RIGID_BODY, BAND = "proposed", "conventional", "naive", "rigid_body", "band"
CONSTANT, GRAVITY, CONSISTENT_RIGID_BODY = "constant", "gravity", "consistent_rigid_body"
ROLES = (PROPOSED, CONVENTIONAL, NAIVE, RIGID_BODY, BAND, CONSTANT, GRAVITY, CONSISTENT_RIGID_BODY)

#: Baselines that learn nothing: "mean" predicts each joint's mean torque over the moving training pairs (a
#: constant), "gravity" the URDF's nominal gravity torque g(q) (no parameter is fitted).
BASELINES = ("", "mean", "gravity")

#: How a rigid-body part is identified (:func:`~deadzone_id_ros.models.rbd.identify.fit_rigid_body`): "prior" (every
#: parameter, ridge prior toward the URDF, lambda by cross-validation), "consistent" (the same, with the
#: pseudo-inertia of every body positive semidefinite: Wensing, Kim, Slotine 2018), "urdf" (the URDF's values),
#: "friction" (the prior fit with Stribeck and load-dependent friction columns,
#: :func:`~deadzone_id_ros.models.friction.fit_extended_friction`).
IDENTIFICATIONS = ("prior", "consistent", "urdf", "friction")


@dataclass(frozen=True)
class MethodNeeds:
    """What fitting a method needs from its split, read by the planner (:mod:`deadzone_id_ros.training.planner`).

    Attributes:
        rigid_body: "required" (no fit without the identified rigid body), "band" (the band is identified from the
            rigid body when there is one) or "none".
        band: its loss is built with the static-friction half-width tau_s,j (J,) [N·m].
        drops_stuck_samples: trains only on samples where every joint moves.
        mask: its loss reads the dead-zone mask r (otherwise every pair counts).
        residual: its network learns tau - rbd(q, dq, ddq).
        network: it trains a network.
    """

    rigid_body: str
    band: bool
    drops_stuck_samples: bool
    mask: bool
    residual: bool
    network: bool


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
        colour: its matplotlib colour in the plots ("": a spare colour chosen from its name).
        role: one of :data:`ROLES` the reports compare it in, or "".
        efficiency_curve: trained on growing shares of the training blocks for the data-efficiency curve.
        closed_loop: its artifact drives a computed-torque controller of the closed-loop comparison.
        baseline: one of :data:`BASELINES`: "" (a method), "mean" (the constant baseline: a network part whose
            weights are zero and whose output bias is each joint's mean training torque) or "gravity" (the URDF's
            gravity torque: a rigid-body part, nothing fitted).
        identification: how its rigid-body part is identified, one of :data:`IDENTIFICATIONS`.
        simplicity: its rank from simplest (0: a constant) up; the pick prefers a simpler method whenever the
            best one beats it by no more than the seed/fold spread (:func:`~deadzone_id_ros.experiments.compare.pick.
            choose_pick`).
        per_joint: its network is one small network per joint whose inputs are that joint's own (q, dq, ddq) and
            its rigid-body torque (the per-joint residual).
        history: its network also reads the recent joint-state history (:mod:`~deadzone_id_ros.models.history`:
            9 earlier taps about 10 ms apart, the spacing rounded to whole samples of the data), so it predicts
            from consecutive samples and cannot run per tick in a controller or force sensor, which evaluate one
            state at a time.
        by_default: fitted when no method list is given (``compare`` without ``--methods``); an opt-in method (a
            costly fit that has not yet paid on the shipped and real data) runs only when named.

    Raises:
        ValueError: no part at all, an unknown loss, rows, role, baseline or identification value.
    """

    name: str
    rigid_body: bool
    loss: str | None
    rows: str = "all"
    description: str = ""
    colour: str = ""
    role: str = ""
    efficiency_curve: bool = False
    closed_loop: bool = False
    baseline: str = ""
    identification: str = "prior"
    simplicity: int = 4
    per_joint: bool = False
    history: bool = False
    by_default: bool = True

    def __post_init__(self) -> None:
        if self.baseline not in BASELINES:
            raise ValueError(f"method {self.name!r}: baseline = {self.baseline!r} must be one of {list(BASELINES)}")
        if self.identification not in IDENTIFICATIONS:
            raise ValueError(f"method {self.name!r}: identification = {self.identification!r} must be one of "
                             f"{list(IDENTIFICATIONS)}")
        if self.baseline and self.loss is not None:
            raise ValueError(f"method {self.name!r}: a baseline learns nothing (loss = {self.loss!r})")
        if self.baseline == "gravity" and not (self.rigid_body and self.identification == "urdf"):
            raise ValueError(f"method {self.name!r}: the gravity baseline is the URDF's rigid body "
                             "(rigid_body=True, identification='urdf')")
        if self.per_joint and not (self.rigid_body and self.loss is not None):
            raise ValueError(f"method {self.name!r}: a per-joint residual needs a rigid body and a loss")
        if self.history and (self.per_joint or self.loss is None or self.rows != "all"):
            raise ValueError(f"method {self.name!r}: a history network needs a loss, a dense network (not per "
                             "joint) and every row (its window reads consecutive samples)")
        if not self.rigid_body and self.loss is None and self.baseline != "mean":
            raise ValueError(f"method {self.name!r} has neither a rigid body nor a loss")
        if self.loss is not None and self.loss not in LOSSES:
            raise ValueError(f"method {self.name!r}: loss = {self.loss!r} must be one of {sorted(LOSSES)}")
        if self.rows not in ROWS:
            raise ValueError(f"method {self.name!r}: rows = {self.rows!r} must be one of {list(ROWS)}")
        if self.role and self.role not in ROLES:
            raise ValueError(f"method {self.name!r}: role = {self.role!r} must be one of {list(ROLES)}")

    @property
    def needs(self) -> MethodNeeds:
        """What its fit needs from the split (:class:`MethodNeeds`)."""
        cls = self.loss_class
        band = cls is not None and cls.needs_band
        return MethodNeeds(rigid_body="required" if self.rigid_body else ("band" if band else "none"), band=band,
                           drops_stuck_samples=self.drops_stuck_samples, mask=cls is not None and cls.uses_mask,
                           residual=self.rigid_body and cls is not None, network=cls is not None)

    @property
    def drops_stuck_samples(self) -> bool:
        """It trains only on the samples where every joint moves (the conventional rule)."""
        return self.rows == "all_moving"

    @property
    def fits_moving_pairs_only(self) -> bool:
        """Fitted on every sample's moving pairs only (r_ij = 1) and nothing else: its error on stuck pairs tells
        whether a stuck joint's torque is predictable (``diagnose_stuck`` of the comparison's pick)."""
        cls = self.loss_class
        return self.rows == "all" and (cls is None or (cls.uses_mask and not cls.learns_stuck))

    def usable_count(self, r: np.ndarray) -> int:
        """How many training units it learns from for the mask r (N, J): samples with every joint moving when it
        drops stuck samples, else moving (sample, joint) pairs (the data-efficiency table's count)."""
        r = np.asarray(r, dtype=bool)
        return int(r.all(axis=1).sum()) if self.drops_stuck_samples else int(r.sum())

    @property
    def learned(self) -> bool:
        """The method trains a network."""
        return self.loss is not None

    @property
    def has_network(self) -> bool:
        """Its model has a network part (trained, or the constant baseline's fixed one)."""
        return self.loss is not None or self.baseline == "mean"

    @property
    def loss_class(self) -> type[Loss] | None:
        """The class of its loss (None when nothing is learned)."""
        return LOSSES[self.loss] if self.loss is not None else None

    def make_loss(self, **params: object) -> Loss:
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


#: The name that stands for every method fitted by default in a method list (``--methods default hybrid_history``).
DEFAULT_METHODS = "default"


def resolve_methods(names: Iterable[str] | None) -> list[Method]:
    """The registered methods ``names`` in that order (None or empty: every method fitted by default,
    :attr:`Method.by_default`, in registry order; :data:`DEFAULT_METHODS` among the names stands for those, and a
    name given twice counts once): the one place a method name is resolved.

    Raises:
        ValueError: unknown names ("unknown method(s) [...]; choose from [...]").
    """
    default = [m for m, method in METHODS.items() if method.by_default]
    expanded = [n for name in (names or [DEFAULT_METHODS]) for n in (default if name == DEFAULT_METHODS else [name])]
    names = list(dict.fromkeys(expanded))
    unknown = [m for m in names if m not in METHODS]
    if unknown:
        raise ValueError(f"unknown method(s) {unknown}; choose from {list(METHODS)}")
    return [METHODS[m] for m in names]


def get_method(name: str) -> Method:
    """The registered method ``name`` (:func:`resolve_methods` of one name).

    Raises:
        ValueError: unknown name (the known ones are listed).
    """
    return resolve_methods([name])[0]


def method_with_role(role: str) -> str:
    """The name of the registered method holding ``role`` (:data:`ROLES`), or "" when none does.

    Raises:
        ValueError: ``role`` is not one of :data:`ROLES`.
    """
    if role not in ROLES:
        raise ValueError(f"role = {role!r} must be one of {list(ROLES)}")
    return next((m.name for m in METHODS.values() if m.role == role), "")


register_method(Method("masked", rigid_body=False, loss="masked",
                       description="dead-zone loss: stuck (sample, joint) pairs masked out", colour="tab:blue",
                       role=PROPOSED, efficiency_curve=True, closed_loop=True))
register_method(Method("conventional", rigid_body=False, loss="mse", rows="all_moving",
                       description="samples with any stuck joint dropped, plain MSE", colour="tab:orange",
                       role=CONVENTIONAL, efficiency_curve=True, closed_loop=True))
register_method(Method("mse_all", rigid_body=False, loss="mse", description="plain MSE on every sample",
                       colour="tab:green", role=NAIVE))
register_method(Method("band", rigid_body=False, loss="band",
                       description="dead-zone band loss: stuck pairs penalized outside the static-friction band",
                       colour="tab:brown", role=BAND))
register_method(Method("rbd", rigid_body=True, loss=None, simplicity=2,
                       description="identified rigid body (all parameters, URDF prior + friction)", colour="tab:red",
                       role=RIGID_BODY, closed_loop=True))
register_method(Method("hybrid", rigid_body=True, loss="masked", description="rbd + MLP residual, dead-zone loss",
                       colour="tab:purple", simplicity=5))
register_method(Method("rbd_consistent", rigid_body=True, loss=None, identification="consistent", simplicity=2,
                       by_default=False,
                       description="physically consistent rigid body (pseudo-inertia LMI, URDF prior + friction)",
                       colour="tab:pink", role=CONSISTENT_RIGID_BODY))
register_method(Method("rbd_friction", rigid_body=True, loss=None, identification="friction", simplicity=3,
                       description="identified rigid body + Stribeck and load-dependent friction",
                       colour="tab:cyan"))
register_method(Method("hybrid_joint", rigid_body=True, loss="masked", per_joint=True, simplicity=5,
                       description="rbd + one small residual network per joint (its own q, dq, ddq and rigid-body "
                       "torque), dead-zone loss"))
register_method(Method("hybrid_mse_all", rigid_body=True, loss="mse", simplicity=5, by_default=False,
                       description="rbd + MLP residual, plain MSE on every sample (hybrid without the dead-zone loss)",
                       colour="orchid"))
register_method(Method("hybrid_joint_mse_all", rigid_body=True, loss="mse", per_joint=True, simplicity=5,
                       by_default=False, colour="sandybrown",
                       description="rbd + one small residual network per joint, plain MSE on every sample "
                       "(hybrid_joint without the dead-zone loss)"))
register_method(Method("hybrid_history", rigid_body=True, loss="masked", history=True, simplicity=6,
                       by_default=False, colour="darkslateblue",
                       description="rbd + MLP residual over the recent joint states (10 taps about 10 ms apart), "
                       "dead-zone loss; offline only (a controller evaluates one state per tick)"))
register_method(Method("hybrid_history_mse_all", rigid_body=True, loss="mse", history=True, simplicity=6,
                       by_default=False, colour="slateblue",
                       description="rbd + MLP residual over the recent joint states, plain MSE on every sample "
                       "(hybrid_history without the dead-zone loss)"))
register_method(Method("constant", rigid_body=False, loss=None, baseline="mean", simplicity=0,
                       description="constant baseline: each joint's mean training torque (moving pairs)",
                       colour="tab:gray", role=CONSTANT))
register_method(Method("gravity", rigid_body=True, loss=None, baseline="gravity", identification="urdf",
                       simplicity=1, description="the URDF's nominal gravity torque g(q), nothing fitted",
                       colour="tab:olive", role=GRAVITY))
