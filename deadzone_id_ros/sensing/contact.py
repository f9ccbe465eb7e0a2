"""Dead-zone-aware intervals of the external torque and contact detection (core, no ROS).

Dead zone (Inami, Yamane, Sakaino, arXiv 2402.00393; :mod:`deadzone_id_ros.data.deadzone`): while joint j is stuck,
``|dq_j| <= threshold_j`` (alpha sigma_j), its static friction can be anything in [-tau_s,j, +tau_s,j], so a model
trained on free motion cannot say which value it takes, and the external torque on that joint is known only within
``estimate +- tau_s,j``. A moving joint has kinetic friction, which the model predicts: its estimate is exact (half
width 0). tau_s,j is the band the product identifies (:func:`deadzone_id_ros.models.losses.identify_band`: a quantile
of |residual| over the stuck samples of free motion), so the interval covers what free motion showed.

Contact: per joint, the excess ``|estimate_j| - half_width_j`` (the distance of the interval from zero) is compared
with a threshold. An interval that contains zero has excess <= 0 and never fires: static friction alone cannot raise
a contact. The threshold of each joint comes from held-out free motion (:func:`calibrate_thresholds`: a quantile of
the excess times a margin). A contact starts once some joint's excess has stayed above its threshold for ``confirm``
consecutive samples (its onset time is the stamp of the first of them; the flag rises ``confirm`` - 1 samples later)
and ends when every joint's excess has fallen below ``release`` times its threshold (hysteresis, so noise around the
threshold does not chatter the flag).

Why ``confirm`` (default :data:`CONFIRM_SAMPLES`): the thresholds are the largest excess of one calibration run
times a margin, and free motion the calibration did not show can still raise isolated one-sample peaks above them.
Measured (docs/sensing_results.md): every false contact of the corrected residual with the band on the Panda (5 in
0.4 simulated minutes, joint 1, while the arm vibrated at 10x its velocity-noise level during fast motion) was one
sample long, while a contact is a sustained torque. Requiring the excess on two consecutive samples removed all of
them and delays a detection by one sample (1 ms at 1 kHz). A persistence (minimum duration) condition on a residual
test is the usual guard against isolated noise peaks in fault and collision detection (M. Basseville, I. Nikiforov,
"Detection of Abrupt Changes", Prentice Hall 1993; S. Haddadin, A. De Luca, A. Albu-Schäffer, "Robot collisions: a
survey on detection, isolation, and identification", IEEE T-RO 33(6), 2017).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

__all__ = ["CONFIRM_SAMPLES", "ContactDetector", "ContactState", "StaticFrictionBand", "calibrate_band",
           "calibrate_thresholds"]

#: default number of consecutive samples an excess must stay above its threshold before a contact starts
CONFIRM_SAMPLES = 2


def _joint_vector(name: str, value: Sequence[float] | np.ndarray, n: int) -> np.ndarray:
    a = np.asarray(value, dtype=float)
    if a.shape != (n,) or not np.all(np.isfinite(a)) or np.any(a < 0):
        raise ValueError(f"{name} must be {n} finite values >= 0 (one per joint), got {np.asarray(value).tolist()}")
    return a


@dataclass(frozen=True)
class StaticFrictionBand:
    """Where each joint is stuck and how wide its static-friction band is.

    Attributes:
        joint_names: (J,).
        velocity_threshold: (J,) a joint with |dq| <= this is stuck [rad/s] (the dead zone's alpha sigma).
        half_width: (J,) tau_s [N·m]: the external torque of a stuck joint is known within +- this.
        fade_velocity: (J,) [rad/s] >= 0: a joint leaving its dead zone breaks away from static to kinetic friction
            along the Stribeck curve (Armstrong-Hélouvry, Dupont, Canudas de Wit, Automatica 30(7), 1994), so its
            friction is still uncertain just outside the zone: the half width there is
            ``tau_s exp(-(|dq| - threshold) / fade_velocity)``. 0 (default): exact as soon as it moves.
        load_gain: (J,) [1] >= 0: static friction that grows with the torque the gear transmits (Hamon, Gautier,
            Garrec, ICRA 2011; :mod:`.friction`): given the motor torque, the half width is ``tau_s + load_gain
            |tau_m|`` (faded likewise). None (default): ``tau_s`` at any load.

    Raises:
        ValueError: arrays not (J,) finite values >= 0.
    """

    joint_names: tuple[str, ...]
    velocity_threshold: np.ndarray
    half_width: np.ndarray
    fade_velocity: np.ndarray | None = None
    load_gain: np.ndarray | None = None
    # derived in __post_init__ for interval_half_width's every-sample path
    _fades: bool = field(init=False, repr=False, compare=False, default=False)
    _loads: bool = field(init=False, repr=False, compare=False, default=False)
    _fading: np.ndarray = field(init=False, repr=False, compare=False, default_factory=lambda: np.zeros(0))
    _inv_fade: np.ndarray = field(init=False, repr=False, compare=False, default_factory=lambda: np.zeros(0))

    def __post_init__(self) -> None:
        n = len(self.joint_names)
        object.__setattr__(self, "velocity_threshold", _joint_vector("velocity_threshold", self.velocity_threshold, n))
        object.__setattr__(self, "half_width", _joint_vector("half_width", self.half_width, n))
        fade = _joint_vector("fade_velocity", np.zeros(n) if self.fade_velocity is None else self.fade_velocity, n)
        object.__setattr__(self, "fade_velocity", fade)
        gain = _joint_vector("load_gain", np.zeros(n) if self.load_gain is None else self.load_gain, n)
        object.__setattr__(self, "load_gain", gain)
        fading = fade > 0
        object.__setattr__(self, "_fades", bool(fading.any()))
        object.__setattr__(self, "_loads", bool(np.any(gain > 0)))
        object.__setattr__(self, "_fading", fading.astype(float))  # 1 where the joint fades, else 0
        object.__setattr__(self, "_inv_fade", np.divide(1.0, fade, out=np.zeros(n), where=fading))

    def stuck(self, dq: np.ndarray) -> np.ndarray:
        """(J,) or (N, J) bool: True where |dq| [rad/s] is inside the dead zone."""
        return np.abs(np.asarray(dq, dtype=float)) <= self.velocity_threshold

    def interval_half_width(self, dq: np.ndarray, tau: np.ndarray | None = None) -> np.ndarray:
        """(J,) or (N, J) half width [N·m] of the external-torque interval: tau_s (+ load_gain |tau|, with the motor
        torque ``tau`` [N·m] of the same shape) where stuck, 0 where moving (or fading with ``fade_velocity``)."""
        speed = np.abs(np.asarray(dq, dtype=float))
        width = self.half_width
        if tau is not None and self._loads:
            width = width + self.load_gain * np.abs(np.asarray(tau, dtype=float))
        inside = speed <= self.velocity_threshold
        if not self._fades:
            return np.where(inside, width, 0.0)
        # exp(-(|dq| - threshold) / fade) outside the zone, in (0, 1] (the excess clipped at 0: no overflow), 0 on a
        # joint without fade (also at an infinite speed); a fifth of the masked division under np.errstate
        decay = np.exp(-np.maximum(speed - self.velocity_threshold, 0.0) * self._inv_fade)
        return width * np.where(inside, 1.0, np.where(self._fading > 0, decay, 0.0))

    @classmethod
    def none(cls, joint_names: Sequence[str]) -> StaticFrictionBand:
        """The band of an estimator that ignores the dead zone: every estimate exact."""
        z = np.zeros(len(joint_names))
        return cls(tuple(joint_names), z, z.copy())


def calibrate_band(estimate: np.ndarray, dq: np.ndarray, velocity_threshold: Sequence[float] | np.ndarray,
                   joint_names: Sequence[str], quantile: float = 0.999,
                   floor: Sequence[float] | np.ndarray | None = None,
                   fade_factors: Sequence[float] = (0.0,), threshold_quantile: float = 1.0,
                   margin: float = 1.5, tau: np.ndarray | None = None,
                   load_gain: Sequence[float] | np.ndarray | None = None) -> StaticFrictionBand:
    """The band from an estimator's output on free motion (no contact): on the stuck samples the estimate is the
    static friction the model could not know (plus noise); tau_s is its ``quantile`` per joint
    (:func:`deadzone_id_ros.models.losses.identify_band`), at least ``floor`` (e.g. the profile's static friction).

    The fade (:class:`StaticFrictionBand` ``fade_velocity``) is a trade: a wider fade covers more of the breakaway
    error, so the contact threshold these samples imply (:func:`calibrate_thresholds` with ``threshold_quantile``
    and ``margin``) drops, but every moving sample near the dead zone then carries a wider interval, which a contact
    must clear too. A contact torque on joint j at sample i is flagged once it exceeds about
    ``threshold_j + half_width_ij``; per joint the candidate with the smallest mean of that over the samples (the
    mean smallest detectable external torque on this free motion) is kept, the first (no fade, with the default
    candidates) on a tie.

    Args:
        estimate: (N, J) external-torque estimate on free motion [N·m].  dq: (N, J) measured velocity [rad/s].
        velocity_threshold: (J,) [rad/s].  joint_names: (J,).  quantile: in (0, 1].  floor: (J,) [N·m] or None.
        fade_factors: candidate fade velocities as multiples of each joint's velocity threshold (0: none).
        threshold_quantile, margin: the threshold rule the band will be used with (:func:`calibrate_thresholds`).
        tau: (N, J) motor torque [N·m] and load_gain: (J,) [1], both or neither: a load-dependent band
            (:class:`StaticFrictionBand`); tau_s is then fitted to what the load part leaves, ``|estimate| -
            load_gain |tau|``.

    Raises:
        ValueError: shapes differ, quantile or margin out of range, non-finite values, no candidate.
    """
    from ..models.losses import identify_band

    if not fade_factors:
        raise ValueError("fade_factors must hold at least one candidate (0: no fade)")
    if (tau is None) != (load_gain is None):
        raise ValueError("tau and load_gain come together (a load-dependent band) or not at all")
    thr = np.asarray(velocity_threshold, dtype=float)
    moving = np.abs(np.asarray(dq, dtype=float)) > thr
    est = np.asarray(estimate, dtype=float)
    gain = None if load_gain is None else np.asarray(load_gain, dtype=float)
    unloaded = est if gain is None else np.maximum(np.abs(est) - gain * np.abs(np.asarray(tau, dtype=float)), 0.0)
    tau_s = identify_band(unloaded, moving, None if floor is None else np.asarray(floor, float), quantile)
    names = tuple(joint_names)
    best = np.zeros(len(names))
    best_cost = np.full(len(names), np.inf)
    for factor in fade_factors:
        band = StaticFrictionBand(names, thr, tau_s, np.asarray(factor, float) * thr, gain)
        half = band.interval_half_width(dq, tau)
        cost = calibrate_thresholds(estimate, half, threshold_quantile, margin) + half.mean(axis=0)
        better = cost < best_cost - 1e-12
        best = np.where(better, factor * thr, best)
        best_cost = np.where(better, cost, best_cost)
    return StaticFrictionBand(names, thr, tau_s, best, gain)


def calibrate_thresholds(estimate: np.ndarray, half_width: np.ndarray, quantile: float = 1.0,
                         margin: float = 1.5, minimum: float = 1e-6) -> np.ndarray:
    """Per-joint contact thresholds (J,) [N·m] from held-out free motion: ``margin`` times the ``quantile`` of the
    excess ``|estimate| - half_width`` over the samples (at least ``minimum``).

    With quantile 1 (the default) and margin 1.5, no sample of the calibration data comes within a third of the
    threshold, so free motion like it raises no contact; a lower quantile trades false alarms for sensitivity.

    Args:
        estimate: (N, J) [N·m].  half_width: (N, J) interval half widths [N·m] (zeros: an estimator without band).
        quantile: in (0, 1].  margin: >= 1.  minimum: > 0 [N·m].

    Raises:
        ValueError: shapes differ or N = 0, quantile or margin out of range.
    """
    est, hw = np.asarray(estimate, dtype=float), np.asarray(half_width, dtype=float)
    if est.ndim != 2 or est.shape != hw.shape or est.shape[0] == 0:
        raise ValueError(f"estimate {est.shape} and half_width {hw.shape} must be the same (N, J), N > 0")
    if not 0.0 < quantile <= 1.0:
        raise ValueError(f"quantile = {quantile} must be in (0, 1]")
    if not margin >= 1.0:
        raise ValueError(f"margin = {margin} must be >= 1")
    excess = np.abs(est) - hw
    return np.maximum(margin * np.quantile(excess, quantile, axis=0), minimum)


@dataclass(frozen=True)
class ContactState:
    """The detector's answer at one tick.

    Attributes:
        in_contact: the contact flag.  onset_t: stamp of the tick the current contact started [s] (None: no contact).
        joints: (J,) bool, the joints whose excess is above their threshold now.
        excess: (J,) |estimate| - half_width [N·m] (<= 0: the interval contains zero).
    """

    in_contact: bool
    onset_t: float | None
    joints: np.ndarray
    excess: np.ndarray


class ContactDetector:
    """Contact flag with onset time and hysteresis on the interval test (module docstring).

    Args:
        threshold: (J,) [N·m] > 0.  release: in (0, 1]: the contact ends when every excess < release * threshold.
        confirm: >= 1, the consecutive samples with some excess above its threshold that start a contact (1: the
            first such sample).

    Raises:
        ValueError: threshold not > 0, release or confirm out of range.
    """

    def __init__(self, threshold: Sequence[float] | np.ndarray, release: float = 0.5,
                 confirm: int = CONFIRM_SAMPLES) -> None:
        thr = np.asarray(threshold, dtype=float)
        if thr.ndim != 1 or not np.all(thr > 0) or not np.all(np.isfinite(thr)):
            raise ValueError(f"threshold must be (J,) finite values > 0 [N·m], got {thr.tolist()}")
        if not 0.0 < release <= 1.0:
            raise ValueError(f"release = {release} must be in (0, 1]")
        if isinstance(confirm, bool) or int(confirm) != confirm or confirm < 1:
            raise ValueError(f"confirm = {confirm!r} must be a whole number of samples >= 1")
        self.threshold = thr
        self.release = float(release)
        self.confirm = int(confirm)
        self.in_contact = False
        self.onset_t: float | None = None
        self._run = 0  # consecutive samples above threshold, not yet a contact
        self._run_t: float | None = None  # stamp of the first of them

    def reset(self) -> None:
        """No contact."""
        self.in_contact, self.onset_t = False, None
        self._run, self._run_t = 0, None

    def update(self, t: float, estimate: np.ndarray, half_width: np.ndarray) -> ContactState:
        """The state after the tick at ``t`` [s] with ``estimate`` and ``half_width`` (J,) [N·m]."""
        excess = np.abs(estimate) - half_width
        above = excess > self.threshold
        if self.in_contact:
            if np.all(excess < self.release * self.threshold):
                self.in_contact, self.onset_t = False, None
        elif above.any():
            if self._run == 0:
                self._run_t = float(t)
            self._run += 1
            if self._run >= self.confirm:
                self.in_contact, self.onset_t = True, self._run_t
                self._run, self._run_t = 0, None
        else:
            self._run, self._run_t = 0, None
        return ContactState(self.in_contact, self.onset_t, above, excess)
