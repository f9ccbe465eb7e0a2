"""Issue 12 item 8: the commands of docs/own-robot.md ("Use it on your own robot"), as a user without the ros2 CLI
runs them.

Copy and edit the controller's parameter file, start the graph with `deadzone-id launch sim_feedforward.launch.yaml
controller_params_file:=...`, control the recorder with `deadzone-id record start|split|stop`, read /diagnostics with
`deadzone-id status`, and find two episodes on disk.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
from conftest import REPO, executable, wait_until

from deadzone_id_ros.data.bag import read_recording
from deadzone_id_ros.resources import share_dir

pytestmark = pytest.mark.integration


def _cli(*args: str, timeout: float = 150) -> subprocess.CompletedProcess:
    return subprocess.run([executable("deadzone-id"), *args], capture_output=True, text=True, timeout=timeout)


def test_documented_commands_for_your_own_robot(tmp_path):
    # the commands run below are the ones docs/own-robot.md gives (so the two cannot drift apart)
    page = (REPO / "docs" / "own-robot.md").read_text()
    for documented in ("cp config/feedforward_controller.yaml my_controller.yaml",
                       "`controller_params_file:=my_controller.yaml` to `sim_feedforward.launch.yaml`",
                       "`deadzone-id record start`", "`deadzone-id record split`", "`deadzone-id record stop`",
                       "`deadzone-id status`", "exit 1 if\n   the recorder refuses, 2 if it does not answer"):
        assert documented in page, documented
    # 1. copy the controller's parameter file and edit it (here: half the URDF effort limits)
    params = tmp_path / "my_controller.yaml"
    text = (share_dir() / "config" / "feedforward_controller.yaml").read_text()
    assert "effort_limit_scale: 1.0" in text
    params.write_text(text.replace("effort_limit_scale: 1.0", "effort_limit_scale: 0.5"))
    runs = tmp_path / "runs"
    log = tmp_path / "launch.log"
    # no ROS graph yet: both commands say so and exit 2 after their timeout
    status = _cli("status", "--timeout", "1")
    assert status.returncode == 2 and "no DiagnosticArray on /diagnostics within 1 s" in status.stderr, status.stderr
    with log.open("w") as out:
        launch = subprocess.Popen(
            [executable("deadzone-id"), "launch", "sim_feedforward.launch.yaml", f"controller_params_file:={params}",
             "autostart:=false", f"output_dir:={runs}", "duration:=30"],
            stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        assert wait_until(lambda: "[recorder] [INFO]" in log.read_text() and
                          "feedforward_controller: mode" in log.read_text(), 90), log.read_text()
        assert "effort limits [2.0, 5.0, 2.5] N*m" in log.read_text()  # the edited file is the one in use
        # 2. episodes without the ros2 CLI
        start = _cli("record", "start", "--timeout", "60")
        assert start.returncode == 0 and "/recorder/start: ok" in start.stdout, start.stdout + start.stderr
        time.sleep(2.0)
        split = _cli("record", "split", "--timeout", "60")
        assert split.returncode == 0 and "/recorder/split: ok" in split.stdout, split.stdout + split.stderr
        time.sleep(2.0)
        stop = _cli("record", "stop", "--timeout", "60")
        assert stop.returncode == 0 and "/recorder/stop: ok" in stop.stdout, stop.stdout + stop.stderr
        again = _cli("record", "stop", "--timeout", "60")  # nothing open: the recorder refuses, exit 1
        assert again.returncode == 1 and "refused" in again.stdout, again.stdout + again.stderr
        # 3. diagnostics without the ros2 CLI
        status = _cli("status", "--timeout", "20")
        assert status.returncode in (0, 1), status.stdout + status.stderr
        assert "/feedforward_controller" in status.stdout and "feedforward_controller: control loop" in status.stdout
        assert "[OK]" in status.stdout or "[WARN]" in status.stdout or "[ERROR]" in status.stdout, status.stdout
    finally:
        os.killpg(launch.pid, signal.SIGINT)
        launch.wait(60)
    episodes = sorted(p for p in runs.iterdir() if (p / "metadata.yaml").is_file())
    assert len(episodes) == 2, [p.name for p in runs.iterdir()]
    for bag in episodes:
        rec = read_recording(bag)
        assert rec.joint_names == ("joint1", "joint2", "joint3") and len(rec.state_t_ns) > 100, bag
        assert Path(bag, "episode.yaml").is_file()
