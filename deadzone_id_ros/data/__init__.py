"""Data path (core, no ROS): bags -> aligned arrays -> episodes, dead-zone masks, splits."""

from __future__ import annotations

from .deadzone import DeadZone, fit_dead_zone
from .split import Split, split_episodes, time_blocks
from .types import Episode, Recording, ns_to_s

__all__ = ["DeadZone", "Episode", "Recording", "Split", "fit_dead_zone", "ns_to_s", "split_episodes", "time_blocks"]
