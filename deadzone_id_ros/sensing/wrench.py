"""The wrench at a named frame from the external joint torque (core, no ROS): least squares on the URDF Jacobian.

tau_ext = J(q)^T F for a wrench F = (force [N], moment [N·m]) acting at the origin of the frame, expressed in axes
parallel to the world's (pinocchio ``LOCAL_WORLD_ALIGNED``), so F = (J^T)^+ tau_ext (minimum-norm least squares,
``numpy.linalg.lstsq``; Haddadin et al., IEEE T-RO 2017, Sec. VI "collision identification").

What can be known: J^T maps the 6 (or 3, force only) wrench components onto J joints, so at most rank(J) <= min(J, 6)
directions of F are observable; the others are set to zero by the minimum-norm solution. A component is reported
observable when its unit vector lies in the row space of J^T (the range of J) to within 1 %. With fewer than 6 joints
the usual assumption is a pure force at the frame (``components="force"``, the default for J < 6). Near a singular
pose the smallest singular value of J falls towards zero and the least-squares force along that direction grows
without bound; the estimate then says so (``near_singular``) and that direction is dropped (treated as unobservable).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import RobotDescriptionError

__all__ = ["COMPONENTS", "WrenchEstimate", "WrenchEstimator"]

#: names of the 6 wrench components, in the order of :attr:`WrenchEstimate.wrench`
COMPONENTS = ("fx", "fy", "fz", "mx", "my", "mz")


@dataclass(frozen=True)
class WrenchEstimate:
    """The wrench at the frame at one instant.

    Attributes:
        wrench: (6,) force [N] and moment [N·m] at the frame origin, world-aligned axes (unobservable entries 0).
        observable: (6,) bool per component (:data:`COMPONENTS`).
        singular_values: (r,) of the Jacobian used, descending [m or 1].
        near_singular: the smallest singular value is below ``singular_ratio`` times the largest.
        note: a sentence for users ("" when every modelled component is observable and the pose is regular).
    """

    wrench: np.ndarray
    observable: np.ndarray
    singular_values: np.ndarray
    near_singular: bool
    note: str


class WrenchEstimator:
    """F = (J^T)^+ tau_ext at ``frame`` of a URDF (pinocchio).

    Args:
        urdf_path: the URDF.  joint_names: (J,) order of tau_ext.  frame: a link or joint frame of the URDF.
        components: "force" (3 force components, no moment) or "wrench" (all 6); default "force" when J < 6.
        singular_ratio: sigma_min / sigma_max below which the pose counts as near singular (> 0).
        point: (3,) where on the frame the wrench acts, in the frame's axes [m] (default its origin), e.g. the tip
            of a last link whose URDF frame sits at its joint.
        locked: URDF joint -> position [rad or m] of the joints outside ``joint_names`` (a robot profile's
            ``locked``; the rest at 0): the kinematics the Jacobian is taken on.

    Raises:
        FileNotFoundError, RobotDescriptionError: the URDF cannot be read or lacks a joint (or a locked one) or the
            frame (the message lists the frames).  ValueError: components or singular_ratio invalid.
    """

    def __init__(self, urdf_path: str | Path, joint_names: Sequence[str], frame: str, *,
                 components: str | None = None, singular_ratio: float = 0.02,
                 point: Sequence[float] = (0.0, 0.0, 0.0), locked: Mapping[str, float] | None = None) -> None:
        import pinocchio as pin

        from ..robot import build_reduced_model
        from ..robot.urdf_text import link_frame_id, read_urdf

        self.joint_names = tuple(joint_names)
        self._pin = pin
        #: the controlled joints movable, every other URDF joint locked (its frames kept, as fixed frames)
        self.robot = build_reduced_model(read_urdf(urdf_path), self.joint_names, locked=locked or None,
                                         source=str(urdf_path))
        self.model = self.robot.model
        self.data = self.model.createData()
        if not self.model.existFrame(frame):
            names = sorted({f.name for f in self.model.frames})
            raise RobotDescriptionError(f"{urdf_path}: no frame {frame!r} (frames: {names})")
        self.frame = frame
        #: the URDF's root link: the wrench's axes are parallel to its (world) axes
        self.base_frame = self.model.frames[1].name if len(self.model.frames) > 1 else "universe"
        self._fid = link_frame_id(self.model, frame)  # the link's, also where a joint shares its name
        offset = np.asarray(point, dtype=float)
        if offset.shape != (3,) or not np.all(np.isfinite(offset)):
            raise ValueError(f"point must be 3 finite numbers [m], got {list(point)}")
        if offset.any():  # an operational frame at the point, on the same joint
            parent = self.model.frames[self._fid]
            placement = parent.placement * pin.SE3(np.eye(3), offset)
            self._fid = self.model.addFrame(pin.Frame(f"{frame}_sense_point", parent.parentJoint, self._fid,
                                                      placement, pin.FrameType.OP_FRAME))
            self.data = self.model.createData()
        n = len(self.joint_names)
        components = components or ("force" if n < 6 else "wrench")
        if components not in ("force", "wrench"):
            raise ValueError(f"components = {components!r} must be 'force' or 'wrench'")
        if not singular_ratio > 0:
            raise ValueError(f"singular_ratio = {singular_ratio!r} must be > 0")
        self.components = components
        self.singular_ratio = float(singular_ratio)
        self._rows = 3 if components == "force" else 6
        self._iv = self.robot.idx_v
        # every joint one configuration entry, in order (no continuous joint): q is pinocchio's configuration
        self._direct = bool(np.all(self.robot.nq_joint == 1)
                            and np.array_equal(self.robot.idx_q, np.arange(self.model.nq)))
        self._notes: dict[bytes, str] = {}  # observable -> note, away from singular poses (the note is then fixed)

    def jacobian(self, q: np.ndarray) -> np.ndarray:
        """(6, J) frame Jacobian at q (J,) [rad], world-aligned axes (linear [m], angular [1] rows)."""
        pin = self._pin
        q = np.asarray(q, dtype=float)
        config = q if self._direct else self.robot.configuration(q)[0]
        jac = pin.computeFrameJacobian(self.model, self.data, config, self._fid, pin.LOCAL_WORLD_ALIGNED)
        return np.asarray(jac[:, self._iv])

    def estimate(self, q: np.ndarray, tau_ext: np.ndarray) -> WrenchEstimate:
        """The wrench (see the module docstring) for q (J,) [rad] and tau_ext (J,) [N·m].

        Raises:
            ValueError: q or tau_ext not (J,).
        """
        n = len(self.joint_names)
        q, tau_ext = np.asarray(q, dtype=float), np.asarray(tau_ext, dtype=float)
        for name, a in (("q", q), ("tau_ext", tau_ext)):
            if a.shape != (n,):
                raise ValueError(f"{name} must have shape ({n},), got {a.shape}")
        jac = self.jacobian(q)[: self._rows]  # (m, J); tau = jac^T F
        u, s, vt = np.linalg.svd(jac.T, full_matrices=False)  # jac^T = U S V^T, (J, m)
        keep = s > self.singular_ratio * (s[0] if s.size and s[0] > 0 else 1.0)
        kept = int(np.count_nonzero(keep))
        near_singular = kept < min(n, self._rows)
        observable = np.zeros(6, dtype=bool)
        wrench = np.zeros(6)
        if kept == self._rows:  # J >= m, every direction kept (the usual pose): V is square, no masks needed
            wrench[: self._rows] = vt.T @ ((u.T @ tau_ext) / s)
            observable[: self._rows] = True  # the rows of a square orthogonal V span every axis
        else:
            wrench[: self._rows] = vt[keep].T @ ((u[:, keep].T @ tau_ext) / s[keep])
            basis = vt[keep]  # rows span the observable subspace of F
            observable[: self._rows] = np.linalg.norm(basis, axis=0) > 0.99 if basis.size else False
        if near_singular:
            note = self._note(observable, near_singular, s)
        else:
            key = observable.tobytes()
            if key not in self._notes:
                self._notes[key] = self._note(observable, False, s)
            note = self._notes[key]
        return WrenchEstimate(wrench, observable, s, near_singular, note)

    def _note(self, observable: np.ndarray, near_singular: bool, s: np.ndarray) -> str:
        words = []
        if near_singular:
            ratio = s[-1] / s[0] if s.size and s[0] > 0 else 0.0
            words.append(f"near a singular pose at frame {self.frame!r} (sigma_min/sigma_max = {ratio:.3g} < "
                         f"{self.singular_ratio:g}): the force along the singular direction is not estimated")
        hidden = [c for c, o in zip(COMPONENTS[: self._rows], observable[: self._rows]) if not o]
        if hidden:
            words.append(f"{len(self.joint_names)} joints cannot resolve {', '.join(hidden)} at {self.frame!r} "
                         "(set to the minimum-norm value)")
        if self.components == "force":
            words.append("moments assumed zero (force-only model)")
        return "; ".join(words)
