"""Effort in other units (issue 11 item 6): the unit goes from the data into the report, the artifact and the
controller's check, and ``--torque-constant JOINT:K`` converts a joint's effort to N·m."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

from deadzone_id_ros.cli.main import main
from deadzone_id_ros.data.effort_units import guess_effort_unit, parse_torque_constants
from deadzone_id_ros.errors import ArtifactError
from deadzone_id_ros.robot_configs import bundled_controller_config

K = 0.002  # N·m per mA: the "motor" of this test
@pytest.fixture(scope="module")
def current_bag(sim_recordings, tmp_path_factory):
    """The simulated run as a robot that logs motor current [mA] as effort (tau / K), not from the simulator."""
    from deadzone_id_ros.data.bag import write_recording

    rec = dataclasses.replace(sim_recordings[0], effort=sim_recordings[0].effort / K, metadata={})
    return write_recording(rec, tmp_path_factory.mktemp("bags") / "current_run")


def _train(bag, out, config_file, *extra):
    return main(["train", "--bag", str(bag), "--method", "masked", "--out", str(out), "--config", str(config_file),
                 "--no-onnx", *extra])


def _controller_loads(model_dir):
    from deadzone_id_ros.models.runtime import load_model

    return load_model(bundled_controller_config(model="learned", model_path=str(model_dir)))


def test_current_effort_is_carried_as_its_unit_and_the_controller_refuses_it(current_bag, config_file, tmp_path,
                                                                            capsys):
    out = tmp_path / "model"
    assert _train(current_bag, out, config_file) == 0
    captured = capsys.readouterr()
    assert "effort unit unknown" in captured.err and "--torque-constant" in captured.err
    assert "test RMSE [unknown]" in captured.out
    meta = json.loads((out / "model.json").read_text())
    assert meta["units"]["tau"] == "unknown" and set(meta["effort_units"].values()) == {"unknown"}
    assert meta["training_data"]["effort_units"] == meta["effort_units"]
    with pytest.raises(ArtifactError, match=r"not N·m .*--torque-constant"):
        _controller_loads(out)
    # an ONNX file written anyway carries the unit, and the controller's ONNX loader refuses it as well
    from deadzone_id_ros.models.artifact import export_onnx, load_artifact, save_artifact

    onnx = export_onnx(load_artifact(out), tmp_path / "model.onnx")
    with pytest.raises(ArtifactError, match=r"another unit than N·m: retrain it \(--torque-constant"):
        _controller_loads(onnx)
    # `deadzone-id export --onnx` refuses it before writing anything; the artifact says why it has no ONNX file
    assert main(["export", "--model", str(out), "--onnx"]) == 2
    assert "not N·m" in capsys.readouterr().err and not (out / "model.onnx").exists()
    # saving the loaded model again (no training data given) keeps its unit: it does not become N·m
    again = save_artifact(load_artifact(out), tmp_path / "again").path
    meta = json.loads((again / "model.json").read_text())
    assert meta["units"]["tau"] == "unknown" and "not the N·m a controller commands" in meta["onnx"]["reason"]
    with pytest.raises(ArtifactError, match=r"not N·m"):
        _controller_loads(again)


def test_stated_unit_reaches_the_artifact(current_bag, config_file, tmp_path, capsys):
    out = tmp_path / "model"
    assert main(["train", "--bag", str(current_bag), "--method", "masked", "--out", str(out), "--config",
                 str(config_file), "--effort-unit", "mA"]) == 0
    captured = capsys.readouterr()
    assert "test RMSE [mA]" in captured.out
    assert "no ONNX file: not exported: the model predicts" in captured.err and not (out / "model.onnx").exists()
    assert json.loads((out / "model.json").read_text())["units"]["tau"] == "mA"
    # every spelling of newton metre is N·m (the controller then accepts the model)
    nm = tmp_path / "nm"
    assert _train(current_bag, nm, config_file, "--effort-unit", "N·m") == 0
    assert json.loads((nm / "model.json").read_text())["units"]["tau"] == "N*m"
    _controller_loads(nm)


def test_torque_constant_for_a_joint_not_in_the_data_is_refused(current_bag, config_file, tmp_path, capsys):
    assert _train(current_bag, tmp_path / "m", config_file, "--torque-constant", "elbow:0.002") == 2
    err = capsys.readouterr().err
    assert "--torque-constant names joint(s) ['elbow']" in err and "joint1" in err, err


def test_torque_constants_train_in_newton_metres_like_the_torque_bag(current_bag, bag, config_file, tmp_path, capsys):
    converted, reference = tmp_path / "converted", tmp_path / "reference"
    assert _train(current_bag, converted, config_file,
                  "--torque-constant", *(f"joint{i}:{K}" for i in (1, 2, 3))) == 0
    assert _train(bag, reference, config_file) == 0
    capsys.readouterr()
    meta = json.loads((converted / "model.json").read_text())
    assert meta["units"]["tau"] == "N*m" and meta["training_data"]["torque_constants"] == {
        f"joint{i}": K for i in (1, 2, 3)}
    ref = json.loads((reference / "model.json").read_text())
    # the same torques (to the rounding of tau / K * K), so the same training and errors
    np.testing.assert_allclose(meta["metrics"]["rmse_per_joint"], ref["metrics"]["rmse_per_joint"], rtol=1e-4)
    _controller_loads(converted)  # N·m: accepted
    # evaluate applies the model's torque constants to the recording in mA, and refuses other values
    assert main(["evaluate", "--model", str(converted), "--bag", str(current_bag)]) == 0
    assert "RMSE [N·m]" in capsys.readouterr().out
    assert main(["evaluate", "--model", str(converted), "--bag", str(current_bag), "--torque-constant",
                 "joint1:0.5", "joint2:0.002", "joint3:0.002"]) == 2
    assert "differs from the constants the model was trained with" in capsys.readouterr().err


def test_evaluate_refuses_data_in_another_unit_than_the_model(current_bag, bag, config_file, tmp_path, capsys):
    out = tmp_path / "model"
    assert _train(bag, out, config_file) == 0
    capsys.readouterr()
    assert main(["evaluate", "--model", str(out), "--bag", str(current_bag)]) == 2
    assert "effort units" in (err := capsys.readouterr().err) and "differ from the model's" in err, err


def test_torque_constant_flag_is_checked():
    assert parse_torque_constants(["wrist:0.0018", "a:b:2"]) == {"wrist": 0.0018, "a:b": 2.0}
    for bad in (["wrist"], ["wrist:0"], ["wrist:x"], [":1"], ["w:1", "w:2"]):
        with pytest.raises(ValueError, match="--torque-constant"):
            parse_torque_constants(bad)


def test_guess_names_interbotix_current_and_implausible_magnitudes():
    assert guess_effort_unit({"interbotix_xs_msgs/msg/JointGroupCommand"}, 5.0)[0] == "mA"
    assert guess_effort_unit({"sensor_msgs/msg/JointState"}, 900.0)[0] == "unknown"
    assert guess_effort_unit({"sensor_msgs/msg/JointState"}, 12.0)[0] == "N*m"


def test_interbotix_current_is_recognised_in_a_real_bag():
    """The WX200 recording (Interbotix xs_sdk: Dynamixel present current as effort) loads as mA, not N·m."""
    from pathlib import Path

    from deadzone_id_ros.data.dataset import load_dataset

    wx200 = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "real" / "wx200_waist_diagnostics.bag"
    if not wx200.exists():
        pytest.skip(f"{wx200} not present")
    ds = load_dataset(wx200)
    assert set(ds.effort_units.values()) == {"mA"} and "Interbotix" in ds.effort_unit_reason
    constants = {ds.joint_names[0]: 0.0018}
    converted = load_dataset(wx200, dataclasses.replace(ds.config, torque_constants=constants))
    assert converted.effort_units[ds.joint_names[0]] == "N*m" and converted.effort_units[ds.joint_names[1]] == "mA"
    np.testing.assert_allclose(converted.episodes[0].tau[:, 0], ds.episodes[0].tau[:, 0] * 0.0018)


def test_mixed_units_are_refused_by_the_controller():
    from deadzone_id_ros.models.artifact import check_newton_metres

    class Model:
        joint_names = ("a", "b")
        metadata = {"effort_units": {"a": "N*m", "b": "mA"}}

    with pytest.raises(ArtifactError, match=r"\{'b': 'mA'\}, not N·m"):
        check_newton_metres(Model(), "m")
    Model.metadata = {"effort_units": {"a": "N*m", "b": "N*m"}}
    check_newton_metres(Model(), "m")  # all N·m: accepted


def test_compare_report_says_the_controller_refuses_a_pick_in_another_unit(current_bag, config_file, tmp_path,
                                                                          capsys):
    out = tmp_path / "cmp"
    assert main(["compare", "--bag", str(current_bag), "--out", str(out), "--config", str(config_file),
                 "--methods", "masked", "mse_all", "--effort-unit", "mA"]) == 0
    err = capsys.readouterr().err
    assert f"exported to {out}/pick" in err and ".tmp-" not in err  # the log names the final folder
    md = (out / "report.md").read_text()
    assert "Torque RMSE [mA]" in md and "no ONNX: it predicts mA, not N·m" in md
    assert "**The controller refuses this model**" in md and "--torque-constant" in md
    assert json.loads((out / "report.json").read_text())["units"]["rmse"] == "mA"
