"""The collision scenario of ``deadzone-id sense`` (core, no ROS): a fixed box placed on the path of the end effector.

The box (:class:`~deadzone_id_ros.sim.external_forces.ObstacleConfig`) is placed where the seed's held-out reference
takes the pushed point at ``at`` seconds: its centre lies ``half_size + probe radius - depth`` ahead of that point
along the point's direction of motion, so the probe sphere on the last link runs into it shortly before ``at``.
The contact begins at the first tick whose true external torque exceeds ``ONSET`` on any joint; the detection delay
is the contact flag's first tick from then on, minus that tick.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

import numpy as np

from ...sim.external_forces import ObstacleConfig

if TYPE_CHECKING:
    from ...control import ControllerConfig, ExcitationConfig
    from ...sim.config import SimArmConfig

__all__ = ["ONSET", "collision_onset", "place_obstacle"]

#: [N·m] true external torque on any joint that counts as the start of the contact
ONSET = 0.05
HALF = 0.05  # [m] half size of the box
RADIUS = 0.01  # [m] probe sphere
DEPTH = 0.005  # [m] how far the box face lies inside the reference path


def place_obstacle(sim: SimArmConfig, ctrl: ControllerConfig, exc: ExcitationConfig, link: str,
                   point: tuple[float, ...], seed: int, at: float) -> ObstacleConfig:
    """The box for ``seed`` on the reference path at ``at`` [s] of ``point`` (3,) [m] on ``link``, for the arm of
    ``sim`` tracking the excitation ``exc`` with the controller ``ctrl`` (module docstring)."""
    from ...control import build_controller, generate_excitation
    from ...sim.arm import SimArm

    sim = dataclasses.replace(sim, seed=int(seed))
    arm = SimArm(sim)
    controller = build_controller(ctrl, arm.description)
    exc = dataclasses.replace(exc, duration=float(at) + 2.0, seed=int(seed))
    controller.set_reference(generate_excitation(exc, start=sim.initial_position))
    body = arm.model.body(link).id
    offset = np.asarray(point, float)

    def tip(t: float) -> np.ndarray:
        arm.reset(controller.reference.sample(t)[0])  # type: ignore[union-attr]
        return arm.data.xpos[body] + arm.data.xmat[body].reshape(3, 3) @ offset

    p0, p1 = tip(at), tip(at + 1e-3)
    v = p1 - p0
    n = v / np.linalg.norm(v) if np.linalg.norm(v) > 0 else np.array([1.0, 0.0, 0.0])
    centre = p0 + n * (HALF + RADIUS - DEPTH)
    return ObstacleConfig(position=tuple(centre), probe_link=link, half_size=(HALF,) * 3, probe_point=point,
                          probe_radius=RADIUS)


def collision_onset(truth: np.ndarray) -> int | None:
    """Index of the first tick whose true external torque (N, J) [N·m] exceeds :data:`ONSET` on any joint."""
    hit = np.flatnonzero(np.abs(truth).max(axis=1) > ONSET)
    return int(hit[0]) if hit.size else None
