"""Is a model's arm the controller's arm? The nominal rigid bodies of the two URDFs compared (core, no ROS).

Joint names and units do not identify an arm: two arms of one product line, or an arm with and without its gripper,
share joint names. A model that carries the URDF it was trained with (an ``rbd`` or ``hybrid`` artifact's
robot.urdf) is compared with the controller's URDF by what matters to a torque command: the nominal rigid-body
torques (pinocchio RNEA; Featherstone, "Rigid Body Dynamics Algorithms", 2008) of both at the same
:data:`ARM_POSES` seeded states within the controller's joint limits (q uniform in the limits, [-pi, pi] for a
continuous joint; dq uniform in [-1, 1] rad/s; ddq uniform in [-2, 2] rad/s²), both reduced to the controller's
joints with the model's locked joints where it locked them (:func:`~deadzone_id_ros.robot.build_reduced_model`).

The rule: per joint, the RMS torque difference over the poses relative to the scale of that joint's torque, the
larger of the controller URDF's RMS torque and 1% of its effort limit (a joint that carries almost nothing is not
judged on noise). Above :data:`ARM_TOLERANCE` (10%) the model describes another arm and is refused; from
:data:`ARM_NOTE` (1%) up to the tolerance it is accepted and the difference is said. The refusal names the joint,
the difference [N·m and %], and the bodies (mass [kg], centre of mass, rotational inertia) and joints (origin, axis)
whose URDF entries differ. A model without a URDF (an MLP artifact, an ONNX network) cannot be compared; the check
says so and accepts it (there is nothing to compare; its joints and units are still checked). A model that carries a
URDF but cannot be compared is refused with the reason: the controller's URDF cannot be read (it is read as every
URDF is, :func:`~deadzone_id_ros.robot.urdf_text.read_urdf`, so a xacro file is expanded, not parsed raw), or a URDF
cannot be parsed or lacks a joint. Accepting there would let a model of another arm through exactly when the check
could not look; the model's URDF is its own file (robot.urdf), so the refusal points at something to repair.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ..errors import RobotDescriptionError

if TYPE_CHECKING:
    import pinocchio

    from ..robot.description import RobotDescription

__all__ = ["ARM_NOTE", "ARM_POSES", "ARM_TOLERANCE", "ArmComparison", "ArmReference", "ModelUrdf", "arm_verdict",
           "compare_arms", "model_urdf"]

#: Relative RMS difference of the nominal torque of a joint above which a model describes another arm (refused).
ARM_TOLERANCE = 0.10
#: Relative RMS difference from which an accepted model's difference is reported.
ARM_NOTE = 0.01
#: Number of seeded states the two rigid bodies are compared on.
ARM_POSES = 64
_MASS_TOL = 1e-3  # relative, for naming a body whose URDF mass differs
_LENGTH_TOL = 1e-4  # [m], for naming a joint origin or centre of mass that moved
_INERTIA_TOL = 1e-3  # relative to the larger rotational inertia


@dataclass(frozen=True)
class ModelUrdf:
    """The URDF a model was trained with, as its rigid-body part holds it.

    Attributes:
        urdf_xml: the URDF text.  joint_map: the model's joint -> URDF joint where they differ.  locked: URDF joint
        -> position [rad or m] of the joints its rigid body locked.  source: where it came from, for messages.
    """

    urdf_xml: str
    joint_map: Mapping[str, str]
    locked: Mapping[str, float]
    source: str


def model_urdf(model: object) -> ModelUrdf | None:
    """The URDF a model carries (:class:`~deadzone_id_ros.models.rbd.regressor.RigidBodyRegressor` of an
    ``rbd``/``hybrid`` artifact, directly or as ``model.rbd``), or None (an MLP-only model, an ONNX network, a test
    double)."""
    rbd = getattr(model, "rbd", None)
    reg = getattr(rbd if rbd is not None else model, "regressor", None)
    xml = getattr(reg, "urdf_xml", None)
    if not isinstance(xml, str):
        return None
    meta = getattr(model, "metadata", None) or {}
    source = "the model's robot.urdf" if isinstance(meta, dict) and meta.get("rbd") else "the model's URDF"
    locked = {str(k): float(v) for k, v in dict(getattr(reg, "locked", {}) or {}).items() if np.isfinite(v)}
    return ModelUrdf(xml, dict(getattr(reg, "joint_map", {}) or {}), locked, source)


@dataclass(frozen=True)
class ArmComparison:
    """The nominal rigid bodies of a model's URDF and the controller's URDF compared (:func:`compare_arms`).

    Attributes:
        joint_names: (J,) the controller's joints.
        rms_difference: (J,) RMS over the poses of tau_model - tau_controller [N·m].
        scale: (J,) per joint, the larger of the controller URDF's RMS torque and 1% of the effort limit [N·m].
        differences: the URDF entries that differ, one line each (body mass, centre of mass, inertia; joint
            origin, axis), empty when none does.
        n_poses: number of states compared.
        model_source, reference_source: the two URDFs' names.
    """

    joint_names: tuple[str, ...]
    rms_difference: np.ndarray
    scale: np.ndarray
    differences: tuple[str, ...]
    n_poses: int
    model_source: str
    reference_source: str

    @property
    def relative(self) -> np.ndarray:
        """(J,) RMS difference / scale (dimensionless)."""
        return np.asarray(self.rms_difference / self.scale)

    @property
    def worst(self) -> int:
        """Index of the joint with the largest relative difference."""
        return int(np.argmax(self.relative))

    def describe(self) -> str:
        """One sentence: each joint whose difference is at least :data:`ARM_NOTE` (worst first: N·m RMS and % of its
        scale), over how many states, and the URDF entries that differ."""
        rel = self.relative
        order = [j for j in np.argsort(-rel, kind="stable") if rel[j] >= ARM_NOTE] or [self.worst]
        joints = ", ".join(f"{self.joint_names[j]} by {self.rms_difference[j]:.4g} N·m RMS ({rel[j]:.0%} of its "
                           f"{self.scale[j]:.4g} N·m)" for j in order)
        text = (f"the nominal rigid-body torque of {self.model_source} differs from the controller's URDF "
                f"({self.reference_source}) at {joints} over {self.n_poses} states within the joint limits")
        if self.differences:
            shown = list(self.differences[:6])
            more = len(self.differences) - len(shown)
            text += "; URDF differences: " + "; ".join(shown) + (f"; and {more} more" if more > 0 else "")
        return text


def _body_name(model: pinocchio.Model, joint_id: int) -> str:
    """The first URDF link carried by joint ``joint_id`` of a pinocchio model (the joint's name when none)."""
    import pinocchio as pin

    for frame in model.frames:
        if frame.type == pin.FrameType.BODY and frame.parentJoint == joint_id:
            return str(frame.name)
    return f"body of {model.names[joint_id]}"


def _urdf_differences(mine: pinocchio.Model, theirs: pinocchio.Model) -> list[str]:
    """The bodies and joints of two reduced pinocchio models (same joint names) whose URDF entries differ."""
    out: list[str] = []
    for jid in range(1, mine.njoints):
        name = str(mine.names[jid])
        if not theirs.existJointName(name):
            continue
        kid = theirs.getJointId(name)
        a, b = mine.inertias[jid], theirs.inertias[kid]
        body = _body_name(theirs, kid)
        if abs(a.mass - b.mass) > _MASS_TOL * max(a.mass, b.mass, 1e-9):
            ratio = f" (x{a.mass / b.mass:.3g})" if b.mass > 0 else ""
            out.append(f"{body} (moved by {name}) mass {a.mass:.4g} kg in the model's URDF, {b.mass:.4g} kg in the "
                       f"controller's{ratio}")
        if np.linalg.norm(a.lever - b.lever) > _LENGTH_TOL:
            out.append(f"{body} (moved by {name}) centre of mass {np.round(a.lever, 4).tolist()} m vs "
                       f"{np.round(b.lever, 4).tolist()} m")
        big = max(float(np.abs(a.inertia).max()), float(np.abs(b.inertia).max()), 1e-12)
        if np.abs(a.inertia - b.inertia).max() > _INERTIA_TOL * big:
            da, db = (np.round(np.diag(x.inertia), 6).tolist() for x in (a, b))
            out.append(f"{body} (moved by {name}) rotational inertia diagonal {da} vs {db} kg·m²")
        pa, pb = mine.jointPlacements[jid], theirs.jointPlacements[kid]
        if (np.linalg.norm(pa.translation - pb.translation) > _LENGTH_TOL
                or np.abs(pa.rotation - pb.rotation).max() > 1e-6):
            out.append(f"joint {name} origin {np.round(pa.translation, 4).tolist()} m vs "
                       f"{np.round(pb.translation, 4).tolist()} m (or its rotation)")
        ka, kb = mine.joints[jid].shortname(), theirs.joints[kid].shortname()
        if ka != kb:
            out.append(f"joint {name} is {ka} in the model's URDF, {kb} in the controller's")
    return out


def compare_arms(model: ModelUrdf, reference_xml: str, joint_names: Sequence[str], lower: np.ndarray,
                 upper: np.ndarray, effort_limit: np.ndarray, *, reference_source: str = "<urdf>",
                 n_poses: int = ARM_POSES, seed: int = 0) -> ArmComparison:
    """Compare the nominal rigid body of ``model``'s URDF with the controller's URDF ``reference_xml``.

    Args:
        model: the URDF the model was trained with (:func:`model_urdf`).
        reference_xml: the controller's URDF text; its joints are ``joint_names``.
        joint_names: (J,) the controller's joints (the model's joints, by name).
        lower, upper: (J,) the controller's position limits [rad] (infinite for a continuous joint).
        effort_limit: (J,) the controller's effort limits [N·m] (sets the floor of the scale).
        reference_source: the controller URDF's name, for messages.
        n_poses: number of seeded states; seed: their seed.

    Returns:
        the comparison (:class:`ArmComparison`).

    Raises:
        RobotDescriptionError: either URDF cannot be parsed or lacks a joint (from
            :func:`~deadzone_id_ros.robot.build_reduced_model`).
    """
    import pinocchio as pin

    from ..robot.reduced import build_reduced_model
    from ..robot.urdf_text import pinocchio_model

    names = tuple(joint_names)
    n = len(names)
    mine = build_reduced_model(model.urdf_xml, names, model.joint_map or None, model.locked or None, model.source)
    full = pinocchio_model(reference_xml, reference_source)
    # the controller's URDF holds the joints the model locked where the model locked them (same joint names)
    movable = {str(full.names[k]) for k in range(1, full.njoints) if full.joints[k].nv > 0}
    locked = {k: v for k, v in model.locked.items() if k in movable and k not in names}
    theirs = build_reduced_model(reference_xml, names, None, locked or None, reference_source)
    rng = np.random.default_rng(seed)
    lo = np.where(np.isfinite(lower), lower, -np.pi)
    hi = np.where(np.isfinite(upper), upper, np.pi)
    q = lo + (hi - lo) * rng.uniform(size=(n_poses, n))
    dq = rng.uniform(-1.0, 1.0, size=(n_poses, n))
    ddq = rng.uniform(-2.0, 2.0, size=(n_poses, n))
    tau = []
    for robot in (mine, theirs):
        data = robot.model.createData()
        qs = robot.configuration(q)
        out = np.empty((n_poses, n))
        v = np.zeros(robot.model.nv)
        a = np.zeros(robot.model.nv)
        for k in range(n_poses):
            v[robot.idx_v], a[robot.idx_v] = dq[k], ddq[k]
            out[k] = pin.rnea(robot.model, data, qs[k], v, a)[robot.idx_v]
        tau.append(out)
    diff = np.sqrt(np.mean((tau[0] - tau[1]) ** 2, axis=0))
    scale = np.maximum(np.sqrt(np.mean(tau[1] ** 2, axis=0)), 0.01 * np.asarray(effort_limit, dtype=float))
    scale = np.where(scale > 0, scale, 1.0)
    return ArmComparison(names, diff, scale, tuple(_urdf_differences(mine.model, theirs.model)), n_poses,
                         model.source, reference_source)


@dataclass(frozen=True)
class ArmReference:
    """The controller's arm, what a model is compared with.

    Attributes:
        urdf_xml: the controller's URDF text, xacro expanded (None: not readable; a model that carries a URDF is
            then refused, naming ``error``).  source: its file name.  lower, upper: (J,) position limits [rad].
        error: why ``urdf_xml`` is None ("" when it is read).
    """

    urdf_xml: str | None
    source: str
    lower: np.ndarray
    upper: np.ndarray
    error: str = ""

    @classmethod
    def of(cls, description: RobotDescription) -> ArmReference:
        """The arm of a :class:`~deadzone_id_ros.robot.RobotDescription` (``urdf_path``, ``lower``, ``upper``), its
        URDF read by :func:`~deadzone_id_ros.robot.urdf_text.read_urdf` (a xacro file expanded)."""
        from ..robot.urdf_text import read_urdf

        xml: str | None = None
        error = ""
        try:
            xml = read_urdf(description.urdf_path)
        except (OSError, UnicodeDecodeError, RobotDescriptionError) as err:
            error = str(err)
        return cls(xml, str(description.urdf_path), np.asarray(description.lower, dtype=float),
                   np.asarray(description.upper, dtype=float), error)


def arm_verdict(model: object, reference: ArmReference, joint_names: Sequence[str], effort_limit: np.ndarray
                ) -> tuple[bool, str]:
    """(refuse, text): does ``model`` describe the controller's arm ``reference`` (:func:`compare_arms`, the rule
    in the module docstring)?

    Args:
        model: the candidate model (its URDF found by :func:`model_urdf`).
        reference: the controller's arm.  joint_names: (J,) its joints.  effort_limit: (J,) its effort limits [N·m].

    Returns:
        (True, why) when a joint's relative difference exceeds :data:`ARM_TOLERANCE`, or when the model carries a
        URDF and the comparison fails (the controller's URDF cannot be read, a URDF cannot be parsed or lacks a
        joint: the reason and what to do); else (False, a note: the difference when at least :data:`ARM_NOTE`,
        "same arm" below it, or "arm not compared" for a model that carries no URDF). Never raises for a model or
        URDF it cannot read.
    """
    urdf = model_urdf(model)
    if urdf is None:
        return False, "arm not compared (the model carries no URDF)"
    fix = ("; a model whose arm cannot be checked is refused: repair the URDF named, or run the controller with the "
           "URDF the model was trained for")
    if reference.urdf_xml is None:
        return True, (f"cannot compare {urdf.source} with the controller's arm: cannot read the controller's URDF "
                      f"{reference.source} ({reference.error}){fix}")
    try:
        cmp = compare_arms(urdf, reference.urdf_xml, joint_names, reference.lower, reference.upper, effort_limit,
                           reference_source=reference.source)
    except RobotDescriptionError as err:
        return True, f"cannot compare {urdf.source} with the controller's arm: {err}{fix}"
    worst = cmp.relative[cmp.worst]
    if worst > ARM_TOLERANCE:
        return True, (f"the model was trained for another arm: {cmp.describe()}; tolerance {ARM_TOLERANCE:.0%}. "
                      "Train a model on this arm's data with its URDF, or run the controller with the URDF the "
                      "model was trained for")
    if worst >= ARM_NOTE:
        return False, f"same arm within the {ARM_TOLERANCE:.0%} tolerance, but {cmp.describe()}"
    return False, (f"same arm (nominal torques within {ARM_NOTE:.0%} of the controller's URDF on {cmp.n_poses} "
                   "states)")
