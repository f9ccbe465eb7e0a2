"""Check a recording against its robot's URDF before training: data that contradicts the robot is caught early.

A model trained on effort with a flipped sign convention on one joint, on positions in another unit or offset, or on
effort scaled by a forgotten gear ratio trains without a word and gives an artifact the controller loads (drake
issue 13374). The URDF's nominal rigid body tells which way and roughly how hard each joint must push, so per joint:

- **sign and scale of the torque**: the recorded effort is regressed on the URDF's nominal inverse dynamics
  ``tau_nom = RNEA(q, dq, ddq)`` (pinocchio), with a Coulomb and a viscous column so that friction does not bias the
  slope: ``tau ≈ k tau_nom + c + f_c sign(dq) + f_v dq``. Only joints whose nominal torque varies enough, and whose
  correlation with the effort is strong (``|r| >= 0.7``, partial correlation after the friction columns), are judged.
  ``k < 0`` is an opposite sign convention: refused, the fix is ``--torque-constant JOINT:-1``. Effort that is a
  sign-and-magnitude register (Feetech's raw Present_Load, :mod:`deadzone_id_ros.data.sign_bit`) is refused as such
  before that, with ``--effort-sign-bit JOINT:10`` as the fix (flipping its sign does not undo the offset).
  ``k`` outside ``[1/3, 3]`` with effort in N·m is a scale the URDF's masses cannot explain (gear ratio, torque
  constant, unit): warned, with the constant that would fix it.
- **position range**: recorded positions beyond the URDF's limits by more than :data:`POSITION_MARGIN` (a wrong
  joint map, an encoder offset, or degrees) are warned, with the range and the limits; continuous joints have none.

The velocity field against the derivative of position is the loader's own check
(:func:`deadzone_id_ros.data.defects.check_velocity`), applied to every bag before this runs.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from .reduced import ReducedRobot

__all__ = ["POSITION_MARGIN", "RecordingFinding", "check_recording"]

POSITION_MARGIN = 0.1  # [rad] positions this far beyond a URDF limit are not calibration slack
# |partial correlation| of effort with the nominal torque needed to judge sign and scale. Measured on real
# recordings with their published URDFs: KUKA LWR4+ joints 1-3 +0.87..+0.99, its yaw joint 0 -0.56 (inertial torque
# only, buried in friction and noise); DFKI pendulum -0.31..+0.74; the simulated arm +0.61..+0.98; a flipped joint of
# the simulated arm -0.97. 0.7 judges the clear cases and leaves the yaw joint of the KUKA alone.
MIN_CORRELATION = 0.7
SCALE_RANGE = (1.0 / 3.0, 3.0)  # slopes the URDF's nominal masses can plausibly be off by
MIN_NOMINAL_STD = 0.05  # [N·m] a joint whose nominal torque varies less than this is not judged
MAX_ROWS = 20000  # rows used for the regression (evenly subsampled)


@dataclass(frozen=True)
class RecordingFinding:
    """One contradiction between a recording and its URDF.

    Attributes:
        joint: the data joint.  kind: "encoding", "sign", "scale" or "position_range".
        refuse: True when training must not go on (a sign), False for a warning.
        evidence: the figures, in one sentence.  fix: the flag or action that fixes it.
    """

    joint: str
    kind: str
    refuse: bool
    evidence: str
    fix: str

    def message(self) -> str:
        """One line for the log or an error: joint, evidence, fix."""
        return f"joint {self.joint}: {self.evidence}; {self.fix}"


def check_recording(robot: ReducedRobot, q: np.ndarray, dq: np.ndarray, ddq: np.ndarray, tau: np.ndarray,
                    effort_in_nm: Mapping[str, bool] | None = None) -> list[RecordingFinding]:
    """Compare a recording with the URDF's nominal rigid body and limits (module docstring: what and why).

    Args:
        robot: the reduced pinocchio model of the recorded joints (:func:`~.reduced.build_reduced_model`).
        q, dq, ddq: (N, J) [rad, rad/s, rad/s²] in ``robot.joint_names`` order.
        tau: (N, J) recorded effort (converted by any torque constants) in the same order.
        effort_in_nm: joint -> whether its effort is in N·m; the scale is judged only for those (default: all).

    Returns:
        the findings, sign refusals first; empty when the recording agrees with the URDF.

    Raises:
        ValueError: arrays of different shapes or not (N, J).
    """
    q, dq, ddq, tau = (np.asarray(a, dtype=np.float64) for a in (q, dq, ddq, tau))
    n_joints = len(robot.joint_names)
    for name, arr in (("q", q), ("dq", dq), ("ddq", ddq), ("tau", tau)):
        if arr.ndim != 2 or arr.shape != (len(q), n_joints):
            raise ValueError(f"{name} must have shape ({len(q)}, {n_joints}); got {arr.shape}")
    rows = np.unique(np.linspace(0, len(q) - 1, min(len(q), MAX_ROWS)).astype(int)) if len(q) else np.zeros(0, int)
    ok = np.all(np.isfinite(q[rows]) & np.isfinite(dq[rows]) & np.isfinite(ddq[rows]) & np.isfinite(tau[rows]), 1)
    rows = rows[ok]
    findings = [f for j in range(n_joints)
                for f in _torque_findings(robot.joint_names[j], _nominal(robot, q[rows], dq[rows], ddq[rows])[:, j],
                                          tau[rows, j], dq[rows, j], (effort_in_nm or {}).get(robot.joint_names[j],
                                                                                                True))]
    findings += _position_findings(robot, q)
    return sorted(findings, key=lambda f: not f.refuse)


def _nominal(robot: ReducedRobot, q: np.ndarray, dq: np.ndarray, ddq: np.ndarray) -> np.ndarray:
    """tau_nom (N, J) [N·m]: pinocchio RNEA of the URDF's nominal inertials at the recorded states."""
    import pinocchio as pin

    data = robot.model.createData()
    configs = robot.configuration(q)
    v = np.zeros(robot.model.nv)
    a = np.zeros(robot.model.nv)
    out = np.empty_like(q)
    for i in range(len(q)):
        v[robot.idx_v], a[robot.idx_v] = dq[i], ddq[i]
        out[i] = pin.rnea(robot.model, data, configs[i], v, a)[robot.idx_v]
    return out


def _torque_findings(joint: str, nominal: np.ndarray, effort: np.ndarray, dq: np.ndarray,
                     in_nm: bool) -> list[RecordingFinding]:
    from ..data.sign_bit import sign_bit_evidence, sign_bit_fix

    encoded = sign_bit_evidence(effort)
    if encoded:
        return [RecordingFinding(joint, "encoding", True, encoded, sign_bit_fix([joint]))]
    if len(nominal) < 50 or np.std(nominal) < MIN_NOMINAL_STD:
        return []
    friction = np.column_stack([np.ones_like(dq), np.tanh(dq / max(0.05 * np.std(dq), 1e-6)), dq])
    # partial regression: remove the friction columns from both sides, then slope and correlation of what remains
    proj = friction @ np.linalg.lstsq(friction, np.column_stack([nominal, effort]), rcond=None)[0]
    x, y = nominal - proj[:, 0], effort - proj[:, 1]
    sx, sy = float(np.linalg.norm(x)), float(np.linalg.norm(y))
    if sx == 0.0 or sy == 0.0:
        return []
    r = float(x @ y / (sx * sy))
    k = float(x @ y / (sx * sx))
    if abs(r) < MIN_CORRELATION:
        return []
    evidence = (f"the recorded effort is {k:.3g} x the URDF's nominal rigid-body torque (partial correlation "
                f"{r:+.2f} over {len(nominal)} samples, friction removed)")
    if k < 0:
        encoded = sign_bit_evidence(effort, falls_with_torque=True)
        if encoded:
            return [RecordingFinding(joint, "encoding", True, encoded, sign_bit_fix([joint]))]
        return [RecordingFinding(joint, "sign", True, evidence + ": its sign convention is the opposite of the URDF's",
                                 f"pass --torque-constant {joint}:-1 to flip it (or fix the driver's sign), or "
                                 f"--urdf-check warn if the URDF's joint axis is the wrong one")]
    if in_nm and not SCALE_RANGE[0] <= k <= SCALE_RANGE[1]:
        return [RecordingFinding(joint, "scale", False, evidence + ": more than the URDF's masses can be off by",
                                 f"if the URDF is right, pass --torque-constant {joint}:{1.0 / k:.3g} (a gear ratio, "
                                 f"torque constant or unit the effort was not converted by)")]
    return []


def _position_findings(robot: ReducedRobot, q: np.ndarray) -> list[RecordingFinding]:
    out = []
    lower, upper = np.asarray(robot.model.lowerPositionLimit), np.asarray(robot.model.upperPositionLimit)
    for j, name in enumerate(robot.joint_names):
        if robot.nq_joint[j] != 1:  # a continuous joint: no position limit
            continue
        lo, hi = float(lower[robot.idx_q[j]]), float(upper[robot.idx_q[j]])
        if not (np.isfinite(lo) and np.isfinite(hi)) or hi <= lo:
            continue
        col = q[:, j][np.isfinite(q[:, j])]
        if not len(col):
            continue
        qmin, qmax = float(col.min()), float(col.max())
        beyond = max(lo - qmin, qmax - hi)
        if beyond > POSITION_MARGIN:
            frac = float(np.mean((col < lo - POSITION_MARGIN) | (col > hi + POSITION_MARGIN)))
            hint = ("the range is wider than a full turn: positions in degrees?" if qmax - qmin > 2 * np.pi
                    else "an encoder offset, or another joint's data (check --joint-map)")
            out.append(RecordingFinding(
                name, "position_range", False,
                f"recorded positions span [{qmin:.3f}, {qmax:.3f}] rad, {beyond:.3f} rad beyond the URDF limits "
                f"[{lo:.3f}, {hi:.3f}] ({100 * frac:.1f}% of samples)", hint))
    return out

