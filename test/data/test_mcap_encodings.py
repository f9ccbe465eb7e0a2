"""Issue 39 item 9: an intact MCAP file is never called damaged, whatever profile and message encoding its
JointState is written in. Each file is written with the mcap library in tmp_path from one reference recording: ROS 2
CDR (ros2msg and ros2idl schemas), ROS 1 (profile ros1), JSON (jsonschema) and protobuf (a FileDescriptorSet schema);
each reads back to the reference's samples. An encoding that is not read (cbor, flatbuffer) is refused naming the
profile and the encoding."""

from __future__ import annotations

import json

import numpy as np
import pytest
from data_helpers import sine_messages, write_joint_state_bag
from mcap_helpers import read_source

from deadzone_id_ros.data.bag import open_bag, read_joint_states
from deadzone_id_ros.data.bag.format import JOINT_STATE_TYPE, typestore
from deadzone_id_ros.errors import DataError
from deadzone_id_ros.stamps import ns_to_stamp

FIELDS = ("stamp_ns", "log_ns", "position", "velocity", "effort")
ROS2IDL = """module sensor_msgs { module msg { struct JointState {
  std_msgs::msg::Header header; sequence<string> name; sequence<double> position; sequence<double> velocity;
  sequence<double> effort; }; }; };
================================================================================
IDL: std_msgs/msg/Header
module std_msgs { module msg { struct Header { builtin_interfaces::msg::Time stamp; string frame_id; }; }; };
================================================================================
IDL: builtin_interfaces/msg/Time
module builtin_interfaces { module msg { struct Time { int32 sec; uint32 nanosec; }; }; };
"""


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """The reference bag (rosbags' Writer, ROS 2 CDR), its raw messages and its decoded series."""
    ref = write_joint_state_bag(tmp_path_factory.mktemp("ref") / "ref", sine_messages(n=300, rate=200.0))
    with open_bag(ref) as h:
        series = read_joint_states(h, "/joint_states")
    assert len(series) == 300
    return read_source(ref), series


def _rows(series):
    for i in range(len(series)):
        sec, nanosec = ns_to_stamp(int(series.stamp_ns[i]))
        yield (int(series.log_ns[i]), sec, nanosec, list(series.joint_names), series.position[i].tolist(),
               series.velocity[i].tolist(), series.effort[i].tolist())


def _protobuf_schema() -> tuple[str, bytes, type]:
    """A JointState protobuf message (google.protobuf.Timestamp stamp) as a FileDescriptorSet, and its class."""
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory, timestamp_pb2

    fd = descriptor_pb2.FileDescriptorProto(name="robot/joint_state.proto", package="robot", syntax="proto3",
                                            dependency=["google/protobuf/timestamp.proto"])
    msg = fd.message_type.add(name="JointState")
    f = descriptor_pb2.FieldDescriptorProto
    msg.field.add(name="timestamp", number=1, type=f.TYPE_MESSAGE, type_name=".google.protobuf.Timestamp",
                  label=f.LABEL_OPTIONAL)
    msg.field.add(name="name", number=2, type=f.TYPE_STRING, label=f.LABEL_REPEATED)
    for number, field in enumerate(("position", "velocity", "effort"), start=3):
        msg.field.add(name=field, number=number, type=f.TYPE_DOUBLE, label=f.LABEL_REPEATED)
    ts_fd = descriptor_pb2.FileDescriptorProto()
    timestamp_pb2.DESCRIPTOR.CopyToProto(ts_fd)
    fds = descriptor_pb2.FileDescriptorSet(file=[ts_fd, fd])
    pool = descriptor_pool.DescriptorPool()
    for proto in fds.file:
        pool.Add(proto)
    return "robot.JointState", fds.SerializeToString(), message_factory.GetMessageClass(
        pool.FindMessageTypeByName("robot.JointState"))


def write_encoded(path, src, series, encoding: str):
    """Write ``series`` as an MCAP file ``path`` in ``encoding`` (profile, schema and message bytes as the MCAP
    specification's well-known encodings define them)."""
    from mcap.writer import Writer
    from rosbags.typesys import Stores, get_typestore

    ts2 = typestore()
    ros1 = get_typestore(Stores.ROS1_NOETIC)
    with path.open("wb") as f:
        w = Writer(f)
        if encoding in ("cdr_ros2msg", "cdr_ros2idl"):
            w.start(profile="ros2", library="test")
            enc, data = ("ros2idl", ROS2IDL.encode()) if encoding == "cdr_ros2idl" else src.schemas[JOINT_STATE_TYPE]
            sid = w.register_schema(name=JOINT_STATE_TYPE, encoding=enc, data=data)
            cid = w.register_channel(topic="/joint_states", message_encoding="cdr", schema_id=sid)
        elif encoding == "ros1":
            w.start(profile="ros1", library="test")
            sid = w.register_schema(name="sensor_msgs/JointState", encoding="ros1msg",
                                    data=ros1.generate_msgdef(JOINT_STATE_TYPE)[0].encode())
            cid = w.register_channel(topic="/joint_states", message_encoding="ros1", schema_id=sid)
        elif encoding == "json":
            w.start(profile="", library="test")
            sid = w.register_schema(name="sensor_msgs/msg/JointState", encoding="jsonschema",
                                    data=json.dumps({"type": "object"}).encode())
            cid = w.register_channel(topic="/joint_states", message_encoding="json", schema_id=sid)
        elif encoding == "protobuf":
            name, fds, proto_cls = _protobuf_schema()
            w.start(profile="", library="test")
            sid = w.register_schema(name=name, encoding="protobuf", data=fds)
            cid = w.register_channel(topic="/joint_states", message_encoding="protobuf", schema_id=sid)
        else:  # an encoding this product does not read
            w.start(profile="", library="test")
            sid = w.register_schema(name="sensor_msgs/msg/JointState", encoding="", data=b"")
            cid = w.register_channel(topic="/joint_states", message_encoding=encoding, schema_id=sid)
        for seq, (t, sec, nanosec, names, q, dq, tau) in enumerate(_rows(series)):
            arrays = {k: np.asarray(v, dtype=float) for k, v in (("position", q), ("velocity", dq), ("effort", tau))}
            if encoding == "cdr_ros2msg":
                data = src.messages[seq][2]
            elif encoding == "cdr_ros2idl":
                msg = ts2.types[JOINT_STATE_TYPE](header=ts2.types["std_msgs/msg/Header"](
                    stamp=ts2.types["builtin_interfaces/msg/Time"](sec=sec, nanosec=nanosec), frame_id=""),
                    name=names, **arrays)
                data = bytes(ts2.serialize_cdr(msg, JOINT_STATE_TYPE))
            elif encoding == "ros1":
                msg = ros1.types[JOINT_STATE_TYPE](header=ros1.types["std_msgs/msg/Header"](
                    seq=seq, stamp=ros1.types["builtin_interfaces/msg/Time"](sec=sec, nanosec=nanosec), frame_id=""),
                    name=names, **arrays)
                data = bytes(ros1.serialize_ros1(msg, JOINT_STATE_TYPE))
            elif encoding == "protobuf":
                pmsg = proto_cls(name=names, position=q, velocity=dq, effort=tau)
                pmsg.timestamp.seconds, pmsg.timestamp.nanos = sec, nanosec
                data = pmsg.SerializeToString()
            else:  # json, and the refused encodings (their bytes are never decoded)
                data = json.dumps({"header": {"stamp": {"sec": sec, "nanosec": nanosec}, "frame_id": ""},
                                   "name": names, "position": q, "velocity": dq, "effort": tau}).encode()
            w.add_message(channel_id=cid, log_time=t, data=data, publish_time=t, sequence=seq)
        w.finish()
    return path


@pytest.mark.parametrize("encoding", ["cdr_ros2msg", "cdr_ros2idl", "ros1", "json", "protobuf"])
def test_every_joint_state_encoding_reads_back_the_same_samples_and_is_not_called_damaged(tmp_path, reference,
                                                                                          encoding):
    src, ref = reference
    bag = write_encoded(tmp_path / f"{encoding}.mcap", src, ref, encoding)
    with open_bag(bag) as h:
        series = read_joint_states(h, "/joint_states")
        assert not h.damaged and not h.losses, (h.notes, h.losses)
        notes = " ".join(h.notes)
    assert "damaged" not in notes, notes
    assert series.joint_names == ref.joint_names
    for name in FIELDS:
        np.testing.assert_array_equal(getattr(series, name), getattr(ref, name), err_msg=f"{encoding}: {name}")
    if encoding not in ("cdr_ros2msg", "cdr_ros2idl"):
        assert f"converted to ROS 2 CDR: /joint_states ({encoding}, {len(ref)} message(s))" in notes, notes


@pytest.mark.parametrize("encoding", ["cbor", "flatbuffer"])
def test_an_encoding_that_is_not_read_is_refused_naming_profile_and_encoding(tmp_path, reference, encoding):
    src, ref = reference
    bag = write_encoded(tmp_path / f"{encoding}.mcap", src, ref, encoding)
    with pytest.raises(DataError, match=rf"topic /joint_states: JointState in MCAP profile '', message encoding "
                                        rf"'{encoding}' .* is not read; readable encodings are cdr \(ROS 2\) and "
                                        r"ros1, json, protobuf"):
        with open_bag(bag) as h:
            read_joint_states(h, "/joint_states")
