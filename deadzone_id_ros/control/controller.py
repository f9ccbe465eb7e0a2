"""The feedforward controller (core, no ROS): computed-torque control + disturbance observer + safety.

Per tick k, with the period dt_k taken from the measurement stamps, desired (q_d, dq_d, ddq_d) from the reference
and measured (q, dq)::

    e = q_d - q,  de = dq_d - dq
    ddq_ref = ddq_d + Kd de + Kp e                       (per-joint PD in the acceleration dimension)
    tau_ff  = f(q, v, ddq_ref)         ctc modes: the model (rigid body or learned), form 1 of DESIGN.md,
                                       v = dq_d (feedforward_velocity "desired", the default) or dq ("measured")
            = Jn ddq_ref               pd modes: the nominal inertia only
    h       = tau_ff - Jn ddq_ref      (the model's part besides the nominal inertia)
    tau_dis_hat = LPF_g(tau - h + g Jn dq) - g Jn dq    (DOB, :mod:`deadzone_id_ros.control.dob`)
    tau     = tau_ff + tau_dis_hat, then NaN guard, torque-rate limit, effort clamp.

Why form 1, ``f(q, v, ddq_ref)``: with the DOB's nominal plant taken as ``Jn ddq + h`` and h defined as above, the
DOB-compensated plant obeys ``Jn ddq = Jn ddq_ref`` inside the observer bandwidth for *any* model, so the DOB only has
to estimate the model error (small with a good model), and without the DOB the law is classic computed torque
(Craig, Hsu, Sastry 1987). Form 2, ``f(q_d, dq_d, ddq_d) + Jn (Kd de + Kp e)``, would inject (M - Jn) ddq_d that
the DOB then fights. The DOB input is the torque actually sent (after limits), so limits cause no windup.
Why v = dq_d by default: a model's friction term (a smooth sign of the velocity, or a network trained on moving
samples only) evaluated at the measured velocity is near zero while a joint is stuck and flips only after the joint
has broken away, so at every reversal the PD and the DOB must first build up the breakaway torque; at dq_d it flips
with the reference, when the joint must reverse, and it does not chatter with the velocity noise while the
reference holds still. The argument above is unchanged (h is still the model's part besides Jn ddq_ref; the DOB
estimates whatever f(q, dq_d, .) misses, small while the arm tracks). This is friction compensation on the desired
velocity (Bona and Indri, "Friction compensation in robotics: an overview", IEEE CDC-ECC 2005) and the
desired-trajectory regressor of Sadegh and Horowitz (IJRR 1990), here for the velocity only; docs/controller.md,
"The velocity the model sees", has the measured effect.

Safety, always on: joint names of the model must be exactly the controller's (refusal names the joints); every
command is finite (non-finite model output or estimate falls back to the static torque and resets the DOB); the
command changes by at most ``torque_rate_limit * min(dt, rate_limit_max_period)`` per command, dt counted from the
previous command (a state's stamp or the watchdog's time; 0 when no time has passed: the command stays), so after a
gap in the stamps, a stamp jump, the watchdog, a fault or a parameter change the command ramps instead of jumping, as
seen on the wire; it is clamped
to ``effort_limit_scale`` times the effort limits (:meth:`ControllerConfig.effort_limits`: the robot profile's
actuator limits, else the URDF's; the clamp wins: a lowered scale cuts |tau| at once, and the
watchdog's and the safe state's zero torque is never ramped). Watchdog:
:meth:`FeedforwardController.check_watchdog` with no new measurement for ``watchdog_timeout`` holds the model's
static torque ``f(q_last, 0, 0)`` (rate-limited and clamped), and after a further ``watchdog_hold_time`` commands zero;
a fresh measurement resumes control (DOB restarted). Runaway (:mod:`.safety`): a tracking error above
``tracking_error_limit`` or a position beyond the URDF limits plus ``position_limit_margin`` latches a fault: hold the
static torque for ``fault_hold_time``, then zero, until :meth:`FeedforwardController.reset_fault`. Gains and limits can
change while running (:meth:`FeedforwardController.update_config`), and the model after :func:`.model_swap.check_swap`
accepts it (:meth:`FeedforwardController.swap_model`); the rate limit holds across both.
Beside it: :mod:`.status` (what it reports), :mod:`.limits` (rate limit and clamp), :mod:`.safety` (runaway check),
:mod:`.dob`, :func:`.trajectory.build_reference` (reference updates), :func:`.config.check_fixed_fields`.
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import SafetyError
from ..models.base import InverseDynamicsModel, check_joint_arrays, is_joint_vector
from ..robot import RobotDescription
from .arm_check import ArmReference, arm_verdict
from .config import ControllerConfig, check_fixed_fields
from .dob import DisturbanceObserver
from .limits import all_finite as _all_finite
from .limits import rate_limit_and_clamp, since_command
from .model_swap import ProbeBuffer, SwapVerdict, bind_model, check_model_fields, check_swap, joint_mismatch
from .reference_follow import ReferenceFollowing
from .safety import SafetyMonitor
from .status import ControllerStatus, TorqueParts
from .trajectory import TrajectorySampler

__all__ = ["FeedforwardController"]


class FeedforwardController(ReferenceFollowing):
    """One controller object for the node and for offline simulation: ``step(t, q, dq) -> tau``.

    Args:
        config: gains, mode, limits.
        model: the inverse-dynamics model (any :class:`InverseDynamicsModel`); its joint names must be the
            controller's (any order; mapped by name).
        description: the robot description giving effort limits (default: read from ``config.urdf_path``).

    Raises:
        SafetyError: the model's joints differ from ``config.joint_names`` (missing and extra joints named), the
            description lacks joints, or the model carries a URDF of another arm (:mod:`.arm_check`: the joint, the
            bodies and the torque difference named).
        FileNotFoundError, RobotDescriptionError: the URDF cannot be read, or a controlled joint's effort limit is 0,
            negative or missing (the joint and the fix are named).
        ValueError: a model that reads the joint-state history (a history method's; :func:`.model_swap.bind_model`).
    """

    def __init__(
        self, config: ControllerConfig, model: InverseDynamicsModel, description: RobotDescription | None = None
    ) -> None:
        from ..resources import default_urdf
        from ..robot import load_robot_description

        self.config = config
        self.joint_names = tuple(config.joint_names)
        n = len(self.joint_names)
        mismatch = joint_mismatch(tuple(model.joint_names), self.joint_names)
        if mismatch:
            raise SafetyError(f"{mismatch}; refusing to start")
        self._binding, self.model = bind_model(model, self.joint_names), model  # swap_model replaces both
        self._probe = ProbeBuffer(n)
        if description is None:
            description = load_robot_description(config.urdf_path or default_urdf(), self.joint_names)
        if tuple(description.joint_names) != self.joint_names:
            raise SafetyError(f"robot description joints {list(description.joint_names)} differ from the "
                              f"controller's {list(self.joint_names)}")
        # the effort clamp (refuses effort="0" from CAD exports, which would clamp every command to 0 N·m, and a
        # configured limit above the URDF's); the arm check at start-up uses the same limits as a model swap
        effort_limit = config.effort_limits(description)
        self.description = description
        other_arm, why = arm_verdict(model, ArmReference.of(description), self.joint_names, effort_limit)
        if other_arm:
            raise SafetyError(f"{why}; refusing to start")
        self.status = ControllerStatus.for_joints(n)
        self._n = n
        self._zero = np.zeros(n)
        self._zero.flags.writeable = False  # shared read-only zeros (never handed out to be written)
        # Preallocated per-tick buffers (the law writes into them; nothing is created per tick but the command).
        self._e, self._de, self._fb_acc, self._tmp = (np.zeros(n) for _ in range(4))
        self._ddq_ref, self._jn_ddq_ref, self._h = (np.zeros(n) for _ in range(3))
        self.parts = TorqueParts(np.zeros(n), np.zeros(n), np.zeros(n), np.zeros(n))
        self._reference: TrajectorySampler | None = None
        self._t_last: float | None = None
        self._t_cmd: float | None = None
        self._q_last: np.ndarray | None = None
        self._tau_prev = np.zeros(n)
        self._h_prev = np.zeros(n)
        self._desired = (np.zeros(n), np.zeros(n), np.zeros(n))
        self._uses_model, self._uses_dob = config.uses_model, config.uses_dob
        self._dt_nominal = 1.0 / config.control_rate
        self.dob = DisturbanceObserver(np.asarray(config.dob_cutoff), np.asarray(config.nominal_inertia),
                                       config.dob_discretization)
        self._apply(config)

    def _apply(self, config: ControllerConfig) -> None:
        """Take gains, limits and timeouts from ``config`` (the fixed fields are the caller's business)."""
        self.config = config
        self.effort_limit = config.effort_limits(self.description)
        self.kp = np.asarray(config.kp, dtype=float)
        self.kd = np.asarray(config.kd, dtype=float)
        self.jn = np.asarray(config.nominal_inertia, dtype=float)
        self.rate_limit = np.asarray(config.torque_rate_limit, dtype=float)
        self._ff_desired = config.feedforward_velocity == "desired"
        dob = self.dob
        if (dob.cutoff.tolist() != list(config.dob_cutoff) or dob.nominal_inertia.tolist() != self.jn.tolist()
                or dob.discretization != config.dob_discretization):
            self.dob = DisturbanceObserver(np.asarray(config.dob_cutoff), self.jn, config.dob_discretization)
        old = getattr(self, "safety", None)
        self.safety = SafetyMonitor(self.joint_names, np.full(self._n, config.tracking_error_limit),
                                    self.description.lower, self.description.upper, config.position_limit_margin,
                                    config.fault_hold_time)
        if old is not None:  # a latched fault survives a parameter change: only reset_fault clears it
            self.safety.fault, self.safety.fault_time, self.safety.faults = old.fault, old.fault_time, old.faults
        self._max_dt = config.rate_limit_max_period
        self._rate_limit_list = self.rate_limit.tolist()
        self._effort_limit_list = self.effort_limit.tolist()

    def update_config(self, config: ControllerConfig) -> None:
        """Apply new gains, limits and timeouts while running (a validated parameter change).

        The command keeps ramping from the last one under the new rate limit; the DOB restarts if its cutoff,
        nominal inertia or discretization changed; a latched fault stays latched.

        Raises:
            ValueError: ``config`` changes a field fixed at construction (:data:`.config.FIXED_FIELDS`; names it).
        """
        check_fixed_fields(self.config, config)
        self._apply(config)

    def swap_model(self, model: InverseDynamicsModel, probe: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
                   config: ControllerConfig | None = None) -> SwapVerdict:
        """Check ``model`` (:func:`.model_swap.check_swap` on the recent states plus ``probe``: (q, dq, ddq), each
        (N, J) [rad, rad/s, rad/s²]); accepted, it runs from the next tick (one assignment: a tick sees the old or the
        new model, never a mix), refused, the old one keeps running. The last command, the DOB and the rate limit are
        untouched: the command ramps to the new torque. ``config`` (the old one with the new
        :data:`.model_swap.MODEL_FIELDS`: what the model was loaded from) is taken when accepted.

        Raises:
            ValueError: ``config`` changes other fields, or ``probe`` arrays are not (N, J).
        """
        if config is not None:
            check_model_fields(self.config, config)
        verdict = check_swap(model, self.joint_names, self.effort_limit, *self._probe.states(probe),
                             arm=ArmReference.of(self.description))
        if verdict.accepted:
            self._binding, self.model = bind_model(model, self.joint_names), model
            self.config = config or self.config
        return verdict

    def _predict(self, q: np.ndarray, dq: np.ndarray, ddq: np.ndarray) -> np.ndarray:
        model, to_model, from_model, identity = self._binding
        if identity:
            return np.asarray(model.predict(q, dq, ddq), dtype=float)
        return np.asarray(model.predict(q[to_model], dq[to_model], ddq[to_model]), dtype=float)[from_model]

    def static_torque(self, q: np.ndarray) -> np.ndarray:
        """Model torque f(q, 0, 0) (J,) [N·m] at rest at q (J,) [rad] (gravity for a rigid body); zeros if not
        finite."""
        tau = self._predict(np.asarray(q, dtype=float), self._zero, self._zero)
        return tau if _all_finite(tau) else self._zero.copy()

    @property
    def last_stamp(self) -> float | None:
        """Stamp [s] of the last measurement used, or None before the first."""
        return self._t_last

    def _limit(self, tau: np.ndarray, dt: float) -> np.ndarray:
        """NaN guard, then the rate limit around the previous command, then the effort clamp; returns a new array.

        The rate limit allows ``rate * min(dt, rate_limit_max_period)``: after any gap the command ramps
        (:func:`.limits.rate_limit_and_clamp`, bit-identical to numpy's clips).
        """
        if dt > self._max_dt:
            dt = self._max_dt
        values = tau.tolist()
        if not all(map(math.isfinite, values)):
            self.status.nonfinite_events += 1
            fallback = self.static_torque(self._q_last) if self._q_last is not None else self._zero
            values = np.where(~np.isfinite(tau), fallback, tau).tolist()
            self.dob.reset()
        return rate_limit_and_clamp(values, self._tau_prev.tolist(), self._rate_limit_list, self._effort_limit_list,
                                    dt, self.status.rate_limit_events, self.status.clamp_events)

    def step(self, t: float, q: np.ndarray, dq: np.ndarray) -> np.ndarray:
        """Process one measurement and return the torque command (J,) [N·m], always finite and within limits.

        Args:
            t: measurement stamp [s] (the period is the difference of consecutive stamps).
            q: (J,) measured position [rad], controller joint order.
            dq: (J,) measured velocity [rad/s].

        A measurement with a non-finite value is not used (counted; the static torque at the last good position is
        commanded). One whose stamp is not after the previous one is ignored (counted; the last command is
        repeated). While a fault is latched (:mod:`.safety`) the command is the safe state's.

        Raises:
            ValueError: q or dq is not of shape (J,).
        """
        if not (is_joint_vector(q, self._n) and is_joint_vector(dq, self._n)):  # the common case skips the checker
            q, dq = check_joint_arrays(self._n, batch=False, q=q, dq=dq)
        status = self.status
        if not (math.isfinite(t) and _all_finite(q) and _all_finite(dq)):
            status.nonfinite_events += 1
            t_now = t if math.isfinite(t) else self._t_cmd  # a non-finite stamp: no time has passed that we know of
            dt_cmd = min(self._dt_nominal, since_command(self._t_cmd, t_now, self._dt_nominal)) \
                if t_now is not None else self._dt_nominal
            if self.safety.tripped:
                return self._safe_command(t_now if t_now is not None else self.safety.fault_time, dt_cmd)
            hold = self.static_torque(self._q_last) if self._q_last is not None else self._zero
            return self._emit(self._limit(hold, dt_cmd), t if math.isfinite(t) else None)
        t_last = self._t_last
        if t_last is not None and t <= t_last:
            status.rejected_measurements += 1
            return self._tau_prev.copy()
        dt = t - t_last if t_last is not None else self._dt_nominal
        if status.watchdog in ("hold", "zero") or dt > self.config.watchdog_timeout:
            self.dob.reset()  # the history is stale: restart the observer from zero
        if self._q_last is None:
            self._desired = (q.copy(), np.zeros(self._n), np.zeros(self._n))
            self._q_last = q.copy()
        else:
            self._q_last[:] = q
        status.watchdog = "running"
        status.ticks += 1
        status.last_period = dt if t_last is not None else math.nan
        self._t_last = t

        q_d, dq_d, ddq_d = self._sample_desired(t)
        self._desired = (q_d, dq_d, ddq_d)
        e = np.subtract(q_d, q, out=self._e)
        status.tracking_error[:] = e
        dt_cmd = min(dt, since_command(self._t_cmd, t, self._dt_nominal))  # the last command may be a watchdog's
        if self.safety.check(t, q, e):
            return self._safe_command(t, dt_cmd)
        de = np.subtract(dq_d, dq, out=self._de)
        fb_acc = np.add(np.multiply(self.kd, de, out=self._fb_acc), np.multiply(self.kp, e, out=self._tmp),
                        out=self._fb_acc)
        ddq_ref = np.add(ddq_d, fb_acc, out=self._ddq_ref)
        jn_ddq_ref = np.multiply(self.jn, ddq_ref, out=self._jn_ddq_ref)
        v = dq_d if self._ff_desired else dq
        self._probe.record(q, v, ddq_ref)
        tau_ff = self._predict(q, v, ddq_ref) if self._uses_model else jn_ddq_ref
        h = np.subtract(tau_ff, jn_ddq_ref, out=self._h)
        if self._uses_dob:
            d_hat = self.dob.update(dt, dq, self._tau_prev, self._h_prev)
            if not _all_finite(d_hat):
                status.nonfinite_events += 1
                self.dob.reset()
                d_hat = self._zero
        else:
            d_hat = self._zero
        if _all_finite(h):
            self._h_prev[:] = h
        else:
            self._h_prev.fill(0.0)
        tau = self._limit(tau_ff + d_hat, dt_cmd)
        parts = self.parts
        fb = np.multiply(self.jn, fb_acc, out=parts.fb)
        np.subtract(tau_ff, fb, out=parts.ff)
        parts.dob[:] = d_hat
        return self._emit(tau, t)

    def _emit(self, tau: np.ndarray, t: float | None) -> np.ndarray:
        # ``tau`` is always a fresh array owned here (from _limit or a copy of zeros), so it is kept as is.
        self._tau_prev = tau
        if t is not None and (self._t_cmd is None or t > self._t_cmd):
            self._t_cmd = t  # never back: a state older than a watchdog command must not reopen the rate limit
        self.parts.command[:] = tau
        return tau.copy()

    def _safe_command(self, t: float, dt: float) -> np.ndarray:
        """The safe state's command at time ``t`` [s]: the static torque at the last position (rate-limited,
        clamped) while "hold", zeros once "zero"; updates status.fault / safe_state and the torque parts."""
        status, safety = self.status, self.safety
        state = safety.state(t)
        if state == "hold":
            tau = self._limit(self.static_torque(self._q_last) if self._q_last is not None else self._zero, dt)
        else:
            tau = np.zeros(self._n)
        status.fault, status.safe_state, status.faults = safety.fault, state, safety.faults
        parts = self.parts
        parts.ff.fill(0.0)
        parts.fb.fill(0.0)
        parts.dob.fill(0.0)
        self.dob.reset()
        return self._emit(tau, t)

    def reset_fault(self) -> str:
        """Leave the safe state (an explicit operator action): returns "" on success, else why it is refused.

        The reference is dropped (the arm holds the position it is at) and the DOB restarts, so control resumes
        without a jump: the first commands ramp from the safe state's under the rate limit. Refused while a joint is
        outside its position limits (plus margin).
        """
        if not self.safety.tripped:
            return ""
        reason = self.safety.reset(self._q_last)
        if reason:
            return reason
        self._reference = None
        if self._q_last is not None:
            self._desired = (self._q_last.copy(), np.zeros(self._n), np.zeros(self._n))
        self.dob.reset()
        self.status.fault, self.status.safe_state = "", "ok"
        return ""

    def check_watchdog(self, now: float) -> np.ndarray | None:
        """Apply the watchdog at time ``now`` [s] (same clock as the stamps) when no measurement arrived.

        Returns:
            None while measurements are fresh (or none arrived yet); otherwise the command (J,) [N·m] to send: the
            static torque at the last position (state "hold", rate-limited and clamped) for ``watchdog_hold_time``,
            then zeros (state "zero"). With a fault latched, the safe state's command (which ends in zeros too).
        """
        if self._t_last is None:
            return None
        age = now - self._t_last
        if age <= self.config.watchdog_timeout:
            return None
        dt = since_command(self._t_cmd, now, self._dt_nominal)
        if self.status.watchdog == "running":
            self.status.watchdog_trips += 1
        if age <= self.config.watchdog_timeout + self.config.watchdog_hold_time:
            self.status.watchdog = "hold"
            if self.safety.tripped:
                return self._safe_command(now, dt)
            hold = self.static_torque(self._q_last) if self._q_last is not None else self._zero.copy()
            tau = self._limit(hold, dt)
        else:
            self.status.watchdog = "zero"
            tau = np.zeros(self._n)
            if self.safety.tripped:
                self.status.safe_state = "zero"
        parts = self.parts
        parts.ff.fill(0.0)
        parts.fb.fill(0.0)
        parts.dob.fill(0.0)
        return self._emit(tau, now)
