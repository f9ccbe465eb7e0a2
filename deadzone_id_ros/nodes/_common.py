"""Shared helpers of the node adapters: parameters from config dataclasses, and a signal-safe spin loop."""

from __future__ import annotations

import dataclasses
import signal
import sys
import types
import typing
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

import rclpy
from rcl_interfaces.msg import ParameterDescriptor
from rclpy.node import Node

from ..config import dataclass_from_dict
from ..errors import DeadzoneIdError

__all__ = ["declare_dataclass_parameters", "init_ros", "make_executor", "run_node", "spin_until_shutdown"]

T = TypeVar("T")
N = TypeVar("N", bound=Node)


def declare_dataclass_parameters(
    node: Node, cls: type[T], *, read_only: Iterable[str] = (), descriptions: dict[str, str] | None = None
) -> T:
    """Declare one ROS parameter per field of the frozen dataclass ``cls`` (defaults from the dataclass) and build it.

    Values come from ``--params-file`` / ``-p`` overrides as usual. Fields listed in ``read_only`` cannot be changed
    at run time. The dataclass's ``__post_init__`` validates the values.

    Raises:
        ConfigError: a value the dataclass rejects (the message names the node and the parameter).
    """
    read_only = set(read_only)
    descriptions = descriptions or {}
    hints = typing.get_type_hints(cls)
    values: dict[str, Any] = {}
    for f in dataclasses.fields(cls):  # type: ignore[arg-type]
        default = f.default if f.default is not dataclasses.MISSING else f.default_factory()  # type: ignore[operator]
        if isinstance(default, tuple):
            default = list(default)
        element = _element_type(hints.get(f.name))
        # Float fields accept integers too ("duration:=10" on a command line or in a launch file is an INTEGER).
        numeric = element is float
        # An empty default says nothing about the element type (rclpy would make it a byte array): declare it unset
        # and dynamically typed, and let the dataclass check what comes in.
        empty = default == []
        descriptor = ParameterDescriptor(description=descriptions.get(f.name, ""), read_only=f.name in read_only,
                                         dynamic_typing=numeric or empty)
        value = node.declare_parameter(f.name, None if empty else default, descriptor).value
        if empty and value is None:
            value = []
        if numeric:
            value = _as_float(value)
        values[f.name] = value
    return dataclass_from_dict(cls, values, f"node {node.get_fully_qualified_name()} parameters")


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


def make_executor():
    """Return the executor the nodes spin on: rclpy's SingleThreadedExecutor.

    rclpy's EventsExecutor has lower jitter in isolation, but in the Kilted wheels it stalled (timers not firing for
    seconds) as soon as several of this project's nodes ran together on 2 cores; SingleThreadedExecutor holds 1 kHz.
    """
    from rclpy.executors import SingleThreadedExecutor

    return SingleThreadedExecutor()


def init_ros(args=None) -> None:
    """``rclpy.init`` without rclpy's own signal handlers, so that :func:`spin_until_shutdown` handles SIGINT/SIGTERM
    between callbacks and the node can still publish a safe command in ``finally``."""
    from rclpy.signals import SignalHandlerOptions

    rclpy.init(args=args, signal_handler_options=SignalHandlerOptions.NO)


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


def run_node(name: str, factory: Callable[[], N], args=None, *, until: Callable[[N], bool] | None = None,
             on_exit: Callable[[N], None] | None = None) -> int:
    """The ``main()`` of every node: init, spin until a signal (or ``until(node)``), then clean up.

    ``on_exit(node)`` runs while the context is still valid (a controller publishes its safe command there, a
    recorder closes its bag). A configuration error (DeadzoneIdError, FileNotFoundError) prints one line naming
    the node and exits 2 without a traceback.

    Returns:
        the process exit status: 0, or 2 on a configuration error.
    """
    from rclpy.executors import ExternalShutdownException

    init_ros(args)
    node = None
    status = 0
    try:
        node = factory()
        spin_until_shutdown(node, until=(lambda: until(node)) if until else None)
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
