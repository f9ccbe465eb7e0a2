"""Known external forces on the simulated arm, with their true joint torques (core, no ROS): the ground truth of
force sensing (:mod:`deadzone_id_ros.sensing`).

Two sources, both optional:

- **Pushes** (:class:`PushConfig`): a force F(t) [N] on a named link at a point fixed in the link's frame, shaped as a
  step, a ramp or a sine. MuJoCo applies ``data.xfrc_applied`` at the body's centre of mass, so the force at the point
  p is applied as F plus the moment (p - c) x F about the centre of mass c.
- **An obstacle** (:class:`ObstacleConfig`): a fixed box in the world and a small sphere (the probe) on a named link
  at a point; only the probe and the box collide (contype/conaffinity bit 3), so the arm touches the obstacle there and
  nowhere else. MuJoCo's soft contact gives the force.

The true external joint torque of each physics step (J,) [N·m] is ``J_p^T F`` for every push (``mj_applyFT``, the
same map MuJoCo uses for ``xfrc_applied``) plus the contact rows of the constraint force, ``J_c^T f_c``
(``mj_mulJacTVec`` on ``efc_force`` with every non-contact row, such as the joints' frictionloss, set to zero). The
step is split (``mj_step1``, set the forces on the current kinematics, ``mj_step2``), which MuJoCo documents as equal to
``mj_step`` for the Euler and implicit integrators.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import mujoco
import numpy as np

from ..config import check_positive
from .views import as_slice

__all__ = ["ExternalForces", "ObstacleConfig", "PushConfig", "ScriptedObstacleConfig", "ScriptedPushConfig",
           "scripted_forces"]

_SHAPES = ("step", "ramp", "sine")
_PROBE_BIT = 8  # collision bit shared only by the obstacle and the probe
_FEW_ROWS = 32  # constraint rows up to which the contact rows are picked in Python floats, not numpy


def _vec3(name: str, value: Sequence[float]) -> tuple[float, float, float]:
    v = tuple(float(x) for x in value)
    if len(v) != 3 or not all(math.isfinite(x) for x in v):
        raise ValueError(f"{name} must be 3 finite numbers [m or 1], got {list(value)}")
    return v


@dataclass(frozen=True)
class PushConfig:
    """A scripted push on one link.

    Attributes:
        link: the link (MuJoCo body) pushed.
        point: (3,) where, in the link's frame [m].
        direction: (3,) direction of the force (normalized here; not zero), in world axes, or in the link's axes
            when ``local`` (the push then turns with the link).
        magnitude: peak force [N] (>= 0).
        shape: "step" (F from start to end), "ramp" (0 -> F over ``rise_time``, then held), "sine" (F sin(2 pi f t')).
        start: when it begins [s of simulated time] (>= 0).  duration: how long it lasts [s] (> 0).
        rise_time: ramp time [s] (> 0; "ramp" only).  frequency: [Hz] (> 0; "sine" only).

    Raises:
        ValueError: a bad field (named with its value).
    """

    link: str
    magnitude: float
    point: tuple[float, ...] = (0.0, 0.0, 0.0)
    direction: tuple[float, ...] = (1.0, 0.0, 0.0)
    shape: str = "step"
    start: float = 0.0
    duration: float = 1.0
    rise_time: float = 0.5
    frequency: float = 1.0
    local: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "point", _vec3("point", self.point))
        d = np.asarray(_vec3("direction", self.direction))
        norm = float(np.linalg.norm(d))
        if norm == 0:
            raise ValueError("direction must not be zero")
        object.__setattr__(self, "direction", tuple(float(x) for x in d / norm))
        if self.shape not in _SHAPES:
            raise ValueError(f"shape = {self.shape!r} must be one of {list(_SHAPES)}")
        for name, lo_ok in (("magnitude", True), ("start", True), ("duration", False), ("rise_time", False),
                            ("frequency", False)):
            v = getattr(self, name)
            if not (isinstance(v, (int, float)) and math.isfinite(v) and (v >= 0 if lo_ok else v > 0)):
                raise ValueError(f"{name} = {v!r} must be a finite number {'>=' if lo_ok else '>'} 0")

    def force(self, t: float) -> np.ndarray:
        """(3,) the force at simulated time ``t`` [s] [N], in the axes of ``direction``."""
        s = t - self.start
        if s < 0 or s >= self.duration:
            return np.zeros(3)
        if self.shape == "step":
            a = self.magnitude
        elif self.shape == "ramp":
            a = self.magnitude * min(1.0, s / self.rise_time)
        else:
            a = self.magnitude * math.sin(2.0 * math.pi * self.frequency * s)
        return a * np.asarray(self.direction)


@dataclass(frozen=True)
class ObstacleConfig:
    """A fixed box in the world and the probe sphere on the arm that touches it.

    Attributes:
        position: (3,) box centre, world frame [m].  half_size: (3,) box half extents [m] (> 0).
        probe_link: the link carrying the probe.  probe_point: (3,) probe centre in that link's frame [m].
        probe_radius: [m] (> 0).

    Raises:
        ValueError: a bad field.
    """

    position: tuple[float, ...]
    probe_link: str
    half_size: tuple[float, ...] = (0.05, 0.05, 0.05)
    probe_point: tuple[float, ...] = (0.0, 0.0, 0.0)
    probe_radius: float = 0.01

    def __post_init__(self) -> None:
        for name in ("position", "half_size", "probe_point"):
            object.__setattr__(self, name, _vec3(name, getattr(self, name)))
        if not all(h > 0 for h in self.half_size):
            raise ValueError(f"half_size = {list(self.half_size)} must be > 0 [m]")
        check_positive("probe_radius", self.probe_radius)


@dataclass
class ExternalForces:
    """Pushes and an obstacle acting on a :class:`~deadzone_id_ros.sim.SimArm` (give it as ``SimArm(external=...)``).

    Attributes:
        pushes: the scripted pushes.  obstacle: the obstacle or None.
        true_torque: (J,) true external joint torque of the last physics step [N·m] (after :meth:`bind`).
        true_force: (3,) total push force of the last step, world axes [N] (contact force not included).
    """

    pushes: Sequence[PushConfig] = ()
    obstacle: ObstacleConfig | None = None
    true_torque: np.ndarray = field(default_factory=lambda: np.zeros(0))
    true_force: np.ndarray = field(default_factory=lambda: np.zeros(3))

    def add_to_spec(self, spec: mujoco.MjSpec) -> None:
        """Add the obstacle box and the probe sphere to ``spec`` before it is compiled.

        Raises:
            ValueError: the probe link is not a body of the spec (names the bodies).
        """
        if self.obstacle is None:
            return
        ob = self.obstacle
        bodies = {b.name: b for b in spec.bodies}
        if ob.probe_link not in bodies:
            raise ValueError(f"obstacle probe_link {ob.probe_link!r} is not a link of the arm "
                             f"(links: {sorted(bodies)})")
        spec.worldbody.add_geom(name="sense_obstacle", type=mujoco.mjtGeom.mjGEOM_BOX, size=list(ob.half_size),
                                pos=list(ob.position), contype=0, conaffinity=_PROBE_BIT)
        bodies[ob.probe_link].add_geom(name="sense_probe", type=mujoco.mjtGeom.mjGEOM_SPHERE,
                                       size=[ob.probe_radius, 0.0, 0.0], pos=list(ob.probe_point), density=0.0,
                                       contype=_PROBE_BIT, conaffinity=0)

    def bind(self, model: mujoco.MjModel, dof: np.ndarray) -> None:
        """Resolve link names on the compiled ``model``; ``dof`` (J,) are the arm's dof addresses.

        Raises:
            ValueError: a push names a link that is not a body of the model.
        """
        names = [model.body(i).name for i in range(model.nbody)]
        self._bodies = []
        for p in self.pushes:
            if p.link not in names:
                raise ValueError(f"push link {p.link!r} is not a link of the arm (links: {sorted(names)})")
            self._bodies.append(model.body(p.link).id)
        self._dof = np.asarray(dof, dtype=int)
        self._qfrc = np.zeros(model.nv)
        self._contact_nv = np.zeros(model.nv)  # J_c^T f_c of the last step
        self._dof_v = as_slice(self._dof)  # a slice where the dofs are contiguous (a view, not a gather)
        self._efc = np.zeros(0)
        contact_types = [int(mujoco.mjtConstraint.mjCNSTR_CONTACT_FRICTIONLESS),
                         int(mujoco.mjtConstraint.mjCNSTR_CONTACT_PYRAMIDAL),
                         int(mujoco.mjtConstraint.mjCNSTR_CONTACT_ELLIPTIC)]
        # constraint type -> is a contact row (a lookup instead of np.isin on every step)
        self._is_contact = np.zeros(max(int(t) for t in mujoco.mjtConstraint.__members__.values()) + 1, dtype=bool)
        self._is_contact[contact_types] = True
        self._is_contact_l = self._is_contact.tolist()
        self.true_torque = np.zeros(len(self._dof))
        # the true torque and force of a step without push or contact: shared, read-only (every step assigns anew)
        self._no_torque, self._no_force = np.zeros(len(self._dof)), np.zeros(3)
        self._no_torque.flags.writeable = self._no_force.flags.writeable = False

    def step(self, model: mujoco.MjModel, data: mujoco.MjData) -> None:
        """One physics step with the pushes applied; records :attr:`true_torque` (push + contact).

        Without pushes nothing is set between the two halves of the step, so it is one ``mj_step`` (MuJoCo's
        documented equivalent of ``mj_step1`` + ``mj_step2`` for the Euler and implicit integrators), and without a
        contact (``ncon`` = 0) there is no contact row to map: the true torque is zero.
        """
        if not self.pushes:
            mujoco.mj_step(model, data)
            if self.obstacle is None or not data.ncon:
                self.true_torque, self.true_force = self._no_torque, self._no_force
                return
            self.true_torque, self.true_force = self._contact_torque(model, data), self._no_force
            return
        mujoco.mj_step1(model, data)
        qfrc = self._qfrc
        qfrc[:] = 0.0
        total = np.zeros(3)
        data.xfrc_applied[self._bodies] = 0.0
        for p, body in zip(self.pushes, self._bodies):
            f = p.force(float(data.time))
            if not f.any():
                continue
            rot = data.xmat[body].reshape(3, 3)
            if p.local:
                f = rot @ f
            point = data.xpos[body] + rot @ np.asarray(p.point)
            data.xfrc_applied[body, :3] += f
            data.xfrc_applied[body, 3:] += np.cross(point - data.xipos[body], f)
            mujoco.mj_applyFT(model, data, f, np.zeros(3), point, body, qfrc)
            total += f
        mujoco.mj_step2(model, data)
        if self.obstacle is not None:
            self._add_contact(model, data, qfrc)
        self.true_torque = qfrc[self._dof].copy()
        self.true_force = total

    def _contact(self, model: mujoco.MjModel, data: mujoco.MjData) -> np.ndarray | None:
        """The contact rows' joint force J_c^T f_c (nv,) [N·m] of the step just taken, in a workspace overwritten by
        the next call; None when no contact row carries a force."""
        n = data.nefc
        if not n:
            return None
        if n <= _FEW_ROWS:  # per row in Python (a few rows: a third of the three numpy calls' cost), same values
            is_contact, types, forces = self._is_contact_l, data.efc_type[:n].tolist(), data.efc_force[:n].tolist()
            rows = [f if is_contact[t] else 0.0 for t, f in zip(types, forces)]
            if not any(rows):  # any() of floats: nonzero (NaN included), as ndarray.any()
                return None
            efc = np.array(rows)
        else:
            efc = np.where(self._is_contact[data.efc_type[:n]], data.efc_force[:n], 0.0)
            if not efc.any():
                return None
        mujoco.mj_mulJacTVec(model, data, self._contact_nv, efc)  # res = J^T efc, every entry written
        return self._contact_nv

    def _contact_torque(self, model: mujoco.MjModel, data: mujoco.MjData) -> np.ndarray:
        """(J,) the contact torque on the arm's joints [N·m]: a new array, or the shared zero one without a contact
        force (0 + J_c^T f_c, the numbers of adding it to a zeroed accumulator)."""
        contact = self._contact(model, data)
        if contact is None:
            return self._no_torque
        return np.add(self._no_torque, contact[self._dof_v])

    def _add_contact(self, model: mujoco.MjModel, data: mujoco.MjData, qfrc: np.ndarray) -> None:
        """Add the contact rows' joint force J_c^T f_c of the step just taken to ``qfrc`` (nv,) [N·m]."""
        contact = self._contact(model, data)
        if contact is not None:
            qfrc += contact


@dataclass(frozen=True)
class ScriptedPushConfig:
    """One scripted push as node parameters (the sim_arm node's ``push_*``; :class:`PushConfig` with a prefix).

    Attributes:
        push_link: the link pushed; "" = no push.  push_magnitude: [N].  push_point: (3,) in the link's frame [m].
        push_direction: (3,) direction (world axes, or the link's with ``push_local``).  push_local: see above.
        push_shape: "step", "ramp" or "sine".  push_start: [s of simulated time].  push_duration: [s].
        push_rise_time: [s] ("ramp").  push_frequency: [Hz] ("sine").

    Raises:
        ValueError: a bad value (from :class:`PushConfig`, named without the prefix).
    """

    push_link: str = ""
    push_magnitude: float = 1.0
    push_point: tuple[float, ...] = (0.0, 0.0, 0.0)
    push_direction: tuple[float, ...] = (1.0, 0.0, 0.0)
    push_local: bool = False
    push_shape: str = "step"
    push_start: float = 1.0
    push_duration: float = 1.0
    push_rise_time: float = 0.5
    push_frequency: float = 1.0

    def __post_init__(self) -> None:
        self.push()

    def push(self) -> PushConfig | None:
        """The :class:`PushConfig`, or None without ``push_link``."""
        if not self.push_link:
            return None
        return PushConfig(link=self.push_link, magnitude=self.push_magnitude, point=self.push_point,
                          direction=self.push_direction, local=self.push_local, shape=self.push_shape,
                          start=self.push_start, duration=self.push_duration, rise_time=self.push_rise_time,
                          frequency=self.push_frequency)

    def external(self) -> ExternalForces | None:
        """The :class:`ExternalForces` of this push, or None without one."""
        p = self.push()
        return ExternalForces(pushes=[p]) if p is not None else None


@dataclass(frozen=True)
class ScriptedObstacleConfig:
    """The fixed obstacle as node parameters (the sim_arm node's ``obstacle_*``; :class:`ObstacleConfig` with a
    prefix): a box in the world and a probe sphere on a link, touching through MuJoCo's contact.

    Attributes:
        obstacle_position: (3,) box centre, world frame [m]; empty = no obstacle.  obstacle_half_size: (3,) [m].
        obstacle_probe_link: the link carrying the probe.  obstacle_probe_point: (3,) in that link's frame [m].
        obstacle_probe_radius: [m].

    Raises:
        ValueError: a bad value (from :class:`ObstacleConfig`), or a position without a probe link.
    """

    obstacle_position: tuple[float, ...] = ()
    obstacle_half_size: tuple[float, ...] = (0.05, 0.05, 0.05)
    obstacle_probe_link: str = ""
    obstacle_probe_point: tuple[float, ...] = (0.0, 0.0, 0.0)
    obstacle_probe_radius: float = 0.01

    def __post_init__(self) -> None:
        self.obstacle()

    def obstacle(self) -> ObstacleConfig | None:
        """The :class:`ObstacleConfig`, or None without ``obstacle_position``."""
        if not self.obstacle_position:
            return None
        if not self.obstacle_probe_link:
            raise ValueError("obstacle_position is set but obstacle_probe_link is empty: name the link that touches "
                             "the box")
        return ObstacleConfig(position=self.obstacle_position, probe_link=self.obstacle_probe_link,
                              half_size=self.obstacle_half_size, probe_point=self.obstacle_probe_point,
                              probe_radius=self.obstacle_probe_radius)


def scripted_forces(push: ScriptedPushConfig, obstacle: ScriptedObstacleConfig) -> ExternalForces | None:
    """The :class:`ExternalForces` of a node's scripted push and obstacle, or None with neither."""
    p, ob = push.push(), obstacle.obstacle()
    if p is None and ob is None:
        return None
    return ExternalForces(pushes=[p] if p is not None else [], obstacle=ob)
