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
