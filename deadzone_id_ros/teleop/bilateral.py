"""Four-channel bilateral control of a leader and a follower arm without force sensors (core, no ROS).

Acceleration-based four-channel bilateral control (Sakaino, Sato, Ohnishi, "Multi-DOF micro-macro bilateral
controller using oblique coordinate control", IEEE T-II 7(3), 2011; on force-sensorless low-cost arms with
identified dynamics, a DOB and a reaction-force observer: Yamane et al., arXiv 2507.06174). Per follower joint, with
the leader's joint mapped onto it (:class:`~.joint_map.JointMap`) and scaled into the follower's coordinates,

    x_l = q_f0 + s_p (q_l - q_l0),   dx_l = s_p dq_l          (position scaling s_p; q_0: each arm's home)
    e   = x_l - q_f                                           (position symmetry: e -> 0)
    r   = r_l + s_f r_f                                       (action-reaction: r -> 0, force scaling s_f)
    a   = k_f r / (Jn_l + Jn_f) - d_c (dx_l + dq_f) / 2       (common mode: force control)

where r_l, r_f [N·m] are the external torques of each arm (the environment on the arm: the operator's hand on the
leader, the obstacle on the follower; :mod:`deadzone_id_ros.sensing`). Each arm then tracks the *midpoint*
m = (x_l + q_f) / 2 with its own computed-torque controller (PD in acceleration, its model, its DOB), with the common
acceleration a as the reference acceleration:

    follower reference (m, (dx_l + dq_f)/2, a)
    leader reference, mapped back: (q_l0 + (m - q_f0)/s_p, (dx_l + dq_f)/(2 s_p), a/s_p)

so the differential mode x_l - q_f obeys the PD (Kp e, Kd de: position symmetry) and the common mode the force law:
in steady state r_l + s_f r_f = 0, the operator feels s_f times the contact. With k_f = 1 the pair moves like one
rigid body of inertia Jn_l + Jn_f under the net external torque; d_c [1/s] is an optional common-mode damping (it
damps contact against a stiff obstacle; it costs a viscous feel during motion).

Dead-zone-aware reflection: where a joint is stuck (|dq| within the model's dead zone) its external torque is known
only within estimate +- tau_s (:class:`~deadzone_id_ros.sensing.StaticFrictionBand`); the force channel then uses the
point of that interval nearest zero, sign(est) max(|est| - half, 0): static friction is not reflected as a phantom
force, and a push larger than the band still is.

Unilateral mode (as LeRobot's SO-100/SO-101 kits): the follower tracks x_l (position copy, scaled), nothing is
reflected; the leader is left to the operator with only its model's gravity and friction compensation (its
controller must have no DOB, which would resist the operator).

Safety: both arms run :class:`~deadzone_id_ros.control.FeedforwardController`, so the NaN guard, torque-rate limit,
effort clamp, watchdog and runaway cutoff (tracking error |m - q| = |e|/2, position limits) of the single-arm
controller hold on each (a non-finite measurement reaches neither sensor nor reference: the arm it came from holds
its static torque, the other its last good reference); when either arm latches a fault the other is latched too
(both go to their safe states).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..config import check_positive
from ..control.controller import FeedforwardController
from ..control.trajectory import TrajectorySampler
from ..sensing.sensor import ForceSensor, SensingSample
from .joint_map import JointMap

__all__ = ["TELEOP_MODES", "BilateralConfig", "BilateralController", "BilateralSample", "LiveReference"]

#: teleoperation modes: position copy only, or four-channel bilateral with force feedback
TELEOP_MODES = ("unilateral", "bilateral")


@dataclass(frozen=True)
class BilateralConfig:
    """Settings of the bilateral controller.

    Attributes:
        mode: "unilateral" or "bilateral".
        position_scale: s_p, follower motion per leader motion (> 0).  force_scale: s_f, felt torque per contact
            torque (> 0).
        force_gain: k_f (>= 0, dimensionless; 1 = the pair moves as one body of inertia Jn_l + Jn_f).
        force_damping: d_c common-mode damping [1/s] (>= 0).
        dead_zone: reflect the dead-zone-aware estimate (nearest point of the interval to zero) instead of the raw
            estimate.

    Raises:
        ValueError: a bad field (named with its value).
    """

    mode: str = "bilateral"
    position_scale: float = 1.0
    force_scale: float = 1.0
    force_gain: float = 1.0
    force_damping: float = 0.0
    dead_zone: bool = True

    def __post_init__(self) -> None:
        if self.mode not in TELEOP_MODES:
            raise ValueError(f"mode = {self.mode!r} must be one of {list(TELEOP_MODES)}")
        for name, positive in (("position_scale", True), ("force_scale", True), ("force_gain", False),
                               ("force_damping", False)):
            check_positive(name, getattr(self, name), allow_zero=not positive)


class LiveReference(TrajectorySampler):
    """A controller reference set anew every tick (the bilateral law's), instead of a trajectory's waypoints.

    Args:
        n: number of joints J.
    """

    def __init__(self, n: int) -> None:  # no waypoints: nothing of the parent's state is used
        z = np.zeros(n)
        self.value: tuple[np.ndarray, np.ndarray, np.ndarray] = (z, z.copy(), z.copy())

    def sample(self, t: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(q_d, dq_d, ddq_d), each (J,) [rad, rad/s, rad/s²], as last set (any ``t``)."""
        return self.value


@dataclass(frozen=True)
class BilateralSample:
    """One tick of the pair, in each arm's own joint order unless said.

    Attributes:
        tau_leader: (Jl,) leader command [N·m].  tau_follower: (Jf,) follower command [N·m].
        leader: the leader's sensing sample.  follower: the follower's.
        reflected_leader: (Jf,) r_l mapped onto the follower's joints [N·m] (the operator's torque as used).
        reflected_follower: (Jf,) r_f [N·m] (the contact torque as used).
        position_error: (Jf,) e = x_l - q_f [rad].
    """

    tau_leader: np.ndarray
    tau_follower: np.ndarray
    leader: SensingSample
    follower: SensingSample
    reflected_leader: np.ndarray
    reflected_follower: np.ndarray
    position_error: np.ndarray


def reflected_torque(sample: SensingSample, dead_zone: bool) -> np.ndarray:
    """The external torque (J,) [N·m] the force channel uses: the estimate, or with ``dead_zone`` the point of the
    interval estimate +- half width nearest zero (zero where the interval contains zero)."""
    est = sample.tau_ext
    if not dead_zone:
        return est.copy()
    return np.sign(est) * np.maximum(np.abs(est) - sample.half_width, 0.0)


class BilateralController:
    """Leader and follower controllers coupled by the bilateral law (module docstring): ``step`` -> both commands.

    Args:
        leader, follower: each arm's controller (its config, model, DOB and limits); their references are taken
            over (set every tick).
        leader_sensor, follower_sensor: each arm's force sensor (estimator + dead-zone band), on the arm's joints.
        joint_map: leader -> follower joints (:meth:`JointMap.build`; it refuses unmappable profiles).
        config: mode, scaling, gains.
        leader_home, follower_home: (Jl,), (Jf,) the poses that correspond [rad] (the position-scaling origins).

    Raises:
        SafetyError: the joint map's joints are not the controllers' or the sensors' (names both).
        ValueError: a home of the wrong shape; a unilateral leader controller with a DOB (it would resist the
            operator); a controller whose model sees the reference's velocity (``feedforward_velocity`` "desired":
            the pair's references are made of measured velocities, so each arm's model must see its own).
    """

    def __init__(self, leader: FeedforwardController, follower: FeedforwardController, leader_sensor: ForceSensor,
                 follower_sensor: ForceSensor, joint_map: JointMap, config: BilateralConfig,
                 leader_home: np.ndarray, follower_home: np.ndarray) -> None:
        from ..errors import SafetyError

        for role, ctl, sensor, joints in (("leader", leader, leader_sensor, joint_map.leader_joints),
                                          ("follower", follower, follower_sensor, joint_map.follower_joints)):
            if tuple(ctl.joint_names) != joints or tuple(sensor.joint_names) != joints:
                raise SafetyError(f"the {role}'s joint map joints {list(joints)} differ from its controller's "
                                  f"{list(ctl.joint_names)} or its sensor's {list(sensor.joint_names)}; refusing "
                                  "to start")
        for role, ctl in (("leader", leader), ("follower", follower)):
            if ctl.config.feedforward_velocity != "measured":
                raise ValueError(f"the {role}'s controller has feedforward_velocity = "
                                 f"{ctl.config.feedforward_velocity!r}; the bilateral pair needs 'measured' (its "
                                 "references are made of the arms' measured velocities)")
        self.q_l0 = np.asarray(leader_home, dtype=float).copy()
        self.q_f0 = np.asarray(follower_home, dtype=float).copy()
        if self.q_l0.shape != (len(joint_map.leader_joints),) or self.q_f0.shape != (len(joint_map.follower_joints),):
            raise ValueError(f"leader_home {self.q_l0.shape} / follower_home {self.q_f0.shape} must match the arms' "
                             f"joints ({len(joint_map.leader_joints)}, {len(joint_map.follower_joints)})")
        if config.mode == "unilateral" and leader.config.uses_dob:
            raise ValueError(f"unilateral mode: the leader's controller mode {leader.config.mode!r} has a DOB, which "
                             "would resist the operator; give the leader a mode without one (ctc or pd)")
        self.leader, self.follower = leader, follower
        self.leader_sensor, self.follower_sensor = leader_sensor, follower_sensor
        self.map, self.config = joint_map, config
        self._ref_l = LiveReference(len(joint_map.leader_joints))
        self._ref_f = LiveReference(len(joint_map.follower_joints))
        leader.use_reference(self._ref_l)
        follower.use_reference(self._ref_f)
        idx = joint_map.leader_index
        jn_l = np.asarray(leader.config.nominal_inertia, float)[idx]
        jn_f = np.asarray(follower.config.nominal_inertia, float)
        #: (Jf,) k_f / (Jn_l + Jn_f) [rad/s² per N·m]
        self.force_accel_gain = config.force_gain / (jn_l + jn_f)
        self._hold_l: np.ndarray | None = None  # unmapped leader joints stay where they started
        jl, jf = len(joint_map.leader_joints), len(joint_map.follower_joints)
        zl, zf = np.zeros(jl), np.zeros(jf)
        none = (SensingSample(math.nan, zl, zl, np.zeros(jl, bool), None, None),
                SensingSample(math.nan, zf, zf, np.zeros(jf, bool), None, None))
        #: the last good tick's (leader sample, follower sample, r_l, r_f, e), repeated for a non-finite measurement
        self._last: tuple[SensingSample, SensingSample, np.ndarray, np.ndarray, np.ndarray] = (*none, zf, zf, zf)

    def reset(self) -> None:
        """Forget the sensors' history (the controllers keep theirs: their own reset is a fault reset)."""
        self.leader_sensor.reset()
        self.follower_sensor.reset()
        self._hold_l = None

    def step(self, t: float, leader: tuple[np.ndarray, np.ndarray, np.ndarray],
             follower: tuple[np.ndarray, np.ndarray, np.ndarray]) -> BilateralSample:
        """One tick: sense both arms, set both references, step both controllers.

        Args:
            t: the stamp of both measurements [s].
            leader, follower: each arm's measured (q [rad], dq [rad/s], effort [N·m], the torque applied since the
                previous sample), (J,) each in that arm's joint order.

        Returns:
            the commands and what was sensed and reflected.

        Raises:
            ValueError: an array of the wrong shape (named by the sensor or controller).
        """
        cfg, jm = self.config, self.map
        q_l, dq_l, eff_l = (np.asarray(a, dtype=float) for a in leader)
        q_f, dq_f, eff_f = (np.asarray(a, dtype=float) for a in follower)
        if not all(np.all(np.isfinite(a)) for a in (q_l, dq_l, eff_l, q_f, dq_f, eff_f)) or not math.isfinite(t):
            # NaN guard: neither sensor nor reference takes the bad sample; each controller handles it (the bad arm
            # holds its static torque, the other keeps the last good reference)
            tau_l = self.leader.step(t, q_l, dq_l)
            tau_f = self.follower.step(t, q_f, dq_f)
            self._couple_faults(t)
            last = self._last
            return BilateralSample(tau_l, tau_f, *last[:2], *last[2:])
        s_l = self.leader_sensor.update(t, q_l, dq_l, eff_l)
        s_f = self.follower_sensor.update(t, q_f, dq_f, eff_f)
        if self._hold_l is None:
            self._hold_l = q_l.copy()
        sp = cfg.position_scale
        x_l = self.q_f0 + sp * (jm.to_follower(q_l) - jm.to_follower(self.q_l0))
        dx_l = sp * jm.to_follower(dq_l)
        e = x_l - q_f
        r_l = jm.to_follower(reflected_torque(s_l, cfg.dead_zone))
        r_f = reflected_torque(s_f, cfg.dead_zone)
        zero_l = np.zeros(len(jm.leader_joints))
        if cfg.mode == "unilateral":
            self._ref_f.value = (x_l, dx_l, np.zeros_like(x_l))
            self._ref_l.value = (q_l.copy(), dq_l.copy(), zero_l)
        else:
            m = 0.5 * (x_l + q_f)
            dm = 0.5 * (dx_l + dq_f)
            a = self.force_accel_gain * (r_l + cfg.force_scale * r_f) - cfg.force_damping * dm
            self._ref_f.value = (m, dm, a)
            self._ref_l.value = (jm.to_leader(jm.to_follower(self.q_l0) + (m - self.q_f0) / sp, self._hold_l),
                                 jm.to_leader(dm / sp, zero_l), jm.to_leader(a / sp, zero_l))
        tau_l = self.leader.step(t, q_l, dq_l)
        tau_f = self.follower.step(t, q_f, dq_f)
        self._couple_faults(t)
        self._last = (s_l, s_f, r_l, r_f, e)
        return BilateralSample(tau_l, tau_f, s_l, s_f, r_l, r_f, e)

    def _couple_faults(self, t: float) -> None:
        """A fault latched on one arm latches the other (both then command their safe states)."""
        lf, ff = self.leader.safety, self.follower.safety
        if lf.tripped and not ff.tripped:
            ff.latch(t, f"the leader faulted: {lf.fault}")
        elif ff.tripped and not lf.tripped:
            lf.latch(t, f"the follower faulted: {ff.fault}")

    @property
    def fault(self) -> str:
        """The latched fault of either arm ("" when none)."""
        return self.leader.safety.fault or self.follower.safety.fault
