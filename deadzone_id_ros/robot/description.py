"""Joint names, limits and nominal friction of a URDF, parsed by pinocchio (no hand-written URDF parser)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..errors import RobotDescriptionError

__all__ = ["JointLimits", "RobotDescription", "load_robot_description"]


@dataclass(frozen=True)
class JointLimits:
    """Limits of one joint from the URDF ``<limit>`` tag (rad, rad/s, N·m)."""

    lower: float
    upper: float
    velocity: float
    effort: float


@dataclass(frozen=True)
class RobotDescription:
    """The actuated revolute joints of a URDF, in the order asked for.

    Attributes:
        urdf_path: the file it was read from.
        joint_names: (J,) joint names, in the order of every array below.
        lower, upper: (J,) position limits [rad]; -inf / +inf for a continuous joint (no position limit).
        continuous: (J,) True for a continuous joint (pinocchio stores its angle as cos/sin: two q entries).
        velocity_limit: (J,) [rad/s].
        effort_limit: (J,) [N·m].
        friction: (J,) URDF ``<dynamics friction>`` (Coulomb/static friction) [N·m].
        damping: (J,) URDF ``<dynamics damping>`` (viscous) [N·m·s/rad].
    """

    urdf_path: Path
    joint_names: tuple[str, ...]
    lower: np.ndarray
    upper: np.ndarray
    velocity_limit: np.ndarray
    effort_limit: np.ndarray
    friction: np.ndarray
    damping: np.ndarray
    continuous: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))

    def __post_init__(self) -> None:
        if len(self.continuous) != len(self.joint_names):
            object.__setattr__(self, "continuous", np.zeros(len(self.joint_names), dtype=bool))

    def check_effort_limits(self) -> None:
        """Refuse joints a controller cannot command: an effort limit of 0, negative or missing (not finite).

        CAD-exported URDFs often carry ``effort="0"`` (dex-urdf issue 29); a controller that clamps to it commands
        0 N·m forever without a word.

        Raises:
            RobotDescriptionError: names each such joint, its limit, and the fix.
        """
        bad = {j: float(e) for j, e in zip(self.joint_names, self.effort_limit) if not (np.isfinite(e) and e > 0)}
        if bad:
            raise RobotDescriptionError(
                f"{self.urdf_path}: joint(s) {list(bad)} have effort limit(s) {list(bad.values())} N*m: every "
                f"controlled joint needs a positive effort limit (the command is clamped to it); set "
                f"<limit effort=\"...\"> in the URDF to the actuator's peak torque")

    @property
    def n_joints(self) -> int:
        """Number of joints J."""
        return len(self.joint_names)

    def limits(self, name: str) -> JointLimits:
        """Return the limits of joint ``name``; raises RobotDescriptionError if the URDF lacks it."""
        try:
            i = self.joint_names.index(name)
        except ValueError as err:
            raise RobotDescriptionError(
                f"{self.urdf_path}: no joint named '{name}' (joints: {list(self.joint_names)})"
            ) from err
        return JointLimits(
            float(self.lower[i]), float(self.upper[i]), float(self.velocity_limit[i]), float(self.effort_limit[i])
        )


def load_robot_description(urdf_path: str | Path, joint_names: Sequence[str] | None = None) -> RobotDescription:
    """Read joints and limits from ``urdf_path``.

    Args:
        urdf_path: a URDF file.
        joint_names: joints to take, in this order; default: every 1-DOF joint in the URDF's tree order.

    Raises:
        FileNotFoundError: the file does not exist.
        RobotDescriptionError: the URDF cannot be parsed, or lacks a requested joint (all missing names listed),
            or a requested joint has more than one degree of freedom.
    """
    import pinocchio as pin

    path = Path(urdf_path)
    if not path.is_file():
        raise FileNotFoundError(f"URDF {path} does not exist")
    try:
        model = pin.buildModelFromUrdf(str(path))
    except (RuntimeError, ValueError) as err:
        raise RobotDescriptionError(f"{path}: pinocchio cannot parse this URDF: {err}") from err
    names = [str(n) for n in model.names][1:]  # index 0 is the universe joint
    if joint_names is None:
        joint_names = [n for n in names if model.joints[model.getJointId(n)].nv == 1]
    missing = [n for n in joint_names if n not in names]
    if missing:
        raise RobotDescriptionError(f"{path}: joint(s) {missing} not in the URDF (its joints: {names})")
    idx_q, idx_v, continuous = [], [], []
    for n in joint_names:
        joint = model.joints[model.getJointId(n)]
        if joint.nv != 1:
            raise RobotDescriptionError(f"{path}: joint '{n}' has {joint.nv} DOF; only 1-DOF joints are supported")
        idx_q.append(joint.idx_q)
        idx_v.append(joint.idx_v)
        continuous.append(joint.nq == 2)  # a continuous joint: cos/sin in q, no position limit
    # Position limits are indexed in q, the rest in v: they differ after a continuous joint (two q entries, one v),
    # where indexing the position limits with v gave every later joint its predecessor's limits (ros2_controllers
    # PR 2523 is the same bug).
    cont = np.asarray(continuous, dtype=bool)
    lower = np.asarray(model.lowerPositionLimit)[np.asarray(idx_q, dtype=int)].copy()
    upper = np.asarray(model.upperPositionLimit)[np.asarray(idx_q, dtype=int)].copy()
    lower[cont], upper[cont] = -np.inf, np.inf
    v = np.asarray(idx_v, dtype=int)
    return RobotDescription(
        urdf_path=path,
        joint_names=tuple(joint_names),
        lower=lower,
        upper=upper,
        velocity_limit=np.asarray(model.velocityLimit)[v].copy(),
        effort_limit=np.asarray(model.effortLimit)[v].copy(),
        friction=np.asarray(model.friction)[v].copy(),
        damping=np.asarray(model.damping)[v].copy(),
        continuous=cont,
    )
