"""Builders for MCAP files in the layouts other writers produce (written with the ``mcap`` library in tmp_path).

A reference rosbag2 directory is written with rosbags' Writer (as rosbag2 writes it: ``metadata.yaml`` plus one
``.mcap``); its schema, channel metadata and messages are then rewritten with the mcap library's Writer in a chosen
layout, as a bare file or as a rosbag2 directory holding the reference's ``metadata.yaml``.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from mcap.reader import make_reader
from mcap.writer import CompressionType, IndexType, Writer

NO_SUMMARY = dict(index_types=IndexType.NONE, repeat_schemas=False, repeat_channels=False, use_statistics=False,
                  use_summary_offsets=False)
LAYOUTS: dict[str, dict[str, Any]] = {
    "chunked_zstd": {},
    "chunked_lz4": dict(compression=CompressionType.LZ4),
    "chunked_uncompressed": dict(compression=CompressionType.NONE),
    "no_message_index": dict(index_types=IndexType.ALL & ~IndexType.MESSAGE),
    "no_chunk_index": dict(index_types=IndexType.ALL & ~IndexType.CHUNK),
    "no_index": dict(index_types=IndexType.NONE),
    "no_repeated_schemas": dict(repeat_schemas=False),
    "no_repeated_channels": dict(repeat_channels=False),
    "no_repeated_schemas_or_channels": dict(repeat_schemas=False, repeat_channels=False),
    "no_statistics": dict(use_statistics=False),
    "no_summary_offsets": dict(use_summary_offsets=False),
    "no_crcs": dict(enable_crcs=False),
    "no_summary": NO_SUMMARY,
    "chunked_lz4_no_summary": dict(compression=CompressionType.LZ4, **NO_SUMMARY),
    "unchunked": dict(use_chunking=False),
    "unchunked_no_summary": dict(use_chunking=False, **NO_SUMMARY),
}
"""mcap.writer.Writer keyword arguments per layout (chunked or not, indexes, summary parts, compression)."""


@dataclass
class Source:
    """What a reference bag holds: schemas {name: (encoding, data)}, channels [(topic, schema name, metadata)],
    messages [(channel index, log time [ns], data)], the metadata.yaml text and the storage file's name."""

    schemas: dict[str, tuple[str, bytes]]
    channels: list[tuple[str, str, dict[str, str]]]
    messages: list[tuple[int, int, bytes]]
    metadata: str
    file_name: str


def read_source(bag_dir: Path) -> Source:
    """Collect schema, channels and messages of the rosbag2 MCAP directory ``bag_dir`` (one storage file)."""
    (mcap_file,) = bag_dir.glob("*.mcap")
    schemas, channels, messages = {}, [], []
    index: dict[int, int] = {}
    with mcap_file.open("rb") as f:
        for schema, channel, message in make_reader(f).iter_messages(log_time_order=False):
            schemas[schema.name] = (schema.encoding, schema.data)
            if channel.id not in index:
                index[channel.id] = len(channels)
                channels.append((channel.topic, schema.name, dict(channel.metadata)))
            messages.append((index[channel.id], message.log_time, message.data))
    return Source(schemas, channels, messages, (bag_dir / "metadata.yaml").read_text(), mcap_file.name)


def write_mcap(path: Path, src: Source, layout: dict[str, Any], messages: list | None = None,
               chunk_size: int = 4096) -> Path:
    """Write ``src``'s messages (or ``messages``) into ``path`` with the mcap library in ``layout``."""
    kw = dict(chunk_size=chunk_size)
    kw.update(layout)
    with path.open("wb") as f:
        w = Writer(f, **kw)
        w.start(profile="ros2", library="test")
        sid = {name: w.register_schema(name=name, encoding=enc, data=data) for name, (enc, data) in src.schemas.items()}
        cid = [w.register_channel(topic=t, message_encoding="cdr", schema_id=sid[s], metadata=md)
               for t, s, md in src.channels]
        for seq, (ch, t, data) in enumerate(src.messages if messages is None else messages):
            w.add_message(channel_id=cid[ch], log_time=t, data=data, publish_time=t, sequence=seq)
        w.finish()
    return path


def as_rosbag2_dir(out: Path, src: Source, layout: dict[str, Any], **kw: Any) -> Path:
    """A rosbag2 directory ``out``: the reference ``metadata.yaml`` plus the MCAP rewritten in ``layout``."""
    out.mkdir()
    (out / "metadata.yaml").write_text(src.metadata)
    write_mcap(out / src.file_name, src, layout, **kw)
    return out


def edit_metadata(bag_dir: Path, edit) -> None:
    """Apply ``edit(info)`` to ``bag_dir/metadata.yaml``'s rosbag2_bagfile_information and write it back."""
    doc = yaml.safe_load((bag_dir / "metadata.yaml").read_text())
    edit(doc["rosbag2_bagfile_information"])
    (bag_dir / "metadata.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))


def copy_tree(src: Path, dst: Path) -> Path:
    """Copy a bag directory (for variants of one reference bag)."""
    shutil.copytree(src, dst)
    return dst
