"""The data types that travel between recording, dataset building and training (core, no ROS).

- :class:`Recording`: raw time series as a robot logs them (what goes into and comes out of a bag).
- :class:`Episode`: one contiguous, uniformly resampled stretch of training data with q, dq, ddq, tau.

Time is an integer in nanoseconds in a Recording (as in ROS messages) and a float in seconds in an Episode; the
conversions live in :mod:`deadzone_id_ros.stamps`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = ["Episode", "Recording"]


@dataclass
class Recording:
    """Raw joint data of one run, as a robot publishes it. Joint arrays follow ``joint_names``.

    Attributes:
        joint_names: (J,) joint names.
        state_t_ns: (N,) /joint_states header stamps [ns].
        position: (N, J) [rad].  velocity: (N, J) [rad/s].  effort: (N, J) applied torque [N·m].
        command_t_ns: (M,) stamps of /effort_controller/commands [ns], or None.
        command: (M, J) commanded torque [N·m] in ``joint_names`` order, or None.
        reference_t_ns: (K,) stamps of reference samples [ns], or None.
        reference_position / reference_velocity / reference_acceleration: (K, J) [rad, rad/s, rad/s²], or None.
        metadata: free-form description (robot, seed, notes) written next to the bag.
        state_time_base: what ``state_t_ns`` is: "header" (the JointState header stamps) or "log" (receive time,
            only when no state carried a stamp).
        zero_stamp_states: JointStates with a zero header stamp that were left out (time base "header") or whose
            receive time was used (time base "log").
    """

    joint_names: tuple[str, ...]
    state_t_ns: np.ndarray
    position: np.ndarray
    velocity: np.ndarray
    effort: np.ndarray
    command_t_ns: np.ndarray | None = None
    command: np.ndarray | None = None
    reference_t_ns: np.ndarray | None = None
    reference_position: np.ndarray | None = None
    reference_velocity: np.ndarray | None = None
    reference_acceleration: np.ndarray | None = None
    metadata: dict = field(default_factory=dict)
    state_time_base: str = "header"
    zero_stamp_states: int = 0

    def __post_init__(self) -> None:
        if self.state_time_base not in ("header", "log"):
            raise ValueError(f"Recording.state_time_base = {self.state_time_base!r} must be 'header' or 'log'")
        n, j = len(self.state_t_ns), len(self.joint_names)
        for name in ("position", "velocity", "effort"):
            arr = getattr(self, name)
            if np.shape(arr) != (n, j):
                raise ValueError(f"Recording.{name} must have shape ({n}, {j}), got {np.shape(arr)}")


@dataclass
class Episode:
    """One contiguous, uniformly sampled stretch of data for inverse dynamics. Arrays follow ``joint_names``.

    Attributes:
        name: unique label, e.g. ``"<bag>#2"`` for the third segment of a bag.
        source: the bag or file it came from.
        joint_names: (J,) joint names.
        t: (N,) time since the start of the source [s], uniform step ``dt``.
        q: (N, J) [rad].  dq: (N, J) [rad/s].  ddq: (N, J) [rad/s²].  tau: (N, J) applied/measured torque [N·m].
        tau_true: (N, J) the simulator's own inverse dynamics (noise floor), or None for real data.
        edge_reach: how many samples on each side the values at one sample are computed from: dq and ddq at
            sample i use the recorded data of samples i - edge_reach .. i + edge_reach (Savitzky–Golay half window,
            twice that when dq is differentiated too, plus one for the linear resampling). A split cuts a guard of
            this many samples on each side of a block edge (:func:`~deadzone_id_ros.data.split.time_blocks`).
    """

    name: str
    source: str
    joint_names: tuple[str, ...]
    t: np.ndarray
    q: np.ndarray
    dq: np.ndarray
    ddq: np.ndarray
    tau: np.ndarray
    tau_true: np.ndarray | None = None
    edge_reach: int = 0

    def __post_init__(self) -> None:
        n, j = len(self.t), len(self.joint_names)
        if not isinstance(self.edge_reach, (int, np.integer)) or self.edge_reach < 0:
            raise ValueError(f"Episode {self.name}: edge_reach = {self.edge_reach!r} must be an integer >= 0")
        for name in ("q", "dq", "ddq", "tau"):
            arr = getattr(self, name)
            if np.shape(arr) != (n, j):
                raise ValueError(f"Episode {self.name}: {name} must have shape ({n}, {j}), got {np.shape(arr)}")

    def __len__(self) -> int:
        return len(self.t)

    @property
    def dt(self) -> float:
        """Sample period [s] (0.0 for fewer than two samples)."""
        return float(self.t[1] - self.t[0]) if len(self.t) > 1 else 0.0

    @property
    def inputs(self) -> np.ndarray:
        """(N, 3J) network input [q, dq, ddq] stacked per sample (rad, rad/s, rad/s²)."""
        return np.concatenate([self.q, self.dq, self.ddq], axis=1)
