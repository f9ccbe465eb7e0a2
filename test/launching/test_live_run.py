"""Lockstep live runs have no wall-clock deadline (issue 21 item 2): a run on a slowed simulator finishes, a stalled
one fails saying where it stalled. The nodes are the real ones, as processes over DDS."""

from __future__ import annotations

import os
import re
import signal
import threading
import time
from pathlib import Path

import pytest

from deadzone_id_ros.launching.live import StallError, live_run
from deadzone_id_ros.launching.progress import ProgressWatch, process_state

pytestmark = pytest.mark.integration


def test_progress_watch_counts_wall_time_since_the_last_change_only():
    watch = ProgressWatch(0.3)
    assert watch.update(1) and not watch.update(1) and not watch.stalled()
    time.sleep(0.35)
    assert watch.stalled() and watch.stalled_for() >= 0.3
    assert watch.update(2) and not watch.stalled()  # any change is progress, however small
    with pytest.raises(ValueError, match="stall_timeout = 0 must be > 0 s"):
        ProgressWatch(0)
    assert process_state(os.getpid()) == "running" and process_state(2**22 + 1) == "gone"


def test_a_lockstep_run_on_a_simulator_slowed_20x_finishes(tmp_path):
    """sim_arm's own ``real_time_factor`` (simulated seconds per wall second, a parameter of the real node, set
    through sim_feedforward.launch.yaml) at 0.05: every simulated second costs at least 20 wall seconds, as on a
    machine 20 times too slow. The run, 1 s of start delay and 3 s of excitation, takes at least 80 s of wall time;
    the old wall-clock deadline (60 s + 5 s per excitation second = 75 s) killed it. It must finish and record the
    whole reference span in simulated time."""
    from deadzone_id_ros.launching.live import closed_loop_metrics

    seconds, factor = 3.0, 0.05
    t0 = time.monotonic()
    bag = live_run(tmp_path / "run", {"mode": "pd_dob", "model": "rbd", "seed": "7",
                                      "real_time_factor": str(factor)}, seconds, tmp_path / "run.log", attempts=1)
    wall = time.monotonic() - t0
    m = closed_loop_metrics(bag)
    assert m.seconds == pytest.approx(seconds, abs=0.01) and abs(m.samples - seconds * 1000) <= 2, m
    # the slow-down is real: the simulated start delay and motion took at least 20x as long in wall time
    assert wall >= 0.9 * (1.0 + seconds) / factor, f"{wall:.0f} s of wall time: the simulator was not slowed"


def _started_pid(log: Path, label: str) -> int | None:
    text = log.read_text() if log.exists() else ""
    found = re.search(rf"\[launch\] started {label} \(pid (\d+)\)", text)
    return int(found.group(1)) if found else None


def test_a_stalled_lockstep_run_fails_naming_the_process_the_time_and_the_log(tmp_path):
    """SIGSTOP sim_arm (the process that owns simulated time) once the excitation runs: simulated time stops, and
    after the stall timeout the run fails with a message that names sim_arm, its stopped state, the last simulated
    time and the log; not earlier (a slow run is no error), and with no wall-clock deadline."""
    log = tmp_path / "run.log"
    stopped: dict[str, float] = {}
    done = threading.Event()

    def stop_sim_arm() -> None:
        while not done.is_set():
            pid = _started_pid(log, "sim_arm")
            if pid is not None and "following reference #1" in log.read_text():
                time.sleep(3.0)  # simulated time runs, and the controller's /diagnostics (every 0.2 s) carry it
                os.kill(pid, signal.SIGSTOP)
                stopped["at"] = time.monotonic()
                return
            time.sleep(0.1)

    stopper = threading.Thread(target=stop_sim_arm, daemon=True)
    stopper.start()
    try:
        with pytest.raises(StallError) as info:
            live_run(tmp_path / "run", {"mode": "pd_dob", "model": "rbd", "seed": "3"}, 30.0, log, attempts=1,
                     stall_timeout=10.0)
    finally:
        done.set()
        stopper.join(2.0)
    message = str(info.value)
    assert "at" in stopped, f"sim_arm was never stopped; the run ended with: {message}"
    failed_after = time.monotonic() - stopped["at"]
    assert re.search(r"simulated time stopped at \d+\.\d{3} s: sim_arm \(it owns simulated time\)", message), message
    assert re.search(r"sim_arm: pid \d+, stopped \(SIGSTOP\)", message), message
    assert f"see {log}" in message
    # not before the stall timeout, less the wall time between two progress stamps before the stop (the
    # controller's /diagnostics: 0.2 s of simulated time, a few wall seconds at worst under load)
    assert failed_after >= 5.0, f"failed {failed_after:.1f} s after the stall, before the stall timeout"
    text = log.read_text()
    # the stopped node got SIGCONT with its SIGINT and shut down by itself (not killed after the timeouts)
    assert "[launch] sim_arm exited with status 0" in text, text[-3000:]


def test_a_live_run_skips_a_ros_domain_another_process_uses(monkeypatch):
    """Two graphs in one domain talk to each other (another user's, a parallel test run's): a domain with a bound
    DDS port on this host is not chosen."""
    import socket

    from deadzone_id_ros.launching import live

    monkeypatch.setenv("ROS_DOMAIN_ID", "50")
    monkeypatch.setitem(live._RUN_COUNTER, "n", 0)
    free = live.next_domain_id()  # what the next run would take
    monkeypatch.setitem(live._RUN_COUNTER, "n", 0)
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.bind(("127.0.0.1", 7410 + 250 * int(free)))  # a participant's unicast discovery port in that domain
        assert int(free) in live.domains_in_use()
        assert live.next_domain_id() != free
