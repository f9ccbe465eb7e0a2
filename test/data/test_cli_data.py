"""deadzone-id inspect / convert / simulate, run in-process through cli.main (exit status, output, error lines)."""

from __future__ import annotations

import json

import numpy as np
import pytest
import yaml
from conftest import SHARED_REAL
from data_helpers import sine_messages, write_joint_state_bag

from deadzone_id_ros.cli.main import main
from deadzone_id_ros.data.bag import read_recording
from deadzone_id_ros.data.convert import parse_joint_spec, read_csv_recording
from deadzone_id_ros.data.dataset import load_dataset
from deadzone_id_ros.errors import DataError

needs_real = pytest.mark.skipif(not SHARED_REAL.is_dir(), reason=f"real data folder {SHARED_REAL} is absent")
DFKI = SHARED_REAL / "dfki_double_pendulum" / "design_A0_20220815_trajectory_00.csv"
DFKI_JOINTS = ["--joint", "shoulder:pos=pos_meas1,vel=vel_meas1,effort=tau_meas1,command=tau_con1",
               "--joint", "elbow:pos=pos_meas2,vel=vel_meas2,effort=tau_meas2,command=tau_con2"]


@needs_real
@pytest.mark.parametrize(
    ("bag", "trainable", "why"),
    [("kuka_lwr4_fri.bag", True, None),
     ("wx200_waist_diagnostics.bag", True, None),
     ("ros2_edge/mcap_jazzy_arm", False, r"field effort exactly zero in every message \(q0, q1, q2\)"),
     ("ros2_edge/sqlite3_empty_names", False, r"/servo/out/state: no usable message: empty name list"),
     ("ros2_edge/sqlite3_killed_on_contact", False, r"nothing moves")],
)
def test_inspect_every_real_bag(capsys, bag, trainable, why):
    status = main(["inspect", str(SHARED_REAL / bag), "--json"])
    info = json.loads(capsys.readouterr().out)
    assert status == (0 if trainable else 1)
    assert info["trainable"] is trainable
    if trainable:
        d = info["dataset"]
        assert set(d["dead_zone_fraction"]) == set(d["joints"])
        assert 0.0 <= d["all_joints_moving_fraction"] <= min(1 - f for f in d["dead_zone_fraction"].values())
    else:
        import re

        assert re.search(why, info["why_not"]), info["why_not"]
    status = main(["inspect", str(SHARED_REAL / bag)])
    text = capsys.readouterr().out
    assert ("TRAINABLE: yes" if trainable else "TRAINABLE: no - ") in text


@needs_real
def test_inspect_text_reports_units_and_fields(capsys):
    main(["inspect", str(SHARED_REAL / "wx200_waist_diagnostics.bag")])
    text = capsys.readouterr().out
    assert "motor current in mA" in text
    assert "effort  : usable for ['waist', 'shoulder', 'elbow', 'wrist_angle', 'wrist_rotate']; exactly zero in " \
           "every message: ['gripper', 'left_finger', 'right_finger']" in text
    assert "/wx200/joint_states" in text and "sensor_msgs/msg/JointState" in text
    main(["inspect", str(SHARED_REAL / "kuka_lwr4_fri.bag"), "--json"])
    info = json.loads(capsys.readouterr().out)
    assert info["topics"]["/joint_states"]["messages"] == 4101
    assert info["topics"]["/joint_states"]["rate_hz"] == pytest.approx(100.0, rel=1e-3)
    assert "N·m assumed" in info["effort_note"]


@needs_real
def test_inspect_takes_the_loaders_effort_flags_as_training_does(capsys):
    """inspect reads bags with train's loader flags: a torque constant or a stated unit replaces the guess."""
    bag = str(SHARED_REAL / "wx200_waist_diagnostics.bag")
    main(["inspect", bag, "--json", "--torque-constant", "waist:0.0018", "--joints", "waist", "shoulder"])
    info = json.loads(capsys.readouterr().out)
    assert "'waist': 'N*m', 'shoulder': 'mA'" in info["effort_note"]
    assert "converted to N·m with --torque-constant for ['waist']" in info["effort_note"]
    assert info["dataset"]["joints"] == ["waist", "shoulder"]
    main(["inspect", bag, "--json", "--effort-unit", "newton metre"])
    note = json.loads(capsys.readouterr().out)["effort_note"]
    assert "stated with --effort-unit" in note and "mA" not in note and "refuses" not in note


def test_inspect_errors_are_one_line(capsys, tmp_path):
    assert main(["inspect", str(tmp_path / "missing")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("deadzone-id inspect: error: bag ") and "does not exist" in err and "Traceback" not in err
    (tmp_path / "notabag.bag").write_text("x")
    assert main(["inspect", str(tmp_path / "notabag.bag")]) == 2
    assert "not a bag" in capsys.readouterr().err


def test_inspect_recovered_bag_says_so(capsys, tmp_path):
    bag = write_joint_state_bag(tmp_path / "b", sine_messages(300))
    (bag / "metadata.yaml").unlink()
    assert main(["inspect", str(bag)]) == 0
    out = capsys.readouterr().out
    assert "RECOVERED from a damaged bag" in out and "recovered 300 message(s)" in out


@needs_real
def test_convert_dfki_csv(capsys, tmp_path):
    out = tmp_path / "dfki"
    assert main(["convert", str(DFKI), "--out", str(out), "--time", "time", "--start-time", "1660000000",
                 "--robot", "dfki_double_pendulum", *DFKI_JOINTS]) == 0
    assert "4997 /joint_states messages and /effort_controller/commands" in capsys.readouterr().out
    rec = read_recording(out)
    assert rec.joint_names == ("shoulder", "elbow") and rec.command.shape == (4997, 2)
    assert rec.state_t_ns[0] == 1_660_000_000 * 10**9
    # first data row of the CSV: pos_meas1 = -1.907377737087045944e-04, tau_meas2 = 8.791208791208759976e-03
    assert rec.position[0, 0] == pytest.approx(-1.907377737087045944e-04, rel=1e-12)
    assert rec.effort[0, 1] == pytest.approx(8.791208791208759976e-03, rel=1e-12)
    assert yaml.safe_load((out / "episode.yaml").read_text())["robot"] == "dfki_double_pendulum"
    assert load_dataset([out]).num_samples == 5000
    # the storage file carries the bag's name (rosbag2 names it after its directory), not the hidden temporary one
    assert sorted(p.name for p in out.iterdir() if p.suffix == ".mcap") == ["dfki.mcap"]
    assert not [p for p in out.iterdir() if p.name.startswith(".")]
    assert yaml.safe_load((out / "metadata.yaml").read_text())["rosbag2_bagfile_information"][
        "relative_file_paths"] == ["dfki.mcap"]


def test_convert_missing_fields_are_empty_and_differentiated(tmp_path):
    csv = tmp_path / "log.csv"
    t = np.arange(600) / 200.0
    csv.write_text("t_ms,q,tau\n" + "\n".join(f"{ti * 1000},{np.sin(ti)},{2 * np.sin(ti) + 1}" for ti in t))
    assert main(["convert", str(csv), "--out", str(tmp_path / "b"), "--time", "t_ms", "--time-unit", "ms",
                 "--joint", "j:pos=q,effort=tau", "--storage", "sqlite3"]) == 0
    ds = load_dataset([tmp_path / "b"])
    assert ds.report.velocity_source[str(tmp_path / "b")] == "savgol derivative of position"
    ep = ds.episodes[0]
    np.testing.assert_allclose(ep.dq[20:-20, 0], np.cos(ep.t[20:-20] - ep.t[0] + t[0]), atol=1e-3)


@pytest.mark.parametrize(
    ("spec", "match"),
    [("j", "expected NAME:pos=COL"), ("j:vel=v", "pos=COLUMN is required"), ("j:pos=a,foo=b", "unknown key 'foo'"),
     ("j:pos=a,pos=b", "key 'pos' given twice"), ("j:pos", "must be KEY=COLUMN"), ("bad name:pos=a", "ROS name")],
)
def test_joint_spec_errors(spec, match):
    with pytest.raises(DataError, match=match):
        parse_joint_spec(spec)


def test_csv_errors(tmp_path, capsys):
    csv = tmp_path / "x.csv"
    csv.write_text("time,a,b,c\n0,1,2,3\n0.1,1,oops,3\n")
    j = [parse_joint_spec("j:pos=a,vel=b")]
    with pytest.raises(DataError, match=r"x.csv: line 3 column b: value 'oops' is not a number"):
        read_csv_recording(csv, "time", j)
    with pytest.raises(DataError, match=r"column\(s\) \['zz'\] not in header \['time', 'a', 'b', 'c'\]"):
        read_csv_recording(csv, "time", [parse_joint_spec("j:pos=zz")])
    with pytest.raises(DataError, match="command columns given for some joints only"):
        read_csv_recording(csv, "time", [parse_joint_spec("j:pos=a,command=c"), parse_joint_spec("k:pos=c")])
    with pytest.raises(DataError, match="joint names repeat"):
        read_csv_recording(csv, "time", [parse_joint_spec("j:pos=a"), parse_joint_spec("j:pos=c")])
    (tmp_path / "empty.csv").write_text("time,a\n")
    with pytest.raises(DataError, match="no data rows"):
        read_csv_recording(tmp_path / "empty.csv", "time", [parse_joint_spec("j:pos=a")])
    with pytest.raises(FileNotFoundError, match="does not exist"):
        read_csv_recording(tmp_path / "nope.csv", "time", j)
    assert main(["convert", str(csv), "--out", str(tmp_path / "o"), "--time", "time", "--joint", "j:pos"]) == 2
    assert "must be KEY=COLUMN" in capsys.readouterr().err


@pytest.mark.parametrize("storage", ["mcap", "sqlite3"])
def test_simulate_writes_a_live_like_bag(tmp_path, capsys, storage):
    out = tmp_path / "sim"
    assert main(["simulate", "--duration", "0.5", "--seed", "3", "--out", str(out), "--storage", storage,
                 "--start-time", "1700000000", "--no-progress"]) == 0
    assert "500 samples" in capsys.readouterr().out
    rec = read_recording(out)
    assert rec.joint_names == ("joint1", "joint2", "joint3")
    assert len(rec.state_t_ns) == 500 and rec.command.shape == (500, 3) and rec.reference_position.shape == (500, 3)
    assert rec.state_t_ns[0] == 1_700_000_000 * 10**9
    assert np.all(np.diff(rec.state_t_ns) == 1_000_000)
    ep = yaml.safe_load((out / "episode.yaml").read_text())
    assert ep["seed"] == 3 and ep["storage"] == storage
    assert main(["simulate", "--duration", "0", "--seed", "3", "--out", str(tmp_path / "x")]) == 2
    assert "--duration = 0.0 must be > 0 s" in capsys.readouterr().err
