"""How much the joint-space inertia of an arm changes over its workspace (pinocchio CRBA at sampled poses).

A decentralized joint controller (per-joint PD on acceleration, a disturbance observer with a nominal inertia
``Jn_j``) sees the arm's inertia through ``M(q)``: with every joint under its own loop the loop gains are scaled by
the eigenvalues of ``diag(Jn) M(q)^-1``. Where ``M(q)`` is nearly singular (two joint axes lined up, light distal
links with no rotor inertia) that matrix has eigenvalues far above one and a loop tuned for ``Jn`` sees a much
lighter arm: with the actuation and sampling delay of a digital loop it chatters. :func:`inertia_spread` measures
this over uniformly sampled poses, so that the derivation of the DOB cutoff (:mod:`.derived`) and the robot check
(:mod:`deadzone_id_ros.experiments.check`) can use it.

``M(q)`` comes from the composite rigid body algorithm (``pinocchio.crba``; R. Featherstone, "Rigid Body Dynamics
Algorithms", Springer 2008, ch. 6) on the reduced model (locked joints merged into their parents), plus the
reflected rotor inertia (``armature``) on its diagonal.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

__all__ = ["INERTIA_SAMPLES", "InertiaSpread", "inertia_spread", "mass_matrices", "noise_acceleration", "sample_poses"]

#: Poses sampled (besides the home pose) to measure the spread of the inertia over the workspace.
INERTIA_SAMPLES = 64


@dataclass(frozen=True)
class InertiaSpread:
    """The joint-space inertia over sampled poses. Arrays are (J,) in the profile's joint order.

    Attributes:
        joint_names: (J,).
        poses: number of poses (home first).
        diagonal_min, diagonal_max: min / max over poses of ``M_jj(q) + armature_j`` [kg·m²].
        effective_min: min over poses of ``1 / (M(q)^-1)_jj`` [kg·m²]: the lightest the arm gets at joint j when the
            other joints are free to move.
        mismatch: max over poses of ``Jn_j (M(q)^-1)_jj`` [1]: how much lighter than its nominal inertia joint j
            can look.
        gain_max: max over poses of the largest eigenvalue of ``diag(Jn) M(q)^-1`` [1]: the loop-gain factor of all
            decentralized loops together.
        gain_participation: (J,) the share of each joint in the eigenvector of that worst eigenvalue (squared
            components of the eigenvector of ``diag(Jn)^1/2 M^-1 diag(Jn)^1/2``, sum 1): which joints chatter first.
        worst_pose: (J,) the pose of ``gain_max`` [rad].
    """

    joint_names: tuple[str, ...]
    poses: int
    diagonal_min: np.ndarray
    diagonal_max: np.ndarray
    effective_min: np.ndarray
    mismatch: np.ndarray
    gain_max: float
    gain_participation: np.ndarray
    worst_pose: np.ndarray

    def leading_joints(self, share: float = 0.2) -> list[str]:
        """The joints with at least ``share`` of the worst eigenvector, largest first."""
        order = np.argsort(-self.gain_participation)
        return [self.joint_names[i] for i in order if self.gain_participation[i] >= share]


def sample_poses(lower: np.ndarray, upper: np.ndarray, home: np.ndarray, n: int = INERTIA_SAMPLES,
                 seed: int = 0) -> np.ndarray:
    """(n + 1, J) poses [rad]: ``home``, then ``n`` drawn uniformly within the limits (a continuous joint, or one
    with infinite limits, within one turn around its home position), from a generator seeded by ``seed``."""
    lo = np.where(np.isfinite(lower), lower, home - np.pi)
    hi = np.where(np.isfinite(upper), upper, home + np.pi)
    rng = np.random.default_rng(seed)
    return np.vstack([home[None, :], rng.uniform(lo, hi, size=(n, len(home)))])


def mass_matrices(urdf_path: str | Path, joint_names: Sequence[str], locked: Mapping[str, float],
                  poses: np.ndarray) -> np.ndarray:
    """(P, J, J) joint-space inertia ``M(q)`` [kg·m²] of the reduced model at each pose (P, J) [rad], without
    armature.

    Raises:
        RobotDescriptionError: the URDF cannot be parsed or lacks a joint (:func:`.reduced.build_reduced_model`).
    """
    import pinocchio as pin

    from .reduced import build_reduced_model
    from .urdf_text import read_urdf

    path = Path(urdf_path)
    reduced = build_reduced_model(read_urdf(path), tuple(joint_names), locked=dict(locked), source=str(path))
    data = reduced.model.createData()
    configs = reduced.configuration(poses)
    idx = np.ix_(reduced.idx_v, reduced.idx_v)
    out = np.empty((len(poses), len(joint_names), len(joint_names)))
    for k, qk in enumerate(configs):
        m = np.asarray(pin.crba(reduced.model, data, qk))
        m = np.triu(m) + np.triu(m, 1).T  # crba fills the upper triangle
        out[k] = m[idx]
    return out


def inertia_spread(joint_names: Sequence[str], masses: np.ndarray, armature: np.ndarray,
                   nominal_inertia: np.ndarray, poses: np.ndarray) -> InertiaSpread:
    """The spread of ``masses + diag(armature)`` over the poses against the nominal inertia.

    Args:
        joint_names: (J,).  masses: (P, J, J) ``M(q)`` without armature [kg·m²] (:func:`mass_matrices`).
        armature: (J,) [kg·m²].  nominal_inertia: (J,) Jn [kg·m²].  poses: (P, J) [rad].

    Raises:
        ValueError: shapes that do not agree, or an inertia matrix that is not positive definite at some pose (a
            joint with no mass behind it and no armature).
    """
    n = len(joint_names)
    if masses.ndim != 3 or masses.shape[1:] != (n, n) or poses.shape != (masses.shape[0], n):
        raise ValueError(f"masses must be (P, {n}, {n}) and poses (P, {n}); got {masses.shape} and {poses.shape}")
    full = masses + np.diag(np.asarray(armature, dtype=float))[None]
    diag = np.diagonal(full, axis1=1, axis2=2)
    try:
        inv = np.linalg.inv(full)
    except np.linalg.LinAlgError as err:
        raise ValueError(f"the joint-space inertia of {list(joint_names)} is singular at some pose: a joint moves no "
                         "mass; give it an armature") from err
    inv_diag = np.diagonal(inv, axis1=1, axis2=2)
    if not np.all(inv_diag > 0):
        raise ValueError(f"the joint-space inertia of {list(joint_names)} is not positive definite at some pose")
    jn = np.asarray(nominal_inertia, dtype=float)
    s = np.sqrt(jn)
    scaled = s[None, :, None] * inv * s[None, None, :]
    eig, vec = np.linalg.eigh(scaled)
    k = int(np.argmax(eig[:, -1]))
    v = vec[k, :, -1]
    return InertiaSpread(tuple(joint_names), len(poses), diag.min(axis=0), diag.max(axis=0),
                         (1.0 / inv_diag).min(axis=0), (jn[None] * inv_diag).max(axis=0), float(eig[k, -1]),
                         v**2 / float(np.sum(v**2)), poses[k].copy())


def noise_acceleration(masses: np.ndarray, armature: np.ndarray, gains: np.ndarray) -> np.ndarray:
    """(J,) the largest over the poses of the RMS joint acceleration that unit white noise on every joint's torque
    command, scaled per joint by ``gains``, gives [rad/s² per unit of noise]: ``sqrt(sum_k ((M(q) +
    diag(armature))^-1_jk gains_k)^2)``, the row norms of ``M^-1 diag(gains)``, independent noise on each joint.

    With ``gains = 1`` [1] this is the acceleration of 1 N·m torque noise; with ``gains = Jn (kd + g)`` [kg·m²/s] that
    of 1 rad/s velocity noise fed through a loop's kd and its DOB (cutoff g) above their corner frequencies, where
    the DOB passes ``Jn g`` times the velocity noise and the PD ``Jn kd`` times it. Loop resonances can raise it a
    few times (:data:`~deadzone_id_ros.robot.derived.NOISE_ACCELERATION_FRACTION` leaves that margin).

    Args:
        masses: (P, J, J) ``M(q)`` without armature [kg·m²] (:func:`mass_matrices`).  armature: (J,) [kg·m²].
        gains: (J,) the noise's gain into each joint's torque.

    Raises:
        ValueError: shapes that do not agree.
    """
    n = masses.shape[-1]
    if masses.ndim != 3 or masses.shape[1] != n or np.shape(armature) != (n,) or np.shape(gains) != (n,):
        raise ValueError(f"masses must be (P, J, J) and armature, gains (J,); got {masses.shape}, "
                         f"{np.shape(armature)}, {np.shape(gains)}")
    inv = np.linalg.inv(masses + np.diag(np.asarray(armature, dtype=float))[None])
    rows = np.sqrt(np.sum((inv * np.asarray(gains, dtype=float)[None, None, :]) ** 2, axis=2))
    return rows.max(axis=0)
