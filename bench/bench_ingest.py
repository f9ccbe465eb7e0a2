"""Benchmark: bag -> training data through ``load_dataset`` as a user calls it, beside the bare rosbags reader.

Writes a synthetic 1 kHz, 3-joint recording (/joint_states and the effort commands, like a live recording) with
rosbags' Writer (:func:`deadzone_id_ros.data.bag.write_recording`), MCAP and sqlite3, then for each storage:
- drops the bag's files from the page cache (fsync, then ``posix_fadvise(DONTNEED)``), so the read starts from disk
  as for a recording made earlier, and times ONE call of :func:`deadzone_id_ros.data.dataset.load_dataset` (open,
  read, decode, map by name, clean, resample, Savitzky–Golay, episodes): ``bag_ingest_msgs_per_s_<storage>``
  [/joint_states messages per second];
- drops the cache again and times rosbags' ``AnyReader`` deserializing every /joint_states message of the same bag
  (``raw_rosbags_msgs_per_s_<storage>``); ``ingest_ratio_raw_rosbags`` = load_dataset / raw for MCAP
  (``ingest_ratio_raw_rosbags_sqlite3`` for sqlite3). A ratio above 1 means load_dataset is faster than
  deserializing each message with rosbags.
One run each, no best-of; the warm (page-cached) load_dataset time is printed too.
Run: ``python bench/bench_ingest.py [--quick]``.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

import numpy as np

from deadzone_id_ros.data.bag import write_recording
from deadzone_id_ros.data.dataset import load_dataset
from deadzone_id_ros.data.types import Recording

TOPIC = "/joint_states"


def _recording(n: int) -> Recording:
    t = np.arange(n) * 1e-3
    q = np.stack([np.sin(t * (1 + k)) for k in range(3)], axis=1)
    dq = np.gradient(q, 1e-3, axis=0)
    t_ns = 1_700_000_000_000_000_000 + np.arange(n, dtype=np.int64) * 1_000_000
    return Recording(("joint1", "joint2", "joint3"), t_ns, q, dq, 0.5 * q + 0.1)


def drop_page_cache(bag: Path) -> None:
    """Write back and evict every file of ``bag`` from the page cache (no root needed for one's own files)."""
    for f in ([bag] if bag.is_file() else sorted(p for p in bag.rglob("*") if p.is_file())):
        fd = os.open(f, os.O_RDONLY)
        try:
            os.fsync(fd)
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)


def raw_rosbags(bag: Path) -> int:
    """Deserialize every /joint_states message of ``bag`` with rosbags' AnyReader; returns the count."""
    from rosbags.highlevel import AnyReader

    count = 0
    with AnyReader([bag]) as reader:
        conns = [c for c in reader.connections if c.topic == TOPIC]
        for conn, _t, raw in reader.messages(connections=conns):
            reader.deserialize(raw, conn.msgtype)
            count += 1
    return count


def _timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def run(quick: bool = False) -> dict[str, float]:
    """Return bag_ingest_msgs_per_s_{mcap,sqlite3}, raw_rosbags_msgs_per_s_{mcap,sqlite3} and the ratios."""
    n = 30_000 if quick else 200_000
    rec = _recording(n)
    out: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="bench_ingest_") as tmp:
        for storage in ("mcap", "sqlite3"):
            bag = write_recording(rec, Path(tmp) / storage, storage=storage)
            drop_page_cache(bag)
            cold = _timed(lambda bag=bag: load_dataset([bag]))
            warm = _timed(lambda bag=bag: load_dataset([bag]))
            drop_page_cache(bag)
            counted = []
            raw = _timed(lambda bag=bag, counted=counted: counted.append(raw_rosbags(bag)))
            assert counted[0] == n, f"{bag}: {counted[0]} {TOPIC} messages, expected {n}"
            out[f"bag_ingest_msgs_per_s_{storage}"] = n / cold
            out[f"raw_rosbags_msgs_per_s_{storage}"] = n / raw
            key = "ingest_ratio_raw_rosbags" + ("" if storage == "mcap" else f"_{storage}")
            out[key] = raw / cold
            print(f"{storage:8s}: load_dataset on {n} msgs from a cold cache {cold:.3f} s = {n / cold:,.0f} msg/s "
                  f"(warm {n / warm:,.0f} msg/s); rosbags AnyReader deserialize {n / raw:,.0f} msg/s; "
                  f"ratio {raw / cold:.2f}")
    return out


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller bag")
    print(run(parser.parse_args().quick))
