"""The discrete disturbance observer on an exactly simulated double integrator ``Jn ddq = tau - d(t)``.

The plant is integrated exactly for a piecewise-constant torque and a disturbance with a known integral, with a
jittered period (0.5-1.5 ms), so any error comes from the observer, not from the simulation.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from deadzone_id_ros.control import DisturbanceObserver

JN = 0.05  # nominal = true inertia [kg m^2]
G = 200.0  # cutoff [rad/s]


def _run(d_mean, duration: float, seed: int = 0, discretization: str = "zoh"):
    """Simulate; d_mean(t0, t1) is the mean of d over [t0, t1]. Returns times and estimates."""
    rng = np.random.default_rng(seed)
    dob = DisturbanceObserver(np.array([G]), np.array([JN]), discretization)
    t, dq = 0.0, np.zeros(1)
    tau = np.zeros(1)
    dob.update(0.0, dq, tau, np.zeros(1))
    ts, est, dts = [], [], []
    while t < duration:
        dt = rng.uniform(0.5e-3, 1.5e-3)
        tau = np.array([0.3 * math.sin(7.0 * t)])  # any known, held input
        dq = dq + (tau - d_mean(t, t + dt)) * dt / JN  # exact for a held tau
        t += dt
        ts.append(t)
        dts.append(dt)
        est.append(dob.update(dt, dq, tau, np.zeros(1))[0])
    return np.array(ts), np.array(est), np.array(dts)


def test_constant_disturbance_converges_at_the_cutoff_rate():
    d = 0.7
    ts, est, _ = _run(lambda t0, t1: d, 0.1)
    # Each interval's mean disturbance is recovered exactly from the samples (w_k = d), so the error after the
    # first update decays as exp(-g (t - t_1)) whatever the period jitter: tolerance = |d| exp(-g (t - t_1)).
    bound = abs(d) * np.exp(-G * (ts - ts[0])) * (1 + 1e-9) + 1e-12
    assert np.all(np.abs(est - d) <= bound)
    assert abs(est[-1] - d) < 1e-6 * d


def test_bilinear_discretization_also_converges():
    ts, est, _ = _run(lambda t0, t1: -0.4, 0.1, discretization="bilinear")
    assert abs(est[-1] + 0.4) < 1e-6


def test_sinusoidal_disturbance_within_the_lpf_bound():
    amp, w = 0.5, 2 * math.pi * 3.0

    def mean(t0, t1):
        return amp * (math.cos(w * t0) - math.cos(w * t1)) / (w * (t1 - t0))

    ts, est, dts = _run(mean, 1.0)
    steady = ts > 10.0 / G
    err = np.abs(est - amp * np.sin(w * ts))[steady]
    # Tolerance: the continuous LPF g/(s+g) misses |1 - H(jw)| = w / sqrt(w^2 + g^2) of the amplitude; the interval
    # mean and the hold add at most a delay of one period, w * dt_max of the amplitude.
    tol = amp * (w / math.hypot(w, G) + w * dts.max())
    assert err.max() <= tol
    # ... and the estimate is far better than ignoring the disturbance.
    assert err.max() < 0.2 * amp


def test_bad_arguments_are_rejected():
    with pytest.raises(ValueError, match="cutoff must be finite and > 0"):
        DisturbanceObserver(np.array([0.0]), np.array([1.0]))
    with pytest.raises(ValueError, match="discretization = 'euler'"):
        DisturbanceObserver(np.array([1.0]), np.array([1.0]), "euler")
    dob = DisturbanceObserver(np.array([1.0]), np.array([1.0]))
    dob.update(0.0, np.zeros(1), np.zeros(1), np.zeros(1))
    with pytest.raises(ValueError, match="dt = 0.0 must be finite and > 0"):
        dob.update(0.0, np.zeros(1), np.zeros(1), np.zeros(1))


def test_zoh_pole_follows_every_change_of_period():
    """The ZOH pole exp(-g dt) is cached per period: repeated, alternating and changed dts all give the estimates of
    the formula evaluated afresh each step (bit for bit)."""
    g, jn = np.array([150.0, 400.0]), np.array([0.05, 0.2])
    dob = DisturbanceObserver(g, jn)
    rng = np.random.default_rng(1)
    dq, est = rng.normal(size=2), np.zeros(2)
    dob.update(1e-3, dq, np.zeros(2), np.zeros(2))
    for dt in [1e-3, 1e-3, 2e-3, 1e-3, 5e-4, 5e-4, 1e-3, 3e-3]:
        dq_new, tau, h = rng.normal(size=2), rng.normal(size=2), rng.normal(size=2)
        w = tau - h - jn * (dq_new - dq) / dt
        a = np.exp(-g * dt)
        est = a * est + (1.0 - a) * w
        assert np.array_equal(dob.update(dt, dq_new, tau, h), est), dt
        dq = dq_new
