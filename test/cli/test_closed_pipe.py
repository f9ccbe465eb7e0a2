"""`deadzone-id COMMAND | head` ends quietly when the reader goes away (issue 40 item 7): status 128 + SIGPIPE, no
BrokenPipeError traceback. The reader's end of the pipe is closed before the command writes anything, so every
write fails, on any machine and under any load."""

from __future__ import annotations

import signal
import subprocess

import pytest
from conftest import executable

from deadzone_id_ros.data.bag import write_recording
from deadzone_id_ros.sim.offline import simulate


def _run_into_closed_pipe(argv: list[str]) -> tuple[int, str]:
    proc = subprocess.Popen([executable("deadzone-id"), *argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # the reader is gone before the first line, as `| head -n 0` would be
    err = proc.stderr.read().decode()
    return proc.wait(timeout=600), err


@pytest.mark.parametrize("argv", [["robots"], ["robot", "show", "three_dof_arm"]])
def test_a_listing_into_a_closed_pipe_exits_quietly(argv):
    status, err = _run_into_closed_pipe(argv)
    assert status == 128 + signal.SIGPIPE, err
    assert "Traceback" not in err and "BrokenPipeError" not in err, err


def test_replay_into_a_closed_pipe_exits_quietly(tmp_path):
    bag = write_recording(simulate(0.3, seed=3), tmp_path / "bag")
    status, err = _run_into_closed_pipe(["replay", str(bag), "--out", str(tmp_path / "out")])
    assert status == 128 + signal.SIGPIPE, err
    assert "Traceback" not in err and "BrokenPipeError" not in err, err
