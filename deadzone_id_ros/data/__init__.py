"""Data path (core, no ROS): bags -> aligned arrays -> episodes, dead-zone masks, splits."""

from __future__ import annotations

from .bags import open_bag, read_recording, recover_bag, write_recording
from .dataset import Dataset, DatasetConfig, dataset_from_recordings, load_dataset
from .deadzone import DeadZone, DeadZoneConfig, fit_dead_zone
from .split import Split, split_episodes, time_blocks
from .types import Episode, Recording, ns_to_s

__all__ = [
    "Dataset",
    "DatasetConfig",
    "DeadZone",
    "DeadZoneConfig",
    "Episode",
    "Recording",
    "Split",
    "dataset_from_recordings",
    "fit_dead_zone",
    "load_dataset",
    "ns_to_s",
    "open_bag",
    "read_recording",
    "recover_bag",
    "split_episodes",
    "time_blocks",
    "write_recording",
]
