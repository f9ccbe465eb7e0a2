"""The recent joint-state history a history network reads beside the current state (core, no ROS).

A history method's network (:attr:`~deadzone_id_ros.models.methods.Method.history`) predicts the torque at sample i
from the current state (q, dq, ddq)_i and the states of the last :data:`HISTORY_SPAN_S` seconds, read at
:data:`HISTORY_TAPS` - 1 earlier taps spaced :data:`HISTORY_SPACING_S` apart. FACTR 2 (arXiv 2606.12406) feeds an
LSTM the recent joint states for the same reason: the torque a drive measures is not a function of the present state
alone (motor and current-loop dynamics, a torque signal filtered or sampled earlier than the encoders, friction that
remembers the last reversal). A fixed window of taps in an MLP is the simplest form of that memory and keeps the
product's network, loss, trainer and artifact: the taps are extra inputs of the same MLP.

Each earlier tap k (k = 1 .. taps - 1, lag k * stride samples) contributes, per joint,

    q_{i - k s} - q_i,   dq_{i - k s},   ddq_{i - k s}       [rad, rad/s, rad/s²]

the position as a displacement from the current one, so a continuous joint's model stays 2π-periodic (the current q
enters on the circle as in every network) and the window does not care where in the workspace it was recorded. A tap
before the start of its episode reads the episode's first sample (the window is clamped; no state of another episode
or block is read). The taps are in seconds, the same for every robot; the stride in samples follows the data's
sample period, at least one sample (so on data slower than 100 Hz the window spans 9 samples: 300 ms at 30 Hz).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

__all__ = ["HISTORY_SPACING_S", "HISTORY_SPAN_S", "HISTORY_TAPS", "JointHistory", "episode_starts", "per_tick_refusal"]

#: taps of the window, the current sample included, and their spacing [s]: 10 taps 10 ms apart read the last 90 ms.
#: The same for every robot (how they were chosen, on the DFKI pendulums: docs/identification.md).
HISTORY_TAPS, HISTORY_SPACING_S = 10, 0.01
#: how far back the window reads [s]
HISTORY_SPAN_S = (HISTORY_TAPS - 1) * HISTORY_SPACING_S


def episode_starts(episode_index: np.ndarray) -> np.ndarray:
    """(N,) the row where each row's episode starts, for rows whose episodes are contiguous runs of equal
    ``episode_index`` (N,) (a new run starts wherever the index changes).

    Raises:
        ValueError: ``episode_index`` is not one-dimensional.
    """
    ep = np.asarray(episode_index)
    if ep.ndim != 1:
        raise ValueError(f"episode_index must be (N,), got shape {ep.shape}")
    n = len(ep)
    new = np.ones(n, dtype=bool)
    new[1:] = ep[1:] != ep[:-1]
    return np.maximum.accumulate(np.where(new, np.arange(n), 0)) if n else np.zeros(0, dtype=int)


@dataclass(frozen=True)
class JointHistory:
    """The window of earlier taps a history network reads (module docstring).

    Attributes:
        taps: samples in the window, the current one included (>= 2).
        stride: samples between two taps (>= 1).
        sample_period_s: the sample period [s] the stride was chosen for (the training data's).

    Raises:
        ValueError: a bad field (named with its value).
    """

    taps: int
    stride: int
    sample_period_s: float

    def __post_init__(self) -> None:
        if int(self.taps) != self.taps or self.taps < 2:
            raise ValueError(f"JointHistory.taps = {self.taps!r} must be an integer >= 2")
        if int(self.stride) != self.stride or self.stride < 1:
            raise ValueError(f"JointHistory.stride = {self.stride!r} must be an integer >= 1")
        if not (np.isfinite(self.sample_period_s) and self.sample_period_s > 0):
            raise ValueError(f"JointHistory.sample_period_s = {self.sample_period_s!r} must be > 0 s")

    @classmethod
    def for_period(cls, sample_period_s: float, taps: int = HISTORY_TAPS,
                   spacing_s: float = HISTORY_SPACING_S) -> JointHistory:
        """The window of ``taps`` taps ``spacing_s`` [s] apart (defaults: :data:`HISTORY_TAPS`,
        :data:`HISTORY_SPACING_S`) at data sampled every ``sample_period_s`` [s] (stride rounded, at least 1).

        Raises:
            ValueError: a sample period that is not > 0, or bad ``taps``.
        """
        if not (np.isfinite(sample_period_s) and sample_period_s > 0):
            raise ValueError(f"sample period {sample_period_s!r} must be > 0 s")
        return cls(int(taps), max(1, int(round(spacing_s / sample_period_s))), float(sample_period_s))

    @property
    def span_s(self) -> float:
        """How far back the window reads [s]."""
        return (self.taps - 1) * self.stride * self.sample_period_s

    def check_period(self, sample_period: float | None, what: str) -> None:
        """Refuse data sampled every ``sample_period`` [s] (None: unknown, or episodes of different rates) unless it
        is this window's period within 1%; ``what`` names the model in the message.

        Raises:
            ValueError: the periods differ, or the data's is unknown.
        """
        if sample_period is None or not abs(sample_period - self.sample_period_s) <= 0.01 * self.sample_period_s:
            got = "no common sample period" if sample_period is None else f"a sample period of {sample_period:g} s"
            raise ValueError(f"{what} reads joint-state taps {self.stride} samples apart at {self.sample_period_s:g} s "
                             f"per sample, but the data have {got}: it was trained at "
                             f"{1.0 / self.sample_period_s:g} Hz and reads only data of that rate")

    def n_inputs(self, n_joints: int) -> int:
        """Width of :meth:`features` for ``n_joints`` joints: 3 J (taps - 1)."""
        return 3 * int(n_joints) * (self.taps - 1)

    def features(self, q: np.ndarray, dq: np.ndarray, ddq: np.ndarray,
                 episode_index: np.ndarray | None = None) -> np.ndarray:
        """The earlier taps of every row, (N, 3 J (taps - 1)): for k = 1 .. taps - 1, [q_{i-ks} - q_i, dq_{i-ks},
        ddq_{i-ks}] (J columns each), clamped at the start of each row's episode. The displacement is wrapped into
        [-π, π), so a continuous joint's angle wrapped anywhere in the window gives the same taps (no joint moves
        half a turn, nor a prismatic joint 3 m, within one window).

        Args:
            q, dq, ddq: (N, J) consecutive samples [rad, rad/s, rad/s²], one sample period apart within an episode.
            episode_index: (N,) the episode of each row (episodes are contiguous runs); None: one episode.

        Raises:
            ValueError: arrays of different or non-2-D shapes, or an ``episode_index`` of the wrong length.
        """
        q, dq, ddq = (np.asarray(a, dtype=float) for a in (q, dq, ddq))
        if q.ndim != 2 or dq.shape != q.shape or ddq.shape != q.shape:
            raise ValueError(f"q, dq, ddq must be (N, J) of one shape (consecutive samples), got {q.shape}, "
                             f"{dq.shape}, {ddq.shape}")
        n = len(q)
        if episode_index is None:
            starts = np.zeros(n, dtype=int)
        else:
            if len(episode_index) != n:
                raise ValueError(f"episode_index has {len(episode_index)} rows, the states {n}")
            starts = episode_starts(episode_index)
        rows = np.arange(n)
        cols = []
        for k in range(1, self.taps):
            idx = np.maximum(rows - k * self.stride, starts)
            cols += [np.mod(q[idx] - q + np.pi, 2.0 * np.pi) - np.pi, dq[idx], ddq[idx]]
        return np.concatenate(cols, axis=1) if cols else np.zeros((n, 0))

    def to_dict(self) -> dict[str, float]:
        """JSON form (model.json's ``history``)."""
        return {"taps": int(self.taps), "stride": int(self.stride), "sample_period_s": float(self.sample_period_s),
                "span_s": self.span_s}

    @classmethod
    def from_dict(cls, d: Mapping[str, float]) -> JointHistory:
        """Inverse of :meth:`to_dict`.

        Raises:
            KeyError: a missing entry.  ValueError: a bad value.
        """
        return cls(int(d["taps"]), int(d["stride"]), float(d["sample_period_s"]))


def per_tick_refusal(model: object) -> str:
    """Why ``model`` cannot be evaluated one state per tick ("" when it can): the one reason the controller, a model
    swap, the force sensor, the model loader and improve give for a history method's model (one whose ``history``
    is a :class:`JointHistory`)."""
    history = getattr(model, "history", None)
    if not isinstance(history, JointHistory):
        return ""
    return (f"method {getattr(model, 'method', '?')!r} reads the last {history.span_s * 1e3:.0f} ms of joint states, "
            "so it cannot run one state per tick: a controller or force sensor evaluates one state per tick; give "
            "it a method without history (hybrid, hybrid_joint, rbd)")
