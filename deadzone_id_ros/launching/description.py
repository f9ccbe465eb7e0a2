"""Parse the subset of the ROS 2 YAML launch front end that this project uses, into node command lines.

Supported (everything else raises :class:`~deadzone_id_ros.errors.LaunchError` naming the file, the entry and the
key)::

    launch:
    - arg: {name: N, default: D, description: TEXT}          # default optional: then the arg is required
    - let: {name: N, value: V}
    - include: {file: PATH, arg: [{name: N, value: V}, ...]}
    - node:
        pkg: P                                                # required
        exec: E                                               # required
        name: NAME                                            # -r __node:=NAME
        namespace: NS                                         # -r __ns:=/NS
        output: screen | log | both
        args: "a b c"                                         # arguments before --ros-args
        param: [{from: FILE}, {name: K, value: V}, ...]       # --params-file FILE ... then -p K:=V ...
        remap: [{from: A, to: B}, ...]                        # -r A:=B
        on_exit: shutdown                                     # when this node exits, stop the others

with the substitutions ``$(var)``, ``$(find-pkg-share)`` and ``$(env)`` (:mod:`.substitutions`). The command line
of each node is the one launch_ros builds (launch_ros/actions/node.py): ``EXEC ARGS --ros-args -r __node:=NAME
-r __ns:=NS --params-file F... -p K:=V... -r A:=B...``. launch_ros writes the inline parameters to a temporary
``/**`` parameter file placed after the ``from`` files; ``-p`` after ``--params-file`` has the same effect (the
later source overrides) and keeps the command line readable.

Semantics of ``include``: the included file sees the including file's launch configurations (so ``name:=value``
given on the command line reaches every file, as with ros2 launch) plus the include's ``arg`` values; ``let``
inside an included file does not leak out.
"""

from __future__ import annotations

import dataclasses
import shlex
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from ..errors import LaunchError
from .plan import ArgSpec, LaunchPlan, NodeSpec, render_parameter, resolve_executable
from .substitutions import evaluate

__all__ = [
    "ArgSpec",
    "LaunchPlan",
    "NodeSpec",
    "load_launch_file",
    "parse_launch_arguments",
    "render_parameter",
    "resolve_executable",
    "resolve_launch_file",
]

_ENTRY_KEYS: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    # entry kind -> (required keys, optional keys)
    "arg": (frozenset({"name"}), frozenset({"default", "description"})),
    "let": (frozenset({"name", "value"}), frozenset()),
    "include": (frozenset({"file"}), frozenset({"arg"})),
    "node": (frozenset({"pkg", "exec"}),
             frozenset({"name", "namespace", "output", "args", "param", "remap", "on_exit"})),
}
_OUTPUT_VALUES = ("screen", "log", "both")


def parse_launch_arguments(items: list[str] | tuple[str, ...]) -> dict[str, str]:
    """Parse ``name:=value`` command-line items into a dict.

    Raises:
        LaunchError: an item without ``:=`` or with an empty name.
    """
    out: dict[str, str] = {}
    for item in items:
        name, sep, value = item.partition(":=")
        if not sep or not name:
            raise LaunchError(f"launch argument {item!r} must have the form name:=value")
        out[name] = value
    return out


def resolve_launch_file(file: str | Path) -> Path:
    """Return the launch file: ``file`` if it exists as a path, else ``<share>/launch/<file>`` of this package.

    Raises:
        FileNotFoundError: neither exists; names both places.
    """
    path = Path(file)
    if path.is_file():
        return path.resolve()
    from ..resources import share_dir

    candidate = share_dir() / "launch" / str(file)
    if candidate.is_file():
        return candidate
    available = sorted(p.name for p in (share_dir() / "launch").glob("*.launch.yaml"))
    raise FileNotFoundError(
        f"launch file {file} not found as a path nor in {candidate.parent} (available: {available})"
    )


def load_launch_file(
    file: str | Path, launch_arguments: Mapping[str, str] | None = None, *, strict: bool = True,
    allow_missing: bool = False,
) -> LaunchPlan:
    """Parse a ``*.launch.yaml`` file (and its includes) into a :class:`LaunchPlan`.

    Args:
        file: path of the launch file, or a file name in this package's ``launch/`` share directory.
        launch_arguments: ``name -> value`` given on the command line (``name:=value``).
        strict: refuse launch arguments that no file declares (ros2 launch ignores them silently; a misspelled
            argument would then do nothing).
        allow_missing: give required arguments that were not passed the placeholder ``<required NAME>`` instead of
            failing (for listing arguments; such a plan is not meant to be started).

    Raises:
        FileNotFoundError: the launch file or an included file does not exist.
        LaunchError: malformed YAML, an unsupported entry, key or substitution, a required argument not given, an
            include cycle, or an unknown launch argument; the message names the file, the entry and the key.
    """
    path = resolve_launch_file(file)
    given = dict(launch_arguments or {})
    declared: list[ArgSpec] = []
    nodes: list[NodeSpec] = []
    configurations = _process_file(path, dict(given), declared, nodes, stack=(), allow_missing=allow_missing)
    if strict:
        names = {a.name for a in declared}
        unknown = sorted(set(given) - names)
        if unknown:
            raise LaunchError(
                f"{path}: launch argument(s) {unknown} not declared by this file or its includes; "
                f"declared: {sorted(names)}"
            )
    return LaunchPlan(file=path, nodes=tuple(nodes), arguments=tuple(declared), configurations=configurations)


def _process_file(
    path: Path, variables: dict[str, str], declared: list[ArgSpec], nodes: list[NodeSpec], stack: tuple[Path, ...],
    *, allow_missing: bool = False,
) -> dict[str, str]:
    if path in stack:
        chain = " -> ".join(str(p) for p in (*stack, path))
        raise LaunchError(f"{path}: include cycle: {chain}")
    if not path.is_file():
        raise FileNotFoundError(f"launch file {path} does not exist")
    try:
        doc = yaml.safe_load(path.read_text())
    except yaml.YAMLError as err:
        raise LaunchError(f"{path}: malformed YAML: {err}") from err
    if not isinstance(doc, dict) or set(doc) != {"launch"}:
        keys = sorted(doc) if isinstance(doc, dict) else type(doc).__name__
        raise LaunchError(f"{path}: a YAML launch file must be a mapping with the single key 'launch', got {keys}")
    entries = doc["launch"]
    if not isinstance(entries, list):
        raise LaunchError(f"{path}: 'launch' must hold a list of entries, got {type(entries).__name__}")
    for index, entry in enumerate(entries):
        where = f"{path}: launch[{index}]"
        if not isinstance(entry, dict) or len(entry) != 1:
            raise LaunchError(
                f"{where}: each entry must be a mapping with one key (arg, let, include, node), got {entry!r}"
            )
        ((kind, body),) = entry.items()
        if kind not in _ENTRY_KEYS:
            raise LaunchError(
                f"{where}: unsupported entry '{kind}'; this launcher supports only {sorted(_ENTRY_KEYS)}"
            )
        if not isinstance(body, dict):
            raise LaunchError(f"{where} ({kind}): expected a mapping of attributes, got {body!r}")
        required, optional = _ENTRY_KEYS[kind]
        unsupported = sorted(set(body) - required - optional)
        if unsupported:
            raise LaunchError(
                f"{where} ({kind}): unsupported key(s) {unsupported}; supported: {sorted(required | optional)}"
            )
        missing = sorted(required - set(body))
        if missing:
            raise LaunchError(f"{where} ({kind}): missing required key(s) {missing}")
        if kind == "arg":
            _do_arg(body, variables, declared, where, allow_missing)
        elif kind == "let":
            name = _text(body["name"], variables, f"{where} (let).name")
            variables[name] = _text(body["value"], variables, f"{where} (let {name}).value")
        elif kind == "include":
            _do_include(body, path, variables, declared, nodes, stack, where, allow_missing)
        else:
            nodes.append(_do_node(body, variables, where))
    return variables


def _text(value: object, variables: Mapping[str, str], where: str) -> str:
    """Evaluate a scalar attribute to a string (numbers and booleans written as YAML would)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    if not isinstance(value, str):
        raise LaunchError(f"{where}: expected a string, got {type(value).__name__} {value!r}")
    return evaluate(value, variables, where)


def _do_arg(body: dict, variables: dict[str, str], declared: list[ArgSpec], where: str, allow_missing: bool) -> None:
    name = body["name"]
    if not isinstance(name, str) or not name:
        raise LaunchError(f"{where} (arg).name: expected a non-empty string, got {name!r}")
    default = _text(body["default"], variables, f"{where} (arg {name}).default") if "default" in body else None
    description = body.get("description", "")
    if not isinstance(description, str):
        raise LaunchError(f"{where} (arg {name}).description: expected a string, got {description!r}")
    declared.append(ArgSpec(name=name, default=default, description=description, source=where))
    if name not in variables:
        if default is None and allow_missing:
            default = f"<required {name}>"
        if default is None:
            raise LaunchError(
                f"{where}: required launch argument '{name}' not given (pass {name}:=VALUE): {description}"
            )
        variables[name] = default


def _do_include(
    body: dict, path: Path, variables: dict[str, str], declared: list[ArgSpec], nodes: list[NodeSpec],
    stack: tuple[Path, ...], where: str, allow_missing: bool,
) -> None:
    target = Path(_text(body["file"], variables, f"{where} (include).file"))
    if not target.is_absolute():
        target = (path.parent / target).resolve()
    child = dict(variables)
    items = body.get("arg", [])
    if not isinstance(items, list):
        raise LaunchError(f"{where} (include).arg: expected a list of {{name, value}}, got {items!r}")
    for i, item in enumerate(items):
        iw = f"{where} (include {target.name}).arg[{i}]"
        if not isinstance(item, dict) or set(item) != {"name", "value"}:
            keys = sorted(item) if isinstance(item, dict) else item
            raise LaunchError(f"{iw}: expected exactly the keys ['name', 'value'], got {keys}")
        child[_text(item["name"], variables, iw + ".name")] = _text(item["value"], variables, iw + ".value")
    if not target.is_file():
        raise FileNotFoundError(f"{where}: included launch file {target} does not exist")
    first = len(declared)
    _process_file(target, child, declared, nodes, (*stack, path), allow_missing=allow_missing)
    raw = {str(item["name"]): str(item["value"]) for item in items}
    for i in range(first, len(declared)):  # the included file's own arguments that this include sets
        spec = declared[i]
        if spec.name in raw and spec.source.startswith(f"{target}:") and not spec.set_by:
            declared[i] = dataclasses.replace(spec, set_by=f"the include in {path.name} sets it to {raw[spec.name]}")


def _param_value(value: object, variables: Mapping[str, str], where: str) -> Any:
    if isinstance(value, str):
        return evaluate(value, variables, where)
    if isinstance(value, (bool, int, float)):
        return value
    if isinstance(value, list) and all(isinstance(v, (str, bool, int, float)) for v in value):
        return [evaluate(v, variables, where) if isinstance(v, str) else v for v in value]
    raise LaunchError(f"{where}: unsupported parameter value {value!r} (nested parameters are not supported)")


def _do_node(body: dict, variables: Mapping[str, str], where: str) -> NodeSpec:
    package = _text(body["pkg"], variables, f"{where} (node).pkg")
    executable = _text(body["exec"], variables, f"{where} (node).exec")
    name = _text(body["name"], variables, f"{where} (node).name") if "name" in body else None
    where = f"{where} (node {name or executable})"
    namespace = None
    if "namespace" in body:
        namespace = _text(body["namespace"], variables, f"{where}.namespace")
        namespace = namespace if namespace.startswith("/") else "/" + namespace
    output = _text(body.get("output", "screen"), variables, f"{where}.output")
    if output not in _OUTPUT_VALUES:
        raise LaunchError(f"{where}.output: {output!r} is not one of {list(_OUTPUT_VALUES)}")
    arguments: tuple[str, ...] = ()
    if "args" in body:
        arguments = tuple(shlex.split(_text(body["args"], variables, f"{where}.args")))
    param_files: list[str] = []
    params: list[tuple[str, Any]] = []
    items = body.get("param", [])
    if not isinstance(items, list):
        raise LaunchError(f"{where}.param: expected a list of {{from}} or {{name, value}}, got {items!r}")
    for i, item in enumerate(items):
        pw = f"{where}.param[{i}]"
        if isinstance(item, dict) and set(item) == {"from"}:
            param_files.append(_text(item["from"], variables, pw + ".from"))
        elif isinstance(item, dict) and set(item) == {"name", "value"}:
            key = _text(item["name"], variables, pw + ".name")
            params.append((key, _param_value(item["value"], variables, f"{pw} ({key}).value")))
        else:
            keys = sorted(item) if isinstance(item, dict) else item
            raise LaunchError(f"{pw}: expected {{from: FILE}} or {{name: K, value: V}}, got {keys}")
    remaps: list[tuple[str, str]] = []
    items = body.get("remap", [])
    if not isinstance(items, list):
        raise LaunchError(f"{where}.remap: expected a list of {{from, to}}, got {items!r}")
    for i, item in enumerate(items):
        rw = f"{where}.remap[{i}]"
        if not isinstance(item, dict) or set(item) != {"from", "to"}:
            keys = sorted(item) if isinstance(item, dict) else item
            raise LaunchError(f"{rw}: expected exactly the keys ['from', 'to'], got {keys}")
        remaps.append((_text(item["from"], variables, rw + ".from"), _text(item["to"], variables, rw + ".to")))
    on_exit = _text(body["on_exit"], variables, f"{where}.on_exit") if "on_exit" in body else None
    if on_exit not in (None, "shutdown"):
        raise LaunchError(f"{where}.on_exit: {on_exit!r} is not supported; only 'shutdown'")
    return NodeSpec(
        package=package, executable=executable, name=name, namespace=namespace, output=output,
        arguments=arguments, param_files=tuple(param_files), params=tuple(params), remaps=tuple(remaps),
        source=where, on_exit=on_exit,
    )

