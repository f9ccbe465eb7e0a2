"""Waiting on a run whose time the simulator owns: fail on a stall of progress, never on a wall-clock deadline.

A lockstep run takes as long as the machine needs: on a busy or slow machine each simulated millisecond costs more
wall time, and that is not an error. What is an error is no progress at all. :class:`ProgressWatch` keeps the wall
time of the last change of a progress key (simulated time, or before simulated time starts, the count of output
lines and CPU time of the starting processes) and says when it has not changed for ``stall_timeout`` seconds.
(Core, no rclpy: the simulated time comes from :class:`deadzone_id_ros.launching.sim_time_listener.SimTimeListener` or
stamps the caller observes.)
"""

from __future__ import annotations

import os
import time
from collections.abc import Hashable
from pathlib import Path

from ..errors import DataError

__all__ = ["DEFAULT_STALL_TIMEOUT", "ProgressWatch", "StallError", "cpu_ticks", "domain_processes", "process_state",
           "udp_sockets"]

#: Wall seconds without any progress after which a lockstep wait gives up [s].
DEFAULT_STALL_TIMEOUT = 30.0

_STATES = {"R": "running", "S": "sleeping", "D": "in uninterruptible I/O", "T": "stopped (SIGSTOP)",
           "t": "stopped by a tracer", "Z": "a zombie", "X": "dead", "I": "idle"}


class StallError(DataError):
    """Simulated time (or the start-up before it) made no progress for the stall timeout; the message says where
    it stalled: which process, the last simulated time and the log."""


class ProgressWatch:
    """The wall time since a progress key last changed.

    Args:
        stall_timeout: wall seconds without a change after which :meth:`stalled` is true [s] (> 0).

    Raises:
        ValueError: ``stall_timeout`` is not positive.
    """

    def __init__(self, stall_timeout: float = DEFAULT_STALL_TIMEOUT) -> None:
        if not stall_timeout > 0:
            raise ValueError(f"stall_timeout = {stall_timeout} must be > 0 s")
        self.stall_timeout = float(stall_timeout)
        self._key: Hashable = object()
        self._changed = time.monotonic()

    def update(self, key: Hashable) -> bool:
        """Record the current progress key; returns True when it differs from the last one (progress)."""
        if key == self._key:
            return False
        self._key, self._changed = key, time.monotonic()
        return True

    def stalled_for(self) -> float:
        """Wall seconds since the key last changed [s]."""
        return time.monotonic() - self._changed

    def stalled(self) -> bool:
        """The key has not changed for ``stall_timeout`` seconds."""
        return self.stalled_for() >= self.stall_timeout


def process_state(pid: int) -> str:
    """The scheduler state of process ``pid`` in words ("running", "sleeping", "stopped (SIGSTOP)", ...), from
    /proc/PID/stat; "gone" when it no longer exists, "unknown" where /proc cannot tell."""
    try:
        stat = open(f"/proc/{pid}/stat").read()  # noqa: SIM115 - one short read
    except FileNotFoundError:
        return "gone"
    except OSError:
        return "unknown"
    code = stat.rsplit(")", 1)[-1].split()[0] if ")" in stat else "?"
    return _STATES.get(code, f"state {code}")


def cpu_ticks(pid: int) -> int:
    """CPU time process ``pid`` has used so far (user + system, in clock ticks, from /proc/PID/stat); 0 when it is
    gone. A process that imports, loads or computes uses CPU time; one that is stopped or deadlocked does not."""
    try:
        stat = open(f"/proc/{pid}/stat").read()  # noqa: SIM115 - one short read
    except OSError:
        return 0
    fields = stat.rsplit(")", 1)[-1].split()
    return int(fields[11]) + int(fields[12]) if len(fields) > 12 else 0


def udp_sockets() -> list[tuple[int, str]]:
    """(local port, socket inode) of every UDP socket on this host, from /proc/net/udp{,6}; empty where /proc is
    missing."""
    out: list[tuple[int, str]] = []
    for table in ("/proc/net/udp", "/proc/net/udp6"):
        try:
            rows = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            fields = row.split()
            if len(fields) > 9 and ":" in fields[1]:
                out.append((int(fields[1].rsplit(":", 1)[1], 16), fields[9]))
    return out


def domain_processes(domain: int) -> dict[int, str]:
    """The processes on this host with a UDP port of ROS domain ``domain`` open (RTPS ports [7400 + 250 d,
    7650 + 250 d)): pid -> command line (shortened). From /proc; empty where it cannot be read. Used to name the
    processes of another graph that share a run's domain (two graphs in one domain talk to each other)."""
    low = 7400 + 250 * int(domain)
    inodes = {f"socket:[{inode}]" for port, inode in udp_sockets() if low <= port < low + 250}
    found: dict[int, str] = {}
    for entry in os.listdir("/proc") if inodes else ():
        if not entry.isdigit():
            continue
        try:
            links = {os.readlink(f"/proc/{entry}/fd/{fd}") for fd in os.listdir(f"/proc/{entry}/fd")}
            if links & inodes:
                found[int(entry)] = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode()[:120]
        except OSError:
            continue
    return found
