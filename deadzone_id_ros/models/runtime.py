"""Runtime inverse-dynamics models, as the controller, the offline simulation and replay load them.

All implement :class:`deadzone_id_ros.models.base.InverseDynamicsModel` (``joint_names`` and
``predict(q, dq, ddq) -> tau``) and are cheap for a single sample (called every control tick):

- :class:`ZeroModel` ("none"): tau = 0.
- :class:`NominalRigidBodyModel` ("rbd"): recursive Newton-Euler (pinocchio ``rnea``; Featherstone, "Rigid Body Dynamics
  Algorithms", 2008) on the URDF's nominal inertial parameters plus what the robot profile knows beyond the URDF: the
  rotor armature on the mass-matrix diagonal (``armature * ddq``), and friction
  ``damping * dq + friction * tanh(dq / friction_velocity)`` (a smooth sign, so velocity noise around zero does not
  chatter the command) where the profile gives it (or the URDF ``<dynamics>`` with ``model_friction``). Without the
  armature a geared servo's nominal model misses most of its inertia (the SO-101's STS3215: 0.0284 kg·m² per joint
  against diag M(q_home) of 0.00004-0.016 kg·m², ``deadzone-id robot show so101``), and computed torque with it
  tracked worse than no model (issue 39).
- :class:`OnnxModel` ("learned"): an ONNX network in the project's format (:mod:`deadzone_id_ros.models.onnx_format`:
  inputs q, dq, ddq; normalization inside; joint names in the metadata) run by onnxruntime on one thread;
  :class:`RigidBodyPlusOnnx` adds a hybrid artifact's rigid-body part to its residual network.

:func:`load_model` builds the one a controller configuration asks for (``model``, ``model_path``, ...); for a
directory it loads the project's model artifact (:func:`deadzone_id_ros.models.artifact.load_artifact`). The rigid-body
model identified from data is a different class, :class:`deadzone_id_ros.models.rbd.model.RigidBodyModel`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import numpy as np

from ..errors import ArtifactError, ConfigError
from .base import InverseDynamicsModel, check_joint_arrays
from .history import per_tick_refusal

if TYPE_CHECKING:
    from .rbd import RigidBodyModel

__all__ = ["ModelSettings", "NominalRigidBodyModel", "OnnxModel", "RigidBodyPlusOnnx", "RigidBodySettings", "ZeroModel",
           "load_model", "load_onnx"]


class ZeroModel:
    """The "none" model: tau = 0 for the joints ``joint_names``."""

    def __init__(self, joint_names: Sequence[str]) -> None:
        self.joint_names = tuple(joint_names)

    def predict(self, q: np.ndarray, dq: np.ndarray, ddq: np.ndarray) -> np.ndarray:
        """Return zeros shaped like ``q`` [N·m]; raises ValueError on a shape mismatch."""
        q, _, _ = check_joint_arrays(len(self.joint_names), q=q, dq=dq, ddq=ddq)
        return np.zeros_like(q)


class NominalRigidBodyModel:
    """Nominal rigid-body inverse dynamics of a URDF (pinocchio RNEA), optionally with the URDF friction.

    Joints of the URDF outside ``joint_names`` are locked (pinocchio ``buildReducedModel``,
    :func:`~deadzone_id_ros.robot.build_reduced_model`) at their ``locked`` position (a robot profile's ``locked``:
    where the simulator welds them, :mod:`deadzone_id_ros.sim.locked`), 0 where it gives none, with zero velocity.

    Args:
        urdf_path: the URDF.
        joint_names: (J,) joints, in the order of every array in and out.
        friction: add ``damping * dq + friction * tanh(dq / friction_velocity)`` from the URDF ``<dynamics>`` tags
            (``coulomb`` / ``viscous`` replace the URDF's values where given).
        friction_velocity: smoothing velocity of the sign function [rad/s] (> 0).
        armature: (J,) rotor inertia added to the diagonal [kg·m²] (URDFs carry none); default zeros.
        coulomb: (J,) Coulomb friction [N·m] (a robot profile's ``frictionloss``); given, friction is on.
        viscous: (J,) viscous friction [N·m·s/rad] (a robot profile's ``damping``); given, friction is on.
        locked: URDF joint -> position [rad or m] of joints outside ``joint_names`` (a robot profile's ``locked``).

    Raises:
        FileNotFoundError: the URDF does not exist.
        RobotDescriptionError: the URDF cannot be parsed or lacks a joint; ``locked`` names a joint the URDF lacks or
            a controlled one.
        ValueError: friction_velocity <= 0 or armature, coulomb or viscous of the wrong length.
    """

    def __init__(
        self,
        urdf_path: str | Path,
        joint_names: Sequence[str],
        *,
        friction: bool = False,
        friction_velocity: float = 0.01,
        armature: Sequence[float] | None = None,
        coulomb: Sequence[float] | None = None,
        viscous: Sequence[float] | None = None,
        locked: Mapping[str, float] | None = None,
    ) -> None:
        import pinocchio as pin

        from ..robot import build_reduced_model, load_robot_description
        from ..robot.urdf_text import read_urdf

        self.description = load_robot_description(urdf_path, joint_names)
        self.joint_names = tuple(joint_names)
        if not friction_velocity > 0:
            raise ValueError(f"friction_velocity = {friction_velocity!r} must be > 0")
        self._pin = pin
        #: the reduced robot: ``joint_names`` movable, every other URDF joint locked where ``locked`` puts it
        self.robot = build_reduced_model(read_urdf(urdf_path), self.joint_names, locked=locked or None,
                                         source=str(urdf_path))
        self.model = self.robot.model
        self.data = self.model.createData()
        self._idx_q, self._idx_v = self.robot.idx_q, self.robot.idx_v
        self._one = bool(np.all(self.robot.nq_joint == 1))  # no continuous joint: q goes straight into the config
        if armature is not None:
            arm = np.asarray(armature, dtype=float)
            if arm.shape != (len(self.joint_names),):
                raise ValueError(f"armature must have {len(self.joint_names)} values, got {arm.shape}")
            self.model.armature[self._idx_v] = arm
        self._q = pin.neutral(self.model)
        self._v = np.zeros(self.model.nv)
        self._a = np.zeros(self.model.nv)
        self.friction = friction or coulomb is not None or viscous is not None
        self.friction_velocity = float(friction_velocity)
        self._coulomb = self._per_joint("coulomb", coulomb, self.description.friction)
        self._viscous = self._per_joint("viscous", viscous, self.description.damping)

    def _per_joint(self, name: str, values: Sequence[float] | None, fallback: np.ndarray) -> np.ndarray:
        """(J,) ``values`` as floats, or a copy of ``fallback`` when None; ValueError on the wrong length."""
        if values is None:
            return np.asarray(fallback, dtype=float).copy()
        out = np.asarray(values, dtype=float)
        if out.shape != (len(self.joint_names),):
            raise ValueError(f"{name} must have {len(self.joint_names)} values, got {out.shape}")
        return out

    def set_configuration(self, q: np.ndarray) -> np.ndarray:
        """Write joint positions q (J,) [rad or m] into the workspace configuration (cos/sin for a continuous joint)
        and return it (nq,)."""
        if self._one:
            self._q[self._idx_q] = q
        else:
            self._q[:] = self.robot.configuration(q)[0]
        return self._q

    def predict(self, q: np.ndarray, dq: np.ndarray, ddq: np.ndarray) -> np.ndarray:
        """tau (J,) or (N, J) [N·m] = M(q) ddq + C(q, dq) dq + g(q) (+ friction); raises ValueError on shapes."""
        q, dq, ddq = check_joint_arrays(len(self.joint_names), q=q, dq=dq, ddq=ddq)
        if q.ndim == 1:  # one sample (every control tick): no batch loop
            self.set_configuration(q)
            self._v[self._idx_v] = dq
            self._a[self._idx_v] = ddq
            tau = self._pin.rnea(self.model, self.data, self._q, self._v, self._a)[self._idx_v]
            if self.friction:
                tau += self.friction_torque(dq)
            return tau
        single = False
        q2, dq2, ddq2 = (np.atleast_2d(a) for a in (q, dq, ddq))
        out = np.empty_like(q2)
        for k in range(q2.shape[0]):
            self.set_configuration(q2[k])
            self._v[self._idx_v] = dq2[k]
            self._a[self._idx_v] = ddq2[k]
            out[k] = self._pin.rnea(self.model, self.data, self._q, self._v, self._a)[self._idx_v]
        if self.friction:
            out += self.friction_torque(dq2)
        return out[0] if single else out

    def friction_torque(self, dq: np.ndarray) -> np.ndarray:
        """The friction part of :meth:`predict`, (J,) or (N, J) [N·m] at velocity ``dq`` [rad/s]:
        ``viscous * dq + coulomb * tanh(dq / friction_velocity)``, zeros for a model without friction."""
        dq = np.asarray(dq, dtype=float)
        if not self.friction:
            return np.zeros_like(dq)
        return self._viscous * dq + self._coulomb * np.tanh(dq / self.friction_velocity)

    def mass_matrix_diagonal(self, q: np.ndarray) -> np.ndarray:
        """diag M(q) (J,) [kg·m²] at one configuration q (J,) [rad] (pinocchio CRBA), e.g. to choose Jn."""
        self._q[self._idx_q] = np.asarray(q, dtype=float)
        m = self._pin.crba(self.model, self.data, self._q)
        return np.diag(m)[self._idx_v].copy()


class OnnxModel:
    """A learned inverse-dynamics network in the project's ONNX format, run by onnxruntime on one thread.

    The format (:mod:`deadzone_id_ros.models.onnx_format`): inputs ``q``, ``dq``, ``ddq`` float32 (N, J) [rad, rad/s,
    rad/s²] -> ``tau`` float32 (N, J) [N·m]; normalization inside the graph; joint names (column order), units and
    contents ("full" or a hybrid's "residual") in the ONNX metadata, so the file needs no sidecar. A residual network
    alone is only the MLP part: :func:`load_model` adds the rigid-body part from the artifact around it.

    Args:
        onnx_path: the .onnx file.

    Attributes:
        joint_names: (J,) from the metadata. contents: "full" or "residual". method: the training method.
        dtype: the element type the network is fed, float32 (this package's exports) or float64 (some converters).

    Raises:
        FileNotFoundError: the file does not exist.
        ArtifactError: onnxruntime cannot load the network, or it is not in the format (missing metadata key, other
            inputs or widths, non-SI units, element types other than all float32 or all float64).
    """

    def __init__(self, onnx_path: str | Path) -> None:
        import onnxruntime as ort

        from .onnx_format import read_onnx_metadata

        onnx_path = Path(onnx_path)
        if not onnx_path.is_file():
            raise FileNotFoundError(f"model file {onnx_path} does not exist")
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = 1
        opts.inter_op_num_threads = 1
        try:
            self._session = ort.InferenceSession(str(onnx_path), opts, providers=["CPUExecutionProvider"])
        except Exception as err:  # onnxruntime raises its own exception types (Fail, InvalidGraph, ...)
            raise ArtifactError(f"{onnx_path}: onnxruntime cannot load this network: {err}") from err
        meta = read_onnx_metadata(onnx_path, self._session)
        self.joint_names: tuple[str, ...] = meta["joint_names"]
        self.contents: str = meta["contents"]
        self.method: str = meta["method"]
        self.path = onnx_path
        self.dtype = np.dtype(meta["dtype"])
        self._buf = np.empty((3, 1, len(self.joint_names)), dtype=self.dtype)

    def predict(self, q: np.ndarray, dq: np.ndarray, ddq: np.ndarray) -> np.ndarray:
        """tau (J,) or (N, J) [N·m] from the network (float32 inside); raises ValueError on a shape mismatch."""
        q, dq, ddq = check_joint_arrays(len(self.joint_names), q=q, dq=dq, ddq=ddq)
        if q.ndim == 1:
            b = self._buf
            b[0, 0], b[1, 0], b[2, 0] = q, dq, ddq
            feed = {"q": b[0], "dq": b[1], "ddq": b[2]}
        else:
            feed = {"q": q.astype(self.dtype), "dq": dq.astype(self.dtype), "ddq": ddq.astype(self.dtype)}
        tau = np.asarray(self._session.run(None, feed)[0], dtype=float)
        return tau[0] if q.ndim == 1 else tau


class RigidBodyPlusOnnx:
    """A hybrid model run from its ONNX residual: tau = artifact rigid body (numpy/pinocchio) + ONNX residual.

    Args:
        rbd: the artifact's identified rigid-body model (:class:`deadzone_id_ros.models.rbd.model.RigidBodyModel`).
        residual: the :class:`OnnxModel` with contents "residual"; same joint names as ``rbd``.

    Raises:
        ArtifactError: the joint names differ.
    """

    def __init__(self, rbd: RigidBodyModel, residual: OnnxModel) -> None:
        if tuple(rbd.joint_names) != residual.joint_names:
            raise ArtifactError(f"{residual.path}: joints {list(residual.joint_names)} differ from the artifact's "
                                f"rigid-body joints {list(rbd.joint_names)}")
        self.joint_names = residual.joint_names
        self.rbd, self.residual = rbd, residual

    def predict(self, q: np.ndarray, dq: np.ndarray, ddq: np.ndarray) -> np.ndarray:
        """tau (J,) or (N, J) [N·m] = rigid body + residual; raises ValueError on a shape mismatch."""
        q, dq, ddq = check_joint_arrays(len(self.joint_names), q=q, dq=dq, ddq=ddq)
        single = q.ndim == 1
        rb = self.rbd.predict(q[None], dq[None], ddq[None])[0] if single else self.rbd.predict(q, dq, ddq)
        return np.asarray(rb, dtype=float) + self.residual.predict(q, dq, ddq)


def load_onnx(path: str | Path) -> InverseDynamicsModel:
    """Load an ONNX file in the project's format; a hybrid residual gets its rigid-body part from the artifact.

    Raises:
        FileNotFoundError: the file does not exist.
        ArtifactError: not in the format; a residual network without an artifact (model.json) next to it, or one
            whose artifact is not hybrid or fails verification.
    """
    net = OnnxModel(path)
    if net.contents == "full":
        return net
    root = Path(path).parent
    if not (root / "model.json").is_file():
        raise ArtifactError(f"{path}: this network is a hybrid model's MLP residual; the rigid-body part lives in its "
                            f"artifact (model.json, weights.npz, robot.urdf), but {root} has no model.json: keep the "
                            "file inside its artifact directory or pass the artifact directory as model_path")
    from .artifact import load_artifact

    art = load_artifact(root)
    if art.rbd is None:
        raise ArtifactError(f"{path}: a residual network, but the artifact {root} (method {art.method!r}) has no "
                            "rigid-body part")
    return RigidBodyPlusOnnx(art.rbd, net)


class RigidBodySettings(Protocol):
    """What a robot profile adds to the URDF's rigid body (:class:`NominalRigidBodyModel`), as configs carry it.

    Attributes:
        friction_velocity: [rad/s].  armature: (J,) [kg·m²] (empty: none).  frictionloss, damping: (J,) Coulomb
            [N·m] and viscous [N·m·s/rad] friction (None: none, or the URDF's where friction is on).
    """

    @property
    def friction_velocity(self) -> float: ...
    @property
    def armature(self) -> tuple[float, ...]: ...
    @property
    def frictionloss(self) -> tuple[float, ...] | None: ...
    @property
    def damping(self) -> tuple[float, ...] | None: ...


class ModelSettings(RigidBodySettings, Protocol):
    """What :func:`load_model` reads from a configuration; :class:`deadzone_id_ros.control.ControllerConfig` has it.

    Attributes:
        model: "none", "rbd" or "learned".
        joint_names: (J,) joints of the controller (the rbd model takes these; a learned model brings its own,
            which the controller checks against these).
        urdf_path: URDF of the "rbd" model; "" = the bundled arm.
        model_path: "learned" only: a model artifact directory or its model.json
            (:mod:`deadzone_id_ros.models.artifact`, numpy forward pass), or an ``.onnx`` file in the project's format
            (standalone; a hybrid's residual.onnx inside its artifact, see :func:`load_onnx`).
        model_friction, friction_velocity: "rbd" only: ``friction`` and ``friction_velocity`` of
            :class:`NominalRigidBodyModel` [rad/s].
        armature, frictionloss, damping: "rbd" only: (J,) ``armature`` [kg·m²] (empty: none), ``coulomb`` [N·m]
            and ``viscous`` [N·m·s/rad] (None: none, or the URDF's with ``model_friction``) of
            :class:`NominalRigidBodyModel`, a robot profile's values.
        locked_joints: "rbd" only: ``"urdf_joint=value"`` entries, where the URDF joints outside ``joint_names``
            are locked (a robot profile's ``locked``; the rest at 0).
    """

    @property
    def model(self) -> str: ...
    @property
    def joint_names(self) -> tuple[str, ...]: ...
    @property
    def urdf_path(self) -> str: ...
    @property
    def model_path(self) -> str: ...
    @property
    def model_friction(self) -> bool: ...
    @property
    def locked_joints(self) -> tuple[str, ...]: ...


def load_model(settings: ModelSettings) -> InverseDynamicsModel:
    """Build the inverse-dynamics model a controller configuration asks for.

    The one loader of the feedforward_controller node, the offline simulation (:mod:`deadzone_id_ros.sim.offline`)
    and replay (:mod:`deadzone_id_ros.sim.replay`).

    Args:
        settings: a :class:`~deadzone_id_ros.control.ControllerConfig` or anything with the fields of
            :class:`ModelSettings`.

    Raises:
        ConfigError: unknown ``model``, or "learned" without a ``model_path``.
        FileNotFoundError, ArtifactError, RobotDescriptionError: from the loaders; ArtifactError also for a learned
            model that does not predict N·m (trained on effort in another unit, e.g. motor current) and for one
            that reads the joint-state history (a history method: offline only).
    """
    kind, joint_names = settings.model, settings.joint_names
    if kind == "none":
        return ZeroModel(joint_names)
    if kind == "rbd":
        from ..resources import default_urdf
        from ..robot.reduced import locked_positions

        return NominalRigidBodyModel(
            settings.urdf_path or default_urdf(),
            joint_names,
            friction=settings.model_friction,
            friction_velocity=settings.friction_velocity,
            armature=settings.armature or None,
            coulomb=settings.frictionloss,
            viscous=settings.damping,
            locked=locked_positions(settings.locked_joints),
        )
    if kind == "learned":
        if not settings.model_path:
            raise ConfigError("model 'learned' needs model_path (an artifact directory or an .onnx file)")
        path = Path(settings.model_path)
        if not path.exists():
            raise FileNotFoundError(f"model_path {path} does not exist")
        if path.is_dir() or path.name == "model.json":
            try:
                from .artifact import check_newton_metres, load_artifact
            except ImportError as err:
                raise ArtifactError(f"{path}: model artifacts are not supported by this build ({err})") from err
            from ..resources import default_urdf
            from ..robot import load_robot_description

            model = load_artifact(path)
            refusal = per_tick_refusal(model)
            if refusal:
                raise ArtifactError(f"{path}: {refusal}")
            kinds = load_robot_description(settings.urdf_path or default_urdf(), joint_names).kinds
            check_newton_metres(model, str(path), dict(zip(joint_names, kinds)))
            return model
        return load_onnx(path)  # refuses metadata units other than SI (N·m)
    raise ConfigError(f"model = {kind!r} must be one of 'none', 'rbd', 'learned'")
