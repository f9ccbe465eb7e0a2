"""The deadzone-id train / evaluate / export / compare commands on a simulated bag (in-process, fast)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from deadzone_id_ros.cli.main import main
from deadzone_id_ros.training.sources import fingerprint


@pytest.fixture(scope="module")
def config_file(make_config_file):
    return make_config_file(60)


@pytest.fixture(scope="module")
def trained(bag, config_file, tmp_path_factory):
    out = tmp_path_factory.mktemp("model") / "masked"
    assert (
        main(["train", "--bag", str(bag), "--method", "masked", "--out", str(out), "--config", str(config_file)]) == 0
    )
    return out


def test_train_writes_an_artifact_with_the_bag_fingerprint(trained, bag):
    meta = json.loads((trained / "model.json").read_text())
    assert meta["training_data"]["sources"] == [s.to_dict() for s in fingerprint([bag])]
    assert meta["train_config"]["hidden_sizes"] == [16, 16] and meta["train_config"]["max_steps"] == 60
    assert meta["metrics"]["rmse_mean"] > 0 and (trained / "model.onnx").is_file()


def test_evaluate_matches_an_independent_computation(trained, bag, tmp_path, capsys):
    from deadzone_id_ros.data.dataset import load_dataset
    from deadzone_id_ros.models import load_artifact

    out = tmp_path / "eval.json"
    assert main(["evaluate", "--model", str(trained), "--bag", str(bag), "--json", str(out)]) == 0
    assert "mean RMSE" in capsys.readouterr().out
    got = json.loads(out.read_text())
    model = load_artifact(trained)
    eps = load_dataset([bag]).episodes
    q, dq, ddq, tau = (np.concatenate([getattr(e, a) for e in eps]) for a in ("q", "dq", "ddq", "tau"))
    moving = np.abs(dq) > np.asarray(model.metadata["dead_zone"]["threshold"])
    err = model.predict(q, dq, ddq) - tau
    np.testing.assert_allclose(got["rmse_per_joint"], [np.sqrt(np.mean(err[moving[:, j], j] ** 2)) for j in range(3)],
                               rtol=1e-9)


def test_export_rewrites_onnx_and_keeps_the_artifact_loadable(trained, capsys):
    from deadzone_id_ros.models import load_artifact

    (trained / "model.onnx").unlink()
    assert main(["export", "--model", str(trained), "--onnx"]) == 0
    assert "onnxruntime vs numpy" in capsys.readouterr().out
    assert (trained / "model.onnx").is_file()
    assert load_artifact(trained).metadata["onnx"]["file"] == "model.onnx"


def test_rbd_is_not_exportable(bag, config_file, tmp_path, capsys):
    out = tmp_path / "rbd"
    assert main(["train", "--bag", str(bag), "--method", "rbd", "--out", str(out), "--config", str(config_file)]) == 0
    assert main(["export", "--model", str(out), "--onnx"]) == 2
    assert "not exportable to ONNX" in capsys.readouterr().err


def test_compare_on_a_simulated_bag_reports_the_noise_floor(bag, config_file, tmp_path, capsys):
    out = tmp_path / "cmp"
    assert main(["compare", "--bag", str(bag), "--out", str(out), "--config", str(config_file),
                 "--methods", "masked", "conventional", "rbd"]) == 0
    report = json.loads((out / "report.json").read_text())
    assert set(report["methods"]) == {"masked", "conventional", "rbd"}
    assert report["data"]["simulator"] is True and "noise_floor" in report
    assert report["data"]["sources"] == [s.to_dict() for s in fingerprint([bag])]
    assert "simulator data: yes" in capsys.readouterr().err


def test_user_errors_exit_2_with_a_message(bag, config_file, trained, tmp_path, capsys):
    assert main(["train", "--bag", str(tmp_path / "missing"), "--method", "masked", "--out", str(tmp_path / "o")]) == 2
    assert "does not exist" in capsys.readouterr().err
    bad_cfg = tmp_path / "bad.yaml"
    bad_cfg.write_text("/**:\n  ros__parameters:\n    hiden_sizes: [4]\n")
    assert main(["train", "--bag", str(bag), "--method", "masked", "--out", str(tmp_path / "o"),
                 "--config", str(bad_cfg)]) == 2
    assert "unknown key(s) ['hiden_sizes']" in capsys.readouterr().err
    assert main(["evaluate", "--model", str(trained), "--bag", str(bag), "--joints", "joint2", "joint1", "joint3"]) == 2
    assert "differ from the model's joints" in capsys.readouterr().err
    assert main(["compare", "--bag", str(bag), "--out", str(tmp_path / "c"), "--seeds", "0",
                 "--config", str(config_file)]) == 2
    assert "seeds = 0 must be a positive integer" in capsys.readouterr().err


def test_absolute_thresholds_reach_training_and_compare(bag, config_file, tmp_path):
    thr = [0.05, 0.2, 0.01]
    out = tmp_path / "m"
    assert main(["train", "--bag", str(bag), "--method", "masked", "--out", str(out), "--config", str(config_file),
                 "--thresholds", *map(str, thr), "--no-onnx"]) == 0
    meta = json.loads((out / "model.json").read_text())
    assert meta["dead_zone"]["threshold"] == thr and meta["dead_zone"]["alpha"] is None
    assert meta["train_config"]["dead_zone"] == {"alpha": 0.1, "absolute_thresholds": thr}
    cfg = tmp_path / "dz.yaml"
    cfg.write_text(config_file.read_text() + "    dead_zone:\n      absolute_thresholds: [0.05, 0.2, 0.01]\n")
    assert main(["compare", "--bag", str(bag), "--out", str(tmp_path / "c"), "--config", str(cfg),
                 "--methods", "masked"]) == 0
    report = json.loads((tmp_path / "c" / "report.json").read_text())
    assert report["dead_zone"]["threshold"] == thr and report["dead_zone"]["alpha"] is None
    assert "per-joint thresholds set in the configuration" in (tmp_path / "c" / "report.md").read_text()


def test_dead_zone_flags_are_checked(bag, config_file, tmp_path, capsys):
    assert main(["train", "--bag", str(bag), "--method", "masked", "--out", str(tmp_path / "m"), "--config",
                 str(config_file), "--thresholds", "0.1", "0.1"]) == 2
    assert "absolute_thresholds has 2 values for joints ['joint1', 'joint2', 'joint3']" in capsys.readouterr().err
    assert main(["train", "--bag", str(bag), "--method", "masked", "--out", str(tmp_path / "m"), "--alpha", "-1"]) == 2
    assert "--alpha = -1.0 must be a non-negative number" in capsys.readouterr().err
    with pytest.raises(SystemExit):  # argparse: --alpha and --thresholds exclude each other
        main(["train", "--bag", str(bag), "--method", "masked", "--out", "o", "--alpha", "0.1", "--thresholds", "1"])


def test_inspect_uses_the_dead_zone_setting(bag, capsys):
    assert main(["inspect", str(bag), "--json", "--thresholds", "0.05", "0.2", "0.01"]) == 0
    info = json.loads(capsys.readouterr().out)["dataset"]
    assert list(info["velocity_threshold"].values()) == [0.05, 0.2, 0.01] and info["alpha"] is None
    assert main(["inspect", str(bag), "--json"]) == 0  # default: the bundled training.yaml's alpha
    assert json.loads(capsys.readouterr().out)["dataset"]["alpha"] == 0.1
    assert main(["inspect", str(bag), "--thresholds", "0.1"]) == 2
    assert "has 1 values for joints" in capsys.readouterr().err


def test_train_compare_export_never_replace_what_the_user_has(bag, config_file, trained, tmp_path, capsys):
    user = tmp_path / "user_model"
    user.mkdir()
    (user / "weights.npz").write_text("someone else's model")
    assert main(["train", "--bag", str(bag), "--method", "masked", "--out", str(user), "--config",
                 str(config_file)]) == 2
    assert "not the output of a deadzone-id command" in capsys.readouterr().err
    assert (user / "weights.npz").read_text() == "someone else's model"
    # compare failing after it started (unknown --seeds value is caught before; a dead-zone error happens inside)
    out = tmp_path / "cmp"
    assert main(["compare", "--bag", str(bag), "--out", str(out), "--config", str(config_file), "--methods", "masked",
                 "--thresholds", "0.1", "0.1"]) == 2
    assert not out.exists() and [p.name for p in tmp_path.iterdir()] == ["user_model"]
    # export --out an existing directory: a clear error, not a traceback
    assert main(["export", "--model", str(trained), "--onnx", "--out", str(tmp_path)]) == 2
    assert "is a directory; give the path of the file" in capsys.readouterr().err
    # train --out an earlier train output: replaced
    again = tmp_path / "again"
    for _ in range(2):
        assert main(["train", "--bag", str(bag), "--method", "rbd", "--out", str(again), "--config",
                     str(config_file)]) == 0
    assert (again / "model.json").is_file()


def test_hints_name_the_flags_not_the_configuration_fields(bag, config_file, tmp_path, capsys):
    assert main(["train", "--bag", str(bag), "--method", "masked", "--out", str(tmp_path / "m"), "--config",
                 str(config_file), "--block-seconds", "-1"]) == 2
    err = capsys.readouterr().err
    assert "--block-seconds = -1.0 must be" in err and "block_seconds" not in err
    assert main(["train", "--bag", str(bag), "--method", "masked", "--out", str(tmp_path / "m"), "--joints", "joint1",
                 "joint1"]) == 2
    err = capsys.readouterr().err
    assert "--joints = ('joint1', 'joint1') must be non-empty without duplicates" in err and "DatasetConfig" not in err


def test_evaluate_warns_when_the_bag_was_used_for_training(trained, bag, sim_recordings, tmp_path, capsys):
    from deadzone_id_ros.data.bag import write_recording

    out = tmp_path / "eval.json"
    assert main(["evaluate", "--model", str(trained), "--bag", str(bag), "--json", str(out)]) == 0
    cap = capsys.readouterr()
    assert "was used to train this model" in cap.out and "optimistic" in cap.err
    doc = json.loads(out.read_text())
    assert doc["evaluated_on_training_data"] is True and doc["training_bags_evaluated"] == [str(bag.resolve())]
    assert doc["warnings"] and str(bag.resolve()) in doc["warnings"][0]
    unseen = write_recording(sim_recordings[1], tmp_path / "unseen")
    assert main(["evaluate", "--model", str(trained), "--bag", str(unseen), "--json", str(out)]) == 0
    assert "used to train" not in capsys.readouterr().out
    doc = json.loads(out.read_text())
    assert doc["evaluated_on_training_data"] is False and doc["warnings"] == []


def test_velocity_hint_names_the_flag_that_fixes_it(sim_recordings, config_file, tmp_path, capsys):
    """A velocity field full of NaN with --velocity message: the error names --velocity differentiate, which works."""
    import dataclasses

    from deadzone_id_ros.data.bag import write_recording

    rec = sim_recordings[0]
    bad = write_recording(dataclasses.replace(rec, velocity=np.full_like(rec.velocity, np.nan)), tmp_path / "nan_dq")
    args = ["train", "--bag", str(bad), "--method", "masked", "--config", str(config_file), "--no-onnx"]
    assert main([*args, "--out", str(tmp_path / "m1"), "--velocity", "message"]) == 2
    err = capsys.readouterr().err
    assert "use --velocity differentiate" in err and "velocity='differentiate'" not in err, err
    assert main([*args, "--out", str(tmp_path / "m2"), "--velocity", "differentiate"]) == 0


def test_help_is_plain_text_not_restructured_text(capsys):
    with pytest.raises(SystemExit):
        main(["train", "--help"])
    out = capsys.readouterr().out
    assert "`deadzone-id train`: fit one method" in out and "``" not in out and ":func:" not in out
