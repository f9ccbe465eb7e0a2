"""A robot profile for a catalog robot (``deadzone-id robots``) that is a fixed-base serial arm, derived from its URDF's
kinematic tree; every other catalog entry is refused with the reason.

The tree of movable joints (pinocchio merges fixed joints into their links) is walked from the base while each joint
carries exactly one movable subtree: those joints are the arm. Where the tree branches, or where the chain ends,
what follows is the end effector: every joint there must look like a gripper (a name with ``gripper``, ``finger``,
``jaw``, ``claw``, ``hand``, ``tool`` or ``thumb``) and is locked; trailing chain joints with such names are locked
too. Refused, with the reason: a floating base (a free-flyer or planar root joint: a legged robot, a humanoid, a
drone), a tree that branches before two arm joints or into chains that are not grippers (legs, several arms, a mobile
base with wheels, the fingers of a hand), and joints with more than one degree of freedom in the arm.

The derived profile locks each gripper joint at 0 (clipped into its limits), sets the home pose to zero clipped
into the inner 80% of each joint's range (the middle of the range for a joint whose range excludes zero) unless its
gravity load takes more than :data:`HOME_GRAVITY_SHARE` of an effort limit (an outstretched arm, whose excitation
would then have to shrink to stay within the drives), in which case to the pose of least gravity load (largest share
of an effort limit) among 64 poses drawn within that inner range (seeded), and leaves every per-joint value to
:func:`.derived.derive_robot` (rotor inertia by its default rule, gains and DOB cutoff from the inertia spread). A
written profile file always wins: pass its path, or a shipped profile's name (``panda``, ``so101``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import ConfigError

__all__ = ["GRIPPER_PATTERN", "ArmStructure", "arm_structure", "catalog_profile_values"]

#: Joint names taken for an end effector's (locked, not controlled).
GRIPPER_PATTERN = re.compile(r"gripper|finger|jaw|claw|hand|tool|thumb", re.IGNORECASE)
#: An arm has at least this many controlled joints.
MIN_ARM_JOINTS = 2
#: The home pose is zero clipped into this inner share of each joint's range.
HOME_INNER = 0.8
#: ... unless its gravity torque exceeds this share of an effort limit; then the pose of least gravity load.
HOME_GRAVITY_SHARE = 0.3


@dataclass(frozen=True)
class ArmStructure:
    """What the URDF's kinematic tree says about a robot.

    Attributes:
        arm: the controlled joints, base to tip ("" reason) or the joints before the refusal.
        locked: joint -> position the end-effector joints are locked at [rad or m].
        reason: "" for a fixed-base serial arm, else why not (for the user).
    """

    arm: tuple[str, ...]
    locked: dict[str, float]
    reason: str = ""


def _subtree(children: dict[int, list[int]], root: int) -> list[int]:
    out, todo = [], [root]
    while todo:
        j = todo.pop()
        out.append(j)
        todo.extend(children.get(j, []))
    return out


def arm_structure(model) -> ArmStructure:  # noqa: C901 - one walk with its refusals
    """Classify a pinocchio ``model`` (built from a URDF without a root joint) as a fixed-base serial arm or not.

    Returns:
        the arm's joints and the locked end-effector joints, or ``reason`` non-empty.
    """
    names = [str(n) for n in model.names]
    movable = [i for i in range(1, model.njoints) if model.joints[i].nv > 0]
    if not movable:
        return ArmStructure((), {}, "it has no movable joint")
    kind = {i: model.joints[i].shortname() for i in movable}
    for i in movable:
        if kind[i] in ("JointModelFreeFlyer", "JointModelPlanar") or model.joints[i].nv >= 6:
            return ArmStructure((), {}, f"its joint {names[i]!r} is a floating base ({kind[i]}): a legged robot, "
                                        "a humanoid or a flying robot, not a fixed-base arm")
    children: dict[int, list[int]] = {}
    for i in movable:
        p = int(model.parents[i])
        while p != 0 and model.joints[p].nv == 0:
            p = int(model.parents[p])
        children.setdefault(p, []).append(i)
    chain: list[int] = []
    cur = 0
    while len(children.get(cur, [])) == 1:
        cur = children[cur][0]
        chain.append(cur)
    rest = [j for k in children.get(cur, []) for j in _subtree(children, k)]
    while chain and GRIPPER_PATTERN.search(names[chain[-1]]):  # a serial gripper joint at the tip
        rest.insert(0, chain.pop())
    others = [names[j] for j in rest if not GRIPPER_PATTERN.search(names[j])]
    arm = tuple(names[j] for j in chain)
    if others:
        where = names[cur] if cur else "the base"
        branches = len(children.get(cur, []))
        return ArmStructure(arm, {}, (
            f"its kinematic tree branches after {where} into {branches} chains of movable joints, not only a "
            f"gripper ({', '.join(others[:6])}{', ...' if len(others) > 6 else ''}): legs, several arms, a mobile "
            "base or the fingers of a hand, not one fixed-base serial arm"))
    if not arm and rest:
        return ArmStructure(arm, {}, (
            f"every movable joint looks like a gripper's or a hand's ({', '.join(names[j] for j in rest[:6])}"
            f"{', ...' if len(rest) > 6 else ''}): a hand or gripper, not an arm"))
    if len(arm) < MIN_ARM_JOINTS:
        return ArmStructure(arm, {}, f"it has {len(arm)} joint(s) in series from its base (an arm needs at least "
                                     f"{MIN_ARM_JOINTS})")
    multi = [names[j] for j in chain if model.joints[j].nv != 1]
    if multi:
        return ArmStructure(arm, {}, f"its joint(s) {multi} have more than one degree of freedom")
    locked: dict[str, float] = {}
    for j in rest:
        if model.joints[j].nv == 1 and model.joints[j].nq == 1:
            lo = float(model.lowerPositionLimit[model.joints[j].idx_q])
            hi = float(model.upperPositionLimit[model.joints[j].idx_q])
            locked[names[j]] = float(np.clip(0.0, lo, hi)) if lo <= hi else 0.0
    return ArmStructure(arm, locked)


def catalog_profile_values(name: str) -> dict[str, Any]:
    """The fields of the derived :class:`~.profile.RobotProfile` of the catalog robot ``name`` (module docstring):
    ``name``, ``urdf``, ``joint_names``, ``locked``, ``home`` and ``derivation``.

    Raises:
        ConfigError: ``name`` is a catalog robot that is not a fixed-base serial arm (the reason and what to do).
        RobotDescriptionError: ``name`` is not in the catalog, or pinocchio cannot parse its URDF.
    """
    from .catalog import resolve_robot_model
    from .urdf_text import load_urdf_model

    entry = resolve_robot_model(name)
    model = load_urdf_model(entry.urdf_path)
    found = arm_structure(model)
    if found.reason:
        raise ConfigError(f"--robot {name!r}: the catalog robot is not a fixed-base serial arm: {found.reason}. "
                          f"Write a profile naming the joints of one chain to control (`deadzone-id robots --joints "
                          f"{name}` lists them; docs/own-arm.md shows how)")
    idx = [model.joints[model.getJointId(j)].idx_q for j in found.arm]
    lo, hi = model.lowerPositionLimit[idx], model.upperPositionLimit[idx]
    finite = np.isfinite(lo) & np.isfinite(hi) & (hi > lo) & (hi - lo < 1e6)
    inset = np.where(finite, (1 - HOME_INNER) / 2 * (hi - lo), 0.0)
    # zero clipped into the inner range; a joint whose range excludes zero (the Panda's elbow) at its middle instead,
    # since the excitation is centred on home and a home near a limit leaves it no room
    home = np.where(finite, np.where((lo < 0) & (hi > 0), np.clip(0.0, lo + inset, hi - inset), (lo + hi) / 2), 0.0)
    home, why_home = _home(entry.urdf_path, found, home, np.where(finite, lo + inset, -np.pi),
                           np.where(finite, hi - inset, np.pi))
    locked = ", ".join(f"{k}={v:g}" for k, v in found.locked.items()) or "none"
    return dict(
        name=name, urdf=name, joint_names=found.arm, locked=found.locked, home=tuple(float(v) for v in home),
        derivation=(f"derived from the catalog URDF {entry.urdf_path.name}: the {len(found.arm)} joints in series "
                    f"from the base, the end effector locked ({locked}), home {why_home}; a profile file overrides "
                    "all of it"))


def _home(urdf_path, found: ArmStructure, zero: np.ndarray, lo: np.ndarray,
          hi: np.ndarray) -> tuple[np.ndarray, str]:
    """The home pose (J,) [rad] and why: ``zero`` unless its gravity load is too high (module docstring)."""
    import pinocchio as pin

    from .description import load_robot_description
    from .inertia import sample_poses
    from .reduced import build_reduced_model
    from .urdf_text import read_urdf

    reduced = build_reduced_model(read_urdf(urdf_path), found.arm, locked=found.locked, source=str(urdf_path))
    effort = load_robot_description(urdf_path, found.arm).effort_limit
    if not np.all(effort > 0):
        return zero, f"zero clipped into the inner {HOME_INNER:.0%} of each range (its middle where it excludes zero)"
    data = reduced.model.createData()
    poses = sample_poses(lo, hi, zero)
    load = np.array([np.max(np.abs(np.asarray(pin.computeGeneralizedGravity(reduced.model, data, c))[reduced.idx_v])
                            / effort) for c in reduced.configuration(poses)])
    if load[0] <= HOME_GRAVITY_SHARE:
        return zero, f"zero clipped into the inner {HOME_INNER:.0%} of each range (its middle where it excludes zero)"
    k = int(np.argmin(load))
    return poses[k], (f"the least gravity load of {len(poses)} poses in the inner {HOME_INNER:.0%} of each range "
                      f"({load[k]:.0%} of an effort limit; zero would take {load[0]:.0%})")
