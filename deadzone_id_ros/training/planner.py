"""The one planner: how a registered method is fitted on a split, for train, compare, cross-validation, the
data-efficiency curve, improve and sweep.

A method's registry entry (:class:`~deadzone_id_ros.models.methods.Method`, its :attr:`~.Method.needs`) says what
its fit needs; :func:`plan_method` reads nothing else. What several methods of one split share (the identified rigid
body and the static-friction band) lives in a :class:`SharedFits`, identified once on first use: the rigid body is
deterministic (one least-squares fit, Inami, Yamane, Sakaino, arXiv 2402.00393, Sec. IV baseline), so every seed and
method of the split reuses it, and the band loss identifies its per-joint band tau_s,j from it
(:func:`~.fit.identify_band_halfwidth`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from ..data.deadzone import DeadZone
from ..errors import DataError, RobotDescriptionError
from ..models.friction_fit import fit_extended_friction
from ..models.history import JointHistory
from ..models.methods import Method, get_method, resolve_methods
from ..models.mlp import MLPWeights, circle_features
from ..models.rbd import RigidBodyModel, RigidBodyRegressor, fit_rigid_body, urdf_gravity_model
from .config import TrainConfig
from .fit import FitPlan, FitResult, Stacked, fit_plans, identify_band_halfwidth
from .fit_summary import FitSummary
from .trainer import MLPSpec, TrainArrays

__all__ = ["HISTORY_ACTIVATION", "HISTORY_HIDDEN", "HISTORY_WEIGHT_DECAY", "PER_JOINT_HIDDEN",
           "PER_JOINT_WEIGHT_DECAY", "SharedFits", "fit_method", "per_joint_blocks", "plan_method", "plan_methods"]

#: The per-joint residual (:attr:`~deadzone_id_ros.models.methods.Method.per_joint`): hidden widths of each joint's
#: own network, and its Adam L2 coefficient (strong: the network corrects the rigid body, it does not replace it).
#: The same for every robot.
PER_JOINT_HIDDEN, PER_JOINT_WEIGHT_DECAY = (16, 16), 1e-3

#: The history network (:attr:`~deadzone_id_ros.models.methods.Method.history`): hidden widths, Adam L2 coefficient
#: and activation (its inputs are ten states wide, the data as short as a real arm's: a smaller, regularized, smooth
#: network; tanh, not the default relu, by validation error on the DFKI A0 pendulum's split: 0.287 against 0.361,
#: docs/identification.md). The same for every robot.
HISTORY_HIDDEN, HISTORY_WEIGHT_DECAY, HISTORY_ACTIVATION = (64, 64), 1e-4, "tanh"

#: Builds the rigid-body structure on demand (it may raise DataError or RobotDescriptionError: no usable URDF).
RegressorFactory = Callable[[], RigidBodyRegressor]


@dataclass
class SharedFits:
    """What the methods of one split share, identified once, on first use.

    Attributes:
        train, val: the stacked splits (same dead zone).  dead_zone: fitted on ``train``'s episodes.
        regressor: the rigid-body structure, or a factory building it on first use (errors are kept, not raised:
            :attr:`rbd_error`), or None (no URDF).
        no_rigid_body: why there is no regressor when ``regressor`` is None (names the fix, e.g. --urdf).
        log: receives the identified band.  unit: torque unit of that line.
        circular_joints: indices of the continuous joints, every network sees them as (sin q, cos q)
            (:func:`~deadzone_id_ros.models.mlp.circle_features`); None (default): the URDF's continuous joints when
            there is a regressor (:attr:`circular`), none without a URDF.
    """

    train: Stacked
    val: Stacked
    dead_zone: DeadZone
    regressor: RigidBodyRegressor | RegressorFactory | None = None
    no_rigid_body: str = ""
    log: Callable[[str], None] | None = None
    unit: str = "N·m"
    circular_joints: tuple[int, ...] | None = None
    _structure: RigidBodyRegressor | DataError | RobotDescriptionError | None = field(default=None, init=False,
                                                                                      repr=False)
    _rbd: RigidBodyModel | None = field(default=None, init=False, repr=False)
    _others: dict[str, RigidBodyModel | DataError] = field(default_factory=dict, init=False, repr=False)
    _rbd_rows: int | None = field(default=None, init=False, repr=False)
    _rbd_error: DataError | RobotDescriptionError | None = field(default=None, init=False, repr=False)
    _rbd_done: bool = field(default=False, init=False, repr=False)
    _band: np.ndarray | None = field(default=None, init=False, repr=False)

    @classmethod
    def with_rbd(cls, train: Stacked, val: Stacked, dead_zone: DeadZone, rbd: RigidBodyModel,
                 band: np.ndarray | None = None) -> SharedFits:
        """Shared fits around an already identified rigid body (and band, when given)."""
        out = cls(train, val, dead_zone, rbd.regressor)
        out._rbd, out._rbd_done = rbd, True
        out._band = None if band is None else np.asarray(band, dtype=np.float64)
        return out

    @property
    def rbd(self) -> RigidBodyModel | None:
        """The rigid body identified on the moving pairs of :attr:`train`, or None (:attr:`rbd_error` says why)."""
        if not self._rbd_done:
            self._rbd_done = True
            t = self.train
            try:
                structure = self._get_structure()
                try:
                    self._rbd = fit_rigid_body(structure, t.q, t.dq, t.ddq, t.tau, t.r)
                except ValueError as err:
                    raise DataError(f"rigid-body fit: {err}") from err
                self._rbd_rows = int(t.r.sum())
            except (DataError, RobotDescriptionError) as err:
                self._rbd_error = err
        return self._rbd

    def _get_structure(self) -> RigidBodyRegressor:
        """The rigid-body structure, built once.

        Raises:
            DataError, RobotDescriptionError: no URDF, or it does not match the data.
        """
        if self._structure is None:
            reg = self.regressor
            try:
                if reg is None:
                    raise DataError(self.no_rigid_body or "no URDF matching the data's joints (pass --urdf)")
                self._structure = reg if isinstance(reg, RigidBodyRegressor) else reg()
            except (DataError, RobotDescriptionError) as err:
                self._structure = err
        if isinstance(self._structure, (DataError, RobotDescriptionError)):
            raise self._structure
        return self._structure

    @property
    def circular(self) -> tuple[int, ...]:
        """Indices of the joints that enter every network as (sin q, cos q): ``circular_joints`` when given, else
        the URDF's continuous joints (none without a URDF)."""
        if self.circular_joints is None:
            try:
                self.circular_joints = self._get_structure().continuous_joints
            except (DataError, RobotDescriptionError):
                self.circular_joints = ()
        return self.circular_joints

    def rigid_body_for(self, method: Method) -> RigidBodyModel | None:
        """The rigid-body part of ``method`` (its :attr:`~.Method.identification` and baseline), identified once per
        kind: "prior" is :attr:`rbd`; "consistent" refits with the pseudo-inertia constraints at the prior weight
        that :attr:`rbd`'s cross-validation chose; "urdf" with the gravity baseline is the URDF's gravity torque;
        "friction" adds Stribeck and load-dependent friction to :attr:`rbd`
        (:func:`~deadzone_id_ros.models.friction_fit.fit_extended_friction`).
        None: no rigid body (:attr:`rbd_error` says why).

        Raises:
            DataError: the consistent fit failed (the solver's reason).
        """
        if method.identification == "prior":
            return self.rbd
        key = f"{method.identification}:{method.baseline}"
        if key not in self._others:
            prior = self.rbd
            if prior is None:
                return None
            t = self.train
            try:
                if method.identification == "urdf":
                    self._others[key] = urdf_gravity_model(prior.regressor)
                elif method.identification == "friction":
                    self._others[key] = fit_extended_friction(prior, t.q, t.dq, t.ddq, t.tau, t.r)
                else:
                    lam = prior.fit_info.get("prior_weight", 1e-3)  # the rbd fit's cross-validated weight
                    self._others[key] = fit_rigid_body(prior.regressor, t.q, t.dq, t.ddq, t.tau, t.r,
                                                       prior_weight=1e-3 if lam is None else lam, consistent=True)
            except ValueError as err:
                self._others[key] = DataError(f"{method.name}: rigid-body fit: {err}")
        got = self._others[key]
        if isinstance(got, DataError):
            raise got
        return got

    def features(self, data: Stacked) -> np.ndarray:
        """(N, 3J + C) network features of ``data`` (continuous joints on the circle)."""
        return circle_features(data.x, len(data.joint_names), self.circular)

    @property
    def rbd_error(self) -> DataError | RobotDescriptionError | None:
        """Why there is no rigid body (None: there is one, or it was not asked for yet)."""
        return self._rbd_error

    @property
    def rbd_rows(self) -> int | None:
        """Rows the rigid body was identified on (None: identified elsewhere, or not at all)."""
        return self._rbd_rows

    @property
    def band(self) -> np.ndarray:
        """(J,) tau_s,j [N·m] of the band loss: from the rigid body's residual when there is one, else from a linear
        model's (:func:`~.fit.identify_band_halfwidth`)."""
        if self._band is None:
            rbd = self.rbd
            self._band = identify_band_halfwidth(self.train, rbd)
            if self.log is not None:
                self.log(f"band loss: tau_s per joint {np.round(self._band, 4).tolist()} {self.unit} "
                         f"({'rbd residual' if rbd is not None else 'linear-model residual'} on stuck training "
                         "pairs, 95% quantile)")
        return self._band


def _rigid_body(method: Method, shared: SharedFits) -> RigidBodyModel | None:
    """The rigid body ``method`` uses (None: it needs none, or it is optional and missing).

    Raises:
        DataError: the method requires one and there is none (the reason names the fix).
    """
    need = method.needs.rigid_body
    if need == "none":
        return None
    rbd = shared.rigid_body_for(method) if need == "required" else shared.rbd
    if rbd is None and need == "required":
        err = shared.rbd_error
        raise (type(err) if err is not None else DataError)(str(err))
    return rbd


def plan_method(method: str | Method, seeds: Sequence[int], shared: SharedFits, *, desc: str | None = None,
                init: MLPWeights | None = None) -> list[FitPlan]:
    """Prepare ``method`` for each seed from its registry entry alone (:attr:`~.Method.needs`): the rows it trains on,
    its rigid-body part (the network then learns the residual), its loss; the seeds share the rigid-body fit, the
    target arrays and the loss.

    Args:
        method: a registered method or its name.  seeds: training seeds (no network: the first only).
        shared: the split and what its methods share.  desc: label prefix for errors.
        init: warm start of every seed's network from these weights (:class:`~.trainer.MLPSpec`; the previous
            iteration's network of ``deadzone-id improve``); None: fresh networks.

    Raises:
        ValueError: unknown method.
        DataError: a rigid body it requires cannot be had (no URDF, too few moving rows); no training row left
            (conventional: no sample where every joint moves); too little data.
    """
    entry = method if isinstance(method, Method) else get_method(method)
    needs = entry.needs
    train, val, dead_zone = shared.train, shared.val, shared.dead_zone
    rbd = _rigid_body(entry, shared)
    usable = entry.usable_fraction(train.r)
    info = FitSummary(entry.name, seeds[0], rbd_rows=shared.rbd_rows if rbd is not None else None)
    if not needs.network:
        fixed = None
        if entry.baseline == "mean":  # the constant baseline: each joint's mean torque over its moving pairs
            n = train.r.sum(axis=0)
            mean = np.where(n > 0, (train.tau * train.r).sum(axis=0) / np.maximum(n, 1), train.tau.mean(axis=0))
            fixed = MLPWeights.constant(mean, 3 * len(train.joint_names) + len(shared.circular), shared.circular)
        return [FitPlan(entry.name, seeds[0], train.joint_names, dead_zone, rbd, None, usable, info, fixed)]
    tr, va = train, val
    rows = entry.train_rows(train.r)
    if rows is not None:
        if not rows.any():
            raise DataError(f"{entry.name}: no training sample has every joint outside its dead zone "
                            f"(alpha = {dead_zone.alpha}); the method has nothing to learn from")
        val_rows = entry.train_rows(val.r)
        tr, va = train.subset(rows), (val if val_rows is None else val.subset(val_rows))
    y_tr, y_va = tr.tau, va.tau
    if needs.residual and rbd is not None:  # rigid body + network: the network learns the residual
        y_tr = tr.tau - rbd.predict(tr.q, tr.dq, tr.ddq)
        y_va = va.tau - rbd.predict(va.q, va.dq, va.ddq) if len(va) else va.tau
    band = shared.band if needs.band else None
    loss = entry.make_loss(**({} if band is None else {"band": band}))
    r_tr = tr.r if needs.mask else np.ones_like(tr.r)
    r_va = va.r if needs.mask else np.ones_like(va.r)
    x_tr, x_va = shared.features(tr), shared.features(va)
    arch: dict[str, object] = {}
    history = None
    if entry.history:  # the earlier taps of the joint-state window, extra inputs after the current state
        history = _history_for(entry, train, val)
        x_tr = np.concatenate([x_tr, history.features(tr.q, tr.dq, tr.ddq, tr.episode_index)], axis=1)
        x_va = np.concatenate([x_va, history.features(va.q, va.dq, va.ddq, va.episode_index)], axis=1)
        arch = {"extra_inputs": history.n_inputs(len(train.joint_names)), "hidden_sizes": HISTORY_HIDDEN,
                "weight_decay": HISTORY_WEIGHT_DECAY, "activation": HISTORY_ACTIVATION}
    elif entry.per_joint and rbd is not None:  # joint j's network: its own state and its rigid-body torque
        x_tr = np.concatenate([x_tr, tr.tau - y_tr], axis=1)
        x_va = np.concatenate([x_va, va.tau - y_va], axis=1)
        J = len(train.joint_names)
        arch = {"hidden_sizes": tuple(J * w for w in PER_JOINT_HIDDEN), "weight_decay": PER_JOINT_WEIGHT_DECAY,
                "blocks": per_joint_blocks(J, shared.circular), "extra_inputs": J}
    arr_tr, arr_va = TrainArrays(x_tr, y_tr, r_tr), TrainArrays(x_va, y_va, r_va)
    info = dataclasses.replace(info, loss=entry.loss, train_samples=len(tr), val_samples=len(va),
                               band_halfwidth=None if band is None else band.tolist())
    keep_rbd = rbd if needs.rigid_body == "required" else None
    return [FitPlan(entry.name, s, train.joint_names, dead_zone, keep_rbd,
                    MLPSpec(arr_tr, arr_va, loss, s, f"{desc or entry.name} seed {s}", init, shared.circular,
                            **arch),  # type: ignore[arg-type]
                    usable, dataclasses.replace(info, seed=s), history=history) for s in seeds]


def _history_for(method: Method, train: Stacked, val: Stacked) -> JointHistory:
    """The joint-state window of a history method at the training data's sample period.

    Raises:
        DataError: the training episodes have no common sample period, or the validation episodes another one.
    """
    if train.sample_period is None:
        raise DataError(f"{method.name}: reads the joint-state history, but the training episodes have no common "
                        "sample period (recordings at different rates); fit it on recordings of one rate")
    history = JointHistory.for_period(train.sample_period)
    if len(val):
        try:
            history.check_period(val.sample_period, f"{method.name}'s validation split")
        except ValueError as err:
            raise DataError(str(err)) from err
    return history


def per_joint_blocks(n_joints: int, circular: tuple[int, ...]) -> tuple[tuple[int, ...], ...]:
    """Per joint j, the feature columns of its own sub-network in the per-joint residual's features
    [q (sin q for continuous joints), cos q of the C continuous joints, dq, ddq, rigid-body torque] (4J + C):
    q_j (and cos q_j), dq_j, ddq_j and tau_rb,j."""
    J, C = n_joints, len(circular)
    return tuple(tuple([j, *([J + circular.index(j)] if j in circular else []), J + C + j, 2 * J + C + j,
                        3 * J + C + j]) for j in range(J))


def plan_methods(methods: Iterable[str] | None, seeds: Sequence[int], shared: SharedFits, *,
                 init: Mapping[str, MLPWeights] | None = None,
                 label: str = "") -> tuple[dict[str, list[FitPlan]], dict[str, str]]:
    """Every method's seed plans on one split (:func:`plan_method`); the rigid body and the band are identified
    once, in ``shared``. A method that cannot be planned is left out with the reason.

    Args:
        methods: registered names (None: all).  seeds: training seeds.  shared: the split.
        init: method -> warm-start weights of its networks.  label: added to each method's name in errors.

    Returns:
        ({method: plans}, {method: why it was left out}).

    Raises:
        ValueError: unknown method names.
    """
    plans: dict[str, list[FitPlan]] = {}
    skipped: dict[str, str] = {}
    for m in resolve_methods(methods):
        try:
            plans[m.name] = plan_method(m, seeds, shared, init=(init or {}).get(m.name),
                                        desc=f"{m.name} {label}" if label else None)
        except DataError as err:
            skipped[m.name] = str(err)
    return plans, skipped


def fit_method(method: str, train: Stacked, val: Stacked, dead_zone: DeadZone, config: TrainConfig, *,
               regressor: RigidBodyRegressor | None = None, rbd: RigidBodyModel | None = None,
               desc: str | None = None) -> FitResult:
    """Fit ``method`` on ``train`` (early stopping on ``val``), alone, with ``config.seed``: :func:`plan_method`
    then :func:`~.fit.fit_plans` with one plan (``compare`` plans every method and seed and fits them in one call).

    Args:
        method: a registered method (masked | conventional | mse_all | band | rbd | hybrid | ...).
        train, val: stacked splits (from :func:`~.fit.stack_episodes` with the same dead zone).
        dead_zone: stored with the model.
        config: training settings (seed, architecture, optimizer, budget).
        regressor: rigid-body structure (needed by rbd/hybrid unless ``rbd`` is given; band identifies its band
            with it when given).
        rbd: an already identified rigid-body model to reuse (it is deterministic, so seeds can share it).
        desc: label for errors.

    Raises:
        ValueError: unknown method.
        DataError: rbd/hybrid without a URDF; conventional with no sample where every joint moves; too little data.
    """
    if rbd is not None:
        shared = SharedFits.with_rbd(train, val, dead_zone, rbd)
    else:
        shared = SharedFits(train, val, dead_zone, regressor, no_rigid_body=(
            f"method {method!r} needs a URDF whose joints are {list(train.joint_names)} (pass --urdf)"))
    plan = plan_method(method, [config.seed], shared, desc=desc)[0]
    return fit_plans([plan], config)[0]
