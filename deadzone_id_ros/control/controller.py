"""The feedforward controller (core, no ROS): computed-torque control + disturbance observer + safety.

Per tick k, with the period dt_k taken from the measurement stamps, desired (q_d, dq_d, ddq_d) from the reference
and measured (q, dq):

    e = q_d - q,  de = dq_d - dq
    ddq_ref = ddq_d + Kd de + Kp e                       (per-joint PD in the acceleration dimension)
    tau_ff  = f(q, dq, ddq_ref)        ctc modes: the model (rigid body or learned), form 1 of DESIGN.md
            = Jn ddq_ref               pd modes: the nominal inertia only
    h       = tau_ff - Jn ddq_ref      (the model's part besides the nominal inertia)
    tau_dis_hat = LPF_g(tau - h + g Jn dq) - g Jn dq    (DOB, :mod:`deadzone_id_ros.control.dob`)
    tau     = tau_ff + tau_dis_hat, then NaN guard, torque-rate limit, effort clamp.

Why form 1, ``f(q, dq, ddq_ref)``: with the DOB's nominal plant taken as ``Jn ddq + h`` and h defined as above, the
DOB-compensated plant obeys ``Jn ddq = Jn ddq_ref`` inside the observer bandwidth for *any* model, so the DOB only has
to estimate the model error (small with a good model), and without the DOB the law is classic computed torque
(Craig, Hsu, Sastry 1987). Form 2, ``f(q_d, dq_d, ddq_d) + Jn (Kd de + Kp e)``, would inject (M - Jn) ddq_d that
the DOB then fights. The DOB input is the torque actually sent (after limits), so limits cause no windup.

Safety, always on: joint names of the model must be exactly the controller's (refusal names the joints); every
command is finite (non-finite model output or estimate falls back to the static torque and resets the DOB); the
command changes by at most ``torque_rate_limit * dt`` per tick; it is clamped to ``effort_limit_scale`` times the
URDF effort limits. Watchdog: :meth:`FeedforwardController.check_watchdog` with no new measurement for
``watchdog_timeout`` holds the model's static torque ``f(q_last, 0, 0)`` (rate-limited and clamped), and after a
further ``watchdog_hold_time`` commands zero; a fresh measurement resumes control (DOB restarted).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..errors import SafetyError
from ..models.base import InverseDynamicsModel, check_joint_arrays
from ..robot import RobotDescription
from .config import ControllerConfig
from .dob import DisturbanceObserver
from .trajectory import TrajectoryPoints, TrajectorySampler

__all__ = ["ControllerStatus", "FeedforwardController", "TorqueParts", "WATCHDOG_STATES"]

WATCHDOG_STATES = ("waiting", "running", "hold", "zero")

_isfinite = math.isfinite


def _all_finite(x: np.ndarray) -> bool:
    """True when every entry of the small 1-D float array ``x`` is finite (faster than np.all(np.isfinite(x)) for a
    handful of joints, where numpy's per-call overhead dominates)."""
    return all(map(_isfinite, x.tolist()))


@dataclass
class TorqueParts:
    """The parts of the last command, each (J,) [N·m] in the controller's joint order.

    Attributes:
        ff: model/nominal torque without the nominal feedback part: tau_ff - fb.
        fb: nominal feedback torque Jn (Kd de + Kp e).
        dob: disturbance estimate added to the command (zero without DOB).
        command: the command after the NaN guard, rate limit and clamp.
    """

    ff: np.ndarray
    fb: np.ndarray
    dob: np.ndarray
    command: np.ndarray


@dataclass
class ControllerStatus:
    """Counters and state for diagnostics. Per-joint arrays follow the controller's joint order.

    Attributes:
        watchdog: one of WATCHDOG_STATES.
        clamp_events: (J,) ticks whose command hit the effort limit.
        rate_limit_events: (J,) ticks whose command change was limited.
        nonfinite_events: ticks with a non-finite input or intermediate value (command replaced).
        rejected_measurements: measurements ignored (stamp not after the previous one).
        ticks: measurements processed.
        last_period: last measured period [s] (nan before two ticks).
        tracking_error: (J,) last e = q_d - q [rad].
    """

    watchdog: str = "waiting"
    clamp_events: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    rate_limit_events: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    nonfinite_events: int = 0
    rejected_measurements: int = 0
    ticks: int = 0
    last_period: float = math.nan
    tracking_error: np.ndarray = field(default_factory=lambda: np.zeros(0))


class FeedforwardController:
    """One controller object for the node and for offline simulation: ``step(t, q, dq) -> tau``.

    Args:
        config: gains, mode, limits.
        model: the inverse-dynamics model (any :class:`InverseDynamicsModel`); its joint names must be the
            controller's (any order; mapped by name).
        description: the robot description giving effort limits (default: read from ``config.urdf_path``).

    Raises:
        SafetyError: the model's joints differ from ``config.joint_names`` (missing and extra joints named), or the
            description lacks joints.
        FileNotFoundError, RobotDescriptionError: the URDF cannot be read.
    """

    def __init__(
        self, config: ControllerConfig, model: InverseDynamicsModel, description: RobotDescription | None = None
    ) -> None:
        from ..resources import default_urdf
        from ..robot import load_robot_description

        self.config = config
        self.joint_names = tuple(config.joint_names)
        n = len(self.joint_names)
        model_names = tuple(model.joint_names)
        missing = [j for j in self.joint_names if j not in model_names]
        extra = [j for j in model_names if j not in self.joint_names]
        if missing or extra or len(model_names) != n:
            raise SafetyError(
                f"model joints {list(model_names)} do not match the controller's {list(self.joint_names)}: "
                f"missing from the model {missing}, not controlled {extra}; refusing to start"
            )
        self.model = model
        # model order -> controller order: x_model = x_ctrl[self._to_model]; tau_ctrl = tau_model[self._from_model]
        self._to_model = np.array([self.joint_names.index(j) for j in model_names], dtype=int)
        self._from_model = np.array([model_names.index(j) for j in self.joint_names], dtype=int)
        self._identity = bool(np.all(self._to_model == np.arange(n)))
        if description is None:
            description = load_robot_description(config.urdf_path or default_urdf(), self.joint_names)
        if tuple(description.joint_names) != self.joint_names:
            raise SafetyError(
                f"robot description joints {list(description.joint_names)} differ from the controller's "
                f"{list(self.joint_names)}"
            )
        self.effort_limit = description.effort_limit * config.effort_limit_scale
        self.kp = np.asarray(config.kp, dtype=float)
        self.kd = np.asarray(config.kd, dtype=float)
        self.jn = np.asarray(config.nominal_inertia, dtype=float)
        self.rate_limit = np.asarray(config.torque_rate_limit, dtype=float)
        self.dob = DisturbanceObserver(np.asarray(config.dob_cutoff), self.jn, config.dob_discretization)
        self.status = ControllerStatus(
            clamp_events=np.zeros(n, dtype=np.int64), rate_limit_events=np.zeros(n, dtype=np.int64),
            tracking_error=np.zeros(n),
        )
        self._zero = np.zeros(n)
        self.parts = TorqueParts(self._zero.copy(), self._zero.copy(), self._zero.copy(), self._zero.copy())
        self._reference: TrajectorySampler | None = None
        self._t_last: float | None = None
        self._t_cmd: float | None = None
        self._q_last: np.ndarray | None = None
        self._tau_prev = self._zero.copy()
        self._h_prev = self._zero.copy()
        self._desired = (self._zero.copy(), self._zero.copy(), self._zero.copy())
        # Per-tick constants (the config is frozen; gains above are fixed at construction too).
        self._n = n
        self._dt_nominal = 1.0 / config.control_rate
        self._uses_model = config.uses_model
        self._uses_dob = config.uses_dob
        self._rate_limit_list = self.rate_limit.tolist()
        self._effort_limit_list = self.effort_limit.tolist()

    # ----------------------------------------------------------------------------------------------------------
    def _predict(self, q: np.ndarray, dq: np.ndarray, ddq: np.ndarray) -> np.ndarray:
        if self._identity:
            return np.asarray(self.model.predict(q, dq, ddq), dtype=float)
        m = self._to_model
        return np.asarray(self.model.predict(q[m], dq[m], ddq[m]), dtype=float)[self._from_model]

    def static_torque(self, q: np.ndarray) -> np.ndarray:
        """Model torque f(q, 0, 0) (J,) [N·m] at rest at q (J,) [rad] (gravity for a rigid body); zeros if not
        finite."""
        tau = self._predict(np.asarray(q, dtype=float), self._zero, self._zero)
        return tau if _all_finite(tau) else self._zero.copy()

    @property
    def reference(self) -> TrajectorySampler | None:
        """The reference being followed, or None (hold the first measured position)."""
        return self._reference

    @property
    def desired(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(q_d, dq_d, ddq_d) of the last tick, each (J,) [rad, rad/s, rad/s²]."""
        return self._desired

    def set_reference(self, points: TrajectoryPoints | None, now: float | None = None) -> None:
        """Follow ``points`` (absolute times [s], same clock as the measurements); None holds the current position.

        Points are mapped by joint name. When ``now`` is given and the first point lies in the future, the current
        desired state at ``now`` is prepended, so the reference stays continuous in q, dq, ddq.

        Raises:
            SafetyError: the points lack a controlled joint (names listed).
        """
        if points is None:
            self._reference = None
            return
        names = tuple(points.joint_names)
        missing = [j for j in self.joint_names if j not in names]
        if missing:
            raise SafetyError(f"reference lacks joint(s) {missing} (it has {list(names)})")
        idx = [names.index(j) for j in self.joint_names]
        t = np.asarray(points.t, dtype=float)
        pos = np.asarray(points.position, dtype=float)[:, idx]
        vel = None if points.velocity is None else np.asarray(points.velocity, dtype=float)[:, idx]
        acc = None if points.acceleration is None else np.asarray(points.acceleration, dtype=float)[:, idx]
        if now is not None and t[0] > now and (self._reference is not None or self._q_last is not None):
            q0, dq0, ddq0 = self._sample_desired(now)
            t = np.concatenate([[now], t])
            pos = np.vstack([q0, pos])
            if vel is None:
                vel = np.vstack([dq0, np.gradient(pos[1:], t[1:], axis=0) if len(t) > 2 else np.zeros_like(pos[1:])])
            else:
                vel = np.vstack([dq0, vel])
            acc = None if acc is None else np.vstack([ddq0, acc])
        self._reference = TrajectorySampler(TrajectoryPoints(self.joint_names, t, pos, vel, acc))

    def _sample_desired(self, t: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        if self._reference is not None:
            return self._reference.sample(t)
        if self._q_last is None:
            raise SafetyError("no reference and no measurement yet")
        return self._desired[0].copy(), self._zero.copy(), self._zero.copy()

    # ----------------------------------------------------------------------------------------------------------
    def _limit(self, tau: np.ndarray, dt: float) -> np.ndarray:
        """NaN guard, then the rate limit around the previous command, then the effort clamp.

        Element by element on Python floats (J is a handful of joints, where numpy's per-call overhead dominates);
        the comparisons and clips are numpy's: ``np.clip(x, lo, hi)`` = ``min(max(x, lo), hi)`` with
        ``max(a, b) = a if a > b else b`` and ``min(a, b) = a if a < b else b``, so results are bit-identical.
        """
        values = tau.tolist()
        if not all(map(_isfinite, values)):
            self.status.nonfinite_events += 1
            fallback = self.static_torque(self._q_last) if self._q_last is not None else self._zero
            values = np.where(~np.isfinite(tau), fallback, tau).tolist()
            self.dob.reset()
        rate_events = self.status.rate_limit_events
        clamp_events = self.status.clamp_events
        out = []
        for i, (x, prev, rate, limit) in enumerate(
            zip(values, self._tau_prev.tolist(), self._rate_limit_list, self._effort_limit_list)
        ):
            step = rate * dt
            lo, hi = prev - step, prev + step
            if x < lo or x > hi:
                rate_events[i] += 1
            x = x if x > lo else lo
            x = x if x < hi else hi
            if abs(x) > limit:
                clamp_events[i] += 1
            x = x if x > -limit else -limit
            x = x if x < limit else limit
            out.append(x)
        return np.array(out)

    def step(self, t: float, q: np.ndarray, dq: np.ndarray) -> np.ndarray:
        """Process one measurement and return the torque command (J,) [N·m], always finite and within limits.

        Args:
            t: measurement stamp [s] (the period is the difference of consecutive stamps).
            q: (J,) measured position [rad], controller joint order.
            dq: (J,) measured velocity [rad/s].

        A measurement with a non-finite value is not used (counted; the static torque at the last good position is
        commanded). One whose stamp is not after the previous one is ignored (counted; the last command is
        repeated).

        Raises:
            ValueError: q or dq is not of shape (J,).
        """
        n = self._n
        q, dq = check_joint_arrays(n, batch=False, q=q, dq=dq)
        status = self.status
        if not (math.isfinite(t) and _all_finite(q) and _all_finite(dq)):
            status.nonfinite_events += 1
            hold = self.static_torque(self._q_last) if self._q_last is not None else self._zero
            return self._emit(self._limit(hold, self._dt_nominal), t if math.isfinite(t) else None)
        t_last = self._t_last
        if t_last is not None and t <= t_last:
            status.rejected_measurements += 1
            return self._tau_prev.copy()
        dt = t - t_last if t_last is not None else self._dt_nominal
        if status.watchdog in ("hold", "zero") or dt > self.config.watchdog_timeout:
            self.dob.reset()  # the history is stale: restart the observer from zero
        if self._q_last is None:
            self._desired = (q.copy(), self._zero.copy(), self._zero.copy())
        self._q_last = q.copy()
        status.watchdog = "running"
        status.ticks += 1
        status.last_period = dt if t_last is not None else math.nan
        self._t_last = t

        q_d, dq_d, ddq_d = self._sample_desired(t)
        self._desired = (q_d, dq_d, ddq_d)
        e = q_d - q
        de = dq_d - dq
        status.tracking_error = e
        fb_acc = self.kd * de + self.kp * e
        ddq_ref = ddq_d + fb_acc
        jn_ddq_ref = self.jn * ddq_ref
        tau_ff = self._predict(q, dq, ddq_ref) if self._uses_model else jn_ddq_ref
        h = tau_ff - jn_ddq_ref
        if self._uses_dob:
            d_hat = self.dob.update(dt, dq, self._tau_prev, self._h_prev)
            if not _all_finite(d_hat):
                status.nonfinite_events += 1
                self.dob.reset()
                d_hat = self._zero
        else:
            d_hat = self._zero
        self._h_prev = h if _all_finite(h) else self._zero.copy()
        tau = self._limit(tau_ff + d_hat, dt)
        fb = self.jn * fb_acc
        self.parts = TorqueParts(ff=tau_ff - fb, fb=fb, dob=np.array(d_hat, dtype=float), command=tau)
        return self._emit(tau, t)

    def _emit(self, tau: np.ndarray, t: float | None) -> np.ndarray:
        # ``tau`` is always a fresh array owned here (from _limit or a copy of zeros), so it is kept as is.
        self._tau_prev = tau
        if t is not None:
            self._t_cmd = t
        self.parts.command = tau.copy()
        return tau.copy()

    def check_watchdog(self, now: float) -> np.ndarray | None:
        """Apply the watchdog at time ``now`` [s] (same clock as the stamps) when no measurement arrived.

        Returns:
            None while measurements are fresh (or none arrived yet); otherwise the command (J,) [N·m] to send: the
            static torque at the last position (state "hold", rate-limited and clamped) for ``watchdog_hold_time``,
            then zeros (state "zero").
        """
        if self._t_last is None:
            return None
        age = now - self._t_last
        if age <= self.config.watchdog_timeout:
            return None
        dt = now - self._t_cmd if self._t_cmd is not None and now > self._t_cmd else 1.0 / self.config.control_rate
        if age <= self.config.watchdog_timeout + self.config.watchdog_hold_time:
            self.status.watchdog = "hold"
            tau = self._limit(self.static_torque(self._q_last) if self._q_last is not None else self._zero.copy(), dt)
        else:
            self.status.watchdog = "zero"
            tau = self._zero.copy()
        self.parts = TorqueParts(self._zero.copy(), self._zero.copy(), self._zero.copy(), tau)
        return self._emit(tau, now)
