"""Compiled kernels of the simulator's hot path (core, no ROS): the per-physics-step arithmetic of
:class:`~deadzone_id_ros.sim.arm.SimArm` and :class:`~deadzone_id_ros.teleop.sim.OperatorHand` in a few numba calls.

On three joints a numpy call costs its fixed overhead (about half a microsecond), not its arithmetic; one kernel call
(about a microsecond with ten arrays) replaces four to eight of them. Each kernel evaluates the plain expressions of
:mod:`.geared` and the simulator element by element, operation by operation in the same order, in IEEE double
precision without fast-math (no reassociation, no fused multiply-add): every number is the one numpy gives. The
Stribeck curve calls the platform's ``exp`` and ``pow`` as the Python floats did before (see
:meth:`~deadzone_id_ros.sim.arm.SimArm._init_hot_path`).

All arrays are 1-D float64 of one length J (the arm's actuated joints) unless stated. Division by zero gives inf or
nan as in numpy (``error_model="numpy"``). The kernels are compiled for each new combination of argument types (a
few tenths of a second each) and cached on disk next to this module, or in numba's user-wide cache directory where
that is not writable; where no cache directory is writable they are compiled in every process. :func:`warm_up`, called
when a :class:`~deadzone_id_ros.sim.arm.SimArm` is built, loads them for the simulator's argument types.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from typing import TypeVar, cast

import numba
import numpy as np

__all__ = ["clip_finite", "geared_force", "geared_step", "hand_apply", "hand_remove", "measure_plain", "warm_up"]


_F = TypeVar("_F", bound=Callable[..., object])
_uncached: list[str] = []  # the kernels compiled without a disk cache


def _jit(fn: _F) -> _F:
    """``numba.njit(cache=True)`` of ``fn``, with numpy's floating-point errors (x / 0 is inf or nan, as in numpy, not
    ZeroDivisionError); without the cache where numba finds no writable cache directory (next to this module, else
    the user's cache directory, ``NUMBA_CACHE_DIR`` where set), with one warning per process."""
    try:
        return cast(_F, numba.njit(cache=True, error_model="numpy")(fn))
    except RuntimeError as e:  # numba: "cannot cache function ...: no locator available for file ..."
        if not _uncached:
            warnings.warn(f"the simulator's kernels are compiled in every process (a second or two), not cached: {e}; "
                          "set NUMBA_CACHE_DIR to a writable directory", RuntimeWarning, stacklevel=2)
        _uncached.append(fn.__name__)
        return cast(_F, numba.njit(cache=False, error_model="numpy")(fn))


@_jit
def clip_finite(tau: np.ndarray, low: np.ndarray, high: np.ndarray, out: np.ndarray) -> bool:
    """Clip ``tau`` [N·m] to [``low``, ``high``] into ``out``: ``minimum(maximum(tau, low), high)``, the numbers of
    numpy's for finite values.

    Returns:
        False, with ``out`` untouched, when ``tau`` has a non-finite value; True otherwise.
    """
    n = tau.shape[0]
    for j in range(n):
        if not math.isfinite(tau[j]):
            return False
    for j in range(n):
        x = tau[j]
        lo = low[j]
        if not x >= lo:
            x = lo
        hi = high[j]
        out[j] = x if x <= hi else hi
    return True


@_jit
def geared_force(applied: np.ndarray, qvel: np.ndarray, friction: np.ndarray, alpha: float, noise: np.ndarray,
                 budget: np.ndarray, force: np.ndarray, varies: bool) -> None:
    """One physics step's friction budget and applied force of a geared arm (:mod:`.geared`).

    Args:
        applied: the torque acting in this step [N·m] (clipped command).
        qvel: joint velocity v [rad/s].
        friction: (5, J) rows Fc, Kl, Fc r [N·m, 1, N·m], Kls [1], 1 / vs [s/rad].
        alpha: Stribeck exponent.
        noise: the step's torque noise [N·m].
        budget: out, F = (Fc + Kl |tau|) + s(v) (Fc r + Kls |tau|), s(v) = exp(-(|v| / vs)^alpha) [N·m]; written
            only when ``varies`` (else left as it is).
        force: out, tau + noise [N·m].
        varies: whether the budget depends on v or tau (some r, Kl or Kls nonzero).
    """
    n = applied.shape[0]
    if varies:
        for j in range(n):
            t = abs(applied[j])
            s = math.exp(-((abs(qvel[j]) * friction[4, j]) ** alpha))
            budget[j] = (friction[0, j] + friction[1, j] * t) + s * (friction[2, j] + friction[3, j] * t)
    for j in range(n):
        force[j] = applied[j] + noise[j]


@_jit
def geared_step(tau: np.ndarray, limits: np.ndarray, commanded: np.ndarray, applied: np.ndarray, qvel: np.ndarray,
                friction: np.ndarray, alpha: float, noise: np.ndarray, budget: np.ndarray, force: np.ndarray,
                varies: bool) -> bool:
    """:func:`clip_finite` of ``tau`` to ``limits`` ((2, J): low, high [N·m]) into ``commanded``, then
    :func:`geared_force` of ``applied`` (the torque acting in this step: ``commanded`` itself without actuation
    delay, else the command of d steps ago) into ``budget`` and ``force``: one physics step's inputs in one call.

    Returns:
        False, with no output touched, when ``tau`` has a non-finite value; True otherwise.
    """
    if not clip_finite(tau, limits[0], limits[1], commanded):
        return False
    geared_force(applied, qvel, friction, alpha, noise, budget, force, varies)
    return True


@_jit
def measure_plain(qpos: np.ndarray, qvel: np.ndarray, resolution: np.ndarray, noise: np.ndarray, applied: np.ndarray,
                  q: np.ndarray, dq: np.ndarray, effort: np.ndarray) -> None:
    """What the encoders and the drive report of the current state, into ``q``, ``dq`` and ``effort`` (out):
    q = rint(qpos / resolution) * resolution [rad] (every resolution > 0), dq = qvel + noise [rad/s] and
    effort = applied [N·m]."""
    for j in range(qpos.shape[0]):
        q[j] = np.rint(qpos[j] / resolution[j]) * resolution[j]
        dq[j] = qvel[j] + noise[j]
        effort[j] = applied[j]


@_jit
def hand_apply(reference: np.ndarray, q: np.ndarray, dq: np.ndarray, stiffness: np.ndarray, damping: np.ndarray,
               qfrc: np.ndarray, hand: np.ndarray) -> None:
    """The operator's hand torque ``hand`` = K (r - q) - D dq [N·m] (out) from the reference r and q [rad], dq
    [rad/s], K [N·m/rad], D [N·m·s/rad], added in place to ``qfrc`` (the arm's entries of MuJoCo's applied force)."""
    for j in range(q.shape[0]):
        h = stiffness[j] * (reference[j] - q[j]) - damping[j] * dq[j]
        hand[j] = h
        qfrc[j] = qfrc[j] + h


@_jit
def hand_remove(qfrc: np.ndarray, hand: np.ndarray, other: np.ndarray, true: np.ndarray) -> None:
    """After the step: ``hand`` [N·m] subtracted in place from ``qfrc``, and ``true`` (out) = ``other`` + ``hand``,
    the arm's true external torque (``other``: that of the pushes and the contact) [N·m]."""
    for j in range(hand.shape[0]):
        qfrc[j] = qfrc[j] - hand[j]
        true[j] = other[j] + hand[j]


_warm: list[bool] = []  # [True] once warm_up ran in this process


def warm_up() -> None:
    """Load every kernel for the argument types of the simulator's calls (from the cache, else compile it), once per
    process: numba's start-up on the first call (0.4 to 0.6 s) then happens here, where
    :class:`~deadzone_id_ros.sim.arm.SimArm` is built, not in the first physics step (a real-time loop would be late
    by that much)."""
    if _warm:
        return
    x, noise = np.ones(1), np.ones(1)  # writable arrays; the noise rows (and the zero true torque) are read-only
    noise.flags.writeable = False
    limits, friction = np.ones((2, 1)), np.ones((5, 1))
    clip_finite(x, x, x, x)
    geared_force(x, x, friction, 1.0, noise, x, x, True)
    geared_step(x, limits, x, x, x, friction, 1.0, noise, x, x, True)
    measure_plain(x, x, x, noise, x, x, x, x)
    hand_apply(x, x, x, x, x, x, x)
    hand_remove(x, x, noise, x)
    _warm.append(True)
