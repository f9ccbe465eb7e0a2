"""The control law (core, no ROS): computed-torque control, disturbance observer, safety limits, references.

- :class:`FeedforwardController`: ``step(t, q, dq) -> tau`` in modes pd, pd_dob, ctc, ctc_dob, with the watchdog.
- :class:`DisturbanceObserver`: Ohnishi's DOB, exactly discretized for the measured period.
- the controller's inverse-dynamics models (none, rigid body, learned) live in :mod:`deadzone_id_ros.models.runtime`.
- :class:`TrajectorySampler` / :func:`generate_excitation`: references continuous in q, dq, ddq; excitation.
"""

from __future__ import annotations

from .config import MODES, ControllerConfig
from .controller import WATCHDOG_STATES, ControllerStatus, FeedforwardController, TorqueParts
from .dob import DisturbanceObserver
from .trajectory import ExcitationConfig, TrajectoryPoints, TrajectorySampler, generate_excitation

__all__ = [
    "MODES",
    "WATCHDOG_STATES",
    "ControllerConfig",
    "ControllerStatus",
    "DisturbanceObserver",
    "ExcitationConfig",
    "FeedforwardController",
    "TorqueParts",
    "TrajectoryPoints",
    "TrajectorySampler",
    "generate_excitation",
]
