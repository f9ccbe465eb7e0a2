"""Health checks of the launch-file tests (test_launch_files.py): judged from /diagnostics and the nodes' logs."""

from __future__ import annotations

import time
from collections.abc import Callable

__all__ = ["check_controller_health"]


def _log_time(line: str) -> float:
    """The wall time [s] of a ROS 2 console line ``[LEVEL] [sec.nsec] [node]: text``."""
    return float(line.split("] [", 2)[1])


def check_controller_health(statuses: list, controller_log: Callable[[], str], sim_log: Callable[[], str],
                            cut_window_s: float = 1.0) -> None:
    """The controller stayed healthy, or latched the safe state only because its loop was cut just before.

    Healthy: no ERROR on /diagnostics or in the controller's log; the last 5 statuses OK or late ticks, watchdog
    running. Else the only error is one safe-state fault on a tracking error or a position limit, and within
    ``cut_window_s`` [s] before it the controller's watchdog left "running" (its log) or sim_arm applied zero torque
    for want of a command (its log); every ERROR status names the safe state. The logs are callables: their lines
    come through pipes, read by other threads, and may lag /diagnostics by a moment (waited for, up to 5 s).

    Raises:
        AssertionError: naming the statuses or log lines that break it.
    """
    from diagnostic_msgs.msg import DiagnosticStatus

    messages = [(s.level, s.message) for s in statuses]
    diag_error = any(s.level == DiagnosticStatus.ERROR for s in statuses)

    def errors() -> list[str]:
        return [line for line in controller_log().splitlines() if line.startswith("[ERROR]")]

    def cuts(t_fault: float) -> list[str]:
        lines = [line for line in controller_log().splitlines() if "watchdog: running -> hold" in line]
        lines += [line for line in sim_log().splitlines() if "no effort command for" in line]
        return [line for line in lines if t_fault - cut_window_s <= _log_time(line) <= t_fault]

    deadline = time.monotonic() + 5.0
    while diag_error and not errors() and time.monotonic() < deadline:
        time.sleep(0.05)
    if not errors() and not diag_error:
        recent = statuses[-5:]
        assert all(s.level == DiagnosticStatus.OK or "late ticks" in s.message for s in recent), messages[-5:]
        assert all({kv.key: kv.value for kv in s.values}.get("watchdog") == "running" for s in recent), \
            [{kv.key: kv.value for kv in s.values}.get("watchdog") for s in recent]
        return
    fault = errors()
    assert len(fault) == 1 and "safe state at t =" in fault[0] and (
        "tracking error of" in fault[0] or "outside its URDF limits" in fault[0]), (fault, messages)
    assert all(s.message.startswith("safe state") for s in statuses if s.level == DiagnosticStatus.ERROR), messages
    t_fault = _log_time(fault[0])
    while not cuts(t_fault) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert cuts(t_fault), ("safe state without a cut loop in the second before it", fault[0],
                           [line for line in (controller_log() + "\n" + sim_log()).splitlines() if "WARN" in line])
