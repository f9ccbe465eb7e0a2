"""demo-real: each real recording runs compare with its robot's bundled URDF, in a folder named after it."""

from __future__ import annotations

import pytest
from conftest import SHARED_REAL

from deadzone_id_ros.cli.demo import _convert_dfki
from deadzone_id_ros.data.dataset import DatasetConfig
from deadzone_id_ros.robot import resolve_robot_model
from deadzone_id_ros.training.pipeline import load_inputs

CSVS = sorted((SHARED_REAL / "dfki_double_pendulum").glob("*.csv"))


@pytest.mark.skipif(not CSVS, reason=f"no DFKI CSVs in {SHARED_REAL}")
def test_dfki_runs_use_the_design_urdf_and_the_recording_name(tmp_path):
    runs = _convert_dfki(CSVS, tmp_path)
    assert [r.name for r in runs] == [f"dfki_{c.stem}" for c in CSVS]
    for run, csv in zip(runs, CSVS, strict=True):
        design = csv.stem.split("_")[1].lower()
        assert run.urdf == f"dfki_double_pendulum_{design}"
        resolve_robot_model(run.urdf)  # a bundled name
        inputs = load_inputs(list(run.bags), DatasetConfig(savgol_window_s=run.savgol_window_s), simulator="no",
                             urdf=run.urdf, log=lambda m: None)
        assert inputs.urdf_xml is not None and inputs.robot_note == "no URDF joint locked"
        # the split guard (Savitzky–Golay reach) costs at most ~10% of a block
        assert inputs.episodes[0].edge_reach <= 0.1 * run.block_seconds / inputs.episodes[0].dt
