"""Where coarse cells of work run: in this process (default) or as Ray core tasks on a local or remote cluster.

A *cell* is one unit of an experiment that trains its networks batched (one ``compare``; one sweep cell: a bag set x
a data fraction x an alpha, its methods x seeds batched as in ``compare``). Cells are coarse on purpose: measured on
2 cores (issue 24), six seeded 9-256-256-3 trainings took 12.6 s in-process, 21 s as Ray core tasks and 136 s as Ray
Tune trials, and every path gave bit-identical losses with one torch thread and a seed per task. So one Ray task per
cell, never one per network, and no Ray Tune.

Ray (an optional extra, ``make install-ray``) is imported only here and only when ``engine="ray"``. Choices:

- ``address``: ``"local"`` starts a fresh local cluster (never attaches to a leftover one), with an explicit
  ``num_cpus`` (cgroups can make Ray count the host's CPUs) and no dashboard; ``"auto"`` or ``"HOST:PORT"``
  attach to a running cluster (``ray start --head``). None: ``RAY_ADDRESS`` when it is set, as Ray users expect,
  else ``"local"``. ``ray.shutdown()`` runs in a ``finally``. An address is checked before ``ray.init``
  (:func:`check_address`): a HOST:PORT (or ``ray://`` address) where nothing accepts a TCP connection within
  :data:`PROBE_TIMEOUT_S` is refused at once, naming what to start (Ray itself retries such an address for about a
  minute, silently); ``ray://`` (Ray Client) without the ``ray[client]`` extra is refused naming the two ways on.
  While Ray is connecting or waiting (C++ code that holds Python's signal handlers back), SIGTERM, SIGHUP and SIGINT
  still end the command: a watcher thread woken by the signal (``signal.set_wakeup_fd``) ends the process
  :data:`SIGNAL_GRACE_S` after the signal if it has not ended by itself (:func:`signals_end_ray_waits`). Inside
  :func:`engine_session` every ``run_cells`` uses the session's one connection (a command that loads its bags as
  tasks, then trains, starts one cluster).
- each task sets one torch thread and seeds torch, numpy and random from the cell's key; results are returned
  through Ray's object store, so a cell may run on another node (its files travel back: :func:`pack_dir`).
- a task that raises an unexpected exception or whose worker dies is retried ``max_retries`` times; a
  :class:`~deadzone_id_ros.errors.DeadzoneIdError` (bad data or configuration: the same on every try) is not
  retried. Either way the cell is reported failed in its :class:`CellOutcome` and the other cells go on.
"""

from __future__ import annotations

import io
import os
import random
import signal
import socket
import sys
import tarfile
import threading
import time
import traceback
import zlib
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar

from ..errors import ConfigError, DeadzoneIdError

__all__ = ["ENGINES", "PROBE_TIMEOUT_S", "RAY_MISSING", "SIGNAL_GRACE_S", "CellOutcome", "check_address",
           "engine_session", "pack_dir", "require_ray", "run_cells", "signals_end_ray_waits", "unpack_dir"]

#: Ray's setting of its workers' niceness (default 15), read by the raylet a local cluster starts from this process.
WORKER_NICENESS_ENV = "RAY_worker_niceness"

ENGINES = ("local", "ray")
RAY_MISSING = ("--engine ray needs Ray, an optional extra: `make install-ray` in a checkout, or "
               "`pip install 'deadzone_id_ros[ray]'`")

#: How long :func:`check_address` waits for a TCP connection to a cluster's address [s].
PROBE_TIMEOUT_S = 3.0
#: How long after SIGTERM/SIGHUP/SIGINT a command blocked in Ray may take to end by itself before it is ended [s].
SIGNAL_GRACE_S = 2.0

T = TypeVar("T")


@dataclass
class CellOutcome(Generic[T]):
    """What one cell gave.

    Attributes:
        key: the cell's name (its key in ``cells``).
        result: ``fn``'s return value, or None when the cell failed.
        error: the exception that ended the cell (the original one, not Ray's wrapper), or None.
        detail: the traceback or Ray's account of a worker death ("" when it succeeded).
        seconds: wall time from submission to the result [s] (with Ray: includes queueing).
    """

    key: str
    result: T | None = None
    error: BaseException | None = None
    detail: str = ""
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        """The cell finished and returned a result."""
        return self.error is None


def require_ray() -> Any:
    """The ``ray`` module. Raises ConfigError saying how to install it when it is missing."""
    try:
        import ray
    except ModuleNotFoundError as err:
        if err.name != "ray":
            raise
        raise ConfigError(RAY_MISSING) from err
    return ray


def cell_seed(key: str) -> int:
    """A stable 32-bit seed from a cell's key (crc32: the same on every node and Python run)."""
    return zlib.crc32(key.encode())


def _prepare_task(key: str) -> None:
    """Seed torch, numpy and random from ``key`` (the training code seeds its own generators as configured too)."""
    import numpy as np
    import torch

    seed = cell_seed(key)
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


class _Failed:
    """A cell's DeadzoneIdError carried back as a value, so that Ray does not retry it."""

    def __init__(self, error: DeadzoneIdError, detail: str) -> None:
        self.error, self.detail = error, detail


def _ray_task(fn: Callable[[Any], Any], key: str, arg: Any) -> Any:
    """The body of one Ray task: one torch thread, the cell's seed, then ``fn(arg)``."""
    import torch

    torch.set_num_threads(1)
    _prepare_task(key)
    try:
        return fn(arg)
    except DeadzoneIdError as err:
        return _Failed(err, traceback.format_exc())


def _run_local(fn: Callable[[Any], T], cells: Mapping[str, Any],
               on_done: Callable[[CellOutcome[T]], None]) -> list[CellOutcome[T]]:
    out = []
    for key, arg in cells.items():
        t0 = time.perf_counter()
        _prepare_task(key)
        try:
            outcome = CellOutcome(key, fn(arg), seconds=time.perf_counter() - t0)
        except Exception as err:  # noqa: BLE001 - reported in the outcome; the other cells go on
            outcome = CellOutcome(key, None, err, traceback.format_exc(), time.perf_counter() - t0)
        on_done(outcome)
        out.append(outcome)
    return out


def check_address(addr: str, timeout_s: float = PROBE_TIMEOUT_S) -> None:
    """Refuse a Ray address that cannot work, before ``ray.init`` (which retries one silently for about a minute).

    Args:
        addr: ``"local"`` and ``"auto"`` pass; ``"HOST:PORT"`` (a head node's GCS address) and ``"ray://HOST[:PORT]"``
            (Ray Client, port 10001 by default) are probed with one TCP connection.
        timeout_s: how long the probe waits [s].

    Raises:
        ConfigError: ``ray://`` without the ``ray[client]`` extra; an address that is not HOST:PORT; a port where
            nothing accepts a connection within ``timeout_s`` (refused, timed out, unknown host); each message says
            what to start or use instead.
    """
    if addr in ("local", "auto"):
        return
    client = addr.startswith("ray://")
    if client:
        try:
            from ray import __version__ as version
            from ray._private.utils import get_ray_client_dependency_error
            missing = get_ray_client_dependency_error()
        except ImportError as err:  # a Ray without the helper: it cannot run the client either
            missing, version = err, "VERSION"
        if missing is not None:
            raise ConfigError(f"--address {addr}: a Ray Client address, but Ray Client needs the extra ray[client] "
                              f"({missing}); this project installs Ray core only. Give the head node's HOST:PORT "
                              "(what `ray start --head` prints, port 6379 by default) from a machine that can reach "
                              f"it, or install the extra: pip install 'ray[client]=={version}'")
    hostport = addr[len("ray://"):] if client else addr
    host, sep, port_text = hostport.rpartition(":")
    if not sep and client:
        host, port_text = hostport, "10001"
    host = host.strip("[]")
    if not host or not port_text.isdigit() or not 0 < int(port_text) < 65536:
        raise ConfigError(f"--address {addr}: expected local, auto, HOST:PORT (a head node's address, e.g. "
                          "127.0.0.1:6379) or ray://HOST:PORT")
    port = int(port_text)
    try:
        with socket.create_connection((host, port), timeout=timeout_s):
            pass
    except OSError as err:
        why = "timed out" if isinstance(err, TimeoutError) else (err.strerror or str(err))
        raise ConfigError(f"--address {addr}: nothing accepts connections at {host}:{port} ({why}; probed for "
                          f"{timeout_s:g} s). Start the cluster's head there (`ray start --head --port {port}` on "
                          f"{host}) and give the address it prints, or use --address local for a fresh local "
                          "cluster") from err


@contextmanager
def signals_end_ray_waits(grace_s: float = SIGNAL_GRACE_S) -> Iterator[None]:
    """Within the block, SIGTERM, SIGHUP and SIGINT end the process even while Ray's C++ code blocks the main thread.

    Python runs signal handlers only between bytecodes of the main thread; ``ray.init`` connecting to a cluster and
    ``ray.wait`` block in C++ for as long as Ray likes (``ray.init`` also installs its own SIGTERM handler). The
    signal's number is written to a socket (``signal.set_wakeup_fd``) that a watcher thread reads; if the block has
    not ended ``grace_s`` [s] later, the watcher prints the signal on stderr and ends the process with status
    128 + signal (``os._exit``; the processes of a local cluster this command started end with it, as Ray makes them
    share the driver's fate). The handlers in force before are restored afterwards. Outside the main thread it does
    nothing.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    wanted = {int(signal.SIGTERM), int(signal.SIGHUP), int(signal.SIGINT)}
    handlers = {s: signal.getsignal(s) for s in wanted}
    reader, writer = socket.socketpair()
    writer.setblocking(False)
    previous_fd = signal.set_wakeup_fd(writer.fileno(), warn_on_full_buffer=False)
    done = threading.Event()

    def watch() -> None:
        while not done.is_set():
            try:
                data = reader.recv(64)
            except OSError:
                return
            for signum in data:
                if signum in wanted and not done.wait(grace_s):
                    print(f"deadzone-id: {signal.Signals(signum).name} received while waiting on Ray; stopped",
                          file=sys.stderr, flush=True)
                    os._exit(128 + signum)

    watcher = threading.Thread(target=watch, name="ray_signal_watch", daemon=True)
    watcher.start()
    try:
        yield
    finally:
        done.set()
        signal.set_wakeup_fd(previous_fd)
        writer.send(b"\0")  # wake the watcher (0 is no signal)
        watcher.join(1.0)
        reader.close()
        writer.close()
        for s, h in handlers.items():  # ray.init replaces SIGTERM's handler with its own sys.exit
            if h is not None:
                signal.signal(s, h)


def _init_ray(ray: Any, address: str | None, num_cpus: int | None, log: Callable[[str], None]) -> None:
    """``ray.init`` as the module docstring says (the address checked first: :func:`check_address`)."""
    addr = address or os.environ.get("RAY_ADDRESS") or "local"
    check_address(addr)
    kwargs: dict[str, Any] = {"address": addr, "include_dashboard": False, "log_to_driver": True}
    if addr == "local":
        kwargs["num_cpus"] = num_cpus or len(os.sched_getaffinity(0))
        # Ray starts its workers at niceness 15 (RAY_worker_niceness): on a machine that other work keeps busy they
        # then get ~2 % of a core (measured: a compare task stalled for minutes beside 4 busy processes on 2 cores).
        # The cells are this command's whole job, so they compete as the in-process engine would, at niceness 0.
        os.environ.setdefault(WORKER_NICENESS_ENV, "0")
    elif num_cpus is not None:
        raise ConfigError(f"num_cpus = {num_cpus}: the CPUs of an existing cluster (address {addr!r}) are set by "
                          "`ray start --num-cpus`, not here")
    t0 = time.perf_counter()
    main = threading.current_thread() is threading.main_thread()
    sigterm = signal.getsignal(signal.SIGTERM) if main else None
    try:
        context = ray.init(**kwargs)
    except ConnectionError as err:
        raise ConfigError(f"--address {addr}: no running Ray cluster found ({err}); start one with `ray start --head` "
                          "or use --address local") from err
    finally:
        if sigterm is not None:  # ray.init put its own in (sys.exit): the command's cleanup on SIGTERM comes back
            signal.signal(signal.SIGTERM, sigterm)
    info = getattr(context, "address_info", {}) or {}
    log(f"ray: {'started a local cluster' if addr == 'local' else f'attached to {addr}'} in "
        f"{time.perf_counter() - t0:.1f} s; {ray.cluster_resources().get('CPU', 0):g} CPUs; session "
        f"{info.get('session_dir', '?')}")


def _run_ray(fn: Callable[[Any], T], cells: Mapping[str, Any], address: str | None, num_cpus: int | None,
             max_retries: int, on_done: Callable[[CellOutcome[T]], None],
             log: Callable[[str], None]) -> list[CellOutcome[T]]:
    ray = require_ray()
    owned = not ray.is_initialized()  # else: inside engine_session, which shuts it down
    with signals_end_ray_waits():
        if owned:
            _init_ray(ray, address, num_cpus, log)
        return _wait_for_cells(ray, fn, cells, max_retries, on_done, owned)


def _wait_for_cells(ray: Any, fn: Callable[[Any], T], cells: Mapping[str, Any], max_retries: int,
                    on_done: Callable[[CellOutcome[T]], None], owned: bool) -> list[CellOutcome[T]]:
    """Submit one task per cell, collect the outcomes as they come; ``ray.shutdown()`` at the end when ``owned``."""
    from ray.exceptions import RayError, RayTaskError

    try:
        remote = ray.remote(num_cpus=1, max_retries=max_retries, retry_exceptions=True)(_ray_task)
        fn_ref = ray.put(fn)
        t0 = time.perf_counter()
        refs = {remote.remote(fn_ref, key, arg): key for key, arg in cells.items()}
        done: dict[str, CellOutcome[T]] = {}
        pending = list(refs)
        while pending:
            ready, pending = ray.wait(pending, num_returns=1)
            key = refs[ready[0]]
            try:
                value = ray.get(ready[0])
                if isinstance(value, _Failed):
                    outcome: CellOutcome[T] = CellOutcome(key, None, value.error, value.detail)
                else:
                    outcome = CellOutcome(key, value)
            except RayTaskError as err:  # the task raised on every try: hand back the original exception
                cause = err.cause if isinstance(getattr(err, "cause", None), BaseException) else err
                outcome = CellOutcome(key, None, cause, str(err))
            except RayError as err:  # worker died on every try, node lost, object lost
                outcome = CellOutcome(key, None, err, str(err))
            outcome.seconds = time.perf_counter() - t0
            on_done(outcome)
            done[key] = outcome
        return [done[k] for k in cells]
    finally:
        if owned:
            ray.shutdown()


@contextmanager
def engine_session(engine: str, address: str | None = None, num_cpus: int | None = None,
                   log: Callable[[str], None] = print) -> Iterator[None]:
    """With ``engine="ray"``: connect to Ray once (``address`` and ``num_cpus`` as in :func:`run_cells`) for every
    :func:`run_cells` inside the block, and ``ray.shutdown()`` at its end, also on errors; with "local": nothing.

    Raises:
        ConfigError: as :func:`run_cells` (an unknown engine, Ray missing, a bad ``address`` / ``num_cpus``).
    """
    if engine not in ENGINES:
        raise ConfigError(f"engine = {engine!r} must be one of {list(ENGINES)}")
    if engine == "local":
        yield
        return
    ray = require_ray()
    with signals_end_ray_waits():
        _init_ray(ray, address, num_cpus, log)
        try:
            yield
        finally:
            ray.shutdown()


def run_cells(fn: Callable[[Any], T], cells: Mapping[str, Any], *, engine: str = "local",
              address: str | None = None, num_cpus: int | None = None, max_retries: int = 2,
              on_done: Callable[[CellOutcome[T]], None] | None = None,
              log: Callable[[str], None] = print) -> list[CellOutcome[T]]:
    """Run ``fn(arg)`` for every ``key: arg`` of ``cells``; one outcome per cell, in the order of ``cells``.

    Args:
        fn: a module-level function that every Ray node can import (the package installed there: Ray pickles it by
            reference); its return value and ``arg`` must pickle.
        cells: {cell key: argument}; the key seeds the task (:func:`cell_seed`) and names it in the outcome.
        engine: ``"local"`` (in this process, one cell after the other) or ``"ray"`` (one Ray task per cell).
        address: Ray only: ``"local"``, ``"auto"``, ``"HOST:PORT"``, or None (``RAY_ADDRESS``, else local).
        num_cpus: Ray with a local cluster only: its CPUs (default: the CPUs this process may use).
        max_retries: Ray only: tries after the first for a worker death or an unexpected exception.
        on_done: called with each outcome as it arrives (in completion order), e.g. to write a cell's report.
        log: progress messages (cluster start, session directory).

    Raises:
        ConfigError: an unknown engine; Ray missing (:data:`RAY_MISSING`); ``num_cpus`` with an existing cluster;
            ``address`` ``"auto"`` with no cluster running (Ray's ConnectionError; a HOST:PORT where nothing listens
            is waited on by Ray for minutes first).
    """
    if engine not in ENGINES:
        raise ConfigError(f"engine = {engine!r} must be one of {list(ENGINES)}")
    if max_retries < 0:
        raise ConfigError(f"max_retries = {max_retries} must be >= 0")
    on_done = on_done or (lambda _o: None)
    if engine == "local":
        return _run_local(fn, cells, on_done)
    return _run_ray(fn, cells, address, num_cpus, max_retries, on_done, log)


def pack_dir(path: str | Path) -> bytes:
    """The files under ``path`` as an in-memory tar archive (gzip), so that a cell's output can travel back from
    another node through Ray's object store."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        tar.add(str(path), arcname=".")
    return buf.getvalue()


def unpack_dir(archive: bytes, dest: str | Path) -> None:
    """Write :func:`pack_dir`'s archive under ``dest`` (created); refuses members that would land outside it."""
    Path(dest).mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(archive), mode="r:gz") as tar:
        tar.extractall(str(dest), filter="data")
