"""Issue 39 item 2: a finite lockstep launch ends by itself. ``deadzone-id launch sim_feedforward.launch.yaml
use_sim_time:=true lockstep:=true duration:=D`` runs as a real process (its nodes as real processes over DDS on
loopback), records, and exits with status 0 once the excitation's motion is over and the recorder has closed its
episode; no node warns that /clock is missing (in lockstep a /clock standing at 0 until the controller's first
command is expected). The wait has no wall-clock deadline: it fails only when the launch's output stops growing."""

from __future__ import annotations

import glob
import time

import pytest
from conftest import executable, held_fastdds_files, wait_for_progress

from deadzone_id_ros.data.bag import read_recording

pytestmark = pytest.mark.integration

DURATION_S = 2.0
START_DELAY_S = 0.5


def _fastdds_files() -> set[str]:
    return set(glob.glob("/dev/shm/fastdds_*")) - set(glob.glob("/dev/shm/fastdds_port*"))


def test_a_finite_lockstep_launch_ends_by_itself_after_the_recorder_closed_its_episode(processes, tmp_path):
    before = _fastdds_files()
    out = tmp_path / "rec"
    proc = processes.start([executable("deadzone-id"), "launch", "sim_feedforward.launch.yaml", "use_sim_time:=true",
                            "lockstep:=true", "step_on_answer:=true", f"duration:={DURATION_S:g}",
                            f"start_delay:={START_DELAY_S:g}", f"output_dir:={out}", "seed:=3"], "launch")
    # progress: the launch's output grows (nodes importing, then the run); a finished launch stops the wait
    wait_for_progress(lambda: proc.poll() is not None, lambda: len(processes.log(proc)), stall_timeout=60.0,
                      log=lambda: processes.log(proc)[-4000:])
    log = processes.log(proc)
    assert proc.returncode == 0, log[-4000:]
    assert "excitation: motion finished" in log and "excitation finished; stopping the others" in log, log[-4000:]
    assert "no /clock message arrived" not in log, log
    closed = [line for line in log.splitlines() if "closed episode" in line]
    assert len(closed) == 1, log[-4000:]
    (bag,) = [p.parent for p in out.glob("*/metadata.yaml")]
    rec = read_recording(bag)
    assert rec.reference_t_ns is not None
    # counted in simulated time: the episode holds states up to the end of the motion the excitation planned
    motion_end_ns = int(rec.reference_t_ns.max())
    assert rec.state_t_ns.max() >= motion_end_ns, (rec.state_t_ns.max(), motion_end_ns)
    time.sleep(0.5)  # the nodes' DDS participants are gone with their processes; give the kernel a moment
    leaked = (_fastdds_files() - before) - held_fastdds_files()
    assert not leaked, f"/dev/shm files left behind: {sorted(leaked)}"


def test_a_live_teleoperation_ends_by_itself_at_the_scenarios_duration(processes, tmp_path):
    # the live teleop launch used to run until Ctrl-C and print nothing after start: its leader simulator now logs
    # each simulated second and exits at the scenario's duration, and the launch with it (end_when_finished)
    proc = processes.start([executable("deadzone-id"), "launch", "teleop.launch.yaml", "scenario:=free",
                            "duration:=3.2", "real_time_factor:=20.0"], "teleop")
    wait_for_progress(lambda: proc.poll() is not None, lambda: len(processes.log(proc)), stall_timeout=60.0,
                      log=lambda: processes.log(proc)[-4000:])
    log = processes.log(proc)
    assert proc.returncode == 0, log[-4000:]
    assert "simulated 3 s of 3.2 s" in log and "simulated time reached exit_after = 3.2 s: stopping" in log, log[-4000:]
