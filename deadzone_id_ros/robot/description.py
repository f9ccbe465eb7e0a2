"""Joint names, limits and nominal friction of a URDF, parsed by pinocchio (no hand-written URDF parser)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
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
        lower, upper: (J,) position limits [rad].
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
    idx = []
    for n in joint_names:
        joint = model.joints[model.getJointId(n)]
        if joint.nv != 1:
            raise RobotDescriptionError(f"{path}: joint '{n}' has {joint.nv} DOF; only 1-DOF joints are supported")
        idx.append(joint.idx_v)
    idx_arr = np.asarray(idx, dtype=int)
    return RobotDescription(
        urdf_path=path,
        joint_names=tuple(joint_names),
        lower=np.asarray(model.lowerPositionLimit)[idx_arr].copy(),
        upper=np.asarray(model.upperPositionLimit)[idx_arr].copy(),
        velocity_limit=np.asarray(model.velocityLimit)[idx_arr].copy(),
        effort_limit=np.asarray(model.effortLimit)[idx_arr].copy(),
        friction=np.asarray(model.friction)[idx_arr].copy(),
        damping=np.asarray(model.damping)[idx_arr].copy(),
    )
