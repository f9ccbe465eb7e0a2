"""Soak test of the controller against the simulated arm (core, no ROS): random reference switches, live parameter
changes, injected measurement gaps and NaNs, runaways; every command checked against the limits.

One loop at 1 kHz: the arm (:class:`~deadzone_id_ros.sim.SimArm`) is measured, the measurement goes to
:meth:`FeedforwardController.step` (or, during an injected gap, no measurement arrives and
:meth:`FeedforwardController.check_watchdog` runs as the node's watchdog timer would), and the command is applied for
one tick. Random events, from one seed:

- reference switches: a new excitation (new seed, centred where the arm is) starting 0.05-0.5 s ahead, given with
  ``now`` so the reference stays continuous;
- parameter sets (:meth:`FeedforwardController.update_config`): gains x[0.5, 1.5], torque-rate limits x[0.5, 2],
  effort_limit_scale in [0.5, 1], DOB cutoff in [50, 300] rad/s, tracking_error_limit in [0.002, 0.5] rad (the
  small values trip on ordinary tracking errors: runaways on purpose);
- gaps: no measurement for 2-300 ms (the stamps then jump); single non-finite measurements;
- excursions: a reference ramping one joint past its URDF limit (the position limit trips, or the tracking error);
- an operator reset (:meth:`FeedforwardController.reset_fault`) 0.2-1 s after each fault.

Checked on every command: finite; ``|tau| <= effort limit`` (the scale in force); ``|tau - tau_prev| <= rate *
min(dt, rate_limit_max_period)`` with dt the time since the previous command, whatever sent it (a state's answer or
the watchdog: the limit as seen on the wire), except a command of exactly zero in a "zero" state and a joint whose |tau|
the effort clamp cut after effort_limit_scale was lowered (reducing torque for safety is never delayed). The safe
state is entered exactly on the tick whose (q, q_d) crosses a limit, computed here independently.
"""

from __future__ import annotations

import dataclasses
import math
import time
from dataclasses import dataclass, field

import numpy as np

from ..config import check_positive

__all__ = ["SoakResult", "ramp_points", "run_soak"]


@dataclass
class SoakResult:
    """Figures of one soak run.

    Attributes:
        sim_seconds: simulated time [s]; wall_seconds: wall time [s].
        ticks: control ticks; commands: commands checked (steps and watchdog commands).
        reference_switches, parameter_sets, gaps, nonfinite_injected, excursions, resets: events injected / done.
        faults: safe-state entries; expected_faults: ticks on which this loop saw a limit crossed while no fault
            was latched (equal to ``faults`` when the safe state is entered exactly when a limit is crossed).
        fault_reasons: count per kind ("tracking", "position").
        max_clamp_ratio: max over commands of |tau| / effort limit (<= 1).
        max_rate_ratio: max of |tau - tau_prev| / allowed change (<= 1).
        violations: descriptions of every broken check (empty on success; capped at 20).
    """

    sim_seconds: float = 0.0
    wall_seconds: float = 0.0
    ticks: int = 0
    commands: int = 0
    reference_switches: int = 0
    parameter_sets: int = 0
    gaps: int = 0
    nonfinite_injected: int = 0
    excursions: int = 0
    resets: int = 0
    faults: int = 0
    expected_faults: int = 0
    fault_reasons: dict[str, int] = field(default_factory=dict)
    max_clamp_ratio: float = 0.0
    max_rate_ratio: float = 0.0
    violations: list[str] = field(default_factory=list)


def _random_config(base, rng: np.random.Generator):
    """A random live parameter set around ``base`` (a ControllerConfig)."""
    n = len(base.joint_names)
    scale = rng.uniform(0.5, 1.5)
    return dataclasses.replace(
        base,
        kp=tuple(float(k * scale) for k in base.kp),
        kd=tuple(float(k * math.sqrt(scale)) for k in base.kd),
        torque_rate_limit=tuple(float(r * rng.uniform(0.5, 2.0)) for r in base.torque_rate_limit),
        effort_limit_scale=float(rng.uniform(0.5, 1.0)),
        dob_cutoff=tuple(float(rng.uniform(50.0, 300.0)) for _ in range(n)),
        tracking_error_limit=float(rng.choice([0.5, 0.5, 0.2, 0.01, 0.004, 0.002])),
    )


def ramp_points(joint_names: tuple[str, ...], q: np.ndarray, target: np.ndarray, duration: float = 2.0):
    """A slow straight ramp from ``q`` to ``target`` ((J,) [rad]) over ``duration`` [s], with the quintic
    (minimum-jerk) shape 10 s^3 - 15 s^4 + 6 s^5 at 41 points: the excursion of both soaks (a TrajectoryPoints with
    positions only)."""
    from ..control import TrajectoryPoints

    s = np.linspace(0.0, 1.0, 41)[:, None]
    shape = s**3 * (10 - 15 * s + 6 * s**2)
    return TrajectoryPoints(tuple(joint_names), np.linspace(0.0, duration, 41), q + shape * (target - q))


def _state(ctrl) -> str:
    """"zero" when the watchdog or the safe state commands zero torque, else the watchdog state."""
    if ctrl.status.watchdog == "zero" or (ctrl.safety.tripped and ctrl.status.safe_state == "zero"):
        return "zero"
    return ctrl.status.watchdog


def run_soak(duration: float, seed: int = 0, mode: str = "pd_dob", progress: bool = False) -> SoakResult:
    """Run the soak for ``duration`` simulated seconds; returns its figures (violations listed, never raised).

    Args:
        duration: simulated time [s] (> 0).
        seed: seeds the arm's noise and every random event.
        mode: controller mode (pd, pd_dob, ctc, ctc_dob; ctc modes use the URDF rigid-body model).
        progress: print a line every 60 simulated seconds.

    Raises:
        ValueError: duration not a finite number > 0 (``"duration = 0 must be a positive number"``).
    """
    check_positive("duration", duration)
    return _SoakLoop(seed, mode, progress).run(int(round(duration / _PERIOD)))


#: Control period of the soak loop [s] (1 kHz).
_PERIOD = 0.001


class _SoakLoop:
    """The state of one soak run: the arm, the controller, the event schedule and the checks' memory.

    Every random draw comes from one generator seeded with ``seed``, in a fixed order per tick (reset, reference
    switch, parameter set, excursion, gap, non-finite injection, fault reset time), so a seed reproduces the run.
    """

    def __init__(self, seed: int, mode: str, progress: bool) -> None:
        from ..control import build_controller
        from ..robot_configs import bundled_controller_config, bundled_sim_config
        from ..sim.arm import SimArm

        self.rng = np.random.default_rng(seed)
        self.arm = SimArm(bundled_sim_config(seed=seed))
        self.base = bundled_controller_config(mode=mode, model="rbd")
        self.ctrl = build_controller(self.base, self.arm.description)
        self.desc = self.arm.description
        self.progress = progress
        self.res = SoakResult()
        self.tau = np.zeros(self.arm.n_joints)  # the command in force [N·m]
        self.t_stamp_last: float | None = None  # last accepted measurement stamp (the controller's dt)
        self.t_cmd_last: float | None = None
        self.next_switch, self.next_params, self.next_gap, self.next_excursion = 0.2, 1.0, 0.5, 5.0
        self.gap_until = -1.0
        self.reset_at = math.inf

    def run(self, n_ticks: int) -> SoakResult:
        """Run ``n_ticks`` ticks of :data:`_PERIOD` and return the figures."""
        wall0 = time.perf_counter()
        for k in range(n_ticks):
            self.tick(k)
        self.res.sim_seconds = n_ticks * _PERIOD
        self.res.wall_seconds = time.perf_counter() - wall0
        return self.res

    def tick(self, k: int) -> None:
        """Tick ``k``: the due events, then a measurement to the controller (or, in a gap, its watchdog), then the
        command in force applied to the arm for one period."""
        t = k * _PERIOD
        if self.progress and k % 60000 == 0:
            print(f"soak: {t:.0f} s, {self.res.faults} faults, {len(self.res.violations)} violations", flush=True)
        self.events(t)
        meas = self.arm.measure()
        if t < self.gap_until:
            new = self.ctrl.check_watchdog(t)
            if new is not None:
                dt = t - self.t_cmd_last if self.t_cmd_last is not None and t > self.t_cmd_last else _PERIOD
                self.check(t, new, dt, _state(self.ctrl))
                self.t_cmd_last = t
        else:
            self.control(t, meas.q, meas.dq)
        self.arm.step(self.tau)

    def events(self, t: float) -> None:
        """Whatever is due at ``t`` [s], in this order: operator reset, reference switch, parameter set, excursion,
        measurement gap."""
        res, ctrl, rng = self.res, self.ctrl, self.rng
        if t >= self.reset_at:
            self.reset_at = math.inf
            if ctrl.reset_fault() == "":
                res.resets += 1
                self.next_switch = t + 0.3
            else:
                self.reset_at = t + 0.5
        if t >= self.next_switch and not ctrl.safety.tripped and self.t_stamp_last is not None:
            self.new_reference(t)
            res.reference_switches += 1
            self.next_switch = t + float(rng.uniform(2.0, 8.0))
        if t >= self.next_params:
            ctrl.update_config(_random_config(self.base, rng))
            res.parameter_sets += 1
            self.next_params = t + float(rng.uniform(0.5, 5.0))
        if t >= self.next_excursion and not ctrl.safety.tripped and self.t_stamp_last is not None:
            j = int(rng.integers(self.arm.n_joints))
            target = self.arm.measure().q.copy()
            target[j] = self.desc.upper[j] + 0.2 if rng.random() < 0.5 else self.desc.lower[j] - 0.2
            self.new_reference(t, target)
            res.excursions += 1
            self.next_excursion = t + float(rng.uniform(20.0, 60.0))
            self.next_switch = t + 4.0
        if t >= self.next_gap:
            self.gap_until = t + float(rng.uniform(0.002, 0.3))
            res.gaps += 1
            self.next_gap = self.gap_until + float(rng.uniform(0.5, 4.0))

    def new_reference(self, t: float, target: np.ndarray | None = None) -> None:
        """Give the controller, at ``t`` [s], a new reference starting 0.05-0.5 s ahead: a random excitation centred
        where the arm is, or (``target``, (J,) [rad]) a slow 2 s straight ramp there."""
        from ..control import generate_excitation
        from ..robot_configs import bundled_excitation_config

        arm, desc, rng = self.arm, self.desc, self.rng
        q = arm.measure().q
        if target is None:
            cfg = bundled_excitation_config(duration=float(rng.uniform(3.0, 12.0)),
                                   seed=int(rng.integers(1 << 30)), lead_in=0.05)
            pts = generate_excitation(cfg, start=np.clip(q, desc.lower + 0.25, desc.upper - 0.25))
        else:
            pts = ramp_points(arm.joint_names, q, target)
        start = t + float(rng.uniform(0.05, 0.5))
        self.ctrl.set_reference(dataclasses.replace(pts, t=pts.t + start), now=t)

    def control(self, t: float, q: np.ndarray, dq: np.ndarray) -> None:
        """A measurement (q [rad], dq [rad/s]; q made non-finite at random) to :meth:`FeedforwardController.step`;
        the limit crossing checked independently, a fault's reset scheduled, the command checked."""
        res, ctrl, rng = self.res, self.ctrl, self.rng
        if rng.random() < 2e-4:
            q = q.copy()
            q[int(rng.integers(self.arm.n_joints))] = np.nan
            res.nonfinite_injected += 1
        tripped_before = ctrl.safety.tripped
        new = ctrl.step(t, q, dq)
        res.ticks += 1
        finite = bool(np.all(np.isfinite(q)))
        dt = _PERIOD  # a non-finite measurement: the controller holds under the rate limit of one nominal period
        if finite:  # the time since the previous command, whatever sent it (a state's answer or the watchdog)
            dt = t - self.t_cmd_last if self.t_cmd_last is not None and t > self.t_cmd_last else _PERIOD
            self.t_stamp_last = t
        if finite and not tripped_before:
            self.expect_fault(t, q)
        if ctrl.safety.tripped and not tripped_before:
            res.faults += 1
            self.reset_at = t + float(rng.uniform(0.2, 1.0))
        self.check(t, new, dt, _state(ctrl))
        self.t_cmd_last = t

    def expect_fault(self, t: float, q: np.ndarray) -> None:
        """Count a limit crossed by the measurement ``q`` [rad] against the reference (tracking) or the URDF limits
        (position), computed here, and flag a safe state that does not match it."""
        ctrl, desc, res = self.ctrl, self.desc, self.res
        q_d = ctrl.desired[0]
        e = np.abs(q_d - q)
        track = bool(np.any(e > ctrl.config.tracking_error_limit))
        pos = bool(np.any(q < desc.lower - ctrl.config.position_limit_margin)
                   or np.any(q > desc.upper + ctrl.config.position_limit_margin))
        if track or pos:
            res.expected_faults += 1
            kind = "tracking" if track else "position"
            res.fault_reasons[kind] = res.fault_reasons.get(kind, 0) + 1
        if (track or pos) != ctrl.safety.tripped:
            self.violate(f"t={t:.3f}: limit crossed {track or pos} but safe state {ctrl.status.safe_state}")

    def check(self, t: float, new: np.ndarray, dt: float, state: str) -> None:
        """Check the command ``new`` (J,) [N·m] issued at ``t`` after ``dt`` [s] in watchdog/safe ``state``: finite,
        within the clamp, within the rate limit from the previous command (see the module docstring); it becomes
        the command in force."""
        res = self.res
        res.commands += 1
        cfg = self.ctrl.config
        if not np.all(np.isfinite(new)):
            self.violate(f"t={t:.3f}: non-finite command {new.tolist()}")
        limit = cfg.effort_limits(self.desc)
        res.max_clamp_ratio = max(res.max_clamp_ratio, float(np.max(np.abs(new) / limit)))
        if np.any(np.abs(new) > limit + 1e-12):
            self.violate(f"t={t:.3f}: command {new.tolist()} beyond the clamp {limit.tolist()}")
        tau = self.tau
        if not (state == "zero" and not np.any(new)):
            allowed = np.asarray(cfg.torque_rate_limit) * min(dt, cfg.rate_limit_max_period)
            # a lowered effort_limit_scale takes effect at once: the clamp may cut |tau| faster than the rate limit
            clamped_down = (np.abs(new) >= limit - 1e-12) & (np.abs(new) < np.abs(tau))
            ratio = float(np.max(np.where(clamped_down, 0.0, np.abs(new - tau) / allowed)))
            res.max_rate_ratio = max(res.max_rate_ratio, ratio)
            if ratio > 1 + 1e-9:
                self.violate(f"t={t:.3f}: change {(new - tau).tolist()} from {tau.tolist()} beyond the rate limit "
                             f"{allowed.tolist()} (state {state}, dt {dt:.4f} s, clamp {limit.tolist()})")
        self.tau = new

    def violate(self, text: str) -> None:
        """Record a broken check (the first 20)."""
        if len(self.res.violations) < 20:
            self.res.violations.append(text)
