"""Data path (core, no ROS): bags -> aligned arrays -> episodes, dead-zone masks, splits.

- :mod:`.bag`: reading any bag (format detection, recovery, JointState decoding) and writing recordings;
- :mod:`.stages`: the cleaning stages, one ordered list of functions (:data:`~.stages.STAGES`) that each take a
  topic's data and a :class:`~.cleaning_log.CleaningLog` and return the data; :mod:`.episodes` runs them and builds
  the typed report (:mod:`.cleaning_report`) from the log; they call :mod:`.decisions`, :mod:`.defects`,
  :mod:`.resample` (pure functions) on :mod:`.samples`;
- :mod:`.dataset_config`: :class:`DatasetConfig`, how bags become episodes;
- :mod:`.dataset`: :class:`Dataset`, from bags or in-memory recordings;
- :mod:`.deadzone`, :mod:`.split`, :mod:`.types`, :mod:`.inspect`, :mod:`.convert`, :mod:`.recorder`.
"""

from __future__ import annotations

from .bag import open_bag, read_recording, recover_bag, write_recording
from .cleaning_report import BagReport, CleaningReport
from .dataset import Dataset, dataset_from_recordings, load_dataset
from .dataset_config import DatasetConfig
from .deadzone import DeadZone, DeadZoneConfig, fit_dead_zone
from .split import Split, split_episodes, time_blocks
from .types import Episode, Recording

__all__ = [
    "BagReport",
    "CleaningReport",
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
    "open_bag",
    "read_recording",
    "recover_bag",
    "split_episodes",
    "time_blocks",
    "write_recording",
]
