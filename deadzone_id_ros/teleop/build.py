"""Build a leader–follower pair from robot profiles (core, no ROS): controllers, models, force sensors, simulated arms.

Models (``model`` argument), the same one for each arm's control and its force sensor:

- ``"nominal"``: the URDF's nominal rigid body (pinocchio RNEA), no friction, no rotor armature; its residual taken
  as exact (no dead-zone band): the baseline.
- ``"identified"``: the robot profile's model, the rigid body plus the profile's armature and the URDF/profile
  friction (as ``deadzone-id sense`` uses by default), its residual corrected for load-dependent friction (a
  correction identified on free motion of the arm, :mod:`.calibration`), with the dead-zone band: a joint with
  |dq| <= the stuck velocity is known within +- its static friction, which grows with the torque the joint transmits
  as the profile's friction law says (:class:`LoadAwareSensor`).
- a path (an artifact directory or .onnx): the learned model (:func:`~deadzone_id_ros.models.runtime.load_model`),
  its dead zone (alpha sigma) as the stuck velocity, with the friction correction and the band (load-aware) as for
  "identified".
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from ..control.config import ControllerConfig
from ..control.controller import FeedforwardController
from ..models.base import InverseDynamicsModel
from ..sensing import ForceSensor, ResidualEstimator, SensingSample, StaticFrictionBand
from ..sensing.estimators import ExternalTorqueEstimator
from ..sensing.friction import LoadFriction
from ..sim.config import SimArmConfig
from .bilateral import BilateralConfig, BilateralController
from .joint_map import JointMap

__all__ = ["ArmSetup", "LoadAwareSensor", "arm_setup", "build_controller_pair", "build_teleop_pair"]


@dataclass
class ArmSetup:
    """One arm of the pair.

    Attributes:
        name: profile name.  sim: its simulated arm's config.  ctrl: its controller config.  model: its model.
        model_label: what the model is, for reports.  band: its dead-zone band (``none`` for the nominal model).
        urdf: the URDF path.  load_slope: (J,) growth of a stuck joint's static friction per N·m it transmits
            [1] (the profile's ``load_friction + load_friction_stribeck``); empty: a constant band.
        friction: the force sensor's friction correction of the model's residual (:mod:`.calibration`); None: the
            residual alone (the nominal model).
    """

    name: str
    sim: SimArmConfig
    ctrl: ControllerConfig
    model: InverseDynamicsModel
    model_label: str
    band: StaticFrictionBand
    urdf: str
    load_slope: tuple[float, ...] = ()
    friction: LoadFriction | None = None


class LoadAwareSensor(ForceSensor):
    """A force sensor whose dead-zone band grows with the torque a stuck joint transmits.

    Static friction of a geared joint at rest is ``Fs + (Kl + Kls) |tau_t|`` (load-dependent friction, model M4 of
    Duclusaud et al., arXiv 2410.08650; :mod:`deadzone_id_ros.sim.geared`): a stuck joint's external torque is
    known only within ``estimate +- (tau_s + load_slope |tau|)``, with ``tau`` the motor torque that acted over the
    interval (the sensor's ``tau``). Moving joints keep half width 0.

    Args:
        estimator, band: as :class:`~deadzone_id_ros.sensing.ForceSensor`.  load_slope: (J,) Kl + Kls [1], >= 0.

    Raises:
        ValueError: load_slope not (J,) finite values >= 0; the band's joints are not the estimator's.
    """

    def __init__(self, estimator: ExternalTorqueEstimator, band: StaticFrictionBand,
                 load_slope: np.ndarray) -> None:
        super().__init__(estimator, band)
        k = np.asarray(load_slope, dtype=float)
        if k.shape != (len(self.joint_names),) or not np.all(np.isfinite(k)) or np.any(k < 0):
            raise ValueError(f"load_slope must be {len(self.joint_names)} finite values >= 0 (one per joint of "
                             f"{list(self.joint_names)}), got {k.tolist()}")
        self.load_slope = k

    def update(self, t: float, q: np.ndarray, dq: np.ndarray, tau: np.ndarray,
               with_wrench: bool = True) -> SensingSample:
        """As :meth:`ForceSensor.update`, the half width of each stuck joint widened by ``load_slope |tau|``."""
        s = super().update(t, q, dq, tau, with_wrench)
        half = s.half_width + np.where(s.half_width > 0, self.load_slope * np.abs(np.asarray(tau, float)), 0.0)
        return SensingSample(s.t, s.tau_ext, half, s.stuck, s.contact, s.wrench)


def arm_setup(robot: str, model: str, *, mode: str = "ctc_dob", stuck_velocity: float = 0.02,
              friction: bool = True) -> ArmSetup:
    """The configs, model, band and friction correction of one arm.

    Args:
        robot: a robot profile ("" = the bundled arm).  model: "nominal", "identified" or a model path (module
            docstring).  mode: the controller mode (a leader in unilateral mode needs one without a DOB).
        stuck_velocity: [rad/s] (> 0) the dead-zone threshold of the "identified" model.
        friction: identify the friction correction of "identified" and a learned model
            (:func:`.calibration.free_motion_friction`, a few seconds of simulation, once per robot, model and stuck
            velocity in a process); False: the residual alone.

    Raises:
        ValueError: stuck_velocity not > 0.  FileNotFoundError, ConfigError, ArtifactError: the profile or model
            cannot be loaded.
    """
    from ..models.runtime import NominalRigidBodyModel, load_model
    from ..resources import default_urdf
    from ..robot import load_robot_description
    from ..robot_configs import bundled_robot, controller_config, load_robot, sim_config

    if not stuck_velocity > 0:
        raise ValueError(f"stuck_velocity = {stuck_velocity!r} must be > 0 rad/s")
    prof = load_robot(robot) if robot else bundled_robot()
    sim = sim_config(prof)
    slope = tuple(float(a) + float(b) for a, b in zip(sim.load_friction or (), sim.load_friction_stribeck or ()))
    urdf = sim.urdf_path or str(default_urdf())
    names = tuple(sim.joint_names)
    tau_s = load_robot_description(urdf, names).friction.copy()
    if sim.frictionloss is not None:
        tau_s = np.asarray(sim.frictionloss, float)
    m: InverseDynamicsModel
    if model == "nominal":
        ctrl = controller_config(prof, mode=mode, model="rbd", armature=(), model_friction=False, frictionloss=None,
                                 damping=None)
        m = NominalRigidBodyModel(urdf, names, locked=sim.locked_positions)
        return ArmSetup(prof.profile.name, sim, ctrl, m, "URDF nominal rigid body (no friction, no armature)",
                        StaticFrictionBand.none(names), urdf)
    if model == "identified":
        ctrl = dataclasses.replace(controller_config(prof, mode=mode, model="rbd"), model_friction=True)
        m = NominalRigidBodyModel(urdf, names, friction=True, armature=sim.armature, coulomb=sim.frictionloss,
                                  viscous=sim.damping, locked=sim.locked_positions)
        band = StaticFrictionBand(names, np.full(len(names), stuck_velocity), tau_s)
        label = "profile rigid body + friction + armature"
    else:
        ctrl = controller_config(prof, mode=mode, model="learned", model_path=model)
        m = load_model(ctrl)
        dz = getattr(m, "dead_zone", None)
        thr = (np.asarray(dz.threshold, float) if dz is not None and tuple(dz.joint_names) == names
               else np.full(len(names), stuck_velocity))
        band, label = StaticFrictionBand(names, thr, tau_s), f"learned: {model}"
    correction = None
    if friction:
        key = (robot, model, float(stuck_velocity))
        if key not in _FRICTION:
            from ..robot_configs import excitation_config
            from .calibration import free_motion_friction

            _FRICTION[key] = free_motion_friction(sim, ctrl, excitation_config(prof), m, band.velocity_threshold)
        correction = _FRICTION[key]
        label += ", load-friction correction"
    return ArmSetup(prof.profile.name, sim, ctrl, m, label + ", dead-zone band", band, urdf, slope, correction)


#: friction corrections identified in this process: (robot, model, stuck velocity) -> correction (arm_setup)
_FRICTION: dict[tuple[str, str, float], LoadFriction] = {}


def build_controller_pair(leader: ArmSetup, follower: ArmSetup, config: BilateralConfig,
                          joint_map: Mapping[str, str] | None = None, cutoff: float = 100.0) -> BilateralController:
    """The bilateral controller of two arms; each arm's sensor is the residual of its model, corrected by its friction
    correction, with its band.

    Args:
        leader, follower: the arms (:func:`arm_setup`).  config: mode, scaling, gains.
        joint_map: {follower joint: leader joint}; None maps by name.  cutoff: estimator cutoff [rad/s] (> 0).

    Raises:
        SafetyError: the joints cannot be mapped (:meth:`JointMap.build`), or a model is of another arm.
        ValueError: a unilateral leader with a DOB; a bad cutoff.
    """
    jm = JointMap.build(leader.sim.joint_names, follower.sim.joint_names, joint_map)
    ctls = []
    for arm in (leader, follower):
        from ..robot import load_robot_description

        desc = load_robot_description(arm.urdf, arm.sim.joint_names)
        # The pair's references are made of measured velocities (the midpoint's (dx_l + dq_f) / 2), not a planned
        # trajectory that leads the arm: each arm's model sees its own measured velocity, as before 2026-12-07
        # (docs/controller.md, "The velocity the model sees"; the teleoperation figures were measured so).
        ctrl = dataclasses.replace(arm.ctrl, feedforward_velocity="measured")
        ctls.append(FeedforwardController(ctrl, arm.model, desc))
    sensors: list[ForceSensor] = []
    for a in (leader, follower):
        est = ResidualEstimator(a.model, np.full(len(a.sim.joint_names), float(cutoff)), a.sim.joint_names,
                                friction=a.friction)
        slope = np.asarray(a.load_slope, dtype=float)
        sensors.append(LoadAwareSensor(est, a.band, slope) if slope.size and slope.any() else ForceSensor(est, a.band))
    return BilateralController(ctls[0], ctls[1], sensors[0], sensors[1], jm, config,
                               np.asarray(leader.sim.initial_position, float),
                               np.asarray(follower.sim.initial_position, float))


def build_teleop_pair(leader: ArmSetup, follower: ArmSetup, config: BilateralConfig,
                      joint_map: Mapping[str, str] | None = None, cutoff: float = 100.0) -> BilateralController:
    """:func:`build_controller_pair` as ``deadzone-id teleop`` and the ``teleop_bilateral`` node run it: in unilateral
    mode the leader's controller runs ``ctc`` (no DOB, which would resist the operator); the dead-zone reflection only
    where the leader's model has a band (the nominal model has none).

    Raises:
        SafetyError, ValueError: as :func:`build_controller_pair`.
    """
    cfg = dataclasses.replace(config, dead_zone=config.dead_zone and bool(leader.band.half_width.any()))
    lead = leader if config.mode == "bilateral" else dataclasses.replace(
        leader, ctrl=dataclasses.replace(leader.ctrl, mode="ctc"))
    return build_controller_pair(lead, follower, cfg, joint_map, cutoff)
