"""`deadzone-id` answers at once: --help, --version and an error about a missing file load none of the heavy libraries
(torch, MuJoCo, pinocchio, rclpy, onnxruntime, scipy, matplotlib). Checked on sys.modules in a fresh interpreter, so
the test holds on any CPU and under any load (it asserts what is imported, not how long it takes; bench/run_all.py
measures the seconds as ``cli_startup_seconds``)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from conftest import REPO

HEAVY = ("torch", "mujoco", "pinocchio", "rclpy", "onnxruntime", "scipy", "matplotlib")

# Runs deadzone-id's main() with the given arguments in a fresh interpreter, then prints the exit status and which
# heavy modules were imported, as JSON on the last line of stdout.
PROBE = """
import json, sys
from deadzone_id_ros.cli.main import main
heavy = json.loads(sys.argv[1])
try:
    status = main(sys.argv[2:])
except SystemExit as exit_:
    status = exit_.code
print(json.dumps({"status": status, "loaded": [m for m in heavy if m in sys.modules]}))
"""


def _run(*argv: str) -> tuple[int, list[str], str]:
    out = subprocess.run([sys.executable, "-c", PROBE, json.dumps(HEAVY), *argv], capture_output=True, text=True,
                         timeout=120, cwd=REPO)
    result = json.loads(out.stdout.strip().splitlines()[-1])
    return result["status"], result["loaded"], out.stdout + out.stderr


@pytest.mark.parametrize(("argv", "status", "says"), [
    (("--help",), 0, "usage: deadzone-id"),
    (("--version",), 0, "deadzone-id 0."),
    (("train", "--bag", "/nope", "--method", "masked", "--out", "OUT"), 2, "bag /nope does not exist"),
    (("compare", "--bag", "/nope", "--out", "OUT"), 2, "bag /nope does not exist"),
    (("inspect", "/nope"), 2, "bag /nope does not exist"),
    (("replay", "/nope", "--out", "OUT"), 2, "bag /nope does not exist"),
    (("evaluate", "--model", "/nope", "--bag", "/nope"), 2, "model artifact /nope does not exist"),
    (("export", "--model", "/nope", "--onnx"), 2, "model artifact /nope does not exist"),
    (("closed-loop", "--compare", "/nope", "--out", "OUT"), 2, "/nope/report.json does not exist"),
    (("launch", "/nope.launch.yaml"), 2, "launch file /nope.launch.yaml not found"),
    (("improve", "--out", "OUT", "--compare-model", "/nope"), 2, "model artifact /nope does not exist"),
])
def test_help_version_and_a_missing_file_load_no_heavy_library(tmp_path, argv, status, says):
    argv = tuple(str(tmp_path / "out") if a == "OUT" else a for a in argv)
    got, loaded, output = _run(*argv)
    assert (got, loaded) == (status, []), output
    assert says in output, output
    assert not (tmp_path / "out").exists()


def test_the_probe_sees_a_heavy_import(tmp_path):
    """The probe can fail: a command that does run the simulator is seen loading MuJoCo."""
    got, loaded, output = _run("simulate", "--duration", "0.05", "--seed", "1", "--out", str(tmp_path / "bag"),
                               "--no-progress")
    assert got == 0 and "mujoco" in loaded, output
