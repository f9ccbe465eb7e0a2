"""The simulated 3-DOF arm: MuJoCo physics from the URDF, with dead zones, noise and effort limits.

The dead zone of each joint is MuJoCo's ``frictionloss`` (a static/Coulomb friction constraint). Its solver
parameters are made stiff (``friction_solref``/``friction_solimp``) so that a joint loaded below its friction torque
really stays put instead of creeping. The label a real robot reports is the applied (clipped) torque; the torque
ripple (``torque_noise_std``, ``ripple_amplitude``) acts on the arm but is not measured.

Geared-joint effects (profile "geared_desktop_arm", equations and sources in :mod:`deadzone_id_ros.sim.geared`):
the frictionloss is set before every physics step from the velocity and the transmitted torque (Stribeck and
load-dependent friction), commands act ``actuation_delay`` later, the state is reported ``measurement_delay`` late
and optionally with a low-pass filtered velocity. Profile "ideal" switches all of them off and takes the plain path.

URDF joints that are not actuated are welded where the profile locks them (``locked_joints``, default 0), so the
simulator is the same robot as pinocchio's reduced model (:mod:`deadzone_id_ros.sim.locked`).

Friction and damping come from the URDF (``<dynamics friction damping>``, the same numbers the rigid-body model
reads) unless the configuration gives them explicitly; a warning names each joint where the two disagree.
"""

from __future__ import annotations

from collections import deque
from pathlib import Path

import mujoco
import numpy as np

from ..robot import RobotDescription, load_robot_description
from . import kernels
from .config import FrictionSourceWarning, SimArmConfig, filled, resolve_urdf_friction
from .external_forces import ExternalForces
from .ground_truth import GroundTruth
from .measurement import JointMeasurement
from .model_build import build_model, draw_payload
from .normals import NormalPool
from .servo import present_load
from .views import as_slice, view

__all__ = ["FrictionSourceWarning", "JointMeasurement", "SimArm"]

# The ufuncs and kernels of the hot path as module names (ufuncs called with a positional ``out``): each saves a
# lookup, and the positional ``out`` the keyword parsing, a tenth of a call's cost on three joints.
_add, _div, _mul, _rint = np.add, np.divide, np.multiply, np.rint
_asarray, _empty, _new = np.asarray, np.empty, object.__new__
_clip, _geared_force, _geared_step = kernels.clip_finite, kernels.geared_force, kernels.geared_step
_measure = kernels.measure_plain


class SimArm(GroundTruth):
    """MuJoCo arm built from a URDF. One instance owns one MjModel/MjData pair.

    Args:
        config: physics configuration (joints, friction, noise, timestep, profile). ``self.config`` holds it with
            frictionloss and damping resolved (from the URDF where the configuration left them at None).
        external: known external forces (pushes, an obstacle; :mod:`.external_forces`), or None; their true joint
            torque of the last step is ``external.true_torque``.

    Raises:
        FileNotFoundError: the URDF does not exist.
        RobotDescriptionError: the URDF lacks a configured joint, or MuJoCo cannot compile it.

    Warns:
        FrictionSourceWarning: an explicit frictionloss/damping differs from the URDF's (names joint and values).
    """

    def __init__(self, config: SimArmConfig | None = None, external: ExternalForces | None = None) -> None:
        from ..resources import default_urdf
        from .robot_configs import bundled_sim_config

        config = config or bundled_sim_config()
        urdf = Path(config.urdf_path) if config.urdf_path else default_urdf()
        self.description: RobotDescription = load_robot_description(urdf, config.joint_names)
        self.config = config = resolve_urdf_friction(config, self.description)
        self.joint_names: tuple[str, ...] = tuple(config.joint_names)
        #: mass of this episode's payload [kg] (0: none), drawn from ``seed`` on a stream of its own
        self.payload_mass = self._draw_payload(config)
        self.external = external
        self.model = self._build_model(urdf, config, with_friction=True, payload=self.payload_mass, external=external)
        self.data = mujoco.MjData(self.model)
        self._dof = np.array([self.model.jnt_dofadr[self.model.joint(n).id] for n in self.joint_names], dtype=int)
        if external is not None:
            external.bind(self.model, self._dof)
        self._qadr = np.array([self.model.jnt_qposadr[self.model.joint(n).id] for n in self.joint_names], dtype=int)
        # A friction-free twin for ground-truth inverse dynamics (rigid body + armature).
        self._id_model = self._build_model(urdf, config, with_friction=False, payload=self.payload_mass)
        self._id_data = mujoco.MjData(self._id_model)
        #: (J,) effort limit [N·m]: the configuration's (a robot profile's actuator datasheet), else the URDF's
        #: (:meth:`~deadzone_id_ros.robot.RobotDescription.effort_limits`)
        self.effort_limit = self.description.effort_limits(config.effort_limit, "sim_config.effort_limit")
        self._resolution = np.asarray(config.encoder_resolution, dtype=float)
        self._no_load_speed = np.asarray(config.no_load_speed, dtype=float) if config.no_load_speed else None
        self._rng = np.random.default_rng(config.seed)
        self._applied = np.zeros(self.n_joints)
        self._ideal = config.is_ideal
        self._init_geared(config)
        #: the torque noise (row 0) of every step and the velocity noise (row 1) of every measurement, in the order
        #: drawn: the numbers of ``self._rng``, drawn in blocks
        self._noise = NormalPool(self._rng, (self._noise_std, np.asarray(config.velocity_noise_std, dtype=float)))
        self._next_noise = self._noise.next_row
        self._init_hot_path(config)
        kernels.warm_up()  # numba's start-up here, not in the first step
        self.reset()

    def _init_geared(self, config: SimArmConfig) -> None:
        """Precompute the per-joint arrays of the geared-joint effects (see :mod:`.geared`)."""
        fs = np.asarray(config.frictionloss, dtype=float)
        self._ratio = np.asarray(config.friction_stribeck_ratio, dtype=float)
        self._coulomb = fs / (1.0 + self._ratio)  # Fs = Fc (1 + r)
        self._load = np.asarray(config.load_friction, dtype=float)
        self._load_s = np.asarray(config.load_friction_stribeck, dtype=float)
        self._vs = np.asarray(config.stribeck_velocity, dtype=float)
        self._alpha = float(filled(config.stribeck_exponent))
        self._friction_varies = bool(self._ratio.any() or self._load.any() or self._load_s.any())
        self._coulomb_r = self._coulomb * self._ratio
        self._inv_vs = 1.0 / self._vs
        self._noise_std = np.asarray(config.torque_noise_std, dtype=float)
        self._ripple_a = np.asarray(config.ripple_amplitude, dtype=float)
        self._ripple_n = np.asarray(config.ripple_cycles_per_rad, dtype=float)
        self._ripple = bool(self._ripple_a.any())
        self.actuation_delay_steps = int(round(filled(config.actuation_delay) / config.timestep))
        self.measurement_delay_steps = int(round(filled(config.measurement_delay) / config.timestep))
        fc = filled(config.velocity_filter_cutoff)
        self._filter_gain = 1.0 - float(np.exp(-2.0 * np.pi * fc * config.timestep)) if fc > 0 else 0.0
        self._record = bool(self.measurement_delay_steps or self._filter_gain)  # keep a state history
        # Slices (views, cheaper than index arrays) when the actuated dofs / qpos entries are contiguous.
        self._fdof = as_slice(self._dof)
        self._fqadr = as_slice(self._qadr)

    def _init_hot_path(self, config: SimArmConfig) -> None:
        """Workspaces and views of MuJoCo's arrays for :meth:`step` and :meth:`measure`.

        The hot path evaluates the array expressions of :mod:`.geared` and of the measurement in compiled kernels
        (:mod:`.kernels`: the clip, the friction budget with the force, the measurement), operation by operation in
        the same order, straight into MuJoCo's arrays (views, when the arm's dofs are contiguous): every number is
        the one the plain expressions give, the Stribeck curve's with the platform's ``exp`` and ``pow`` (which can
        differ from numpy's vectorized ones in the last bit: 1e-16 relative). A command is validated and clipped
        once per :meth:`step` call.
        """
        self._n = n = self.n_joints
        self._shape = (n,)
        self._neg_limit = -self.effort_limit
        self._present_load = config.effort_readout == "present_load"
        self._all_counts = bool(np.all(self._resolution > 0))  # every joint quantized: no np.where needed
        # the friction terms as the rows of one array (kernels.geared_force's)
        self._friction = np.array([self._coulomb, self._load, self._coulomb_r, self._load_s, self._inv_vs])
        self._qbuf = np.empty(n)  # q / resolution
        d, m = self.data, self.model
        self._qpos_v = q_v = view(d.qpos, self._fqadr)
        self._qvel_v = v_v = view(d.qvel, self._fdof)
        self._qfrc_v = view(d.qfrc_applied, self._fdof)
        self._floss_v = view(m.dof_frictionloss, self._fdof)
        # where the dofs are not contiguous: write into buffers, then through the index array
        self._scatter = not isinstance(self._fdof, slice)
        # the kernels' q and dq views: only the paths below that require contiguous entries read them
        self._qpos_a = q_v if isinstance(q_v, np.ndarray) else np.empty(0)
        self._qvel_a = v_v if isinstance(v_v, np.ndarray) else np.empty(0)
        # measure() of the current state, every joint quantized, effort the torque, q and dq views: one kernel call
        self._plain_measure = ((self._ideal or not self._record) and self._all_counts and not self._present_load
                               and isinstance(q_v, np.ndarray) and isinstance(v_v, np.ndarray))
        self._force = self._qfrc_v if isinstance(self._qfrc_v, np.ndarray) else np.empty(n)
        self._budget = self._floss_v if isinstance(self._floss_v, np.ndarray) else np.empty(n)
        self._limits = np.array([self._neg_limit, self.effort_limit])  # kernels.geared_step's
        self._physics = mujoco.mj_step if self.external is None else self.external.step
        # one physics step per step() call in one kernel: geared, contiguous dofs, no ripple, no state history
        self._one_step = not (self._ideal or self._scatter or self._ripple or self._record)
        self._one_args = (self._qvel_a, self._friction, self._alpha)  # _one_geared_step's, around the noise
        self._mj_out = (self._budget, self._force, self._friction_varies)
        self._bind_hot()

    def _bind_hot(self) -> None:
        """Collect what :meth:`_geared_steps` reads per call, for one attribute lookup (again after the noise
        function changed)."""
        self._hot = (self._qvel_v, self._friction, self._alpha, self._budget, self._friction_varies, self._scatter,
                     self._ripple, self._record, self._next_noise, self._force, self.model, self.data, self._physics)

    _draw_payload = staticmethod(draw_payload)
    _build_model = staticmethod(build_model)

    @property
    def n_joints(self) -> int:
        """Number of actuated joints J."""
        return len(self.joint_names)

    @property
    def dt(self) -> float:
        """Physics step [s]."""
        return float(self.model.opt.timestep)

    @property
    def time(self) -> float:
        """Simulated time [s]."""
        return float(self.data.time)

    @property
    def q(self) -> np.ndarray:
        """(J,) true joint position [rad] (not quantized)."""
        return self.data.qpos[self._qadr].copy()

    @property
    def dq(self) -> np.ndarray:
        """(J,) true joint velocity [rad/s] (no noise)."""
        return self.data.qvel[self._dof].copy()

    @property
    def ddq(self) -> np.ndarray:
        """(J,) true joint acceleration of the last step [rad/s²]."""
        return self.data.qacc[self._dof].copy()

    @property
    def applied_torque(self) -> np.ndarray:
        """(J,) torque applied in the last step, after clipping, without the unmeasured ripple [N·m]."""
        return self._applied.copy()

    def reset(self, q: np.ndarray | None = None, dq: np.ndarray | None = None) -> None:
        """Reset time to zero and the state to ``q`` [rad] / ``dq`` [rad/s] (default: configured initial position,
        rest).

        Raises:
            ValueError: ``q`` or ``dq`` is not of shape (J,).
        """
        mujoco.mj_resetData(self.model, self.data)
        q = np.asarray(self.config.initial_position if q is None else q, dtype=float)
        dq = np.zeros(self.n_joints) if dq is None else np.asarray(dq, dtype=float)
        for name, arr in (("q", q), ("dq", dq)):
            if arr.shape != (self.n_joints,):
                raise ValueError(f"{name} must have shape ({self.n_joints},), got {arr.shape}")
        self.data.qpos[self._qadr] = q
        self.data.qvel[self._dof] = dq
        self._applied = np.zeros(self.n_joints)
        mujoco.mj_forward(self.model, self.data)
        self._clear_delays()

    def _clear_delays(self) -> None:
        """Zero torque in the actuation FIFO and the current state in every slot of the measurement buffer."""
        zero = np.zeros(self.n_joints)
        self._commands = deque([zero] * self.actuation_delay_steps)
        self._dq_filtered = self.dq
        sample = (self.q, self._dq_filtered.copy(), zero)
        self._samples = deque([sample] * (self.measurement_delay_steps + 1), maxlen=self.measurement_delay_steps + 1)

    def clip_torque(self, tau: np.ndarray) -> np.ndarray:
        """Clip a torque command (J,) [N·m] to :attr:`effort_limit`; raises ValueError on shape or non-finite
        values."""
        tau = np.asarray(tau, dtype=float)
        if tau.shape != self._shape:
            raise ValueError(f"tau must have shape ({self.n_joints},), got {tau.shape}")
        tau = tau if tau.flags.c_contiguous else np.ascontiguousarray(tau)  # the kernels' type (kernels.warm_up)
        out = _empty(self._n)
        if not _clip(tau, self._neg_limit, self.effort_limit, out):  # np.clip's numbers for finite values
            raise ValueError(f"tau has non-finite values: {tau.tolist()}")
        return out

    def step(self, tau: np.ndarray, n_steps: int = 1) -> np.ndarray:
        """Command torque ``tau`` (J,) [N·m], clipped to the effort limits, for ``n_steps`` physics steps.

        With ``actuation_delay`` = d steps the command acts d physics steps after this call's first step (the
        commands of earlier calls fill the gap); without it, at once.

        Returns:
            (J,) the commanded (clipped) torque [N·m]; :attr:`applied_torque` is the torque acting on the arm.

        Raises:
            ValueError: wrong shape or non-finite values in ``tau``.
        """
        if n_steps == 1 and self._one_step:
            return self._one_geared_step(tau)
        commanded = self.clip_torque(tau)
        if self._ideal:
            self._applied = commanded
            next_noise, force = self._next_noise, self._force
            for _ in range(n_steps):
                _add(commanded, next_noise()[0], force)  # tau + noise_std * z
                if self._scatter:
                    self._qfrc_v[:] = force
                self._physics_step()
        else:
            self._geared_steps(commanded, n_steps)
        return commanded.copy()

    def _one_geared_step(self, tau: np.ndarray) -> np.ndarray:
        """:meth:`step` of one physics step on the common path (:attr:`_one_step`): the clip, the friction budget and
        the force in one compiled call (:func:`.kernels.geared_step`)."""
        tau = _asarray(tau, dtype=float)
        if tau.shape != self._shape:
            raise ValueError(f"tau must have shape ({self.n_joints},), got {tau.shape}")
        tau = tau if tau.flags.c_contiguous else np.ascontiguousarray(tau)
        commanded = _empty(self._n)
        fifo = self._commands
        applied = fifo[0] if fifo else commanded  # the command that acts now: d steps old, or this one
        row = self._next_noise()
        if not _geared_step(tau, self._limits, commanded, applied, *self._one_args, row[0], *self._mj_out):
            self._noise.unread(row)  # as if never drawn: a refused command changes nothing
            self._next_noise = self._noise.next_row
            self._bind_hot()
            raise ValueError(f"tau has non-finite values: {tau.tolist()}")
        if fifo:
            fifo.append(commanded)
            fifo.popleft()
        self._applied = applied
        self._physics(self.model, self.data)
        return commanded.copy()

    def _geared_steps(self, commanded: np.ndarray, n_steps: int) -> None:
        """``n_steps`` physics steps with the geared-joint effects (delays, Stribeck/load friction, ripple) under
        the clipped command ``commanded`` [N·m].

        Written for speed (see :meth:`_init_hot_path`): the friction budget and the force in one compiled call
        (:func:`.kernels.geared_force`) into MuJoCo's arrays, the noise drawn in blocks
        (:class:`.normals.NormalPool`), the attributes looked up once per call, and the state history kept only when
        a measurement delay or filter needs it.
        """
        fifo = self._commands if self.actuation_delay_steps else None
        qvel, friction, alpha, budget, varies, scatter, ripple, record, next_noise, force, model, data, physics \
            = self._hot
        for _ in range(n_steps):
            if fifo is not None:
                fifo.append(commanded)
                applied = fifo.popleft()
            else:
                applied = commanded
            self._applied = applied
            _geared_force(applied, np.asarray(qvel), friction, alpha, next_noise()[0], budget, force,
                          varies)  # F = F0 + s(v) F1 into budget, tau + noise_std * z into force
            if varies and scatter:
                self._floss_v[:] = budget
            if ripple:
                force += self._ripple_a * np.sin(self._ripple_n * np.asarray(self._qpos_v))
            if scatter:
                self._qfrc_v[:] = force
            physics(model, data)
            if record:
                dq = np.array(qvel)
                if self._filter_gain:
                    self._dq_filtered = self._dq_filtered + self._filter_gain * (dq - self._dq_filtered)
                else:
                    self._dq_filtered = dq
                self._samples.append((np.array(self._qpos_v), self._dq_filtered, applied))

    def _physics_step(self) -> None:
        """One MuJoCo step, with the external forces when there are any."""
        self._physics(self.model, self.data)

    def hold(self, n_steps: int = 1) -> None:
        """Advance time by ``n_steps`` physics steps with the joints braked: position kept, velocity zero, no torque.

        This is a motor brake (or a robot sitting on its brakes before the controller starts): the state does not
        change and the applied torque reads zero.
        """
        q = self.data.qpos.copy()
        self._applied = np.zeros(self.n_joints)
        for _ in range(n_steps):
            self.data.qpos[:] = q
            self.data.qvel[:] = 0.0
            self.data.qfrc_applied[:] = 0.0
            self.data.time += self.dt
        mujoco.mj_forward(self.model, self.data)
        if n_steps:
            self._clear_delays()

    def measure(self) -> JointMeasurement:
        """Return what the encoders and the drive report now (quantized q, noisy dq, applied torque or, with
        ``effort_readout`` "present_load", the servo's Present_Load of it, :func:`.servo.present_load`).

        With ``measurement_delay`` the values are those sampled that long ago (stamped now); the velocity is the
        filtered one when ``velocity_filter_cutoff`` > 0.
        """
        if self._plain_measure:  # the common case, built in place (JointMeasurement._make): the numbers below
            n = self._n
            pos, vel, eff = _empty(n), _empty(n), _empty(n)
            _measure(self._qpos_a, self._qvel_a, self._resolution, self._next_noise()[1], self._applied, pos, vel, eff)
            m = _new(JointMeasurement)
            m.__dict__.update(t=float(self.data.time), q=pos, dq=vel, effort=eff)
            return m
        if self._ideal or not self._record:
            q, dq_true, effort = self._qpos_v, self._qvel_v, self._applied
        else:
            q, dq_true, effort = self._samples[0]
        if self._all_counts:  # quantize() without its np.where (round is rint): the same numbers
            res = self._resolution
            buf = _div(q, res, self._qbuf)
            q = _mul(_rint(buf, buf), res)
        else:
            q = self.quantize(np.asarray(q))
        dq = _add(dq_true, self._next_noise()[1])  # dq + velocity_noise_std * z
        if self._present_load:
            effort = present_load(effort, np.array(dq_true), self.effort_limit, self._no_load_speed)
        else:
            effort = effort.copy()
        return JointMeasurement._make(float(self.data.time), q, dq, effort)

    def quantize(self, q: np.ndarray) -> np.ndarray:
        """``q`` (..., J) [rad] as the encoders report it: a whole number of counts of ``encoder_resolution`` per
        joint (``round(q / res) * res``; a joint with resolution 0 unchanged)."""
        res = self._resolution
        q = np.asarray(q, dtype=float)
        if not res.any():
            return q.copy()
        step = np.where(res > 0, res, 1.0)
        return np.where(res > 0, np.round(q / step) * step, q)
