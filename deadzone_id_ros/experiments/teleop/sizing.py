"""How ``deadzone-id teleop``'s scenarios are sized to the arm (core, no ROS): the move into the box, the operator's
impedance and the gentle push of the ``stuck`` scenario, so that one rule serves every robot profile.

Light on purpose (numpy only at import; MuJoCo and the URDF parser inside the functions): the command line's help
quotes :data:`HAND_LOAD_SHARE` and :data:`HAND_DAMPING_TIME` without loading the simulator.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

import numpy as np

if TYPE_CHECKING:
    from ...sim.external_forces import PushConfig
    from ...teleop.build import ArmSetup

__all__ = ["DEFAULT_MOVE", "HAND_DAMPING_TIME", "HAND_LOAD_SHARE", "hand_impedance", "joint_move", "stuck_push"]

#: share of the moved joint's effort limit the operator's hand asks for at the reference's overshoot (auto stiffness)
HAND_LOAD_SHARE = 0.375
#: [s] the operator's damping over its stiffness (auto damping)
HAND_DAMPING_TIME = 0.05
#: [rad] the default move into the box, on the first joint
DEFAULT_MOVE = 0.5


class ScenarioSettings(Protocol):
    """The settings these rules read (:class:`.run.TeleopSettings` has them)."""

    @property
    def move(self) -> Sequence[float] | None: ...
    @property
    def overshoot(self) -> float: ...
    @property
    def hand_stiffness(self) -> float | None: ...
    @property
    def hand_damping(self) -> float | None: ...
    @property
    def stuck_push(self) -> float: ...
    @property
    def duration(self) -> float: ...


def _probe(s: ArmSetup) -> tuple[str, tuple[float, ...]]:
    """The probe of an arm: (its last link's name, the payload point on it [m])."""
    from ..sense.run import _last_link

    return _last_link(s.urdf, s.sim.joint_names[-1]), tuple(s.sim.payload_position)


def joint_move(s: ArmSetup, settings: ScenarioSettings) -> np.ndarray:
    """The joint-space move into the box (J,) [rad]: ``settings.move``, else :data:`DEFAULT_MOVE` on the first joint.

    Raises:
        ValueError: ``settings.move`` has not one value per joint of ``s``.
    """
    if settings.move is not None:
        m = np.asarray(settings.move, float)
        if m.shape != (len(s.sim.joint_names),):
            raise ValueError(f"move must have {len(s.sim.joint_names)} values [rad], got {list(settings.move)}")
        return m
    m = np.zeros(len(s.sim.joint_names))
    m[0] = DEFAULT_MOVE
    return m


@functools.lru_cache(maxsize=16)
def _effort_limits(urdf: str, joint_names: tuple[str, ...], given: tuple[float, ...]) -> tuple[float, ...]:
    """The arm's effort limits [N·m] by the one rule every clamp uses
    (:meth:`~deadzone_id_ros.robot.RobotDescription.effort_limits`), parsed once per arm."""
    from ...resources import default_urdf
    from ...robot import load_robot_description

    description = load_robot_description(urdf or default_urdf(), joint_names)
    return tuple(float(x) for x in description.effort_limits(given, "effort_limit"))


def hand_impedance(s: ArmSetup, settings: ScenarioSettings) -> tuple[float, float]:
    """The scripted operator's joint impedance on the leader ``s``: (stiffness [N·m/rad], damping [N·m·s/rad]), the
    same on every joint.

    Each given value of ``settings`` is used as it is. Otherwise the stiffness is sized to the arm, so that one rule
    serves every robot: at the reference's overshoot past the contact (``overshoot`` × the largest joint move), the
    hand asks for :data:`HAND_LOAD_SHARE` of that joint's effort limit,

        K_h = share · tau_max,m / (overshoot · |move_m|),      D_h = HAND_DAMPING_TIME · K_h

    The reflected torque the leader's motors must produce then stays well inside what they can: an operator fixed in
    N·m/rad pushed the SO-101's servos (1.9 N·m) into saturation and did not move a Panda (87 N·m) against the
    contact's impulse. On the bundled arm (4 N·m, a 0.5 rad move, overshoot 0.3) the rule gives 10 N·m/rad and
    0.5 N·m·s/rad, the values chosen there by hand before (docs/teleoperation.md, "Simulating the setup").

    Raises:
        ValueError: ``settings.move`` has not one value per joint.  FileNotFoundError, RobotDescriptionError: the
            arm's URDF cannot be read.
    """
    k = settings.hand_stiffness
    if k is None:
        move = joint_move(s, settings)
        m = int(np.argmax(np.abs(move)))
        limit = _effort_limits(str(s.sim.urdf_path or ""), tuple(s.sim.joint_names), tuple(s.sim.effort_limit))
        k = HAND_LOAD_SHARE * limit[m] / (settings.overshoot * abs(float(move[m])))
    d = settings.hand_damping if settings.hand_damping is not None else HAND_DAMPING_TIME * k
    return float(k), float(d)


def stuck_push(s: ArmSetup, home: np.ndarray, settings: ScenarioSettings) -> PushConfig:
    """The ``stuck`` scenario's push: ramped, on the probe point, sideways in the last link's frame, its largest
    joint torque ``settings.stuck_push`` of the smallest static friction among the joints that have one; ramps over
    the middle third of the run, then held.

    Where only some joints have static friction, those without can move under it (the scenario then tests the joints
    that stick); where none has (e.g. a derived UR profile), the magnitude is 0 and the report says the scenario does
    not apply.
    """
    import mujoco

    from ...sim.arm import SimArm
    from ...sim.config import filled
    from ...sim.external_forces import PushConfig

    link, point = _probe(s)
    arm = SimArm(s.sim)
    arm.reset(home)
    body = arm.model.body(link).id
    jac = np.zeros((3, arm.model.nv))
    p = arm.data.xpos[body] + arm.data.xmat[body].reshape(3, 3) @ np.asarray(point)
    mujoco.mj_jac(arm.model, arm.data, jac, None, p, body)
    direction = np.array([1.0, 0.0, 0.0])
    dof = [int(arm.model.jnt_dofadr[arm.model.joint(n).id]) for n in arm.joint_names]
    per_newton = np.abs(jac[:, dof].T @ direction)
    fs = np.asarray(filled(arm.config.frictionloss), float)
    half = s.band.half_width[s.band.half_width > 0]
    tau_s = float(np.min(half)) if half.size else float(np.min(fs[fs > 0], initial=np.inf))
    tau_s = 0.0 if math.isinf(tau_s) else tau_s
    mag = settings.stuck_push * tau_s / float(per_newton.max())
    d = settings.duration
    return PushConfig(link=link, point=point, direction=tuple(direction), magnitude=mag, shape="ramp",
                      start=d / 3, duration=d, rise_time=d / 3)
