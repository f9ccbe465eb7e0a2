"""The one ONNX format of this project: what ``deadzone-id export --onnx`` writes and the controller runs.

Interface (the same for the Python controller and a C++ ros2_control controller using onnxruntime):

- **Inputs**, three tensors, each float32 of shape (N, J), N = batch (dynamic; 1 in a control tick), J = number of
  joints, columns in the joint order of the ``joint_names`` metadata entry:

  - ``q``   joint positions [rad]
  - ``dq``  joint velocities [rad/s]
  - ``ddq`` joint accelerations [rad/s²] (in the controller: the reference acceleration ddq_d + Kd e' + Kp e)

- **Output**: ``tau`` float32 (N, J) [N·m], same joint order.
- **Element types**: float32 as written by this package. A graph whose three inputs and output are all float64
  (``tensor(double)``, as some converters write) is accepted and fed float64; any other element type, or a mix, is
  refused at load naming the tensor and its type, never at the first control tick.
- **Normalization lives inside the graph** (input (x - mean) / std, output y * std + mean): feed raw SI values and
  use the output as it is. No sidecar file is needed.
- **Metadata** (ONNX ``metadata_props``, string key -> string value; onnxruntime:
  ``session.get_modelmeta().custom_metadata_map``, C++: ``Ort::ModelMetadata::LookupCustomMetadataMapAllocated``):

  - ``deadzone_id_ros.format`` = :data:`ONNX_FORMAT`; ``deadzone_id_ros.format_version`` = "1"
  - ``deadzone_id_ros.joint_names`` = JSON list of the J joint names (the column order)
  - ``deadzone_id_ros.units`` = JSON object {"q": "rad", "dq": "rad/s", "ddq": "rad/s^2", "tau": "N*m"}
  - ``deadzone_id_ros.contents`` = "full" (the network is the whole model) or "residual" (hybrid method: the
    network is only the MLP residual)
  - ``deadzone_id_ros.method`` = the training method (masked, conventional, mse_all, hybrid)

- **Hybrid** (``contents = residual``, file ``residual.onnx``): the identified rigid-body part (pinocchio regressor)
  is not in the ONNX graph. The controller adds it from the artifact the file sits in (model.json, weights.npz,
  robot.urdf): tau = rbd(q, dq, ddq) + residual(q, dq, ddq). A residual file on its own is refused. A C++ user of a
  hybrid model must compute the rigid-body torque from the artifact's ``rbd`` entry, or train a full method instead.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

from ..errors import ArtifactError

__all__ = ["ONNX_FORMAT", "ONNX_FORMAT_VERSION", "ONNX_INPUTS", "onnx_element_dtype", "onnx_manifest",
           "read_onnx_metadata", "write_onnx"]

ONNX_FORMAT = "deadzone_id_ros.inverse_dynamics_onnx"
ONNX_FORMAT_VERSION = 1
ONNX_INPUTS = ("q", "dq", "ddq")
UNITS = {"q": "rad", "dq": "rad/s", "ddq": "rad/s^2", "tau": "N*m"}
_PREFIX = "deadzone_id_ros."
# onnxruntime's type strings of the element types the format accepts, and the numpy dtype each is fed with.
_ELEMENT_TYPES = {"tensor(float)": "float32", "tensor(double)": "float64"}


def write_onnx(model: Any, path: str | Path) -> Path:
    """Write the MLP of a :class:`~deadzone_id_ros.models.predictor.LearnedModel` in the format above (opset 17).

    Args:
        model: the learned model (its ``mlp``, ``joint_names``, ``method``, ``rbd``).
        path: the .onnx file to write.

    Returns:
        ``path``.

    Raises:
        ArtifactError: the model has no MLP (``rbd``: pinocchio's regressor is not exportable), or its MLP reads
            the rigid-body torque (a per-joint residual: the graph's inputs are q, dq, ddq only).
    """
    import onnx
    import torch

    from .mlp import torch_from_mlp

    if model.mlp is None:
        raise ArtifactError(f"method {model.method!r} has no neural network; "
                            "the rigid-body model is not exportable to ONNX")
    if getattr(model, "history", None) is not None:
        raise ArtifactError(f"method {model.method!r}: its network reads the joint-state history besides q, dq, ddq, "
                            "which the ONNX format's three inputs do not carry")
    if model.mlp.extra_inputs:
        raise ArtifactError(f"method {model.method!r}: its network reads the rigid-body torque besides q, dq, ddq "
                            "(a per-joint residual), which the ONNX format's three inputs do not carry")
    net = torch_from_mlp(model.mlp)

    class _ThreeInputs(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.inner = net

        def forward(self, q, dq, ddq):
            return self.inner(torch.cat([q, dq, ddq], dim=-1))

    x = torch.zeros(1, len(model.joint_names))
    path = Path(path)
    dyn = {k: {0: "batch"} for k in (*ONNX_INPUTS, "tau")}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(_ThreeInputs().eval(), (x, x, x), str(path), input_names=list(ONNX_INPUTS),
                          output_names=["tau"], dynamic_axes=dyn, opset_version=17, dynamo=False)
    proto = onnx.load(str(path))
    meta = {"format": ONNX_FORMAT, "format_version": str(ONNX_FORMAT_VERSION),
            "joint_names": json.dumps(list(model.joint_names)),
            "units": json.dumps((model.metadata or {}).get("units") or UNITS),
            "contents": "residual" if model.rbd is not None else "full", "method": str(model.method)}
    onnx.helper.set_model_props(proto, {_PREFIX + k: v for k, v in meta.items()})
    onnx.save(proto, str(path))
    return path


def read_onnx_metadata(path: Path, session: Any) -> dict[str, Any]:
    """Check an onnxruntime session against the format and return its metadata.

    Args:
        path: the .onnx file (for messages).
        session: an ``onnxruntime.InferenceSession`` of it.

    Returns:
        {"joint_names": tuple of J str, "contents": "full" | "residual", "method": str, "dtype": "float32" |
        "float64" (the element type the network is fed, :func:`onnx_element_dtype`)}.

    Raises:
        ArtifactError: metadata missing or malformed (naming the key), a format version this package does not read,
            inputs other than q, dq, ddq of width J, units other than SI, or element types other than all float32 or
            all float64 (naming the tensor and its type).
    """
    props = dict(session.get_modelmeta().custom_metadata_map)
    if props.get(_PREFIX + "format") != ONNX_FORMAT:
        raise ArtifactError(f"{path}: not a {ONNX_FORMAT} network (metadata key {_PREFIX}format is "
                            f"{props.get(_PREFIX + 'format')!r}); re-export it with `deadzone-id export --onnx`")
    if props.get(_PREFIX + "format_version") != str(ONNX_FORMAT_VERSION):
        raise ArtifactError(f"{path}: ONNX format_version {props.get(_PREFIX + 'format_version')!r} is not supported "
                            f"(this package reads {ONNX_FORMAT_VERSION})")
    try:
        names = tuple(str(n) for n in json.loads(props[_PREFIX + "joint_names"]))
        units = json.loads(props[_PREFIX + "units"])
        contents = props[_PREFIX + "contents"]
    except KeyError as err:
        raise ArtifactError(f"{path}: metadata key {err.args[0]!r} is missing") from err
    except (json.JSONDecodeError, TypeError) as err:
        raise ArtifactError(f"{path}: metadata joint_names/units are not valid JSON: {err}") from err
    if units != UNITS:
        raise ArtifactError(f"{path}: metadata units {units} are not {UNITS}" + (
            "; the network predicts effort in another unit than N·m: retrain it (--torque-constant JOINT:K to "
            "convert the recorded effort to N·m, or --effort-unit N*m if it already is joint torque)"
            if units.get("tau") != UNITS["tau"] else ""))
    if contents not in ("full", "residual"):
        raise ArtifactError(f"{path}: metadata contents {contents!r} must be 'full' or 'residual'")
    inputs = [(i.name, i.shape) for i in session.get_inputs()]
    if [n for n, _ in inputs] != list(ONNX_INPUTS) or any(shape[-1] != len(names) for _, shape in inputs):
        raise ArtifactError(f"{path}: inputs {inputs} must be q, dq, ddq of shape (N, {len(names)}) "
                            f"for joints {list(names)}")
    return {"joint_names": names, "contents": contents, "method": props.get(_PREFIX + "method", ""),
            "dtype": onnx_element_dtype(path, session)}


def onnx_element_dtype(path: Path, session: Any) -> str:
    """The one element type of a session's inputs and output, as a numpy dtype name ("float32" or "float64").

    onnxruntime refuses a feed whose element type differs from the graph's ("Unexpected input data type") only when
    the network first runs; checking here moves that failure to load time, where it names the tensor.

    Args:
        path: the .onnx file (for messages).
        session: an ``onnxruntime.InferenceSession`` of it.

    Raises:
        ArtifactError: an input or output whose element type is neither float32 nor float64 (naming the tensor and
            its type), or inputs and output of different float types.
    """
    tensors = [("input", t.name, t.type) for t in session.get_inputs()]
    tensors += [("output", t.name, t.type) for t in session.get_outputs()]
    for kind, name, type_ in tensors:
        if type_ not in _ELEMENT_TYPES:
            raise ArtifactError(f"{path}: {kind} {name!r} has element type {type_}; the format takes float32 "
                                f"(tensor(float)) or float64 (tensor(double)) tensors: re-export the network with "
                                f"`deadzone-id export --onnx`")
    kinds = {type_ for _, _, type_ in tensors}
    if len(kinds) > 1:
        listed = ", ".join(f"{kind} {name!r} {type_}" for kind, name, type_ in tensors)
        raise ArtifactError(f"{path}: mixed element types ({listed}); inputs and output must all be float32 or all "
                            f"float64")
    return _ELEMENT_TYPES[kinds.pop()]


def onnx_manifest(file_name: str, residual: bool) -> dict[str, Any]:
    """The ``onnx`` entry of an artifact's model.json describing the exported file (format, interface, contents)."""
    return {"exportable": True, "file": file_name, "format": ONNX_FORMAT, "format_version": ONNX_FORMAT_VERSION,
            "contents": "residual" if residual else "full",
            "note": "MLP residual; the rigid-body torque is added from this artifact" if residual else "full model",
            "normalization": "inside the graph",
            "inputs": {"q": "(N, J) float32 rad", "dq": "(N, J) float32 rad/s", "ddq": "(N, J) float32 rad/s^2"},
            "outputs": {"tau": "(N, J) float32 N*m"}}
