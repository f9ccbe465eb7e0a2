"""Bag writing/reading: standard rosbag2 output readable by rosbags and the mcap library, recovery of damaged bags."""

from __future__ import annotations

import numpy as np
import pytest
import yaml
from conftest import SHARED_REAL as REAL
from data_helpers import make_recording, sine_messages, write_joint_state_bag

from deadzone_id_ros.data.bag import (
    MessageEncoders,
    detect_format,
    open_bag,
    read_joint_states,
    read_recording,
    recover_bag,
    typestore,
    write_recording,
)
from deadzone_id_ros.errors import DataError


@pytest.mark.parametrize("storage", ["mcap", "sqlite3"])
def test_write_recording_round_trip(tmp_path, storage):
    rec = make_recording(n=500)
    out = write_recording(rec, tmp_path / "bag", storage=storage)
    assert detect_format(out) == storage
    meta = yaml.safe_load((out / "metadata.yaml").read_text())["rosbag2_bagfile_information"]
    assert meta["storage_identifier"] == storage
    counts = {t["topic_metadata"]["name"]: t["message_count"] for t in meta["topics_with_message_count"]}
    assert counts == {
        "/joint_states": 500,
        "/effort_controller/commands": 500,
        "/feedforward_controller/reference": 500,
    }
    ep = yaml.safe_load((out / "episode.yaml").read_text())
    assert ep["robot"] == "test_arm" and ep["joints"] == ["joint1", "joint2", "joint3"]
    assert ep["start_time_ns"] == int(rec.state_t_ns[0]) and ep["stop_time_ns"] == int(rec.state_t_ns[-1])
    back = read_recording(out)
    assert back.joint_names == rec.joint_names
    np.testing.assert_array_equal(back.state_t_ns, rec.state_t_ns)
    for name in ("position", "velocity", "effort", "command", "reference_position", "reference_acceleration"):
        np.testing.assert_array_equal(getattr(back, name), getattr(rec, name))
    np.testing.assert_array_equal(back.command_t_ns, rec.command_t_ns)


def test_mcap_output_opens_with_mcap_library(tmp_path):
    from mcap.reader import make_reader

    rec = make_recording(n=300)
    out = write_recording(rec, tmp_path / "bag")
    (mcap_file,) = out.glob("*.mcap")
    with mcap_file.open("rb") as f:
        reader = make_reader(f)
        summary = reader.get_summary()
        topics = {ch.topic: ch.message_encoding for ch in summary.channels.values()}
        schemas = {s.name for s in summary.schemas.values()}
        n = sum(1 for _ in reader.iter_messages(topics=["/joint_states"]))
    assert topics == {"/joint_states": "cdr", "/effort_controller/commands": "cdr",
                      "/feedforward_controller/reference": "cdr"}
    assert schemas == {"sensor_msgs/msg/JointState", "std_msgs/msg/Float64MultiArray",
                       "trajectory_msgs/msg/JointTrajectory"}
    assert n == 300


def test_write_refuses_existing_dir_and_bad_storage(tmp_path):
    rec = make_recording(n=10)
    (tmp_path / "x").mkdir()
    with pytest.raises(DataError, match="exists already"):
        write_recording(rec, tmp_path / "x")
    with pytest.raises(DataError, match="storage = 'rosbag'"):
        write_recording(rec, tmp_path / "y", storage="rosbag")


def test_write_rejects_bad_command_shape(tmp_path):
    rec = make_recording(n=10)
    rec.command = rec.command[:, :2]
    with pytest.raises(DataError, match=r"Recording.command must have shape"):
        write_recording(rec, tmp_path / "bag")


@pytest.mark.parametrize("storage", ["mcap", "sqlite3"])
def test_bulk_decoder_matches_rosbags(tmp_path, storage):
    """The numpy fast path gives exactly what rosbags' deserializer gives, also with changing names/lengths."""
    msgs = sine_messages(n=50, names=("a", "b"))
    msgs[10]["name"] = ["b", "a"]  # order change: other bytes in the name block
    msgs[20]["effort"] = []  # another length
    msgs[30]["name"] = ["a", "b", "c"]
    msgs[30]["position"] = [1.0, 2.0, 3.0]
    msgs[30]["velocity"] = []
    msgs[30]["effort"] = []
    bag = write_joint_state_bag(tmp_path / "b", msgs, storage=storage)
    with open_bag(bag) as h:
        s = read_joint_states(h, "/joint_states")
        raw = [(t, h.reader.deserialize(r, c.msgtype)) for c, t, r in h.reader.messages()]
    assert s.joint_names == ("a", "b", "c")
    for row, (_, msg) in enumerate(raw):
        for fname in ("position", "velocity", "effort"):
            vals = np.asarray(getattr(msg, fname))
            for k, n in enumerate(msg.name):
                col = s.joint_names.index(n)
                expect = vals[k] if vals.size else np.nan
                np.testing.assert_equal(getattr(s, fname)[row, col], expect)
        assert s.stamp_ns[row] == msg.header.stamp.sec * 10**9 + msg.header.stamp.nanosec
    assert s.report["joint_order_changes"] == 2  # a,b -> b,a -> a,b


def test_ros1_bag_detected_by_content_not_name(tmp_path):
    src = REAL / "kuka_lwr4_fri.bag"
    if not src.exists():
        pytest.skip(f"real data folder {REAL} is absent")
    renamed = tmp_path / "kuka.data"
    renamed.symlink_to(src)
    assert detect_format(renamed) == "ros1"
    with open_bag(renamed) as h:
        assert {c.topic for c in h.reader.connections} == {"/joint_states"}


def test_detect_format_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="does not exist"):
        detect_format(tmp_path / "nope")
    (tmp_path / "text.bag").write_text("hello")
    with pytest.raises(DataError, match="not a bag"):
        detect_format(tmp_path / "text.bag")
    (tmp_path / "empty").mkdir()
    with pytest.raises(DataError, match="no .mcap or .db3 storage file"):
        detect_format(tmp_path / "empty")


@pytest.mark.parametrize("storage", ["mcap", "sqlite3"])
def test_bag_without_metadata_is_recovered(tmp_path, storage):
    rec = make_recording(n=400)
    out = write_recording(rec, tmp_path / "bag", storage=storage)
    (out / "metadata.yaml").unlink()
    with open_bag(out) as h:
        assert h.recovered and "recovered 1200 message(s)" in h.notes[0]
        s = read_joint_states(h, "/joint_states")
    assert len(s) == 400
    np.testing.assert_array_equal(s.position, rec.position)


def test_mcap_without_summary_is_recovered(tmp_path):
    """A killed recorder leaves an MCAP with flushed chunks but no summary/footer: intact chunks are kept."""
    from rosbags.rosbag2 import StoragePlugin, Writer

    rec = make_recording(n=3000, with_command=False, with_reference=False)
    enc = MessageEncoders(rec.joint_names)

    w = Writer(tmp_path / "killed", version=9, storage_plugin=StoragePlugin.MCAP)
    w.open()
    conn = w.add_connection("/joint_states", "sensor_msgs/msg/JointState", typestore=typestore())
    sizes = []
    for i in range(3000):
        t = int(rec.state_t_ns[i])
        w.write(conn, t, enc.joint_state(t, rec.position[i], rec.velocity[i], rec.effort[i]))
        if i % 1000 == 999:
            w.storage.close_chunk()  # what the recorder does every second
            w.storage.bio.flush()
            sizes.append(w.storage.bio.tell())
    w.storage.bio.close()
    # simulate kill -9 while the third chunk was being written: it is cut in the middle; no summary, no footer
    (mcap_file,) = (tmp_path / "killed").glob("*.mcap")
    with mcap_file.open("r+b") as f:
        f.truncate((sizes[1] + sizes[2]) // 2)
    assert not (tmp_path / "killed" / "metadata.yaml").exists()
    text = recover_bag(tmp_path / "killed", tmp_path / "fixed")
    assert "MCAP ends early" in text and "recovered 2000 message(s)" in text
    with open_bag(tmp_path / "killed") as h:
        assert h.recovered
        s = read_joint_states(h, "/joint_states")
    assert len(s) == 2000  # the two flushed chunks; the half-written third is lost (bounded loss)
    np.testing.assert_array_equal(s.position, rec.position[:2000])


def test_recover_bag_into_dir_gives_standard_bag(tmp_path):
    from rosbags.highlevel import AnyReader

    rec = make_recording(n=100)
    out = write_recording(rec, tmp_path / "bag", storage="sqlite3")
    (out / "metadata.yaml").unlink()
    text = recover_bag(out, tmp_path / "fixed", storage="mcap")
    assert "recovered 300 message(s)" in text
    assert (tmp_path / "fixed" / "metadata.yaml").is_file()
    with AnyReader([tmp_path / "fixed"]) as r:
        assert r.message_count == 300


def test_recover_rejects_ros1_and_junk(tmp_path):
    src = REAL / "kuka_lwr4_fri.bag"
    if src.exists():
        with pytest.raises(DataError, match="is a ROS 1 bag"):
            recover_bag(src, tmp_path / "out")
    (tmp_path / "junk").mkdir()
    (tmp_path / "junk" / "x.db3").write_bytes(b"SQLite format 3\x00" + b"\x00" * 100)
    with pytest.raises(DataError, match=r"x.db3|database"):
        with open_bag(tmp_path / "junk"):
            pass


def test_read_joint_states_topic_errors(tmp_path):
    bag = write_joint_state_bag(tmp_path / "b", sine_messages(10))
    with open_bag(bag) as h:
        with pytest.raises(DataError, match="topic /nope not in bag"):
            read_joint_states(h, "/nope")


def test_corrupt_message_is_counted_not_a_traceback(tmp_path):
    def corrupt(w, ts):
        conn = next(c for c in w.connections if c.topic == "/joint_states")
        w.write(conn, 1_800_000_000_000_000_000, b"\x00\x01\x00\x00" + b"\xff" * 10)

    bag = write_joint_state_bag(tmp_path / "b", sine_messages(30), extra=corrupt)
    with open_bag(bag) as h:
        s = read_joint_states(h, "/joint_states")
    assert len(s) == 30 and s.report["messages"] == 31
    ((reason, info),) = s.report["dropped"].items()
    assert reason.startswith("undecodable message") and info == {"count": 1, "first_message": 30}
