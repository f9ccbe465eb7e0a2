"""Bags (core, no ROS), built on the ``rosbags`` library: one module per concern.

- :mod:`.format`: content-based format detection (ROS 1, MCAP, SQLite), topic/type names, the Kilted typestore;
- :mod:`.layout`: what a ROS 2 bag's files hold before reading (zstd-compressed files, MCAP layouts rosbags'
  indexed reader cannot read, message counts declared by ``metadata.yaml`` or the MCAP summary);
- :mod:`.recover`: rebuilding ROS 2 bags by streaming (no ``metadata.yaml``, MCAP without summary or in another
  layout, unparsable type definitions, corrupt chunks), losing only the unreadable topic or chunk, named;
- :mod:`.reader`: opening any bag (:class:`BagHandle`, :func:`open_bag`), recovering on the way; reading a topic
  (:meth:`BagHandle.read_topic`) with one-line errors naming bag, topic and message index;
- :mod:`.cdr`, :mod:`.joint_states`, :mod:`.select`: JointState decoding (bulk numpy decoder, name mapping into a
  :class:`JointStateSeries`), field usability and the choice of the topic to train on;
- :mod:`.encode`, :mod:`.recording`: writing and reading a :class:`~deadzone_id_ros.data.types.Recording` as
  rosbag2 plus ``episode.yaml``.

Time is an integer in nanoseconds everywhere in this package (:mod:`deadzone_id_ros.stamps` converts).
"""

from __future__ import annotations

from .encode import MessageEncoders
from .format import (
    COMMAND_TYPE,
    DEFAULT_COMMAND_TOPIC,
    DEFAULT_JOINT_STATE_TOPIC,
    DEFAULT_REFERENCE_TOPIC,
    EPISODE_FILE,
    JOINT_STATE_TYPE,
    REFERENCE_TYPE,
    STORAGE_CHOICES,
    detect_format,
    typestore,
)
from .joint_states import JointStateSeries, read_joint_states, series_from_recording
from .reader import BagHandle, open_bag
from .recording import (
    ZeroStampWarning,
    episode_yaml,
    read_float_arrays,
    read_recording,
    write_episode_yaml,
    write_recording,
)
from .recover import recover_bag
from .select import field_usability, select_joint_state_topic, why_unusable

__all__ = [
    "BagHandle",
    "COMMAND_TYPE",
    "DEFAULT_COMMAND_TOPIC",
    "DEFAULT_JOINT_STATE_TOPIC",
    "DEFAULT_REFERENCE_TOPIC",
    "EPISODE_FILE",
    "JOINT_STATE_TYPE",
    "JointStateSeries",
    "MessageEncoders",
    "REFERENCE_TYPE",
    "STORAGE_CHOICES",
    "ZeroStampWarning",
    "detect_format",
    "episode_yaml",
    "field_usability",
    "open_bag",
    "read_float_arrays",
    "read_joint_states",
    "read_recording",
    "recover_bag",
    "select_joint_state_topic",
    "series_from_recording",
    "typestore",
    "why_unusable",
    "write_episode_yaml",
    "write_recording",
]
