"""The simulator's ground truth (core, no ROS): its true inverse dynamics, torque ripple and the band a stuck joint
accepts, computed with a friction-free twin of the simulated arm's MuJoCo model (:class:`GroundTruth`, a base of
:class:`~deadzone_id_ros.sim.arm.SimArm`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import mujoco
import numpy as np

from ..models.base import check_joint_arrays
from .geared import inverse_with_friction

if TYPE_CHECKING:
    from .config import SimArmConfig

__all__ = ["GroundTruth"]


class GroundTruth:
    """What the simulator knows that a robot does not: :meth:`inverse_dynamics`, :meth:`ripple` and :meth:`band` of
    the simulated arm. The attributes below are set by :class:`~deadzone_id_ros.sim.arm.SimArm`.

    Attributes:
        joint_names: (J,).  config: the resolved simulator configuration.
    """

    joint_names: tuple[str, ...]
    config: SimArmConfig
    _id_model: mujoco.MjModel
    _id_data: mujoco.MjData
    _qadr: np.ndarray
    _dof: np.ndarray
    _ideal: bool
    _coulomb: np.ndarray
    _ratio: np.ndarray
    _load: np.ndarray
    _load_s: np.ndarray
    _vs: np.ndarray
    _alpha: float
    _ripple_a: np.ndarray
    _ripple_n: np.ndarray

    def inverse_dynamics(self, q: np.ndarray, dq: np.ndarray, ddq: np.ndarray, *, friction: bool = False) -> np.ndarray:
        """Ground-truth inverse dynamics of the simulator (MuJoCo ``mj_inverse``).

        Args:
            q, dq, ddq: (N, J) or (J,) joint position [rad], velocity [rad/s], acceleration [rad/s²].
            friction: add the joint effects: viscous damping ``d*dq``, dry friction sign(dq) F(dq, |tau|) (Stribeck
                and load-dependent, :func:`~deadzone_id_ros.sim.geared.inverse_with_friction`; constant Coulomb
                friction in profile "ideal") and minus the position-periodic ripple. This is the simulator's true
                inverse dynamics on the given inputs: inside the dead zone the true torque is anywhere in the band,
                and delays, filters and the random ripple are not in it.

        Returns:
            tau: same leading shape as the inputs, [N·m]: M(q) ddq + C(q, dq) dq + g(q) (+ joint effects), including
            the rotor armature.

        Raises:
            ValueError: an argument not of shape (N, J) or (J,), or unlike q (names it and both shapes).
        """
        q, dq, ddq = check_joint_arrays(len(self.joint_names), q=q, dq=dq, ddq=ddq)
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
            if self._ideal:
                out = out + np.asarray(self.config.damping) * dq2 + np.asarray(self.config.frictionloss) * np.sign(dq2)
            else:
                base = out + np.asarray(self.config.damping) * dq2 - self.ripple(q2)
                out = inverse_with_friction(base, dq2, self._coulomb, self._ratio, self._load, self._load_s, self._vs,
                                            self._alpha)
        return out[0] if single else out

    def ripple(self, q: np.ndarray) -> np.ndarray:
        """Position-periodic torque ripple A sin(n q) [N·m] at ``q`` (..., J) [rad] (zero when A = 0)."""
        return self._ripple_a * np.sin(self._ripple_n * np.asarray(q, dtype=float))

    def band(self, q: np.ndarray, dq: np.ndarray, ddq: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Centre and half width [N·m] of the torque band a stuck joint accepts, each (N, J) for (N, J) inputs.

        Centre: rigid body + viscous - ripple. Half width: static friction Fs plus the load term at rest,
        Kl + Kls times the centre's magnitude (an approximation: the load is the torque at the centre).
        """
        centre = self.inverse_dynamics(q, dq, ddq) + np.asarray(self.config.damping) * np.asarray(dq) - self.ripple(q)
        half = np.asarray(self.config.frictionloss) + (self._load + self._load_s) * np.abs(centre)
        return centre, half
