"""The unit of the recorded effort, per joint: guessed from the bag, stated by the user, or N·m by a torque constant.

sensor_msgs/JointState does not declare units. ros2_control's joint_state_broadcaster publishes joint torque [N·m];
Dynamixel-based arms (Interbotix xs_sdk) publish the motor's present current [mA] as effort. A model trained on
current predicts current, and a controller that sends it as N·m commands the wrong torque. So the unit is carried
from the data into the training report, the model artifact (model.json ``units.tau`` and ``effort_units``; the ONNX
metadata) and the controller's check, which refuses a model that does not predict N·m. ``--torque-constant
JOINT:K`` (N·m per unit of the recorded effort) converts a joint's effort to N·m when the data are loaded.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence

__all__ = ["FIX_HINT", "NEWTON_METRE", "PRESENT_LOAD", "UNKNOWN", "effort_units", "guess_effort_unit", "normalize_unit",
           "parse_torque_constants", "tau_unit", "unit_label"]

FIX_HINT = ("give --torque-constant JOINT:K (N·m per unit of the recorded effort) to convert it to N·m, or "
            "--effort-unit N*m if the effort already is joint torque")

NEWTON_METRE = "N*m"  # the unit string of model.json and the ONNX metadata (ASCII)
UNKNOWN = "unknown"
#: A Feetech/Dynamixel serial-bus servo's Present_Load: its PWM duty in units of 0.1 %, whole numbers in
#: [-1000, 1000] (deadzone_id_ros/sim/servo.py); about stall torque / 1000 N·m per unit at rest.
PRESENT_LOAD = "0.1%duty"
_IMPLAUSIBLE_NM = 200.0  # |effort| above this is implausible as a manipulator joint torque [N·m]


def guess_effort_unit(msgtypes: Iterable[str], max_abs_effort: float, *,
                      whole_numbers: bool = False) -> tuple[str, str]:
    """(unit, reason) of a bag's effort from its message types, its largest |effort| and whether every effort is a
    whole number.

    Returns ``("mA", ...)`` for Interbotix (Dynamixel) bags, :data:`PRESENT_LOAD` for whole numbers above 200 and at
    most 1000 in magnitude (a serial-bus servo's Present_Load, as an SO-101 driver publishes it), ``("unknown",
    ...)`` when the magnitude is otherwise implausible as N·m (above 200), else ``("N*m", ...)``: the ros2_control
    convention, assumed since JointState has no unit.
    """
    if any(t.startswith("interbotix") for t in msgtypes):
        return "mA", ("Interbotix xs_sdk publishes the Dynamixel present current as effort: probably motor current "
                      "in mA, not N·m")
    if whole_numbers and _IMPLAUSIBLE_NM < max_abs_effort <= 1000:
        return PRESENT_LOAD, (f"effort is whole numbers reaching {max_abs_effort:.0f} of at most 1000: probably a "
                              "serial-bus servo's Present_Load (PWM duty in 0.1 %, e.g. an SO-101's Feetech STS3215), "
                              "not N·m; at rest stall torque / 1000 N·m per unit (1.912 / 1000 for the 7.4 V "
                              "STS3215)")
    if max_abs_effort > _IMPLAUSIBLE_NM:
        return UNKNOWN, (f"effort reaches {max_abs_effort:.1f}: implausible as N·m for a manipulator joint, "
                         "probably another unit (e.g. motor current in mA)")
    return NEWTON_METRE, "JointState does not declare units; N·m assumed (the ros2_control convention)"


_NEWTON_METRE_SPELLINGS = {"n*m", "n·m", "nm", "n m", "n.m", "n-m", "newton metre", "newton meter", "newton-metre",
                           "newton-meter", "newton metres", "newton meters"}


def normalize_unit(unit: str) -> str:
    """``unit`` with every spelling of newton metre ("N·m", "Nm", "N m", "newton meter", ...) as "N*m"; others as
    given (stripped)."""
    unit = unit.strip()
    return NEWTON_METRE if unit.lower() in _NEWTON_METRE_SPELLINGS else unit


def effort_units(joints: Sequence[str], guessed: str, *, effort_unit: str | None = None,
                 torque_constants: Mapping[str, float] | None = None) -> dict[str, str]:
    """{joint: unit of its training label}: "N*m" where a torque constant converted it, else ``effort_unit`` (what
    the user states for the recording; :func:`normalize_unit`) or, without one, ``guessed``
    (:func:`guess_effort_unit`)."""
    constants = torque_constants or {}
    rest = normalize_unit(effort_unit) if effort_unit else guessed
    return {j: NEWTON_METRE if j in constants else rest for j in joints}


def tau_unit(units: Mapping[str, str]) -> str:
    """The one unit of every joint (model.json's ``units.tau``), or "mixed" when the joints differ; "N*m" if empty."""
    kinds = set(units.values())
    return kinds.pop() if len(kinds) == 1 else ("mixed" if kinds else NEWTON_METRE)


def unit_label(units: Mapping[str, str] | None) -> str:
    """The unit as printed in tables and reports: "N·m", the single unit ("mA"), or "mixed units" (J,)."""
    unit = tau_unit(units or {})
    return "N·m" if unit == NEWTON_METRE else ("mixed units" if unit == "mixed" else unit)


def parse_torque_constants(items: Sequence[str] | None) -> dict[str, float]:
    """``["JOINT:K", ...]`` (``--torque-constant``) -> {joint: k [N·m per unit of the recorded effort]}.

    Raises:
        ValueError: an item that is not ``JOINT:K`` with a finite non-zero number, or a joint given twice.
    """
    out: dict[str, float] = {}
    for item in items or ():
        name, sep, value = item.rpartition(":")
        try:
            k = float(value)
        except ValueError:
            k = math.nan
        if not sep or not name or not math.isfinite(k) or k == 0:
            raise ValueError(f"--torque-constant {item!r}: expected JOINT:K with K a finite non-zero number "
                             "(N·m per unit of the recorded effort, e.g. wrist:0.0018 for N·m per mA)")
        if name in out:
            raise ValueError(f"--torque-constant: joint {name!r} given twice")
        out[name] = k
    return out
