"""``deadzone-id sense`` end to end on a short run of the bundled arm (real MuJoCo, real estimators)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from deadzone_id_ros.cli.main import main
from deadzone_id_ros.experiments.sense import SenseResults, SenseSettings, run_sense, write_sense


def test_short_run_writes_a_report_that_reads_back(tmp_path, capfd):
    settings = SenseSettings(seeds=(1,), duration=4.0, calibration_duration=3.0, hold_duration=2.0,
                             push_period=1.5, push_magnitudes=(4.0,), free_duration=1.0)
    res, traces = run_sense(settings, progress=False)
    assert "tick" not in capfd.readouterr().err  # no progress bar when asked for none
    # free minutes: the push run outside its two windows (push + settle), plus the 1 s free-motion run
    assert res.estimators[0].free_minutes == pytest.approx((4.0 - 2 * 0.8 + 1.0) / 60.0)
    for e in res.estimators:  # every false contact is described (where, which joint, in what motion)
        assert len(e.false_contact_events) == e.false_contacts
        assert all(f.joints and len(f.dq) == 3 and max(f.ratio) > 1 for f in e.false_contact_events)
    assert [e.name for e in res.estimators] == ["residual_band", "residual", "model", "momentum", "dob"]
    band, plain = res.estimators[0], res.estimators[1]
    assert all(b > 0 for b in band.band) and not any(plain.band)
    assert len(band.pushes) == 2 and {p.magnitude for p in band.pushes} == {4.0}
    # a 4 N push at the tip is far above every threshold: detected, with a delay inside the push
    assert all(p.detected and 0 <= p.delay_ms < 300 for p in band.pushes)
    assert abs(traces["pushes"].truth).max() > 0.5
    # the collision with the obstacle on the reference path: it happens, and it is flagged
    assert abs(traces["collision"].truth).max() > 0.5
    assert all(0 <= d < 100 for d in band.collision_delay_ms)
    # the hold's quasi-static push (a ramp to 1 N over its second second): the force when first flagged, read off the
    # trace; the band's interval on the stuck joints, and no interval at all for the exact estimators
    assert all(len(e.hold_push_force) == 1 for e in res.estimators)
    assert 0.0 <= band.hold_push_coverage <= 1.0 and math.isnan(plain.hold_push_coverage)
    md = write_sense(tmp_path, res, traces)
    assert "| model residual + load friction + dead-zone band |" in md
    assert "Quasi-static push while the arm holds still" in md
    assert (tmp_path / "plots" / "sense_hold.png").stat().st_size > 0
    # the speeds the calibration covered against the evaluation's, per joint (the collision run alone moves)
    assert len(res.calibration_speed) == len(res.evaluation_speed) == 3
    assert res.evaluation_speed[0] >= abs(traces["collision"].dq[:, 0]).max() > 0
    assert "Speed coverage: the calibration run reached" in md
    assert (tmp_path / "plots" / "sense_estimate.png").stat().st_size > 0
    back = SenseResults.from_dict(json.loads((tmp_path / "sense.json").read_text()))
    assert back.estimators[0].pushes == band.pushes
    assert back.estimators[0].hold_push_coverage == band.hold_push_coverage
    assert back.estimators[1].interval_coverage is not None and math.isnan(back.estimators[1].interval_coverage)
    _check_sensing_params(tmp_path / "sensing.yaml", res)


def _check_sensing_params(path: Path, res: SenseResults) -> None:
    """sensing.yaml is a ROS 2 parameter file of the band estimator's calibration that the nodes' config accepts."""
    import yaml

    from deadzone_id_ros.sensing import SensingConfig

    params = yaml.safe_load(path.read_text())["/**"]["ros__parameters"]
    band = res.estimators[0]
    np.testing.assert_allclose(params["sensing_threshold"], band.threshold, atol=1e-6)
    np.testing.assert_allclose(params["sensing_band"], band.band, atol=1e-6)
    np.testing.assert_allclose(params["sensing_friction"], res.friction, atol=1e-6)
    np.testing.assert_allclose(params["sensing_velocity_threshold"], res.velocity_threshold, atol=1e-6)
    assert params["sensing_frame"] == res.frame and params["sensing_confirm"] == res.confirm
    assert params.pop("model_friction") is True  # the URDF rigid body with its friction, as the calibration's
    assert "sensing" not in params  # switched on by the launch argument, which wins over any file
    config = SensingConfig(sensing=True, **{k: tuple(v) if isinstance(v, list) else v for k, v in params.items()})
    assert config.sensing_threshold == tuple(params["sensing_threshold"])
    assert f"sensing_params_file:={path}" in path.read_text()  # the header says how to use it


def test_bad_settings_are_named(tmp_path):
    with pytest.raises(ValueError, match="calibration_seed 1 must not be an evaluation seed"):
        SenseSettings(seeds=(1,), calibration_seed=1)
    with pytest.raises(ValueError, match="calibration_seed 1001 must not be a free-motion seed"):
        SenseSettings(seeds=(1,), calibration_seed=1001, free_duration=1.0)
    with pytest.raises(ValueError, match="free_duration = -1.0 must be >= 0 s"):
        SenseSettings(free_duration=-1.0)
    assert main(["sense", "--out", str(tmp_path), "--duration", "0"]) == 2
    # the pushed point is the user's when given (the default, the profile's payload position, is the bundled arm's tip)
    assert main(["sense", "--out", str(tmp_path / "p"), "--seeds", "1", "--duration", "3.5", "--calibration-duration",
                 "3", "--hold-duration", "2", "--point", "0", "0", "0.1"]) == 0
    assert json.loads((tmp_path / "p" / "sense.json").read_text())["point"] == [0.0, 0.0, 0.1]


REAL = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "real"


@pytest.mark.skipif(not (REAL / "dfki_double_pendulum").is_dir(), reason="the shared real recordings are not here")
def test_real_recording_gives_free_motion_residual_and_threshold(tmp_path):
    from deadzone_id_ros.cli.demo import _convert_dfki
    from deadzone_id_ros.experiments.sense.real import RealSenseResult, sense_real_sets

    run = _convert_dfki(sorted((REAL / "dfki_double_pendulum").glob("*A0*.csv")), tmp_path)[0]
    (res,) = sense_real_sets([(run.name, list(run.bags), run.urdf, run.block_seconds)], tmp_path,
                             log=lambda _: None)
    by = {e.name: e for e in res.estimators}
    assert list(by) == ["residual_band", "residual", "uncorrected_band", "uncorrected", "momentum"]
    assert res.joint_names == ["shoulder", "elbow"] and res.correction == ""
    for e in res.estimators:  # free motion: a real residual, and a threshold above it
        assert all(0 < r < t for r, t in zip(e.rms, e.threshold))
    # the band never raises a threshold: it only takes the stuck samples' static friction out of the excess
    for banded, bare in (("residual_band", "residual"), ("uncorrected_band", "uncorrected")):
        assert all(b <= r for b, r in zip(by[banded].threshold, by[bare].threshold))
    # the correction is kept only on the joints where it lowered its own held-out block; elsewhere the estimate is the
    # uncorrected one, sample for sample
    kept = [j for j in range(2) if by["residual"].rms[j] != by["uncorrected"].rms[j]]
    assert kept == [j for j, c in enumerate(res.corrected) if c]
    back = json.loads((tmp_path / "sense_real.json").read_text())
    assert RealSenseResult.from_dict(back[0]) == res


def test_the_force_when_flagged_is_the_push_at_the_first_rise_after_its_start():
    from deadzone_id_ros.experiments.sense.metrics import flagged_force
    from deadzone_id_ros.sim.external_forces import PushConfig

    ramp = PushConfig("link3", 1.0, shape="ramp", start=1.0, duration=1.0, rise_time=0.5)
    t = np.arange(2000) / 1000.0
    flag = np.zeros(2000, bool)
    assert math.isnan(flagged_force(flag, t, ramp.start, ramp.force))  # never flagged
    flag[1250:] = True  # 0.25 s into a 0.5 s ramp to 1 N
    assert flagged_force(flag, t, ramp.start, ramp.force) == pytest.approx(0.5)
    flag[900:1100] = True  # a false contact held across the start is not the push's detection
    assert flagged_force(flag, t, ramp.start, ramp.force) == pytest.approx(0.5)
    flag[900:] = True  # on since before the start: the push is never flagged as its own contact
    assert math.isnan(flagged_force(flag, t, ramp.start, ramp.force))


def test_the_report_says_where_the_evaluation_ran_faster_than_the_calibration():
    from deadzone_id_ros.experiments.sense.metrics import beyond_calibration, peak_speed

    dq = [[0.5, -2.0], [-1.0, 1.5]]
    assert peak_speed(dq).tolist() == [1.0, 2.0]
    assert peak_speed(dq, [2.0, 0.0]).tolist() == [2.0, 2.0]
    assert beyond_calibration(["a", "b"], [1.2, 2.5], [1.3, 2.4]) == ["a"]
    assert beyond_calibration(["a", "b"], [], [1.3, 2.4]) == []


def test_the_smallest_detected_force_counts_only_the_pushes_applied():
    from deadzone_id_ros.experiments.sense.metrics import smallest_detected

    # a short run where only a 0.25 N push happened and was missed: no force is "detected", not the next magnitude
    assert math.isnan(smallest_detected([(0.25, False)]))
    assert math.isnan(smallest_detected([]))
    assert smallest_detected([(0.25, True)]) == 0.25
    # every push from 1 N up detected, a 0.5 N one missed: 1 N, whatever the smaller ones did after it
    assert smallest_detected([(4.0, True), (1.0, True), (0.5, False), (0.25, True), (1.0, True)]) == 1.0
    assert math.isnan(smallest_detected([(4.0, False), (1.0, True)]))
