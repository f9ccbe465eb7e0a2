"""Real-time scheduling of a node process, as ros2_control_node does it (core: no rclpy import).

ros2_control_node runs its control loop at ``SCHED_FIFO`` priority ``thread_priority`` (default 50) when the process
may, locks its memory with ``mlockall(MCL_CURRENT | MCL_FUTURE)`` when ``lock_memory`` is set, and pins itself to
``cpu_affinity``; when the kernel refuses, it warns and runs with normal scheduling. :func:`apply_realtime` does the
same for a node here. The feedforward controller's tick runs in two threads of its process: the middleware's receive
thread hands a /joint_states message to the executor's thread, which runs the callback; both wait in the same queue
as every busy process unless both are real-time. So the policy is set on every thread the process has when it is
applied (after the node has been built, before it spins), and threads created later inherit it.

The priority stays moderate (1..99, 50 when enabled): a SCHED_FIFO thread that never sleeps is throttled by the
kernel after ``kernel.sched_rt_runtime_us`` (default 950 ms) of every second, so normal processes keep running.

Requirements: CAP_SYS_NICE or a real-time priority limit (``ulimit -r``, /etc/security/limits.conf
``@realtime - rtprio 99``) for SCHED_FIFO; CAP_IPC_LOCK or a large enough ``ulimit -l`` for mlockall.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import os
import threading
from dataclasses import dataclass
from pathlib import Path

__all__ = ["MAX_PRIORITY", "RealtimeConfig", "RealtimeState", "apply_realtime", "check_realtime", "current_state"]

MAX_PRIORITY = 99  # SCHED_FIFO priorities are 1..99 on Linux
_MCL_CURRENT, _MCL_FUTURE = 1, 2  # <sys/mman.h> on Linux


def check_realtime(thread_priority: object, lock_memory: object, cpu_affinity: tuple) -> None:
    """Validate the three real-time settings (shared by :class:`RealtimeConfig` and the node parameter classes).

    Raises:
        ValueError: ``thread_priority`` not an integer in [0, 99], ``lock_memory`` not a bool, or ``cpu_affinity``
            not distinct integers >= 0; the message names the field and the value.
    """
    if isinstance(thread_priority, bool) or not isinstance(thread_priority, int) \
            or not 0 <= thread_priority <= MAX_PRIORITY:
        raise ValueError(f"thread_priority = {thread_priority!r} must be an integer in [0, {MAX_PRIORITY}] "
                         "(0: normal scheduling; 1..99: SCHED_FIFO priority)")
    if not isinstance(lock_memory, bool):
        raise ValueError(f"lock_memory = {lock_memory!r} must be true or false")
    cpus = list(cpu_affinity)
    if any(isinstance(c, bool) or not isinstance(c, int) or c < 0 for c in cpus) or len(set(cpus)) != len(cpus):
        raise ValueError(f"cpu_affinity = {cpus!r} must be distinct CPU numbers >= 0 (empty: any CPU)")


@dataclass(frozen=True)
class RealtimeConfig:
    """What a node asks of the scheduler.

    Attributes:
        thread_priority: SCHED_FIFO priority of the node's threads, 1..99; 0 keeps normal scheduling (SCHED_OTHER).
        lock_memory: lock all current and future pages in RAM (mlockall), so no page fault stalls a tick.
        cpu_affinity: CPUs the node's threads may run on (empty: any CPU).

    Raises:
        ValueError: see :func:`check_realtime`.
    """

    thread_priority: int = 0
    lock_memory: bool = False
    cpu_affinity: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        check_realtime(self.thread_priority, self.lock_memory, self.cpu_affinity)


@dataclass(frozen=True)
class RealtimeState:
    """The scheduling a process has, read back from the kernel (not what was asked).

    Attributes:
        policy: the calling thread's policy: "SCHED_FIFO", "SCHED_RR", "SCHED_OTHER", "SCHED_BATCH" or "SCHED_IDLE".
        priority: its static real-time priority (0 for the normal policies).
        memory_locked: the process has locked memory (VmLck > 0 in /proc/self/status).
        cpu_affinity: (C,) CPUs the calling thread may run on, sorted.
        warnings: what was asked and refused, one sentence each (empty when everything asked was applied).
    """

    policy: str
    priority: int
    memory_locked: bool
    cpu_affinity: tuple[int, ...]
    warnings: tuple[str, ...] = ()


_POLICIES = {getattr(os, n): n for n in ("SCHED_OTHER", "SCHED_BATCH", "SCHED_IDLE", "SCHED_FIFO", "SCHED_RR")
             if hasattr(os, n)}


def current_state(warnings: tuple[str, ...] = ()) -> RealtimeState:
    """The calling thread's policy, priority and CPUs and whether the process has locked memory."""
    locked = False
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmLck:"):
                locked = int(line.split()[1]) > 0
    except OSError:
        pass
    return RealtimeState(policy=_POLICIES.get(os.sched_getscheduler(0), "unknown"),
                         priority=os.sched_getparam(0).sched_priority, memory_locked=locked,
                         cpu_affinity=tuple(sorted(os.sched_getaffinity(0))), warnings=tuple(warnings))


def _threads() -> list[int]:
    """Thread ids of this process, the calling thread first."""
    me = threading.get_native_id()
    try:
        others = [int(t) for t in os.listdir("/proc/self/task") if int(t) != me]
    except OSError:
        others = []
    return [me, *others]


def _why(err: OSError) -> str:
    return errno.errorcode.get(err.errno or 0, str(err.errno)) + f" ({os.strerror(err.errno or 0)})"


def _set_priority(priority: int) -> str:
    """SCHED_FIFO at ``priority`` for every thread; "" or the warning."""
    failed: OSError | None = None
    for tid in _threads():
        try:
            os.sched_setscheduler(tid, os.SCHED_FIFO, os.sched_param(priority))
        except ProcessLookupError:
            continue  # the thread ended meanwhile
        except OSError as err:
            failed = err
            if tid == threading.get_native_id():
                break  # refused for the calling thread: the others would be refused alike
    if failed is None:
        return ""
    return (f"thread_priority {priority}: SCHED_FIFO refused by the kernel: {_why(failed)}; running with normal "
            "scheduling (give the process CAP_SYS_NICE or a real-time priority limit, e.g. `ulimit -r 99` or "
            "'@realtime - rtprio 99' in /etc/security/limits.conf, as ros2_control_node needs)")


def _lock_memory() -> str:
    """mlockall(MCL_CURRENT | MCL_FUTURE); "" or the warning."""
    libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    if libc.mlockall(_MCL_CURRENT | _MCL_FUTURE) == 0:
        return ""
    err = OSError(ctypes.get_errno(), "")
    return (f"lock_memory: mlockall refused by the kernel: {_why(err)}; memory stays pageable (give the process "
            "CAP_IPC_LOCK or a larger locked-memory limit, e.g. `ulimit -l unlimited`)")


def _set_affinity(cpus: tuple[int, ...]) -> str:
    """Pin every thread to ``cpus``; "" or the warning."""
    for tid in _threads():
        try:
            os.sched_setaffinity(tid, cpus)
        except ProcessLookupError:
            continue
        except OSError as err:
            return (f"cpu_affinity {list(cpus)}: refused by the kernel: {_why(err)}; the CPUs this process may use "
                    f"are {sorted(os.sched_getaffinity(0))}")
    return ""


def apply_realtime(config: RealtimeConfig) -> RealtimeState:
    """Apply ``config`` to every thread of the calling process and read back what the kernel granted.

    Call it from the thread that will run the control callbacks (the spin thread). Nothing is asked of the kernel for
    a setting left at its default (priority 0, no locking, no affinity). A refusal (no permission, a CPU that does
    not exist or is not allowed) does not raise: the setting is left as it was and
    :attr:`RealtimeState.warnings` says what was refused, why, and how to allow it.

    Returns:
        the state after applying (:func:`current_state`), with the warnings.

    Raises:
        ValueError: ``config`` is not a RealtimeConfig (its values are validated when it is built).
    """
    if not isinstance(config, RealtimeConfig):
        raise ValueError(f"config = {config!r} must be a RealtimeConfig")
    warnings = []
    if config.cpu_affinity:
        warnings.append(_set_affinity(config.cpu_affinity))
    if config.lock_memory:
        warnings.append(_lock_memory())
    if config.thread_priority > 0:
        warnings.append(_set_priority(config.thread_priority))
    return current_state(tuple(w for w in warnings if w))
