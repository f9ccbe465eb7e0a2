"""The unit of the recorded effort, per joint: guessed from the bag, stated by the user, or N·m by a torque constant.

sensor_msgs/JointState does not declare units. ros2_control's joint_state_broadcaster publishes joint torque [N·m];
Dynamixel-based arms (Interbotix xs_sdk) publish the motor's present current [mA] as effort. A model trained on
current predicts current, and a controller that sends it as N·m commands the wrong torque. So the unit is carried
from the data into the training report, the model artifact (model.json ``units.tau`` and ``effort_units``; the ONNX
metadata) and the controller's check, which refuses a model that does not predict N·m. ``--torque-constant
JOINT:K`` (N·m per unit of the recorded effort) converts a joint's effort to N·m when the data are loaded.

Units go per joint kind (ROS REP 103, sensor_msgs/JointState: "effort [N·m or N]"): the effort of a revolute joint is
torque in N·m, that of a prismatic joint force in N. The magnitude guess is made per joint (a lift's 239 N does not
relabel the arm's torques), and where a URDF tells a joint is prismatic (:func:`with_joint_kinds`) its SI label is
N with its own plausibility bound. A model whose every joint predicts its kind's SI unit is what the controller takes
(:func:`not_si`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence

import numpy as np

__all__ = ["FIX_HINT", "NEWTON", "NEWTON_METRE", "PRESENT_LOAD", "PRESENT_LOAD_FULL_SCALE", "UNKNOWN", "effort_units",
           "guess_effort_unit", "guess_effort_units", "normalize_unit", "not_si", "parse_torque_constants",
           "present_load_torque", "si_effort_unit", "tau_unit", "unit_label", "with_joint_kinds"]

FIX_HINT = ("give --torque-constant JOINT:K (N·m per unit of the recorded effort) to convert it to N·m, or "
            "--effort-unit N*m if the effort already is joint torque")

NEWTON_METRE = "N*m"  # the unit string of model.json and the ONNX metadata (ASCII)
NEWTON = "N"  # the effort of a prismatic joint (a force)
UNKNOWN = "unknown"
#: A Feetech/Dynamixel serial-bus servo's Present_Load: its PWM duty in units of 0.1 %, whole numbers in
#: [-1000, 1000] (deadzone_id_ros/sim/servo.py); about stall torque / 1000 N·m per unit at rest.
PRESENT_LOAD = "0.1%duty"
#: Present_Load at 100 % duty [0.1 %].
PRESENT_LOAD_FULL_SCALE = 1000
_IMPLAUSIBLE_NM = 200.0  # |effort| above this is implausible as a manipulator joint torque [N·m]
# |effort| above this is implausible as the force of a manipulator's linear axis [N]: lifts and linear axes of arms
# push up to a few hundred N (Hello Robot Stretch's lift, the 239 N), heavy gantry axes a few kN; a Dynamixel's
# present current in mA reaches it only on a joint that is then also implausible as torque.
_IMPLAUSIBLE_N = 5000.0
#: a revolute joint's |effort| up to this times its URDF effort limit is plausible as N·m (the command is clamped to
#: the limit; a measured torque adds its noise and the friction of a backdriven joint)
EFFORT_LIMIT_MARGIN = 1.2


def si_effort_unit(kind: str) -> str:
    """The SI effort of a joint kind: "N" (force) for "prismatic", "N*m" (torque) for every other kind."""
    return NEWTON if kind == "prismatic" else NEWTON_METRE


def not_si(units: Mapping[str, str], kinds: Mapping[str, str] | None = None) -> dict[str, str]:
    """{joint: unit} of the joints whose effort is not their kind's SI unit (:func:`si_effort_unit`); a joint
    without a known kind must be in N·m."""
    kinds = kinds or {}
    return {j: u for j, u in units.items() if u != si_effort_unit(kinds.get(j, "revolute"))}


def guess_effort_units(msgtypes: Iterable[str], max_abs_effort: Mapping[str, float], *,
                       whole_numbers: bool = False) -> tuple[dict[str, str], str]:
    """({joint: unit}, reason) of a bag's effort from its message types and each joint's largest |effort|.

    One driver reports one quantity on every joint, so the bag is judged as a whole (:func:`guess_effort_unit` on the
    largest |effort|, and ``whole_numbers``: every effort a whole number, as a servo's Present_Load): a joint whose
    effort is implausible as N·m makes every joint "unknown", and the reason names it. A prismatic joint's force is
    told apart once a URDF says which joint it is (:func:`with_joint_kinds`).
    """
    peak_joint = max(max_abs_effort, key=lambda j: max_abs_effort[j], default=None)
    unit, why = guess_effort_unit(msgtypes, max_abs_effort[peak_joint] if peak_joint is not None else 0.0,
                                  whole_numbers=whole_numbers)
    if unit == UNKNOWN and peak_joint is not None:
        big = [j for j, v in max_abs_effort.items() if v > _IMPLAUSIBLE_NM]
        why += (f" (joint(s) {big}; if one is a prismatic joint, its effort is a force in N: give the URDF (--urdf) "
                "that says so)")
    return dict.fromkeys(max_abs_effort, unit), why


def with_joint_kinds(units: Mapping[str, str], kinds: Mapping[str, str], max_abs_effort: Mapping[str, float],
                     reason: str, effort_limits: Mapping[str, float] | None = None) -> tuple[dict[str, str], str]:
    """``units`` and ``reason`` revised once a URDF gives each joint's kind (``kinds``).

    A prismatic joint's SI effort is force [N]: every prismatic joint labelled N·m (guessed, stated, or converted by
    a torque constant) becomes "N". Where the guess was "unknown" only because some joint's |effort| is
    implausible as N·m (``reason`` says so), the guess is made again per kind: the revolute joints by the N·m bound
    over the revolute joints alone, the prismatic joints by :data:`_IMPLAUSIBLE_N` [N]; a lift's 239 N no longer
    relabels the arm's torques. A revolute joint's bound is its URDF effort limit where that is higher
    (``effort_limits``, times :data:`EFFORT_LIMIT_MARGIN`): a UR10's shoulder, rated 330 N·m, reaches 204 N·m in N·m.
    Units the user stated other than N·m, and current (mA), are left as they are.

    Args:
        units: {joint: unit} as loaded.  kinds: {joint: "revolute" | "continuous" | "prismatic"}.
        max_abs_effort: {joint: largest |effort| of the training data}.  reason: why ``units`` were guessed.
        effort_limits: {joint: the URDF's effort limit [N·m or N]} (0 or missing: none given).
    """
    out = dict(units)
    magnitude = "implausible as N·m" in reason
    revolute = [j for j in units if kinds.get(j) != "prismatic"]
    limits = effort_limits or {}
    revolute_ok = all(max_abs_effort.get(j, 0.0) <= max(_IMPLAUSIBLE_NM, EFFORT_LIMIT_MARGIN * limits.get(j, 0.0))
                      for j in revolute)
    changed = []
    for joint, unit in units.items():
        prismatic = kinds.get(joint) == "prismatic"
        if prismatic and (unit == NEWTON_METRE or (unit == UNKNOWN and magnitude
                                                   and max_abs_effort.get(joint, math.inf) <= _IMPLAUSIBLE_N)):
            out[joint] = NEWTON
        elif not prismatic and unit == UNKNOWN and magnitude and revolute_ok:
            out[joint] = NEWTON_METRE
        if out[joint] != unit:
            changed.append(joint)
    if not changed:
        return out, reason
    force = [j for j in units if out[j] == NEWTON and kinds.get(j) == "prismatic"]
    torque = [j for j in changed if out[j] == NEWTON_METRE]
    parts = ([f"the URDF's prismatic joint(s) {force}: force in N"] if force else []) + (
        [f"joint(s) {torque}: torque plausible as N·m once the prismatic joints' force is told apart and each joint "
         "is held to its URDF effort limit"]
        if torque else [])
    return out, "; ".join(parts) + f" (as loaded: {reason})"


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


def effort_units(joints: Sequence[str], guessed: str | Mapping[str, str], *, effort_unit: str | None = None,
                 torque_constants: Mapping[str, float] | None = None) -> dict[str, str]:
    """{joint: unit of its training label}: "N*m" where a torque constant converted it, else ``effort_unit`` (what
    the user states for the recording; :func:`normalize_unit`) or, without one, ``guessed`` (one unit, or per joint:
    :func:`guess_effort_units`; a joint it lacks: "unknown")."""
    constants = torque_constants or {}
    if effort_unit:
        guessed = normalize_unit(effort_unit)
    per = guessed if isinstance(guessed, Mapping) else dict.fromkeys(joints, guessed)
    return {j: NEWTON_METRE if j in constants else str(per.get(j, UNKNOWN)) for j in joints}


def tau_unit(units: Mapping[str, str]) -> str:
    """The one unit of every joint (model.json's ``units.tau``): "N*m" when empty or when every joint is in N·m or
    N, i.e. SI joint effort (torque, and force for a prismatic joint; model.json's ``effort_units`` says which joint
    is which), the single unit of every joint ("mA"), or "mixed" when the joints' units differ otherwise."""
    kinds = set(units.values())
    if kinds <= {NEWTON_METRE, NEWTON}:
        return NEWTON_METRE
    return kinds.pop() if len(kinds) == 1 else "mixed"


def unit_label(units: Mapping[str, str] | None) -> str:
    """The unit as printed in tables and reports: "N·m", "N", "N·m / N" (SI torque and force per joint kind), the
    single unit ("mA"), or "mixed units" (J,)."""
    kinds = set((units or {}).values())
    if kinds == {NEWTON_METRE, NEWTON}:
        return "N·m / N"
    unit = tau_unit(units or {})
    return "N·m" if unit == NEWTON_METRE else ("mixed units" if unit == "mixed" else unit)


def present_load_torque(load: np.ndarray, dq: np.ndarray, stall_torque: np.ndarray,
                        no_load_speed: np.ndarray | None = None) -> np.ndarray:
    """Output torque [N·m] of a servo that reports Present_Load ``load`` (:data:`PRESENT_LOAD`) at output speed
    ``dq``: the inverse of the voltage-driven DC-motor model ``duty = tau / tau_stall + dq / w0``
    (:mod:`deadzone_id_ros.sim.servo`; M. Duclusaud et al., "Extended Friction Models for the Physics Simulation of
    Servo Actuators", arXiv:2410.08650, 2024), ``tau = tau_stall (load / 1000 - dq / w0)``. Exact to the reading's
    quantum (tau_stall / 1000) inside the clip at +-1000; a clipped reading gives the torque at full duty.

    Args:
        load: (..., J) Present_Load [0.1 % duty].  dq: (..., J) output speed [rad/s].
        stall_torque: (J,) stall torque at the supply voltage [N·m] (> 0).
        no_load_speed: (J,) no-load speed [rad/s] (> 0); None: the back-EMF term left out (right at rest only, as
            ``--torque-constant JOINT:tau_stall/1000``).

    Returns:
        (..., J) torque [N·m].
    """
    tau = np.asarray(load, dtype=float) / PRESENT_LOAD_FULL_SCALE
    if no_load_speed is not None:
        tau = tau - np.asarray(dq, dtype=float) / np.asarray(no_load_speed, dtype=float)
    return tau * np.asarray(stall_torque, dtype=float)


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
