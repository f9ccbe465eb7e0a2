"""The excitation trajectory generator (core, no ROS).

:func:`generate_excitation` builds a seeded excitation: per joint a Fourier series evaluated along a time-warped phase
whose rate switches smoothly between moving (1), holding (0) and slow phases, so that recordings contain the dead-zone
phases (stuck joints, stick-slip) that real demonstrations contain. Amplitudes are scaled to stay within the URDF
position and velocity limits and a configured acceleration limit, each with a margin; a continuous joint (no position
limit) moves within one turn each way of its centre. Then the torque the motion needs (the URDF's rigid body with its
friction and damping, pinocchio RNEA: gravity, inertia, Coriolis) is kept below ``effort_fraction`` of each effort
limit by shrinking every joint's excursion about the centre by one common factor (bisection), so that no joint
saturates under gravity and friction; a centre pose whose gravity load alone breaks that bound is refused. The result
is a :class:`~deadzone_id_ros.control.trajectory.TrajectoryPoints` (positions, velocities and accelerations).

Excitation trajectories in the style of Swevers et al., "Optimal robot excitation and identification", IEEE T-RA
13(5), 1997 (finite Fourier series per joint); the hold/slow phases follow Inami, Yamane, Sakaino (arXiv 2402.00393).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from ..config import check_joint_names, check_per_joint, check_positive
from ..errors import ConfigError
from ..robot.description import PRISMATIC_MARGIN_FRACTION, position_margins
from ..robot.reduced import locked_positions
from .trajectory import TrajectoryPoints

__all__ = ["ExcitationConfig", "generate_excitation"]


@dataclass(frozen=True)
class ExcitationConfig:
    """Excitation trajectory: Fourier series per joint along a time-warped phase with hold and slow phases.

    ``joint_names``, ``center``, ``acceleration_limit`` and ``amplitude`` have no default (keyword-only, required):
    build the config for a robot from its profile with :func:`deadzone_id_ros.robot_configs.excitation_config`.

    Attributes:
        joint_names: (J,) joints, by name.
        urdf_path: URDF whose position/velocity limits bound the motion; "" = the bundled arm.
        duration: total length [s] (> 0).
        seed: seed of the random coefficients and phase schedule.
        base_frequency: fundamental of the Fourier series [Hz] (> 0).
        harmonics: number of harmonics (>= 1).
        center: (J,) centre position [rad]; used when ``center_from_start`` is false.
        center_from_start: centre on the start position given to :func:`generate_excitation` (the arm's position).
        position_margin: distance kept from the URDF position limits of a revolute joint [rad] (>= 0).
        prismatic_margin_fraction: distance kept from the position limits of a prismatic joint, as a fraction of
            its stroke (upper - lower) [1], in [0, 0.5): a margin in the joint's own unit (0.05 of a 0.4 m stroke is
            2 cm; 0.2 rad was the whole half-stroke).
        velocity_fraction: fraction of the URDF velocity limit the motion may reach, in (0, 1].
        acceleration_limit: (J,) acceleration bound [rad/s²] (URDFs carry none).
        amplitude: (J,) largest excursion from the centre [rad] (> 0), before limit scaling.
        hold_fraction: target fraction of time each joint holds still, in [0, 1).
        slow_fraction: target fraction of time each joint creeps slowly, in [0, 1); hold + slow < 1.
        slow_rate: phase rate during slow phases, in (0, 1) (1 = full speed).
        move_duration: mean length of a moving phase [s] (> 0).
        transition: length of the smooth (quintic smoothstep) change of phase rate [s] (> 0).
        lead_in: initial hold before motion starts [s] (>= 0).
        end_at_rest: the motion comes to rest over the last ``transition`` (:func:`generate_excitation`); false
            reproduces the trajectories recorded before it (their last point keeps the series' state).
        sample_period: period of the generated points [s] (> 0).
        effort_fraction: the largest share of each effort limit (``effort_limit``) the motion's rigid-body torque
            (with the URDF friction) may take, in [0, 1]; the rest is left to the feedback, the rotor inertia and
            the friction the URDF does not carry: the load-dependent friction of geared drives (the simulator's
            geared_desktop_arm: up to 0.234 N·m per N·m transmitted, near rest) alone turns a 0.7 share into about
            0.9, hence 0.6. 0 switches the effort fit off.
        effort_limit: (J,) the actuators' effort limits the fit keeps to [N·m]; empty (the default): the URDF's
            (:meth:`~deadzone_id_ros.robot.RobotDescription.effort_limits`; a robot profile gives its own).
        locked_joints: ``"urdf_joint=value"`` entries: where the URDF joints outside ``joint_names`` are locked in
            the rigid body of the effort fit (a robot profile's ``locked``; the rest at 0).
    """

    joint_names: tuple[str, ...] = field(kw_only=True)
    urdf_path: str = ""
    duration: float = 60.0
    seed: int = 0
    base_frequency: float = 0.1
    harmonics: int = 5
    center: tuple[float, ...] = field(kw_only=True)
    center_from_start: bool = True
    position_margin: float = 0.2
    prismatic_margin_fraction: float = PRISMATIC_MARGIN_FRACTION
    velocity_fraction: float = 0.6
    acceleration_limit: tuple[float, ...] = field(kw_only=True)
    amplitude: tuple[float, ...] = field(kw_only=True)
    hold_fraction: float = 0.15
    slow_fraction: float = 0.15
    slow_rate: float = 0.05
    move_duration: float = 2.0
    transition: float = 0.3
    lead_in: float = 0.5
    end_at_rest: bool = True
    sample_period: float = 0.01
    effort_fraction: float = 0.6
    effort_limit: tuple[float, ...] = ()
    locked_joints: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        n = check_joint_names(self.joint_names)
        for name in ("duration", "base_frequency", "move_duration", "transition", "sample_period"):
            check_positive(name, getattr(self, name))
        check_positive("harmonics", self.harmonics, integer=True)
        if not isinstance(self.seed, int):
            raise ValueError(f"seed = {self.seed!r} must be an integer")
        check_per_joint("center", self.center, n, sign="any")
        if not isinstance(self.center_from_start, bool):
            raise ValueError(f"center_from_start = {self.center_from_start!r} must be true or false")
        check_per_joint("acceleration_limit", self.acceleration_limit, n)
        check_per_joint("amplitude", self.amplitude, n)
        check_positive("position_margin", self.position_margin, allow_zero=True)
        if not (isinstance(self.prismatic_margin_fraction, (int, float)) and 0 <= self.prismatic_margin_fraction < 0.5):
            raise ValueError(f"prismatic_margin_fraction = {self.prismatic_margin_fraction!r} must be in [0, 0.5)")
        if not (isinstance(self.velocity_fraction, (int, float)) and 0 < self.velocity_fraction <= 1):
            raise ValueError(f"velocity_fraction = {self.velocity_fraction!r} must be in (0, 1]")
        for name in ("hold_fraction", "slow_fraction"):
            v = getattr(self, name)
            if not (isinstance(v, (int, float)) and 0 <= v < 1):
                raise ValueError(f"{name} = {v!r} must be in [0, 1)")
        if self.hold_fraction + self.slow_fraction >= 0.95:
            raise ValueError(
                f"hold_fraction + slow_fraction = {self.hold_fraction + self.slow_fraction} leaves too little "
                "motion (< 0.95 needed)"
            )
        if not (isinstance(self.slow_rate, (int, float)) and 0 < self.slow_rate < 1):
            raise ValueError(f"slow_rate = {self.slow_rate!r} must be in (0, 1)")
        check_positive("lead_in", self.lead_in, allow_zero=True)
        if not isinstance(self.end_at_rest, bool):
            raise ValueError(f"end_at_rest = {self.end_at_rest!r} must be true or false")
        if not (isinstance(self.effort_fraction, (int, float)) and 0 <= self.effort_fraction <= 1):
            raise ValueError(f"effort_fraction = {self.effort_fraction!r} must be in [0, 1]")
        if self.effort_limit:
            check_per_joint("effort_limit", self.effort_limit, n)
        locked_positions(self.locked_joints)
        if self.sample_period > self.transition / 3:
            raise ValueError(f"sample_period = {self.sample_period} must be <= transition/3 = {self.transition / 3}")


def _smoothstep(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Quintic smoothstep s(x) = 6x^5 - 15x^4 + 10x^3 on [0, 1] and ds/dx (C2 at both ends)."""
    x = np.clip(x, 0.0, 1.0)
    return x**3 * (x * (6 * x - 15) + 10), 30 * x**2 * (x - 1) ** 2


def _phase_rate(rng: np.random.Generator, t: np.ndarray, cfg: ExcitationConfig) -> tuple[np.ndarray, np.ndarray]:
    """Phase rate r(t) in [0, 1] and dr/dt [1/s] on the grid ``t`` for one joint: move/hold/slow phases."""
    other = cfg.hold_fraction + cfg.slow_fraction
    other_mean = cfg.move_duration * other / (1.0 - other) if other > 0 else 0.0
    p_hold = cfg.hold_fraction / other if other > 0 else 0.0
    knots: list[tuple[float, float]] = [(0.0, 0.0), (cfg.lead_in, 0.0)]  # (segment start, rate)
    tk = cfg.lead_in
    # Random phase offset so that joints do not hold at the same instants.
    first_move = cfg.move_duration * rng.uniform(0.2, 1.0)
    knots.append((tk, 1.0))
    tk += first_move
    while tk < t[-1] + cfg.move_duration:
        if other > 0:
            rate = 0.0 if rng.uniform() < p_hold else cfg.slow_rate
            knots.append((tk, rate))
            tk += max(other_mean * rng.uniform(0.5, 1.5), 2 * cfg.transition)
        knots.append((tk, 1.0))
        tk += max(cfg.move_duration * rng.uniform(0.5, 1.5), 2 * cfg.transition)
    starts = np.array([k[0] for k in knots])
    rates = np.array([k[1] for k in knots])
    idx = np.searchsorted(starts, t, side="right") - 1
    prev = np.where(idx > 0, rates[np.maximum(idx - 1, 0)], rates[0])
    s, ds = _smoothstep((t - starts[idx]) / cfg.transition)
    r = prev + (rates[idx] - prev) * s
    dr = (rates[idx] - prev) * ds / cfg.transition
    # lead-out: the rate times a window w that falls from 1 to 0 over the last transition (quintic, so w and dw are 0
    # at the end): the trajectory ends at rest (dq = ddq = 0) instead of stopping a moving joint at once when the
    # samplers hold its last position; the draws above are unchanged, and a short run keeps its motion
    if not cfg.end_at_rest:
        return r, dr
    w, dw = _smoothstep((float(t[-1]) - t) / cfg.transition)
    return r * w, dr * w - r * dw / cfg.transition


def _excitation_center(config: ExcitationConfig, lo: np.ndarray, hi: np.ndarray,
                       start: Sequence[float] | None) -> np.ndarray:
    """(J,) centre c of the excitation [rad]: ``start`` moved inside [lo, hi] when ``config.center_from_start``, else
    ``config.center``.

    Raises:
        ValueError: ``start`` has the wrong length.
        ConfigError: the centre lies outside (lo, hi) (joints named).
    """
    n = len(lo)
    if config.center_from_start and start is not None:
        start_arr = np.asarray(start, dtype=float)
        if start_arr.shape != (n,):
            raise ValueError(f"start must have {n} values (joints {list(config.joint_names)}), got {start_arr.shape}")
        # A start outside the usable range (an arm resting on a limit) is centred just inside it instead.
        inset = 0.05 * np.maximum(hi - lo, 0.0)
        center = np.clip(start_arr, lo + inset, hi - inset)
    else:
        center = np.asarray(config.center, dtype=float)
    bad = [config.joint_names[j] for j in range(n) if not lo[j] < center[j] < hi[j]]
    if bad:
        raise ConfigError(
            f"center {center.tolist()} is outside the position limits minus position_margin={config.position_margin} "
            f"rad (prismatic joints: prismatic_margin_fraction={config.prismatic_margin_fraction} of the stroke) "
            f"for joint(s) {bad}"
        )
    return center


def generate_excitation(
    config: ExcitationConfig, start: Sequence[float] | None = None, *, t0: float = 0.0
) -> TrajectoryPoints:
    """Generate a seeded excitation trajectory within the URDF limits.

    q_j(t) = c_j + s_j F_j(phi_j(t)), F_j(phi) = sum_k a_jk sin(k w phi) + b_jk (cos(k w phi) - 1), w = 2 pi f0, with
    phi_j' = r_j(t) in [0, 1] switching smoothly between moving (1), holding (0) and slow (``slow_rate``) phases, and
    the scale s_j the largest that keeps q within [lower + margin, upper - margin], |dq| <= velocity_fraction *
    velocity limit, |ddq| <= acceleration_limit and |q - c| <= amplitude. dq and ddq are exact derivatives
    (dq = s F'(phi) r, ddq = s (F''(phi) r^2 + F'(phi) r')). Every joint starts at rest at c_j
    (``lead_in`` hold) and ends at rest: r is multiplied by a window that falls smoothly from 1 to 0 over the last
    ``transition``, so the samplers' hold of the last position after it asks for no jump in velocity.

    Args:
        config: the excitation configuration (joint names, limits source, schedule, seed).
        start: (J,) start position [rad], the centre when ``config.center_from_start``; None: ``config.center``.
        t0: time of the first point [s].

    Returns:
        points every ``sample_period`` from t0 to t0 + duration with position, velocity and acceleration.

    Raises:
        FileNotFoundError: the URDF does not exist.
        RobotDescriptionError: the URDF lacks a configured joint.
        ValueError: ``start`` has the wrong length.
        ConfigError: ``config.center`` lies outside the limits minus the margin (joints named), or the gravity load
            of the centre pose alone needs more than ``effort_fraction`` of a joint's effort limit (joints and torques
            named). A ``start`` outside the limits is moved inside instead (5% of the usable range from the limit).
    """
    from ..resources import default_urdf
    from ..robot import load_robot_description

    desc = load_robot_description(config.urdf_path or default_urdf(), config.joint_names)
    n = desc.n_joints
    margin = position_margins(desc, config.position_margin, config.prismatic_margin_fraction)
    lo, hi = desc.lower + margin, desc.upper - margin
    if np.any(desc.continuous):  # no position limit: one turn around the start (or the configured centre)
        ref = np.asarray(start if config.center_from_start and start is not None else config.center, dtype=float)
        if ref.shape == lo.shape:
            lo = np.where(desc.continuous, ref - np.pi, lo)
            hi = np.where(desc.continuous, ref + np.pi, hi)
    center = _excitation_center(config, lo, hi, start)
    rng = np.random.default_rng(config.seed)
    t = np.arange(0.0, config.duration + 0.5 * config.sample_period, config.sample_period)
    # Fine grid for the phase integral (trapezoid), exact enough for the sample points taken from it.
    sub = 10
    tf = np.linspace(0.0, t[-1], (len(t) - 1) * sub + 1)
    w = 2 * np.pi * config.base_frequency
    k = np.arange(1, config.harmonics + 1)
    q = np.empty((len(t), n))
    dq = np.empty((len(t), n))
    ddq = np.empty((len(t), n))
    for j in range(n):
        a = rng.standard_normal(config.harmonics) / k
        b = rng.standard_normal(config.harmonics) / k
        r_f, dr_f = _phase_rate(rng, tf, config)
        phi_f = np.concatenate([[0.0], np.cumsum(0.5 * (r_f[1:] + r_f[:-1]) * np.diff(tf))])
        phi, r, dr = phi_f[::sub], r_f[::sub], dr_f[::sub]
        arg = np.outer(phi, k * w)
        f = np.sin(arg) @ a + (np.cos(arg) - 1.0) @ b
        df = (np.cos(arg) * (k * w)) @ a - (np.sin(arg) * (k * w)) @ b
        ddf = -(np.sin(arg) * (k * w) ** 2) @ a - (np.cos(arg) * (k * w) ** 2) @ b
        v = df * r
        acc = ddf * r**2 + df * dr
        scales = [config.amplitude[j] / max(np.max(np.abs(f)), 1e-12)]
        if np.max(f) > 0:
            scales.append((hi[j] - center[j]) / np.max(f))
        if np.min(f) < 0:
            scales.append((center[j] - lo[j]) / -np.min(f))
        scales.append(config.velocity_fraction * desc.velocity_limit[j] / max(np.max(np.abs(v)), 1e-12))
        scales.append(config.acceleration_limit[j] / max(np.max(np.abs(acc)), 1e-12))
        s = min(scales)
        q[:, j] = center[j] + s * f
        dq[:, j] = s * v
        ddq[:, j] = s * acc
    if config.effort_fraction > 0:
        q, dq, ddq = _fit_effort(config, desc, center, q, dq, ddq)
    return TrajectoryPoints(tuple(config.joint_names), t + t0, q, dq, ddq)


def _fit_effort(config: ExcitationConfig, desc, center: np.ndarray, q: np.ndarray, dq: np.ndarray,
                ddq: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(q, dq, ddq) with every joint's excursion about ``center`` shrunk by one common factor c in (0, 1], the largest
    (bisection, 1% of c) whose rigid-body torque with the URDF friction (the other URDF joints locked where
    ``config.locked_joints`` puts them) stays within ``effort_fraction`` of each effort limit (``config.effort_limit``,
    else the URDF's); unchanged when the motion already does. Arrays (K, J) [rad, rad/s, rad/s²].

    Raises:
        ConfigError: the centre pose held still needs more than that (gravity): names the joints and torques.
        RobotDescriptionError: ``config.effort_limit`` above the URDF's (names the joint and both values).
    """
    from ..models.runtime import NominalRigidBodyModel
    from ..resources import default_urdf

    model = NominalRigidBodyModel(config.urdf_path or default_urdf(), config.joint_names, friction=True,
                                  locked=locked_positions(config.locked_joints))
    limit = desc.effort_limits(config.effort_limit, "excitation effort_limit")
    bound = config.effort_fraction * limit

    def load(c: float) -> float:
        tau = model.predict(center + c * (q - center), c * dq, c * ddq)
        return float(np.max(np.max(np.abs(tau), axis=0) / bound))

    if load(1.0) <= 1.0:
        return q, dq, ddq
    static = np.abs(model.predict(center, np.zeros_like(center), np.zeros_like(center)))
    if np.any(static > bound):
        bad = [f"{config.joint_names[j]} {static[j]:.3g} N*m of {limit[j]:.3g}"
               for j in np.flatnonzero(static > bound)]
        raise ConfigError(f"the excitation's centre {np.round(center, 4).tolist()} needs more than effort_fraction = "
                          f"{config.effort_fraction:g} of the effort limit to hold against gravity at {bad}: choose a "
                          "home pose (robot profile) or centre with less gravity load")
    lo, hi = 0.0, 1.0
    while hi - lo > 0.01 * hi:
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if load(mid) <= 1.0 else (lo, mid)
    return center + lo * (q - center), lo * dq, lo * ddq
