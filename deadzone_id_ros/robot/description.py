"""Joint names, kinds, limits and nominal friction of a URDF, parsed by pinocchio (no hand-written URDF parser).

Joint kinds and their SI units (ROS REP 103; sensor_msgs/JointState: "position [rad or m]", "effort [N·m or N]"):
revolute and continuous joints in rad, rad/s, rad/s², N·m; prismatic joints in m, m/s, m/s², N. Only 1-DOF joints
can be controlled: a floating, planar or spherical joint in the controlled set is refused, naming the joint and its
kind (lock it, or leave it out).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ..errors import RobotDescriptionError

if TYPE_CHECKING:
    import pinocchio

__all__ = ["JOINT_UNITS", "PRISMATIC_MARGIN_FRACTION", "JointLimits", "JointUnits", "RobotDescription", "joint_kind",
           "joint_units", "load_robot_description", "position_margins"]

#: Distance kept from a prismatic joint's position limits, as a fraction of its stroke (upper - lower) [1]: the
#: excitation's margin and the default home pose's inset. A revolute joint's margin is in rad; a stroke of 0.4 m
#: minus a 0.2 "rad" margin at each end left nothing.
PRISMATIC_MARGIN_FRACTION = 0.05


@dataclass(frozen=True)
class JointUnits:
    """The SI units of one joint kind, as written in model.json and reports (ASCII).

    Attributes:
        position, velocity, acceleration, effort: e.g. "rad", "rad/s", "rad/s^2", "N*m" (revolute) or "m", "m/s",
            "m/s^2", "N" (prismatic).
    """

    position: str
    velocity: str
    acceleration: str
    effort: str


#: Joint kind -> its units: revolute and continuous in rad and N·m, prismatic in m and N.
JOINT_UNITS = {"revolute": JointUnits("rad", "rad/s", "rad/s^2", "N*m"),
               "continuous": JointUnits("rad", "rad/s", "rad/s^2", "N*m"),
               "prismatic": JointUnits("m", "m/s", "m/s^2", "N")}
_MULTI_DOF = {"JointModelFreeFlyer": "floating", "JointModelPlanar": "planar", "JointModelSpherical": "spherical",
              "JointModelSphericalZYX": "spherical"}


def joint_kind(joint: pinocchio.JointModel) -> str:
    """The URDF kind of a pinocchio joint model: "revolute", "continuous", "prismatic", "floating", "planar",
    "spherical", or pinocchio's own name (``shortname()``) for any other."""
    name = str(joint.shortname())
    if name.startswith("JointModelP") and (name[-1] in "XYZ" and len(name) == len("JointModelPX")
                                           or "Prismatic" in name):
        return "prismatic"
    if joint.nq == 2 and joint.nv == 1:
        return "continuous"
    if joint.nq == 1 and joint.nv == 1 and (name.startswith("JointModelR") or "Revolute" in name):
        return "revolute"
    return _MULTI_DOF.get(name, name)


def joint_units(kind: str) -> JointUnits:
    """The units of joint kind ``kind`` (:data:`JOINT_UNITS`; a kind it lacks takes the revolute ones)."""
    return JOINT_UNITS.get(kind, JOINT_UNITS["revolute"])


@dataclass(frozen=True)
class JointLimits:
    """Limits of one joint from the URDF ``<limit>`` tag (rad, rad/s, N·m; prismatic: m, m/s, N)."""

    lower: float
    upper: float
    velocity: float
    effort: float


@dataclass(frozen=True)
class RobotDescription:
    """The actuated 1-DOF joints of a URDF, in the order asked for. Units per joint kind (:data:`JOINT_UNITS`):
    rad and N·m for revolute/continuous joints, m and N for prismatic ones.

    Attributes:
        urdf_path: the file it was read from.
        joint_names: (J,) joint names, in the order of every array below.
        lower, upper: (J,) position limits [rad or m]; -inf / +inf for a continuous joint (no position limit).
        continuous: (J,) True for a continuous joint (pinocchio stores its angle as cos/sin: two q entries).
        velocity_limit: (J,) [rad/s or m/s].
        effort_limit: (J,) [N·m or N].
        friction: (J,) URDF ``<dynamics friction>`` (Coulomb/static friction) [N·m or N].
        damping: (J,) URDF ``<dynamics damping>`` (viscous) [N·m·s/rad or N·s/m].
        kinds: (J,) "revolute", "continuous" or "prismatic" (default: revolute, continuous where marked).
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
    kinds: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if len(self.continuous) != len(self.joint_names):
            object.__setattr__(self, "continuous", np.zeros(len(self.joint_names), dtype=bool))
        if len(self.kinds) != len(self.joint_names):
            object.__setattr__(self, "kinds", tuple("continuous" if c else "revolute" for c in self.continuous))

    def units(self, name: str) -> JointUnits:
        """The units of joint ``name`` (:func:`joint_units` of its kind); raises RobotDescriptionError if unknown."""
        return joint_units(self.kinds[self._index(name)])

    @property
    def prismatic(self) -> np.ndarray:
        """(J,) True for a prismatic joint (positions in m, effort in N)."""
        return np.array([k == "prismatic" for k in self.kinds], dtype=bool)

    def _index(self, name: str) -> int:
        try:
            return self.joint_names.index(name)
        except ValueError as err:
            raise RobotDescriptionError(
                f"{self.urdf_path}: no joint named '{name}' (joints: {list(self.joint_names)})") from err

    def check_effort_limits(self) -> None:
        """Refuse joints a controller cannot command: an effort limit of 0, negative or missing (not finite).

        CAD-exported URDFs often carry ``effort="0"`` (dex-urdf issue 29); a controller that clamps to it commands
        0 N·m forever without a word.

        Raises:
            RobotDescriptionError: names each such joint, its limit, and the fix.
        """
        bad = {j: float(e) for j, e in zip(self.joint_names, self.effort_limit) if not (np.isfinite(e) and e > 0)}
        if bad:
            unit = " / ".join(sorted({self.units(j).effort for j in bad}))
            raise RobotDescriptionError(
                f"{self.urdf_path}: joint(s) {list(bad)} have effort limit(s) {list(bad.values())} {unit}: every "
                f"controlled joint needs a positive effort limit (the command is clamped to it); set "
                f"<limit effort=\"...\"> in the URDF to the actuator's peak torque (force for a prismatic joint)")

    def effort_limits(self, given: Sequence[float | None] = (), source: str = "effort_limit") -> np.ndarray:
        """(J,) the actuators' effort limits [N·m or N]: the one rule every clamp, fit and check uses. ``given`` (a
        robot profile's ``effort_limit`` setting, a config's ``effort_limit``) where it gives a value, else the
        URDF's ``<limit effort>``.

        A given limit above the URDF's is refused, not taken: the URDF's limit is what the rest of the robot's
        description (the URDF's own consumers, ros2_control's hardware interface) holds the joint to, so a larger
        one is a typo or the wrong robot; a smaller one (the real drive's datasheet, e.g. the SO-101 servo's 1.9 N·m
        against a 10 N·m placeholder) is what the setting is for.

        Args:
            given: () (the URDF's), or (J,) values in ``joint_names`` order, None for a joint it leaves to the URDF.
            source: what ``given`` is, for messages (e.g. "robot profile so101's effort_limit").

        Raises:
            RobotDescriptionError: ``given`` has the wrong length, a value that is not finite and > 0, or one above
                the URDF's limit (names the joint and both values); a joint left to the URDF whose limit is 0 or
                missing (:meth:`check_effort_limits`).
        """
        urdf = np.asarray(self.effort_limit, dtype=float)
        if not len(given):
            self.check_effort_limits()
            return urdf.copy()
        if len(given) != self.n_joints:
            raise RobotDescriptionError(f"{source}: {len(given)} values for the {self.n_joints} joints "
                                        f"{list(self.joint_names)}")
        out = urdf.copy()
        for i, (joint, value) in enumerate(zip(self.joint_names, given)):
            if value is None:
                if not (np.isfinite(urdf[i]) and urdf[i] > 0):
                    self.check_effort_limits()
                continue
            unit = self.units(joint).effort
            if not (np.isfinite(value) and value > 0):
                raise RobotDescriptionError(f"{source}: joint {joint} effort limit {value!r} {unit} must be > 0")
            if np.isfinite(urdf[i]) and urdf[i] > 0 and value > urdf[i]:
                raise RobotDescriptionError(
                    f"{source}: joint {joint} effort limit {value:g} {unit} is above the URDF's <limit effort> "
                    f"{urdf[i]:g} {unit} ({self.urdf_path}): a limit may only lower the URDF's; give the drive's "
                    "peak torque at most the URDF's, or correct the URDF")
            out[i] = float(value)
        return out

    @property
    def n_joints(self) -> int:
        """Number of joints J."""
        return len(self.joint_names)

    def limits(self, name: str) -> JointLimits:
        """Return the limits of joint ``name``; raises RobotDescriptionError if the URDF lacks it."""
        i = self._index(name)
        return JointLimits(
            float(self.lower[i]), float(self.upper[i]), float(self.velocity_limit[i]), float(self.effort_limit[i])
        )


def position_margins(description: RobotDescription, revolute: float,
                     prismatic_fraction: float = PRISMATIC_MARGIN_FRACTION) -> np.ndarray:
    """(J,) distance to keep from each joint's position limits, in the joint's own unit: ``revolute`` [rad] for a
    revolute or continuous joint, ``prismatic_fraction`` of the stroke [m] for a prismatic one."""
    stroke = np.where(np.isfinite(description.upper - description.lower), description.upper - description.lower, 0.0)
    return np.where(description.prismatic, prismatic_fraction * stroke, revolute)


def load_robot_description(urdf_path: str | Path, joint_names: Sequence[str] | None = None) -> RobotDescription:
    """Read joints and limits from ``urdf_path``.

    Args:
        urdf_path: a URDF file.
        joint_names: joints to take, in this order; default: every 1-DOF joint in the URDF's tree order.

    Raises:
        FileNotFoundError: the file does not exist.
        RobotDescriptionError: the URDF cannot be parsed (or xacro cannot expand it), or lacks a requested joint (all
            missing names listed), or a requested joint has more than one degree of freedom (names it and its kind).
    """
    from .urdf_text import load_urdf_model

    path = Path(urdf_path)
    model = load_urdf_model(path)
    names = [str(n) for n in model.names][1:]  # index 0 is the universe joint
    if joint_names is None:
        joint_names = [n for n in names if model.joints[model.getJointId(n)].nv == 1]
    missing = [n for n in joint_names if n not in names]
    if missing:
        raise RobotDescriptionError(f"{path}: joint(s) {missing} not in the URDF (its joints: {names})")
    idx_q, idx_v, continuous, kinds = [], [], [], []
    for n in joint_names:
        joint = model.joints[model.getJointId(n)]
        if joint.nv != 1:
            raise RobotDescriptionError(
                f"{path}: joint '{n}' is {joint_kind(joint)} ({joint.nv} DOF); only 1-DOF joints (revolute, "
                "continuous, prismatic) can be controlled: lock it in the profile (`locked`, at its neutral "
                "configuration) or leave it out")
        kinds.append(joint_kind(joint))
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
        kinds=tuple(kinds),
    )
