"""The friction correction of a teleoperated arm's force sensor, identified on free motion of its simulated arm (core).

Why: in contact an arm's joints transmit the contact torque, and a geared joint's dry friction grows with the torque
it transmits (load-dependent friction, :mod:`deadzone_id_ros.sensing.friction`). A model identified on free motion
predicts the friction of free-motion loads only, so while two arms press against each other through the operator
and the obstacle the residual carries the missing friction as a phantom part of the contact torque. Measured with
``deadzone-id teleop`` (bilateral, hold, seeds 1 to 3): on so101 with a gentle operator the felt force missed the
contact torque by 58% of it, 56% beyond the two arms' dead-zone intervals, while both arms slid slowly along the box
(their friction at 0.06 rad/s about 0.2 N·m, the model's 0.06 N·m); docs/teleoperation.md has the figures with and
without the correction.

What: the arm's simulated arm (its profile, seed :data:`CALIBRATION_SEED`) tracks the profile's excitation under
its own controller (``ctc_dob`` with its model) for :data:`CALIBRATION_S` s with nothing touching it; the model's
raw residual w = f(q, dq, ddq) - tau over that run is fitted by
:func:`~deadzone_id_ros.sensing.friction.identify_run_friction` on the samples where a joint moves, exactly as
``deadzone-id sense`` calibrates its residual estimator (:mod:`deadzone_id_ros.experiments.sense.calibration`). The
sensor then estimates with ``w - phi theta``. The run is seeded, so the node and the in-process rig get the same
correction from the same profile.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence

import numpy as np

from ..control.config import ControllerConfig
from ..control.excitation import ExcitationConfig
from ..models.base import InverseDynamicsModel
from ..sensing.friction import LoadFriction, identify_run_friction
from ..sim.config import SimArmConfig

__all__ = ["CALIBRATION_S", "CALIBRATION_SEED", "free_motion_friction"]

#: seed of the calibration run (the simulator's noise and the excitation); not a seed of ``deadzone-id teleop``
CALIBRATION_SEED = 100
#: length of the calibration run [s] of simulated time (about 3 s of wall time at start-up): 20 s and 60 s gave the
#: same felt error within 0.2 points of the contact torque (so101 and the bundled arm, hold, seeds 1 to 3)
CALIBRATION_S = 20.0


def free_motion_friction(sim: SimArmConfig, ctrl: ControllerConfig, excitation: ExcitationConfig,
                         model: InverseDynamicsModel, velocity_threshold: Sequence[float] | np.ndarray,
                         seed: int = CALIBRATION_SEED, duration: float = CALIBRATION_S) -> LoadFriction:
    """The friction correction of ``model``'s residual on free motion of the simulated arm ``sim`` (module
    docstring).

    Args:
        sim: the arm's simulator config.  ctrl: its controller config (run as ``ctc_dob`` with ``model``).
        excitation: the reference's settings (its duration and seed are set here).  model: tau = f(q, dq, ddq).
        velocity_threshold: (J,) [rad/s]: samples with |dq| above it are fitted (the sensor's stuck velocity).
        seed: the run's seed.  duration: the run's length [s] (> 0).

    Returns:
        The identified :class:`~deadzone_id_ros.sensing.friction.LoadFriction` in the arm's joint order.

    Raises:
        ValueError: duration not > 0; a joint that moves in too few samples to fit (from the fit, names it).
    """
    from ..control import FeedforwardController, generate_excitation
    from ..sensing import ResidualEstimator
    from ..sim.arm import SimArm

    if not duration > 0:
        raise ValueError(f"duration = {duration!r} must be > 0 s")
    arm = SimArm(dataclasses.replace(sim, seed=int(seed)))
    names = tuple(arm.joint_names)
    # the measured velocity, as the bilateral pair runs (BilateralController refuses the desired one)
    controller = FeedforwardController(dataclasses.replace(ctrl, mode="ctc_dob", feedforward_velocity="measured"),
                                       model, arm.description)
    controller.set_reference(generate_excitation(
        dataclasses.replace(excitation, duration=float(duration) + 1.0, seed=int(seed)), start=sim.initial_position))
    arm.reset(controller.reference.sample(0.0)[0])  # type: ignore[union-attr]
    raw = ResidualEstimator(model, np.full(len(names), math.inf), names)  # no filter: the residual itself
    n = int(round(duration / arm.dt))
    w, dq, tau = (np.zeros((n, len(names))) for _ in range(3))
    for k in range(n):
        m = arm.measure()
        command = controller.step(m.t, m.q, m.dq)
        w[k] = raw.update(m.t, m.q, m.dq, m.effort)
        dq[k], tau[k] = m.dq, m.effort
        arm.step(command)
    return identify_run_friction(w, dq, tau, velocity_threshold, names)[0]
