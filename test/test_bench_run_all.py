"""bench/run_all.py: every benchmark runs in a Python process of its own, so no state leaks from one to the next
(the live soak used to fail inside ``make bench`` after other benchmarks had used ROS in the same process)."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def run_all():
    spec = importlib.util.spec_from_file_location("bench_run_all", REPO / "bench" / "run_all.py")
    module = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    spec.loader.exec_module(module)
    return module


BENCH = '''
import os

LEAK = os.environ.get("BENCH_TEST_LEAK", "absent")


def run(quick=False):
    os.environ["BENCH_TEST_LEAK"] = "set by a benchmark"
    return {"pid": os.getpid(), "quick": float(quick), "leak_seen": float(LEAK != "absent")}
'''


def test_each_benchmark_runs_in_a_fresh_process(run_all, tmp_path):
    bench = tmp_path / "bench_fake.py"
    bench.write_text(BENCH)
    first = run_all.run_bench(bench, quick=True)
    second = run_all.run_bench(bench, quick=False)
    assert first["pid"] != os.getpid() and second["pid"] != os.getpid() and first["pid"] != second["pid"]
    assert (first["quick"], second["quick"]) == (1.0, 0.0)
    # what the first run left in its process (an environment variable) is not seen by the second
    assert second["leak_seen"] == 0.0
    assert "BENCH_TEST_LEAK" not in os.environ


def test_a_crashing_benchmark_is_named(run_all, tmp_path):
    bench = tmp_path / "bench_broken.py"
    bench.write_text("def run(quick=False):\n    raise IndexError('list index out of range')\n")
    with pytest.raises(RuntimeError, match=r"bench_broken\.py exited with status 1"):
        run_all.run_bench(bench, quick=True)
