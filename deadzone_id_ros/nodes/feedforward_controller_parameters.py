"""A set-parameters request to the feedforward_controller node, sorted into the changes of its two configurations.

Used by :mod:`deadzone_id_ros.nodes.feedforward_controller`'s set-parameters callback, which then validates the
changed configurations as a whole, swaps the model when a model field changed and applies the rest live.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import Any

from ..control import ControllerConfig
from ..control.feedforward_controller_params import PARAMETER_RANGES, ControllerNodeConfig
from ._common import check_range, parameter_value

__all__ = ["split_request"]

_CORE = frozenset(f.name for f in dataclasses.fields(ControllerConfig))
_NODE = frozenset(f.name for f in dataclasses.fields(ControllerNodeConfig))


def split_request(params: Iterable[Any]) -> tuple[dict[str, Any], dict[str, Any], str]:
    """(changes of :class:`ControllerConfig`, changes of :class:`ControllerNodeConfig`, "" or why the request is
    refused) for ``params`` (rclpy Parameters: ``name``, ``value``). Values come as the dataclass fields take them
    (tuples, floats); a value outside its range (:data:`PARAMETER_RANGES`) refuses the request, naming it. Other
    parameters (use_sim_time, ...) are rclpy's business and left out."""
    core: dict[str, Any] = {}
    node: dict[str, Any] = {}
    for p in params:
        if p.name not in _CORE and p.name not in _NODE:
            continue
        value = p.value
        if not isinstance(value, (str, bool, int, float)) and value is not None:
            value = list(value)
        reason = check_range(p.name, value, PARAMETER_RANGES.get(p.name))
        if reason:
            return {}, {}, reason
        cls = ControllerConfig if p.name in _CORE else ControllerNodeConfig
        (core if cls is ControllerConfig else node)[p.name] = parameter_value(cls, p.name, value)
    return core, node, ""
