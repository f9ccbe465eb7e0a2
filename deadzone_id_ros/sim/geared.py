"""Effects of real geared joints on the simulated arm: Stribeck and load-dependent friction, torque ripple, delays.

Friction (per joint j; v: joint velocity [rad/s], tau_t: torque the gear transmits [N·m], here the applied motor
torque |tau_applied|):

    s(v)      = exp(-(|v| / vs)^alpha)                                   (Stribeck curve, 1 at rest, -> 0 moving)
    F(v, tau) = Fc + Kl |tau_t| + s(v) (Fc * r + Kls |tau_t|)            [N·m]
    Fc        = Fs / (1 + r)                                             (Fs: static friction at no load)

F is the friction *budget*: MuJoCo's ``frictionloss`` constraint of the joint is set to F before every physics step,
so a joint at rest stays stuck while the other torques stay inside [-F, F] (true stiction, not a smooth force) and a
moving joint feels F sign(v) opposing the motion; viscous friction ``damping * v`` is MuJoCo's joint damping. This is
model M4 ("Stribeck + load-dependent") of

    M. Duclusaud, G. Passault, V. Padois, O. Ly, "Extended Friction Models for the Physics Simulation of Servo
    Actuators", arXiv:2410.08650, 2024 (code and identified parameters: github.com/Rhoban/bam),

which identifies exactly this friction budget on Dynamixel/Feetech servos and applies it in MuJoCo the same way. The
Stribeck form goes back to the survey of B. Armstrong-Hélouvry, P. Dupont, C. Canudas de Wit, "A survey of models,
analysis tools and compensation methods for the control of machines with friction", Automatica 30(7), 1994; the
Coulomb law that dry friction grows with the transmitted load, applied to robot joints, to P. Hamon, M. Gautier,
P. Garrec, "New dry friction model with load- and velocity-dependence and dynamic identification of multi-DOF robots",
ICRA 2011, and A. C. Bittencourt, E. Wernholt, S. Sander-Tavallaey, T. Brogårdh, "An extended friction model to
capture load and temperature effects in robot joints", IROS 2010.

Default values (profile "geared_desktop_arm") are the M4 fit of the Dynamixel MX-64 geared servo in the BAM
repository (bam/params/mx64/m4.json): friction_base Kc = 0.0615 N·m, friction_stribeck Kcs = 0.0239 N·m,
load_friction_base ~ 0, load_friction_stribeck Kls = 0.234, dtheta_stribeck vs = 1.52 rad/s, alpha = 1.33.
Scaling to this arm: the absolute friction level is the arm's own (the URDF's static friction Fs = Fc + Kcs at no
load), and the source's shape is kept through its dimensionless numbers: r = Kcs / Kc = 0.388, Kl = 0,
Kls = 0.234 N·m per N·m, vs = 1.52 rad/s and alpha = 1.33 unchanged (the MX-64 is a desktop-scale servo with output
speeds of the same order as this arm's 3 rad/s limit).

Torque ripple (one model; unmeasured, acts on the arm): tau_r = A sin(n q) + w, w ~ N(0, torque_noise_std²) white
per physics step. The position-periodic part A sin(n q) (cogging / gear-mesh ripple; A [N·m], n periods per radian
of joint travel) is the first term of the Fourier series in joint position by which geared transmissions are
modelled: T. D. Tuttle, W. P. Seering, "A nonlinear model of a harmonic drive gear transmission", IEEE Trans.
Robotics and Automation 12(3), 1996, measured kinematic error at frequencies tied to the wave-generator rotation and
friction that varies periodically with rotation; F. H. Ghorbel, P. S. Gandhi, F. Alpeter, "On the kinematic error in
harmonic drive gears", ASME J. Mechanical Design 123(1), 2001, characterize that periodic error. Their amplitudes
belong to the harmonic drives of their test rigs, not to this arm's servos, and no source found gives one for a
desktop geared servo: A defaults to 0 (both profiles), an option to switch on (``ripple_amplitude``,
``ripple_cycles_per_rad``).

Delays: ``actuation_delay`` holds each command for that long before it acts (a FIFO on the physics-step grid);
``measurement_delay`` reports the state sampled that long ago (stamped now, as a broadcaster stamps at read time);
``velocity_filter_cutoff`` low-pass filters the measured velocity (first order, per physics step), as drives that
estimate velocity from encoder differences do. Default: one control period of actuation delay (1 ms at 1 kHz), the
read -> update -> write cycle of a ros2_control loop, where a command computed from the state read in one cycle
reaches the hardware with the next write; no measurement delay or filter. Measured with this package's default
pd_dob controller (DOB cutoff 150 rad/s, 10 s excitation, seed 1): a total loop delay of 2 ms (2 ms actuation, or
1 ms actuation + 1 ms measurement) drives joint1 into a limit cycle (tracking RMSE 6.9-7.8 mrad instead of 0.6 mrad,
about 3000 torque-rate-limit events), so the larger delays are there to study with a retuned controller, not the
default.
"""

from __future__ import annotations

import numpy as np

__all__ = ["friction_budget", "inverse_with_friction", "stribeck_curve"]


def stribeck_curve(dq: np.ndarray, velocity: np.ndarray, exponent: float) -> np.ndarray:
    """s(v) = exp(-(|v| / vs)^alpha): (..., J) from ``dq`` (..., J) [rad/s] and ``velocity`` vs (J,) [rad/s]."""
    return np.exp(-((np.abs(dq) / velocity) ** exponent))


def friction_budget(dq: np.ndarray, transmitted: np.ndarray, coulomb: np.ndarray, ratio: np.ndarray,
                    load: np.ndarray, load_stribeck: np.ndarray, velocity: np.ndarray, exponent: float) -> np.ndarray:
    """Friction budget F(v, tau_t) [N·m], shape of ``dq``.

    Args:
        dq: (..., J) joint velocity [rad/s].
        transmitted: (..., J) torque the gear transmits [N·m] (its magnitude is used).
        coulomb: (J,) kinetic friction Fc [N·m]; ratio: (J,) (Fs - Fc) / Fc; load, load_stribeck: (J,) Kl, Kls [1];
        velocity: (J,) Stribeck velocity [rad/s]; exponent: Stribeck exponent.
    """
    s = stribeck_curve(dq, velocity, exponent)
    t = np.abs(transmitted)
    return coulomb + load * t + s * (coulomb * ratio + load_stribeck * t)


def inverse_with_friction(base: np.ndarray, dq: np.ndarray, coulomb: np.ndarray, ratio: np.ndarray, load: np.ndarray,
                          load_stribeck: np.ndarray, velocity: np.ndarray, exponent: float) -> np.ndarray:
    """Torque tau (..., J) [N·m] that gives the motion when friction opposes it: tau = base + sign(v) F(v, |tau|).

    ``base`` (..., J) is everything but the dry friction (rigid body, viscous, minus the ripple). The load term makes
    the equation implicit; with k = Kl + Kls s(v) < 1 it has the closed form tau = c / (1 - sign(v) k sign(c)),
    c = base + sign(v) (Fc + Fc r s(v)). At v = 0 it returns ``base`` (the centre of the stuck joint's band).
    """
    s = stribeck_curve(dq, velocity, exponent)
    sign = np.sign(dq)
    c = base + sign * (coulomb + coulomb * ratio * s)
    k = load + load_stribeck * s
    return c / (1.0 - sign * k * np.sign(c))
