"""The control law (core, no ROS): computed-torque control, disturbance observer, safety limits, references.

- :class:`FeedforwardController`: ``step(t, q, dq) -> tau`` in modes pd, pd_dob, ctc, ctc_dob, with the watchdog;
  :func:`build_controller` makes one with the model its configuration names; :meth:`FeedforwardController.swap_model`
  (and :func:`swap_configured_model`) change the model while running, after :func:`.model_swap.check_swap`.
- :class:`DisturbanceObserver`: Ohnishi's DOB, exactly discretized for the measured period.
- :class:`SafetyMonitor`: the tracking-error and position limits that latch the safe state (hold, then zero).
- the controller's inverse-dynamics models (none, rigid body, learned) live in :mod:`deadzone_id_ros.models.runtime`.
- :class:`TrajectorySampler`: references continuous in q, dq, ddq (:mod:`.trajectory`).
- :class:`ExcitationConfig` / :func:`generate_excitation`: the seeded excitation trajectory (:mod:`.excitation`).
"""

from __future__ import annotations

from .build import build_controller, swap_configured_model
from .config import FEEDFORWARD_SOURCES, FIXED_FIELDS, MODES, ControllerConfig, ControlMode, dob_cutoff_limit
from .controller import FeedforwardController
from .dob import DisturbanceObserver
from .excitation import ExcitationConfig, generate_excitation
from .safety import SAFE_STATES, SafetyMonitor
from .status import WATCHDOG_STATES, ControllerStatus, TorqueParts
from .trajectory import TrajectoryPoints, TrajectorySampler

__all__ = [
    "FEEDFORWARD_SOURCES",
    "FIXED_FIELDS",
    "MODES",
    "SAFE_STATES",
    "WATCHDOG_STATES",
    "ControlMode",
    "ControllerConfig",
    "ControllerStatus",
    "DisturbanceObserver",
    "ExcitationConfig",
    "FeedforwardController",
    "SafetyMonitor",
    "TorqueParts",
    "TrajectoryPoints",
    "TrajectorySampler",
    "build_controller",
    "dob_cutoff_limit",
    "generate_excitation",
    "swap_configured_model",
]
