"""``deadzone-id sweep``: the grid from YAML, one report per cell, one table; a failing cell is reported and the sweep
goes on; a re-run skips the finished cells. In-process engine (the Ray engine: test_engine.py)."""

from __future__ import annotations

import json

import pytest

from deadzone_id_ros.cli.main import main
from deadzone_id_ros.errors import ConfigError
from deadzone_id_ros.experiments.sweep.config import load_sweep

SWEEP = """\
data:
  - name: sim
    simulate: {seconds: 10, seed: 3}
alpha: [0.1, 0.3]
fractions: [0.1, 1.0]
seeds: 1
methods: [masked, conventional]
train: {hidden_sizes: [16, 16], max_steps: 40, eval_interval: 20, batch_size: 256, block_seconds: 3.0,
        efficiency_fractions: [1.0]}
"""


def test_sweep_reports_each_cell_goes_on_after_a_failure_and_resumes(tmp_path, capsys):
    (tmp_path / "sweep.yaml").write_text(SWEEP)
    out = tmp_path / "out"
    assert main(["sweep", str(tmp_path / "sweep.yaml"), "--out", str(out)]) == 1  # the 10 % cells fail
    first = json.loads((out / "report.json").read_text())
    keys = ["sim-alpha0.1-frac0.1", "sim-alpha0.1-frac1", "sim-alpha0.3-frac0.1", "sim-alpha0.3-frac1"]
    assert [c["key"] for c in first["cells"]] == keys
    status = {c["key"]: c["status"] for c in first["cells"]}
    assert status == dict(zip(keys, ["failed", "done", "failed", "done"]))
    # 1 s of data cannot be split into train/validation/test blocks of 3 s: the error is named, the rest ran
    failed = next(c for c in first["cells"] if c["key"] == keys[0])
    assert failed["error"].startswith("DataError") and (out / "cells" / keys[0] / "error.txt").is_file()
    for key in (keys[1], keys[3]):
        cell = next(c for c in first["cells"] if c["key"] == key)
        assert set(cell["methods"]) == {"masked", "conventional"}
        assert all(m["rmse_mean"] > 0 for m in cell["methods"].values())
        assert (out / "cells" / key / "report.md").is_file()
        assert (out / "cells" / key / "models" / "masked" / "model.json").is_file()
    # alpha changes the dead-zone mask, so the share of usable pairs of masked differs between the two alphas
    usable = [next(c for c in first["cells"] if c["key"] == k)["methods"]["masked"]["usable_fraction"]
              for k in (keys[1], keys[3])]
    assert usable[0] > usable[1]
    assert (out / "plots" / "rmse_vs_alpha.png").stat().st_size > 1000
    table = (out / "report.md").read_text()
    assert "| [sim-alpha0.1-frac1](cells/sim-alpha0.1-frac1/report.md) | sim | 0.1 | 1 |" in table
    assert "failed: DataError" in table
    assert "failed: sim-alpha0.1-frac0.1" in capsys.readouterr().out

    done_report = out / "cells" / keys[1] / "report.json"
    before = done_report.stat().st_mtime_ns
    assert main(["sweep", str(tmp_path / "sweep.yaml"), "--out", str(out)]) == 1
    second = json.loads((out / "report.json").read_text())
    assert sorted(second["skipped"]) == [keys[1], keys[3]]
    assert sorted(second["ran"]) == sorted(second["failed"]) == [keys[0], keys[2]]
    assert done_report.stat().st_mtime_ns == before  # not run again
    assert [c["methods"] for c in second["cells"]] == [c["methods"] for c in first["cells"]]

    # changed settings: the cell is run again, not taken from the earlier run
    (tmp_path / "sweep.yaml").write_text(SWEEP.replace("max_steps: 40", "max_steps: 30").replace(
        "alpha: [0.1, 0.3]", "alpha: [0.1]").replace("fractions: [0.1, 1.0]", "fractions: [1.0]"))
    assert main(["sweep", str(tmp_path / "sweep.yaml"), "--out", str(out)]) == 0
    third = json.loads((out / "report.json").read_text())
    assert third["ran"] == [keys[1]] and third["skipped"] == []
    assert done_report.stat().st_mtime_ns != before


def test_sweep_file_refuses_unknown_keys_and_bad_values(tmp_path):
    path = tmp_path / "s.yaml"
    path.write_text(SWEEP + "learning_rates: [1e-3]\n")
    with pytest.raises(ConfigError, match=r"s\.yaml: unknown key\(s\) \['learning_rates'\]"):
        load_sweep(path)
    path.write_text(SWEEP.replace("fractions: [0.1, 1.0]", "fractions: [0, 1.0]"))
    with pytest.raises(ConfigError, match=r"fractions = \[0, 1.0\] must be"):
        load_sweep(path)
    path.write_text(SWEEP.replace("simulate: {seconds: 10, seed: 3}", "bags: [a]\n    simulate: {seconds: 1}"))
    with pytest.raises(ConfigError, match="give either bags or simulate, not both"):
        load_sweep(path)


def test_sweep_paths_are_relative_to_the_file(tmp_path):
    path = tmp_path / "s.yaml"
    path.write_text(SWEEP.replace("simulate: {seconds: 10, seed: 3}", "bags: [runs/a]"))
    assert load_sweep(path).data[0].bags == (str(tmp_path / "runs" / "a"),)


def test_sweep_over_robot_profiles_simulates_each_robot_and_fits_rbd_on_its_urdf(tmp_path):
    """Data sets from two robot profiles (the bundled 3-joint arm and the 5-joint SO-101): each cell's comparison
    has that robot's joints, and rbd is fitted on that robot's URDF (its per-joint RMSE has one entry per joint)."""
    pytest.importorskip("pinocchio")
    from deadzone_id_ros.robot.catalog import available_robots

    if "so101" not in available_robots():
        pytest.skip("the so101 URDF comes with example-robot-data (make install-robots)")
    (tmp_path / "sweep.yaml").write_text(SWEEP.replace(
        "  - name: sim\n    simulate: {seconds: 10, seed: 3}",
        "  - {name: arm3, simulate: {seconds: 10, seed: 3}}\n"
        "  - {name: so101, simulate: {seconds: 10, seed: 3, robot: so101}}").replace(
        "alpha: [0.1, 0.3]", "alpha: [0.1]").replace("fractions: [0.1, 1.0]", "fractions: [1.0]").replace(
        "methods: [masked, conventional]", "methods: [masked, rbd]"))
    out = tmp_path / "out"
    assert main(["sweep", str(tmp_path / "sweep.yaml"), "--out", str(out)]) == 0
    joints = {}
    for key in ("arm3-alpha0.1-frac1", "so101-alpha0.1-frac1"):
        report = json.loads((out / "cells" / key / "report.json").read_text())
        joints[key] = report["joint_names"]
        assert len(report["methods"]["rbd"]["rmse_per_joint"]) == len(joints[key])
    assert len(joints["arm3-alpha0.1-frac1"]) == 3 and len(joints["so101-alpha0.1-frac1"]) == 5
