"""Building the simulator's MuJoCo model from a URDF and drawing an episode's payload (used by
:class:`deadzone_id_ros.sim.arm.SimArm`, which steps the model built here).

The arm's own geometry does not collide: its mesh collisions are dropped (:mod:`.urdf_load`), and the primitive
shapes some URDFs carry (the Unitree Z1's cylinders and boxes) made links touch under a full-range excitation, so that
contact forces entered the closed loop (chatter, clamping) and the "true" inverse dynamics (90x the effort limit at
the Z1's elbow), neither of which a joint-space model can have. Only the bodies of :mod:`.external_forces` (the probe
and its obstacle, added after this) collide.
"""

from __future__ import annotations

from pathlib import Path

import mujoco
import numpy as np

from ..errors import RobotDescriptionError
from .config import SimArmConfig, filled
from .external_forces import ExternalForces
from .locked import lock_uncontrolled_joints
from .urdf_load import spec_without_meshes

__all__ = ["build_model", "draw_payload"]

#: Collision type of the arm's own geoms, with no affinity: two of them never collide ((1 & 0) | (1 & 0) = 0), nor do
#: they with the probe or the obstacle (bit 8), and MuJoCo keeps them (it drops geoms whose type and affinity are both
#: 0 as visuals, which would change the inertia of a link that has no <inertial>).
_ARM_BIT = 16


def draw_payload(config: SimArmConfig) -> float:
    """Payload mass [kg] uniform in ``payload_mass_range``, from a generator seeded by (seed, 1): the noise stream
    stays the same with or without a payload."""
    lo, hi = config.payload_mass_range
    if hi <= 0:
        return 0.0
    return float(np.random.default_rng([config.seed, 1]).uniform(lo, hi))


def build_model(urdf: Path, config: SimArmConfig, *, with_friction: bool, payload: float = 0.0,
                external: ExternalForces | None = None) -> mujoco.MjModel:
    """The MuJoCo model of ``urdf`` under ``config``: meshes dropped, uncontrolled joints welded, each actuated
    joint's armature, frictionloss and damping set (zero friction and damping when ``with_friction`` is False: the
    ground-truth inverse-dynamics twin), a point ``payload`` [kg] on the last joint's child link, the bodies of
    ``external`` added, the timestep set.

    Raises:
        RobotDescriptionError: MuJoCo cannot load or compile the URDF, a configured joint is missing, or a locked
            joint's position is invalid.
    """
    try:
        spec, _ = spec_without_meshes(urdf)  # meshes are geometry only; package:// paths do not load in MuJoCo
    except ValueError as err:
        raise RobotDescriptionError(f"{urdf}: MuJoCo cannot load this URDF: {err}") from err
    by_name = {j.name: j for j in spec.joints}
    missing = [n for n in config.joint_names if n not in by_name]
    if missing:
        raise RobotDescriptionError(f"{urdf}: joint(s) {missing} not in the URDF (its joints: {sorted(by_name)})")
    # Every joint not actuated is welded where the profile locks it: the reduced model pinocchio builds.
    try:
        lock_uncontrolled_joints(spec, config.joint_names, config.locked_positions, str(urdf))
    except ValueError as err:
        raise RobotDescriptionError(f"{urdf}: {err}") from err
    for g in spec.geoms:  # no self-collision (module docstring)
        g.contype, g.conaffinity = _ARM_BIT, 0
    for j in spec.joints:
        i = config.joint_names.index(j.name)
        j.armature = config.armature[i]
        j.frictionloss = filled(config.frictionloss)[i] if with_friction else 0.0
        j.damping = [filled(config.damping)[i] if with_friction else 0.0, 0.0, 0.0]  # MuJoCo 4: (linear, 0, 0)
        j.solref_friction = list(config.friction_solref)
        j.solimp_friction = list(config.friction_solimp)
    if payload > 0:  # a point mass fixed to the last joint's child link (tiny inertia keeps MuJoCo happy)
        last = config.joint_names[-1]
        link = next(b for b in spec.bodies if any(j.name == last for j in b.joints))
        link.add_body(name="payload", pos=list(config.payload_position), ipos=[0.0, 0.0, 0.0], mass=payload,
                      inertia=[1e-7] * 3, explicitinertial=True)
    if external is not None:
        external.add_to_spec(spec)
    spec.option.timestep = config.timestep
    try:
        return spec.compile()
    except ValueError as err:
        raise RobotDescriptionError(f"{urdf}: MuJoCo cannot compile this URDF: {err}") from err
