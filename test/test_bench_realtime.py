"""bench/bench_realtime.py's standard load: 4 busy processes pinned to at most 2 CPUs, gone when the block ends (also
when it ends by an exception), and unable to outlive their own deadline."""

from __future__ import annotations

import importlib.util
import os
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def bench():
    sys.path.insert(0, str(REPO / "bench"))
    try:
        spec = importlib.util.spec_from_file_location("bench_realtime", REPO / "bench" / "bench_realtime.py")
        module = importlib.util.module_from_spec(spec)
        assert spec.loader is not None
        spec.loader.exec_module(module)
        yield module
    finally:
        sys.path.remove(str(REPO / "bench"))


def _children() -> list[int]:
    """PIDs of this process's children that run the busy loop."""
    out = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            stat = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if int(stat[1]) == os.getpid() and b"sched_setaffinity" in cmdline and stat[0] != "Z":
            out.append(int(pid))
    return out


def test_the_load_spins_four_processes_on_two_cpus_and_ends_with_the_block(bench):
    with pytest.raises(RuntimeError, match="stop"):
        with bench.busy_load(4, 60.0):
            deadline = time.monotonic() + 10
            while len(pids := _children()) < 4 and time.monotonic() < deadline:
                time.sleep(0.05)
            assert len(pids) == 4
            allowed = sorted(os.sched_getaffinity(0))[:2]

            def pinned() -> bool:  # each pins itself first thing after the interpreter starts
                return all(sorted(os.sched_getaffinity(p)) == allowed for p in pids)
            while not pinned() and time.monotonic() < deadline:
                time.sleep(0.05)
            assert pinned()
            raise RuntimeError("stop")
    assert _children() == []


def test_a_busy_process_ends_by_itself_at_its_deadline(bench):
    import subprocess

    t0 = time.monotonic()
    done = subprocess.run([sys.executable, "-c", bench.BUSY, "0", "0.5"], timeout=30)
    assert done.returncode == 0 and 0.4 < time.monotonic() - t0 < 20
