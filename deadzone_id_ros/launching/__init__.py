"""A small launcher for the project's ``*.launch.yaml`` files where ros2 launch is not installed (core, no rclpy).

It implements exactly the subset of the ROS 2 YAML launch front end the project uses (arg, let, include, node with
pkg/exec/name/namespace/output/args/param/remap; ``$(var)``, ``$(find-pkg-share)``, ``$(env)``), turns each node into
the command line ros2 launch would run, and starts/stops the nodes as child processes. Anything else is refused with
:class:`~deadzone_id_ros.errors.LaunchError` naming the file, the entry and the key.
"""

from __future__ import annotations

from .description import (
    ArgSpec,
    LaunchPlan,
    NodeSpec,
    load_launch_file,
    parse_launch_arguments,
    render_parameter,
    resolve_executable,
    resolve_launch_file,
)
from .graph import LaunchedGraph, NodeProcess
from .substitutions import evaluate, find_package_share

__all__ = [
    "ArgSpec",
    "LaunchPlan",
    "LaunchedGraph",
    "NodeProcess",
    "NodeSpec",
    "evaluate",
    "find_package_share",
    "load_launch_file",
    "parse_launch_arguments",
    "render_parameter",
    "resolve_executable",
    "resolve_launch_file",
]
