"""Parameters of the node adapters from config dataclasses: one ROS parameter per field (descriptions from the
docstring, ranges, read-only fields), the fields a robot profile gives filled in from the node's ``robot`` parameter,
and the parameter files a node was started with (named in error messages)."""

from __future__ import annotations

import dataclasses
import re
import sys
import types
import typing
import weakref
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, TypeVar

from rcl_interfaces.msg import FloatingPointRange, IntegerRange, ParameterDescriptor
from rclpy.exceptions import InvalidParameterValueException
from rclpy.node import Node

from ..config import dataclass_from_dict, parameter_default
from ..errors import ConfigError
from ..robot.defaults import BUNDLED_ROBOT, PROFILE_FIELDS, fill_required

__all__ = [
    "ROBOT_PARAMETER_DESCRIPTION",
    "attribute_descriptions",
    "check_range",
    "declare_dataclass_parameters",
    "declare_robot_parameter",
    "parameter_files",
    "parameter_value",
    "remember_args",
]

T = TypeVar("T")

# Options of a --ros-args section that take a value (rcl_arguments.c); the others are flags.
_ROS_OPTIONS_WITH_VALUE = ("-r", "--remap", "-p", "--param", "--params-file", "-e", "--enclave", "--log-level",
                           "--log-config-file", "--log-file-name")
# The command line each context was initialised with by init_ros (rclpy keeps none; without one: sys.argv).
_CONTEXT_ARGS: weakref.WeakKeyDictionary[object, list[str]] = weakref.WeakKeyDictionary()


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

    An entry is ``name: text`` (or ``a, b: text`` or ``a / b: text`` for several fields) at the section's
    indentation; deeper-indented lines continue it. Several entries may share a line, each after a sentence's end
    and two spaces (``a: text.  b: text``), where the names are fields of ``cls``. The section ends at the first
    line indented less (e.g. ``Raises:``).
    """
    lines = (cls.__doc__ or "").splitlines()
    try:
        start = next(i for i, line in enumerate(lines) if line.strip() == "Attributes:")
    except StopIteration:
        return {}
    entries: list[str] = []
    indent = None
    for line in lines[start + 1:]:
        if not line.strip():
            continue
        level = len(line) - len(line.lstrip())
        if indent is None:
            indent = level
        if level < indent:
            break
        if level == indent and ":" in line:
            entries.append(line.strip())
        elif entries:
            entries[-1] += " " + line.strip()
    fields = {f.name for f in dataclasses.fields(cls)} if dataclasses.is_dataclass(cls) else set()
    out: dict[str, str] = {}
    for entry in entries:
        for part in _split_entries(entry, fields):
            names, text = part.split(":", 1)
            for n in re.split(r"[,/]", names):  # "a, b: text" and "a / b: text" describe both
                out[n.strip()] = text.strip()
    return out


def _split_entries(entry: str, fields: set[str]) -> list[str]:
    """``entry`` split where a sentence ends and two spaces lead to ``name:`` of one of ``fields``."""
    parts = [entry]
    for m in reversed(list(re.finditer(r"\.\s{2,}([a-z_][a-z0-9_]*(?:,\s*[a-z_][a-z0-9_]*)*):\s", entry))):
        if all(n.strip() in fields for n in m.group(1).split(",")):
            head = parts.pop(0)
            parts[:0] = [head[:m.start() + 1], head[m.start(1):]]
    return parts


def check_range(name: str, value: object, bounds: tuple[float, float] | None) -> str:
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


def parameter_value(cls: type, name: str, value: object) -> Any:
    """A ROS parameter value as the dataclass field ``name`` of ``cls`` takes it: int -> float for float fields,
    lists -> tuples for tuple fields.

    Raises:
        ValueError: a string for a field of numbers (a dynamically typed per-joint parameter takes any type: a
            mistyped list such as "[400, 400.5, 1]" arrives as a string and would be read one character a value).
    """
    hints = typing.get_type_hints(cls)
    if isinstance(value, str) and _element_type(hints.get(name)) in (float, int):
        raise ValueError(f"{name} = {value!r} is a string; it takes a number or a list of numbers")
    if _element_type(hints.get(name)) is float:
        value = _as_float(value)
    if isinstance(value, list):
        value = tuple(value)
    return value


def declare_dataclass_parameters(
    node: Node, cls: type[T], *, read_only: Iterable[str] = (), descriptions: dict[str, str] | None = None,
    ranges: dict[str, tuple[float, float]] | None = None, choices: Mapping[str, Sequence[str]] | None = None,
) -> T:
    """Declare one ROS parameter per field of the frozen dataclass ``cls`` (defaults from the dataclass) and build it.

    Values come from ``--params-file`` / ``-p`` overrides as usual. Fields listed in ``read_only`` cannot be changed
    at run time. Each parameter's description is ``descriptions[name]`` or else the field's entry in the dataclass
    docstring's ``Attributes:`` section; ``ranges[name] = (lo, hi)`` becomes its FloatingPointRange (float fields,
    also per-joint lists) or IntegerRange (int fields); ``choices[name]`` (a string field's allowed values) its
    ``additional_constraints`` ("one of: ..."; ``ros2 param describe`` shows it). The dataclass's ``__post_init__``
    validates the values.
    When ``cls`` has fields a robot profile gives (:data:`~deadzone_id_ros.robot.defaults.PROFILE_FIELDS`: joints,
    URDF, per-joint values), the node also gets the read-only parameter ``robot`` (:func:`declare_robot_parameter`)
    and every such field left unset is filled from that profile
    (:func:`~deadzone_id_ros.robot.defaults.fill_required`).

    Raises:
        ConfigError: a value the dataclass rejects or outside its range, or a robot profile that cannot be found or
            read (the message names the node, the parameter file(s) given on its command line with
            ``--params-file``, and the parameter).
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
        if f.name in (choices or {}):
            descriptor.additional_constraints = "one of: " + ", ".join(choices[f.name])  # type: ignore[index]
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
    # unset fields a profile gives (joints, URDF, per-joint values): from the node's robot profile
    values = fill_required(cls, values, joints, source=source, robot=declare_robot_parameter(node, cls))
    return dataclass_from_dict(cls, values, source)


#: Description of the ``robot`` parameter of every node whose configs a robot profile fills in.
ROBOT_PARAMETER_DESCRIPTION = (
    "Robot profile: a shipped name (deadzone-id robot show NAME) or a profile FILE. Its joints, URDF, gains, DOB "
    "settings, simulated friction and home pose fill every parameter left unset; a parameter given explicitly "
    "overrides it (other joint_names or urdf_path: an implicit profile of that URDF).")


def declare_robot_parameter(node: Node, cls: type) -> str | None:
    """Declare the node's read-only string parameter ``robot`` (default :data:`BUNDLED_ROBOT`) once, when ``cls`` has
    a field a robot profile fills in (:data:`PROFILE_FIELDS`), and return its value; None for a ``cls`` without such
    a field (the profile is not used)."""
    if not any(f.name in PROFILE_FIELDS for f in dataclasses.fields(cls)):
        return None
    if not node.has_parameter("robot"):
        node.declare_parameter("robot", BUNDLED_ROBOT, ParameterDescriptor(
            description=ROBOT_PARAMETER_DESCRIPTION, read_only=True))
    return str(node.get_parameter("robot").value or BUNDLED_ROBOT)


def _element_type(tp: object) -> type | None:
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


def _as_float(value: object) -> object:
    """int -> float (also inside lists); anything else unchanged, for the dataclass to validate."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return float(value)
    if isinstance(value, (list, tuple)):
        return [float(v) if isinstance(v, int) and not isinstance(v, bool) else v for v in value]
    return value


def remember_args(context: object, args: list[str]) -> None:
    """Keep the command line ``context`` was initialised with, for the messages that name its parameter files."""
    _CONTEXT_ARGS[context] = args
