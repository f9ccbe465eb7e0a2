"""Typed configuration: ROS 2 parameter files (``--params-file`` format) -> frozen dataclasses.

Every component config is a frozen dataclass validated in ``__post_init__``. Loading rejects unknown keys, so a
misspelled setting fails loudly instead of silently doing nothing. The validators every config uses live here too:
:func:`check_joint_names`, :func:`check_positive` and :func:`check_per_joint`. Parameter files use the standard
ROS 2 layout::

    /**:                     # or the node name, e.g. sim_arm:
      ros__parameters:
        joint_names: [joint1, joint2, joint3]
        ...

Values are read the way ROS 2 reads parameter files (rcl_yaml_param_parser): an unquoted ``3e-4`` or ``1E5`` is a
float, as in YAML 1.2, although PyYAML's YAML 1.1 rules would make it a string (:func:`load_yaml`).
"""

from __future__ import annotations

import dataclasses
import math
import re
import types
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import yaml

from .errors import ConfigError

__all__ = [
    "check_joint_names",
    "check_per_joint",
    "check_positive",
    "dataclass_from_dict",
    "load_node_configs",
    "load_ros_parameters",
    "load_yaml",
    "parameter_default",
]

T = TypeVar("T")
U = TypeVar("U")



class RosYamlLoader(yaml.SafeLoader):
    """PyYAML's safe loader with YAML 1.2 floats: ``3e-4``, ``1E5``, ``.5e-3`` and ``5.`` read as floats.

    PyYAML implements YAML 1.1, whose float pattern needs a dot and a signed exponent, so ``learning_rate: 3e-4``
    loads as the string "3e-4"; ROS 2's parameter parser (rcl_yaml_param_parser, strtod) and YAML 1.2 read a float.
    Quoted scalars stay strings. Source of the difference: rclpy PR 1717 (the same issue in rclpy's own loading).
    """


RosYamlLoader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?$"),
    list("-+0123456789."),
)


def load_yaml(text: str) -> Any:
    """Parse YAML text as ROS 2 parameter files are read (:class:`RosYamlLoader`: safe, YAML 1.2 floats).

    Raises:
        yaml.YAMLError: malformed YAML.
    """
    return yaml.load(text, Loader=RosYamlLoader)  # noqa: S506 (a SafeLoader subclass)


# Parameters of a node that belong to no config dataclass: every ROS node's use_sim_time, and the robot profile whose
# values fill the fields a parameter file leaves out (deadzone_id_ros.robot.defaults.fill_required).
NODE_ONLY_PARAMETERS = ("use_sim_time", "robot")


def load_ros_parameters(path: str | Path, node_name: str | None = None) -> dict[str, object]:
    """Read the ``ros__parameters`` mapping of a ROS 2 parameter file.

    Args:
        path: the YAML file.
        node_name: take the section of this node (plain name or ``/ns/name``); ``/**`` applies to every node and is
            merged first, the node's own section overrides it.

    Returns:
        a flat dict of parameter name -> value (nested mappings flattened with dots, as ROS 2 does).

    Raises:
        FileNotFoundError: the file does not exist.
        ConfigError: malformed YAML, or no ``ros__parameters`` section for the node; names the file and key.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"parameter file {path} does not exist")
    try:
        doc = load_yaml(path.read_text())
    except yaml.YAMLError as err:
        raise ConfigError(f"{path}: malformed YAML: {err}") from err
    if not isinstance(doc, dict):
        raise ConfigError(f"{path}: expected a mapping of node names to ros__parameters, got {type(doc).__name__}")
    merged: dict[str, Any] = {}
    found = False
    keys = ["/**"]
    if node_name:
        keys += [node_name, node_name.lstrip("/"), "/" + node_name.lstrip("/")]
    for key in keys:
        section = doc.get(key)
        if section is None:
            continue
        if not isinstance(section, dict) or "ros__parameters" not in section:
            raise ConfigError(f"{path}: key '{key}' must hold a 'ros__parameters' mapping")
        params = section["ros__parameters"]
        if not isinstance(params, dict):
            raise ConfigError(f"{path}: '{key}.ros__parameters' must be a mapping, got {type(params).__name__}")
        merged.update(_flatten(params))
        found = True
    if not found:
        raise ConfigError(
            f"{path}: no ros__parameters for {'/**' if not node_name else repr(node_name) + ' or /**'}; "
            f"top-level keys are {sorted(doc)}"
        )
    return merged


def _flatten(params: dict[str, object], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in params.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            out.update(_flatten(value, name + "."))
        else:
            out[name] = value
    return out


def dataclass_from_dict(
    cls: type[T], values: dict[str, object], source: str = "<dict>", *, ignore: tuple[str, ...] = ()
) -> T:
    """Build the frozen dataclass ``cls`` from ``values``, rejecting unknown keys.

    Lists are converted to tuples for tuple-typed fields. ``ignore`` lists keys that belong to another consumer of
    the same file (for example node-only parameters such as ``use_sim_time``).

    Raises:
        ConfigError: an unknown key (with the known ones listed), or a value the dataclass rejects; names ``source``.
    """
    fields = {f.name: f for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    unknown = sorted(k for k in values if k not in fields and k not in ignore)
    if unknown:
        raise ConfigError(f"{source}: unknown key(s) {unknown}; known keys: {sorted(fields)}")
    hints = typing.get_type_hints(cls)
    kwargs: dict[str, Any] = {}
    for name, value in values.items():
        if name not in fields:
            continue
        if isinstance(value, list) and _is_tuple_type(hints.get(name)):
            value = tuple(value)
        kwargs[name] = value
    try:
        return cls(**kwargs)
    except (TypeError, ValueError) as err:
        raise ConfigError(f"{source}: {err}") from err


def parameter_default(f: dataclasses.Field) -> Any:
    """The default of a dataclass field as a ROS parameter value: its value or its factory's value, a tuple as a
    list, and ``[]`` for a required field (no default)."""
    if f.default is not dataclasses.MISSING:
        value = f.default
    elif f.default_factory is not dataclasses.MISSING:
        value = f.default_factory()
    else:
        value = []
    return list(value) if isinstance(value, tuple) else value


def _is_tuple_type(tp: object) -> bool:
    if tp is None:
        return False
    origin = typing.get_origin(tp)
    if origin is tuple:
        return True
    if origin in (typing.Union, types.UnionType):
        return any(_is_tuple_type(a) for a in typing.get_args(tp))
    return False


def load_node_configs(
    core_cls: type[T], node_cls: type[U], node_name: str, default_file: str,
    path: str | Path | None = None, overrides: dict[str, object] | None = None,
    fill: Callable[[type, dict[str, object]], dict[str, object]] | None = None,
) -> tuple[T, U]:
    """Load one node's parameter file into its two configs: the ROS-free core one and the node-only one.

    Args:
        core_cls, node_cls: frozen dataclasses; every key of the file belongs to exactly one of them (or is
            ``use_sim_time``).
        node_name: the node's section in the file (``/**`` applies too).
        default_file: file name under the package's ``config/`` used when ``path`` is None.
        overrides: parameter name -> value applied on top of the file.
        fill: ``fill(cls, values)`` completes the required fields of ``cls`` the file leaves out (joint names,
            per-joint values: :func:`deadzone_id_ros.robot.defaults.fill_required`); it sees every key of the file.

    Raises:
        FileNotFoundError: the file does not exist.
        ConfigError: malformed YAML, an unknown key, or a bad value; the message names the file and key.
    """
    from .resources import share_file

    path = Path(path) if path is not None else share_file("config", default_file)
    params = load_ros_parameters(path, node_name)
    params.update(overrides or {})
    core_keys = {f.name for f in dataclasses.fields(core_cls)}  # type: ignore[arg-type]
    node_keys = {f.name for f in dataclasses.fields(node_cls)}  # type: ignore[arg-type]
    core_values = {k: v for k, v in params.items() if k not in node_keys}
    node_values = {k: v for k, v in params.items() if k not in core_keys}
    if fill is not None:
        core_values = {k: v for k, v in fill(core_cls, params).items() if k not in node_keys}
        node_values = {k: v for k, v in fill(node_cls, params).items() if k not in core_keys}
    core = dataclass_from_dict(core_cls, core_values, str(path), ignore=NODE_ONLY_PARAMETERS)
    node = dataclass_from_dict(node_cls, node_values, str(path), ignore=NODE_ONLY_PARAMETERS)
    return core, node


def check_joint_names(names: tuple[str, ...], field: str = "joint_names") -> int:
    """Validate a config's joint-name list (non-empty, no duplicates) and return its length J.

    Raises:
        ValueError: empty or with duplicates; the message names ``field`` and the list.
    """
    if len(names) == 0:
        raise ValueError(f"{field} is empty")
    if len(set(names)) != len(names):
        raise ValueError(f"{field} has duplicates: {list(names)}")
    return len(names)


def _is_number(value: object, *, integer: bool = False) -> bool:
    """True for a finite int (or, unless ``integer``, float); False for bool, NaN, inf and anything else."""
    if isinstance(value, bool) or not isinstance(value, int if integer else (int, float)):
        return False
    return math.isfinite(value)


def check_positive(name: str, value: object, *, integer: bool = False, allow_zero: bool = False) -> None:
    """Validate one config value: a finite number (an int with ``integer``) > 0, or >= 0 with ``allow_zero``.

    Raises:
        ValueError: ``"{name} = {value!r} must be a positive number"`` (``non-negative``, ``integer`` as asked);
            booleans, NaN and inf are refused.
    """
    if not _is_number(value, integer=integer) or value < 0 or (value == 0 and not allow_zero):  # type: ignore[operator]
        kind = "integer" if integer else "number"
        raise ValueError(f"{name} = {value!r} must be a {'non-negative' if allow_zero else 'positive'} {kind}")


def check_per_joint(name: str, values: tuple[float, ...], n_joints: int, *, sign: str = "positive") -> None:
    """Validate a per-joint tuple: ``n_joints`` finite numbers, each > 0, >= 0 or of any sign.

    Args:
        name: the config field, for the message.
        values: (J,) the values, in ``joint_names`` order.
        n_joints: J, the length of ``joint_names``.
        sign: "positive" (> 0), "non-negative" (>= 0) or "any".

    Raises:
        ValueError: ``"{name} has {len} values but joint_names has {J}"``, or
            ``"{name}[{i}] = {v!r} must be a finite positive number"`` (``non-negative``, or no sign for "any").
    """
    if sign not in ("positive", "non-negative", "any"):
        raise ValueError(f"sign = {sign!r} must be 'positive', 'non-negative' or 'any'")
    if len(values) != n_joints:
        raise ValueError(f"{name} has {len(values)} values but joint_names has {n_joints}")
    for i, v in enumerate(values):
        if not _is_number(v) or (sign == "positive" and v <= 0) or (sign == "non-negative" and v < 0):
            raise ValueError(f"{name}[{i}] = {v!r} must be a finite {'' if sign == 'any' else sign + ' '}number")
