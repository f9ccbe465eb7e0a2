"""The demo's own computations (the stages themselves are library functions, tested where they live)."""

from __future__ import annotations

import numpy as np
import pytest

from deadzone_id_ros.data.bag import write_recording
from deadzone_id_ros.data.types import Recording
from deadzone_id_ros.errors import DataError
from deadzone_id_ros.experiments.demo.run import DemoConfig
from deadzone_id_ros.launching.live import closed_loop_metrics
from deadzone_id_ros.stamps import ns_to_s

NAMES = ("joint1", "joint2", "joint3")


def _recording(with_reference: bool = True) -> Recording:
    """2 s of 1 kHz states; the reference (100 Hz points, 0.5..1.5 s) is the state plus known offsets."""
    t_ns = 1_000_000_000_000 + np.arange(2000, dtype=np.int64) * 1_000_000
    t = ns_to_s(t_ns - t_ns[0])
    q = np.stack([np.sin(t), 0.5 * t, np.cos(2 * t)], axis=1)
    ref_t_ns = t_ns[500:1501:10]
    ref_t = ns_to_s(ref_t_ns - t_ns[0])
    offset = np.array([0.01, 0.0, -0.002])
    ref_q = np.stack([np.sin(ref_t), 0.5 * ref_t, np.cos(2 * ref_t)], axis=1) + offset
    effort = np.tile([1.0, -2.0, 0.5], (2000, 1))
    kw = {}
    if with_reference:
        kw = dict(reference_t_ns=ref_t_ns, reference_position=ref_q, reference_velocity=np.zeros_like(ref_q),
                  reference_acceleration=np.zeros_like(ref_q))
    return Recording(NAMES, t_ns, q, np.zeros_like(q), effort, **kw)


def test_closed_loop_metrics_measure_tracking_inside_the_reference_span(tmp_path):
    bag = write_recording(_recording(), tmp_path / "run")
    m = closed_loop_metrics(bag)
    # Linear interpolation of sin between 10 ms points errs by at most dt^2/8 = 1.25e-5 rad (cos(2t): 5e-5 rad).
    np.testing.assert_allclose(m.tracking_rmse_per_joint, [0.01, 0.0, 0.002], atol=6e-5)
    np.testing.assert_allclose(m.effort_rms_per_joint, [1.0, 2.0, 0.5])
    assert m.samples == 1001 and m.seconds == pytest.approx(1.0)
    assert m.tracking_rmse_mean == pytest.approx(np.mean(m.tracking_rmse_per_joint))  # one kind of mean
    assert m.time_base == "header" and m.zero_stamp_states == 0


def _recorded_with_zero_stamps(tmp_path, zeros: int):
    """The recorder's path: _recording() written through EpisodeWriter, the first ``zeros`` states stamped 0 (as
    lockstep's states before the first command) but received at the recorder's clock time."""
    from deadzone_id_ros.data.bag import MessageEncoders
    from deadzone_id_ros.data.recorder import EpisodeWriter, RecorderConfig

    rec = _recording()
    # a recorder that keeps zero stamps (drop_zero_stamp_states off, as for a driver that never stamps)
    w = EpisodeWriter(RecorderConfig(output_dir=str(tmp_path / "rec"), drop_zero_stamp_states=False))
    enc = MessageEncoders(list(NAMES))
    path = w.start(int(rec.state_t_ns[0]))
    for k, t in enumerate(rec.state_t_ns):
        pos = [9.0] * 3 if k < zeros else rec.position[k]  # would dominate the error if used
        stamp = 0 if k < zeros else int(t)
        w.write("/joint_states", int(t), enc.joint_state(stamp, pos, rec.velocity[k], rec.effort[k]))
    for k, t in enumerate(rec.reference_t_ns):
        data = enc.reference(int(t), rec.reference_position[k], rec.reference_velocity[k],
                             rec.reference_acceleration[k])
        w.write("/feedforward_controller/reference", int(t), data)
    w.stop(int(rec.state_t_ns[-1]))
    return path


def test_closed_loop_metrics_leave_zero_stamped_states_out_and_count_them(tmp_path):
    """Lockstep's states before the first command carry stamp 0: they must neither enter the metric nor switch the
    whole bag to receive time (the reference is in the states' clock, receive time is another)."""
    m = closed_loop_metrics(_recorded_with_zero_stamps(tmp_path, 5))
    assert m.time_base == "header" and m.zero_stamp_states == 5
    np.testing.assert_allclose(m.tracking_rmse_per_joint, [0.01, 0.0, 0.002], atol=6e-5)


def test_read_recording_time_base_is_reported(tmp_path):
    from deadzone_id_ros.data.bag import ZeroStampWarning, read_recording

    with pytest.warns(ZeroStampWarning, match="3 of 2000"):
        back = read_recording(_recorded_with_zero_stamps(tmp_path, 3))
    assert back.state_time_base == "header" and back.zero_stamp_states == 3 and len(back.state_t_ns) == 1997
    assert back.state_t_ns.min() > 0
    # a bag whose clock starts at 0 (stamp 0 written at log time 0, as an offline simulation) keeps its first state
    rec = _recording()
    t0 = int(rec.state_t_ns[0])
    rec.reference_t_ns = rec.reference_t_ns - t0  # (a view of state_t_ns: subtract on copies)
    rec.state_t_ns = rec.state_t_ns - t0
    clean = read_recording(write_recording(rec, tmp_path / "from_zero"))
    assert clean.state_time_base == "header" and clean.zero_stamp_states == 0 and len(clean.state_t_ns) == 2000


def test_closed_loop_metrics_refuse_a_bag_without_reference(tmp_path):
    bag = write_recording(_recording(with_reference=False), tmp_path / "run")
    with pytest.raises(DataError, match="no reference trajectory recorded"):
        closed_loop_metrics(bag)


def test_demo_config_keeps_the_closed_loop_reference_out_of_training():
    with pytest.raises(ValueError, match="closed_loop_seed 2 must differ"):
        DemoConfig(sim_seeds=(1, 2), closed_loop_seeds=(999, 2))
    with pytest.raises(ValueError, match="weak_dob_fraction"):
        DemoConfig(weak_dob_fraction=1.0)
    with pytest.raises(ValueError, match="live_duration = 0"):
        DemoConfig(live_duration=0)
    with pytest.raises(ValueError, match="the sense stage's settings: calibration_seed 100 must not be an evaluation"):
        DemoConfig(sense_seeds=(1, 100))
    with pytest.raises(ValueError, match="the teleop stage's settings: duration = 2.0 s is too short"):
        DemoConfig(teleop_duration=2.0)
    assert DemoConfig.quick_run().quick


def _compare_report(rmse: dict[str, float | None]):
    from deadzone_id_ros.data.deadzone import DeadZone
    from deadzone_id_ros.experiments.compare.results import CompareReport, DeadZoneSummary, MethodDeadZone, MethodResult
    from deadzone_id_ros.training.config import TrainConfig
    from deadzone_id_ros.training.records import DataRecord

    methods = {m: MethodResult([v] * 3, [0.0] * 3, v, 0.0, [0.5] * 3, [0.0] * 3, 0.5, 0.7, [0], MethodDeadZone(), [],
                               f"models/{m}") for m, v in rmse.items()}
    joints = ("j1", "j2", "j3")
    dz = DeadZoneSummary(DeadZone(joints, 0.1, np.zeros(3), np.zeros(3)))
    return CompareReport(list(joints), {}, DataRecord(), dz, TrainConfig(), methods)


def test_best_learned_skips_rbd_and_unmeasured_methods():
    assert _compare_report({"rbd": 0.01, "masked": 0.3, "conventional": 0.2, "mse_all": None}).best_learned() == \
        "conventional"
    assert _compare_report({"rbd": 0.01}).best_learned() is None


def test_the_onnx_export_takes_the_best_learned_model_that_exports():
    """The full demo failed when the best learned model was the per-joint residual (hybrid_joint): its network reads
    the rigid-body torque, which the ONNX format's inputs do not carry; the export check takes the next best."""
    from deadzone_id_ros.experiments.compare.results import best_learned

    rmse = {"rbd": 0.01, "hybrid_joint": 0.1, "hybrid": 0.2, "masked": 0.3}
    assert best_learned(rmse) == "hybrid_joint"
    assert best_learned(rmse, onnx=True) == "hybrid"
    assert best_learned({"hybrid_joint": 0.1}, onnx=True) is None


def test_demo_report_json_keeps_its_keys():
    from deadzone_id_ros.experiments.closed_loop.results import ClosedLoopResult, ClosedLoopSettings, ClosedLoopSummary
    from deadzone_id_ros.experiments.demo.results import DemoReport
    from deadzone_id_ros.sim.tracking import TrackingMetrics

    live = ClosedLoopResult("pd_dob", "none", None, "bag",
                            TrackingMetrics(["j1"], [0.001], 0.001, [0.002], [0.003], 0.003, [1.0], 10, 0.01))
    names = ["pd_dob", "ctc_dob_rbd_nominal", "ctc_dob_rbd", "ctc_dob_masked", "ctc_dob_conventional", "ctc_dob_pick"]
    j3 = [0.0] * 3
    summaries = {n: ClosedLoopSummary(n, n, "ctc_dob", "rbd", "", ["j1", "j2", "j3"], [999, 1000, 1001],
                                      [150.0] * 3, 6.0, [0.001] * 3, j3, 0.001 * (k + 1), 0.0001, j3, [0.002] * 3,
                                      0.002, 0.0, j3, j3)
                 for k, n in enumerate(names)}
    doc = DemoReport({"quick": True}, ["a"], "b", "cmp", _compare_report({"masked": 0.3}), "masked",
                     summaries, 1.0, summaries, {"pd_dob": live}, ClosedLoopSettings(seeds=[999]),
                     {"1_compare": 3.0}).to_dict()
    assert list(doc) == ["robot", "config", "data", "compare", "closed_loop", "closed_loop_weak_dob",
                         "closed_loop_live", "closed_loop_settings", "improve", "sense", "teleop", "robot_check",
                         "comparison_refused", "masked_vs_conventional",
                         "stage_seconds", "seconds"]
    assert doc["compare"]["methods"]["masked"]["rmse_mean"] == 0.3 and doc["compare"]["best_learned"] == "masked"
    issue_keys = {"tracking_rmse_mean_mrad", "tracking_rmse_std_mrad", "seeds", "reversal_rmse_mean_mrad"}
    for section in ("closed_loop", "closed_loop_weak_dob"):
        assert list(doc[section]) == names
        assert all(issue_keys <= set(entry) for entry in doc[section].values())
    assert doc["closed_loop"]["ctc_dob_masked"]["tracking_rmse_mean_mrad"] == pytest.approx(4.0)
    assert doc["closed_loop"]["pd_dob"]["seeds"] == [999, 1000, 1001]
    assert doc["closed_loop_weak_dob"]["pd_dob"]["reversal_rmse_mean_mrad"] == pytest.approx(2.0)
    assert doc["closed_loop_live"]["pd_dob"]["tracking_rmse_mean"] == 0.001
    assert doc["closed_loop_live"]["pd_dob"]["time_base"] == "header"


def test_demo_report_names_the_pick_to_deploy():
    from deadzone_id_ros.experiments.compare.results import Pick
    from deadzone_id_ros.experiments.demo.report import _deploy_lines
    from deadzone_id_ros.experiments.demo.results import DemoReport

    cmp = _compare_report({"masked": 0.3, "hybrid": 0.2})
    report = DemoReport({"quick": True}, ["a"], "b", "cmp", cmp, "hybrid", {}, 1.0, {}, {})
    assert _deploy_lines(report, "compare") == ["Best learned model exported to ONNX: `compare/models/hybrid`.", ""]
    cmp.pick = Pick("hybrid", "lowest mean validation RMSE", 0.1, onnx="pick/residual.onnx")
    text = " ".join(_deploy_lines(report, "compare"))
    assert "**hybrid** in `compare/pick/` (ONNX `compare/pick/residual.onnx`)" in text
    assert "model_path:=compare/pick`" in text


@pytest.mark.parametrize("quick", [True, False])
def test_demo_report_says_when_its_learned_models_are_under_trained(tmp_path, quick):
    """Issue 12 item 10: a --quick report says its learned controllers are under-trained; a full one does not."""
    from deadzone_id_ros.experiments.demo.report import demo_markdown
    from deadzone_id_ros.experiments.demo.results import DemoReport

    cfg = {"quick": quick, "sim_seeds": [1, 2], "sim_duration": 10.0, "live_duration": 5.0}
    report = DemoReport(cfg, ["a"], "b", str(tmp_path / "compare"), _compare_report({"masked": 0.3}), "masked",
                        {}, 1.0, {}, {})
    text = demo_markdown(report, tmp_path)
    assert ("under-trained" in text) is quick
    assert ("Run --quick" in text) is quick


def test_demo_report_refuses_a_comparison_below_the_noise_floor_and_says_why_the_arm_is_not_trustworthy(tmp_path):
    """Issue 36: a report whose simulator noise floor exceeds the methods' errors shows no torque table, and the robot
    check's verdict and fixes come first."""
    from deadzone_id_ros.experiments.check import Finding, JointFigures, RobotCheck
    from deadzone_id_ros.experiments.compare.results import NoiseFloor
    from deadzone_id_ros.experiments.demo.report import demo_markdown
    from deadzone_id_ros.experiments.demo.results import DemoReport

    figures = JointFigures("j1", 90.0, 6.8, 0.3, 0.0, 0.007, 0.14, 0.9, 1.4, 5.4, 0.3, 0.2, 8.3, 9.9, 8.5)
    check = RobotCheck("arm7", 4.0, 1, 47.7, 61.0, [figures], [Finding("chatter", ["j1"], "the arm shakes",
                                                                      "give settings.j1.armature")], 1.0)
    cfg = {"quick": True, "sim_seeds": [1], "sim_duration": 10.0, "live_duration": 5.0}
    for floor, refused in ((3.75, True), (0.01, False)):
        cmp = _compare_report({"masked": 0.3, "rbd": 0.5})
        cmp.noise_floor = NoiseFloor("sim ID", [floor] * 3, floor, [0.1] * 3, None, [0.1] * 3)
        report = DemoReport(cfg, ["a"], "b", str(tmp_path / "compare"), cmp, "masked", {}, 1.0, {}, {},
                            robot_check=check)
        text = demo_markdown(report, tmp_path)
        assert ("| masked |" not in text) is refused and ("Not shown: the simulator's own noise floor" in text) \
            is refused
        assert bool(report.to_dict()["comparison_refused"]) is refused
        assert "**The simulated arm7 is not trustworthy (chatter)**" in text and "give settings.j1.armature" in text


@pytest.mark.integration
def test_demo_with_a_robot_profile_simulates_and_records_that_robot_live(tmp_path):
    """``demo --robot so101``: the offline stage simulates the SO-101 (5 joints, named in episode.yaml; two bags, so
    in worker processes), and the live stage records it over DDS (robot:=so101 through sim_feedforward.launch.yaml,
    lockstep): its bag holds the SO-101's 5 joints by name. Before issue 20's live path the live stage was skipped."""
    import json

    import yaml

    from deadzone_id_ros.data.bag import read_recording
    from deadzone_id_ros.experiments.demo.run import DEMO_STAGES, STATE_FILE, run_demo
    from deadzone_id_ros.robot_configs import load_robot

    lines: list[str] = []
    cfg = DemoConfig(sim_seeds=(1, 2), sim_duration=0.3, live_duration=1.0, compare_seeds=1, quick=True,
                     robot="so101")
    results = run_demo(tmp_path / "demo", cfg, stages=DEMO_STAGES[:2], log=lines.append)
    assert len(results["simulate"]["bags"]) == 2  # two bags: simulated in worker processes, each of the SO-101
    for bag in results["simulate"]["bags"]:
        episode = yaml.safe_load((tmp_path / "demo" / bag / "episode.yaml").read_text())
        assert episode["robot"] == "so101"
        assert len(episode["sim_config"]["joint_names"]) == 5
    assert "skipped" not in results["live"] and results["live"]["bag"], results["live"]
    live = read_recording(tmp_path / "demo" / results["live"]["bag"])
    assert live.joint_names == load_robot("so101").joint_names and live.position.shape[1] == 5
    assert yaml.safe_load((tmp_path / "demo" / results["live"]["bag"] / "episode.yaml").read_text())["robot"] \
        == "so101"
    assert not any("skipped" in line for line in lines), lines
    state = json.loads((tmp_path / "demo" / STATE_FILE).read_text())
    assert state["config"]["robot"] == "so101"


def test_a_sense_stage_that_cannot_calibrate_is_reported_not_fatal(tmp_path):
    """50 ms of calibration is too few moving samples to fit the friction correction: the stage records why, and the
    report says so instead of the demo stopping after its other stages."""
    from deadzone_id_ros.experiments.demo.context import StageContext
    from deadzone_id_ros.experiments.demo.force_report import sense_lines
    from deadzone_id_ros.experiments.demo.results import DemoReport
    from deadzone_id_ros.experiments.demo.stages import sense

    lines: list[str] = []
    cfg = DemoConfig(sense_seeds=(1,), sense_duration=1.0, sense_calibration_duration=0.05)
    record = sense(StageContext(tmp_path, cfg, {}, log=lines.append))
    assert record["sense_dir"] == "" and "too few to fit its friction" in record["skipped"]
    assert lines == [f"force sensing not run: {record['skipped']}"] and not (tmp_path / "sense").exists()
    doc = DemoReport({"quick": True}, [], "", "cmp", _compare_report({"masked": 0.3}), "masked",
                     sense_skipped=record["skipped"])
    assert doc.to_dict()["sense"] == {"skipped": record["skipped"]}
    assert f"Not run: {record['skipped']}." in " ".join(sense_lines(doc))
    assert sense_lines(DemoReport({"quick": True}, [], "", "cmp", _compare_report({"masked": 0.3}), "masked")) == []


def test_a_teleop_stage_whose_pick_cannot_be_loaded_is_reported_not_fatal(tmp_path):
    """A pick the pair cannot load (here a model.json of no artifact format) stops the teleop stage before any run:
    the stage records why, and the report says so instead of the demo stopping after its other stages."""
    from deadzone_id_ros.experiments.demo.context import StageContext
    from deadzone_id_ros.experiments.demo.force_report import teleop_lines
    from deadzone_id_ros.experiments.demo.results import DemoReport
    from deadzone_id_ros.experiments.demo.stages import teleop

    (tmp_path / "compare" / "pick").mkdir(parents=True)
    (tmp_path / "compare" / "pick" / "model.json").write_text("{}")
    lines: list[str] = []
    record = teleop(StageContext(tmp_path, DemoConfig(), {"compare": {"compare_dir": "compare"}}, log=lines.append))
    assert record["teleop_dir"] == "" and "compare/pick/model.json: format None" in record["skipped"]
    assert lines == [f"teleoperation not run: {record['skipped']}"] and not (tmp_path / "teleop").exists()
    doc = DemoReport({"quick": True}, [], "", "cmp", _compare_report({"masked": 0.3}), "masked",
                     teleop_skipped=record["skipped"])
    assert doc.to_dict()["teleop"] == {"skipped": record["skipped"]}
    assert f"Not run: {record['skipped']}." in " ".join(teleop_lines(doc))
    assert teleop_lines(DemoReport({"quick": True}, [], "", "cmp", _compare_report({"masked": 0.3}), "masked")) == []


def _teleop_results(felt: dict[str, float]):
    """TeleopResults of bilateral free/push/hold/stuck cases per model (felt error ``felt[model]`` in push and hold,
    a stuck push only for the nominal model) for the demo's teleop table."""
    from deadzone_id_ros.experiments.teleop.results import CaseFigures, TeleopResults

    nan = float("nan")
    cases = []
    for model, e in felt.items():
        for scenario in ("free", "push", "hold", "stuck"):
            fig = dict.fromkeys(("tracking_rmse", "felt_error", "oscillation_ratio", "phantom", "push_peak",
                                 "coverage"), nan)
            fig.update({"free": {"tracking_rmse": 8e-4}, "push": {"felt_error": e}, "hold": {"felt_error": e,
                        "oscillation_ratio": 0.005},
                        "stuck": {"phantom": 0.1, "push_peak": 0.06, "coverage": 0.0} if model == "nominal" else
                        {}}[scenario])
            cases.append(CaseFigures.from_seeds(model, model, "bilateral", scenario, [fig], []))
    return TeleopResults("three_dof_arm", ["j1", "j2", "j3"], [1], 4.0, 10.0, 0.5, 1.0, 0.0, 1.0, 1.0, cases, 1.0)


def test_the_demo_teleop_table_gives_each_model_against_the_nominal_rigid_body():
    """The demo's teleoperation rows: the felt error with its ratio to the nominal rigid body's, marked below the
    issue's 2x; "n/a" where a figure does not apply (no stuck push); the pick's row and launch line where there is a
    pick, the identified model's without one; the hold's oscillation ratio of a stiff contact not rounded to 0."""
    from deadzone_id_ros.experiments.demo.force_report import teleop_lines
    from deadzone_id_ros.experiments.demo.results import DemoReport

    def lines(felt: dict[str, float]) -> str:
        doc = DemoReport({"quick": True}, [], "", "cmp", _compare_report({"masked": 0.3}), "masked",
                         teleop=_teleop_results(felt), teleop_dir="teleop")
        return "\n".join(teleop_lines(doc))

    md = lines({"nominal": 0.6, "identified": 0.4, "compare/pick": 0.25})
    rows = {r.split(" | ")[0].lstrip("| "): r for r in md.splitlines() if r.startswith("| ") and "---" not in r}
    assert "60.0% (60.0%) |" in rows["URDF nominal rigid body (no band)"]
    assert "40.0% (40.0%), 1.50x (< 2x)" in rows["identified rigid body + band"]
    assert "25.0% (25.0%), 2.40x |" in rows["compare/pick + band"]
    assert rows["compare/pick + band"].endswith("| 0.005 (0.005) | n/a | 0 |")
    assert "0.1 / 0.06 N·m, 0%" in rows["URDF nominal rigid body (no band)"]
    assert "model:=compare/pick`" in md and "not met with compare/pick + band" in md
    assert "teleop/plots/teleop_compare_pick_bilateral_hold.png" in md
    md = lines({"nominal": 0.6, "identified": 0.1})  # a demo without a pick: the identified model's line
    assert "model:=identified`" in md and "is met with identified rigid body + band." in md
    # said plainly whether the pick pays as a force sensor against the rigid bodies (2 points count as the same)
    md = lines({"nominal": 0.6, "identified": 0.4, "compare/pick": 0.25})
    assert "(25.0%, push and hold) is below the identified rigid body's (40.0%): as a force sensor it pays here; " \
        "it is below the nominal rigid body's (60.0%)." in md
    assert "is about the identified rigid body's (40.0%): as a force sensor it adds nothing here" in \
        lines({"nominal": 0.6, "identified": 0.4, "compare/pick": 0.415})
    md = lines({"nominal": 0.6, "identified": 0.4, "compare/pick": 0.7})
    assert "is above the identified rigid body's (40.0%): as a force sensor it does not pay here; it is not below " \
        "the nominal rigid body's (60.0%)." in md
    assert "as a force sensor it" not in lines({"nominal": 0.6, "identified": 0.1})  # no pick, no sentence
