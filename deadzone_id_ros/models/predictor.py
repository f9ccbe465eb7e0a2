"""The composed inverse-dynamics model every method produces: rigid body, MLP, or rigid body + MLP residual."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..data.deadzone import DeadZone
from .base import check_joint_arrays, is_joint_vector
from .history import JointHistory
from .methods import METHODS, get_method
from .mlp import MLPWeights
from .rbd import RigidBodyModel

__all__ = ["METHODS", "LearnedModel"]


class LearnedModel:
    """tau = rbd(q, dq, ddq) + mlp(q, dq, ddq), either part optional; implements InverseDynamicsModel. A per-joint
    residual's network also reads the rigid-body torque: tau = rbd + mlp(q, dq, ddq, rbd(q, dq, ddq)). A history
    method's network also reads the earlier taps of the joint-state window (:mod:`.history`):
    tau_i = rbd_i + mlp(q_i, dq_i, ddq_i, window_i); it predicts from consecutive samples only
    (:meth:`predict_sequence`).

    Args:
        joint_names: (J,) joint order of every array in and out.
        method: one of :data:`~deadzone_id_ros.models.methods.METHODS` (its entry says which parts it has).
        mlp: the network (inputs [q, dq, ddq], 3J, continuous joints on the circle, plus the J rigid-body torques
            when its ``extra_inputs`` is J; outputs J torques [N·m]) or None.
        rbd: the identified rigid-body model or None.
        dead_zone: the thresholds the model was trained with (kept for evaluation and the artifact).
        metadata: free-form description (the artifact's model.json when loaded from disk).
        history: the joint-state window of a history method (:class:`~.history.JointHistory`; None: read from
            ``metadata["history"]``, as a loaded artifact has it); None for every other method.

    Raises:
        ValueError: unknown method, parts that do not match the method, or widths that do not match J; a history
            method without its window, or a window for another method.
    """

    def __init__(self, joint_names: Sequence[str], method: str, mlp: MLPWeights | None = None,
                 rbd: RigidBodyModel | None = None, dead_zone: DeadZone | None = None,
                 metadata: dict[str, object] | None = None, history: JointHistory | None = None) -> None:
        entry = get_method(method)
        if history is None and entry.history and isinstance((metadata or {}).get("history"), dict):
            history = JointHistory.from_dict((metadata or {})["history"])  # type: ignore[arg-type]
        if entry.history != (history is not None):
            raise ValueError(f"method {method!r} {'needs' if entry.history else 'takes no'} joint-state history")
        #: the joint-state window its network reads (history methods), else None
        self.history = history
        want_rbd, want_mlp = entry.rigid_body, entry.has_network
        if want_rbd != (rbd is not None) or want_mlp != (mlp is not None):
            raise ValueError(
                f"method {method!r} needs rbd={'yes' if want_rbd else 'no'} and mlp={'yes' if want_mlp else 'no'}"
            )
        self.joint_names: tuple[str, ...] = tuple(joint_names)
        J = len(self.joint_names)
        if mlp is not None and mlp.n_outputs != J:
            raise ValueError(f"MLP has {mlp.n_raw_inputs} inputs / {mlp.n_outputs} outputs; {J} joints need "
                             f"{3 * J} / {J}")
        if history is not None and mlp is not None and mlp.extra_inputs != history.n_inputs(J):
            raise ValueError(f"an MLP with {mlp.extra_inputs} extra inputs cannot read a {history.taps}-tap history "
                             f"of {J} joints ({history.n_inputs(J)} inputs)")
        if history is None and mlp is not None and mlp.extra_inputs and (mlp.extra_inputs != J or rbd is None):
            raise ValueError(f"an MLP with {mlp.extra_inputs} extra inputs reads the rigid-body torque: it needs a "
                             f"rigid-body part and J = {J} extra inputs")
        if rbd is not None and rbd.joint_names != self.joint_names:
            raise ValueError(f"rigid-body joints {list(rbd.joint_names)} differ from {list(self.joint_names)}")
        self.method = method
        self.mlp = mlp
        self.rbd = rbd
        self.dead_zone = dead_zone
        self.metadata: dict[str, Any] = dict(metadata or {})

    def predict(self, q: np.ndarray, dq: np.ndarray, ddq: np.ndarray) -> np.ndarray:
        """Return tau (N, J) or (J,) [N·m; a model trained on effort in another unit predicts that unit, see
        ``metadata["effort_units"]``] for q [rad], dq [rad/s], ddq [rad/s²] of that shape.

        Rows are independent states. A history method's model has no such prediction (it needs the samples before
        each one): it raises, and :meth:`predict_sequence` predicts a trajectory.

        Raises:
            ValueError: the three shapes differ or the last dimension is not J; a history method's model.
        """
        if self.history is not None:
            raise ValueError(f"method {self.method!r} reads the last {self.history.span_s * 1e3:.0f} ms of joint "
                             "states: it cannot evaluate independent states (one per control tick); predict a "
                             "trajectory with predict_sequence")
        n = len(self.joint_names)
        if (self.rbd is None and self.mlp is not None
                and is_joint_vector(q, n) and is_joint_vector(dq, n) and is_joint_vector(ddq, n)):
            return self.mlp.forward(np.concatenate((q, dq, ddq)))  # fast path (every control tick): already checked
        q, dq, ddq = check_joint_arrays(len(self.joint_names), q=q, dq=dq, ddq=ddq)
        if self.rbd is None and self.mlp is not None and q.ndim == 1:  # one sample, MLP only
            return self.mlp.forward(np.concatenate((q, dq, ddq)))
        single = q.ndim == 1
        if single:
            q, dq, ddq = q[None], dq[None], ddq[None]
        tau = np.zeros(q.shape)
        if self.rbd is not None:
            tau += self.rbd.predict(q, dq, ddq)
        if self.mlp is not None and self.mlp.extra_inputs:  # the per-joint residual reads the rigid-body torque
            tau += self.mlp.forward(np.concatenate([q, dq, ddq, tau], axis=1))
        elif self.mlp is not None:
            tau += self.mlp.forward(np.concatenate([q, dq, ddq], axis=1))
        return tau[0] if single else tau

    def predict_sequence(self, q: np.ndarray, dq: np.ndarray, ddq: np.ndarray, sample_period: float | None,
                         episode_index: np.ndarray | None = None) -> np.ndarray:
        """tau (N, J) [N·m] for (N, J) consecutive samples q [rad], dq [rad/s], ddq [rad/s²], ``sample_period`` [s]
        apart within each episode of ``episode_index`` (N,) (None: one episode). Without history it is
        :meth:`predict` row by row (``sample_period`` unused).

        Raises:
            ValueError: shapes that differ, a last dimension that is not J, a wrong ``episode_index`` length; for a
                history method also a single sample (J,) (it reads the samples before it, so it cannot run one
                control tick at a time) and a ``sample_period`` that is None or differs by more than 1% from the
                one it was trained at (its taps would read another span of time).
        """
        q, dq, ddq = check_joint_arrays(len(self.joint_names), q=q, dq=dq, ddq=ddq)
        if self.history is None:
            return self.predict(q, dq, ddq)
        if q.ndim != 2:
            raise ValueError(f"method {self.method!r} reads the last {self.history.span_s * 1e3:.0f} ms of joint "
                             "states: give it (N, J) consecutive samples; it cannot evaluate one state at a time")
        self.history.check_period(sample_period, f"method {self.method!r}")
        tau = self.rbd.predict(q, dq, ddq) if self.rbd is not None else np.zeros(q.shape)
        if self.mlp is not None:
            window = self.history.features(q, dq, ddq, episode_index)
            tau = tau + self.mlp.forward(np.concatenate([q, dq, ddq, window], axis=1))
        return tau

    def __repr__(self) -> str:
        return f"LearnedModel(method={self.method!r}, joints={list(self.joint_names)})"
