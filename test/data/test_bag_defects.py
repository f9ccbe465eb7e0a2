"""Issue 11 items 8 and 9: compressed rosbag2 files and valid bags from other writers, each defect with a test that
fails without its fix (bags built in tmp_path)."""

from __future__ import annotations

import tempfile

import numpy as np
import pytest
from backports import zstd
from data_helpers import sine_messages, write_joint_state_bag
from mcap_helpers import LAYOUTS, as_rosbag2_dir, copy_tree, edit_metadata, read_source, write_mcap

from deadzone_id_ros.data.bag import open_bag, read_joint_states, typestore
from deadzone_id_ros.data.dataset import load_dataset
from deadzone_id_ros.errors import DataError

N = 300
SRV_SCHEMA = ("=" * 80 + "\nSRV: example_interfaces/srv/AddTwoInts\nint64 a\nint64 b\n---\nint64 sum\n").encode()
QOS = [{"history": "keep_last", "depth": 10, "reliability": "reliable", "durability": "volatile",
        "deadline": {"sec": 9223372036, "nsec": 854775807}, "lifespan": {"sec": 9223372036, "nsec": 854775807},
        "liveliness": "automatic", "liveliness_lease_duration": {"sec": 9223372036, "nsec": 854775807},
        "avoid_ros_namespace_conventions": False}]


@pytest.fixture
def ref(tmp_path):
    """(reference rosbag2 MCAP directory, its decoded /joint_states series)."""
    bag = write_joint_state_bag(tmp_path / "ref", sine_messages(n=N))
    with open_bag(bag) as h:
        return bag, read_joint_states(h, "/joint_states")


def _same(series, expect):
    assert len(series) == len(expect)
    for name in ("stamp_ns", "position", "velocity", "effort"):
        np.testing.assert_array_equal(getattr(series, name), getattr(expect, name))


def _read(bag):
    with open_bag(bag) as h:
        return read_joint_states(h, "/joint_states"), list(h.notes)


def _compressed_bag(tmp_path, storage):
    from rosbags.rosbag2 import CompressionFormat, CompressionMode, StoragePlugin, Writer

    from deadzone_id_ros.data.bag import MessageEncoders

    enc = MessageEncoders(["a", "b"])
    w = Writer(tmp_path / f"z_{storage}", version=9, storage_plugin=StoragePlugin[storage.upper()])
    w.set_compression(CompressionMode.FILE, CompressionFormat.ZSTD)
    with w:
        conn = w.add_connection("/joint_states", "sensor_msgs/msg/JointState", typestore=typestore())
        for m in sine_messages(n=N):
            w.write(conn, m["t"], enc.joint_state(m["t"], m["position"], m["velocity"], m["effort"]))
    return tmp_path / f"z_{storage}"


@pytest.mark.parametrize("with_metadata", [True, False])
@pytest.mark.parametrize("storage", ["mcap", "sqlite3"])
def test_file_compressed_bag_reads(tmp_path, ref, storage, with_metadata):
    """Item 8: rosbag2 compression_mode file (bag_0.mcap.zstd / .db3.zstd), with or without metadata.yaml."""
    bag = _compressed_bag(tmp_path, storage)
    assert [p.suffix for p in bag.iterdir() if p.name != "metadata.yaml"] == [".zstd"]
    if not with_metadata:
        (bag / "metadata.yaml").unlink()
    series, notes = _read(bag)
    _same(series, ref[1])
    assert any("decompressed 1 zstd-compressed storage file" in n for n in notes)
    assert any("recovered" in n for n in notes) == (not with_metadata)


@pytest.mark.parametrize("with_metadata", [True, False])
def test_split_compressed_bag_reads_and_cleans_its_temporary_files(tmp_path, ref, monkeypatch, with_metadata):
    """Item 8: a bag split across two zstd-compressed MCAP files; temporary files are removed, also on failure."""
    src = read_source(ref[0])
    bag = tmp_path / "split"
    bag.mkdir()
    names = []
    for k, part in enumerate((src.messages[: N // 2], src.messages[N // 2 :])):
        plain = write_mcap(tmp_path / f"split_{k}.mcap", src, {}, messages=part)
        names.append(f"split_{k}.mcap.zstd")
        (bag / names[-1]).write_bytes(zstd.compress(plain.read_bytes()))
    if with_metadata:
        (bag / "metadata.yaml").write_text(src.metadata)

        def compressed(info):
            info.update(compression_format="zstd", compression_mode="FILE", relative_file_paths=names)
            info["files"] = [dict(info["files"][0], path=n) for n in names]

        edit_metadata(bag, compressed)
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    series, notes = _read(bag)
    _same(series, ref[1])
    assert any("decompressed 2 zstd-compressed" in n for n in notes)
    assert not [n for n in notes if "declares" in n]
    assert list(scratch.iterdir()) == []
    (bag / names[1]).write_bytes((bag / names[1]).read_bytes()[:-200])  # a truncated second file
    with pytest.raises(DataError, match="split_1.mcap.zstd"):
        _read(bag)
    assert list(scratch.iterdir()) == []


def test_message_compressed_bag_reads(tmp_path, ref):
    """rosbag2 compression_mode message: every message zstd-compressed on its own."""
    from rosbags.rosbag2 import CompressionFormat, CompressionMode, StoragePlugin, Writer

    src = read_source(ref[0])
    w = Writer(tmp_path / "msgz", version=9, storage_plugin=StoragePlugin.MCAP)
    w.set_compression(CompressionMode.MESSAGE, CompressionFormat.ZSTD)
    with w:
        conn = w.add_connection("/joint_states", "sensor_msgs/msg/JointState", typestore=typestore())
        for _, t, data in src.messages:
            w.write(conn, t, data)
    _same(_read(tmp_path / "msgz")[0], ref[1])


@pytest.mark.parametrize("storage", ["SQLITE3", "MCAP"])
def test_message_compressed_bag_without_metadata_keeps_every_message(tmp_path, ref, storage):
    """Issue 22 item 1 (rosbag2 issues 1619, 1623): a bag recorded with ``--compression-mode message`` whose
    metadata.yaml was lost. It used to be read as damaged with 0 usable messages ("Invalid or unsupported CDR
    encapsulation"), compression never named; every intact message is kept and the note names the compression."""
    from rosbags.rosbag2 import CompressionFormat, CompressionMode, StoragePlugin, Writer

    src = read_source(ref[0])
    bag = tmp_path / "msgz"
    w = Writer(bag, version=9, storage_plugin=StoragePlugin[storage])
    w.set_compression(CompressionMode.MESSAGE, CompressionFormat.ZSTD)
    with w:
        conn = w.add_connection("/joint_states", "sensor_msgs/msg/JointState", typestore=typestore())
        for _, t, data in src.messages:
            w.write(conn, t, data)
    (bag / "metadata.yaml").unlink()
    series, notes = _read(bag)
    _same(series, ref[1])
    assert any(f"{N} message(s) were zstd-compressed one by one (rosbag2 compression_mode: message" in note
               for note in notes), notes


def test_unindexed_mcap_with_log_times_out_of_order(tmp_path, ref):
    """Item 9: no chunk index and log times out of order: was a traceback while reading; now read in time order."""
    src = read_source(ref[0])
    shuffled = list(src.messages)
    for k in range(0, N - 1, 7):
        shuffled[k], shuffled[k + 1] = shuffled[k + 1], shuffled[k]
    for name in ("unchunked", "no_chunk_index", "unchunked_no_summary"):
        bag = as_rosbag2_dir(tmp_path / name, src, LAYOUTS[name], messages=shuffled)
        _same(_read(bag)[0], ref[1])


def test_metadata_qos_text_differing_from_storage_loses_nothing(tmp_path, ref):
    """Item 9: a metadata.yaml whose QoS text differs from the storage's used to drop the topic ("0 msgs")."""
    bag = copy_tree(ref[0], tmp_path / "qos")

    def qos(info):
        info["topics_with_message_count"][0]["topic_metadata"]["offered_qos_profiles"] = QOS

    edit_metadata(bag, qos)
    series, notes = _read(bag)
    _same(series, ref[1])
    assert not [n for n in notes if "declares" in n]


@pytest.mark.parametrize("container", ["rosbag2_dir", "bare"])
def test_service_event_topic_loses_only_that_topic(tmp_path, ref, container):
    """Item 9: a service-event topic (rosbag2 stores the raw .srv text as its schema) used to refuse the whole bag."""
    src = read_source(ref[0])
    src.schemas["example_interfaces/srv/AddTwoInts_Event"] = ("ros2msg", SRV_SCHEMA)
    src.channels.append(("/add_two_ints/_service_event", "example_interfaces/srv/AddTwoInts_Event", {}))
    src.messages += [(1, src.messages[10 * k][1] + 1, b"\x00\x01\x00\x00" + bytes(60)) for k in range(3)]
    src.messages.sort(key=lambda m: m[1])
    if container == "bare":
        bag = write_mcap(tmp_path / "svc.mcap", src, {})
    else:
        bag = as_rosbag2_dir(tmp_path / "svc", src, {})
        edit_metadata(bag, lambda info: info["topics_with_message_count"].append(
            {"message_count": 3, "topic_metadata": {"name": "/add_two_ints/_service_event",
                                                    "type": "example_interfaces/srv/AddTwoInts_Event",
                                                    "serialization_format": "cdr", "offered_qos_profiles": []}}))
    series, notes = _read(bag)
    _same(series, ref[1])
    text = " ".join(notes)
    assert "/add_two_ints/_service_event (example_interfaces/srv/AddTwoInts_Event): 3 message(s)" in text
    assert all(len(n.splitlines()) == 1 for n in notes)


@pytest.mark.parametrize("container", ["rosbag2_dir", "bare"])
def test_corrupt_chunk_loses_only_its_own_messages(tmp_path, ref, container):
    """Item 9: a chunk failing its CRC, found while reading (not opening), loses only its messages, named; the rest
    of the bag is read and the count that disagrees with metadata.yaml is reported. Was a raw ReaderError."""
    from mcap.reader import make_reader

    src = read_source(ref[0])
    layout = dict(LAYOUTS["chunked_uncompressed"], enable_crcs=True)
    if container == "bare":
        mcap_file = write_mcap(tmp_path / "crc.mcap", src, layout)
        bag = mcap_file
    else:
        bag = as_rosbag2_dir(tmp_path / "crc", src, layout)
        (mcap_file,) = bag.glob("*.mcap")
    with mcap_file.open("rb") as f:
        chunks = make_reader(f).get_summary().chunk_indexes
    third = chunks[2]
    lost = {int(t) for _, t, _ in src.messages if third.message_start_time <= t <= third.message_end_time}
    data = bytearray(mcap_file.read_bytes())
    data[third.chunk_start_offset + third.chunk_length - 20] ^= 0xFF  # a flipped bit inside the third chunk's data
    mcap_file.write_bytes(bytes(data))
    series, notes = _read(bag)
    keep = ~np.isin(ref[1].log_ns, list(lost))
    assert 0 < len(lost) < N and len(series) == int(keep.sum())
    np.testing.assert_array_equal(series.position, ref[1].position[keep])
    text = " ".join(notes)
    assert "1 unreadable chunk(s) lost with their messages" in text and "CRC" in text
    assert f"read {N - len(lost)} message(s), but the" in text and f"declares {N}" in text


def test_error_while_reading_messages_names_bag_topic_and_index(tmp_path):
    """Item 9: where a bag cannot be rebuilt (ROS 1), a read error is a one-line DataError naming bag, topic and the
    message index. Was a raw exception from the decompressor."""
    from rosbags.rosbag1 import Writer

    from deadzone_id_ros.data.bag import MessageEncoders

    enc = MessageEncoders(["a", "b"])
    ts = typestore()
    bag = tmp_path / "ros1.bag"
    w = Writer(bag)
    w.set_compression(Writer.CompressionFormat.BZ2)
    w.chunk_threshold = 2000  # several chunks
    with w:
        conn = w.add_connection("/joint_states", "sensor_msgs/msg/JointState", typestore=ts)
        for m in sine_messages(n=N):
            msg = ts.deserialize_cdr(enc.joint_state(m["t"], m["position"], m["velocity"], m["effort"]),
                                     "sensor_msgs/msg/JointState")
            w.write(conn, m["t"], ts.serialize_ros1(msg, "sensor_msgs/msg/JointState"))
    data = bytearray(bag.read_bytes())
    second = data.index(b"BZh9", data.index(b"BZh9") + 4)  # the bz2 stream of the second chunk
    data[second + 40 : second + 60] = bytes(20)
    bag.write_bytes(bytes(data))
    with open_bag(bag) as h:
        with pytest.raises(DataError, match=r"ros1.bag: topic /joint_states: cannot read message (\d+)") as err:
            read_joint_states(h, "/joint_states")
    assert "\n" not in str(err.value)


def test_message_count_disagreeing_with_metadata_is_reported(tmp_path, ref):
    """Item 9: metadata.yaml declaring other counts than the storage holds is reported (handle notes, dataset)."""
    bag = copy_tree(ref[0], tmp_path / "count")
    edit_metadata(bag, lambda info: info["topics_with_message_count"][0].update(message_count=N + 5))
    series, notes = _read(bag)
    _same(series, ref[1])
    assert f"topic /joint_states: read {N} message(s), but the metadata.yaml declares {N + 5}" in notes
    warnings = load_dataset([bag]).report.warnings
    assert any(f"declares {N + 5}" in w for w in warnings)
