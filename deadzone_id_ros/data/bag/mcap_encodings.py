"""MCAP files whose messages are not ROS 2 CDR (core, no ROS): which encodings a file holds, and JointState messages
in other encodings converted to ROS 2 CDR so that the rest of the pipeline reads them like any rosbag2.

An MCAP file declares a profile in its header (``ros2``, ``ros1``, or ``""``) and a message encoding per channel
(the MCAP specification's well-known encodings: ``cdr`` with a ``ros2msg``/``ros2idl`` schema, ``ros1`` with a
``ros1msg`` schema, ``json`` with a ``jsonschema`` schema or none, ``protobuf`` with a FileDescriptorSet schema,
``flatbuffer``, ``cbor``). rosbags reads only ``cdr``; an intact file in another encoding is valid, not damaged.
A JointState channel (schema name ``sensor_msgs/msg/JointState``, ``sensor_msgs/JointState``,
``sensor_msgs.msg.JointState`` or any name whose last part is ``JointState``) is decoded with a library decoder:

- ``ros1``: rosbags' ROS 1 (Noetic) typestore (``deserialize_ros1``);
- ``json``: Python's json module (the MCAP library has no JSON decoder of its own; JSON needs no schema);
- ``protobuf``: the MCAP library's protobuf decoder (``mcap_protobuf.decoder.DecoderFactory``, schema = the
  FileDescriptorSet).

Its fields are read by their ROS names (``name``, ``position``, ``velocity``, ``effort``; the stamp from
``header.stamp`` with ``sec``/``nanosec`` or ``secs``/``nsecs``, or a top-level ``timestamp`` with
``sec``/``nsec`` or ``seconds``/``nanos``, Foxglove's and protobuf's ``Timestamp`` spellings) and re-serialized as
a ROS 2 ``sensor_msgs/msg/JointState`` with rosbags' Kilted typestore. A JointState channel in any other encoding
(``flatbuffer``, ``cbor``, an unknown one) is refused naming the file, the profile, the topic and the encoding;
a channel of another type that is not CDR is left out and named in a note.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...errors import DataError
from .format import JOINT_STATE_TYPE, typestore

__all__ = ["CONVERTED_ENCODINGS", "ChannelEncoding", "JointStateTranscoder", "is_joint_state_schema",
           "mcap_encodings", "non_cdr_channels"]

#: Message encodings of a JointState channel that are converted to ROS 2 CDR.
CONVERTED_ENCODINGS = ("ros1", "json", "protobuf")


@dataclass(frozen=True)
class ChannelEncoding:
    """How one MCAP channel is written.

    Attributes:
        topic: the channel's topic.  message_encoding: e.g. ``cdr``, ``ros1``, ``json``, ``protobuf``.
        schema_name: the schema's name ("" without a schema).  schema_encoding: e.g. ``ros2msg``, ``jsonschema``.
    """

    topic: str
    message_encoding: str
    schema_name: str
    schema_encoding: str


def is_joint_state_schema(name: str) -> bool:
    """True for a schema name that denotes a JointState (``sensor_msgs/msg/JointState``, ``sensor_msgs/JointState``,
    ``sensor_msgs.msg.JointState``, ``foo.JointState``)."""
    return bool(name) and re.split(r"[/.:]", name)[-1] == "JointState"


def mcap_encodings(path: Path) -> tuple[str, list[ChannelEncoding]]:
    """``(profile, channels)`` of the MCAP file ``path``: the header's profile and every channel's encodings.

    Read from the summary where the file has one, else by streaming the records (a file without summary); a file
    that cannot be read that far gives what was read (the recovery path names the damage).
    """
    from mcap.exceptions import McapError
    from mcap.reader import make_reader
    from mcap.records import Channel, Header, Schema
    from mcap.stream_reader import StreamReader

    profile = ""
    schemas: dict[int, Any] = {}
    channels: dict[int, Any] = {}
    with path.open("rb") as f:
        try:
            reader = make_reader(f)
            profile = reader.get_header().profile
            summary = reader.get_summary()
        except (McapError, OSError, EOFError, ValueError, KeyError):
            summary = None
        if summary is not None and summary.channels:
            schemas, channels = dict(summary.schemas), dict(summary.channels)
        else:
            f.seek(0)
            try:
                for rec in StreamReader(f, record_size_limit=1 << 31).records:
                    if isinstance(rec, Header):
                        profile = rec.profile
                    elif isinstance(rec, Schema):
                        schemas[rec.id] = rec
                    elif isinstance(rec, Channel):
                        channels[rec.id] = rec
            except (McapError, OSError, EOFError, ValueError):
                pass
    out = []
    for ch in channels.values():
        schema = schemas.get(ch.schema_id)
        out.append(ChannelEncoding(ch.topic, ch.message_encoding, schema.name if schema is not None else "",
                                   schema.encoding if schema is not None else ""))
    return profile, out


def non_cdr_channels(path: Path) -> tuple[str, list[ChannelEncoding]]:
    """``(profile, channels)`` of ``path`` whose message encoding is not ``cdr`` (empty: rosbags reads them all)."""
    profile, channels = mcap_encodings(path)
    return profile, [c for c in channels if c.message_encoding != "cdr"]


class JointStateTranscoder:
    """Converts the messages of non-CDR MCAP channels: JointState to ROS 2 CDR, anything else left out.

    One instance per file; :meth:`decoder` is asked once per channel (by its schema record), :meth:`convert` once
    per message.

    Args:
        path: the MCAP file (for messages).  profile: its header's profile.
    """

    def __init__(self, path: Path, profile: str) -> None:
        self.path, self.profile = path, profile
        self.converted: dict[tuple[str, str], int] = {}  # (topic, encoding) -> messages converted
        self.left_out: dict[tuple[str, str, str], int] = {}  # (topic, schema name, encoding) -> messages

    def decoder(self, topic: str, message_encoding: str, schema: Any) -> Callable[[bytes], Any] | None:
        """The decoder of a JointState channel (bytes -> message object or dict), or None to leave it out.

        Raises:
            DataError: a JointState channel in an encoding that is not converted (names file, profile, topic and
                encoding).
        """
        name = schema.name if schema is not None else ""
        if not is_joint_state_schema(name):
            return None
        if message_encoding == "json":
            return lambda data: json.loads(bytes(data))
        if message_encoding == "ros1":
            from rosbags.typesys import Stores, get_typestore

            ros1 = get_typestore(Stores.ROS1_NOETIC)
            return lambda data: ros1.deserialize_ros1(bytes(data), JOINT_STATE_TYPE)
        if message_encoding == "protobuf":
            from mcap_protobuf.decoder import DecoderFactory

            try:
                decode = DecoderFactory().decoder_for(message_encoding, schema)
            except Exception as err:  # noqa: BLE001 - protobuf raises its own types for a bad FileDescriptorSet
                raise DataError(f"{self.path}: topic {topic}: the protobuf schema {name!r} cannot be read "
                                f"({type(err).__name__}: {err})") from err
            if decode is None:
                raise DataError(f"{self.path}: topic {topic}: no protobuf decoder for schema {name!r}")
            return decode
        raise DataError(f"{self.path}: topic {topic}: JointState in MCAP profile {self.profile!r}, message encoding "
                        f"{message_encoding!r} (schema {name!r}, schema encoding "
                        f"{schema.encoding if schema is not None else ''!r}) is not read; readable encodings are cdr "
                        f"(ROS 2) and {', '.join(CONVERTED_ENCODINGS)}: convert the file to one of them")

    def convert(self, topic: str, message_encoding: str, decode: Callable[[bytes], Any], data: bytes,
                index: int) -> bytes:
        """ROS 2 CDR bytes of one decoded JointState.

        Raises:
            DataError: the message cannot be decoded or lacks ``name``/``position`` (names file, topic, encoding and
                the 0-based message index on the channel).
        """
        from ...stamps import ns_to_stamp

        try:
            obj = decode(data)
            names = [str(n) for n in _get(obj, "name")]
            position, velocity, effort = ([float(v) for v in _get(obj, k, ())] for k in ("position", "velocity",
                                                                                          "effort"))
            stamp_ns = _stamp_ns(obj)
        except DataError:
            raise
        except Exception as err:  # noqa: BLE001 - json, protobuf and rosbags raise their own types
            raise DataError(f"{self.path}: topic {topic}: {message_encoding} message {index}: cannot read it as a "
                            f"JointState ({type(err).__name__}: {str(err)[:200]})") from err
        ts = typestore()
        from numpy import asarray

        msg_cls, header_cls, time_cls = (ts.types[t] for t in (JOINT_STATE_TYPE, "std_msgs/msg/Header",
                                                                 "builtin_interfaces/msg/Time"))
        sec, nanosec = ns_to_stamp(stamp_ns)
        msg = msg_cls(header=header_cls(stamp=time_cls(sec=sec, nanosec=nanosec), frame_id=""), name=names,
                      position=asarray(position, dtype=float), velocity=asarray(velocity, dtype=float),
                      effort=asarray(effort, dtype=float))
        key = (topic, message_encoding)
        self.converted[key] = self.converted.get(key, 0) + 1
        return bytes(ts.serialize_cdr(msg, JOINT_STATE_TYPE))

    def skip(self, topic: str, schema_name: str, message_encoding: str) -> None:
        """Count a message of a non-CDR channel that is not a JointState (left out)."""
        key = (topic, schema_name, message_encoding)
        self.left_out[key] = self.left_out.get(key, 0) + 1

    def notes(self) -> list[str]:
        """One line for the conversions and one for the channels left out (none when nothing happened)."""
        out = []
        if self.converted:
            out.append(f"{self.path.name}: MCAP profile {self.profile!r}: converted to ROS 2 CDR: " + ", ".join(
                f"{topic} ({enc}, {n} message(s))" for (topic, enc), n in sorted(self.converted.items())))
        if self.left_out:
            out.append(f"{self.path.name}: left out non-CDR topic(s) that are not JointState: " + ", ".join(
                f"{topic} ({name or 'no schema'}, {enc}, {n} message(s))"
                for (topic, name, enc), n in sorted(self.left_out.items())))
        return out


_MISSING = object()


def _get(obj: Any, key: str, default: Any = _MISSING) -> Any:
    """Field ``key`` of a dict (JSON) or a message object (protobuf, rosbags); ``default`` when absent."""
    if isinstance(obj, dict):
        value = obj.get(key, _MISSING)
    else:
        value = getattr(obj, key, _MISSING)
    if value is _MISSING or value is None:
        if default is _MISSING:
            raise KeyError(f"no field {key!r}")
        return default
    return value


def _stamp_ns(obj: Any) -> int:
    """The header stamp [ns] (``header.stamp`` or ``timestamp``, in the spellings of the module docstring); 0 when
    the message carries none (the loader then counts it as a zero stamp)."""
    header = _get(obj, "header", None)
    stamp = _get(header, "stamp", None) if header is not None else None
    if stamp is None:
        stamp = _get(obj, "timestamp", None)
    if stamp is None:
        return 0
    for sec_key, ns_key in (("sec", "nanosec"), ("secs", "nsecs"), ("sec", "nsec"), ("seconds", "nanos")):
        sec = _get(stamp, sec_key, None)
        if sec is not None:
            return int(sec) * 1_000_000_000 + int(_get(stamp, ns_key, 0))
    return 0
