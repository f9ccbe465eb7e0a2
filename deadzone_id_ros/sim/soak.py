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
min(dt, rate_limit_max_period)`` with dt the controller's period for that command (stamp difference, or the time since
the last command for a watchdog command), except a command of exactly zero in a "zero" state and a joint whose |tau|
the effort clamp cut after effort_limit_scale was lowered (reducing torque for safety is never delayed). The safe
state is entered exactly on the tick whose (q, q_d) crosses a limit, computed here independently.
"""

from __future__ import annotations

import dataclasses
import math
import time
from dataclasses import dataclass, field

import numpy as np

__all__ = ["SoakResult", "run_soak"]


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
        ValueError: duration not positive.
    """
    from ..control import ControllerConfig, ExcitationConfig, FeedforwardController, generate_excitation
    from ..models.runtime import load_model
    from .arm import SimArm
    from .config import SimArmConfig

    if not (math.isfinite(duration) and duration > 0):
        raise ValueError(f"duration = {duration!r} must be a finite number > 0 s")
    rng = np.random.default_rng(seed)
    arm = SimArm(SimArmConfig(seed=seed))
    base = ControllerConfig(joint_names=arm.joint_names, mode=mode, model="rbd")
    ctrl = FeedforwardController(base, load_model(base), arm.description)
    desc = arm.description
    res = SoakResult()
    period = 0.001
    n_ticks = int(round(duration / period))
    tau = np.zeros(arm.n_joints)
    t_stamp_last: float | None = None  # last accepted measurement stamp (the controller's dt)
    t_cmd_last: float | None = None
    next_switch, next_params, next_gap, next_excursion = 0.2, 1.0, 0.5, 5.0
    gap_until = -1.0
    reset_at = math.inf
    wall0 = time.perf_counter()

    def violate(text: str) -> None:
        if len(res.violations) < 20:
            res.violations.append(text)

    def check(t: float, new: np.ndarray, dt: float, state: str) -> None:
        nonlocal tau
        res.commands += 1
        cfg = ctrl.config
        if not np.all(np.isfinite(new)):
            violate(f"t={t:.3f}: non-finite command {new.tolist()}")
        limit = desc.effort_limit * cfg.effort_limit_scale
        res.max_clamp_ratio = max(res.max_clamp_ratio, float(np.max(np.abs(new) / limit)))
        if np.any(np.abs(new) > limit + 1e-12):
            violate(f"t={t:.3f}: command {new.tolist()} beyond the clamp {limit.tolist()}")
        if not (state == "zero" and not np.any(new)):
            allowed = np.asarray(cfg.torque_rate_limit) * min(dt, cfg.rate_limit_max_period)
            # a lowered effort_limit_scale takes effect at once: the clamp may cut |tau| faster than the rate limit
            clamped_down = (np.abs(new) >= limit - 1e-12) & (np.abs(new) < np.abs(tau))
            ratio = float(np.max(np.where(clamped_down, 0.0, np.abs(new - tau) / allowed)))
            res.max_rate_ratio = max(res.max_rate_ratio, ratio)
            if ratio > 1 + 1e-9:
                violate(f"t={t:.3f}: change {(new - tau).tolist()} from {tau.tolist()} beyond the rate limit "
                        f"{allowed.tolist()} (state {state}, dt {dt:.4f} s, clamp {limit.tolist()})")
        tau = new

    def new_reference(t: float, target: np.ndarray | None = None) -> None:
        q = arm.measure().q
        if target is None:
            cfg = ExcitationConfig(joint_names=arm.joint_names, duration=float(rng.uniform(3.0, 12.0)),
                                   seed=int(rng.integers(1 << 30)), lead_in=0.05)
            pts = generate_excitation(cfg, start=np.clip(q, desc.lower + 0.25, desc.upper - 0.25))
        else:  # a slow straight ramp to ``target``
            from ..control import TrajectoryPoints

            s = np.linspace(0.0, 1.0, 41)[:, None]
            shape = s**3 * (10 - 15 * s + 6 * s**2)
            pts = TrajectoryPoints(arm.joint_names, np.linspace(0.0, 2.0, 41), q + shape * (target - q))
        start = t + float(rng.uniform(0.05, 0.5))
        ctrl.set_reference(dataclasses.replace(pts, t=pts.t + start), now=t)

    for k in range(n_ticks):
        t = k * period
        if progress and k % 60000 == 0:
            print(f"soak: {t:.0f} s, {res.faults} faults, {len(res.violations)} violations", flush=True)
        if t >= reset_at:
            reset_at = math.inf
            if ctrl.reset_fault() == "":
                res.resets += 1
                next_switch = t + 0.3
            else:
                reset_at = t + 0.5
        if t >= next_switch and not ctrl.safety.tripped and t_stamp_last is not None:
            new_reference(t)
            res.reference_switches += 1
            next_switch = t + float(rng.uniform(2.0, 8.0))
        if t >= next_params:
            ctrl.update_config(_random_config(base, rng))
            res.parameter_sets += 1
            next_params = t + float(rng.uniform(0.5, 5.0))
        if t >= next_excursion and not ctrl.safety.tripped and t_stamp_last is not None:
            j = int(rng.integers(arm.n_joints))
            target = arm.measure().q.copy()
            target[j] = desc.upper[j] + 0.2 if rng.random() < 0.5 else desc.lower[j] - 0.2
            new_reference(t, target)
            res.excursions += 1
            next_excursion = t + float(rng.uniform(20.0, 60.0))
            next_switch = t + 4.0
        if t >= next_gap:
            gap_until = t + float(rng.uniform(0.002, 0.3))
            res.gaps += 1
            next_gap = gap_until + float(rng.uniform(0.5, 4.0))
        meas = arm.measure()
        if t < gap_until:
            new = ctrl.check_watchdog(t)
            if new is not None:
                check(t, new, t - t_cmd_last if t_cmd_last is not None and t > t_cmd_last else period, _state(ctrl))
                t_cmd_last = t
        else:
            q, dq = meas.q, meas.dq
            if rng.random() < 2e-4:
                q = q.copy()
                q[int(rng.integers(arm.n_joints))] = np.nan
                res.nonfinite_injected += 1
            tripped_before = ctrl.safety.tripped
            new = ctrl.step(t, q, dq)
            res.ticks += 1
            finite = bool(np.all(np.isfinite(q)))
            if finite:
                dt = t - t_stamp_last if t_stamp_last is not None else period
                t_stamp_last = t
            else:
                dt = period
            if finite and not tripped_before:
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
                    violate(f"t={t:.3f}: limit crossed {track or pos} but safe state {ctrl.status.safe_state}")
            if ctrl.safety.tripped and not tripped_before:
                res.faults += 1
                reset_at = t + float(rng.uniform(0.2, 1.0))
            check(t, new, dt, _state(ctrl))
            t_cmd_last = t
        arm.step(tau)
    res.sim_seconds = n_ticks * period
    res.wall_seconds = time.perf_counter() - wall0
    return res
