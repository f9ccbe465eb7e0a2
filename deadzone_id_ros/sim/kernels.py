"""Compiled kernels of the simulator's hot path (core, no ROS): the per-physics-step arithmetic of
:class:`~deadzone_id_ros.sim.arm.SimArm` and :class:`~deadzone_id_ros.teleop.sim.OperatorHand` in a few numba calls.

On three joints a numpy call costs its fixed overhead, not its arithmetic; one kernel call replaces four to eight of
them (docs/teleoperation.md, "Simulator speed", measures both). Each kernel evaluates the plain expressions of
:mod:`.geared` and the simulator element by element, operation by operation in the same order, in IEEE double
precision without fast-math (no reassociation, no fused multiply-add): every number is the one numpy gives. The
Stribeck curve calls the platform's ``exp`` and ``pow`` as the Python floats did before (see
:meth:`~deadzone_id_ros.sim.arm.SimArm._init_hot_path`).

All arrays are 1-D float64 of one length J (the arm's actuated joints) unless stated. Division by zero gives inf or
nan as in numpy (``error_model="numpy"``). The kernels are compiled for each new combination of argument types (layout,
writability) and cached on disk next to this module, or in numba's user-wide cache directory where
that is not writable; where no cache directory is writable they are compiled in every process. :func:`warm_up`, called
when a :class:`~deadzone_id_ros.sim.arm.SimArm` is built, loads them for the simulator's argument types.
"""

from __future__ import annotations

import math
import os
import warnings
from collections.abc import Callable
from typing import TypeVar, cast

# numba would call Intel's SVML for exp and pow where icc_rt is installed (vectorized, last bits may differ from
# numpy's): the kernels promise numpy's numbers, so not unless the environment asks for it
os.environ.setdefault("NUMBA_DISABLE_INTEL_SVML", "1")

import numba  # noqa: E402 - after the setting above
import numpy as np  # noqa: E402

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
            warnings.warn(f"the simulator's kernels are compiled in every process, not cached: {e}; "
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
    if low.shape[0] != n or high.shape[0] != n or out.shape[0] != n:
        raise ValueError("clip_finite: tau, low, high and out must have one length")
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
    if (qvel.shape[0] != n or friction.shape[0] != 5 or friction.shape[1] != n or noise.shape[0] != n
            or budget.shape[0] != n or force.shape[0] != n):
        raise ValueError("geared_force: applied, qvel, noise, budget, force and the rows of friction (5, J) must have "
                         "one length J")
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
    if limits.shape[0] != 2 or applied.shape[0] != commanded.shape[0]:
        raise ValueError("geared_step: limits must be (2, J) and applied as long as commanded")
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
    n = qpos.shape[0]
    if (qvel.shape[0] != n or resolution.shape[0] != n or noise.shape[0] != n or applied.shape[0] != n
            or q.shape[0] != n or dq.shape[0] != n or effort.shape[0] != n):
        raise ValueError("measure_plain: every array must have one length")
    for j in range(n):
        q[j] = np.rint(qpos[j] / resolution[j]) * resolution[j]
        dq[j] = qvel[j] + noise[j]
        effort[j] = applied[j]


@_jit
def hand_apply(reference: np.ndarray, q: np.ndarray, dq: np.ndarray, stiffness: np.ndarray, damping: np.ndarray,
               qfrc: np.ndarray, hand: np.ndarray) -> None:
    """The operator's hand torque ``hand`` = K (r - q) - D dq [N·m] (out) from the reference r and q [rad], dq
    [rad/s], K [N·m/rad], D [N·m·s/rad], added in place to ``qfrc`` (the arm's entries of MuJoCo's applied force)."""
    n = q.shape[0]
    if (reference.shape[0] != n or dq.shape[0] != n or stiffness.shape[0] != n or damping.shape[0] != n
            or qfrc.shape[0] != n or hand.shape[0] != n):
        raise ValueError("hand_apply: every array must have one length")
    for j in range(n):
        h = stiffness[j] * (reference[j] - q[j]) - damping[j] * dq[j]
        hand[j] = h
        qfrc[j] = qfrc[j] + h


@_jit
def hand_remove(qfrc: np.ndarray, hand: np.ndarray, other: np.ndarray, true: np.ndarray) -> None:
    """After the step: ``hand`` [N·m] subtracted in place from ``qfrc``, and ``true`` (out) = ``other`` + ``hand``,
    the arm's true external torque (``other``: that of the pushes and the contact) [N·m]."""
    n = hand.shape[0]
    if qfrc.shape[0] != n or other.shape[0] != n or true.shape[0] != n:
        raise ValueError("hand_remove: every array must have one length")
    for j in range(n):
        qfrc[j] = qfrc[j] - hand[j]
        true[j] = other[j] + hand[j]


_warm: list[bool] = []  # [True] once warm_up ran in this process


def warm_up() -> None:
    """Load every kernel for the argument types of the simulator's calls (from the cache, else compile it), once per
    process: numba's start-up on the first call (docs/teleoperation.md, "Simulator speed", measures it) then happens
    here, where :class:`~deadzone_id_ros.sim.arm.SimArm` is built, not in the first physics step (a real-time loop
    would be late by that much). The argument types: 1-D float64, C-contiguous, each input writable or read-only."""
    if _warm:
        return
    x, ro = np.ones(1), np.ones(1)  # a writable and a read-only C-contiguous array (the noise rows are read-only)
    ro.flags.writeable = False
    limits, friction = np.ones((2, 1)), np.ones((5, 1))
    for tau in (x, ro):  # a command may be either (the callers make it C-contiguous)
        clip_finite(tau, x, x, x)
        geared_step(tau, limits, x, x, x, friction, 1.0, ro, x, x, True)
    geared_force(x, x, friction, 1.0, ro, x, x, True)
    measure_plain(x, x, x, ro, x, x, x, x)
    for v in (x, ro):  # a reference of either kind; the true torque of pushes and contact (writable) or none
        hand_apply(v, x, x, x, x, x, x)
        hand_remove(x, x, v, x)
    _warm.append(True)
