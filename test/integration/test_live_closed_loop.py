"""`deadzone-id closed-loop --live-duration`: one lockstep run over DDS (the four nodes as processes) beside the
in-process run of the same controller, seed and duration."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

pytestmark = pytest.mark.integration


def test_live_run_tracks_like_the_in_process_loop(tmp_path):
    """ctc_dob with the URDF's rigid body, seed 999, 1.5 s of excitation: the whole reference span is recorded in
    header time, lockstep's zero-stamped states are counted and not recorded, and the tracking RMSE is the in-process
    run's.

    Measured (live / in-process mean tracking RMSE, seeds 999, 1000, 1001, 1.5 s): 1.025, 0.999, 1.032 for this
    controller; the two runs differ in their noise draws (the live arm draws measurement noise during the 1 s start
    delay) and in how the controller starts (held on brakes, then 1 s at rest, vs. moving at once): rel 0.1 is three
    times the largest difference. pd_dob is not compared here: without a model its in-process run starts with the
    arm sagging under gravity until the DOB takes the load (joint3: 3.4 mrad RMS in the first 0.25 s), which the live
    run does during its start delay, outside the metric: measured ratios 0.49-0.68.
    """
    from deadzone_id_ros.control import ControlMode
    from deadzone_id_ros.experiments.closed_loop.run import live_closed_loop
    from deadzone_id_ros.experiments.closed_loop.sim import ControllerSpec

    spec = ControllerSpec("ctc_dob_rbd_nominal", "ctc_dob + rbd (URDF nominal)", ControlMode.parse("ctc_dob"), "rbd")
    duration = 1.5
    results, failures = live_closed_loop([spec], 999, duration, tmp_path, log=lambda line: None)
    assert failures == {} and set(results) == {spec.name}
    r = results[spec.name]
    m = r.metrics
    assert m.time_base == "header" and r.mode == "ctc_dob" and r.model == "rbd"
    # the whole reference span, on the 1 kHz grid of simulated time (a run cut short by wall time records less)
    assert m.seconds == pytest.approx(duration, abs=0.01) and abs(m.samples - duration * 1000) <= 2, r
    episode = yaml.safe_load((Path(r.bag) / "episode.yaml").read_text())
    assert m.zero_stamp_states == 0  # none in the bag
    assert m.zero_stamp_states_dropped == episode["zero_stamp_states"]  # the recorder's count (measured 0 to 2)
    assert episode["zero_stamp_states_dropped"] is True
    assert r.inprocess_tracking_rmse_mean is not None and r.inprocess_tracking_rmse_mean > 1e-4
    assert m.tracking_rmse_mean == pytest.approx(r.inprocess_tracking_rmse_mean, rel=0.1)


def test_in_process_runs_beside_the_live_runs_are_those_run_alone(tmp_path):
    """With live runs and 2 workers, run_closed_loop computes the in-process runs in worker processes while the live
    runs go on: every summary is the one of the in-process runs alone, bit for bit (each run is deterministic in its
    seed), and each live run's in-process figure is run_controller's on its seed and length. A comparison without
    learned models: pd_dob and ctc_dob with the URDF's rigid body."""
    import dataclasses
    import json

    from deadzone_id_ros.experiments.closed_loop.run import (
        WEAK_DOB_FRACTION,
        run_closed_loop,
        run_in_process,
    )
    from deadzone_id_ros.experiments.closed_loop.sim import controller_specs, run_controller
    from deadzone_id_ros.robot_configs import controller_config, robot_for
    from deadzone_id_ros.sim.sim_arm_params import load_sim_config

    compare = tmp_path / "compare"
    compare.mkdir()
    (compare / "report.json").write_text(json.dumps({"joint_names": ["joint1", "joint2", "joint3"], "methods": {}}))
    printed: list[str] = []
    res = run_closed_loop(compare, tmp_path, seeds=(999, 1000), duration=0.8, live_duration=1.0, workers=2,
                          log=printed.append)
    specs = controller_specs(compare / "models", None, [])
    alone = run_in_process(specs, (999, 1000), 0.8, (1.0, WEAK_DOB_FRACTION), workers=1, log=lambda line: None)

    def as_json(summaries):  # NaN (no reversal in a short run) compares equal as text
        return json.dumps({k: dataclasses.asdict(v) for k, v in summaries.items()}, sort_keys=True)

    assert list(res.summaries) == ["pd_dob", "ctc_dob_rbd_nominal"]
    assert as_json(res.summaries) == as_json(alone[0]) and as_json(res.summaries_weak) == as_json(alone[1])
    assert res.settings.live_failures == {} and list(res.live) == list(res.summaries)
    sim, _ = load_sim_config(None)  # what the closed-loop comparison runs: the bundled sim_arm.yaml
    base = controller_config(robot_for(sim.urdf_path, sim.joint_names, sim.initial_position))  # the default
    for spec in specs:
        assert res.live[spec.name].inprocess_tracking_rmse_mean == \
            run_controller(spec, [999], 1.0, sim, base).tracking_rmse_mean
    live_lines = [i for i, line in enumerate(printed) if " live " in line]
    assert len(live_lines) == 2 and any("DOB cutoff x1" in line for line in printed)


def test_live_run_of_so101_controls_its_five_joints_like_the_in_process_loop(tmp_path):
    """robot="so101" (robot:=so101 through sim_feedforward.launch.yaml): the feedforward_controller node controls the
    SO-101's 5 joints against sim_arm with the same profile (gripper locked), ctc_dob with the URDF's rigid body, and
    tracks as the in-process loop of the same profile, seed and length does. Before issue 20's live path the nodes
    took the bundled arm's parameter files only (and closed-loop refused live runs with a robot).

    Measured (live / in-process mean tracking RMSE, 1.5 s): 0.817 / 0.784 mrad = 1.04 (seed 999), 1.05 (seed 1000);
    3 s in the demo: 1.04. The difference has the causes of the bundled arm's (noise drawn during the start delay, the
    start on brakes); rel 0.1 is twice the largest.
    """
    from deadzone_id_ros.control import ControlMode
    from deadzone_id_ros.experiments.closed_loop.run import live_closed_loop
    from deadzone_id_ros.experiments.closed_loop.sim import ControllerSpec
    from deadzone_id_ros.robot_configs import load_robot

    spec = ControllerSpec("ctc_dob_rbd_nominal", "ctc_dob + rbd (URDF nominal)", ControlMode.parse("ctc_dob"), "rbd")
    duration = 1.5
    results, failures = live_closed_loop([spec], 999, duration, tmp_path, log=lambda line: None, robot="so101")
    assert failures == {} and set(results) == {spec.name}
    r = results[spec.name]
    m = r.metrics
    so101 = load_robot("so101")
    assert tuple(m.joint_names) == so101.joint_names and len(m.tracking_rmse_per_joint) == 5
    rate = so101.profile.control_rate  # the kit's bus rate (500 Hz)
    assert m.seconds == pytest.approx(duration, abs=0.01) and abs(m.samples - duration * rate) <= 2, r
    assert yaml.safe_load((Path(r.bag) / "episode.yaml").read_text())["robot"] == "so101"
    assert r.inprocess_tracking_rmse_mean is not None and r.inprocess_tracking_rmse_mean > 1e-4
    assert m.tracking_rmse_mean == pytest.approx(r.inprocess_tracking_rmse_mean, rel=0.1)
