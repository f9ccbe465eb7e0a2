"""Issue 12 item 9: no node outlives `deadzone-id launch` or `deadzone-id demo` after SIGTERM (what `timeout` sends)
or SIGHUP (a closed terminal), and replay.launch.yaml ends by itself, failing when the replay skipped commands."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
from pathlib import Path

import pytest
from conftest import executable, wait_until

from deadzone_id_ros.launching import load_launch_file

pytestmark = pytest.mark.integration

STARTED = re.compile(r"\[launch\] started (\S+) \(pid (\d+)\)")


def _alive(pid: int) -> bool:
    """The process exists and is not a zombie."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def _kill_leftovers(pids: list[int]) -> None:
    for pid in pids:
        if _alive(pid):
            try:
                os.killpg(pid, signal.SIGKILL)  # each node leads its own session
            except ProcessLookupError:
                pass


def _started(text: str) -> dict[str, int]:
    return {label: int(pid) for label, pid in STARTED.findall(text)}


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
def test_launch_ends_its_nodes_on_sigterm_and_sighup(tmp_path, sig):
    log = tmp_path / "launch.log"
    with log.open("w") as out:
        proc = subprocess.Popen([executable("deadzone-id"), "launch", "sim.launch.yaml"], stdout=out,
                                stderr=subprocess.STDOUT, start_new_session=True)
    n_nodes = len(load_launch_file("sim.launch.yaml").nodes)
    pids: list[int] = []
    try:
        assert wait_until(lambda: len(_started(log.read_text())) == n_nodes, 60), log.read_text()
        assert proc.poll() is None, log.read_text()
        labels = _started(log.read_text())
        pids = list(labels.values())
        # each node is up (logged), not still importing
        assert wait_until(lambda: all(f"[{n}] [INFO]" in log.read_text() for n in labels), 60), log.read_text()
        assert all(_alive(p) for p in pids)
        proc.send_signal(sig)
        assert proc.wait(30) == 0, log.read_text()  # a requested shutdown with every node exiting cleanly
        assert wait_until(lambda: not any(_alive(p) for p in pids), 5), f"nodes outlived the launcher: {pids}"
        assert f"{signal.Signals(sig).name} received; stopping the nodes" in log.read_text()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
        _kill_leftovers(pids)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
def test_demo_ends_its_nodes_on_sigterm_and_sighup(tmp_path, sig):
    """`timeout 60 deadzone-id demo` (SIGTERM), or a closed terminal (SIGHUP), must not leave sim_arm, excitation,
    controller and recorder running."""
    out = tmp_path / "demo"
    live_log = out / "logs" / "live_recording.log"
    with (tmp_path / "demo.log").open("w") as sink:
        proc = subprocess.Popen([executable("deadzone-id"), "demo", "--quick", "--out", str(out)], stdout=sink,
                                stderr=subprocess.STDOUT, start_new_session=True)
    pids: list[int] = []

    def live_nodes() -> dict[str, int]:
        return _started(live_log.read_text()) if live_log.is_file() else {}

    try:
        assert wait_until(lambda: len(live_nodes()) >= 4 or proc.poll() is not None, 240), \
            (tmp_path / "demo.log").read_text()[-3000:]
        assert proc.poll() is None, (tmp_path / "demo.log").read_text()[-3000:]
        pids = list(live_nodes().values())
        assert all(_alive(p) for p in pids)
        proc.send_signal(sig)
        assert proc.wait(40) == 128 + sig
        assert wait_until(lambda: not any(_alive(p) for p in pids), 5), f"nodes outlived the demo: {live_nodes()}"
        assert f"{signal.Signals(sig).name} received; stopped" in (tmp_path / "demo.log").read_text()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
        _kill_leftovers(pids)


def test_replay_launch_ends_by_itself_and_fails_when_commands_were_skipped(tmp_path):
    """A playback timer far slower than the recorded commands must skip most of them: the replay then says so in
    its report, and bag_replay and the launcher exit 1 on their own, instead of reporting the RMSE as valid."""
    from deadzone_id_ros.data.bag import write_recording
    from deadzone_id_ros.sim.offline import simulate

    bag = tmp_path / "bag"
    write_recording(simulate(1.0, seed=3), bag)
    report_dir = tmp_path / "report"
    log = tmp_path / "launch.log"
    with log.open("w") as out:
        proc = subprocess.Popen([executable("deadzone-id"), "launch", "replay.launch.yaml", f"bag:={bag}",
                                 f"report_dir:={report_dir}", "rate:=20", "lockstep:=false"],
                                stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        status = proc.wait(90)  # ends without being signalled: on_exit: shutdown
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGINT)
            proc.wait(20)
        _kill_leftovers(list(_started(log.read_text()).values()))
    text = log.read_text()
    assert status == 1, text[-3000:]
    report = json.loads((report_dir / "report.json").read_text())
    assert report["valid"] is False and report["commands_skipped"] > 100, report
    assert f"{report['commands_skipped']} of " in report["failure"]
    assert "replay INVALID" in text and "bag_replay died with status 1" in text
    assert not any(_alive(p) for p in _started(text).values())
