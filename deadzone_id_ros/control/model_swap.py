"""The checks a model passes before a running controller takes it (core, no ROS), and what they probe it on.

A controller swaps its inverse-dynamics model at run time (:meth:`.controller.FeedforwardController.swap_model`) only
after :func:`check_swap` accepts the new one: exactly the controller's joints (by name, any order), the controller's
units (q [rad], dq [rad/s], ddq [rad/s²] in, tau [N·m] out: a model trained on effort in another unit, e.g. motor
current, is refused; units as recorded in its model.json / ONNX metadata), the controller's arm when the model carries
the URDF it was trained with (:mod:`.arm_check`: nominal rigid-body torques compared, another arm refused with the
joint, body and difference named), finite outputs on every probe state, and a predicted |tau| within the effort
limits on every probe state. The probe states are those the controller has
recently seen (:class:`ProbeBuffer`: (q, dq, ddq_ref) of its recent ticks), plus any the caller adds (e.g. the states
of a recorded run). A refusal leaves the old model running and says why (:class:`SwapVerdict`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ..data.effort_units import NEWTON_METRE, not_si
from ..models.artifact import UNITS, model_effort_units, model_joint_kinds
from ..models.base import InverseDynamicsModel, check_joint_arrays
from ..models.history import per_tick_refusal
from .arm_check import ArmReference, arm_verdict

if TYPE_CHECKING:
    from .config import ControllerConfig

__all__ = ["MODEL_FIELDS", "PROBE_CAPACITY", "PROBE_EVERY", "ProbeBuffer", "SwapVerdict", "bind_model",
           "check_model_fields", "check_swap", "joint_mismatch"]

#: States kept by :class:`ProbeBuffer` (one every :data:`PROBE_EVERY` ticks: the last ~1 s at 1 kHz).
PROBE_CAPACITY = 256
PROBE_EVERY = 4
#: Fields of :class:`~.config.ControllerConfig` that say which model runs: only a swap changes them while running.
MODEL_FIELDS = ("model", "model_path", "model_friction", "friction_velocity")


@dataclass(frozen=True)
class SwapVerdict:
    """What :func:`check_swap` (or a swap) decided.

    Attributes:
        accepted: True when the model may run.
        reason: why it was refused (joints, units, which joint was non-finite or beyond its limit and by how much),
            or what was checked when accepted.
    """

    accepted: bool
    reason: str


def joint_mismatch(model_names: Sequence[str], joint_names: Sequence[str]) -> str:
    """"" when ``model_names`` are exactly ``joint_names`` (any order), else the mismatch with the joints named."""
    missing = [j for j in joint_names if j not in model_names]
    extra = [j for j in model_names if j not in joint_names]
    if not missing and not extra and len(model_names) == len(joint_names):
        return ""
    return (f"model joints {list(model_names)} do not match the controller's {list(joint_names)}: missing from the "
            f"model {missing}, not controlled {extra}")


def bind_model(model: InverseDynamicsModel, joint_names: Sequence[str]
               ) -> tuple[InverseDynamicsModel, np.ndarray, np.ndarray, bool]:
    """(model, to_model, from_model, identity): ``x_model = x_ctrl[to_model]``, ``tau_ctrl = tau_model[from_model]``
    (index arrays (J,)); identity when the orders agree. The model's joints must match (:func:`joint_mismatch`).

    Raises:
        ValueError: a model that reads the joint-state history (a history method's: it cannot evaluate one state
            per tick).
    """
    reason = per_tick_refusal(model)
    if reason:
        raise ValueError(reason)
    model_names = tuple(model.joint_names)
    names = tuple(joint_names)
    to_model = np.array([names.index(j) for j in model_names], dtype=int)
    from_model = np.array([model_names.index(j) for j in names], dtype=int)
    return model, to_model, from_model, bool(np.all(to_model == np.arange(len(names))))


def _unit_mismatch(model: InverseDynamicsModel) -> str:
    """"" when the model's recorded units (model.json ``units`` and ``effort_units``) are the controller's,
    :data:`~deadzone_id_ros.models.artifact.UNITS` (a model without a record: SI assumed), else why."""
    metadata = getattr(model, "metadata", None) or {}
    units = metadata.get("units") if isinstance(metadata, dict) else None
    if isinstance(units, dict):
        wrong = {k: units[k] for k in UNITS if k in units and units[k] != UNITS[k]}
        wrong.pop("tau", None)  # effort is judged per joint below
        if wrong:
            return f"model units {wrong} differ from the controller's {UNITS}"
    effort = not_si(model_effort_units(model), model_joint_kinds(model))  # N·m; N on a prismatic joint
    if isinstance(units, dict) and units.get("tau", NEWTON_METRE) != NEWTON_METRE and not effort:
        effort = {j: str(units["tau"]) for j in model.joint_names}
    if effort:
        return (f"the model predicts effort in {effort}, not N·m (trained on effort recorded in another unit); the "
                "controller commands N·m")
    return ""


def check_swap(model: InverseDynamicsModel, joint_names: Sequence[str], effort_limit: np.ndarray,
               probe_q: np.ndarray, probe_dq: np.ndarray, probe_ddq: np.ndarray, *,
               arm: ArmReference | None = None) -> SwapVerdict:
    """May ``model`` replace a running controller's model? Checked in order: joints, units (and whether it runs one
    state per tick: a history method's model does not), arm, outputs on the probe.

    Args:
        model: the candidate (any :class:`InverseDynamicsModel`).
        joint_names: (J,) the controller's joints (all arrays here are in this order).
        effort_limit: (J,) the controller's effort clamp [N·m] (``ControllerConfig.effort_limits``).
        probe_q, probe_dq, probe_ddq: (N, J) probe states, q [rad], dq [rad/s], ddq [rad/s²] (the controller's
            ddq_ref), N >= 1.
        arm: the controller's arm (URDF and limits); a model carrying its own URDF is compared with it
            (:func:`.arm_check.arm_verdict`). None: not compared.

    Returns:
        the verdict; refused when the joints differ (names them), the units differ (names them), the model's URDF
        describes another arm (names the joint, the bodies and the difference), ``predict`` raises
        or returns the wrong shape, a torque is non-finite (how many states, which joints), or |tau| exceeds a
        joint's effort limit on some probe state (which joint, which state, by how much).

    Raises:
        ValueError: the probe arrays are not (N, J) or the effort limits not (J,).
    """
    names = tuple(joint_names)
    n = len(names)
    limit = np.asarray(effort_limit, dtype=float)
    if limit.shape != (n,):
        raise ValueError(f"effort_limit must have shape ({n},); got {limit.shape}")
    q, dq, ddq = check_joint_arrays(n, q=np.atleast_2d(probe_q), dq=np.atleast_2d(probe_dq),
                                    ddq=np.atleast_2d(probe_ddq))
    mismatch = joint_mismatch(tuple(model.joint_names), names)
    if mismatch:
        return SwapVerdict(False, mismatch)
    wrong_units = _unit_mismatch(model) or per_tick_refusal(model)
    if wrong_units:
        return SwapVerdict(False, wrong_units)
    arm_note = ""
    if arm is not None:
        other_arm, arm_note = arm_verdict(model, arm, names, limit)
        if other_arm:
            return SwapVerdict(False, arm_note)
        arm_note = f"; {arm_note}"
    if len(q) == 0:
        return SwapVerdict(False, "no probe states: the controller has seen no state yet and no probe was given")
    _, to_model, from_model, _ = bind_model(model, names)
    try:
        tau = np.asarray(model.predict(q[:, to_model], dq[:, to_model], ddq[:, to_model]), dtype=float)
    except Exception as err:  # noqa: BLE001 - any failure of a candidate's predict refuses it, with the error named
        return SwapVerdict(False, f"the model's predict failed on the probe states: {type(err).__name__}: {err}")
    if tau.shape != q.shape:
        return SwapVerdict(False, f"the model returned torques of shape {tau.shape} for probe states {q.shape}")
    tau = tau[:, from_model]
    bad = ~np.isfinite(tau)
    if bad.any():
        rows = np.flatnonzero(bad.any(axis=1))
        return SwapVerdict(False, f"non-finite torque on {len(rows)} of {len(q)} probe states (joints "
                                  f"{[names[j] for j in np.flatnonzero(bad.any(axis=0))]}; first at probe state "
                                  f"{rows[0]}: q = {q[rows[0]].tolist()} rad)")
    excess = np.abs(tau) - limit
    if (excess > 0).any():
        row, col = np.unravel_index(int(np.argmax(excess)), excess.shape)
        over = [names[i] for i in np.flatnonzero((excess > 0).any(axis=0))]
        return SwapVerdict(False, f"predicted |tau| of {names[col]} reaches {abs(tau[row, col]):.4g} N·m on probe "
                                  f"state {row} of {len(q)}, {excess[row, col]:.4g} N·m beyond its effort limit "
                                  f"{limit[col]:.4g} N·m ({int((excess > 0).any(axis=1).sum())} probe states exceed "
                                  f"a limit; joints {over})")
    ratio = np.abs(tau).max(axis=0) / limit
    peak = int(np.argmax(ratio))
    return SwapVerdict(True, f"accepted: joints and units match; finite and within the effort limits on {len(q)} probe "
                             f"states (peak |tau| {ratio[peak]:.0%} of the limit, {names[peak]}){arm_note}")


def check_model_fields(old: ControllerConfig, new: ControllerConfig) -> None:
    """Check that ``new`` differs from ``old`` only in :data:`MODEL_FIELDS` (what a swap may change).

    Raises:
        ValueError: another field differs (named).
    """
    for f in dataclasses.fields(old):
        if f.name not in MODEL_FIELDS and getattr(old, f.name) != getattr(new, f.name):
            raise ValueError(f"a model swap changes only {list(MODEL_FIELDS)}; {f.name} differs")


class ProbeBuffer:
    """A ring of the (q, dq, ddq_ref) a controller has recently seen: one state every ``every`` calls of
    :meth:`record`, the last ``capacity`` kept, preallocated (nothing is created per tick).

    Args:
        n_joints: J.
        capacity: states kept (>= 1).
        every: record one state per this many calls (>= 1).
    """

    def __init__(self, n_joints: int, capacity: int = PROBE_CAPACITY, every: int = PROBE_EVERY) -> None:
        if capacity < 1 or every < 1:
            raise ValueError(f"capacity = {capacity} and every = {every} must be >= 1")
        self._rows = np.zeros((capacity, 3, n_joints))
        self._every = every
        self._calls = 0
        self._count = 0

    def record(self, q: np.ndarray, dq: np.ndarray, ddq: np.ndarray) -> None:
        """Offer one state, q (J,) [rad], dq (J,) [rad/s], ddq (J,) [rad/s²]; kept on every ``every``-th call."""
        calls = self._calls
        self._calls = calls + 1
        if calls % self._every:
            return
        row = self._rows[self._count % len(self._rows)]
        row[0], row[1], row[2] = q, dq, ddq
        self._count += 1

    def states(self, extra: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Copies of the kept states (oldest first), then ``extra`` (q, dq, ddq) if given: (q, dq, ddq), each (N, J).

        Raises:
            ValueError: the ``extra`` arrays are not (M, J) or (J,) alike.
        """
        n_rows, n = len(self._rows), min(self._count, len(self._rows))
        rows = np.roll(self._rows, -(self._count % n_rows), axis=0)[n_rows - n:].copy()
        q, dq, ddq = rows[:, 0], rows[:, 1], rows[:, 2]
        if extra is None:
            return q, dq, ddq
        more = check_joint_arrays(rows.shape[2], q=np.atleast_2d(extra[0]), dq=np.atleast_2d(extra[1]),
                                  ddq=np.atleast_2d(extra[2]))
        return np.concatenate((q, more[0])), np.concatenate((dq, more[1])), np.concatenate((ddq, more[2]))
