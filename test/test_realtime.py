"""deadzone_id_ros.realtime: settings validated, SCHED_FIFO / mlockall / affinity applied and read back from the kernel
in a child process (the test process keeps normal scheduling), and refused with a warning in a process that may not."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from deadzone_id_ros.realtime import RealtimeConfig, apply_realtime, current_state

# The child applies the config given as JSON and prints the state the kernel reports. With LIMITS it first lowers its
# own real-time priority limit to 0 and its locked-memory limit to 64 KiB (any process may lower its limits), so
# without CAP_SYS_NICE / CAP_IPC_LOCK the kernel refuses both, whatever the machine's limits are.
CHILD = """
import json, resource, sys, threading
from deadzone_id_ros.realtime import RealtimeConfig, apply_realtime
if sys.argv[2] == "LIMITS":
    resource.setrlimit(resource.RLIMIT_RTPRIO, (0, 0))
    resource.setrlimit(resource.RLIMIT_MEMLOCK, (65536, 65536))
worker = threading.Thread(target=threading.Event().wait, args=(5.0,), daemon=True)
worker.start()  # a second thread that exists before the call: it must get the policy too
c = json.loads(sys.argv[1])
s = apply_realtime(RealtimeConfig(c["thread_priority"], c["lock_memory"], tuple(c["cpu_affinity"])))
import os
worker_policy = os.sched_getscheduler(worker.native_id)
print(json.dumps(dict(policy=s.policy, priority=s.priority, memory_locked=s.memory_locked,
                      cpu_affinity=list(s.cpu_affinity), warnings=list(s.warnings), worker_policy=worker_policy)))
"""


def _child(config: dict, *, prefix: tuple[str, ...] = (), limits: bool = False) -> dict:
    out = subprocess.run([*prefix, sys.executable, "-c", CHILD, json.dumps(config), "LIMITS" if limits else "-"],
                         capture_output=True, text=True, timeout=60, cwd=os.getcwd())
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def _may_use_fifo() -> bool:
    """Whether a child of this process is allowed SCHED_FIFO (root, CAP_SYS_NICE or an rtprio limit)."""
    probe = "import os; os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(1))"
    return subprocess.run([sys.executable, "-c", probe], capture_output=True).returncode == 0


def _without_capabilities() -> tuple[str, ...]:
    """A command prefix that drops CAP_SYS_NICE and CAP_IPC_LOCK for root (setpriv); none is needed otherwise."""
    if os.geteuid() != 0:
        return ()
    if not shutil.which("setpriv"):
        pytest.skip("running as root without setpriv: cannot start a process without CAP_SYS_NICE")
    return ("setpriv", "--bounding-set=-sys_nice,-ipc_lock")


@pytest.mark.parametrize(("kwargs", "match"), [
    (dict(thread_priority=100), r"thread_priority = 100 must be an integer in \[0, 99\]"),
    (dict(thread_priority=-1), r"thread_priority = -1 must be an integer"),
    (dict(thread_priority=True), r"thread_priority = True must be an integer"),
    (dict(thread_priority=50.0), r"thread_priority = 50.0 must be an integer"),
    (dict(lock_memory="yes"), r"lock_memory = 'yes' must be true or false"),
    (dict(cpu_affinity=(0, 0)), r"cpu_affinity = \[0, 0\] must be distinct CPU numbers >= 0"),
    (dict(cpu_affinity=(-1,)), r"cpu_affinity = \[-1\] must be distinct"),
])
def test_bad_settings_are_refused_naming_the_field_and_value(kwargs, match):
    with pytest.raises(ValueError, match=match):
        RealtimeConfig(**kwargs)


def test_defaults_ask_nothing_of_the_kernel():
    before = current_state()
    assert apply_realtime(RealtimeConfig()) == before
    with pytest.raises(ValueError, match="must be a RealtimeConfig"):
        apply_realtime({"thread_priority": 50})  # type: ignore[arg-type]


def test_fifo_locked_memory_and_affinity_are_applied_to_every_thread():
    if not _may_use_fifo():
        pytest.skip("this user may not use SCHED_FIFO (no CAP_SYS_NICE, rtprio limit 0)")
    cpu = min(os.sched_getaffinity(0))
    state = _child(dict(thread_priority=20, lock_memory=True, cpu_affinity=[cpu]))
    assert state["warnings"] == []
    assert (state["policy"], state["priority"], state["cpu_affinity"]) == ("SCHED_FIFO", 20, [cpu])
    assert state["memory_locked"] is True
    assert state["worker_policy"] == os.SCHED_FIFO
    assert current_state().policy != "SCHED_FIFO"  # the test process itself untouched


def test_a_process_without_permission_warns_and_keeps_normal_scheduling():
    state = _child(dict(thread_priority=50, lock_memory=True, cpu_affinity=[]), prefix=_without_capabilities(),
                   limits=True)
    assert (state["policy"], state["priority"], state["memory_locked"]) == ("SCHED_OTHER", 0, False)
    assert state["worker_policy"] == os.SCHED_OTHER
    memory, fifo = state["warnings"]  # in the order applied: affinity (none asked), memory, priority
    assert memory.startswith("lock_memory: mlockall refused by the kernel: ENOMEM") and "ulimit -l" in memory
    assert fifo.startswith("thread_priority 50: SCHED_FIFO refused by the kernel: EPERM") and "CAP_SYS_NICE" in fifo
    assert "running with normal scheduling" in fifo

def test_a_cpu_that_does_not_exist_is_refused_with_the_allowed_ones():
    allowed = sorted(os.sched_getaffinity(0))
    state = apply_realtime(RealtimeConfig(cpu_affinity=(4096,)))
    assert state.cpu_affinity == tuple(allowed)
    assert len(state.warnings) == 1
    assert state.warnings[0] == (f"cpu_affinity [4096]: refused by the kernel: EINVAL (Invalid argument); the CPUs "
                                 f"this process may use are {allowed}")
