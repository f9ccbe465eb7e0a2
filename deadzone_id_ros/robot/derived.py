"""Everything a robot profile does not say, derived from its URDF (pinocchio), with the formulas used.

For each controlled joint j (the profile's ``overrides`` beat every derived value; ``settings`` beat the URDF):

- limits: position, velocity and effort limits from the URDF's ``<limit>``, looked up by joint name (a continuous
  joint has none on position); a joint whose effort limit is 0 or missing is refused (:meth:`RobotDescription.\
check_effort_limits`). The profile's ``effort_limit`` setting (the actuator's datasheet) beats the URDF's, and may
  only lower it (:meth:`RobotDescription.effort_limits`: one above the URDF's is refused, naming the joint and both
  values).
- encoder resolution: the profile's ``encoder_resolution`` setting [rad per count], else
  :data:`ENCODER_RESOLUTION` (16 bits per turn).
- friction and damping: the profile's ``frictionloss`` / ``damping`` settings, else the URDF's ``<dynamics>``.
- rotor inertia (armature): the profile's ``armature`` setting (the drive's reflected rotor inertia, which a URDF
  cannot carry); where it gives none, a default rule, not a measurement: ``armature_j = max(effort_limit_j /
  DRIVE_ACCELERATION, ARMATURE_FRACTION * max_q M_jj(q))``. A geared drive's torque limit and reflected rotor inertia
  grow together (gear ratio N: tau_max = N tau_m, J_r = N^2 J_m, so J_r / tau_max = N / (tau_m / J_m)); with N about
  100 and a motor that accelerates its own rotor at about 1e5 rad/s² this is 1 / DRIVE_ACCELERATION. It gives the
  Panda 0.087 / 0.012 kg·m² (MuJoCo Menagerie's model: 0.1 on every joint) and stays on the light side of hobby
  servos (the SO-101's STS3215: 0.028 kg·m² at 1.9 N·m). The second term keeps a joint with a tiny effort limit
  from a vanishing inertia. It bounds the simulated torque noise's acceleration too (below
  TORQUE_NOISE_FRACTION * DRIVE_ACCELERATION). ``robot show`` marks it ``[derived]`` with the rule.
- nominal joint inertia: ``Jn_j = M(q_home)[j, j] + armature_j``, the diagonal of the joint-space inertia matrix of
  the reduced model (locked joints merged into their parents) at the home pose, from pinocchio's composite rigid
  body algorithm (``pinocchio.crba``; R. Featherstone, "Rigid Body Dynamics Algorithms", Springer 2008, ch. 6), plus
  the armature.
- inertia spread: over :data:`~.inertia.INERTIA_SAMPLES` poses drawn uniformly within the limits (and the home
  pose), the largest eigenvalue kappa of ``diag(Jn) M(q)^-1`` (:func:`.inertia.inertia_spread`): how much lighter
  than their nominal inertia the decentralized joint loops can find the arm. Every loop gain is kappa times what it
  was designed for.
- loop delay and phase margin: ``T_d = actuation_delay + T / 2`` [s] (the profile's actuation delay, default one
  control period T = 1 / control_rate, plus the zero-order hold's half period); a loop ``L(s) = (w_c / s)
  exp(-s T_d)`` keeps a phase margin phi (:data:`PHASE_MARGIN_DEG`) while ``w_c <= w_max = (pi/2 - phi) / T_d``.
- gains for a closed-loop bandwidth w_j [rad/s] (the profile's per-joint ``bandwidth`` setting, else its
  ``bandwidth``, raised to ``sqrt(frictionloss_j / (Jn_j STICK_ERROR))`` where static friction dominates a light
  joint (the PD alone then breaks the friction away within :data:`STICK_ERROR`; the Talos wrist's URDF friction is a
  third of its effort limit on 0.013 kg·m² and tracked at 9.5 mrad, 19% of its reference, at 20 rad/s), capped at
  ``w_max / (2 zeta kappa)`` so that the velocity loop ``kd`` stays within ``w_max`` on the lightest arm) and
  damping ratio zeta: the acceleration-level PD ``ddq = ddq_ref + kp e + kd de`` of the computed-torque law gives
  the error dynamics ``s^2 + kd s + kp``, so ``kp = w^2`` [1/s²] and ``kd = 2 zeta w`` [1/s] (zeta = 1: critically
  damped).
- DOB cutoff: ``g_j = min(dob_cutoff_ratio * w_j, w_max / kappa, DOB_CAP_FRACTION * g_max)`` [rad/s]: the DOB's
  inner loop crosses over near ``kappa g`` on the lightest arm, so ``w_max / kappa`` keeps its phase margin; g_max is
  the Nyquist limit ``pi * control_rate`` (:func:`deadzone_id_ros.control.config.dob_cutoff_limit`, zoh). The URDF's
  viscous damping adds phase lead and is left out (the bound is conservative). Measured on the Panda (its profile's
  notes): kappa g = 1260 rad/s chatters, 840 rings, 420 is clean, against w_max = 524 rad/s at 1 ms + 0.5 ms.
- torque rate limit: ``effort_limit_j / torque_rise_time`` (the effort limit above) [N·m/s]: the command may sweep
  the full effort limit in that time.
- excitation: amplitude ``(upper - lower) / 2`` (pi for a continuous joint) [rad]; acceleration limit
  ``velocity_limit_j * 2 pi * EXCITATION_TOP_FREQUENCY`` [rad/s²] (the top harmonic of the default excitation,
  5 x 0.1 Hz, at the velocity limit).
- simulated noise, when the profile gives none: torque noise ``TORQUE_NOISE_FRACTION * effort_limit`` [N·m],
  velocity noise ``VELOCITY_NOISE_STD`` [rad/s] (the bundled arm's encoder-derived figure), each scaled down where it
  would shake a joint by more than ``NOISE_ACCELERATION_FRACTION`` of its excitation's acceleration limit: white
  torque noise reaches the joints through ``M(q)^-1``, velocity noise through the loops' ``Jn (kd + g)`` and then
  ``M(q)^-1`` (:func:`.inertia.noise_acceleration`, worst sampled pose; one scale for all joints, one velocity noise
  for all sensors). An arm with a slow excitation and light distal joints (the Kinova Jaco: 0.63 rad/s, 2 rad/s²)
  otherwise shook under its own sensor noise (the robot check's chatter) while tracking to 0.3 mrad; the Panda, the
  SO-101 and the UR arms keep the plain defaults.
- home pose: the profile's, else zeros clipped into the position limits (a prismatic joint: into the limits less
  ``PRISMATIC_MARGIN_FRACTION`` of its stroke at each end, where the excitation may centre on it).

Units follow each joint's kind: for a prismatic joint positions are in m, velocity m/s, effort N, and the "inertia"
diag M is a mass [kg] (pinocchio's joint-space inertia of a prismatic joint); the formulas are the same.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import RobotDescriptionError
from .description import RobotDescription, load_robot_description, position_margins
from .profile import RobotProfile
from .reduced import ReducedRobot

__all__ = ["ARMATURE_FRACTION", "DOB_CAP_FRACTION", "DRIVE_ACCELERATION", "ENCODER_RESOLUTION",
           "EXCITATION_TOP_FREQUENCY", "MIN_INERTIAL", "NOISE_ACCELERATION_FRACTION", "PHASE_MARGIN_DEG",
           "STICK_ERROR", "TORQUE_NOISE_FRACTION", "VELOCITY_NOISE_STD", "DerivedRobot", "check_moving_inertials",
           "derive_robot", "loop_delay", "resolve_profile_urdf"]

#: The derived DOB cutoff stays below this fraction of the Nyquist limit pi * control_rate.
DOB_CAP_FRACTION = 0.5
#: Default armature where a profile gives none: at least this fraction of the largest M_jj(q) over the poses [1] ...
ARMATURE_FRACTION = 0.1
#: ... and at least the effort limit over this acceleration [rad/s²] (the reflected rotor alone at full torque).
DRIVE_ACCELERATION = 1000.0
#: Phase margin the derived gains and DOB cutoff keep on the lightest sampled arm [deg].
PHASE_MARGIN_DEG = 45.0
#: Highest harmonic of the default excitation (5 harmonics of 0.1 Hz) [Hz].
EXCITATION_TOP_FREQUENCY = 0.5
#: Default simulated torque noise as a fraction of the effort limit [1].
TORQUE_NOISE_FRACTION = 0.001
#: The default torque and velocity noise each accelerate a joint by at most this fraction of its excitation's
#: acceleration bound [1] (white-noise propagation, :func:`.inertia.noise_acceleration`; the robot check calls
#: chatter above 0.5). The Panda's profile reaches 0.09 (torque) and 0.20 (velocity) with the plain defaults, so it
#: keeps them.
NOISE_ACCELERATION_FRACTION = 0.22
#: Position error [rad] at which the PD alone (kp = w^2) pushes the static friction of a joint: a joint whose friction
#: over its nominal inertia needs more than the profile's bandwidth for that gets a higher one (within the cap).
STICK_ERROR = 0.05
#: Default simulated velocity noise [rad/s].
VELOCITY_NOISE_STD = 0.002
#: Default encoder resolution, one count of a 16-bit-per-turn encoder [rad] (the bundled arm's simulator).
ENCODER_RESOLUTION = 2 * math.pi / 65536


@dataclass(frozen=True)
class DerivedRobot:
    """A profile with every per-joint value resolved. Arrays are (J,) in ``profile.joint_names`` order.

    Attributes:
        profile: the profile as written.
        urdf_path: the resolved URDF file.
        description: limits, friction and damping read from the URDF (by joint name).
        home: home pose [rad].
        mass_diagonal: diag M(q_home) of the reduced model [kg·m²].
        effort_limit: the actuator's effort limit [N·m] (profile setting, else the URDF's).
        encoder_resolution: one encoder count [rad].
        armature, nominal_inertia: [kg·m²].  bandwidth: w [rad/s].  kp [1/s²], kd [1/s].  dob_cutoff [rad/s].
        torque_rate_limit [N·m/s].  frictionloss [N·m], damping [N·m·s/rad].  torque_noise_std [N·m],
        velocity_noise_std [rad/s].  amplitude [rad], acceleration_limit [rad/s²].
        origin: value name -> per joint where it came from: "profile" (a setting), "override", "urdf" or "derived".
        inertia_gain: kappa, the largest eigenvalue of diag(Jn) M(q)^-1 over the sampled poses [1].
        loop_crossover_limit: w_max, the largest loop crossover keeping the phase margin [rad/s].
        reasons: value name -> why a derived value is what it is (the formula with its numbers).
    """

    profile: RobotProfile
    urdf_path: Path
    description: RobotDescription
    home: np.ndarray
    mass_diagonal: np.ndarray
    effort_limit: np.ndarray
    encoder_resolution: np.ndarray
    armature: np.ndarray
    nominal_inertia: np.ndarray
    bandwidth: np.ndarray
    kp: np.ndarray
    kd: np.ndarray
    dob_cutoff: np.ndarray
    torque_rate_limit: np.ndarray
    frictionloss: np.ndarray
    damping: np.ndarray
    torque_noise_std: np.ndarray
    velocity_noise_std: np.ndarray
    amplitude: np.ndarray
    acceleration_limit: np.ndarray
    origin: dict[str, tuple[str, ...]]
    inertia_gain: float = 1.0
    loop_crossover_limit: float = math.inf
    reasons: dict[str, str] = dataclasses.field(default_factory=dict)

    @property
    def joint_names(self) -> tuple[str, ...]:
        """(J,) the controlled joints."""
        return self.profile.joint_names

    def values(self, name: str) -> tuple[float, ...]:
        """A per-joint value as a tuple of floats (what the config dataclasses take)."""
        return tuple(float(v) for v in getattr(self, name))


def resolve_profile_urdf(profile: RobotProfile) -> Path:
    """The URDF file a profile names: a path relative to its folder, an absolute path, or a catalog name; for a xacro
    file, its expansion with the profile's ``xacro_args`` (a plain URDF in the cache,
    :func:`~deadzone_id_ros.robot.urdf_text.urdf_file`), so every stage reads the same expanded robot.

    Raises:
        FileNotFoundError: ``urdf`` is a path (it has a folder part or ends in .urdf/.xml) that does not exist; the
            message names the profile (name and file) and the path looked for.
        RobotDescriptionError: ``urdf`` is neither an existing file nor a known robot model; the message names the
            profile, the path looked for, the known names and, when example-robot-data is not installed, how to
            install it.
    """
    from .catalog import ERD_DISTRIBUTION, available_robots
    from .urdf_text import urdf_file

    local = profile.folder / profile.urdf
    if local.is_file():
        return urdf_file(local, profile.xacro_args)  # a xacro file: its expansion with the profile's xacro_args
    names = available_robots()
    if profile.urdf in names:
        return urdf_file(names[profile.urdf].urdf_path, profile.xacro_args)
    where = f"{profile.label()}: its URDF {profile.urdf!r}"
    if Path(profile.urdf).suffix.lower() in (".urdf", ".xml") or "/" in profile.urdf:
        raise FileNotFoundError(f"{where} does not exist (looked for {local.resolve()}); fix `urdf:` in the profile "
                                "(a path relative to the profile's folder, or a `deadzone-id robots` name)")
    hint = ""
    if not any(e.origin == ERD_DISTRIBUTION for e in names.values()):
        hint = (f"; robot models such as so101 and panda come from {ERD_DISTRIBUTION}, which is not installed: "
                "`pip install -r requirements-robots.txt -c constraints.txt` (or `make install-robots`)")
    raise RobotDescriptionError(f"{where} is neither a file (looked for {local.resolve()}) nor a known robot model "
                                f"(known: {', '.join(names) or 'none'}){hint}")


def _check_inertials(urdf_path: Path, profile: RobotProfile) -> None:
    """:func:`check_moving_inertials` of the profile's reduced model (raises RobotDescriptionError)."""
    from .reduced import build_reduced_model
    from .urdf_text import read_urdf

    reduced = build_reduced_model(read_urdf(urdf_path), profile.joint_names, locked=profile.locked,
                                  source=str(urdf_path))
    check_moving_inertials(reduced, str(urdf_path))


def loop_delay(profile: RobotProfile) -> float:
    """T_d = actuation delay (default one control period) + half a control period (zero-order hold) [s]."""
    period = 1.0 / profile.control_rate
    delay = profile.actuation_delay if profile.actuation_delay is not None else period
    return delay + period / 2


#: Smallest mass [kg] and principal moment of inertia [kg·m²] of a body that moves (MuJoCo's mjMINVAL).
MIN_INERTIAL = 1e-15


def check_moving_inertials(reduced: ReducedRobot, source: str) -> None:
    """Refuse a controlled joint whose moving link (its child link with every link welded to it: fixed joints and
    locked joints) has no mass or no rotational inertia: MuJoCo refuses such a model ("mass and inertia of moving
    bodies must be larger than mjMINVAL", even when links further out have mass) and the joint-space inertia of
    the rigid body has no inertia of its own there. A link without ``<inertial>`` between two joints is the usual
    cause (URDF exporters, mobile bases).

    Raises:
        RobotDescriptionError: names the joint, its link, the mass and the inertia, and the fix.
    """
    import pinocchio as pin

    model = reduced.model
    for joint in reduced.urdf_joint_names:
        jid = model.getJointId(joint)
        inertia = model.inertias[jid]
        moments = np.linalg.eigvalsh(np.asarray(inertia.inertia))
        if inertia.mass > MIN_INERTIAL and moments.min() > MIN_INERTIAL:
            continue
        links = [f.name for f in model.frames if f.type == pin.FrameType.BODY and f.parentJoint == jid]
        raise RobotDescriptionError(
            f"{source}: joint {joint!r} moves link(s) {links} with mass {inertia.mass:g} kg and principal inertia "
            f"{np.round(moments, 12).tolist()} kg*m^2: a moving link needs an <inertial> with positive mass and "
            "inertia (MuJoCo refuses it, mjMINVAL); give the link its inertial, or lock or fix the joint")


class _Picker:
    """Per-joint values: an override, else a profile setting, else a fallback, recording where each came from."""

    def __init__(self, profile: RobotProfile) -> None:
        self.profile = profile
        self.origin: dict[str, tuple[str, ...]] = {}

    def pick(self, name: str, fallback: np.ndarray, fallback_origin: str, setting: str | None = None) -> np.ndarray:
        if name in self.profile.overrides:
            self.origin[name] = ("override",) * len(fallback)
            return np.asarray(self.profile.overrides[name], dtype=float)
        out, where = np.asarray(fallback, dtype=float).copy(), []
        for i, joint in enumerate(self.profile.joint_names):
            s = self.profile.setting(joint, setting) if setting else None
            if s is not None:
                out[i] = s.value
            where.append("profile" if s is not None else fallback_origin)
        self.origin[name] = tuple(where)
        return out


def derive_robot(profile: RobotProfile) -> DerivedRobot:
    """Resolve every per-joint value of ``profile`` from its URDF (formulas: the module docstring).

    Raises:
        FileNotFoundError: the URDF does not exist.
        RobotDescriptionError: the URDF lacks a controlled or locked joint, a controlled joint is not 1-DOF (names
            its kind: floating, planar), has an effort limit of 0 or none (URDF and profile) or a profile
            ``effort_limit`` above the URDF's, or moves a link without mass or inertia
            (:func:`check_moving_inertials`; names the joint and the link, and the fix).
    """
    urdf_path = resolve_profile_urdf(profile)
    desc = load_robot_description(urdf_path, profile.joint_names)
    picker = _Picker(profile)
    pick = picker.pick
    effort_limit = pick("effort_limit", desc.effort_limit, "urdf", "effort_limit")
    effort_limit = desc.effort_limits(
        [float(v) if o != "urdf" else None for v, o in zip(effort_limit, picker.origin["effort_limit"])],
        f"robot profile {profile.name!r}: effort_limit")
    n = desc.n_joints
    if profile.home:
        home = np.asarray(profile.home, dtype=float)
        out = (home < desc.lower) | (home > desc.upper)
        if out.any():
            bad = [profile.joint_names[i] for i in np.flatnonzero(out)]
            raise RobotDescriptionError(f"{urdf_path}: home pose of {bad} lies outside the URDF position limits")
    else:  # a prismatic joint's default home keeps its margin from the limits (a lift at 0 = its lower limit)
        inset = position_margins(desc, 0.0)
        home = np.clip(np.zeros(n), desc.lower + inset, desc.upper - inset)
    from .inertia import inertia_spread, mass_matrices, noise_acceleration, sample_poses

    _check_inertials(urdf_path, profile)
    poses = sample_poses(desc.lower, desc.upper, home)
    masses = mass_matrices(urdf_path, profile.joint_names, profile.locked, poses)
    mass = np.diagonal(masses[0]).copy()  # the home pose
    reasons: dict[str, str] = {}
    default_armature = np.maximum(effort_limit / DRIVE_ACCELERATION,
                                  ARMATURE_FRACTION * np.diagonal(masses, axis1=1, axis2=2).max(axis=0))
    armature = pick("armature", default_armature, "derived", "armature")
    if "derived" in picker.origin["armature"]:
        reasons["armature"] = (f"no rotor inertia given: max(effort_limit / {DRIVE_ACCELERATION:g} rad/s^2, "
                               f"{ARMATURE_FRACTION:g} x the largest M_jj(q) over {len(poses)} poses), a rule, not a "
                               "measurement: give settings.<joint>.armature from the drive's datasheet")
    jn = pick("nominal_inertia", mass + armature, "derived")
    try:
        spread = inertia_spread(profile.joint_names, masses, armature, jn, poses)
    except ValueError as err:
        raise RobotDescriptionError(f"{urdf_path}: {err}") from err
    kappa = max(spread.gain_max, 1.0)
    t_d = loop_delay(profile)
    w_max = (math.pi / 2 - math.radians(PHASE_MARGIN_DEG)) / t_d
    w_cap = w_max / (2 * profile.damping_ratio * kappa)
    frictionloss = pick("frictionloss", desc.friction, "urdf", "frictionloss")
    w_stick = np.sqrt(frictionloss / (jn * STICK_ERROR))  # the PD alone holds the friction within STICK_ERROR
    w = pick("bandwidth", np.minimum(np.maximum(profile.bandwidth, w_stick), w_cap), "derived", "bandwidth")
    reasons["bandwidth"] = (f"min(max(bandwidth {profile.bandwidth:g}, sqrt(frictionloss / (Jn x {STICK_ERROR:g} rad)) "
                            f"where static friction dominates a light joint), w_max / (2 zeta kappa) = {w_cap:.4g}) "
                            "rad/s; "
                            f"w_max = (90 - {PHASE_MARGIN_DEG:g} deg) / T_d {1e3 * t_d:.3g} ms = {w_max:.4g} rad/s, "
                            f"kappa = {kappa:.3g} (diag(Jn) M(q)^-1 over {len(poses)} poses, worst joints "
                            f"{', '.join(spread.leading_joints())})")
    g_nyq = DOB_CAP_FRACTION * math.pi * profile.control_rate  # the Nyquist bound of control.config.dob_cutoff_limit
    g_cap = w_max / kappa
    reasons["dob_cutoff"] = (f"min(dob_cutoff_ratio {profile.dob_cutoff_ratio:g} x w, w_max / kappa = {g_cap:.4g}, "
                             f"{DOB_CAP_FRACTION:g} x Nyquist = {g_nyq:.4g}) rad/s")
    span = np.where(desc.continuous, 2 * math.pi, desc.upper - desc.lower)
    acceleration_limit = pick("acceleration_limit", desc.velocity_limit * 2 * math.pi * EXCITATION_TOP_FREQUENCY,
                              "derived")
    tn_default = TORQUE_NOISE_FRACTION * effort_limit
    tn_scale = min(1.0, float(np.min(NOISE_ACCELERATION_FRACTION * acceleration_limit
                                     / noise_acceleration(masses, armature, tn_default))))
    torque_noise = pick("torque_noise_std", tn_scale * tn_default, "derived", "torque_noise_std")
    if "derived" in picker.origin["torque_noise_std"]:
        reasons["torque_noise_std"] = (
            f"{TORQUE_NOISE_FRACTION:g} x effort_limit x {tn_scale:.3g}: scaled so that it shakes no joint by more "
            f"than {NOISE_ACCELERATION_FRACTION:g} x its acceleration_limit (M(q)^-1 over {len(poses)} poses)")
    kd = pick("kd", 2 * profile.damping_ratio * w, "derived")
    dob_cutoff = pick("dob_cutoff", np.minimum(np.minimum(profile.dob_cutoff_ratio * w, g_cap), g_nyq), "derived")
    vn_accel = noise_acceleration(masses, armature, jn * (kd + dob_cutoff))
    vn = min(VELOCITY_NOISE_STD, float(np.min(NOISE_ACCELERATION_FRACTION * acceleration_limit / vn_accel)))
    velocity_noise = pick("velocity_noise_std", np.full(n, vn), "derived", "velocity_noise_std")
    if "derived" in picker.origin["velocity_noise_std"]:
        reasons["velocity_noise_std"] = (
            f"min({VELOCITY_NOISE_STD:g} rad/s, the noise that the loops (Jn (kd + dob_cutoff) through M(q)^-1) "
            f"turn into {NOISE_ACCELERATION_FRACTION:g} x a joint's acceleration_limit = {vn:.3g} rad/s): the "
            "simulated sensor no noisier than the excitation's accelerations allow; give settings.<joint>."
            "velocity_noise_std from the real sensor")
    return DerivedRobot(
        profile=profile, urdf_path=urdf_path, description=desc, home=home, mass_diagonal=mass,
        effort_limit=effort_limit,
        encoder_resolution=pick("encoder_resolution", np.full(n, ENCODER_RESOLUTION), "derived", "encoder_resolution"),
        armature=armature, nominal_inertia=jn, bandwidth=w,
        kp=pick("kp", w**2, "derived"), kd=kd, dob_cutoff=dob_cutoff,
        torque_rate_limit=pick("torque_rate_limit", effort_limit / profile.torque_rise_time, "derived"),
        frictionloss=frictionloss,
        damping=pick("damping", desc.damping, "urdf", "damping"),
        torque_noise_std=torque_noise,
        velocity_noise_std=velocity_noise,
        amplitude=pick("amplitude", np.minimum(span / 2, math.pi), "derived"),
        acceleration_limit=acceleration_limit,
        origin=picker.origin, inertia_gain=kappa, loop_crossover_limit=w_max, reasons=reasons)
