"""Reports a user can trust (issue 22): every sentence generated from the numbers it describes, one branch per test.

Runs that faulted or ran away are marked; one colour per method in every plot; one-seed reports say there is no
spread; the data's origin follows the simulator flag; the "Next" launch commands carry the arguments the docs and
the launch files need; the stuck-torque and data-efficiency sentences agree with their numbers; the closed-loop
report has a tracking plot."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
import yaml
from matplotlib.colors import to_rgba

from deadzone_id_ros.control import ControlMode
from deadzone_id_ros.data.deadzone import DeadZone
from deadzone_id_ros.experiments.closed_loop.report import (
    closed_loop_markdown,
    closed_loop_targets,
    in_process_table,
    live_table,
    worse_than_no_model,
)
from deadzone_id_ros.experiments.closed_loop.results import (
    ClosedLoopResult,
    ClosedLoopSettings,
    ClosedLoopSummary,
)
from deadzone_id_ros.experiments.closed_loop.sim import ControllerSpec, run_controller
from deadzone_id_ros.experiments.compare.pick import PREDICTABLE_RATIO
from deadzone_id_ros.experiments.compare.report import compare_markdown, verdict
from deadzone_id_ros.experiments.compare.results import (
    CompareReport,
    DataDiagnosis,
    DataEfficiency,
    DeadZoneSummary,
    EfficiencyCurve,
    MethodDeadZone,
    MethodResult,
    Pick,
)
from deadzone_id_ros.robot_configs import bundled_controller_config, bundled_sim_config
from deadzone_id_ros.sim.tracking import TrackingMetrics
from deadzone_id_ros.training.config import TrainConfig
from deadzone_id_ros.training.records import DataRecord

ROOT = Path(__file__).resolve().parents[2]
JOINTS = ["j1", "j2", "j3"]
PD_DOB = ControllerSpec("pd_dob", "pd_dob", ControlMode("nominal_inertia", dob=True), "none")


def _summary(name: str, mean_mrad: float, max_mrad: float, seeds=(999, 1000), faults=()) -> ClosedLoopSummary:
    j = [mean_mrad * 1e-3] * 3
    prof = {"t": [-0.01, 0.0, 0.01], "mean_abs_error": [[1e-3] * 3] * 3}
    s = ClosedLoopSummary(name, name.replace("ctc_dob_", "ctc_dob + "), "ctc_dob", "learned", "", JOINTS,
                          list(seeds), [150.0] * 3, 1.0, j, [0.0] * 3, mean_mrad * 1e-3, 1e-5,
                          [max_mrad * 1e-3] * 3, j, mean_mrad * 1e-3, 0.0, [0.0] * 3, [0.0] * 3,
                          reversal_profile=prof)
    s.faults = list(faults)
    return s


# --- 1. runs that ran away, hit a limit or faulted ------------------------------------------------------------------

def test_a_run_whose_controller_faulted_is_marked_with_its_reason(tmp_path):
    """The controller's own safety fault (a 0.1 mrad tracking-error limit trips at once) reaches table and text."""
    faulted = run_controller(PD_DOB, [999], 0.3, bundled_sim_config(),
                             bundled_controller_config(tracking_error_limit=1e-4))
    fine = run_controller(PD_DOB, [999], 0.3, bundled_sim_config(), bundled_controller_config())
    assert len(faulted.faults) == 1 and faulted.faults[0].startswith("seed 999 at ")
    assert "tracking error" in faulted.faults[0] and fine.faults == []
    assert faulted.report_entry()["faults"] == faulted.faults
    md = "\n".join(closed_loop_markdown({"pd_dob": faulted}, {"pd_dob": fine}, {}, ClosedLoopSettings(seeds=[999]),
                                        "plots/r.png"))
    row_default, row_weak = [line for line in md.splitlines() if line.startswith("| pd_dob |")]
    assert row_default.endswith("| **FAULT** |") and row_weak.endswith("| ok |")
    assert f"**pd_dob: FAULT ({faulted.faults[0]}).** From the fault on" in md
    assert "Runs that did not track (tracking-error limit" not in md.split("### Weak DOB")[1]
    assert "pd_dob (" in md and ", FAULT)" in md  # the ranking says so too


def test_a_run_beyond_the_tracking_error_limit_is_marked_even_without_a_fault():
    """The weak-DOB case of issue 22: 1238 mrad RMSE, 3.5 rad max, limit 0.5 rad, and no fault recorded."""
    from deadzone_id_ros.experiments.closed_loop.report import flagged_lines, run_flag

    ran_away = _summary("ctc_dob_conventional", 1238.0, 3500.0)
    assert run_flag([], ran_away.max_abs_error_per_joint, ran_away.tracking_rmse_per_joint, 0.5) == (
        "RAN AWAY (joint 1: max |error| 3500 mrad above the tracking-error limit 500 mrad)")
    assert run_flag([], [0.4] * 3, [0.1] * 3, 0.5) == "" == run_flag([], [3.5] * 3, [1.2] * 3, None)
    assert run_flag([], [float("nan")] * 3, [0.1] * 3, 0.5).startswith("DIVERGED")
    table = in_process_table({"ctc_dob_conventional": ran_away, "ctc_dob_masked": _summary("ctc_dob_masked", 2, 9)},
                             0.5)
    assert table[2].endswith("| **RAN AWAY** |") and table[3].endswith("| ok |")
    assert flagged_lines({"ctc_dob_conventional": ran_away, "ctc_dob_masked": _summary("ctc_dob_masked", 2, 9)},
                         0.5) == ["- **ctc_dob + conventional: RAN AWAY (joint 1: max |error| 3500 mrad above the "
                                  "tracking-error limit 500 mrad).** The figures measure an arm that left the "
                                  "reference, not tracking."]
    targets = closed_loop_targets({"ctc_dob_masked": _summary("ctc_dob_masked", 2, 9),
                                   "ctc_dob_conventional": ran_away}, 0.5)
    assert "ctc_dob + conventional did not track" in targets[0]
    live = ClosedLoopResult("ctc_dob", "learned", None, "bag",
                            TrackingMetrics(JOINTS, [1.2] * 3, 1.2, [3.5] * 3, [1.0] * 3, 1.0, [1.0] * 3, 10, 1.0))
    assert live_table({"ctc_dob_conventional": live}, 0.5)[2].endswith("limit 500 mrad) |")


# --- 2. one colour per method ---------------------------------------------------------------------------------------

def _live(rmse: float) -> ClosedLoopResult:
    return ClosedLoopResult("ctc_dob", "learned", None, "bag",
                            TrackingMetrics(JOINTS, [rmse] * 3, rmse, [rmse] * 3, [rmse] * 3, rmse, [1.0] * 3, 10, 1.0))


def test_each_controller_has_one_colour_in_every_closed_loop_plot():
    """The live bars and the reversal lines list the controllers in different orders and subsets (as the demo
    does); each controller still has the one colour of the map."""
    from deadzone_id_ros.experiments.compare.plots import (
        _closed_loop_figure,
        _reversal_figure,
        _tracking_figure,
        method_colour,
    )

    bars = _closed_loop_figure({"ctc_dob_masked": _live(0.002), "pd_dob": _live(0.003)})
    lines = _reversal_figure({"default DOB": {n: _summary(n, 1, 2) for n in
                                              ("pd_dob", "ctc_dob_rbd", "ctc_dob_conventional", "ctc_dob_masked")}})
    tracked = {n: _summary(n, 1, 2) for n in ("ctc_dob_conventional", "ctc_dob_masked")}
    for s in tracked.values():
        s.trace = {"t": [0.0, 0.01], "q": [[0.0] * 3] * 2, "q_d": [[0.1] * 3] * 2}
    track = _tracking_figure(tracked)
    bar_colour = {c.get_label(): c.patches[0].get_facecolor() for c in bars.axes[0].containers}
    line_colour = {ln.get_label(): ln.get_color() for ln in lines.axes[0].get_lines() if ln.get_label()[0] != "_"}
    track_colour = {ln.get_label(): ln.get_color() for ln in track.axes[0].get_lines()}
    assert bar_colour["ctc_dob_masked"] == to_rgba(method_colour("ctc_dob_masked")) == to_rgba(method_colour("masked"))
    assert to_rgba(line_colour["ctc_dob + masked"]) == bar_colour["ctc_dob_masked"]
    assert to_rgba(track_colour["ctc_dob + masked"]) == bar_colour["ctc_dob_masked"]
    assert to_rgba(line_colour["pd_dob"]) == bar_colour["pd_dob"] == to_rgba(method_colour("pd_dob"))
    assert to_rgba(track_colour["ctc_dob + conventional"]) == to_rgba(line_colour["ctc_dob + conventional"])
    from deadzone_id_ros.experiments.compare.plots import _rmse_figure

    rmse = _rmse_figure(_report({"conventional": _method(0.3), "masked": _method(0.2)}))  # the comparison's bars
    assert {c.get_label(): c.patches[0].get_facecolor() for c in rmse.axes[0].containers
            if hasattr(c, "patches")}["masked"] == bar_colour["ctc_dob_masked"]
    assert len({method_colour(m) for m in ("masked", "conventional", "mse_all", "rbd", "hybrid", "band", "pd_dob",
                                           "ctc_dob_rbd_nominal", "ctc_dob_pick")}) == 9
    assert method_colour("some_new_method") == method_colour("some_new_method")


# --- the comparison's reports ---------------------------------------------------------------------------------------

def _method(rmse: float, seeds=(0, 1), std=0.001, stuck: float | None = None) -> MethodResult:
    dz = MethodDeadZone(rmse_vs_measured_per_joint=[stuck] * 3 if stuck is not None else [])
    return MethodResult([rmse] * 3, [std] * 3, rmse, std, [0.5] * 3, [0.0] * 3, 0.5, 0.7, list(seeds), dz, [],
                        "models/x")


def _report(methods: dict[str, MethodResult], simulator: bool | None = False, **kw) -> CompareReport:
    dz = DeadZoneSummary(DeadZone(tuple(JOINTS), 0.1, np.zeros(3), np.zeros(3)), [0.5] * 3, 0.4, 0.7, [0.5] * 3)
    return CompareReport(JOINTS, {}, DataRecord(simulator=simulator), dz, TrainConfig(), methods, **kw)


def test_a_one_seed_report_never_speaks_of_a_spread_it_does_not_have():
    """3: masked lower, higher; mse_all; band; the closed-loop targets, each with one seed and with two."""
    for masked, conv in ((0.30, 0.32), (0.32, 0.30)):
        one = " ".join(verdict(_report({"masked": _method(masked, (0,)), "conventional": _method(conv, (0,)),
                                        "mse_all": _method(0.35, (0,))})))
        assert "no seed-to-seed spread" in one and "twice the seed-to-seed spread" not in one
        two = " ".join(verdict(_report({"masked": _method(masked), "conventional": _method(conv),
                                        "mse_all": _method(0.35)})))
        assert "twice the seed-to-seed spread" in two and "One training seed only" not in two
    from deadzone_id_ros.experiments.compare.pick_report import band_lines

    band = " ".join(band_lines(_report({"masked": _method(0.3, (0,)), "band": _method(0.29, (0,))})))
    assert "no spread" in band and "twice the seed-to-seed spread" not in band
    one = closed_loop_targets({"pd_dob": _summary("pd_dob", 1.0, 2, (999,)),
                               "ctc_dob_pick": _summary("ctc_dob_pick", 0.4, 2, (999,)),
                               "ctc_dob_masked": _summary("ctc_dob_masked", 0.5, 2, (999,)),
                               "ctc_dob_conventional": _summary("ctc_dob_conventional", 0.8, 2, (999,))})
    assert all("one seed (no spread to judge by)" in line and "std against" not in line for line in one)


def test_the_torque_table_and_the_verdict_say_only_what_was_measured():
    from deadzone_id_ros.experiments.compare.report import _accuracy_section as accuracy_section
    from deadzone_id_ros.experiments.compare.verdict import baseline_lines

    rep = _report({"masked": _method(0.30, (0,), std=0.0), "rbd": _method(0.20, (0,), std=0.0),
                   "gravity": _method(0.60, (0,), std=0.0), "hybrid": _method(0.25, (0, 1))})
    table = "\n".join(accuracy_section(rep))
    assert "| masked |" in table and "0.3000 ± 0.0000" not in table  # one seed: no spread printed as a zero
    assert "0.2500 ± 0.0010" in table  # two seeds: the spread
    line = next(x for x in baseline_lines(rep) if x.startswith("**Worse than the identified rigid body"))
    # gravity has no learned part: only masked's learned part is blamed
    assert "The learned part of masked, hybrid costs accuracy" in line and "gravity costs" not in line
    assert "gravity (+200%" in line


def test_the_pick_says_how_its_model_runs_and_leaves_the_product():
    from deadzone_id_ros.experiments.compare.pick_report import _leaving

    assert "export --model DIR --urdf" in _leaving("rbd", "pick") and "rbd_consistent" in _leaving("rbd", "pick")
    assert "no URDF element" in _leaving("rbd_friction", "pick")
    assert "--onnx" in _leaving("masked", "pick") and "model_path:=pick" in _leaving("masked", "pick")
    assert "URDF" in _leaving("hybrid", "pick") and "ONNX" in _leaving("hybrid", "pick")
    assert "does not" in _leaving("hybrid_joint", "pick")
    history = _leaving("hybrid_history", "pick")  # offline only: no controller line for it
    assert "refuse it" in history and "model_path:=" not in history


def test_a_history_pick_is_called_offline_only_and_the_best_method_without_history_is_named():
    import dataclasses

    from deadzone_id_ros.experiments.compare.pick_report import pick_section
    from deadzone_id_ros.experiments.compare.results import Pick
    from deadzone_id_ros.experiments.demo.report import pick_line

    methods = {m: dataclasses.replace(_method(v), validation_rmse_mean=v)
               for m, v in (("hybrid_history", 0.1), ("hybrid", 0.2), ("rbd", 0.15), ("masked", 0.3))}
    rep = _report(methods, pick=Pick("hybrid_history", "lowest validation RMSE", 0.1))
    section = " ".join(pick_section(rep))
    assert "**Best model (offline only) `hybrid_history`**" in section and "**Deploy" not in section
    assert "For the controller, deploy `rbd`" in section  # the best by validation among methods without history
    line = " ".join(pick_line(rep, "rec"))
    assert "**Best model (offline only): hybrid_history**" in line and "deploy `rbd`" in line
    assert "`rec/models/rbd/`" in line
    alone = _report({"hybrid_history": methods["hybrid_history"]}, pick=Pick("hybrid_history", "only one", 0.1))
    assert "no method without history has a score" in " ".join(pick_line(alone, "rec"))
    assert "none of this comparison has a score" in " ".join(pick_section(alone))
    plain = _report(methods, pick=Pick("hybrid", "lowest validation RMSE", 0.2))
    assert "**Deploy `hybrid`**" in " ".join(pick_section(plain))
    assert "**Deploy: hybrid**" in " ".join(pick_line(plain, "rec"))
    # a per-joint residual has a network but no ONNX file: the section says why, not "no network"
    per_joint = " ".join(pick_section(_report(methods, pick=Pick("hybrid_joint", "lowest validation RMSE", 0.2))))
    assert "no ONNX: its per-joint network reads the rigid-body torque" in per_joint and "no network" not in per_joint
    assert "no network: load it" in " ".join(pick_section(_report(methods, pick=Pick("rbd", "a tie", 0.15))))


def test_the_verdict_says_which_identified_rigid_body_a_urdf_can_hold():
    import dataclasses

    from deadzone_id_ros.experiments.compare.verdict import consistency_lines

    def body(rmse, bad):
        return dataclasses.replace(_method(rmse), n_bodies=3, inconsistent_bodies=bad,
                                   urdf_refusal="bodies ... are not physically consistent" if bad else "")

    methods = {"rbd": body(0.2, ["link1", "link3"]), "hybrid": body(0.1, ["link1", "link3"]),
               "rbd_consistent": body(0.3, []), "gravity": body(0.9, []), "masked": _method(0.15)}
    (line,) = consistency_lines(_report(methods))
    assert "rbd 1 of 3, hybrid 1 of 3, rbd_consistent 3 of 3." in line and "gravity" not in line  # the URDF's own
    assert "writes the rigid body of rbd_consistent (`models/<method>/`) as a URDF" in line
    assert line in verdict(_report(methods))
    none = consistency_lines(_report({m: methods[m] for m in ("rbd", "masked")}))
    assert "No identified rigid body here can be written as a URDF" in none[0] and "rbd_consistent" in none[0]
    # consistent bodies with Stribeck friction (no URDF element) are not offered for export, and the reason is given
    friction = dataclasses.replace(body(0.2, []), urdf_refusal="its Stribeck / load-dependent friction has no URDF")
    line = consistency_lines(_report({"rbd_friction": friction}))[0]
    assert "writes none of them here; for rbd_friction: its Stribeck" in line and "fit rbd_consistent" not in line
    # locked joints refuse every body, consistent or not: never the advice to fit the model that already ran
    locked = "URDF joints ['finger'] were locked"
    line = consistency_lines(_report({m: dataclasses.replace(methods[m], urdf_refusal=locked)
                                      for m in ("rbd", "rbd_consistent")}))[0]
    assert f"for rbd_consistent: {locked}" in line and "fit rbd_consistent" not in line
    assert consistency_lines(_report({"masked": _method(0.15)})) == []  # no rigid body identified


def test_the_datas_origin_follows_the_simulator_flag():
    """4: a simulated bag is never "real robot", in the comparison nor in demo-real's report."""
    from deadzone_id_ros.experiments.demo.report import real_markdown

    ms = {"masked": _method(0.3)}
    sim, real = _report(ms, simulator=True), _report(ms, simulator=False)
    assert "simulated arm" in compare_markdown(sim, []) and "real robot" not in compare_markdown(sim, [])
    assert "simulated arm" not in compare_markdown(real, [])
    both = real_markdown({"a": sim, "b": real}, {"a": "A", "b": "B"})
    assert "# deadzone_id_ros on recorded data" in both and "## A (simulated arm" in both and "## B\n" in both
    assert real_markdown({"b": real}, {"b": "B"}).startswith("# deadzone_id_ros on real robot data")


@pytest.mark.parametrize("predictable", [True, False])
def test_stuck_torques_get_one_answer_in_the_whole_report(predictable):
    """4 and 6: mse_all beats masked with stuck / moving 0.9 (reads "predictable"), while the diagnosis of a model
    fitted on moving pairs says either; the verdict follows the diagnosis, never contradicting it."""
    note = "stuck note " + ("predictable" if predictable else "Masking keeps that arbitrary part out")
    diag = DataDiagnosis("masked", [0.1] * 3, [0.5] * 3, [5.0] * 3, 2.0, predictable, note)
    ms = {"masked": _method(0.30), "mse_all": _method(0.20, stuck=0.18)}
    text = " ".join(verdict(_report(ms, data_diagnosis=diag)))
    assert "0.90× its error on moving pairs" in text
    if predictable:
        assert "are predictable here" in text and "not predictable" not in text
    else:
        assert "not predictable" in text and "as predictable" not in text and "no friction band" not in text
    alone = " ".join(verdict(_report(ms)))  # no diagnosis: mse_all's own ratio against the same threshold
    assert "as predictable as the others" in alone and f"at or below {PREDICTABLE_RATIO} means" in alone
    ms["mse_all"] = _method(0.20, stuck=0.8)
    assert f"Above {PREDICTABLE_RATIO} the stuck labels are less predictable" in " ".join(verdict(_report(ms)))


def test_the_data_efficiency_reading_follows_its_numbers():
    """6: "Positive gain" defines the sign only; who is lower is counted; another winner is named."""
    from deadzone_id_ros.experiments.compare.report import efficiency_reading

    de = DataEfficiency([0.25, 1.0], [100, 400], [1, 4],
                        {"masked": EfficiencyCurve([0.5, 0.3], [0.0, 0.0]),
                         "conventional": EfficiencyCurve([0.6, 0.28], [0.0, 0.0])})
    mixed = efficiency_reading(_report({"masked": _method(0.3), "conventional": _method(0.28),
                                        "mse_all": _method(0.2)}, data_efficiency=de), ["masked", "conventional"])
    assert "Masked is lower at 1 of 2 training shares (25%), conventional at 1 (100%)." in mixed[0]
    assert "mse_all has the lowest test error (0.2000 vs masked 0.3000" in mixed[1]
    de.curves["conventional"].rmse_mean = [0.6, 0.4]
    best = efficiency_reading(_report({"masked": _method(0.3), "conventional": _method(0.4)}, data_efficiency=de),
                              ["masked", "conventional"])
    assert best == ["Gain = (conventional − masked) / conventional: positive where the masked loss has the lower "
                    "error. Masked is lower at 2 of 2 training shares."]


# --- 5. the "Next" launch commands ----------------------------------------------------------------------------------

def _declared_args(launch_file: str) -> set[str]:
    doc = yaml.safe_load((ROOT / "launch" / launch_file).read_text())
    return {item["arg"]["name"] for item in doc["launch"] if "arg" in item}


def test_the_next_commands_carry_what_the_docs_and_the_launch_files_need():
    from deadzone_id_ros.experiments.demo.report import _deploy_lines
    from deadzone_id_ros.experiments.demo.results import DemoReport

    cmp = _report({"masked": _method(0.3)})
    cmp.pick = Pick("masked", "lowest mean validation RMSE", 0.1)
    text = " ".join(_deploy_lines(DemoReport({"quick": True}, ["a"], "b", "cmp", cmp, "masked", {}, 1.0, {}, {}),
                                  "compare"))
    commands = {c.split()[2]: dict(a.split(":=", 1) for a in c.split()[3:])
                for c in re.findall(r"`(deadzone-id launch [^`]+)`", text)}
    assert set(commands) == {"sim_feedforward.launch.yaml", "feedforward.launch.yaml"}
    for launch_file, args in commands.items():
        assert set(args) <= _declared_args(launch_file), launch_file
        assert args["model_path"] == "compare/pick" and args["mode"] == "ctc_dob" and args["model"] == "learned"
    own_robot = " ".join((ROOT / "docs" / "own-robot.md").read_text().split())
    control = re.search(r"\*\*Control\*\*: `(deadzone-id launch feedforward\.launch\.yaml [^`]+)`", own_robot)
    assert control is not None
    assert {a.split(":=")[0] for a in control.group(1).split()[3:]} <= set(commands["feedforward.launch.yaml"])
    lockstep = " ".join((ROOT / "docs" / "controller.md").read_text().split())  # "When you need lockstep"
    assert "Use `use_sim_time:=true lockstep:=true` with `sim_feedforward.launch.yaml`" in lockstep
    assert commands["sim_feedforward.launch.yaml"]["use_sim_time"] == "true"
    assert commands["sim_feedforward.launch.yaml"]["lockstep"] == "true"


# --- 7. the tracking plot -------------------------------------------------------------------------------------------

def test_the_closed_loop_report_plots_and_links_the_tracking(tmp_path):
    from deadzone_id_ros.experiments.compare.plots import tracking_plot

    run = run_controller(PD_DOB, [999, 1000], 0.5, bundled_sim_config(), bundled_controller_config())
    t, q, q_d = (np.asarray(run.trace[k]) for k in ("t", "q", "q_d"))
    assert q.shape == q_d.shape == (50, 3) and t[1] - t[0] == pytest.approx(0.01)
    assert np.sqrt(np.mean((q_d - q) ** 2, axis=0)) == pytest.approx(run.per_seed[0].rmse, rel=0.3)
    assert tracking_plot({"pd_dob": run}, tmp_path / "track.png") and (tmp_path / "track.png").stat().st_size > 0
    assert not tracking_plot({"pd_dob": _summary("pd_dob", 1, 2)}, tmp_path / "none.png")
    assert not (tmp_path / "none.png").exists()
    md = "\n".join(closed_loop_markdown({"pd_dob": run}, {}, {}, ClosedLoopSettings(seeds=[999, 1000]), "r.png",
                                        "plots/closed_loop_tracking.png"))
    assert "![tracking: q and q_d over time](plots/closed_loop_tracking.png)" in md and "seed 999" in md
    assert "closed_loop_tracking" not in "\n".join(closed_loop_markdown(
        {"pd_dob": _summary("pd_dob", 1, 2)}, {}, {}, ClosedLoopSettings(), "r.png", "plots/closed_loop_tracking.png"))
    assert "the bundled arm (config/sim_arm.yaml" in md
    # a run on another robot names it, not the bundled arm's files (they were named for every robot)
    so101 = "\n".join(closed_loop_markdown({"pd_dob": run}, {}, {}, ClosedLoopSettings(seeds=[999], robot="so101"),
                                            "r.png"))
    assert "robot profile `so101`" in so101 and "config/sim_arm.yaml" not in so101
    assert "config/feedforward_controller.yaml" not in so101
    # the report says which velocity the models saw; a run from before the setting was at the measured one
    for source, words in (("desired", "at the reference's velocity (feedforward_velocity: desired)"),
                          ("measured", "at the measured velocity (feedforward_velocity: measured)"),
                          ("", "at the measured velocity. ")):
        text = "\n".join(closed_loop_markdown({"pd_dob": run}, {}, {},
                                               ClosedLoopSettings(seeds=[999], feedforward_velocity=source), "r.png"))
        assert words in text, (source, text[:600])


# --- a model that makes tracking worse than no model (issue 39, item 8) ----------------------------------------------

def test_the_report_says_in_plain_words_when_a_model_tracks_worse_than_pd_dob():
    """A constructed result: the nominal rigid body and a learned model above pd_dob's error, one learned model
    below. The report names the two worse ones, with both figures, and not the better one."""
    import dataclasses

    pd = dataclasses.replace(_summary("pd_dob", 0.336, 1.0), mode="pd_dob", model="none")
    nominal = dataclasses.replace(_summary("ctc_dob_rbd_nominal", 0.640, 2.0), label="ctc_dob + rbd (URDF nominal)",
                                  model="rbd")
    worse, better = _summary("ctc_dob_masked", 0.400, 1.0), _summary("ctc_dob_conventional", 0.200, 1.0)
    entries = {s.name: s for s in (pd, nominal, worse, better)}
    lines = worse_than_no_model(entries)
    assert len(lines) == 2, lines
    assert "ctc_dob + rbd (URDF nominal) tracks worse than pd_dob, which uses no model: 0.640 vs 0.336 mrad" in lines[0]
    assert "armature" in lines[0]  # the nominal model's advice names what the profile adds
    assert "ctc_dob + masked tracks worse than pd_dob" in lines[1]
    text = "\n".join(closed_loop_markdown(entries, {}, {}, ClosedLoopSettings(
        seeds=[999, 1000], duration_s=1.0, weak_dob_fraction=0.3, live_seed=None, live_duration_s=0.0, pick="masked",
        pick_source="test"), "plot.png"))
    assert lines[0] in text and lines[1] in text and "conventional tracks worse" not in text
    # nothing to say when every model helps
    assert worse_than_no_model({s.name: s for s in (pd, better)}) == []
