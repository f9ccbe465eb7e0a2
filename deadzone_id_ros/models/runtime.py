"""Runtime inverse-dynamics models, as the controller, the offline simulation and replay load them.

All implement :class:`deadzone_id_ros.models.base.InverseDynamicsModel` (``joint_names`` and
``predict(q, dq, ddq) -> tau``) and are cheap for a single sample (called every control tick):

- :class:`ZeroModel` ("none"): tau = 0.
- :class:`NominalRigidBodyModel` ("rbd"): recursive Newton-Euler (pinocchio ``rnea``; Featherstone, "Rigid Body Dynamics
  Algorithms", 2008) on the URDF's nominal inertial parameters, optionally plus the URDF ``<dynamics>`` friction:
  ``damping * dq + friction * tanh(dq / friction_velocity)`` (a smooth sign, so velocity noise around zero does not
  chatter the command).
- :class:`OnnxModel` ("learned", interim format): an ONNX network run by onnxruntime on one thread, with a JSON file
  giving joint names and input/output normalization.

:func:`load_model` builds the one a controller configuration asks for (``model``, ``model_path``, ...); for a
directory it loads the project's model artifact (:func:`deadzone_id_ros.models.artifact.load_artifact`). The rigid-body
model identified from data is a different class, :class:`deadzone_id_ros.models.rbd.RigidBodyModel`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

import numpy as np

from ..errors import ArtifactError, ConfigError
from .base import InverseDynamicsModel, check_joint_arrays

__all__ = ["ModelSettings", "NominalRigidBodyModel", "OnnxModel", "ZeroModel", "load_model"]


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

    Joints of the URDF outside ``joint_names`` are held at their neutral position with zero velocity.

    Args:
        urdf_path: the URDF.
        joint_names: (J,) joints, in the order of every array in and out.
        friction: add ``damping * dq + friction * tanh(dq / friction_velocity)`` from the URDF ``<dynamics>`` tags.
        friction_velocity: smoothing velocity of the sign function [rad/s] (> 0).
        armature: (J,) rotor inertia added to the diagonal [kg·m²] (URDFs carry none); default zeros.

    Raises:
        FileNotFoundError: the URDF does not exist.
        RobotDescriptionError: the URDF cannot be parsed or lacks a joint.
        ValueError: friction_velocity <= 0 or armature of the wrong length.
    """

    def __init__(
        self,
        urdf_path: str | Path,
        joint_names: Sequence[str],
        *,
        friction: bool = False,
        friction_velocity: float = 0.01,
        armature: Sequence[float] | None = None,
    ) -> None:
        import pinocchio as pin

        from ..robot import load_robot_description

        self.description = load_robot_description(urdf_path, joint_names)
        self.joint_names = tuple(joint_names)
        if not friction_velocity > 0:
            raise ValueError(f"friction_velocity = {friction_velocity!r} must be > 0")
        self._pin = pin
        self.model = pin.buildModelFromUrdf(str(urdf_path))
        self.data = self.model.createData()
        self._idx_q = np.array([self.model.joints[self.model.getJointId(n)].idx_q for n in joint_names], dtype=int)
        self._idx_v = np.array([self.model.joints[self.model.getJointId(n)].idx_v for n in joint_names], dtype=int)
        if armature is not None:
            arm = np.asarray(armature, dtype=float)
            if arm.shape != (len(self.joint_names),):
                raise ValueError(f"armature must have {len(self.joint_names)} values, got {arm.shape}")
            self.model.armature[self._idx_v] = arm
        self._q = pin.neutral(self.model)
        self._v = np.zeros(self.model.nv)
        self._a = np.zeros(self.model.nv)
        self.friction = friction
        self.friction_velocity = float(friction_velocity)
        self._coulomb = self.description.friction.copy()
        self._viscous = self.description.damping.copy()

    def predict(self, q: np.ndarray, dq: np.ndarray, ddq: np.ndarray) -> np.ndarray:
        """tau (J,) or (N, J) [N·m] = M(q) ddq + C(q, dq) dq + g(q) (+ friction); raises ValueError on shapes."""
        q, dq, ddq = check_joint_arrays(len(self.joint_names), q=q, dq=dq, ddq=ddq)
        if q.ndim == 1:  # one sample (every control tick): no batch loop
            self._q[self._idx_q] = q
            self._v[self._idx_v] = dq
            self._a[self._idx_v] = ddq
            tau = self._pin.rnea(self.model, self.data, self._q, self._v, self._a)[self._idx_v]
            if self.friction:
                tau += self._viscous * dq + self._coulomb * np.tanh(dq / self.friction_velocity)
            return tau
        single = False
        q2, dq2, ddq2 = (np.atleast_2d(a) for a in (q, dq, ddq))
        out = np.empty_like(q2)
        for k in range(q2.shape[0]):
            self._q[self._idx_q] = q2[k]
            self._v[self._idx_v] = dq2[k]
            self._a[self._idx_v] = ddq2[k]
            out[k] = self._pin.rnea(self.model, self.data, self._q, self._v, self._a)[self._idx_v]
        if self.friction:
            out += self._viscous * dq2 + self._coulomb * np.tanh(dq2 / self.friction_velocity)
        return out[0] if single else out

    def mass_matrix_diagonal(self, q: np.ndarray) -> np.ndarray:
        """diag M(q) (J,) [kg·m²] at one configuration q (J,) [rad] (pinocchio CRBA), e.g. to choose Jn."""
        self._q[self._idx_q] = np.asarray(q, dtype=float)
        m = self._pin.crba(self.model, self.data, self._q)
        return np.diag(m)[self._idx_v].copy()


class OnnxModel:
    """A learned inverse-dynamics network exported to ONNX, with input/output normalization from a JSON file.

    JSON keys: ``joint_names`` (J,), ``input_mean``/``input_std`` (3J,) for the input [q, dq, ddq], and
    ``output_mean``/``output_std`` (J,); tau = net((x - input_mean) / input_std) * output_std + output_mean. The
    network takes one float32 input of shape (N, 3J) and returns (N, J). Runs on onnxruntime with one thread.

    Args:
        onnx_path: the .onnx file.
        json_path: the normalization JSON (default: same stem, ``.json``).

    Raises:
        FileNotFoundError: a file does not exist.
        ArtifactError: the JSON lacks a key or has the wrong lengths, or onnxruntime cannot load the network.
    """

    def __init__(self, onnx_path: str | Path, json_path: str | Path | None = None) -> None:
        import onnxruntime as ort

        onnx_path = Path(onnx_path)
        json_path = Path(json_path) if json_path else onnx_path.with_suffix(".json")
        for p in (onnx_path, json_path):
            if not p.is_file():
                raise FileNotFoundError(f"model file {p} does not exist")
        try:
            meta = json.loads(json_path.read_text())
        except json.JSONDecodeError as err:
            raise ArtifactError(f"{json_path}: not valid JSON: {err}") from err
        try:
            self.joint_names = tuple(str(n) for n in meta["joint_names"])
            j = len(self.joint_names)
            stats = {
                k: np.asarray(meta[k], dtype=np.float32)
                for k in ("input_mean", "input_std", "output_mean", "output_std")
            }
        except KeyError as err:
            raise ArtifactError(f"{json_path}: missing key {err.args[0]!r}") from err
        for key, n in (("input_mean", 3 * j), ("input_std", 3 * j), ("output_mean", j), ("output_std", j)):
            if stats[key].shape != (n,):
                raise ArtifactError(
                    f"{json_path}: {key} must have {n} values for joints {list(self.joint_names)}, "
                    f"got {stats[key].shape}"
                )
        if np.any(stats["input_std"] <= 0):
            raise ArtifactError(f"{json_path}: input_std must be > 0, got {stats['input_std'].tolist()}")
        self._in_mean, self._in_std = stats["input_mean"], stats["input_std"]
        self._out_mean, self._out_std = stats["output_mean"], stats["output_std"]
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = 1
        opts.inter_op_num_threads = 1
        try:
            self._session = ort.InferenceSession(str(onnx_path), opts, providers=["CPUExecutionProvider"])
        except Exception as err:  # onnxruntime raises its own exception types (Fail, InvalidGraph, ...)
            raise ArtifactError(f"{onnx_path}: onnxruntime cannot load this network: {err}") from err
        self._input = self._session.get_inputs()[0].name
        self._buf = np.empty((1, 3 * j), dtype=np.float32)
        self._buf_normalized = np.empty((1, 3 * j), dtype=np.float32)

    def predict(self, q: np.ndarray, dq: np.ndarray, ddq: np.ndarray) -> np.ndarray:
        """tau (J,) or (N, J) [N·m] from the network; raises ValueError on a shape mismatch."""
        q, dq, ddq = check_joint_arrays(len(self.joint_names), q=q, dq=dq, ddq=ddq)
        if q.ndim == 1:
            j = q.shape[0]
            x = self._buf
            x[0, :j], x[0, j:2 * j], x[0, 2 * j:] = q, dq, ddq
            x = np.divide(np.subtract(x, self._in_mean, out=self._buf_normalized), self._in_std, out=x)
        else:
            x = np.concatenate([q, dq, ddq], axis=1).astype(np.float32)
            x = (x - self._in_mean) / self._in_std
        y = self._session.run(None, {self._input: x})[0]
        tau = np.asarray(y, dtype=float) * self._out_std + self._out_mean
        return tau[0] if q.ndim == 1 else tau


class ModelSettings(Protocol):
    """What :func:`load_model` reads from a configuration; :class:`deadzone_id_ros.control.ControllerConfig` has it.

    Attributes:
        model: "none", "rbd" or "learned".
        joint_names: (J,) joints of the controller (the rbd model takes these; a learned model brings its own,
            which the controller checks against these).
        urdf_path: URDF of the "rbd" model; "" = the bundled arm.
        model_path: "learned" only: a model artifact directory or its model.json
            (:mod:`deadzone_id_ros.models.artifact`, numpy forward pass), or an ``.onnx`` file with a ``.json`` of
            the same stem (see :class:`OnnxModel`).
        model_friction, friction_velocity: "rbd" only: ``friction`` and ``friction_velocity`` of
            :class:`NominalRigidBodyModel` [rad/s].
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
    def friction_velocity(self) -> float: ...


def load_model(settings: ModelSettings) -> InverseDynamicsModel:
    """Build the inverse-dynamics model a controller configuration asks for.

    The one loader of the feedforward_controller node, the offline simulation (:mod:`deadzone_id_ros.sim.offline`)
    and replay (:mod:`deadzone_id_ros.sim.replay`).

    Args:
        settings: a :class:`~deadzone_id_ros.control.ControllerConfig` or anything with the fields of
            :class:`ModelSettings`.

    Raises:
        ConfigError: unknown ``model``, or "learned" without a ``model_path``.
        FileNotFoundError, ArtifactError, RobotDescriptionError: from the loaders.
    """
    kind, joint_names = settings.model, settings.joint_names
    if kind == "none":
        return ZeroModel(joint_names)
    if kind == "rbd":
        from ..resources import default_urdf

        return NominalRigidBodyModel(
            settings.urdf_path or default_urdf(),
            joint_names,
            friction=settings.model_friction,
            friction_velocity=settings.friction_velocity,
        )
    if kind == "learned":
        if not settings.model_path:
            raise ConfigError("model 'learned' needs model_path (an artifact directory or an .onnx file)")
        path = Path(settings.model_path)
        if not path.exists():
            raise FileNotFoundError(f"model_path {path} does not exist")
        if path.is_dir() or path.name == "model.json":
            try:
                from .artifact import load_artifact
            except ImportError as err:
                raise ArtifactError(f"{path}: model artifacts are not supported by this build ({err})") from err
            return load_artifact(path)
        return OnnxModel(path)
    raise ConfigError(f"model = {kind!r} must be one of 'none', 'rbd', 'learned'")
