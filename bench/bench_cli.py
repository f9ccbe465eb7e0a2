"""Benchmark of the ``deadzone-id`` start-up: how long the command takes to answer when it has nothing to compute.

Commands timed (wall time of the process, from start to exit), each run 5 times, the median kept:
``deadzone-id --help``, ``deadzone-id --version``, ``deadzone-id inspect /nonexistent`` and
``deadzone-id train --bag /nonexistent --method masked --out ...`` (both answer "bag ... does not exist").
``cli_startup_seconds`` is the slowest of the four medians. Raw counterpart: ``python -c pass`` with the same
interpreter, measured alternately with the commands (so under the same load); ``cli_startup_ratio_raw_python`` =
cli_startup_seconds / its median.

Usage: ``python bench/bench_cli.py``. ``run(quick)`` returns the bench/results.json keys.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPEATS = 5


def _seconds(cmd: list[str]) -> float:
    t0 = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - t0


def run(quick: bool = False) -> dict[str, float]:
    """Time the commands and ``python -c pass``; returns ``cli_startup_seconds`` [s] and the ratio to raw Python."""
    exe = str(Path(sys.prefix) / "bin" / "deadzone-id")
    with tempfile.TemporaryDirectory(prefix="bench_cli_") as tmp:
        commands = {"help": [exe, "--help"], "version": [exe, "--version"],
                    "inspect_missing": [exe, "inspect", "/nonexistent"],
                    "train_missing": [exe, "train", "--bag", "/nonexistent", "--method", "masked", "--out",
                                      str(Path(tmp) / "out")]}
        times: dict[str, list[float]] = {name: [] for name in commands}
        raw: list[float] = []
        for _ in range(REPEATS):
            for name, cmd in commands.items():
                raw.append(_seconds([sys.executable, "-c", "pass"]))
                times[name].append(_seconds(cmd))
    medians = {name: statistics.median(t) for name, t in times.items()}
    for name, m in medians.items():
        print(f"deadzone-id {name}: median {m:.3f} s")
    slowest = max(medians.values())
    raw_median = statistics.median(raw)
    return {"cli_startup_seconds": slowest, "raw_python_startup_seconds": raw_median,
            "cli_startup_ratio_raw_python": slowest / raw_median}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="(same run: it takes a few seconds)")
    args = parser.parse_args()
    for key, value in run(args.quick).items():
        print(f"{key:34s} {value:12.4g}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
