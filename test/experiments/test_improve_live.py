"""The ROS-free parts of ``deadzone-id improve --live``: the setting, and the controller parameter file that gives the
live controller the in-process runs' DOB cutoff (the live runs: test/integration/test_improve_over_dds.py)."""

from __future__ import annotations

import pytest
import yaml

from deadzone_id_ros.experiments.improve.live import controller_params_file
from deadzone_id_ros.experiments.improve.results import ImproveSettings
from deadzone_id_ros.experiments.improve.run import RunSetup
from deadzone_id_ros.resources import share_file


def test_live_must_be_a_bool_and_reads_back():
    with pytest.raises(ValueError, match="live = 'yes' must be true or false"):
        ImproveSettings(live="yes")  # type: ignore[arg-type]
    assert ImproveSettings(live=True).to_dict()["live"] is True
    assert ImproveSettings().live is False  # in-process unless asked


def test_weak_dob_reaches_the_live_controller_through_a_parameter_file(tmp_path):
    """x0.2: a copy of the bundled controller file whose dob_cutoff is the in-process runs' (setup.base.dob_cutoff
    times the scale), every other key as bundled; x1: no file (the launch default is the in-process cutoff)."""
    setup = RunSetup.for_robot(None)
    assert controller_params_file(setup, 1.0, tmp_path) is None
    path = controller_params_file(setup, 0.2, tmp_path)
    assert path == tmp_path / "controller_params.yaml"
    params = yaml.safe_load(path.read_text())["/**"]["ros__parameters"]
    assert params["dob_cutoff"] == pytest.approx([0.2 * g for g in setup.base.dob_cutoff])
    bundled = yaml.safe_load(share_file("config", "feedforward_controller.yaml").read_text())["/**"]["ros__parameters"]
    assert {k: v for k, v in params.items() if k != "dob_cutoff"} == bundled
