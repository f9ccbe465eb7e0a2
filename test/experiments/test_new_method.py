"""Adding a method is one registry entry: a method registered here, in this test only, runs through compare (with its
data-efficiency curve), the pick's cross-validation and ``deadzone-id improve`` without any other file knowing it.

The throw-away method is a combination no shipped method has: the identified rigid body plus a network learning its
residual with the band loss (a rigid body it requires, a band identified from that rigid body, a residual target,
every pair learned from), so the planner has to read each need from the entry.
"""

from __future__ import annotations

import json

import pytest

from deadzone_id_ros.models.methods import METHODS, Method, register_method
from deadzone_id_ros.training.config import TrainConfig

NEW = "rbd_band_residual_test"


@pytest.fixture(scope="module")
def new_method():
    """The throw-away method, registered for this module and removed after it."""
    entry = register_method(Method(NEW, rigid_body=True, loss="band", efficiency_curve=True,
                                   description="test only: rbd + band-loss residual"))
    yield entry
    METHODS.pop(NEW, None)


def test_a_new_method_runs_through_compare_and_cross_validation(new_method, tmp_path):
    from deadzone_id_ros.data.dataset import dataset_from_recordings
    from deadzone_id_ros.experiments.compare.run import run_compare
    from deadzone_id_ros.resources import default_urdf
    from deadzone_id_ros.sim.offline import simulate
    from deadzone_id_ros.training.pipeline import TrainingInputs

    sim_dataset = dataset_from_recordings([simulate(12.0, seed=1)])

    # one 12 s recording in 3 s blocks: 1 validation block, so the pick is made by cross-validation
    cfg = TrainConfig(hidden_sizes=(16, 16), max_steps=40, eval_interval=20, batch_size=256, num_threads=1,
                      seeds=1, progress=False, block_seconds=3.0, split_fractions=(0.5, 0.25, 0.25),
                      efficiency_fractions=(0.5, 1.0))
    inputs = TrainingInputs([sim_dataset.episodes[0]], sim_dataset.joint_names, simulator=True,
                            urdf_xml=default_urdf().read_text(), urdf_source="three_dof_arm.urdf")
    logs: list[str] = []
    report = run_compare(inputs, tmp_path, cfg, methods=[NEW, "masked"], log=logs.append)

    assert not report.skipped_methods
    result = report.methods[NEW]
    assert result.rmse_mean is not None and result.usable_fraction == 1.0  # the band loss learns every pair
    train = result.per_seed[0].train
    assert train.loss == "band" and train.band_halfwidth is not None
    assert len(train.band_halfwidth) == len(inputs.joint_names)
    # its rigid body was identified (shared, once) and its network learns the residual
    assert train.rbd_rows is not None and train.rbd_rows > 0
    saved = json.loads((tmp_path / "models" / NEW / "model.json").read_text())
    assert saved["method"] == NEW and saved["rbd"] is not None
    de = report.data_efficiency
    assert de is not None and NEW in de.curves and all(v is not None for v in de.curves[NEW].rmse_mean)
    assert report.pick is not None and report.pick.cv is not None, logs
    assert report.pick.cv.rmse_mean[NEW] is not None  # refitted on every fold, band and rigid body included
    assert NEW in (tmp_path / "report.md").read_text()


def test_a_new_method_is_a_candidate_of_improve(new_method, tmp_path):
    from deadzone_id_ros.experiments.improve.results import ImproveSettings
    from deadzone_id_ros.experiments.improve.run import run_improve

    settings = ImproveSettings(iterations=1, task_seeds=(11,), task_duration_s=2.0, held_out_seeds=(999,),
                               held_out_duration_s=1.0, dob_cutoff_scale=0.2, methods=(NEW,))
    cfg = TrainConfig(hidden_sizes=(16, 16), max_steps=40, eval_interval=20, workers=1, progress=False)
    run = run_improve(tmp_path, settings, cfg, workers=1, log=lambda _m: None)
    step = run.iterations[1].training
    assert step is not None and step.pick == NEW and step.validation_rmse[NEW] is not None, step
    assert json.loads((tmp_path / "models" / "iter1" / "model.json").read_text())["method"] == NEW
