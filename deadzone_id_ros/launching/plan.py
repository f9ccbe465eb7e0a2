"""What a launch file resolves to: declared arguments, node specifications (each turned into the command line
ros2 launch would run), the plan of a whole file, and where a node's executable is found (core, no rclpy)."""

from __future__ import annotations

import os
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from ..errors import LaunchError

__all__ = ["ArgSpec", "LaunchPlan", "NodeSpec", "render_parameter", "resolve_executable"]


@dataclass(frozen=True)
class ArgSpec:
    """A declared launch argument.

    Attributes:
        name: argument name, set on the command line as ``name:=value``.
        default: default value, or None when the argument is required.
        description: the documentation string of the ``arg`` entry.
        source: ``file: launch[i]`` where it is declared.
        set_by: for an argument of an included file that its ``include`` entry sets: which file's include sets it
            and to what (a command-line ``name:=value`` does not reach it); "" otherwise.
    """

    name: str
    default: str | None
    description: str
    source: str
    set_by: str = ""


@dataclass(frozen=True)
class NodeSpec:
    """One node entry of a launch file, with every substitution evaluated.

    Attributes:
        package: ``pkg``.  executable: ``exec``.
        name: ``name`` or None (then the node keeps the name it gives itself).
        namespace: absolute namespace (``/`` prepended as launch_ros does) or None.
        output: ``screen``, ``log`` or ``both`` (this launcher prints every node's output, prefixed by its name).
        arguments: (A,) command-line arguments before ``--ros-args`` (``args``, split like a shell).
        param_files: (F,) parameter files, in order.
        params: inline parameters (name, value) in order; values keep their YAML type.
        remaps: (from, to) remapping rules in order.
        source: ``file: launch[i]`` of the entry.
        on_exit: "shutdown" (as in ros2 launch: when this node exits, the launch ends) or None.
    """

    package: str
    executable: str
    name: str | None
    namespace: str | None
    output: str
    arguments: tuple[str, ...]
    param_files: tuple[str, ...]
    params: tuple[tuple[str, Any], ...]
    remaps: tuple[tuple[str, str], ...]
    source: str
    on_exit: str | None = None

    @property
    def label(self) -> str:
        """The name used to prefix this node's output: its ``name``, else its ``exec``."""
        return self.name or self.executable

    def ros_arguments(self) -> list[str]:
        """The part of the command line from ``--ros-args`` on (list of strings, shell-unquoted)."""
        out = ["--ros-args"]
        if self.name is not None:
            out += ["-r", f"__node:={self.name}"]
        if self.namespace is not None:
            out += ["-r", f"__ns:={self.namespace}"]
        for path in self.param_files:
            out += ["--params-file", path]
        for key, value in self.params:
            out += ["-p", f"{key}:={render_parameter(value)}"]
        for src, dst in self.remaps:
            out += ["-r", f"{src}:={dst}"]
        return out

    def command(self, executable_path: str | None = None) -> list[str]:
        """The full command line: ``[EXEC, *arguments, --ros-args, ...]``.

        Args:
            executable_path: path of the executable; default: :func:`resolve_executable` of ``package``/``executable``.

        Raises:
            LaunchError: the executable cannot be found.
        """
        exe = executable_path or resolve_executable(self.package, self.executable, self.source)
        return [exe, *self.arguments, *self.ros_arguments()]


@dataclass(frozen=True)
class LaunchPlan:
    """A launch file resolved into the nodes to start.

    Attributes:
        file: the top-level launch file.
        nodes: (N,) nodes in start order (includes expanded in place).
        arguments: every argument declared by the file and its includes, in declaration order.
        configurations: the top-level launch configurations after evaluation (args and lets), name -> value.
    """

    file: Path
    nodes: tuple[NodeSpec, ...]
    arguments: tuple[ArgSpec, ...]
    configurations: dict[str, str] = field(default_factory=dict)

    def node(self, label: str) -> NodeSpec:
        """Return the node whose :attr:`NodeSpec.label` is ``label``; raises KeyError listing the labels."""
        for spec in self.nodes:
            if spec.label == label:
                return spec
        raise KeyError(f"{self.file}: no node '{label}' (nodes: {[n.label for n in self.nodes]})")


def render_parameter(value: object) -> str:
    """Render a parameter value for ``-p name:=VALUE`` so that rcl's YAML parser reads back the same type.

    Strings are passed verbatim (launch_ros also YAML-parses substituted strings, so ``"true"`` becomes a bool in
    both); an empty string becomes ``""``. Numbers, booleans and lists are written as YAML flow scalars/sequences.
    """
    if isinstance(value, str):
        return value if value.strip() and yaml.safe_load(value) is not None else '""'
    text = yaml.safe_dump(value, default_flow_style=True, width=1 << 20)
    return " ".join(line for line in text.splitlines() if line.strip() != "...").strip()



def resolve_executable(package: str, executable: str, where: str = "") -> str:
    """Find a node executable like ``ros2 run`` does: ``<prefix>/lib/<package>/<executable>`` from the ament index,
    then this environment's ``bin/`` (console scripts of a pip install), then ``$PATH``.

    Raises:
        LaunchError: not found anywhere; names the package, the executable and ``where``.
    """
    try:
        from ament_index_python.packages import get_package_prefix

        prefix = Path(get_package_prefix(package))
        candidate = prefix / "lib" / package / executable
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    except Exception:  # noqa: BLE001 - any lookup failure falls through to the next place, as ros2 run does
        pass
    found = shutil.which(executable, path=str(Path(sys.prefix) / "bin")) or shutil.which(executable)
    if found:
        return found
    raise LaunchError(
        f"{where + ': ' if where else ''}executable '{executable}' of package '{package}' not found in the ament "
        f"index (lib/{package}/), in {Path(sys.prefix) / 'bin'}, nor on PATH"
    )
