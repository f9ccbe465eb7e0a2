"""Issue 11 item 9: every MCAP layout the mcap library's Writer offers reads back to the same samples, as a bare
file and as a rosbag2 directory with the metadata.yaml rosbag2 writes (noMessageIndex, noRepeatedSchemas and
noRepeatedChannels read as "0 messages" in a directory before the layout check)."""

from __future__ import annotations

import numpy as np
import pytest
from data_helpers import sine_messages, write_joint_state_bag
from mcap_helpers import LAYOUTS, as_rosbag2_dir, read_source, write_mcap

from deadzone_id_ros.data.bag import open_bag, read_joint_states
from deadzone_id_ros.data.dataset import load_dataset

FIELDS = ("stamp_ns", "log_ns", "position", "velocity", "effort")


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """The reference bag (rosbags' Writer), its series and its data set."""
    root = tmp_path_factory.mktemp("ref")
    ref = write_joint_state_bag(root / "ref", sine_messages(n=400, rate=200.0))
    with open_bag(ref) as h:
        series = read_joint_states(h, "/joint_states")
    assert len(series) == 400
    return read_source(ref), series, load_dataset([ref])


@pytest.mark.parametrize("container", ["bare", "rosbag2_dir"])
@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_every_mcap_layout_reads_back_the_same_samples(tmp_path, reference, layout, container):
    src, ref_series, ref_data = reference
    if container == "bare":
        bag = write_mcap(tmp_path / "bag.mcap", src, LAYOUTS[layout])
    else:
        bag = as_rosbag2_dir(tmp_path / "bag", src, LAYOUTS[layout])
    with open_bag(bag) as h:
        series = read_joint_states(h, "/joint_states")
        notes = list(h.notes)
        assert not h.damaged and not h.losses, (h.notes, h.losses)  # a valid layout is never called damaged
    assert series.joint_names == ref_series.joint_names
    for name in FIELDS:
        np.testing.assert_array_equal(getattr(series, name), getattr(ref_series, name), err_msg=f"{layout}: {name}")
    assert not [n for n in notes if "declares" in n], notes  # counts agree with metadata.yaml / the summary
    data = load_dataset([bag])
    assert len(data.episodes) == len(ref_data.episodes)
    for ep, ref_ep in zip(data.episodes, ref_data.episodes, strict=True):
        for name in ("t", "q", "dq", "ddq", "tau"):
            np.testing.assert_array_equal(getattr(ep, name), getattr(ref_ep, name), err_msg=f"{layout}: {name}")


def test_layouts_differ_as_named(tmp_path, reference):
    """The layouts are really different files: the summary parts they leave out are absent."""
    from mcap.reader import make_reader

    src = reference[0]

    def summary(layout):
        path = write_mcap(tmp_path / f"{layout}.mcap", src, LAYOUTS[layout])
        with path.open("rb") as f:
            return make_reader(f).get_summary()

    assert summary("no_summary") is None and summary("unchunked_no_summary") is None
    assert not summary("no_repeated_channels").channels and summary("chunked_zstd").channels
    assert not summary("no_repeated_schemas").schemas
    assert all(not ci.message_index_offsets for ci in summary("no_message_index").chunk_indexes)
    assert not summary("no_chunk_index").chunk_indexes and not summary("unchunked").chunk_indexes
    assert {ci.compression for ci in summary("chunked_lz4").chunk_indexes} == {"lz4"}
    assert len(summary("chunked_zstd").chunk_indexes) > 3


def _with_bad_chunk(tmp_path, src, name, chunk_size, which=0):
    """A finished MCAP (summary, footer) whose chunk ``which`` fails its CRC: one byte of its records flipped."""
    from mcap.reader import make_reader
    from mcap_helpers import CompressionType

    path = write_mcap(tmp_path / name, src, dict(compression=CompressionType.NONE), chunk_size=chunk_size)
    with path.open("rb") as f:
        chunks = sorted(make_reader(f).get_summary().chunk_indexes, key=lambda c: c.chunk_start_offset)
    data = bytearray(path.read_bytes())
    chunk = chunks[which]
    data[chunk.chunk_start_offset + chunk.chunk_length // 2] ^= 0xFF
    path.write_bytes(bytes(data))
    return path, len(chunks)


def test_an_mcap_whose_only_chunk_fails_its_crc_says_its_messages_were_lost(tmp_path, reference):
    """Issue 22 item 8: an MCAP with intact summary and footer whose only chunk fails its CRC used to be summed up
    as "no sensor_msgs/msg/JointState topic in bag"; the error now says the topic's messages were lost."""
    from deadzone_id_ros.errors import DataError

    bag, n_chunks = _with_bad_chunk(tmp_path, reference[0], "one_chunk.mcap", chunk_size=1 << 24)
    assert n_chunks == 1
    with pytest.raises(DataError, match=r"no sensor_msgs/msg/JointState topic in bag.*data was lost while reading"
                                        r".*unreadable chunk"):
        load_dataset([bag])


def test_a_bag_read_with_part_of_its_data_lost_says_so_in_its_verdict(tmp_path, reference):
    """Issue 22 item 8: one bad chunk of several: the rest is read, and inspect's one-line verdict says what was
    lost (it printed a bare TRAINABLE with the loss only in a note)."""
    from deadzone_id_ros.data.inspect import format_report, inspect_bag

    bag, n_chunks = _with_bad_chunk(tmp_path, reference[0], "chunks.mcap", chunk_size=4096, which=1)
    assert n_chunks > 2
    info = inspect_bag(bag)
    assert info["trainable"] and info["damaged"]
    verdict = format_report(info).splitlines()[-1]
    assert verdict.startswith("TRAINABLE: yes, but data was lost: ")
    assert "unreadable chunk(s) lost" in verdict and "of 400 message(s) lost" in verdict, verdict
    assert "RECOVERED from a damaged bag" in format_report(info).splitlines()[0]
