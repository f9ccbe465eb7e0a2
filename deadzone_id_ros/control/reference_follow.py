"""The reference-following part of :class:`deadzone_id_ros.control.controller.FeedforwardController`: which
reference it follows (:func:`.trajectory.build_reference`) and the desired state (q_d, dq_d, ddq_d) it holds when
there is none. A mixin: the controller owns the state declared here."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..errors import SafetyError
from .trajectory import TrajectoryPoints, TrajectorySampler, build_reference

__all__ = ["ReferenceFollowing"]


class ReferenceFollowing:
    """Reference and desired state of a controller (mixed into
    :class:`~deadzone_id_ros.control.controller.FeedforwardController`, which sets the attributes below)."""

    joint_names: tuple[str, ...]
    _n: int
    _reference: TrajectorySampler | None
    _q_last: np.ndarray | None
    _desired: tuple[np.ndarray, np.ndarray, np.ndarray]

    @property
    def reference(self) -> TrajectorySampler | None:
        """The reference being followed, or None (hold the first measured position)."""
        return self._reference

    @property
    def desired(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(q_d, dq_d, ddq_d) of the last tick, each (J,) [rad, rad/s, rad/s²]."""
        return self._desired

    def set_reference(self, points: TrajectoryPoints | None, now: float | None = None) -> None:
        """Follow ``points`` (absolute times [s], same clock as the measurements); None holds the current position.

        Mapped by joint name. When ``now`` is given and the first point lies in the future, the current desired
        state at ``now`` (:meth:`reference_base`) is prepended: the reference stays continuous in q, dq, ddq.

        Raises:
            SafetyError: the points lack a controlled joint (names listed).
        """
        self._reference = None if points is None else \
            build_reference(points, self.joint_names, now, self.reference_base() if now is not None else None)

    def reference_base(self) -> Callable[[float], tuple[np.ndarray, np.ndarray, np.ndarray]] | None:
        """What a new reference continues from: t [s] -> (q_d, dq_d, ddq_d) of the reference followed now, or the
        held desired state when there is none; None before the first measurement without a reference."""
        if self._reference is not None:
            return self._reference.sample
        desired = self._desired  # never written in place: the held state as it is now
        return None if self._q_last is None else lambda _t: desired

    def use_reference(self, sampler: TrajectorySampler | None) -> None:
        """Follow ``sampler`` (from :func:`.trajectory.build_reference`, e.g. built off the control thread); None holds
        the current position."""
        self._reference = sampler

    def _sample_desired(self, t: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        if self._reference is not None:
            return self._reference.sample(t)
        if self._q_last is None:
            raise SafetyError("no reference and no measurement yet")
        return self._desired  # holding: the desired state does not change (and is never written in place)
