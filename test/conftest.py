"""Shared fixtures: per-run DDS isolation, process start/stop helpers, cleanup of /dev/shm/fastdds_* files."""

from __future__ import annotations

import glob
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SHARED_REAL = REPO.parent / "shared" / "data" / "real"

# DDS isolation for every process a test starts: loopback only, and one domain id per pytest run.
os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
os.environ.setdefault("ROS_DOMAIN_ID", str(random.Random(os.getpid()).randint(10, 99)))
os.environ.setdefault("AMENT_PREFIX_PATH", sys.prefix)
os.environ["PYTHONUNBUFFERED"] = "1"


def _fastdds_files() -> set[str]:
    return set(glob.glob("/dev/shm/fastdds_*")) | set(glob.glob("/dev/shm/sem.fastdds_*"))


@pytest.fixture(scope="session", autouse=True)
def _cleanup_fastdds_shm():
    """Remove the /dev/shm/fastdds_* files that processes of this run left behind (killed processes leave them)."""
    before = _fastdds_files()
    yield
    for path in _fastdds_files() - before:
        try:
            os.remove(path)
        except OSError:
            pass


def executable(name: str) -> str:
    """Path of an installed console script (node executable or deadzone-id); skips nothing: fails if missing."""
    path = shutil.which(name, path=str(Path(sys.prefix) / "bin")) or shutil.which(name)
    assert path, f"executable {name!r} not installed: run `make install` first"
    return path


class ProcessGroup:
    """Start real processes and make sure every one is gone at the end of the test."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.procs: list[tuple[subprocess.Popen, Path]] = []

    def start(self, args: list[str], name: str, env: dict | None = None) -> subprocess.Popen:
        log = self.tmp / f"{name}.log"
        proc = subprocess.Popen(
            args, stdout=log.open("w"), stderr=subprocess.STDOUT, env={**os.environ, **(env or {})},
            start_new_session=True,
        )
        self.procs.append((proc, log))
        return proc

    def log(self, proc: subprocess.Popen) -> str:
        for p, log in self.procs:
            if p is proc:
                return log.read_text()
        raise KeyError(proc)

    def stop(self, proc: subprocess.Popen, sig: int = signal.SIGINT, timeout: float = 10.0) -> int:
        if proc.poll() is None:
            proc.send_signal(sig)
            try:
                proc.wait(timeout)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(5)
        return proc.returncode

    def stop_all(self) -> None:
        for proc, _ in reversed(self.procs):
            self.stop(proc)


@pytest.fixture
def processes(tmp_path):
    """A ProcessGroup whose processes are interrupted (then killed) when the test ends."""
    group = ProcessGroup(tmp_path)
    yield group
    group.stop_all()


def wait_until(predicate, timeout: float, period: float = 0.05) -> bool:
    """Poll ``predicate`` until it returns True or ``timeout`` [s] passes; returns its last value."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(period)
    return bool(predicate())
