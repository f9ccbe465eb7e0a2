"""Shared helpers of the node adapters: parameters from config dataclasses, a signal-safe spin loop, and the watch on
simulated time (:class:`SimClockWatch`: under ``use_sim_time`` nothing may fix a start time before the first /clock,
and a missing /clock is reported instead of waited on in silence)."""

from __future__ import annotations

import dataclasses
import gc
import signal
import sys
import time
import types
import typing
import weakref
from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeVar

import rclpy
from rcl_interfaces.msg import FloatingPointRange, IntegerRange, ParameterDescriptor
from rclpy.exceptions import InvalidParameterValueException
from rclpy.node import Node

from ..config import dataclass_from_dict, parameter_default
from ..errors import ConfigError, DeadzoneIdError
from ..realtime import RealtimeConfig, RealtimeState, apply_realtime
from ..robot.defaults import fill_required

__all__ = [
    "CLOCK_WARN_AFTER",
    "SimClockWatch",
    "apply_node_realtime",
    "attribute_descriptions",
    "check_range",
    "declare_dataclass_parameters",
    "init_ros",
    "make_executor",
    "parameter_files",
    "parameter_value",
    "run_node",
    "spin_until_shutdown",
]

CLOCK_WARN_AFTER = 3.0  # [s] of wall time without /clock under use_sim_time before a node warns

T = TypeVar("T")
N = TypeVar("N", bound=Node)

# Options of a --ros-args section that take a value (rcl_arguments.c); the others are flags.
_ROS_OPTIONS_WITH_VALUE = ("-r", "--remap", "-p", "--param", "--params-file", "-e", "--enclave", "--log-level",
                           "--log-config-file", "--log-file-name")
# The command line each context was initialised with by init_ros (rclpy keeps none; without one: sys.argv).
_CONTEXT_ARGS: weakref.WeakKeyDictionary[Any, list[str]] = weakref.WeakKeyDictionary()


def parameter_files(args: Sequence[str]) -> list[str]:
    """The parameter files named on a ROS command line: each PATH of ``--params-file PATH`` inside a ``--ros-args``
    section (which ends at ``--`` or the end of ``args``), in order.

    Args:
        args: the command line (e.g. sys.argv: the program, its own arguments, then ``--ros-args ...``).
    """
    files: list[str] = []
    in_ros = False
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--ros-args":
            in_ros = True
        elif in_ros and arg == "--":
            in_ros = False
        elif in_ros and arg in _ROS_OPTIONS_WITH_VALUE:
            if arg == "--params-file" and i + 1 < len(args):
                files.append(args[i + 1])
            i += 1
        i += 1
    return files


def _parameter_source(node: Node) -> str:
    """How messages name where a node's parameter values came from: the node, and the parameter file(s) it was given
    on its command line (those of the context's arguments, as init_ros or rclpy.init received them)."""
    source = f"node {node.get_fully_qualified_name()} parameters"
    files = parameter_files(_CONTEXT_ARGS.get(node.context, sys.argv))
    if files:
        source += f" (parameter file{'s' if len(files) > 1 else ''} {', '.join(files)})"
    return source


def attribute_descriptions(cls: type) -> dict[str, str]:
    """Field name -> its description, from the ``Attributes:`` section of the dataclass's docstring (one source).

    An entry is ``name: text`` (or ``a, b: text`` for several fields) at the section's indentation; deeper-indented
    lines continue it. The section ends at the first line indented less (e.g. ``Raises:``).
    """
    lines = (cls.__doc__ or "").splitlines()
    out: dict[str, str] = {}
    try:
        start = next(i for i, line in enumerate(lines) if line.strip() == "Attributes:")
    except StopIteration:
        return out
    indent = None
    current: list[str] = []
    for line in lines[start + 1:]:
        if not line.strip():
            continue
        level = len(line) - len(line.lstrip())
        if indent is None:
            indent = level
        if level < indent:
            break
        if level == indent and ":" in line:
            names, text = line.strip().split(":", 1)
            current = [n.strip() for n in names.split(",")]
            for n in current:
                out[n] = text.strip()
        elif current:
            for n in current:
                out[n] += " " + line.strip()
    return out


def check_range(name: str, value: Any, bounds: tuple[float, float] | None) -> str:
    """"" when ``value`` (a number or a list of numbers) lies in ``bounds`` (inclusive) or bounds is None; else a
    reason naming the parameter, the value and the range (rclpy itself checks ranges of scalar parameters only)."""
    if bounds is None:
        return ""
    lo, hi = bounds
    values = value if isinstance(value, (list, tuple)) else [value]
    for i, v in enumerate(values):
        if isinstance(v, (int, float)) and not isinstance(v, bool) and not lo <= v <= hi:
            where = f"{name}[{i}]" if isinstance(value, (list, tuple)) else name
            return f"{where} = {v!r} is outside its range [{lo:g}, {hi:g}]"
    return ""


def parameter_value(cls: type, name: str, value: Any) -> Any:
    """A ROS parameter value as the dataclass field ``name`` of ``cls`` takes it: int -> float for float fields,
    lists -> tuples for tuple fields."""
    hints = typing.get_type_hints(cls)
    if _element_type(hints.get(name)) is float:
        value = _as_float(value)
    if isinstance(value, list):
        value = tuple(value)
    return value


def declare_dataclass_parameters(
    node: Node, cls: type[T], *, read_only: Iterable[str] = (), descriptions: dict[str, str] | None = None,
    ranges: dict[str, tuple[float, float]] | None = None,
) -> T:
    """Declare one ROS parameter per field of the frozen dataclass ``cls`` (defaults from the dataclass) and build it.

    Values come from ``--params-file`` / ``-p`` overrides as usual. Fields listed in ``read_only`` cannot be changed
    at run time. Each parameter's description is ``descriptions[name]`` or else the field's entry in the dataclass
    docstring's ``Attributes:`` section; ``ranges[name] = (lo, hi)`` becomes its FloatingPointRange (float fields,
    also per-joint lists) or IntegerRange (int fields). The dataclass's ``__post_init__`` validates the values.

    Raises:
        ConfigError: a value the dataclass rejects or outside its range (the message names the node, the parameter
            file(s) given on its command line with ``--params-file``, and the parameter).
    """
    read_only = set(read_only)
    descriptions = {**attribute_descriptions(cls), **(descriptions or {})}
    ranges = ranges or {}
    hints = typing.get_type_hints(cls)
    values: dict[str, Any] = {}
    source = _parameter_source(node)
    for f in dataclasses.fields(cls):  # type: ignore[arg-type]
        default = parameter_default(f)  # [] for a required field (joint names, per-joint values): declared unset
        element = _element_type(hints.get(f.name))
        # Float fields accept integers too ("duration:=10" on a command line or in a launch file is an INTEGER).
        numeric = element is float
        # An empty default says nothing about the element type (rclpy would make it a byte array): declare it unset
        # and dynamically typed, and let the dataclass check what comes in.
        empty = default == []
        descriptor = ParameterDescriptor(description=descriptions.get(f.name, ""), read_only=f.name in read_only,
                                         dynamic_typing=numeric or empty)
        bounds = ranges.get(f.name)
        if bounds is not None and element is float:
            descriptor.floating_point_range = [FloatingPointRange(from_value=float(bounds[0]),
                                                                  to_value=float(bounds[1]), step=0.0)]
        elif bounds is not None and element is int:
            descriptor.integer_range = [IntegerRange(from_value=int(bounds[0]), to_value=int(bounds[1]), step=0)]
        try:
            value = node.declare_parameter(f.name, None if empty else default, descriptor).value
        except InvalidParameterValueException as err:  # a scalar outside its range
            raise ConfigError(f"{source}: {f.name}: {err}") from err
        if empty and value is None:
            value = []
        if numeric:
            value = _as_float(value)
        reason = check_range(f.name, value, bounds)
        if reason:
            raise ConfigError(f"{source}: {reason}")
        values[f.name] = value
    joints = node.get_parameter("joint_names").value if node.has_parameter("joint_names") else None
    values = fill_required(cls, values, joints, source=source)  # unset required fields: from the joints' profile
    return dataclass_from_dict(cls, values, source)


def _element_type(tp: Any) -> type | None:
    """float for ``float``/``tuple[float, ...]`` (also inside ``X | None``), likewise int/str/bool; else None."""
    if tp in (float, int, str, bool):
        return tp
    origin = typing.get_origin(tp)
    if origin in (tuple, list):
        args = [a for a in typing.get_args(tp) if a is not Ellipsis]
        return args[0] if args and args[0] in (float, int, str, bool) else None
    if origin in (typing.Union, types.UnionType):
        found = {_element_type(a) for a in typing.get_args(tp) if a is not type(None)} - {None}
        return found.pop() if len(found) == 1 else None
    return None


def _as_float(value: Any) -> Any:
    """int -> float (also inside lists); anything else unchanged, for the dataclass to validate."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return float(value)
    if isinstance(value, (list, tuple)):
        return [float(v) if isinstance(v, int) and not isinstance(v, bool) else v for v in value]
    return value


class SimClockWatch:
    """Waits for simulated time to start when the node uses it, and says so when it does not.

    Without ``use_sim_time`` the clock is ready at once. With it, the node's time is 0 until /clock arrives, so a
    start time fixed earlier is wrong by the whole simulated time. :meth:`poll` (called by :func:`run_node`'s spin
    loop between callbacks, at least every 50 ms) reads the node clock: callbacks registered with :meth:`when_ready`
    run once, when the node's time first moves past 0 (the first /clock message, as rclpy's time source applies it),
    with that time. It warns after ``warn_after`` seconds of wall time without /clock (and every 10 s after), and with
    ``timeout`` marks the watch :attr:`failed` (:func:`run_node` then stops the node with exit status 1). The watch
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
        self.warn_after, self.timeout = warn_after, timeout
        self._callbacks: list[Callable[[int], object]] = []
        self._t0 = time.monotonic()
        self._next_warn = warn_after

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
    remembered for the messages that name the parameter files (:func:`declare_dataclass_parameters`)."""
    from rclpy.signals import SignalHandlerOptions

    rclpy.init(args=args, signal_handler_options=SignalHandlerOptions.NO)
    _CONTEXT_ARGS[rclpy.get_default_context()] = list(sys.argv if args is None else args)


def spin_until_shutdown(node: Node, executor=None, period: float = 0.05, until=None) -> None:
    """Spin ``node`` until SIGINT or SIGTERM arrives, the context shuts down, or ``until()`` returns True.

    The signal only sets a flag; the loop stops between callbacks, so no callback is cut off halfway and the context
    is still valid afterwards (call :func:`init_ros` instead of ``rclpy.init``); ``spin_once`` with a timeout of
    ``period`` [s] bounds how long a stop request waits.
    """
    stop = {"signal": None}

    def _handler(signum, _frame):
        stop["signal"] = signum

    previous = {sig: signal.signal(sig, _handler) for sig in (signal.SIGINT, signal.SIGTERM)}
    executor = executor or make_executor()
    executor.add_node(node)
    try:
        while stop["signal"] is None and rclpy.ok(context=node.context) and not (until and until()):
            executor.spin_once(timeout_sec=period)
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

    A node with a ``realtime_config`` attribute (a :class:`~deadzone_id_ros.realtime.RealtimeConfig`) gets it applied
    in the spinning thread before the first spin (:func:`apply_node_realtime`); the state read back is stored in its
    ``realtime_state`` attribute. ``on_exit(node)`` runs while the context is still valid (a controller publishes
    its safe command there, a recorder closes its bag). A configuration error (DeadzoneIdError, FileNotFoundError)
    prints one line naming the node and exits 2 without a traceback. Every node gets a :class:`SimClockWatch`
    (attribute ``clock_watch``, unless the node made its own; ``watch_clock=False`` opts out), so each one warns
    when it uses simulated time and no /clock arrives; a watch with a timeout that expires stops the node with exit
    status 1.

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
        spin_until_shutdown(node, until=lambda: (watch is not None and watch.poll()) or bool(until and until(node)))
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
