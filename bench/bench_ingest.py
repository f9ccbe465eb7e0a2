"""Benchmark: bag -> name-mapped JointState arrays throughput (messages per second), MCAP and sqlite3.

Writes a synthetic 1 kHz, 3-joint recording (JointState only, like a /joint_states topic) with rosbags' Writer into
a temporary directory, then times :func:`deadzone_id_ros.data.bag.read_joint_states` (open + read + decode + map
by name) and the full :func:`deadzone_id_ros.data.dataset.load_dataset` (plus cleaning, resampling, Savitzky–Golay).
Run: ``python bench/bench_ingest.py [--quick]``. Keys: bag_ingest_msgs_per_s_mcap, bag_ingest_msgs_per_s_sqlite3.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np

from deadzone_id_ros.data.bag import open_bag, read_joint_states, write_recording
from deadzone_id_ros.data.dataset import load_dataset
from deadzone_id_ros.data.types import Recording


def _recording(n: int) -> Recording:
    t = np.arange(n) * 1e-3
    q = np.stack([np.sin(t * (1 + k)) for k in range(3)], axis=1)
    dq = np.gradient(q, 1e-3, axis=0)
    t_ns = 1_700_000_000_000_000_000 + np.arange(n, dtype=np.int64) * 1_000_000
    return Recording(("joint1", "joint2", "joint3"), t_ns, q, dq, 0.5 * q + 0.1)


def _best_of(fn, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def run(quick: bool = False) -> dict[str, float]:
    """Return {"bag_ingest_msgs_per_s_mcap": ..., "bag_ingest_msgs_per_s_sqlite3": ...} [JointState msgs/s]."""
    n = 30_000 if quick else 200_000
    repeats = 1 if quick else 3
    rec = _recording(n)
    out: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="bench_ingest_") as tmp:
        for storage in ("mcap", "sqlite3"):
            bag = write_recording(rec, Path(tmp) / storage, storage=storage)

            def ingest() -> None:
                with open_bag(bag) as h:
                    s = read_joint_states(h, "/joint_states")
                assert len(s) == n

            secs = _best_of(ingest, repeats)
            full = _best_of(lambda: load_dataset([bag]), 1)
            out[f"bag_ingest_msgs_per_s_{storage}"] = n / secs
            print(f"{storage:8s}: {n} JointState msgs -> arrays in {secs:.3f} s = {n / secs:,.0f} msg/s; "
                  f"full load_dataset {full:.3f} s = {n / full:,.0f} msg/s")
    return out


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller bag, one repeat")
    print(run(parser.parse_args().quick))
