"""Shared helpers of the node adapters: parameters from config dataclasses (:mod:`._parameters`, re-exported), a
signal-safe spin loop, and the watch on simulated time (:class:`SimClockWatch`: under ``use_sim_time`` nothing may fix
a start time before the first /clock, and a missing /clock is reported instead of waited on in silence)."""

from __future__ import annotations

import faulthandler
import gc
import signal
import sys
import time
from collections.abc import Callable
from typing import Any, TypeVar

import rclpy
from rclpy.callback_groups import CallbackGroup
from rclpy.exceptions import InvalidHandle
from rclpy.node import Node
from rclpy.subscription import Subscription

from ..errors import DeadzoneIdError
from ..realtime import RealtimeConfig, RealtimeState, apply_realtime
from ._parameters import (
    attribute_descriptions,
    check_range,
    declare_dataclass_parameters,
    declare_robot_parameter,
    parameter_files,
    parameter_value,
    remember_args,
)

__all__ = [
    "CLOCK_WARN_AFTER",
    "SimClockWatch",
    "apply_node_realtime",
    "attribute_descriptions",
    "check_range",
    "declare_dataclass_parameters",
    "declare_robot_parameter",
    "init_ros",
    "make_executor",
    "parameter_files",
    "parameter_value",
    "run_node",
    "spin_until_shutdown",
    "take_pending",
]

# [s] of wall time without /clock under use_sim_time before a node warns (half a watch's timeout when that is shorter).
# Long enough for DDS discovery to show the simulator's /clock publisher on a busy machine (measured here: a fresh
# node saw sim_arm's publisher only 1.1-2 s after it started; in a loaded lockstep launch the controller saw none at
# 3 s and warned, though sim_arm had published /clock for 3 s).
CLOCK_WARN_AFTER = 10.0
# [s] after which a node whose simulated time stands at 0 while a /clock publisher exists says so once (INFO): a
# simulator in lockstep holds time at 0 until the controller's first command, which is expected, not a warning.
CLOCK_INFO_AFTER = 3.0

N = TypeVar("N", bound=Node)

class SimClockWatch:
    """Waits for simulated time to start when the node uses it, and says so when it does not.

    Without ``use_sim_time`` the clock is ready at once. With it, the node's time is 0 until /clock arrives, so a
    start time fixed earlier is wrong by the whole simulated time. :meth:`poll` (called by :func:`run_node`'s spin
    loop between callbacks, at least every 50 ms) reads the node clock: callbacks registered with :meth:`when_ready`
    run once, when the node's time first moves past 0 (the first /clock message, as rclpy's time source applies it),
    with that time. It warns after ``warn_after`` seconds of wall time without /clock (and every 10 s after; half the
    ``timeout`` when that is shorter); when a /clock publisher exists but time stands at 0 (a simulator in lockstep
    waiting for the controller's first command) it says so once, at :data:`CLOCK_INFO_AFTER`, and never warns. With
    ``timeout`` it marks the watch :attr:`failed` (:func:`run_node` then stops the node with exit status 1). The watch
    adds no subscription or timer to the node: an extra steady-clock timer in a node on simulated time stalled the
    lockstep graph of the demo (measured), and a 1 kHz /clock costs nothing extra this way.

    Attributes:
        sim_time: the node's ``use_sim_time``.
        ready: simulated time has started (always True without sim time).
        failed: why the wait failed (no /clock within ``timeout``), or None.
    """

    def __init__(self, node: Node, *, warn_after: float = CLOCK_WARN_AFTER, timeout: float | None = None) -> None:
        self.node = node
        self.sim_time = bool(node.get_parameter("use_sim_time").value)
        self.ready = not self.sim_time
        self.failed: str | None = None
        if timeout is not None:
            warn_after = min(warn_after, timeout / 2)
        self.warn_after, self.timeout = warn_after, timeout
        self._callbacks: list[Callable[[int], object]] = []
        self._t0 = time.monotonic()
        self._next_warn = warn_after
        self._next_info = CLOCK_INFO_AFTER

    def when_ready(self, callback: Callable[[int], object]) -> None:
        """Run ``callback(now_ns)`` [ns, node clock] now if the clock is ready, else when simulated time starts."""
        if self.ready:
            callback(self.node.get_clock().now().nanoseconds)
        else:
            self._callbacks.append(callback)

    def poll(self) -> bool:
        """Check the clock (run the callbacks when simulated time has started, warn, time out); True once failed."""
        if not self.ready and not self.failed:
            self._check()
        return bool(self.failed)

    def _clock_publishers(self) -> int:
        """How many publishers of /clock this node's graph knows (a graph query, no subscription)."""
        return self.node.count_publishers("/clock")

    def _check(self) -> None:
        now_ns = self.node.get_clock().now().nanoseconds
        waited = time.monotonic() - self._t0
        if now_ns > 0:
            self.ready = True
            if waited >= self.warn_after:
                self.node.get_logger().info(f"first /clock message after {waited:.1f} s")
            for callback in self._callbacks:
                callback(now_ns)
            self._callbacks.clear()
        elif self.timeout is not None and waited >= self.timeout:
            self.failed = (f"use_sim_time is true but no /clock message arrived within {self.timeout:g} s; start the "
                           "simulator (or the bag player with --clock) that publishes /clock, or set use_sim_time "
                           "false")
            self.node.get_logger().error(self.failed)
        elif waited >= min(self._next_info, self._next_warn) and self._clock_publishers():
            # a simulator publishes /clock but holds it at 0: lockstep waits for the controller's first command,
            # which is expected: said once, not warned
            self._next_info = self._next_warn = float("inf")
            self.node.get_logger().info(
                f"simulated time has not started after {waited:.0f} s: /clock stands at 0 (a simulator in lockstep "
                "holds it until the controller answers its first state); waiting")
        elif waited >= self._next_warn:
            self._next_warn = waited + 10.0
            self.node.get_logger().warning(
                f"use_sim_time is true but no /clock message arrived in {waited:.0f} s: this node's time stands "
                "still (nothing that needs a start time has started); is the simulator publishing /clock?")


def make_executor():
    """Return the executor the nodes spin on: rclpy's SingleThreadedExecutor.

    rclpy's EventsExecutor has lower jitter in isolation, but in the Kilted wheels it stalled (timers not firing for
    seconds) as soon as several of this project's nodes ran together on 2 cores; SingleThreadedExecutor holds 1 kHz.
    """
    from rclpy.executors import SingleThreadedExecutor

    return SingleThreadedExecutor()


def init_ros(args=None) -> None:
    """``rclpy.init`` without rclpy's own signal handlers, so that :func:`spin_until_shutdown` handles SIGINT/SIGTERM
    between callbacks and the node can still publish a safe command in ``finally``. ``args`` (default sys.argv) is
    remembered for the messages that name the parameter files (:func:`declare_dataclass_parameters`).

    SIGUSR1 makes the process print every thread's Python stack to stderr and go on (``faulthandler``): a node that
    does not stop after SIGINT says where it is stuck (``kill -USR1 PID``; the tests do it before they kill one).
    """
    from rclpy.signals import SignalHandlerOptions

    if hasattr(signal, "SIGUSR1"):
        faulthandler.register(signal.SIGUSR1, all_threads=True, chain=False)

    rclpy.init(args=args, signal_handler_options=SignalHandlerOptions.NO)
    remember_args(rclpy.get_default_context(), list(sys.argv if args is None else args))


class _PolledGroup(CallbackGroup):
    """A callback group the executor never waits on or runs: its subscriptions are taken by :func:`take_pending`."""

    def can_execute(self, entity) -> bool:  # noqa: ARG002 - the executor's question; the answer is always no
        return False

    def beginning_execution(self, entity) -> bool:  # noqa: ARG002
        return False

    def ending_execution(self, entity) -> None:
        pass


def take_pending(node: Node, group: CallbackGroup) -> int:
    """Take every message waiting in ``node``'s subscriptions and run their callbacks in order of arrival (DDS
    reception time, then subscription order); returns how many were taken.

    Subscriptions not yet in ``group`` (created since the last call, rclpy's /clock subscription of the time source
    included) are moved into it first, so that the executor no longer waits on them. One pass wakes the process
    once for a whole batch: a node that takes 1 kHz /joint_states, /clock and commands message by message (rclpy
    builds a wait set per wake-up) spent most of its CPU time in the executor, not in its callbacks (measured with
    py-spy: 70% in ``wait_for_ready_callbacks``, 6% writing the bag). Taken in order of arrival, a message stamped
    with the node clock (the recorder's commands) sees the /clock that arrived before it, as if taken at once.
    """
    batch: list[tuple[int, int, Any, Any]] = []  # (reception time [ns], order taken, subscription, (msg, info))
    for sub in list(node.subscriptions):
        if sub.callback_group is not group:
            # with it its QoS event handlers: left in the wait set, each keeps the wait returning while messages wait
            # (measured: spin_once then burnt its whole timeout, 9 ms of CPU per 10 ms)
            for entity in (sub, *getattr(sub, "event_handlers", ())):
                group.add_entity(entity)
                entity.callback_group = group
        try:
            with sub.handle:
                while (taken := sub.handle.take_message(sub.msg_type, sub.raw)) is not None:
                    info = taken[1]
                    batch.append((int(info.get("received_timestamp") or 0), len(batch), sub, taken))
        except InvalidHandle:  # destroyed meanwhile (excitation's one-shot /joint_states subscription)
            continue
    batch.sort(key=lambda item: item[:2])
    for _, _, sub, (msg, info) in batch:
        callback: Callable[..., object] = sub.callback
        if sub._callback_type is Subscription.CallbackType.MessageOnly:
            callback(msg)
        else:
            callback(msg, info)
    return len(batch)


def spin_until_shutdown(node: Node, executor=None, period: float = 0.05, until=None, batch_period: float = 0.0) -> None:
    """Spin ``node`` until SIGINT or SIGTERM arrives, the context shuts down, or ``until()`` returns True.

    The signal only sets a flag; the loop stops between callbacks, so no callback is cut off halfway and the context
    is still valid afterwards (call :func:`init_ros` instead of ``rclpy.init``); ``spin_once`` with a timeout of
    ``period`` [s] bounds how long a stop request waits.

    With ``batch_period`` > 0 [s] the node's subscriptions are not waited on: every ``batch_period`` the loop takes
    all their waiting messages at once, in order of arrival (:func:`take_pending`); timers and services run as
    usual. For a node that need not answer each message at once (the recorder, the excitation's /clock) this costs
    one wake-up per batch instead of one per message. Subscription depths must hold ``batch_period`` of traffic.
    """
    stop = {"signal": None}

    def _handler(signum, _frame):
        stop["signal"] = signum

    previous = {sig: signal.signal(sig, _handler) for sig in (signal.SIGINT, signal.SIGTERM)}
    executor = executor or make_executor()
    executor.add_node(node)
    group = _PolledGroup() if batch_period > 0 else None
    wait = min(period, batch_period) if group is not None else period
    try:
        while True:
            if group is not None:
                take_pending(node, group)
            # after the messages, before the timers: as when the executor takes each message (a clock watch sees
            # the first /clock before a timer on that clock runs)
            if stop["signal"] is not None or not rclpy.ok(context=node.context) or (until and until()):
                break
            executor.spin_once(timeout_sec=wait)
    finally:
        executor.remove_node(node)
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def apply_node_realtime(node: Node, config: RealtimeConfig) -> RealtimeState:
    """Apply ``config`` (:func:`deadzone_id_ros.realtime.apply_realtime`) from the calling thread, which must be the
    one that spins ``node``; log what the kernel granted (info) and each refusal (warning: normal scheduling goes on).
    With a priority, also move every object alive now out of the garbage collector's reach (``gc.freeze``).

    Returns:
        the state read back from the kernel.
    """
    state = apply_realtime(config)
    if config.thread_priority > 0:
        gc.freeze()  # what the node built at start is never garbage: the collector no longer walks it in the loop
    for warning in state.warnings:
        node.get_logger().warning(warning)
    if config != RealtimeConfig():
        node.get_logger().info(
            f"scheduling: {state.policy} priority {state.priority}, memory locked {str(state.memory_locked).lower()}, "
            f"CPUs {list(state.cpu_affinity)}")
    return state


def run_node(name: str, factory: Callable[[], N], args=None, *, until: Callable[[N], bool] | None = None,
             on_exit: Callable[[N], None] | None = None, watch_clock: bool = True) -> int:
    """The ``main()`` of every node: init, spin until a signal (or ``until(node)``), then clean up.

    A node with a ``realtime_config`` attribute (a :class:`~deadzone_id_ros.realtime.RealtimeConfig`) gets it
    applied in the spinning thread before the first spin (:func:`apply_node_realtime`); the state read back is
    stored in its ``realtime_state`` attribute. A node with a ``spin_batch_period`` attribute [s] > 0 has its
    subscriptions taken in batches (:func:`spin_until_shutdown`). ``on_exit(node)`` runs while the context is still
    valid (a controller publishes its safe command there, a recorder closes its bag). A configuration error
    (DeadzoneIdError, FileNotFoundError) prints one line naming the node and exits 2 without a traceback. Every node
    gets a :class:`SimClockWatch` (attribute ``clock_watch``, unless the node made its own; ``watch_clock=False``
    opts out), so each one warns when it uses simulated time and no /clock arrives; a watch with a timeout that
    expires stops the node with exit status 1.

    Returns:
        the process exit status: 0, 1 when the node's clock watch failed, or 2 on a configuration error.
    """
    from rclpy.executors import ExternalShutdownException

    init_ros(args)
    node = None
    status = 0
    try:
        node = factory()
        watch = getattr(node, "clock_watch", None)
        if not isinstance(watch, SimClockWatch):
            watch = SimClockWatch(node) if watch_clock else None
            node.clock_watch = watch  # type: ignore[attr-defined]
        realtime = getattr(node, "realtime_config", None)
        if isinstance(realtime, RealtimeConfig):
            node.realtime_state = apply_node_realtime(node, realtime)  # type: ignore[attr-defined]
        spin_until_shutdown(node, until=lambda: (watch is not None and watch.poll()) or bool(until and until(node)),
                            batch_period=float(getattr(node, "spin_batch_period", 0.0)))
        if watch is not None and watch.failed:
            print(f"{name}: error: {watch.failed}", file=sys.stderr)
            status = 1
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    except (DeadzoneIdError, FileNotFoundError) as err:
        print(f"{name}: error: {err}", file=sys.stderr)
        status = 2
    finally:
        if node is not None:
            if on_exit is not None:
                on_exit(node)
            node.destroy_node()
        rclpy.try_shutdown()
    return status
