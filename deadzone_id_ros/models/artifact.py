"""Model artifacts: a directory that rebuilds a trained model without pickle, checked against tampering.

Layout of an artifact directory::

    model.json     metadata: format/package version, method, joint names and order, units, input layout (and a
                   history method's joint-state window),
                   normalization (copy), dead-zone thresholds (alpha, sigma), training-data fingerprint (bag paths and
                   sha256), metrics, and the sha256 of every file below
    weights.npz    every numeric array (MLP layers, normalization, rigid-body coefficients); loaded with
                   ``np.load(allow_pickle=False)``, so opening an artifact never runs code
    robot.urdf     rbd / hybrid only: the URDF the rigid-body regressor is built from
    model.onnx     MLP methods: the whole model, inputs q, dq, ddq (N, J) float32 -> tau (N, J) float32, normalization
                   inside, joint names and units in its metadata (:mod:`deadzone_id_ros.models.onnx_format`)
    residual.onnx  hybrid only: the MLP residual (the controller adds the rigid-body torque from this artifact)

The rigid-body part (pinocchio regressor) is not exportable to ONNX; an rbd artifact has no ONNX file and says so in
model.json (``onnx.exportable: false``).

:func:`load_artifact` refuses, with :class:`~deadzone_id_ros.errors.ArtifactError`, a directory whose model.json is
missing or malformed, whose format version or package version (major.minor) differs from this package, or whose
files do not match their recorded sha256 (tampering or a partial copy).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from .. import __version__
from ..data.deadzone import DeadZone
from ..data.effort_units import FIX_HINT, NEWTON_METRE, not_si, tau_unit
from ..errors import ArtifactError
from ..robot.description import joint_units
from .friction import ExtendedFriction
from .history import JointHistory
from .methods import get_method
from .mlp import MLPWeights
from .onnx_format import onnx_manifest
from .predictor import LearnedModel
from .rbd import RigidBodyModel, RigidBodyRegressor


class HasJointNames(Protocol):
    """What the unit checks read of a model: its joint order (any :class:`.base.InverseDynamicsModel` has it); an
    optional ``metadata`` mapping (a loaded artifact's model.json) is read with ``getattr``."""

    @property
    def joint_names(self) -> Sequence[str]:
        """(J,) the model's joint order."""
        ...

__all__ = ["FORMAT", "FORMAT_VERSION", "check_newton_metres", "export_onnx", "load_artifact", "model_effort_units",
           "model_joint_kinds", "SavedArtifact", "save_artifact", "sha256_file"]

FORMAT = "deadzone_id_ros.inverse_dynamics_model"
FORMAT_VERSION = 1
UNITS = {"q": "rad", "dq": "rad/s", "ddq": "rad/s^2", "tau": "N*m"}


def sha256_file(path: str | Path) -> str:
    """Hex sha256 of a file's bytes (read in 1 MiB chunks)."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _plain(obj: object) -> Any:
    """JSON-ready copy: numpy scalars/arrays -> Python, NaN/inf -> None (model.json stays valid JSON)."""
    if isinstance(obj, dict):
        return {str(k): _plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple, np.ndarray)):
        return [_plain(v) for v in (obj.tolist() if isinstance(obj, np.ndarray) else obj)]
    if isinstance(obj, (bool, np.bool_)):
        return bool(obj)
    if isinstance(obj, (np.integer,)):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        return float(obj) if np.isfinite(obj) else None
    return obj


def _major_minor(version: str) -> tuple[str, ...]:
    return tuple(str(version).split(".")[:2])


def export_onnx(model: LearnedModel, path: str | Path) -> Path:
    """Write the MLP of ``model`` in the project's ONNX format (:mod:`deadzone_id_ros.models.onnx_format`): inputs
    q, dq, ddq (N, J) float32 [rad, rad/s, rad/s²] -> tau (N, J) float32 [N·m], normalization inside, joint names
    and units in the metadata. For ``hybrid`` the file holds the MLP residual only (the rigid-body torque is added
    from the artifact).

    Raises:
        ArtifactError: the model has no MLP (``rbd``: pinocchio's regressor is not exportable).
    """
    from .onnx_format import write_onnx

    return write_onnx(model, path)


@dataclass(frozen=True)
class SavedArtifact:
    """What :func:`save_artifact` wrote.

    Attributes:
        path: the artifact directory.  files: {file name: sha256} of every file beside model.json.
        onnx_file: the ONNX file's name inside ``path`` (``model.onnx``, or ``residual.onnx`` for a model with a
        rigid-body part), or None when none was written.  onnx_reason: why not ("" when written).
    """

    path: Path
    files: dict[str, str]
    onnx_file: str | None = None
    onnx_reason: str = ""


def save_artifact(model: LearnedModel, out_dir: str | Path, *, metrics: dict[str, Any] | None = None,
                  training_data: dict[str, Any] | None = None, extra: dict[str, Any] | None = None,
                  onnx: bool = True) -> SavedArtifact:
    """Write ``model`` as an artifact directory (created if needed; files inside are overwritten).

    Args:
        model: the trained model (with its dead_zone).
        out_dir: target directory.
        metrics: evaluation numbers to record (JSON-serializable).
        training_data: fingerprint of the data (bag paths, sha256, sample counts, split, ``effort_units`` {joint: unit}
            of the torque labels, written to model.json ``units.tau`` / ``effort_units``; default: the model's metadata,
            else N·m).
        extra: further JSON-serializable metadata (for example the training config).
        onnx: also export ONNX when the model has an MLP and predicts N·m (the ONNX file is for a controller).

    Returns:
        what was written: the directory, the files and the ONNX file's name (:class:`SavedArtifact`).
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    arrays: dict[str, np.ndarray] = {}
    # the unit of the torque labels: from the training data, else the model's own (an artifact loaded and saved
    # again keeps it); N·m only where neither says otherwise
    effort_units = model_effort_units(model, (training_data or {}).get("effort_units"))
    kinds = model_joint_kinds(model, (training_data or {}).get("joint_kinds"))
    units = {**UNITS, "tau": tau_unit(effort_units)}
    history: JointHistory | None = getattr(model, "history", None)  # the window a history method's network reads
    model.metadata = {**(model.metadata or {}), "units": units, "effort_units": effort_units,  # for the ONNX export
                      "joint_kinds": kinds}
    meta: dict[str, Any] = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "package_version": __version__,
        "method": model.method,
        "joint_names": list(model.joint_names),
        "units": units,
        "effort_units": effort_units,
        "joint_kinds": kinds,
        "joint_units": {j: _units_record(kinds.get(j, "revolute")) for j in model.joint_names},
        "inputs": ["q", "dq", "ddq"],
        "history": None if history is None else history.to_dict(),
        "dead_zone": model.dead_zone.to_dict() if model.dead_zone is not None else None,
        "mlp": None,
        "rbd": None,
        "normalization": None,
    }
    files: dict[str, str] = {}
    if model.mlp is not None:
        arrays.update(model.mlp.arrays())
        meta["mlp"] = {"hidden_sizes": list(model.mlp.hidden_sizes), "activation": model.mlp.activation,
                       "n_layers": len(model.mlp.weights), "circular": list(model.mlp.circular),
                       "extra_inputs": model.mlp.extra_inputs}
        meta["normalization"] = {
            "input_mean": model.mlp.x_norm.mean.tolist(), "input_std": model.mlp.x_norm.std.tolist(),
            "output_mean": model.mlp.y_norm.mean.tolist(), "output_std": model.mlp.y_norm.std.tolist(),
        }
    if model.rbd is not None:
        reg = model.rbd.regressor
        (out / "robot.urdf").write_text(reg.urdf_xml)
        files["robot.urdf"] = sha256_file(out / "robot.urdf")
        arrays["rbd.columns"] = np.asarray(model.rbd.columns, dtype=np.int64)
        arrays["rbd.coefficients"] = np.asarray(model.rbd.coefficients, dtype=np.float64)
        meta["rbd"] = {"urdf_file": "robot.urdf", "friction_eps": reg.friction_eps.tolist(),
                       "joint_map": dict(reg.joint_map),
                       "locked": {n: v for n, v in reg.locked.items() if np.isfinite(v)},
                       "parameters": model.rbd.parameters(), "gravity_only": model.rbd.gravity_only,
                       "friction": None if reg.friction is None else reg.friction.to_json()}
    np.savez(out / "weights.npz", **arrays)  # type: ignore[arg-type]
    files["weights.npz"] = sha256_file(out / "weights.npz")
    not_nm = not_si(effort_units, kinds)
    if model.mlp is not None and onnx and not not_nm and not model.mlp.extra_inputs:
        name = "residual.onnx" if model.rbd is not None else "model.onnx"
        export_onnx(model, out / name)
        files[name] = sha256_file(out / name)
        meta["onnx"] = onnx_manifest(name, model.rbd is not None)
    else:
        meta["onnx"] = {"exportable": model.mlp is not None and not not_nm and not model.mlp.extra_inputs,
                        "file": None,
                        "reason": "rigid-body model (pinocchio regressor) is not exportable" if model.mlp is None
                        else "the network reads the joint-state history, not in the ONNX inputs"
                        if history is not None
                        else "the per-joint residual reads the rigid-body torque, not in the ONNX inputs"
                        if model.mlp.extra_inputs
                        else f"not exported: the model predicts {not_nm}, not the N·m a controller commands"
                        if not_nm else "not exported (run `deadzone-id export --onnx`)"}
    meta["training_data"] = training_data or {}
    meta["metrics"] = metrics or {}
    meta.update(extra or {})
    meta["files"] = files
    (out / "model.json").write_text(json.dumps(_plain(meta), indent=2, allow_nan=False) + "\n")
    return SavedArtifact(out, dict(files), meta["onnx"].get("file"), meta["onnx"].get("reason", ""))


def _check_file(root: Path, name: str, files: dict[str, str]) -> Path:
    path = root / name
    if name not in files:
        raise ArtifactError(f"{root / 'model.json'}: no sha256 recorded for {name}")
    if not path.is_file():
        raise ArtifactError(f"{path} is missing from the artifact")
    digest = sha256_file(path)
    if digest != files[name]:
        raise ArtifactError(f"{path}: sha256 {digest[:16]}... does not match model.json ({files[name][:16]}...): "
                            "the file was modified or corrupted; re-export or retrain")
    return path


def model_effort_units(model: HasJointNames, recorded: dict[str, str] | None = None) -> dict[str, str]:
    """{joint: unit of the model's predicted torque}: ``recorded`` (the training data's), else the model's own
    ``metadata["effort_units"]`` (its model.json); "N*m" for artifacts written before the unit was recorded and for
    models not loaded from an artifact."""
    recorded = recorded or (getattr(model, "metadata", None) or {}).get("effort_units") or {}
    return {j: str(recorded.get(j, NEWTON_METRE)) for j in model.joint_names}


def _units_record(kind: str) -> dict[str, str]:
    """model.json's ``joint_units`` entry of a joint kind: {q, dq, ddq, tau: unit} (rad... N*m; prismatic m... N)."""
    u = joint_units(kind)
    return {"q": u.position, "dq": u.velocity, "ddq": u.acceleration, "tau": u.effort}


def model_joint_kinds(model: HasJointNames, recorded: dict[str, str] | None = None) -> dict[str, str]:
    """{joint: kind} of the model's joints ("revolute", "continuous", "prismatic"): ``recorded`` (the training
    data's, from its URDF), else the model's own ``metadata["joint_kinds"]``; joints without a record: {} entry
    absent (taken as revolute: N·m)."""
    recorded = recorded or (getattr(model, "metadata", None) or {}).get("joint_kinds") or {}
    return {j: str(recorded[j]) for j in model.joint_names if j in recorded}


def check_newton_metres(model: HasJointNames, where: str, kinds: dict[str, str] | None = None) -> None:
    """Refuse a model that does not predict SI joint effort for every joint (N·m; N for a prismatic joint): a
    controller sends its output as joint torque/force.

    Args:
        model: the loaded model.  where: its path, for messages.
        kinds: {joint: kind} of the controller's URDF (:attr:`RobotDescription.kinds`); None: the model's recorded
            kinds. A joint whose recorded kind differs from the controller's is refused.

    Raises:
        ArtifactError: names the joints, their unit and how to retrain in SI units; or the joints whose kinds differ.
    """
    recorded = model_joint_kinds(model)
    if kinds is not None:
        differ = {j: (recorded[j], kinds.get(j, "revolute")) for j in recorded
                  if recorded[j] != kinds.get(j, "revolute") and "prismatic" in (recorded[j], kinds.get(j))}
        if differ:
            raise ArtifactError(f"{where}: joint kinds (model, controller URDF) differ: {differ}: the model was "
                                "trained on another robot description")
    wrong = not_si(model_effort_units(model), kinds if kinds is not None else recorded)
    if wrong:
        raise ArtifactError(f"{where}: the model predicts effort in {wrong}, not N·m (it was trained on effort "
                            f"recorded in another unit); the controller commands N·m: retrain it ({FIX_HINT})")


def load_artifact(path: str | Path) -> LearnedModel:
    """Load an artifact directory (or its model.json) into a :class:`LearnedModel` with a numpy ``predict``.

    The returned model carries ``metadata`` (the parsed model.json), ``method`` and ``dead_zone``.

    Raises:
        FileNotFoundError: ``path`` does not exist.
        ArtifactError: model.json missing or malformed; wrong format, format version or package version
            (major.minor must equal this package's); a file's sha256 differs from model.json; arrays missing or of
            inconsistent shapes; a URDF that does not fit the joints.
    """
    root = Path(path)
    if root.is_file() and root.name == "model.json":
        root = root.parent
    if not root.exists():
        raise FileNotFoundError(f"model artifact {root} does not exist")
    meta_path = root / "model.json"
    meta = _read_model_json(root, meta_path)
    try:
        method = meta["method"]
        joint_names = tuple(str(n) for n in meta["joint_names"])
        files = dict(meta["files"])
    except (KeyError, TypeError) as err:
        raise ArtifactError(f"{meta_path}: missing key {err}") from err
    try:
        entry = get_method(method)
    except ValueError as err:
        raise ArtifactError(f"{meta_path}: {err}") from err
    weights_path = _check_file(root, "weights.npz", files)
    try:
        with np.load(weights_path, allow_pickle=False) as npz:
            arrays = {k: npz[k] for k in npz.files}
    except (ValueError, OSError) as err:
        raise ArtifactError(f"{weights_path}: cannot read the weights without pickle: {err}") from err
    want_rbd, want_mlp = entry.rigid_body, entry.has_network
    try:
        mlp = _mlp_part(meta, arrays, meta_path) if want_mlp else None
        rbd = _rbd_part(root, meta, files, arrays, joint_names, weights_path) if want_rbd else None
        dz = meta.get("dead_zone")
        dead_zone = DeadZone.from_dict(dz) if dz else None
        return LearnedModel(joint_names, method, mlp=mlp, rbd=rbd, dead_zone=dead_zone, metadata=meta)
    except ArtifactError:
        raise
    except (KeyError, TypeError, ValueError) as err:
        raise ArtifactError(f"{root}: inconsistent artifact: {type(err).__name__}: {err}") from err


def _read_model_json(root: Path, meta_path: Path) -> dict[str, Any]:
    """The parsed model.json of the artifact ``root``, its format, format version and package version checked.

    Raises:
        ArtifactError: model.json missing or not JSON; not this format; another format version; written by another
            major.minor package version.
    """
    if not meta_path.is_file():
        raise ArtifactError(f"{root} is not a model artifact: model.json is missing")
    try:
        meta = json.loads(meta_path.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise ArtifactError(f"{meta_path}: not valid JSON: {err}") from err
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise ArtifactError(
            f"{meta_path}: format {meta.get('format') if isinstance(meta, dict) else None!r} is not {FORMAT!r}"
        )
    if meta.get("format_version") != FORMAT_VERSION:
        raise ArtifactError(f"{meta_path}: format_version {meta.get('format_version')!r} is not supported "
                            f"(this package reads {FORMAT_VERSION})")
    version = str(meta.get("package_version"))
    if _major_minor(version) != _major_minor(__version__):
        raise ArtifactError(f"{meta_path}: written by deadzone_id_ros {version}, but this is {__version__}; "
                            "versions must match in major.minor: retrain or re-export with this version")
    return meta


def _mlp_part(meta: dict[str, Any], arrays: dict[str, np.ndarray], meta_path: Path) -> MLPWeights:
    """The MLP of an artifact from weights.npz ``arrays``, its normalization checked against model.json's copy.

    Raises:
        ArtifactError: the normalizations differ. KeyError, TypeError, ValueError: missing or inconsistent entries.
    """
    spec = meta["mlp"]
    mlp = MLPWeights.from_arrays(arrays, int(spec["n_layers"]), str(spec["activation"]),
                                 circular=tuple(int(c) for c in spec.get("circular", [])),
                                 extra_inputs=int(spec.get("extra_inputs", 0)))
    norm = meta.get("normalization") or {}
    if not np.allclose(norm.get("input_mean", np.nan), mlp.x_norm.mean, rtol=0, atol=0) or \
            not np.allclose(norm.get("output_std", np.nan), mlp.y_norm.std, rtol=0, atol=0):
        raise ArtifactError(f"{meta_path}: normalization differs from the one in weights.npz")
    return mlp


def _rbd_part(root: Path, meta: dict[str, Any], files: dict[str, str], arrays: dict[str, np.ndarray],
              joint_names: tuple[str, ...], weights_path: Path) -> RigidBodyModel:
    """The rigid-body part of an artifact: its URDF (sha256 checked) and the columns/coefficients of weights.npz.

    Raises:
        ArtifactError: URDF missing or modified, or columns/coefficients of bad shape or range. KeyError, TypeError,
            ValueError: missing or inconsistent entries.
    """
    from ..robot.urdf_text import read_urdf

    urdf_path = _check_file(root, str(meta["rbd"]["urdf_file"]), files)
    friction = meta["rbd"].get("friction")  # Stribeck / load-dependent friction columns (rbd_friction)
    reg = RigidBodyRegressor(read_urdf(urdf_path), joint_names, meta["rbd"]["friction_eps"],
                             source=str(urdf_path), joint_map=meta["rbd"].get("joint_map") or None,
                             locked=meta["rbd"].get("locked") or None,
                             friction=ExtendedFriction.from_json(friction) if friction else None)
    cols = np.asarray(arrays["rbd.columns"], dtype=np.int64)
    coef = np.asarray(arrays["rbd.coefficients"], dtype=np.float64)
    if (
        cols.shape != coef.shape
        or cols.ndim != 1
        or (cols.size and (cols.min() < 0 or cols.max() >= reg.n_columns))
    ):
        raise ArtifactError(
            f"{weights_path}: rigid-body columns {cols.shape} / coefficients {coef.shape} invalid"
        )
    return RigidBodyModel(reg, cols, coef, gravity_only=bool(meta["rbd"].get("gravity_only", False)))
