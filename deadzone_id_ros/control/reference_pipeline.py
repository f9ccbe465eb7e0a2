"""Reference updates prepared off the control thread (core, no ROS), installed by the control thread on time.

Why: a reference window (the excitation node sends 2 s of points every 10 ms, 203 points, every 0.5 s) costs
milliseconds to turn into a sampler: deserializing the message (rclpy: 1.2-2.7 ms for 203 points, in one C call that
holds the GIL), converting the points, building the scipy piecewise polynomials (1-2 ms). Done in the controller's
only callback thread, it held up the 1 kHz /joint_states callbacks for 5-6 ms per update: measured under load with
SCHED_FIFO, the 5-8 states sent after each update were answered 2-6 ms late (bench/bench_realtime.py).

How: the control thread hands the serialized message to :class:`ReferencePipeline` (:meth:`~ReferencePipeline.submit`,
microseconds) and a worker thread decodes it (``decode``, pure Python: the GIL changes hands between its bytecodes,
every ``switch_interval``) and builds the sampler (:func:`.trajectory.build_reference`). With a real-time priority the
worker runs one below the thread that started it, so it never preempts the control thread but is not preempted by
busy normal processes while it holds the GIL.

Semantics (the switch time is fixed when the message arrives, not by the worker's speed): an update received at
``now`` takes effect at ``t_switch = now + lead`` [s] (controller clock): ticks stamped before ``t_switch`` follow the
previous reference, ticks from ``t_switch`` on the new one (:meth:`~ReferencePipeline.due`, called by the control
thread before each tick; a due update not prepared yet is waited for, at most ``wait`` [s] of wall time). The new
sampler is what ``FeedforwardController.set_reference(points, now=t_switch)`` would build just before
``t_switch``: started from the desired state of the reference in effect then (the previous update when it is still
pending, else the controller's at arrival), so q, dq and ddq stay continuous at the switch. An empty message
(``decode`` returns None) holds the desired state from ``t_switch`` on; a message ``decode`` refuses (ValueError or
SafetyError) keeps the previous reference and is reported with the reason.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from queue import SimpleQueue

import numpy as np

from ..errors import SafetyError
from .controller import FeedforwardController
from .trajectory import TrajectoryPoints, TrajectorySampler, build_reference

__all__ = ["ReferencePipeline", "ReferenceUpdate"]

Base = Callable[[float], tuple[np.ndarray, np.ndarray, np.ndarray]]


@dataclass(eq=False)
class ReferenceUpdate:
    """One reference update on its way to the controller.

    Attributes:
        now: when it arrived [s] (controller clock).
        t_switch: the controller time it takes effect [s].
        raw: the serialized message.
        previous: the update before it when that one was still pending at arrival (its result is the base).
        base: otherwise, the desired state it continues (``FeedforwardController.reference_base`` at arrival).
        done: set by the worker when the fields below are final.
        sampler: the new reference (None: hold, or refused).
        points: the decoded points (None: an empty message, or refused).
        error: why the message was refused ("" when it was not).
        prepare_s: the worker's time for it [s] (wall clock).
    """

    now: float
    t_switch: float
    raw: bytes
    previous: ReferenceUpdate | None
    base: Base | None
    done: threading.Event = field(default_factory=threading.Event)
    sampler: TrajectorySampler | None = None
    points: TrajectoryPoints | None = None
    error: str = ""
    prepare_s: float = 0.0
    follows: Base | None = None  # what the update after it continues from (set by the worker)


class ReferencePipeline:
    """Prepare reference updates in a worker thread; install each at its switch time from the control thread.

    Args:
        controller: the controller whose reference is updated (its joint order and current reference).
        decode: (serialized message, its arrival time [s]) -> its points (absolute times [s], any joint order), or
            None for an empty message; raises ValueError or SafetyError for a message to refuse. Runs in the worker
            thread.
        lead: delay from arrival to switch [s] (controller clock), > 0: the worker's budget.
        wait: longest wall-clock wait [s] of the control thread for a due update still being prepared; past it the
            update is dropped with an error. 0: never wait (a real robot's clock: a tick must not block): a due
            update not prepared yet stays pending and the first tick after the worker finished installs it. Its
            sampler starts at ``t_switch`` from the desired state then, so the desired state jumps at that later
            tick only by what the new and the old reference diverged since ``t_switch`` (second order in the delay:
            both share q, dq and ddq at ``t_switch``); the rate limit and the clamp bound the command as always.
        switch_interval: the interpreter's thread switch interval [s] set when the worker starts (the longest a tick
            waits for the GIL while the worker runs Python code; CPython's default is 5 ms).

    Raises:
        ValueError: ``lead`` not > 0, or ``wait`` < 0.
    """

    def __init__(self, controller: FeedforwardController,
                 decode: Callable[[bytes, float], TrajectoryPoints | None], lead: float, *, wait: float = 1.0,
                 switch_interval: float = 2e-4) -> None:
        if not lead > 0 or not wait >= 0:
            raise ValueError(f"lead ({lead!r}) must be > 0 s and wait ({wait!r}) >= 0 s")
        self.controller = controller
        self.decode = decode
        self.lead = float(lead)
        self.wait = float(wait)
        self.switch_interval = float(switch_interval)
        self._pending: deque[ReferenceUpdate] = deque()  # control thread only
        self._jobs: SimpleQueue[ReferenceUpdate | None] = SimpleQueue()
        self._thread: threading.Thread | None = None

    @property
    def pending(self) -> int:
        """Number of updates received and not installed yet."""
        return len(self._pending)

    def submit(self, raw: bytes, now: float) -> ReferenceUpdate:
        """(Control thread) a message received at ``now`` [s]: queue it for the worker; returns its update."""
        previous = self._pending[-1] if self._pending else None
        update = ReferenceUpdate(now, now + self.lead, raw, previous,
                                 None if previous is not None else self.controller.reference_base())
        self._pending.append(update)
        if self._thread is None:
            if self.switch_interval < sys.getswitchinterval():
                sys.setswitchinterval(self.switch_interval)
            self._thread = threading.Thread(target=self._run, name="reference_pipeline", daemon=True)
            self._thread.start()
        self._jobs.put(update)
        return update

    def due(self, t: float) -> list[ReferenceUpdate]:
        """(Control thread, before the tick stamped ``t`` [s]) install every update with ``t_switch <= t``, in order;
        returns them (the caller reports errors: an update with ``error`` changed nothing)."""
        installed: list[ReferenceUpdate] = []
        while self._pending and self._pending[0].t_switch <= t:
            update = self._pending[0]
            if self.wait == 0 and not update.done.is_set():
                break  # never block the tick: installed at the first tick after the worker is done
            self._pending.popleft()
            if not update.done.wait(self.wait):
                update.error = f"not prepared within {self.wait:g} s of wall time; dropped"
                self.clear()  # the updates after it continue from it: drop them too
            elif not update.error:
                self.controller.use_reference(update.sampler)
            installed.append(update)
        return installed

    def clear(self) -> None:
        """(Control thread) drop the pending updates (the controller's reference was set directly)."""
        self._pending.clear()

    def close(self) -> None:
        """Stop the worker (after the update it is preparing, if any)."""
        if self._thread is not None:
            self._jobs.put(None)
            self._thread.join(timeout=2.0)
            self._thread = None

    def _run(self) -> None:
        _below_creator()
        while (update := self._jobs.get()) is not None:
            self._prepare(update)

    def _prepare(self, update: ReferenceUpdate) -> None:
        """(Worker) fill ``update``'s result fields, then set ``done``."""
        c0 = time.perf_counter()
        base = update.base if update.previous is None else update.previous.follows
        try:
            update.points = self.decode(update.raw, update.now)
            if update.points is None:  # hold the desired state the previous reference reaches at the switch
                held = None if base is None else tuple(np.array(x, dtype=float) for x in base(update.t_switch))
                update.follows = None if held is None else (lambda _t: held)  # type: ignore[assignment,return-value]
            else:
                update.sampler = build_reference(update.points, self.controller.joint_names, update.t_switch, base)
                update.follows = update.sampler.sample
        except (ValueError, SafetyError) as err:
            update.error, update.follows = str(err), base
        update.prepare_s = time.perf_counter() - c0
        update.done.set()


def _below_creator() -> None:
    """Under SCHED_FIFO, lower the calling thread one priority step (it inherited its creator's)."""
    try:
        if os.sched_getscheduler(0) == os.SCHED_FIFO:
            priority = os.sched_getparam(0).sched_priority
            os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(max(1, priority - 1)))
    except OSError:  # not permitted: stays as it is
        pass
