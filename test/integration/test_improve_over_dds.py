"""`deadzone-id improve --live`: the task runs of each iteration recorded over DDS in lockstep by the nodes (sim_arm,
excitation, feedforward_controller, recorder), trained on exactly as the in-process bags, scored in-process."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
import yaml

from deadzone_id_ros.training.config import TrainConfig

pytestmark = pytest.mark.integration

TINY = TrainConfig(hidden_sizes=(16, 16), max_steps=60, eval_interval=30, workers=1, progress=False)


def test_live_improve_trains_on_the_recorder_nodes_bags_and_its_runs_agree_with_in_process(tmp_path):
    """1 iteration, task references 11 and 12 of 2 s, held-out 999 of 1.5 s, the weak DOB (cutoff x0.2: the live
    controller gets it through a parameter file), rbd as the one candidate (least squares: the same fit for the same
    data, so the comparison measures the data, not a network's luck). Lengths are simulated time (lockstep).

    The live bags are the recorder node's (episode.yaml with its lockstep zero-stamp count, /joint_states and the
    reference), the training of iteration 1 reads exactly them, iteration 0's held-out figures are the in-process
    run's (the same computation: scoring is in-process), iteration 1 picks the same method, and each live task run
    tracks as its in-process twin within 15 % (issue 23).
    """
    from deadzone_id_ros.experiments.improve import run_improve
    from deadzone_id_ros.experiments.improve_report import improve_settings_line
    from deadzone_id_ros.experiments.improve_results import ImproveSettings
    from deadzone_id_ros.launching.live import closed_loop_metrics

    settings = ImproveSettings(iterations=1, task_seeds=(11, 12), task_duration_s=2.0, held_out_seeds=(999,),
                               held_out_duration_s=1.5, dob_cutoff_scale=0.2, methods=("rbd",), live=True)
    live = run_improve(tmp_path / "live", settings, TINY, workers=2, log=lambda _m: None)
    inproc = run_improve(tmp_path / "inproc", dataclasses.replace(settings, live=False), TINY, workers=1,
                         log=lambda _m: None)

    params = yaml.safe_load((tmp_path / "live" / "runs" / "controller_params.yaml").read_text())
    cutoff = params["/**"]["ros__parameters"]["dob_cutoff"]
    assert cutoff == pytest.approx(live.iterations[0].held_out.dob_cutoff)  # the in-process runs' weak DOB
    for it in live.iterations:
        assert len(it.runs) == 2
        for bag in map(Path, it.runs):
            assert bag.is_relative_to(tmp_path / "live" / "runs" / f"iter{it.index}")
            episode = yaml.safe_load((bag / "episode.yaml").read_text())
            assert episode["zero_stamp_states_dropped"] is True  # the recorder node's lockstep setting
            topics = {t["topic_metadata"]["name"] for t in
                      yaml.safe_load((bag / "metadata.yaml").read_text())["rosbag2_bagfile_information"]
                      ["topics_with_message_count"]}
            assert "/joint_states" in topics and any("reference" in t for t in topics), topics
            m = closed_loop_metrics(bag)
            assert m.seconds == pytest.approx(2.0, abs=0.01)  # the whole reference, in simulated time
    step = live.iterations[1].training
    assert step is not None and step.bags == live.iterations[0].runs and step.pick == "rbd"
    # each live task run of iteration 0 tracks as its in-process twin
    for live_bag, in_bag in zip(live.iterations[0].runs, inproc.iterations[0].runs):
        a, b = closed_loop_metrics(Path(live_bag)), closed_loop_metrics(Path(in_bag))
        assert a.tracking_rmse_mean == pytest.approx(b.tracking_rmse_mean, rel=0.15)
    # the held-out table: iteration 0 the same computation, iteration 1 from the model fitted on the live bags. Its
    # figure is not compared here: from 2 x 2 s of data the two modes' fits differ (the live bags also hold the
    # recorder's start delay and the rest at the end), and their held-out tracking differed by 12 % in one run and
    # by 63 % in another; docs/improve.md gives the measured comparison at the command's sizes
    assert live.iterations[0].held_out.tracking_rmse_mean == inproc.iterations[0].held_out.tracking_rmse_mean
    assert live.iterations[1].method == inproc.iterations[1].method
    assert "live over DDS" in improve_settings_line(live) and "live" not in improve_settings_line(inproc)
