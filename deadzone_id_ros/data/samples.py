"""What the cleaning stages pass along (core, no ROS): one topic's messages, then its samples, then its episodes.

:class:`TopicData` is what every stage of :data:`~deadzone_id_ros.data.stages.STAGES` takes and returns;
:class:`Samples` holds the chosen joints' rows in a common order; :func:`subset_series` picks messages.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from .bag import JointStateSeries
from .types import Episode

__all__ = ["Samples", "TopicData", "subset_series"]


@dataclass(frozen=True)
class Samples:
    """Raw samples of the chosen joints, in a common row order.

    Attributes:
        t_ns: (M,) time stamps [ns].  msg_index: (M,) message index on the topic of each row.
        q: (M, J) [rad].  tau: (M, J) [N·m].  vel: (M, J) message velocity [rad/s] (NaN where missing).
    """

    t_ns: np.ndarray
    q: np.ndarray
    tau: np.ndarray
    vel: np.ndarray
    msg_index: np.ndarray

    def take(self, rows: np.ndarray) -> Samples:
        """The samples at ``rows`` (an index array or a boolean mask of length M)."""
        return Samples(self.t_ns[rows], self.q[rows], self.tau[rows], self.vel[rows], self.msg_index[rows])

    @staticmethod
    def concat(parts: Sequence[Samples]) -> Samples:
        """The rows of ``parts`` one after the other (at least one part)."""
        return Samples(*(np.concatenate([getattr(p, f) for p in parts]) for f in ("t_ns", "q", "tau", "vel",
                                                                                  "msg_index")))


def subset_series(series: JointStateSeries, rows: np.ndarray) -> JointStateSeries:
    """The messages of ``series`` at ``rows`` (an index array or a boolean mask (M,))."""
    return replace(series, stamp_ns=series.stamp_ns[rows], log_ns=series.log_ns[rows],
                   position=series.position[rows], velocity=series.velocity[rows], effort=series.effort[rows],
                   index=series.index[rows])


@dataclass(frozen=True)
class TopicData:
    """One JointState topic on its way through the cleaning stages; each stage returns a changed copy.

    The first stages work on messages (``series``, ``t_ns``), the middle ones on the chosen joints' samples
    (``runs``), the last one makes ``episodes``.

    Attributes:
        series: the messages (M,) still in use, as decoded and mapped by joint name.
        t_ns: (M,) the time of each message [ns]: the header stamps until the time stage picks header or log time.
        joints: (J,) the joints to train on, in this order; empty until chosen.
        use_msg_vel: dq from the message's velocity field (True) or Savitzky–Golay derivative of q (False).
        runs: the chosen joints' samples, one :class:`Samples` per run between time resets; empty until made.
        episodes: the uniformly resampled episodes; empty until resampled.
    """

    series: JointStateSeries
    t_ns: np.ndarray
    joints: tuple[str, ...] = ()
    use_msg_vel: bool = False
    runs: tuple[Samples, ...] = ()
    episodes: tuple[Episode, ...] = ()

    @classmethod
    def of(cls, series: JointStateSeries) -> TopicData:
        """A decoded topic before any stage (times: its header stamps)."""
        return cls(series, np.asarray(series.stamp_ns))

    @property
    def where(self) -> str:
        """"<bag>: topic <topic>", the prefix of every message about this topic."""
        return self.series.where

    def take_messages(self, rows: np.ndarray) -> TopicData:
        """The messages at ``rows`` (index array or boolean mask (M,)) with their times."""
        return replace(self, series=subset_series(self.series, rows), t_ns=self.t_ns[rows])
