"""Start the nodes of a :class:`~.description.LaunchPlan` as child processes and stop them cleanly.

What ``ros2 launch`` does for the project's launch files, without launch/launch_ros: each node runs as its own
process (own session, so a terminal's Ctrl-C reaches the children only through the launcher, in order), its
stdout/stderr lines are prefixed with ``[label]``, and shutdown sends SIGINT to the nodes in reverse start order,
waits up to a timeout for each, then escalates to SIGTERM and SIGKILL (launch's ExecuteProcess does the same,
``sigterm_timeout``/``sigkill_timeout``); each SIGINT and SIGTERM is followed by SIGCONT, so that a node stopped
with SIGSTOP (a debugger, ^Z) handles it instead of waiting for SIGKILL.
"""

from __future__ import annotations

import collections
import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from ..errors import LaunchError
from .description import LaunchPlan, NodeSpec, load_launch_file

__all__ = ["STOP_SIGNALS", "LaunchedGraph", "NodeProcess", "TerminationSignal", "signals_as_interrupt"]

#: The signals that end a launcher, a demo or any ``deadzone-id`` command the way Ctrl-C does (children stopped).
STOP_SIGNALS: tuple[signal.Signals, ...] = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class TerminationSignal(KeyboardInterrupt):
    """Raised in the main thread by :func:`signals_as_interrupt` on SIGTERM or SIGHUP.

    A KeyboardInterrupt, so every ``finally`` and context manager that cleans up on Ctrl-C (a
    :class:`LaunchedGraph` stops its nodes) runs for ``timeout``'s SIGTERM and a closed terminal's SIGHUP too.

    Attributes:
        signum: the signal number received.
    """

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


@contextlib.contextmanager
def signals_as_interrupt() -> Iterator[None]:
    """Within the block, SIGTERM and SIGHUP raise :class:`TerminationSignal` in the main thread (once: a repeated
    signal during the cleanup that follows is reported on stderr and ignored, so the cleanup finishes); the previous
    handlers are restored afterwards. Outside the main thread (where Python allows no handlers) it does nothing.

    Without this, Python's default action for SIGTERM/SIGHUP ends the process without running any cleanup, and the
    nodes, which run in sessions of their own, outlive it.
    """
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    received: list[int] = []

    def handler(signum: int, _frame: object) -> None:
        if received:
            print(f"deadzone-id: {signal.Signals(signum).name} again; still stopping", file=sys.stderr)
            return
        received.append(signum)
        raise TerminationSignal(signum)

    previous = {s: signal.signal(s, handler) for s in (signal.SIGTERM, signal.SIGHUP)}
    try:
        yield
    finally:
        for s, h in previous.items():
            signal.signal(s, h)


@dataclass
class NodeProcess:
    """A started node.

    Attributes:
        spec: the node entry it came from.  label: the output prefix (unique within a graph).
        command: the command line it runs.  process: the child.
        lines: the last output lines (stdout and stderr merged), without the prefix.
        stop_requested: the launcher asked it to stop (an exit after this is expected).
        killed: it had to be killed (SIGKILL) during shutdown.
        lines_total: how many output lines it printed so far (``lines`` keeps only the last ones).
        info_total: how many of them are ``[INFO]`` log lines (start-up progress; a repeated warning is none).
    """

    spec: NodeSpec
    label: str
    command: list[str]
    process: subprocess.Popen
    lines: collections.deque
    stop_requested: bool = False
    killed: bool = False
    reader: threading.Thread | None = None
    lines_total: int = 0
    info_total: int = 0

    @property
    def returncode(self) -> int | None:
        """Exit status (negative: killed by that signal), or None while running."""
        return self.process.poll()

    def output(self) -> str:
        """The captured output lines, joined with newlines."""
        return "\n".join(self.lines)


class LaunchedGraph:
    """The nodes of a launch file running as child processes; a context manager that always stops them.

    Args:
        launch_file: path or file name in this package's ``launch/``, or an already parsed :class:`LaunchPlan`.
        launch_arguments: ``name -> value`` (as ``name:=value`` on the command line).
        sink: where prefixed output lines go (a text stream, or a callable taking one line); None: nowhere
            (the lines are still kept per node, see :meth:`output`).
        env: extra environment variables for the children (on top of ``os.environ``).
        keep_lines: how many output lines to keep per node.

    Raises:
        FileNotFoundError, LaunchError: from :func:`~.description.load_launch_file` (bad file, unknown argument).

    Example::

        with LaunchedGraph("sim.launch.yaml", {"publish_rate": "500"}) as graph:
            ...  # talk to the nodes over DDS
            graph.raise_if_died()
        # all nodes interrupted, then killed if they did not stop
    """

    def __init__(
        self,
        launch_file: str | Path | LaunchPlan,
        launch_arguments: Mapping[str, str] | None = None,
        *,
        sink: IO[str] | Callable[[str], None] | None = sys.stdout,
        env: Mapping[str, str] | None = None,
        keep_lines: int = 2000,
    ) -> None:
        if isinstance(launch_file, LaunchPlan):
            self.plan = launch_file
        else:
            self.plan = load_launch_file(launch_file, launch_arguments)
        self._sink = sink
        self._env = {**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})}
        self._keep = keep_lines
        self._lock = threading.Lock()
        self.nodes: list[NodeProcess] = []

    # ----------------------------------------------------------------------------------------------------- start
    def commands(self) -> list[list[str]]:
        """The command line of every node, in start order (what :meth:`start` runs).

        Raises:
            LaunchError: an executable cannot be found.
        """
        return [spec.command() for spec in self.plan.nodes]

    def start(self) -> LaunchedGraph:
        """Start every node in order; on any failure stop the ones already started and raise.

        Raises:
            LaunchError: an executable is missing or cannot be started (names the node and the command).
        """
        if self.nodes:
            raise LaunchError(f"{self.plan.file}: graph already started")
        labels: collections.Counter[str] = collections.Counter(spec.label for spec in self.plan.nodes)
        seen: collections.Counter[str] = collections.Counter()
        try:
            for spec in self.plan.nodes:
                label = spec.label
                if labels[label] > 1:
                    seen[label] += 1
                    label = f"{label}-{seen[label]}"
                command = spec.command()
                try:
                    proc = subprocess.Popen(
                        command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                        env=self._env, start_new_session=True, text=True, errors="replace", bufsize=1,
                    )
                except OSError as err:
                    raise LaunchError(f"{spec.source}: cannot start {command}: {err}") from err
                node = NodeProcess(spec, label, command, proc, collections.deque(maxlen=self._keep))
                node.reader = threading.Thread(target=self._pump, args=(node,), name=f"out-{label}", daemon=True)
                node.reader.start()
                self.nodes.append(node)
                self._emit(f"[launch] started {label} (pid {proc.pid}): {' '.join(command)}")
        except BaseException:
            self.shutdown()
            raise
        return self

    def __enter__(self) -> LaunchedGraph:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.shutdown(quiet_if_starting=bool(self.died()))

    # ---------------------------------------------------------------------------------------------------- output
    def _emit(self, line: str) -> None:
        sink = self._sink
        if sink is None:
            return
        with self._lock:
            write = getattr(sink, "write", None)
            if write is None:
                sink(line)  # type: ignore[operator]
            else:
                write(line + "\n")
                sink.flush()  # type: ignore[union-attr]

    def _pump(self, node: NodeProcess) -> None:
        stream = node.process.stdout
        assert stream is not None
        for raw in stream:
            line = raw.rstrip("\n")
            node.lines.append(line)
            node.lines_total += 1
            node.info_total += "[INFO]" in line
            self._emit(f"[{node.label}] {line}")
        stream.close()

    def node(self, label: str) -> NodeProcess:
        """Return the started node with this label; raises KeyError listing the labels."""
        for node in self.nodes:
            if node.label == label:
                return node
        raise KeyError(f"no node '{label}' in this graph (nodes: {[n.label for n in self.nodes]})")

    def output(self, label: str) -> str:
        """The captured output of node ``label``."""
        return self.node(label).output()

    # --------------------------------------------------------------------------------------------------- monitor
    def exited(self) -> list[NodeProcess]:
        """Nodes that have exited so far."""
        return [n for n in self.nodes if n.returncode is not None]

    def died(self) -> list[NodeProcess]:
        """Nodes that exited on their own with a non-zero status or a signal (not asked to stop)."""
        return [n for n in self.nodes if not n.stop_requested and n.returncode not in (None, 0)]

    def raise_if_died(self) -> None:
        """Raise LaunchError naming every node that died, with its status and its last output lines."""
        dead = self.died()
        if dead:
            # a dead node's last lines may still be in its pipe (measured under load: "dying" missing from the
            # message): its reader ends at the end of the pipe (at most 2 s, should children hold the pipe open)
            for n in dead:
                if n.reader is not None:
                    n.reader.join(2.0)
            details = "; ".join(
                f"{n.label} exited with status {n.returncode}; last output:\n  " + "\n  ".join(list(n.lines)[-15:])
                for n in dead
            )
            raise LaunchError(f"{self.plan.file.name}: node(s) died: {details}")

    def wait(self, timeout: float | None = None, *, stop: threading.Event | None = None, period: float = 0.05) -> str:
        """Block until a node dies, every node has exited, ``stop`` is set, or ``timeout`` [s] passes.

        Returns:
            ``"died"``, ``"all-exited"``, ``"shutdown"`` (a node marked ``on_exit: shutdown`` exited with status 0),
            ``"stopped"`` or ``"timeout"``.
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            if self.died():
                return "died"
            if any(n.spec.on_exit == "shutdown" and n.returncode == 0 for n in self.nodes):
                return "shutdown"
            if self.nodes and len(self.exited()) == len(self.nodes):
                return "all-exited"
            if stop is not None and stop.is_set():
                return "stopped"
            if deadline is not None and time.monotonic() >= deadline:
                return "timeout"
            time.sleep(period)

    # -------------------------------------------------------------------------------------------------- shutdown
    def send_signal(self, sig: int) -> None:
        """Send ``sig`` to every running node (its whole process group), in reverse start order."""
        for node in reversed(self.nodes):
            if node.returncode is None:
                node.stop_requested = True
                try:
                    os.killpg(node.process.pid, sig)
                except ProcessLookupError:
                    pass

    def shutdown(self, timeout: float = 5.0, sigterm_timeout: float = 2.0, *,
                 quiet_if_starting: bool = False) -> dict[str, int]:
        """Stop the nodes in reverse start order: SIGINT, wait ``timeout`` [s], SIGTERM, wait ``sigterm_timeout``
        [s], SIGKILL. Safe to call more than once.

        With ``quiet_if_starting`` (a launch that failed), a node that has printed nothing yet (still importing) gets
        SIGTERM first: SIGINT would end its import with a long KeyboardInterrupt traceback that buries the real error
        of the node that failed; one line says it was stopped while starting.

        An interrupt (Ctrl-C, or SIGTERM/SIGHUP under :func:`signals_as_interrupt`) arriving during the shutdown does
        not leave nodes behind: the node being stopped is stopped again with short timeouts, the rest as usual, and the
        interrupt is raised afterwards.

        Returns:
            label -> exit status of every node.
        """
        pending: KeyboardInterrupt | None = None
        for node in reversed(self.nodes):
            waits = (timeout, sigterm_timeout)
            first = signal.SIGTERM if quiet_if_starting and not node.lines_total else signal.SIGINT
            if first == signal.SIGTERM and node.returncode is None:
                self._emit(f"[launch] {node.label} was still starting (no output yet): stopped with SIGTERM")
            while True:
                try:
                    self._stop_node(node, *waits, first=first)
                    break
                except KeyboardInterrupt as err:
                    pending = pending or err
                    waits = (0.5, 0.5)
        for node in self.nodes:
            if node.returncode is not None and node.stop_requested:
                self._emit(f"[launch] {node.label} exited with status {node.returncode}")
        if pending is not None:
            raise pending
        return {n.label: int(n.process.returncode) for n in self.nodes if n.process.returncode is not None}

    def _stop_node(self, node: NodeProcess, timeout: float, sigterm_timeout: float,
                   first: signal.Signals = signal.SIGINT) -> None:
        proc = node.process
        if proc.poll() is None:
            node.stop_requested = True
            steps = ((signal.SIGINT, timeout), (signal.SIGTERM, sigterm_timeout), (signal.SIGKILL, 5.0))
            for sig, wait_s in steps[[s for s, _ in steps].index(first):]:
                if sig == signal.SIGKILL:
                    node.killed = True
                try:
                    os.killpg(proc.pid, sig)  # the node's own session: it and nothing else
                    if sig != signal.SIGKILL:
                        os.killpg(proc.pid, signal.SIGCONT)  # a stopped node (SIGSTOP, ^Z) must run to handle it
                except ProcessLookupError:
                    break
                try:
                    proc.wait(wait_s)
                    break
                except subprocess.TimeoutExpired:
                    self._emit(f"[launch] {node.label} did not stop {wait_s:g} s after {signal.Signals(sig).name}")
        if node.reader is not None:
            node.reader.join(2.0)
