"""What a ROS 2 bag's files hold before they are read (core, no ROS): compressed files, MCAP layouts, declared counts.

- :func:`decompress_files`: rosbag2 ``compression_mode: file`` stores each storage file as one zstd frame
  (``bag_0.mcap.zstd``); it is decompressed, streaming, into a temporary directory the caller owns and cleans.
- :func:`mcap_layout_problem`: rosbags' indexed MCAP reader relies on a complete summary (schemas, channels,
  statistics, chunk indexes with message indexes). Valid MCAP files written without them (rosbag2's storage options
  ``noMessageIndex``, ``noRepeatedSchemas``, ``noRepeatedChannels``; unchunked or unindexed files from other
  writers) are read by streaming instead; this says which layout a file has. Read with the ``mcap`` library.
- :func:`declared_counts`: the message count per topic that ``metadata.yaml`` or the MCAP summaries declare, to be
  checked against what is actually read.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import yaml

from ...config import load_yaml
from .format import is_zstd, zstd_module

__all__ = ["declared_counts", "decompress_files", "load_metadata", "mcap_layout_problem"]

_SUFFIX = {"mcap": ".mcap", "sqlite3": ".db3"}


def decompress_files(files: list[tuple[Path, str]], tmpdir: Path) -> tuple[list[tuple[Path, str]], int]:
    """Decompress the zstd-compressed storage files of ``files`` into ``tmpdir`` (others are kept as they are).

    Args:
        files: ``(path, "mcap" | "sqlite3")`` as from :func:`~.format.storage_files`.
        tmpdir: an existing directory the caller removes afterwards.

    Returns:
        (the files to read, in the same order, now uncompressed; the number of files decompressed).

    Raises:
        DataError: a compressed file is corrupt (names the file).
    """
    from ...errors import DataError

    zstd = zstd_module()
    out: list[tuple[Path, str]] = []
    count = 0
    for path, kind in files:
        if not is_zstd(path):
            out.append((path, kind))
            continue
        stem = path.name.removesuffix(".zstd")
        target = tmpdir / (stem if stem.endswith(_SUFFIX[kind]) else stem + _SUFFIX[kind])
        try:
            with zstd.open(path, "rb") as src, target.open("wb") as dst:
                shutil.copyfileobj(src, dst, 1 << 20)
        except (OSError, EOFError, zstd.ZstdError) as err:
            raise DataError(f"{path}: cannot decompress zstd storage file: {err}") from err
        out.append((target, kind))
        count += 1
    return out, count


def load_metadata(directory: Path) -> tuple[dict[str, Any] | None, str | None]:
    """``(rosbag2_bagfile_information, None)`` from ``directory/metadata.yaml``; ``(None, why)`` if unusable."""
    path = directory / "metadata.yaml"
    if not path.is_file():
        return None, None
    try:
        doc = load_yaml(path.read_text())
        info = doc["rosbag2_bagfile_information"]
        if not isinstance(info, dict):
            raise TypeError("rosbag2_bagfile_information is not a mapping")
    except (OSError, yaml.YAMLError, KeyError, TypeError) as err:
        return None, f"metadata.yaml unreadable ({type(err).__name__}: {str(err).splitlines()[0][:200]})"
    return info, None


def mcap_layout_problem(path: Path) -> str | None:
    """None if rosbags' indexed reader reads every message of the MCAP file ``path``; else the layout that defeats it.

    Checked from the footer and summary only (no message is read): a summary with statistics, every channel with
    its schema, messages only inside chunks, a chunk index per chunk, and a message index whose entries add up to
    the statistics' count per channel.
    """
    from mcap.exceptions import McapError
    from mcap.reader import make_reader

    try:
        with path.open("rb") as f:
            summary = make_reader(f).get_summary()
    except (McapError, OSError, EOFError, ValueError, KeyError) as err:
        return f"no readable summary ({type(err).__name__})"
    if summary is None:
        return "no summary section"
    stats = summary.statistics
    if stats is None:
        return "no statistics in the summary"
    used = {cid for cid, n in stats.channel_message_counts.items() if n}
    if not used.issubset(summary.channels):
        return "channels not repeated in the summary (noRepeatedChannels)"
    if any(summary.channels[c].schema_id and summary.channels[c].schema_id not in summary.schemas for c in used):
        return "schemas not repeated in the summary (noRepeatedSchemas)"
    if stats.message_count and (not summary.chunk_indexes or stats.chunk_count != len(summary.chunk_indexes)):
        return "messages outside chunks or no chunk index"
    indexed: dict[int, int] = {}
    for ci in summary.chunk_indexes:
        if ci.uncompressed_size == 0 or ci.message_start_time > ci.message_end_time:
            continue  # a chunk without messages (only schema/channel records, or emptied by a flush) needs no index
        if not ci.message_index_offsets and ci.message_index_length == 0:
            return "no message index (noMessageIndex)"
        bounds = sorted((off, cid) for cid, off in ci.message_index_offsets.items())
        ends = [off for off, _ in bounds[1:]] + [ci.chunk_start_offset + ci.chunk_length + ci.message_index_length]
        for (off, cid), end in zip(bounds, ends, strict=True):
            indexed[cid] = indexed.get(cid, 0) + (end - off - 15) // 16  # as rosbags counts index entries
    if any(indexed.get(cid, 0) != n for cid, n in stats.channel_message_counts.items()):
        return "message index incomplete (its entries disagree with the statistics)"
    return None


def declared_counts(meta: dict[str, Any] | None, files: list[tuple[Path, str]]) -> tuple[dict[str, int], str]:
    """Messages per topic as the bag declares them: from ``metadata.yaml`` if given, else from the MCAP summaries.

    Returns ``({topic: count}, "metadata.yaml" | "MCAP summary")``; an empty dict when nothing is declared (SQLite
    without metadata, MCAP without summary statistics).
    """
    if meta is not None:
        out: dict[str, int] = {}
        try:
            for entry in meta.get("topics_with_message_count") or []:
                name = entry["topic_metadata"]["name"]
                out[name] = out.get(name, 0) + int(entry["message_count"])
        except (KeyError, TypeError, ValueError):
            return {}, "metadata.yaml"
        return out, "metadata.yaml"
    return _summary_counts(files), "MCAP summary"


def _summary_counts(files: list[tuple[Path, str]]) -> dict[str, int]:
    from mcap.exceptions import McapError
    from mcap.reader import make_reader

    out: dict[str, int] = {}
    for path, kind in files:
        if kind != "mcap":
            return {}
        try:
            with path.open("rb") as f:
                summary = make_reader(f).get_summary()
        except (McapError, OSError, EOFError, ValueError, KeyError):
            return {}
        if summary is None or summary.statistics is None:
            return {}
        for cid, n in summary.statistics.channel_message_counts.items():
            if cid not in summary.channels:
                return {}
            topic = summary.channels[cid].topic
            out[topic] = out.get(topic, 0) + int(n)
    return out
