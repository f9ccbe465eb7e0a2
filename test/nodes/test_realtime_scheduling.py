"""Real-time scheduling of the node processes (thread_priority, lock_memory): the controller reports the scheduling
the kernel granted in /diagnostics (read over DDS), the policy is checked from outside with sched_getscheduler, a
process without permission warns and runs with normal scheduling, and a bad priority is refused at start."""

from __future__ import annotations

import os
import resource
import shutil
import subprocess
import sys

import pytest
from conftest import REPO, executable, wait_until
from diagnostic_msgs.msg import DiagnosticArray

pytestmark = pytest.mark.integration

PARAMS = str(REPO / "config" / "feedforward_controller.yaml")
SIM_PARAMS = str(REPO / "config" / "sim_arm.yaml")
PRIORITY = 20  # moderate: a runaway SCHED_FIFO thread is throttled by kernel.sched_rt_runtime_us anyway


def _may_use_fifo() -> bool:
    probe = "import os; os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(1))"
    return subprocess.run([sys.executable, "-c", probe], capture_output=True).returncode == 0


needs_fifo = pytest.mark.skipif(not _may_use_fifo(), reason="this user may not use SCHED_FIFO (CAP_SYS_NICE)")


def _unprivileged() -> list[str]:
    """A command prefix for a process the kernel refuses SCHED_FIFO and mlockall: real-time priority limit 0 and a
    locked-memory limit of at most 4 MiB (prlimit; the node's Python process maps far more), and for root no
    CAP_SYS_NICE / CAP_IPC_LOCK (setpriv)."""
    if not shutil.which("prlimit") or (os.geteuid() == 0 and not shutil.which("setpriv")):
        pytest.skip("needs prlimit (and setpriv as root) to start a process without real-time permission")
    hard = resource.getrlimit(resource.RLIMIT_MEMLOCK)[1]  # a limit may be lowered, never raised
    memlock = 4 << 20 if hard == resource.RLIM_INFINITY else min(4 << 20, hard)
    prefix = ["prlimit", "--rtprio=0", f"--memlock={memlock}"]
    return prefix + (["setpriv", "--bounding-set=-sys_nice,-ipc_lock"] if os.geteuid() == 0 else [])


def _scheduling(probe, processes, proc) -> dict[str, str]:
    """The controller's latest /diagnostics values (waits for one that carries the scheduling keys)."""
    statuses = probe.listen("/diagnostics", DiagnosticArray, qos=10, keep=lambda m: m)

    def reported() -> list[dict[str, str]]:
        return [{kv.key: kv.value for kv in s.values} for d in statuses for s in d.status
                if s.hardware_id == "/feedforward_controller"
                and any(kv.key == "scheduling_policy" for kv in s.values)]
    assert probe.spin(60.0, until=lambda: bool(reported())), processes.log(proc)
    return reported()[-1]


@needs_fifo
def test_controller_reports_sched_fifo_and_locked_memory_in_diagnostics(processes, ros_probe):
    ctl = processes.start([executable("feedforward_controller"), "--ros-args", "--params-file", PARAMS,
                           "-p", f"thread_priority:={PRIORITY}", "-p", "lock_memory:=true"], "ffc_rt")
    values = _scheduling(ros_probe, processes, ctl)
    assert (values["scheduling_policy"], values["thread_priority"], values["memory_locked"]) == \
        ("SCHED_FIFO", str(PRIORITY), "true"), values
    assert "realtime_warning" not in values
    assert values["cpu_affinity"] == ",".join(map(str, sorted(os.sched_getaffinity(ctl.pid))))
    # from outside: every thread of the process (executor and middleware threads) runs SCHED_FIFO
    threads = [int(t) for t in os.listdir(f"/proc/{ctl.pid}/task")]
    assert len(threads) > 1 and all(os.sched_getscheduler(t) == os.SCHED_FIFO for t in threads)
    assert f"scheduling: SCHED_FIFO priority {PRIORITY}, memory locked true" in processes.log(ctl)
    assert processes.stop(ctl) == 0


def test_controller_without_permission_warns_and_reports_normal_scheduling(processes, ros_probe):
    ctl = processes.start([*_unprivileged(), executable("feedforward_controller"), "--ros-args", "--params-file",
                           PARAMS, "-p", f"thread_priority:={PRIORITY}", "-p", "lock_memory:=true"], "ffc_no_rt")
    values = _scheduling(ros_probe, processes, ctl)
    assert (values["scheduling_policy"], values["thread_priority"], values["memory_locked"]) == \
        ("SCHED_OTHER", "0", "false"), values
    assert f"thread_priority {PRIORITY}: SCHED_FIFO refused by the kernel: EPERM" in values["realtime_warning"]
    assert "mlockall refused by the kernel" in values["realtime_warning"]
    log = processes.log(ctl)
    assert "running with normal scheduling" in log and "[WARN]" in log, log
    assert os.sched_getscheduler(ctl.pid) == os.SCHED_OTHER
    assert ctl.poll() is None, "a refused priority must not stop the controller"


@pytest.mark.parametrize("exe", ["feedforward_controller", "sim_arm"])
def test_a_priority_outside_1_to_99_is_refused_at_start(processes, exe):
    params = PARAMS if exe == "feedforward_controller" else SIM_PARAMS
    proc = processes.start([executable(exe), "--ros-args", "--params-file", params, "-p", "thread_priority:=120"],
                           f"{exe}_bad_priority")
    assert proc.wait(30) == 2
    log = processes.log(proc)
    assert "thread_priority" in log and "120" in log and "Traceback" not in log, log


@needs_fifo
def test_sim_arm_runs_sched_fifo_when_asked(processes):
    sim = processes.start([executable("sim_arm"), "--ros-args", "--params-file", SIM_PARAMS,
                           "-p", f"thread_priority:={PRIORITY}"], "sim_rt")
    assert wait_until(lambda: "scheduling: SCHED_FIFO" in processes.log(sim), 90.0), processes.log(sim)
    assert os.sched_getscheduler(sim.pid) == os.SCHED_FIFO
    assert os.sched_getparam(sim.pid).sched_priority == PRIORITY
    assert processes.stop(sim) == 0


def _controller_realtime_args(launch_file: str, arguments: dict[str, str]) -> list[str]:
    from deadzone_id_ros.launching import load_launch_file

    plan = load_launch_file(launch_file, arguments)
    (node,) = [n for n in plan.nodes if n.name == "feedforward_controller"]
    return [a for a in node.command() if a.startswith(("thread_priority:=", "lock_memory:="))]


def test_launch_files_set_the_controllers_scheduling():
    """Hardware launch: SCHED_FIFO 50 and locked memory by default (launch arguments turn them off); the simulated
    graph passes the same arguments, off by default (lockstep needs none)."""
    assert _controller_realtime_args("feedforward.launch.yaml", {}) == ["thread_priority:=50", "lock_memory:=true"]
    assert _controller_realtime_args("feedforward.launch.yaml", {"thread_priority": "0", "lock_memory": "false"}) \
        == ["thread_priority:=0", "lock_memory:=false"]
    assert _controller_realtime_args("sim_feedforward.launch.yaml", {}) == ["thread_priority:=0", "lock_memory:=false"]
    assert _controller_realtime_args("sim_feedforward.launch.yaml", {"thread_priority": "50"}) == \
        ["thread_priority:=50", "lock_memory:=false"]
