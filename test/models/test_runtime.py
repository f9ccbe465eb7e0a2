"""Runtime models (models/runtime.py): nominal rigid body vs MuJoCo, ONNX format, load_model, errors."""

from __future__ import annotations

import json
from types import SimpleNamespace

import numpy as np
import pytest

from deadzone_id_ros.errors import ArtifactError, ConfigError, RobotDescriptionError
from deadzone_id_ros.models.base import InverseDynamicsModel, check_joint_arrays
from deadzone_id_ros.models.runtime import NominalRigidBodyModel, OnnxModel, ZeroModel, load_model
from deadzone_id_ros.resources import default_urdf
from deadzone_id_ros.robot_configs import bundled_controller_config, bundled_sim_config
from deadzone_id_ros.sim import SimArm

NAMES = ("joint1", "joint2", "joint3")


def test_rigid_body_model_matches_the_simulator_without_armature():
    arm = SimArm(bundled_sim_config(armature=(0.0, 0.0, 0.0)))
    model = NominalRigidBodyModel(default_urdf(), NAMES)
    rng = np.random.default_rng(0)
    q, dq, ddq = rng.normal(size=(3, 20, 3))
    np.testing.assert_allclose(model.predict(q, dq, ddq), arm.inverse_dynamics(q, dq, ddq), atol=1e-9)
    assert isinstance(model, InverseDynamicsModel)


def test_rigid_body_friction_is_smooth_and_bounded():
    model = NominalRigidBodyModel(default_urdf(), NAMES, friction=True, friction_velocity=0.01)
    base = NominalRigidBodyModel(default_urdf(), NAMES)
    q, z = np.array([0.0, 0.3, 0.6]), np.zeros(3)
    fast = np.array([1.0, -1.0, 1.0])
    np.testing.assert_allclose(
        model.predict(q, fast, z) - base.predict(q, fast, z),
        np.array([0.12, 0.40, 0.15]) * np.sign(fast) + np.array([0.02, 0.05, 0.03]) * fast,
        atol=1e-6,
    )
    np.testing.assert_allclose(model.predict(q, z, z), base.predict(q, z, z), atol=1e-12)  # tanh(0) = 0, no chatter


def _export(tmp_path, joint_names=NAMES, name="net.onnx"):
    """A random tanh MLP with non-trivial normalization, written in the project's ONNX format."""
    from deadzone_id_ros.models.mlp import MLPWeights, Standardizer
    from deadzone_id_ros.models.onnx_format import write_onnx
    from deadzone_id_ros.models.predictor import LearnedModel

    rng = np.random.default_rng(0)
    mlp = MLPWeights((rng.normal(size=(16, 9)).astype(np.float32), rng.normal(size=(3, 16)).astype(np.float32)),
                     (rng.normal(size=16).astype(np.float32), rng.normal(size=3).astype(np.float32)), "tanh",
                     Standardizer(np.full(9, 0.1), np.full(9, 2.0)),
                     Standardizer(np.array([0.5, -0.5, 0.0]), np.array([3.0, 1.0, 2.0])))
    model = LearnedModel(joint_names, "masked", mlp=mlp)
    return model, write_onnx(model, tmp_path / name)


def test_onnx_model_is_standalone_with_normalization_inside(tmp_path):
    ref, path = _export(tmp_path)
    assert not path.with_suffix(".json").exists()
    model = load_model(bundled_controller_config(model="learned", model_path=str(path)))
    assert isinstance(model, OnnxModel) and model.joint_names == NAMES and model.contents == "full"
    rng = np.random.default_rng(1)
    q, dq, ddq = rng.normal(size=(3, 5, 3))
    expect = ref.predict(q, dq, ddq)  # numpy forward pass with the normalization
    np.testing.assert_allclose(model.predict(q, dq, ddq), expect, atol=1e-5)
    np.testing.assert_allclose(model.predict(q[2], dq[2], ddq[2]), expect[2], atol=1e-5)
    with pytest.raises(ValueError, match=r"ddq must have shape \(5, 3\) like q; got \(5, 2\)"):
        model.predict(q, dq, ddq[:, :2])


def test_onnx_model_errors_name_the_file_and_key(tmp_path):
    import onnx

    _, path = _export(tmp_path)
    proto = onnx.load(str(path))
    del proto.metadata_props[:]
    onnx.helper.set_model_props(proto, {"deadzone_id_ros.format": "deadzone_id_ros.inverse_dynamics_onnx",
                                        "deadzone_id_ros.format_version": "1"})
    onnx.save(proto, str(path))
    with pytest.raises(ArtifactError, match=r"net.onnx: metadata key 'deadzone_id_ros.joint_names' is missing"):
        OnnxModel(path)
    del proto.metadata_props[:]
    onnx.save(proto, str(path))
    with pytest.raises(ArtifactError, match=r"net.onnx: not a deadzone_id_ros.inverse_dynamics_onnx network"):
        OnnxModel(path)
    bad = tmp_path / "broken.onnx"
    bad.write_bytes(b"not a network")
    with pytest.raises(ArtifactError, match="broken.onnx: onnxruntime cannot load this network"):
        OnnxModel(bad)
    with pytest.raises(FileNotFoundError, match="model file .*missing.onnx does not exist"):
        OnnxModel(tmp_path / "missing.onnx")


def _settings(model: str, model_path: str = "") -> SimpleNamespace:
    """Model fields of a ControllerConfig without its validation, to reach load_model's own errors."""
    return SimpleNamespace(model=model, joint_names=NAMES, urdf_path="", model_path=model_path, model_friction=False,
                           friction_velocity=0.01)


def test_load_model_kinds_and_errors(tmp_path):
    none = load_model(bundled_controller_config(mode="pd", model="none"))
    assert isinstance(none, ZeroModel) and none.joint_names == NAMES
    np.testing.assert_array_equal(none.predict(np.ones(3), np.ones(3), np.ones(3)), np.zeros(3))
    rbd = load_model(bundled_controller_config(model="rbd", model_friction=True, friction_velocity=0.02))
    assert isinstance(rbd, NominalRigidBodyModel) and rbd.friction and rbd.friction_velocity == 0.02
    with pytest.raises(ConfigError, match="model = 'mlp' must be one of"):
        load_model(_settings("mlp"))
    with pytest.raises(ConfigError, match="needs model_path"):
        load_model(_settings("learned"))
    with pytest.raises(FileNotFoundError, match="model_path .*nothing does not exist"):
        load_model(bundled_controller_config(model="learned", model_path=str(tmp_path / "nothing")))
    (tmp_path / "art").mkdir()
    with pytest.raises(ArtifactError, match="model.json is missing"):
        load_model(bundled_controller_config(model="learned", model_path=str(tmp_path / "art")))


def test_load_model_reads_the_urdf_path_of_the_settings(tmp_path):
    urdf = tmp_path / "arm.urdf"
    urdf.write_text(default_urdf().read_text().replace('name="joint3"', 'name="elbow"'))
    model = load_model(bundled_controller_config(joint_names=("joint1", "joint2", "elbow"), urdf_path=str(urdf)))
    assert model.joint_names == ("joint1", "joint2", "elbow")
    with pytest.raises(RobotDescriptionError, match="joint3"):
        load_model(bundled_controller_config(urdf_path=str(urdf)))


@pytest.mark.parametrize(
    ("kwargs", "batch", "match"),
    [({"q": np.zeros(2)}, True, r"q must have shape \(N, 3\) or \(3,\); got \(2,\)"),
     ({"q": np.zeros((4, 3, 1))}, True, r"q must have shape \(N, 3\) or \(3,\); got \(4, 3, 1\)"),
     ({"q": np.zeros((4, 3))}, False, r"q must have shape \(3,\); got \(4, 3\)"),
     ({"q": np.zeros(3), "dq": np.zeros(3), "ddq": np.zeros((1, 3))}, True,
      r"ddq must have shape \(3,\) like q; got \(1, 3\)")],
)
def test_check_joint_arrays_names_the_argument_and_both_shapes(kwargs, batch, match):
    with pytest.raises(ValueError, match=match):
        check_joint_arrays(3, batch=batch, **kwargs)


def test_check_joint_arrays_returns_float64_in_order():
    q, dq = check_joint_arrays(2, q=[1, 2], dq=np.array([3, 4], dtype=np.float32))
    assert q.dtype == dq.dtype == np.float64 and q.tolist() == [1.0, 2.0] and dq.tolist() == [3.0, 4.0]


def _to_float64(src, dst):
    """Rewrite a float32 network of the format into float64 throughout, as converters such as skl2onnx can emit."""
    import onnx
    from onnx import TensorProto, numpy_helper

    proto = onnx.load(str(src))
    graph = proto.graph

    def doubled(tensor):
        out = numpy_helper.from_array(numpy_helper.to_array(tensor).astype(np.float64), tensor.name)
        return out if tensor.data_type == TensorProto.FLOAT else tensor

    for i, init in enumerate(graph.initializer):
        graph.initializer[i].CopyFrom(doubled(init))
    for node in graph.node:
        for attr in node.attribute:
            if attr.type == onnx.AttributeProto.TENSOR:
                attr.t.CopyFrom(doubled(attr.t))
            if node.op_type == "Cast" and attr.name == "to" and attr.i == TensorProto.FLOAT:
                attr.i = TensorProto.DOUBLE
    for value in list(graph.input) + list(graph.output):
        value.type.tensor_type.elem_type = TensorProto.DOUBLE
    del graph.value_info[:]
    onnx.save(proto, str(dst))
    return dst


def test_a_float64_network_is_fed_float64_from_load_on(tmp_path):
    ref, path = _export(tmp_path)
    double = _to_float64(path, tmp_path / "double.onnx")
    model = OnnxModel(double)
    rng = np.random.default_rng(2)
    q, dq, ddq = rng.normal(size=(3, 4, 3))
    np.testing.assert_allclose(model.predict(q, dq, ddq), ref.predict(q, dq, ddq), atol=1e-5)
    # the control tick's path (one state, preallocated buffer), where onnxruntime raised on the first /joint_states
    np.testing.assert_allclose(model.predict(q[1], dq[1], ddq[1]), ref.predict(q, dq, ddq)[1], atol=1e-5)
    assert model.dtype == np.float64


def test_mixed_or_integer_element_types_are_refused_at_load_naming_the_tensor(tmp_path):
    import onnx
    from onnx import TensorProto, helper

    from deadzone_id_ros.models.onnx_format import ONNX_FORMAT

    def save(name, ddq_type, out_type, nodes):
        inputs = [helper.make_tensor_value_info(n, t, ["N", 3])
                  for n, t in (("q", TensorProto.DOUBLE), ("dq", TensorProto.DOUBLE), ("ddq", ddq_type))]
        graph = helper.make_graph(nodes, "g", inputs, [helper.make_tensor_value_info("tau", out_type, ["N", 3])])
        proto = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
        helper.set_model_props(proto, {
            "deadzone_id_ros.format": ONNX_FORMAT, "deadzone_id_ros.format_version": "1",
            "deadzone_id_ros.joint_names": json.dumps(list(NAMES)), "deadzone_id_ros.contents": "full",
            "deadzone_id_ros.units": json.dumps({"q": "rad", "dq": "rad/s", "ddq": "rad/s^2", "tau": "N*m"})})
        onnx.save(proto, str(tmp_path / name))
        return tmp_path / name

    mixed = save("mixed.onnx", TensorProto.FLOAT, TensorProto.DOUBLE, [
        helper.make_node("Add", ["q", "dq"], ["s"]), helper.make_node("Cast", ["ddq"], ["d"], to=TensorProto.DOUBLE),
        helper.make_node("Add", ["s", "d"], ["tau"])])
    with pytest.raises(ArtifactError, match=r"mixed.onnx: mixed element types \(.*input 'ddq' tensor\(float\)"):
        OnnxModel(mixed)
    integer = save("int.onnx", TensorProto.INT64, TensorProto.DOUBLE, [
        helper.make_node("Add", ["q", "dq"], ["s"]), helper.make_node("Cast", ["ddq"], ["d"], to=TensorProto.DOUBLE),
        helper.make_node("Add", ["s", "d"], ["tau"])])
    with pytest.raises(ArtifactError, match=r"int.onnx: input 'ddq' has element type tensor\(int64\)"):
        OnnxModel(integer)


def _kit_profile(tmp_path):
    """A profile of the bundled arm's URDF that knows its actuators: armature, Coulomb and viscous friction."""
    from deadzone_id_ros.resources import default_urdf as urdf

    text = (f"name: kit\nurdf: {urdf()}\njoints: [joint1, joint2, joint3]\nsettings:\n"
            + "".join(f"  {j}:\n    armature: {{value: {a}, source: test}}\n"
                      f"    frictionloss: {{value: {f}, source: test}}\n    damping: {{value: {d}, source: test}}\n"
                      for j, a, f, d in zip(NAMES, (0.03, 0.05, 0.02), (0.2, 0.5, 0.1), (0.04, 0.06, 0.02))))
    path = tmp_path / "kit.yaml"
    path.write_text(text)
    return path


def test_the_nominal_model_of_a_profile_includes_its_armature_and_friction(tmp_path):
    """Issue 39 item 8: the controller's nominal rigid body (load_model of the profile's controller config) is the
    URDF's rigid body plus armature * ddq and the profile's viscous and smooth-sign Coulomb friction; on fast joints
    (tanh = sign) it equals MuJoCo's inverse dynamics of the simulated arm built from the same profile."""
    import warnings

    from deadzone_id_ros.robot.derived import derive_robot
    from deadzone_id_ros.robot.profile import load_profile
    from deadzone_id_ros.robot_configs import controller_config, sim_config

    robot = derive_robot(load_profile(_kit_profile(tmp_path)))
    model = load_model(controller_config(robot, mode="ctc_dob", model="rbd"))
    bare = NominalRigidBodyModel(default_urdf(), NAMES)
    rng = np.random.default_rng(3)
    q = np.array([0.0, 0.3, 0.6]) + rng.uniform(-0.3, 0.3, size=(20, 3))  # inside the position limits
    ddq = rng.normal(size=(20, 3))
    dq = rng.choice([-1.0, 1.0], size=(20, 3)) * rng.uniform(0.5, 2.0, size=(20, 3))
    armature, coulomb, viscous = np.array([0.03, 0.05, 0.02]), np.array([0.2, 0.5, 0.1]), np.array([0.04, 0.06, 0.02])
    np.testing.assert_allclose(model.predict(q, dq, ddq) - bare.predict(q, dq, ddq),
                               armature * ddq + viscous * dq + coulomb * np.tanh(dq / 0.01), atol=1e-9)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # FrictionSourceWarning: the profile's friction overrides the URDF's
        arm = SimArm(sim_config(robot, profile="ideal"))
    np.testing.assert_allclose(model.predict(q, dq, ddq), arm.inverse_dynamics(q, dq, ddq, friction=True), atol=1e-9)


def test_a_continuous_joint_gets_its_angle_as_cos_sin_in_the_nominal_model(tmp_path):
    """pinocchio stores a continuous joint's angle as (cos, sin): the nominal model wrote the angle into the cos slot
    (found in the review of issues 39/40), so with the bundled arm's joint2 made continuous its gravity torque was
    that of another pose. The same arm with joint2 revolute is the reference (limits do not enter the dynamics)."""
    text = default_urdf().read_text()
    assert text.count('<joint name="joint2" type="revolute">') == 1
    cont = tmp_path / "continuous.urdf"
    cont.write_text(text.replace('<joint name="joint2" type="revolute">', '<joint name="joint2" type="continuous">'))
    q, dq, ddq = np.array([0.7, 0.4, -0.3]), np.array([0.5, 0.2, 0.1]), np.array([-1.0, 2.0, 0.5])
    reference = NominalRigidBodyModel(default_urdf(), NAMES).predict(q, dq, ddq)
    model = NominalRigidBodyModel(cont, NAMES)
    assert model.description.continuous.tolist() == [False, True, False]
    np.testing.assert_allclose(model.predict(q, dq, ddq), reference, rtol=0, atol=1e-12)
    np.testing.assert_allclose(model.predict(np.stack([q, q]), np.stack([dq, dq]), np.stack([ddq, ddq])),
                               np.stack([reference, reference]), rtol=0, atol=1e-12)
