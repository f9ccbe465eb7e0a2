"""bench/run_all.py: every benchmark runs in a Python process of its own, so no state leaks from one to the next
(the live soak used to fail inside ``make bench`` after other benchmarks had used ROS in the same process); the
generated tables of the docs pages (docs/benchmarks.md, docs/results.md) are what their JSON files render to."""

from __future__ import annotations

import importlib.util
import json
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


def _load_script(name: str):
    spec = importlib.util.spec_from_file_location(f"bench_{name}", REPO / "bench" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    spec.loader.exec_module(module)
    return module


def test_the_docs_benchmark_table_is_the_one_results_json_gives(run_all):
    # bench/run_all.py writes its table into docs/benchmarks.md; the page must hold what results.json renders to
    page = (REPO / "docs" / "benchmarks.md").read_text()
    doc = json.loads((REPO / "bench" / "results.json").read_text())
    assert run_all.DOC_PAGE == REPO / "docs" / "benchmarks.md"
    assert run_all.bench_table(doc) in page, "docs/benchmarks.md is stale: run python bench/run_all.py --table-only"


def test_write_table_replaces_only_the_block_between_the_markers(run_all, tmp_path):
    page = tmp_path / "page.md"
    page.write_text(f"# Title\n\nbefore\n\n{run_all.BEGIN}\nold table\n{run_all.END}\n\nafter\n")
    doc = {"date": "2026-01-01", "git": {"commit": "0123456789abcdef"}, "machine": {"cpus": 2, "cpu": "cpu",
           "python": "3.11"}, "load_before": 1.0, "load_after": 2.0, "train_samples_per_s": 200000.0}
    run_all.write_table(page, doc)
    text = page.read_text()
    assert text == f"# Title\n\nbefore\n\n{run_all.bench_table(doc)}\n\nafter\n"
    assert "| train_samples_per_s | 2e+05 | samples/s | >= 150000 | yes |" in text and "old table" not in text
    page.write_text("# Title\n\nno markers\n")
    with pytest.raises(ValueError, match=r"page\.md: no '<!-- bench:begin"):
        run_all.write_table(page, doc)


def test_the_docs_arms_table_is_the_one_arms_results_json_gives():
    # bench/arms_table.py writes its table into docs/results.md from the run saved in bench/arms_results.json
    arms = _load_script("arms_table")
    rows = json.loads((REPO / "bench" / "arms_results.json").read_text())["rows"]
    page = (REPO / "docs" / "results.md").read_text()
    assert arms.DOC_PAGE == REPO / "docs" / "results.md"
    assert f"{arms.BEGIN}\n{arms.table(rows)}\n{arms.END}" in page, \
        "docs/results.md is stale: run python bench/arms_table.py --from-json bench/arms_results.json"


def test_only_merges_one_benchmark_into_the_existing_results(run_all, tmp_path):
    # --only: the named benchmark's keys replace the file's, every other key and the full run's date stay, and the
    # partial run is recorded and named under the regenerated table
    (tmp_path / "bench_fake.py").write_text("def run(quick=False):\n    return {'train_samples_per_s': 123.0, "
                                            "'new_key': float(quick)}\n")
    (tmp_path / "bench_other.py").write_text("def run(quick=False):\n    raise AssertionError('must not run')\n")
    out = tmp_path / "results.json"
    full = {"date": "2026-01-01", "git": {"commit": "0123456789abcdef"}, "machine": {"cpus": 2}, "quick": False,
            "load_before": 1.0, "load_after": 2.0, "failed": [], "train_samples_per_s": 200000.0,
            "sim_realtime_factor": 60.0}
    out.write_text(json.dumps(full))
    page = tmp_path / "page.md"
    page.write_text(f"{run_all.BEGIN}\nold\n{run_all.END}\n")
    doc = run_all.run_only(["fake"], True, out, page, bench_dir=tmp_path)
    saved = json.loads(out.read_text())
    assert saved == doc
    assert (saved["train_samples_per_s"], saved["new_key"], saved["sim_realtime_factor"]) == (123.0, 1.0, 60.0)
    assert (saved["date"], saved["git"], saved["load_before"]) == ("2026-01-01", full["git"], 1.0)
    part = saved["partial_runs"][-1]
    assert part["benches"] == ["bench_fake.py"] and part["keys"] == ["new_key", "train_samples_per_s"]
    assert part["quick"] is True and part["failed"] == []
    text = page.read_text()
    assert "| train_samples_per_s | 123 | samples/s | >= 150000 | **no** |" in text
    assert "The keys of bench_fake.py were measured again by `bench/run_all.py --only --quick`" in text
    with pytest.raises(FileNotFoundError, match=r"--only missing: no benchmark .*bench_missing\.py"):
        run_all.run_only(["missing"], True, out, page, bench_dir=tmp_path)
    assert json.loads(out.read_text()) == saved  # nothing ran, nothing written
