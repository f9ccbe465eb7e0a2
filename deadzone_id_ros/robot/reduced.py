"""Match a recording's joints to a URDF and lock the rest (pinocchio ``buildReducedModel``).

Real URDFs carry more joints than a recording: grippers, fingers, mimic joints, a second arm. Every URDF joint the
data lacks is locked at a configuration the user gives (default zero) and its body merged into its parent, so the
rigid-body model sees exactly the recorded joints. A data joint is found in the URDF by its own name or through a
joint map ``bag_name:urdf_name``; a URDF where some data joint cannot be found is refused, naming both lists.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from ..errors import RobotDescriptionError
from .description import joint_kind

if TYPE_CHECKING:
    import pinocchio as pin

__all__ = ["ReducedRobot", "build_reduced_model", "locked_positions", "match_joints", "parse_joint_map",
           "parse_locked"]


def parse_joint_map(items: Sequence[str] | None) -> dict[str, str]:
    """``["bag_name:urdf_name", ...]`` (the ``--joint-map`` arguments) to a dict bag name -> URDF name.

    Raises:
        RobotDescriptionError: an item is not ``a:b`` with both names non-empty, or a bag name or a URDF name
            appears twice.
    """
    out: dict[str, str] = {}
    for item in items or ():
        bag, sep, urdf = str(item).partition(":")
        bag, urdf = bag.strip(), urdf.strip()
        if not sep or not bag or not urdf or ":" in urdf:
            raise RobotDescriptionError(f"--joint-map {item!r}: expected bag_name:urdf_name")
        if bag in out:
            raise RobotDescriptionError(f"--joint-map: bag joint {bag!r} is mapped twice ({out[bag]!r}, {urdf!r})")
        if urdf in out.values():
            raise RobotDescriptionError(f"--joint-map: URDF joint {urdf!r} is the target of two bag joints")
        out[bag] = urdf
    return out


def parse_locked(items: Sequence[str] | None) -> dict[str, float]:
    """``["urdf_joint=value", ...]`` (positions of locked joints, rad or m) to a dict.

    Raises:
        RobotDescriptionError: an item is not ``name=number`` or names a joint twice.
    """
    out: dict[str, float] = {}
    for item in items or ():
        name, sep, value = str(item).partition("=")
        try:
            v = float(value)
        except ValueError:
            v = float("nan")
        if not sep or not name.strip() or not np.isfinite(v):
            raise RobotDescriptionError(f"locked joint {item!r}: expected urdf_joint=value (a finite number)")
        if name.strip() in out:
            raise RobotDescriptionError(f"locked joint {name.strip()!r} is given twice")
        out[name.strip()] = v
    return out


def locked_positions(entries: Sequence[str], field: str = "locked_joints") -> dict[str, float]:
    """A config's ``locked_joints`` (``"urdf_joint=value"`` entries, a robot profile's ``locked``) as URDF joint ->
    position [rad or m] (:func:`parse_locked`).

    Raises:
        ValueError: an entry that is not ``name=number`` or a joint given twice (names ``field``).
    """
    try:
        return parse_locked(entries)
    except RobotDescriptionError as err:
        raise ValueError(f"{field}: {err}") from err


def match_joints(data_names: Sequence[str], urdf_names: Sequence[str], joint_map: Mapping[str, str] | None = None,
                 source: str = "<urdf>") -> tuple[str, ...]:
    """The URDF joint of each data joint: ``joint_map[name]`` where given, else the same name.

    Args:
        data_names: (J,) joint names of the recording.
        urdf_names: the URDF's movable joints.
        joint_map: bag name -> URDF name (from :func:`parse_joint_map`).
        source: the URDF's name, for messages.

    Returns:
        (J,) URDF joint names in data order.

    Raises:
        RobotDescriptionError: the map names a bag joint the data lacks, two data joints land on one URDF joint, or
            a data joint has no URDF joint; the message lists the data's and the URDF's joints.
    """
    joint_map = dict(joint_map or {})
    both = f"data joints {list(data_names)}, URDF joints {list(urdf_names)}"
    stray = [b for b in joint_map if b not in data_names]
    if stray:
        raise RobotDescriptionError(f"{source}: --joint-map names joint(s) {stray} the recording lacks ({both})")
    target = tuple(joint_map.get(n, n) for n in data_names)
    missing = [f"{d}->{u}" if d != u else d for d, u in zip(data_names, target) if u not in urdf_names]
    if missing:
        raise RobotDescriptionError(f"{source}: joint(s) {missing} not in the URDF; if the recording was made on the "
                                    f"robot this URDF describes, pass --joint-map bag_name:urdf_name, else that "
                                    f"robot's URDF ({both})")
    if len(set(target)) != len(target):
        raise RobotDescriptionError(f"{source}: two data joints map to one URDF joint {list(target)} ({both})")
    return target


@dataclass(frozen=True)
class ReducedRobot:
    """A pinocchio model with exactly the recorded joints; every other URDF joint locked.

    Attributes:
        model: the reduced pinocchio Model (locked bodies merged into their parents).
        joint_names: (J,) data joint names.
        urdf_joint_names: (J,) the matching URDF joints.
        locked: URDF joint -> position it is locked at [rad or m]; multi-DOF joints are locked at their neutral
            configuration and listed with NaN.
        idx_q, nq_joint, idx_v: (J,) where each data joint sits in the reduced model's q (1 entry, or cos/sin for a
            continuous joint) and v.
        kinds: (J,) "revolute", "continuous" or "prismatic" (:func:`~.description.joint_kind`).
    """

    model: pin.Model
    joint_names: tuple[str, ...]
    urdf_joint_names: tuple[str, ...]
    locked: dict[str, float] = field(default_factory=dict)
    idx_q: np.ndarray = field(default_factory=lambda: np.zeros(0, int))
    nq_joint: np.ndarray = field(default_factory=lambda: np.zeros(0, int))
    idx_v: np.ndarray = field(default_factory=lambda: np.zeros(0, int))
    kinds: tuple[str, ...] = ()

    def describe(self) -> str:
        """One line: which URDF joints were locked where (``none`` when nothing was locked)."""
        if not self.locked:
            return "no URDF joint locked"
        parts = [f"{n}={v:g}" if np.isfinite(v) else f"{n}=neutral" for n, v in self.locked.items()]
        return f"locked {len(parts)} URDF joint(s) the data lacks: {', '.join(parts)}"

    def configuration(self, q: np.ndarray) -> np.ndarray:
        """Pinocchio configurations (N, nq) for joint angles q (N, J) [rad or m] (cos/sin for continuous joints)."""
        q = np.atleast_2d(np.asarray(q, dtype=np.float64))
        out = np.zeros((len(q), self.model.nq))
        one = self.nq_joint == 1
        out[:, self.idx_q[one]] = q[:, one]
        two = ~one
        out[:, self.idx_q[two]] = np.cos(q[:, two])
        out[:, self.idx_q[two] + 1] = np.sin(q[:, two])
        return out


def _lock_config(model: pin.Model, names: list[str],
                 locked: Mapping[str, float]) -> tuple[np.ndarray, dict[str, float]]:
    import pinocchio as pin

    q0 = pin.neutral(model)
    where: dict[str, float] = {}
    for n in names:
        joint = model.joints[model.getJointId(n)]
        v = float(locked.get(n, 0.0))
        if joint.nq == 1:
            q0[joint.idx_q] = v
            where[n] = v
        elif joint.nq == 2 and joint.nv == 1:
            q0[joint.idx_q: joint.idx_q + 2] = (np.cos(v), np.sin(v))
            where[n] = v
        elif n in locked:
            raise RobotDescriptionError(f"joint {n!r} has {joint.nv} DOF: it can only be locked at its neutral "
                                        "configuration (do not give it a value)")
        else:
            where[n] = float("nan")
    return q0, where


def build_reduced_model(urdf_xml: str, data_names: Sequence[str], joint_map: Mapping[str, str] | None = None,
                        locked: Mapping[str, float] | None = None, source: str = "<urdf>") -> ReducedRobot:
    """Parse a URDF with pinocchio (no geometry) and lock every joint the data lacks.

    Args:
        urdf_xml: URDF text.
        data_names: (J,) recorded joints; each must match a 1-DOF URDF joint (via ``joint_map`` or its name).
        joint_map: bag name -> URDF name.
        locked: URDF joint -> lock position [rad or m] for joints the data lacks (default 0 for each).
        source: the URDF's name, for messages.

    Raises:
        RobotDescriptionError: the URDF cannot be parsed; a data joint is missing (both lists in the message) or
            not 1-DOF; ``locked`` names a joint that is unknown or recorded.
    """
    import pinocchio as pin

    from .urdf_text import pinocchio_model

    full = pinocchio_model(urdf_xml, source)
    names = [str(n) for n in full.names][1:]
    movable = [n for n in names if full.joints[full.getJointId(n)].nv > 0]
    target = match_joints(data_names, movable, joint_map, source)
    for d, u in zip(data_names, target):
        joint = full.joints[full.getJointId(u)]
        if joint.nv != 1:
            raise RobotDescriptionError(f"{source}: joint {u!r} (data {d!r}) is {joint_kind(joint)} with {joint.nv} "
                                        "DOF; only 1-DOF joints (revolute, continuous, prismatic) are supported")
    locked = dict(locked or {})
    bad = [n for n in locked if n not in movable or n in target]
    if bad:
        raise RobotDescriptionError(f"{source}: cannot lock {bad}: a locked joint must be a URDF joint the data "
                                    f"lacks (URDF joints {movable}, recorded {list(target)})")
    to_lock = [n for n in movable if n not in target]
    q0, where = _lock_config(full, to_lock, locked)
    try:
        model = pin.buildReducedModel(full, [full.getJointId(n) for n in to_lock], q0) if to_lock else full
    except (ValueError, RuntimeError) as err:  # e.g. a locked joint named like a link: two frames of one name
        raise RobotDescriptionError(f"{source}: pinocchio cannot lock {to_lock}: {err} (rename the joint or the "
                                    "link that share a name)") from err
    joints = [model.joints[model.getJointId(u)] for u in target]
    return ReducedRobot(model=model, joint_names=tuple(data_names), urdf_joint_names=target, locked=where,
                        idx_q=np.array([j.idx_q for j in joints], dtype=int),
                        nq_joint=np.array([j.nq for j in joints], dtype=int),
                        idx_v=np.array([j.idx_v for j in joints], dtype=int),
                        kinds=tuple(joint_kind(j) for j in joints))
