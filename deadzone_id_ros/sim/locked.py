"""Lock the URDF joints the simulator does not actuate, exactly as pinocchio's reduced model does.

The rigid-body model, the controller and ``robot show`` use pinocchio's ``buildReducedModel``
(:func:`deadzone_id_ros.robot.reduced.build_reduced_model`): every URDF joint that is not controlled is locked at the
profile's value (default 0; multi-DOF joints at their neutral configuration) and its child body merged into its
parent. The simulator must build the same robot, so each such joint is removed from the MuJoCo spec here and its
child body turned to where the joint's value puts it: the body is then welded to its parent (a MuJoCo body without
joints moves with its parent), which is that reduced model exactly, with no constraint to drift, no solver softness
and no mass needed on bodies that no longer move (MuJoCo refuses moving massless bodies, mjMINVAL).

Equality constraints (a joint ``equality`` to a fixed value) were the alternative: they keep the joint, so the
locked body still needs mass and inertia, and the constraint is soft (solref/solimp): it gives way under load, by
how much depends on the solver settings. Removing the joint has neither problem.

Hinge (revolute, continuous): the body turns by ``value - ref`` about the joint axis through the joint's anchor.
Slide (prismatic): it moves by ``value - ref`` along the axis. Ball and free joints (URDF ``floating``) can only be
locked at their neutral configuration (identity), as pinocchio; a value for one is refused. A URDF ``<mimic>``
(a joint equality in MuJoCo) that involves a locked joint is dropped with it: the locked joint holds its value.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping

import mujoco
import numpy as np

from ..errors import RobotDescriptionError

__all__ = ["lock_uncontrolled_joints"]


def lock_uncontrolled_joints(spec: mujoco.MjSpec, controlled: Collection[str], locked: Mapping[str, float],
                             source: str = "<urdf>") -> dict[str, float]:
    """Weld every joint of ``spec`` not in ``controlled`` at its ``locked`` value (default 0) and remove it.

    Args:
        spec: a ``mujoco.MjSpec`` (changed in place).
        controlled: joint names that stay free (the actuated joints).
        locked: joint -> position [rad for a hinge, m for a slide].
        source: the URDF's name, for messages.

    Returns:
        joint -> the position it was locked at [rad or m] (NaN for a ball/free joint, locked at neutral).

    Raises:
        RobotDescriptionError: ``locked`` names a joint the spec lacks or a controlled joint, or gives a value to a
            ball/free joint.
    """
    import mujoco

    names = {j.name for j in spec.joints}
    bad = sorted(n for n in locked if n not in names or n in controlled)
    if bad:
        raise RobotDescriptionError(f"{source}: cannot lock joint(s) {bad}: a locked joint must be a URDF joint "
                                    f"that is not controlled (URDF joints {sorted(names)}, controlled "
                                    f"{sorted(controlled)})")
    out: dict[str, float] = {}
    for body in list(spec.bodies):
        for joint in list(body.joints):
            if joint.name in controlled:
                continue
            if joint.type in (mujoco.mjtJoint.mjJNT_HINGE, mujoco.mjtJoint.mjJNT_SLIDE):
                value = float(locked.get(joint.name, 0.0))
                _move_body(body, joint, value - float(joint.ref))
                out[joint.name] = value
            else:
                if joint.name in locked:
                    raise RobotDescriptionError(f"{source}: joint {joint.name!r} has several DOF: it can only be "
                                                "locked at its neutral configuration (do not give it a value)")
                out[joint.name] = float("nan")
            spec.delete(joint)
    for eq in list(spec.equalities):  # URDF <mimic> becomes a joint equality; a locked joint no longer takes part
        if eq.type == mujoco.mjtEq.mjEQ_JOINT and (eq.name1 in out or eq.name2 in out):
            spec.delete(eq)
    return out


def _move_body(body: mujoco.MjsBody, joint: mujoco.MjsJoint, displacement: float) -> None:
    """Turn (hinge) or shift (slide) ``body`` relative to its parent as ``joint`` at ``displacement`` does."""
    import mujoco

    axis = np.asarray(joint.axis, dtype=float)
    axis = axis / np.linalg.norm(axis)
    pos = np.asarray(body.pos, dtype=float)
    quat = np.asarray(body.quat, dtype=float)
    quat = quat / np.linalg.norm(quat)
    if joint.type == mujoco.mjtJoint.mjJNT_SLIDE:
        shift = np.zeros(3)
        mujoco.mju_rotVecQuat(shift, axis * displacement, quat)
        body.pos = pos + shift
        return
    turn = np.zeros(4)
    mujoco.mju_axisAngle2Quat(turn, axis, displacement)
    anchor = np.asarray(joint.pos, dtype=float)
    turned = np.zeros(3)
    mujoco.mju_rotVecQuat(turned, anchor, turn)
    shift = np.zeros(3)
    mujoco.mju_rotVecQuat(shift, anchor - turned, quat)  # the anchor stays where it was
    new_quat = np.zeros(4)
    mujoco.mju_mulQuat(new_quat, quat, turn)
    body.pos = pos + shift
    body.quat = new_quat
