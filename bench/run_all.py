"""Run every benchmark in bench/ once, print one table, and write bench/results.json.

Each ``bench/bench_*.py`` exposes ``run(quick) -> dict[str, float]``. ``demo_seconds`` is the wall time of
``deadzone-id demo`` (full, or ``--quick`` with ``--quick``), run as a subprocess. Figures are measurements, not
pass/fail checks; where a target is missed the table says so.
Usage: ``python bench/run_all.py [--quick] [--skip-demo | --demo-report out/demo/report.json] [--out bench/results.json]``
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent

# key -> (unit, target text, predicate on the value)
TARGETS: dict[str, tuple[str, str, object]] = {
    "sim_realtime_factor": ("x", ">= 50", lambda v: v >= 50),
    "sim_node_rate_hz": ("Hz", "~1000", lambda v: v >= 990),
    "sim_node_late_tick_fraction": ("", "< 0.01", lambda v: v < 0.01),
    "ctrl_compute_p99_us_mlp": ("us", "<= 50", lambda v: v <= 50),
    "ctrl_compute_p99_us_rbd": ("us", "", None),
    "ctrl_latency_median_us": ("us", "<= 500", lambda v: v <= 500),
    "ctrl_latency_p99_us": ("us", "<= 1500", lambda v: v <= 1500),
    "ctrl_late_tick_fraction": ("", "< 0.005", lambda v: v < 0.005),
    "bag_ingest_msgs_per_s_mcap": ("msg/s", ">= 100000", lambda v: v >= 100_000),
    "bag_ingest_msgs_per_s_sqlite3": ("msg/s", ">= 100000", lambda v: v >= 100_000),
    "train_samples_per_s": ("samples/s", ">= 150000", lambda v: v >= 150_000),
    "compare_seconds_10min": ("s", "", None),
    "demo_seconds": ("s", "< 600 (full), < 120 (--quick)", None),
}


def _load(path: Path):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    spec.loader.exec_module(module)
    return module


def demo_seconds(quick: bool) -> float:
    """Wall time of ``deadzone-id demo`` into a temporary directory [s]; raises CalledProcessError if it fails."""
    exe = shutil.which("deadzone-id", path=str(Path(sys.prefix) / "bin")) or "deadzone-id"
    with tempfile.TemporaryDirectory(prefix="bench_demo_") as tmp:
        t0 = time.perf_counter()
        subprocess.run([exe, "demo", "--out", tmp] + (["--quick"] if quick else []), check=True)
        return time.perf_counter() - t0


def main(argv: list[str] | None = None) -> int:
    """Run all benchmarks; returns 0 (figures are reported, not judged), 1 if a benchmark crashed."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="shorter runs (rougher figures)")
    parser.add_argument("--skip-demo", action="store_true", help="do not time the demo")
    parser.add_argument("--demo-report", type=Path, default=None,
                        help="take demo_seconds from this demo report.json instead of running the demo again")
    parser.add_argument("--out", type=Path, default=HERE / "results.json")
    args = parser.parse_args(argv)
    results: dict[str, float] = {}
    failed: list[str] = []
    for path in sorted(HERE.glob("bench_*.py")):
        print(f"== {path.name}", flush=True)
        try:
            results.update(_load(path).run(quick=args.quick))
        except Exception as err:  # a benchmark crash is reported, the others still run
            print(f"{path.name} failed: {type(err).__name__}: {err}", file=sys.stderr)
            failed.append(path.name)
    if args.demo_report is not None:
        results["demo_seconds"] = float(json.loads(args.demo_report.read_text())["seconds"])
        print(f"== demo_seconds from {args.demo_report}: {results['demo_seconds']:.0f} s")
    elif not args.skip_demo:
        print("== deadzone-id demo", flush=True)
        try:
            results["demo_seconds"] = demo_seconds(args.quick)
        except subprocess.CalledProcessError as err:
            print(f"demo failed: {err}", file=sys.stderr)
            failed.append("demo")
    print(f"\n{'key':32s} {'value':>14s}  {'unit':10s} {'target':28s} met")
    for key, value in results.items():
        unit, target, ok = TARGETS.get(key, ("", "", None))
        met = "" if ok is None else ("yes" if ok(value) else "NO")
        print(f"{key:32s} {value:14.4g}  {unit:10s} {target:28s} {met}")
    doc = {
        **results,
        "machine": {"platform": platform.platform(), "processor": platform.processor(), "python": platform.python_version(),
                    "cpus": __import__("os").cpu_count()},
        "quick": args.quick,
        "failed": failed,
    }
    args.out.write_text(json.dumps(doc, indent=2) + "\n")
    print(f"\nwrote {args.out}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
