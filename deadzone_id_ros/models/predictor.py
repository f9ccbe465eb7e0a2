"""The composed inverse-dynamics model every method produces: rigid body, MLP, or rigid body + MLP residual."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..data.deadzone import DeadZone
from .base import check_joint_arrays, is_joint_vector
from .methods import METHODS, get_method
from .mlp import MLPWeights
from .rbd import RigidBodyModel

__all__ = ["METHODS", "LearnedModel"]


class LearnedModel:
    """tau = rbd(q, dq, ddq) + mlp(q, dq, ddq), either part optional; implements InverseDynamicsModel. A per-joint
    residual's network also reads the rigid-body torque: tau = rbd + mlp(q, dq, ddq, rbd(q, dq, ddq)).

    Args:
        joint_names: (J,) joint order of every array in and out.
        method: one of :data:`~deadzone_id_ros.models.methods.METHODS` (its entry says which parts it has).
        mlp: the network (inputs [q, dq, ddq], 3J, continuous joints on the circle, plus the J rigid-body torques
            when its ``extra_inputs`` is J; outputs J torques [N·m]) or None.
        rbd: the identified rigid-body model or None.
        dead_zone: the thresholds the model was trained with (kept for evaluation and the artifact).
        metadata: free-form description (the artifact's model.json when loaded from disk).

    Raises:
        ValueError: unknown method, parts that do not match the method, or widths that do not match J.
    """

    def __init__(self, joint_names: Sequence[str], method: str, mlp: MLPWeights | None = None,
                 rbd: RigidBodyModel | None = None, dead_zone: DeadZone | None = None,
                 metadata: dict[str, object] | None = None) -> None:
        entry = get_method(method)
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
        if mlp is not None and mlp.extra_inputs and (mlp.extra_inputs != J or rbd is None):
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

        Raises:
            ValueError: the three shapes differ or the last dimension is not J.
        """
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

    def __repr__(self) -> str:
        return f"LearnedModel(method={self.method!r}, joints={list(self.joint_names)})"
