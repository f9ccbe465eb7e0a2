"""Shared fixtures: per-run DDS isolation, process start/stop helpers, cleanup of /dev/shm/fastdds_* files, and the
test-side ROS node (``ros_probe``) that tests use to talk to the node processes."""

from __future__ import annotations

import glob
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parent.parent
SHARED_REAL = REPO.parent / "shared" / "data" / "real"

# DDS isolation for every process a test starts: loopback only, and one domain id per pytest run.
os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
os.environ.setdefault("ROS_DOMAIN_ID", str(random.Random(os.getpid()).randint(10, 99)))
os.environ.setdefault("AMENT_PREFIX_PATH", sys.prefix)
os.environ["PYTHONUNBUFFERED"] = "1"


def _own_domain() -> None:
    """Leave a ROS domain that a process on this host already uses (another test run, a user's graph): two graphs in
    one domain exchange /joint_states and commands (measured: a replay test answered with another suite's commands
    when two suites ran at once with colliding ids). Prints the move."""
    from deadzone_id_ros.launching.live import domains_in_use

    busy = domains_in_use()
    domain = int(os.environ["ROS_DOMAIN_ID"])
    free = [d for d in range(10, 100) if d not in busy]
    if domain in busy and free:
        os.environ["ROS_DOMAIN_ID"] = str(random.Random(os.getpid()).choice(free))
        print(f"conftest: ROS_DOMAIN_ID {domain} is in use on this host; this run uses {os.environ['ROS_DOMAIN_ID']}",
              file=sys.stderr)


_own_domain()


def _erd_installed() -> bool:
    import importlib.metadata

    from deadzone_id_ros.robot import ERD_DISTRIBUTION

    try:
        importlib.metadata.distribution(ERD_DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        return False
    return True


#: Skip a test that needs the optional example-robot-data models (the Panda, the SO-101, UR arms).
needs_erd = pytest.mark.skipif(not _erd_installed(), reason="example-robot-data not installed (make test installs it "
                               "from requirements-robots.txt)")


def _fastdds_files() -> set[str]:
    return set(glob.glob("/dev/shm/fastdds_*")) | set(glob.glob("/dev/shm/sem.fastdds_*"))


def held_fastdds_files() -> set[str]:
    """/dev/shm/fastdds_* (and sem.fastdds_*) files that some live process holds open or mapped, with each
    segment's ``_el`` lock file."""
    held: set[str] = set()
    for fd in glob.glob("/proc/[0-9]*/fd/*"):
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if "/dev/shm/" in target and "fastdds_" in target:
            held.add(target)
    for maps in glob.glob("/proc/[0-9]*/maps"):
        try:
            text = Path(maps).read_text()
        except OSError:
            continue
        held.update(line.split()[-1] for line in text.splitlines() if "/dev/shm/" in line and "fastdds_" in line)
    return held | {f"{h}_el" for h in held}


@pytest.fixture(scope="session", autouse=True)
def _cleanup_fastdds_shm():
    """Remove the /dev/shm/fastdds_* files that processes of this run left behind (killed processes leave them).

    Only files no live process holds: a file that appeared during this session may belong to another test run
    working in parallel (another checkout, another user), and deleting a segment or port file under a running
    participant cuts every participant that starts later off from it (measured: nodes of parallel runs stopped
    receiving /joint_states and /clock).
    """
    before = _fastdds_files()
    yield
    for path in _fastdds_files() - before - held_fastdds_files():
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
                try:  # every node of the group prints its threads' stacks into its log (init_ros)
                    os.killpg(proc.pid, signal.SIGUSR1)
                except ProcessLookupError:
                    pass
                time.sleep(0.5)
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


#: Wall seconds without any progress after which a progress-based wait in a test fails [s].
STALL_TIMEOUT = 30.0


def wait_for_progress(done: Callable[[], bool], progress: Callable[[], Any], stall_timeout: float = STALL_TIMEOUT,
                      period: float = 0.05, log: Callable[[], str] = lambda: "") -> None:
    """Poll until ``done()``; fail the test (with ``log()``) only when ``progress()`` (simulated time, a count) has
    not changed for ``stall_timeout`` wall seconds. No wall-clock deadline: a slow machine only takes longer."""
    last, changed = progress(), time.monotonic()
    while not done():
        time.sleep(period)
        now = progress()
        if now != last:
            last, changed = now, time.monotonic()
        elif time.monotonic() - changed > stall_timeout:
            raise AssertionError(f"no progress for {stall_timeout:g} s (stuck at {now!r})\n{log()}")


def wait_until(predicate, timeout: float, period: float = 0.05) -> bool:
    """Poll ``predicate`` until it returns True or ``timeout`` [s] passes; returns its last value."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(period)
    return bool(predicate())


class RosProbe:
    """A test-side rclpy node in its own context: records topics, publishes, calls services.

    rclpy is imported on construction only, so tests that need no ROS graph do not load it.
    """

    def __init__(self, name: str = "test_probe") -> None:
        import rclpy
        from rclpy.executors import SingleThreadedExecutor

        self._rclpy = rclpy
        self.context = rclpy.Context()
        rclpy.init(context=self.context)
        self.node = rclpy.create_node(name, context=self.context)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        self.messages: dict[str, list[Any]] = {}
        self._clients: dict[str, Any] = {}
        self.step = 0.001  # default spin_once timeout [s]: how long an idle spin waits before checking again

    def listen(self, topic: str, msg_type: type, qos: int = 100,
               keep: Callable[[Any], Any] | None = None) -> list[Any]:
        """Subscribe to ``topic``; return the list (also ``messages[topic]``) that receives, per message,
        ``keep(msg)`` or by default ``(arrival time.monotonic() [s], msg)``."""
        store: list[Any] = []
        self.messages[topic] = store
        if keep is None:
            self.node.create_subscription(msg_type, topic, lambda m: store.append((time.monotonic(), m)), qos)
        else:
            self.node.create_subscription(msg_type, topic, lambda m: store.append(keep(m)), qos)
        return store

    def publisher(self, msg_type: type, topic: str, qos: int = 10):  # noqa: ANN201 - an rclpy Publisher
        """Create a publisher on the probe node."""
        return self.node.create_publisher(msg_type, topic, qos)

    def spin(self, seconds: float, until: Callable[[], bool] | None = None, step: float | None = None,
             tick: Callable[[], None] | None = None) -> bool:
        """Process callbacks for up to ``seconds`` (``spin_once`` with timeout ``step`` [s], default ``self.step``),
        calling ``tick()`` before each; stop early once ``until()`` is true. Returns ``until()`` (True without one)."""
        step = self.step if step is None else step
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            if tick is not None:
                tick()
            self.executor.spin_once(timeout_sec=step)
            if until is not None and until():
                return True
        return until() if until is not None else True

    def drain(self, quiet: float = 0.5) -> int:
        """Take every message still queued for this probe: spin until one ``spin_once`` of ``quiet`` [s] adds
        nothing to any listened topic. Call it once the publishers are stopped, so that a backlog of an earlier run
        (a probe that fell behind on a busy machine keeps up to its history depth) is not read as the next run's.
        Returns how many messages it took."""
        def total() -> int:
            return sum(len(v) for v in self.messages.values())

        start = total()
        while True:
            before = total()
            self.executor.spin_once(timeout_sec=quiet)
            if total() == before:
                return total() - start

    def client(self, srv_type: type, service: str):  # noqa: ANN201 - an rclpy Client
        """The probe's client of ``service``, created on first use and kept (a new one would need discovery again)."""
        if service not in self._clients:
            self._clients[service] = self.node.create_client(srv_type, service)
        return self._clients[service]

    def call(self, srv_type: type, service: str, request: Any = None, timeout: float = 30.0, attempts: int = 1,
             log: Callable[[], str] = lambda: "") -> Any:
        """Call ``service`` and return the response, spinning (so the topics keep flowing) while it waits.

        A request sent while the service's reader is still matching can be lost (a DDS race right after discovery on
        a loaded machine); with ``attempts`` > 1 an unanswered request is withdrawn after ``timeout / attempts`` [s]
        and sent again. Fails the test naming the service (and ``log()``) otherwise.
        """
        client = self.client(srv_type, service)
        assert self.spin(timeout, until=client.service_is_ready), f"{service} not available\n{log()}"
        for _ in range(attempts):
            future = client.call_async(request if request is not None else srv_type.Request())
            if self.spin(timeout / attempts, until=future.done):
                return future.result()
            client.remove_pending_request(future)
        raise AssertionError(f"{service} did not answer {attempts} request(s) in {timeout:g} s\n{log()}")

    def spin_for_counts(self, counts: Callable[[], tuple[int, ...]], targets: tuple[int, ...],
                        stall_timeout: float = STALL_TIMEOUT, log: Callable[[], str] = lambda: "") -> tuple[int, ...]:
        """Spin until every ``counts()`` entry reaches its ``targets`` entry; returns the counts.

        No wall-clock window: a slow machine only takes longer. Fails the test (naming the counts and ``log()``)
        only when no count has grown for ``stall_timeout`` wall seconds, i.e. the flow stopped.
        """
        last, changed = counts(), time.monotonic()
        while any(c < t for c, t in zip(last, targets)):
            self.executor.spin_once(timeout_sec=0.01)
            now = counts()
            if now != last:
                last, changed = now, time.monotonic()
            elif time.monotonic() - changed > stall_timeout:
                raise AssertionError(f"counts {now} stopped growing for {stall_timeout:g} s short of {targets}\n"
                                     f"{log()}")
        return last

    def close(self) -> None:
        """Destroy the node and shut its context down."""
        self.node.destroy_node()
        self._rclpy.try_shutdown(context=self.context)


@pytest.fixture
def ros_probe():
    """A :class:`RosProbe` named ``test_probe``, closed when the test ends."""
    probe = RosProbe()
    yield probe
    probe.close()
