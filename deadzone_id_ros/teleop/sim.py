"""The whole teleoperation setup in process (core, no ROS): two simulated arms, a scripted operator, an obstacle.

- Leader: a :class:`~deadzone_id_ros.sim.SimArm` whose external torque is the operator's hand, an impedance pulling
  it along a reference, ``tau_op = K_h (q_ref(t) - q) - D_h dq`` per joint and physics step
  (:class:`OperatorHand`), so it feels what the bilateral law reflects. Its true torque is the leader's ground truth.
- Follower: a SimArm with the obstacle of :mod:`deadzone_id_ros.sim.external_forces` (a fixed box and a probe sphere
  on a link; MuJoCo's contact gives the force, its J^T f the true contact torque), and any scripted pushes.
- :class:`TeleopRig` runs both at the simulator's rate with :class:`~.bilateral.BilateralController`, one sample per
  physics step, and logs every signal (:class:`TeleopTrace`).

The operator's hand is modelled as a joint-space impedance (a human arm's endpoint stiffness, mapped to the joints),
as in the evaluation of bilateral controllers with a scripted operator (DESIGN.md, "Bilateral teleoperation").
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import mujoco
import numpy as np

from ..sensing.contact import StaticFrictionBand
from ..sensing.sensor import ForceSensor, SensingSample
from ..sim import kernels
from ..sim.arm import SimArm
from ..sim.external_forces import ExternalForces
from ..sim.views import as_slice
from .bilateral import BilateralController

__all__ = ["OperatorHand", "TeleopRig", "TeleopTrace", "TrueTorqueSensor"]

_hand_apply, _hand_remove = kernels.hand_apply, kernels.hand_remove


@dataclass
class OperatorHand(ExternalForces):
    """The operator's hand on the leader: a joint impedance to ``reference`` (plus any pushes/obstacle of the base).

    Attributes:
        reference: t [s] -> (J,) q_ref [rad], in the leader's joint order.
        stiffness: (J,) K_h [N·m/rad] (>= 0).  damping: (J,) D_h [N·m·s/rad] (>= 0).
        hand_torque: (J,) the hand's torque of the last physics step [N·m] (also in ``true_torque``).

    Raises:
        ValueError: stiffness or damping negative or non-finite (on :meth:`bind`, where J is known).
    """

    reference: Callable[[float], np.ndarray] | None = None
    stiffness: Sequence[float] = ()
    damping: Sequence[float] = ()
    hand_torque: np.ndarray = field(default_factory=lambda: np.zeros(0))

    def bind(self, model: mujoco.MjModel, dof: np.ndarray) -> None:
        """See :meth:`ExternalForces.bind`; also checks the impedance has one value per joint."""
        super().bind(model, dof)
        n = len(dof)
        self._k = np.asarray(self.stiffness, dtype=float)
        self._d = np.asarray(self.damping, dtype=float)
        for name, a in (("stiffness", self._k), ("damping", self._d)):
            if a.shape != (n,) or not np.all(np.isfinite(a)) or np.any(a < 0):
                raise ValueError(f"operator {name} must be {n} finite values >= 0, got {a.tolist()}")
        # the qpos address of each actuated dof (hinge joints: one dof, one qpos entry)
        self._qadr = np.array([model.jnt_qposadr[int(np.flatnonzero(model.jnt_dofadr == d)[0])] for d in dof])
        self.hand_torque = np.zeros(n)
        # the MjData of _views, and its qpos, qvel, qfrc_applied entries of the arm (None: not contiguous), see step
        self._views_of: mujoco.MjData | None = None
        self._views: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
        self._shape = (n,)

    def _arm_views(self, data: mujoco.MjData) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """``data``'s qpos, qvel and qfrc_applied entries of the arm's joints as views (built once per MjData) where
        the addresses are contiguous, else None (index arrays gather and scatter them)."""
        if self._views_of is not data:
            q, v = as_slice(self._qadr), as_slice(self._dof)
            contiguous = isinstance(q, slice) and isinstance(v, slice)
            self._views_of = data
            self._views = (data.qpos[q], data.qvel[v], data.qfrc_applied[v]) if contiguous else None
        return self._views

    def step(self, model: mujoco.MjModel, data: mujoco.MjData) -> None:
        """One physics step with the hand's torque added to the arm's applied joint force (removed after).

        The hand's torque is ``K_h (q_ref - q) - D_h dq``, evaluated with its addition before and its removal after
        the step in two compiled calls (:mod:`deadzone_id_ros.sim.kernels`; the numbers of those expressions).

        Raises:
            ValueError: the reference gives neither J values nor one.
        """
        if self.reference is None:
            super().step(model, data)
            return
        views = self._arm_views(data)
        ref = np.asarray(self.reference(float(data.time)), dtype=float)
        if ref.shape != self._shape:
            if ref.size != 1:
                raise ValueError(f"operator reference(t) must give {self._shape[0]} values [rad] (or one), got shape "
                                 f"{ref.shape}")
            ref = np.full(self._shape, float(ref.reshape(-1)[0]))
        elif not ref.flags.c_contiguous:
            ref = np.ascontiguousarray(ref)
        hand = np.empty(self._shape)  # a new array: hand_torque keeps it
        if views is None:
            qfrc = np.asarray(data.qfrc_applied[self._dof])
            _hand_apply(ref, data.qpos[self._qadr], data.qvel[self._dof], self._k, self._d, qfrc, hand)
            data.qfrc_applied[self._dof] = qfrc
        else:
            q, dq, qfrc = views
            _hand_apply(ref, q, dq, self._k, self._d, qfrc, hand)  # in place into MuJoCo's array
        super().step(model, data)
        true = np.empty(self._shape)
        if views is None:
            qfrc = np.asarray(data.qfrc_applied[self._dof])
            _hand_remove(qfrc, hand, self.true_torque, true)
            data.qfrc_applied[self._dof] = qfrc
        else:
            _hand_remove(qfrc, hand, self.true_torque, true)
        self.hand_torque = hand
        self.true_torque = true


class TrueTorqueSensor(ForceSensor):
    """Ideal force sensing in simulation: the arm's true external torque of the last physics step (the torque that
    acted over the interval before the sample), exact (half width 0). The comparator that separates what the
    sensorless estimate misses from what the control law itself does (``deadzone-id teleop`` model ``ideal``).

    Args:
        sensor: the arm's sensor it replaces (its estimator and joints are kept; the estimator is not used).
        external: the arm's external forces (their ``true_torque``), bound to the arm.

    Raises:
        ValueError: ``external`` is not bound to an arm of the sensor's joints.
    """

    def __init__(self, sensor: ForceSensor, external: ExternalForces) -> None:
        super().__init__(sensor.estimator, StaticFrictionBand.none(sensor.joint_names))
        if np.shape(external.true_torque) != (len(self.joint_names),):
            raise ValueError(f"the external forces hold {np.shape(external.true_torque)} true torques, not one per "
                             f"joint of {list(self.joint_names)}: bind them to the arm first")
        self.external = external

    def update(self, t: float, q: np.ndarray, dq: np.ndarray, tau: np.ndarray,
               with_wrench: bool = True) -> SensingSample:
        """The true external torque (J,) [N·m] as the estimate, half width 0 (no wrench); the arguments are not
        used."""
        n = len(self.joint_names)
        return SensingSample(float(t), np.array(self.external.true_torque, dtype=float), np.zeros(n),
                             np.zeros(n, dtype=bool), None, None)


@dataclass
class TeleopTrace:
    """Per-tick logs of one teleoperation run, N ticks; leader arrays in the leader's joint order (Jl), follower
    arrays in the follower's (Jf).

    Attributes:
        t: (N,) [s].  q_l, dq_l, tau_l: leader position [rad], velocity [rad/s], command [N·m].
        eff_l: leader measured effort (the torque applied since the previous sample) [N·m].
        q_f, dq_f, tau_f, eff_f: the follower's.  q_ref: (N, Jl) the operator's reference [rad].
        est_l, half_l, true_l: leader estimate, interval half width, true external torque (the hand) [N·m].
        est_f, half_f, true_f: the follower's (true: the contact) [N·m].
        reflected_l, reflected_f: (N, Jf) what the force channel used [N·m].  error: (N, Jf) x_l - q_f [rad].
        fault: the latched fault at the end ("" when none).  wall_s: wall-clock time of the run loop [s].
    """

    t: np.ndarray
    q_l: np.ndarray
    dq_l: np.ndarray
    tau_l: np.ndarray
    q_f: np.ndarray
    dq_f: np.ndarray
    tau_f: np.ndarray
    q_ref: np.ndarray
    eff_l: np.ndarray
    eff_f: np.ndarray
    est_l: np.ndarray
    half_l: np.ndarray
    true_l: np.ndarray
    est_f: np.ndarray
    half_f: np.ndarray
    true_f: np.ndarray
    reflected_l: np.ndarray
    reflected_f: np.ndarray
    error: np.ndarray
    fault: str = ""
    wall_s: float = float("nan")


class TeleopRig:
    """Leader arm + operator hand, follower arm + obstacle, and the bilateral controller, stepped together.

    Args:
        leader_arm: the leader SimArm, built with an :class:`OperatorHand` as its ``external``.
        follower_arm: the follower SimArm (its ``external`` the obstacle/pushes, or None).
        controller: the bilateral controller of the pair.

    Raises:
        ValueError: the leader's external is not an :class:`OperatorHand`, or the arms' timesteps differ.
    """

    def __init__(self, leader_arm: SimArm, follower_arm: SimArm, controller: BilateralController) -> None:
        if not isinstance(leader_arm.external, OperatorHand):
            raise ValueError("the leader arm needs an OperatorHand as its external forces (the scripted operator)")
        if leader_arm.dt != follower_arm.dt:
            raise ValueError(f"leader timestep {leader_arm.dt} s differs from the follower's {follower_arm.dt} s")
        self.leader, self.follower, self.controller = leader_arm, follower_arm, controller
        self.hand: OperatorHand = leader_arm.external

    def use_true_torque(self) -> None:
        """Give both arms ideal force sensors (:class:`TrueTorqueSensor`) instead of their estimators.

        Raises:
            ValueError: the follower has no external forces (nothing to read the truth from).
        """
        if self.follower.external is None:
            raise ValueError("the follower arm has no external forces: ideal sensing needs them (give it "
                             "ExternalForces(), even empty)")
        ctl = self.controller
        ctl.leader_sensor = TrueTorqueSensor(ctl.leader_sensor, self.hand)
        ctl.follower_sensor = TrueTorqueSensor(ctl.follower_sensor, self.follower.external)

    def run(self, duration: float, progress: Callable[[int], object] | None = None) -> TeleopTrace:
        """Run ``duration`` [s] of simulated time from the arms' current states, one control tick per physics step.

        Args:
            duration: [s] (> 0).
            progress: called with the number of ticks done every 100 ticks (e.g. a progress bar's update), or None.

        Raises:
            ValueError: duration not > 0.
        """
        if not duration > 0:
            raise ValueError(f"duration = {duration!r} must be > 0 s")
        la, fa, ctl = self.leader, self.follower, self.controller
        n = int(round(duration / la.dt))
        jl, jf = la.n_joints, fa.n_joints
        lead = ("q_l", "dq_l", "tau_l", "q_ref", "eff_l", "est_l", "half_l", "true_l")
        foll = ("q_f", "dq_f", "tau_f", "eff_f", "est_f", "half_f", "true_f", "reflected_l", "reflected_f", "error")
        z: dict[str, Any] = {k: np.zeros((n, jl)) for k in lead}
        z.update({k: np.zeros((n, jf)) for k in foll})
        tr = TeleopTrace(t=np.zeros(n), **z)
        prev_l, prev_f = np.zeros(jl), np.zeros(jf)
        ref = self.hand.reference
        wall0 = time.perf_counter()
        for k in range(n):
            ml, mf = la.measure(), fa.measure()
            s = ctl.step(ml.t, (ml.q, ml.dq, ml.effort), (mf.q, mf.dq, mf.effort))
            tr.t[k] = ml.t
            tr.q_l[k], tr.dq_l[k], tr.tau_l[k] = ml.q, ml.dq, s.tau_leader
            tr.q_f[k], tr.dq_f[k], tr.tau_f[k] = mf.q, mf.dq, s.tau_follower
            tr.eff_l[k], tr.eff_f[k] = ml.effort, mf.effort
            tr.q_ref[k] = ref(ml.t) if ref is not None else ml.q
            tr.est_l[k], tr.half_l[k], tr.true_l[k] = s.leader.tau_ext, s.leader.half_width, prev_l
            tr.est_f[k], tr.half_f[k], tr.true_f[k] = s.follower.tau_ext, s.follower.half_width, prev_f
            tr.reflected_l[k], tr.reflected_f[k], tr.error[k] = s.reflected_leader, s.reflected_follower, \
                s.position_error
            la.step(s.tau_leader)
            fa.step(s.tau_follower)
            prev_l = la.external.true_torque.copy() if la.external is not None else prev_l
            prev_f = fa.external.true_torque.copy() if fa.external is not None else prev_f
            if progress is not None and (k + 1) % 100 == 0:
                progress(100)
        tr.fault = ctl.fault
        tr.wall_s = time.perf_counter() - wall0
        return tr
