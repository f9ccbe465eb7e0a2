"""The simulated 3-DOF arm: MuJoCo physics from the URDF, with dead zones, noise and effort limits.

The dead zone of each joint is MuJoCo's ``frictionloss`` (a static/Coulomb friction constraint). Its solver
parameters are made stiff (``friction_solref``/``friction_solimp``) so that a joint loaded below its friction torque
really stays put instead of creeping. The label a real robot reports is the applied (clipped) torque; the torque
ripple (``torque_noise_std``) acts on the arm but is not measured.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import mujoco
import numpy as np

from ..errors import RobotDescriptionError
from ..models.base import check_joint_arrays
from ..robot import RobotDescription, load_robot_description
from .config import SimArmConfig

__all__ = ["JointMeasurement", "SimArm"]


@dataclass(frozen=True)
class JointMeasurement:
    """What the hardware reports at one instant, like joint_state_broadcaster.

    Attributes:
        t: simulated time [s].
        q: (J,) measured position, quantized by the encoder [rad].
        dq: (J,) measured velocity, with noise [rad/s].
        effort: (J,) applied torque, the clipped command [N·m].
    """

    t: float
    q: np.ndarray
    dq: np.ndarray
    effort: np.ndarray


class SimArm:
    """MuJoCo arm built from a URDF. One instance owns one MjModel/MjData pair.

    Args:
        config: physics configuration (joints, friction, noise, timestep).

    Raises:
        FileNotFoundError: the URDF does not exist.
        RobotDescriptionError: the URDF lacks a configured joint, or MuJoCo cannot compile it.
    """

    def __init__(self, config: SimArmConfig | None = None) -> None:
        from ..resources import default_urdf

        self.config = config = config or SimArmConfig()
        urdf = Path(config.urdf_path) if config.urdf_path else default_urdf()
        self.description: RobotDescription = load_robot_description(urdf, config.joint_names)
        self.joint_names: tuple[str, ...] = tuple(config.joint_names)
        self.model = self._build_model(urdf, config, with_friction=True)
        self.data = mujoco.MjData(self.model)
        self._dof = np.array([self.model.jnt_dofadr[self.model.joint(n).id] for n in self.joint_names], dtype=int)
        self._qadr = np.array([self.model.jnt_qposadr[self.model.joint(n).id] for n in self.joint_names], dtype=int)
        # A friction-free twin for ground-truth inverse dynamics (rigid body + armature).
        self._id_model = self._build_model(urdf, config, with_friction=False)
        self._id_data = mujoco.MjData(self._id_model)
        self.effort_limit = self.description.effort_limit.copy()
        self._rng = np.random.default_rng(config.seed)
        self._applied = np.zeros(self.n_joints)
        self.reset()

    @staticmethod
    def _build_model(urdf: Path, config: SimArmConfig, *, with_friction: bool) -> mujoco.MjModel:
        try:
            spec = mujoco.MjSpec.from_file(str(urdf))
        except ValueError as err:
            raise RobotDescriptionError(f"{urdf}: MuJoCo cannot load this URDF: {err}") from err
        by_name = {j.name: j for j in spec.joints}
        missing = [n for n in config.joint_names if n not in by_name]
        if missing:
            raise RobotDescriptionError(f"{urdf}: joint(s) {missing} not in the URDF (its joints: {sorted(by_name)})")
        for j in spec.joints:
            # Joints not actuated by this config are welded in place by a stiff spring-free lock: leave them as-is.
            if j.name not in config.joint_names:
                continue
            i = config.joint_names.index(j.name)
            j.armature = config.armature[i]
            j.frictionloss = config.frictionloss[i] if with_friction else 0.0
            j.damping = [config.damping[i] if with_friction else 0.0, 0.0, 0.0]  # MuJoCo 4: (linear, 0, 0)
            j.solref_friction = list(config.friction_solref)
            j.solimp_friction = list(config.friction_solimp)
        spec.option.timestep = config.timestep
        try:
            return spec.compile()
        except ValueError as err:
            raise RobotDescriptionError(f"{urdf}: MuJoCo cannot compile this URDF: {err}") from err

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
        """Reset time to zero and the state to ``q`` [rad] / ``dq`` [rad/s] (default: configured initial position, rest).

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
        self._applied[:] = 0.0
        mujoco.mj_forward(self.model, self.data)

    def clip_torque(self, tau: np.ndarray) -> np.ndarray:
        """Clip a torque command (J,) [N·m] to the URDF effort limits; raises ValueError on shape or non-finite values."""
        tau = np.asarray(tau, dtype=float)
        if tau.shape != (self.n_joints,):
            raise ValueError(f"tau must have shape ({self.n_joints},), got {tau.shape}")
        if not np.all(np.isfinite(tau)):
            raise ValueError(f"tau has non-finite values: {tau.tolist()}")
        return np.clip(tau, -self.effort_limit, self.effort_limit)

    def step(self, tau: np.ndarray, n_steps: int = 1) -> np.ndarray:
        """Apply torque ``tau`` (J,) [N·m], clipped to the effort limits, for ``n_steps`` physics steps.

        Returns:
            (J,) the applied (clipped) torque [N·m].

        Raises:
            ValueError: wrong shape or non-finite values in ``tau``.
        """
        applied = self.clip_torque(tau)
        self._applied = applied
        noise_std = np.asarray(self.config.torque_noise_std)
        for _ in range(n_steps):
            self.data.qfrc_applied[self._dof] = applied + noise_std * self._rng.standard_normal(self.n_joints)
            mujoco.mj_step(self.model, self.data)
        return applied.copy()

    def hold(self, n_steps: int = 1) -> None:
        """Advance time by ``n_steps`` physics steps with the joints braked: position kept, velocity zero, no torque.

        This is a motor brake (or a robot sitting on its brakes before the controller starts): the state does not
        change and the applied torque reads zero.
        """
        q = self.data.qpos.copy()
        self._applied[:] = 0.0
        for _ in range(n_steps):
            self.data.qpos[:] = q
            self.data.qvel[:] = 0.0
            self.data.qfrc_applied[:] = 0.0
            self.data.time += self.dt
        mujoco.mj_forward(self.model, self.data)

    def measure(self) -> JointMeasurement:
        """Return what the encoders and the drive report now (quantized q, noisy dq, applied torque)."""
        q = self.q
        res = self.config.encoder_resolution
        if res > 0:
            q = np.round(q / res) * res
        dq = self.dq + np.asarray(self.config.velocity_noise_std) * self._rng.standard_normal(self.n_joints)
        return JointMeasurement(t=self.time, q=q, dq=dq, effort=self._applied.copy())

    def inverse_dynamics(self, q: np.ndarray, dq: np.ndarray, ddq: np.ndarray, *, friction: bool = False) -> np.ndarray:
        """Ground-truth inverse dynamics of the simulator (MuJoCo ``mj_inverse``).

        Args:
            q, dq, ddq: (N, J) or (J,) joint position [rad], velocity [rad/s], acceleration [rad/s²].
            friction: add viscous damping ``d*dq`` and Coulomb friction ``f*sign(dq)`` (the moving-joint friction;
                inside the dead zone the true torque is anywhere in the band).

        Returns:
            tau: same leading shape as the inputs, [N·m]: M(q) ddq + C(q, dq) dq + g(q) (+ friction), including the
            rotor armature.

        Raises:
            ValueError: an argument not of shape (N, J) or (J,), or unlike q (names it and both shapes).
        """
        q, dq, ddq = check_joint_arrays(self.n_joints, q=q, dq=dq, ddq=ddq)
        single = q.ndim == 1
        q2, dq2, ddq2 = (np.atleast_2d(a) for a in (q, dq, ddq))
        out = np.empty_like(q2)
        m, d = self._id_model, self._id_data
        for k in range(q2.shape[0]):
            d.qpos[self._qadr] = q2[k]
            d.qvel[self._dof] = dq2[k]
            d.qacc[self._dof] = ddq2[k]
            mujoco.mj_inverse(m, d)
            out[k] = d.qfrc_inverse[self._dof]
        if friction:
            out = out + np.asarray(self.config.damping) * dq2 + np.asarray(self.config.frictionloss) * np.sign(dq2)
        return out[0] if single else out
