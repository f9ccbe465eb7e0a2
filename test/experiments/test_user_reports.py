"""Issue 39 items 6 and 7: reports a user can read and follow-up commands that work. One seed says "1 seed", not
"± 0.0000"; the live table leaves zero-stamp bookkeeping to the log; a joint whose reference never reverses (a
continuous wrist) is named and its empty reversal panels say why; progress in a log file is a line per tenth; the
demo's "Next" commands carry robot:= for a --robot demo; the hardware launch starts at effort_limit_scale 0.3; no
issue numbers or "Nx the spread" in user-facing text."""

from __future__ import annotations

import ast
import dataclasses
import io
import math
import re
from pathlib import Path

import numpy as np

from deadzone_id_ros.data.deadzone import DeadZone
from deadzone_id_ros.experiments.closed_loop.report import closed_loop_markdown, in_process_table, live_table
from deadzone_id_ros.experiments.closed_loop.results import ClosedLoopResult, ClosedLoopSettings, ClosedLoopSummary
from deadzone_id_ros.experiments.compare.pick import confidence
from deadzone_id_ros.experiments.compare.results import (
    CompareReport,
    DeadZoneSummary,
    MethodDeadZone,
    MethodResult,
    Pick,
)
from deadzone_id_ros.experiments.demo.report import _deploy_lines, compare_table
from deadzone_id_ros.experiments.demo.results import DemoReport
from deadzone_id_ros.launching import load_launch_file
from deadzone_id_ros.progress_lines import StepLines, progress_iter
from deadzone_id_ros.sim.tracking import TrackingMetrics
from deadzone_id_ros.training.config import TrainConfig
from deadzone_id_ros.training.records import DataRecord

ROOT = Path(__file__).resolve().parents[2]
JOINTS = ["shoulder", "elbow", "wrist_roll"]


def _method(rmse: float, seeds) -> MethodResult:
    return MethodResult([rmse] * 3, [0.0] * 3, rmse, 0.0, [0.5] * 3, [0.0] * 3, 0.5, 0.7, list(seeds),
                        MethodDeadZone(rmse_vs_measured_per_joint=[]), [], "models/x")


def _report(methods) -> CompareReport:
    dz = DeadZoneSummary(DeadZone(tuple(JOINTS), 0.1, np.zeros(3), np.zeros(3)), [0.5] * 3, 0.4, 0.7, [0.5] * 3)
    return CompareReport(JOINTS, {}, DataRecord(simulator=True), dz, TrainConfig(), methods)


def _summary(seeds, reversal=(1e-3, 1e-3, 1e-3)) -> ClosedLoopSummary:
    j = [1e-3] * 3
    prof = {"t": [-0.01, 0.0, 0.01], "mean_abs_error": [[1e-3 if math.isfinite(r) else math.nan for r in reversal]] * 3}
    finite = [r for r in reversal if math.isfinite(r)]
    return ClosedLoopSummary("pd_dob", "pd_dob", "pd_dob", "none", "", JOINTS, list(seeds), [150.0] * 3, 1.0, j,
                             [0.0] * 3, 1e-3, 0.0, [2e-3] * 3, list(reversal),
                             float(np.mean(finite)) if finite else math.nan, 0.0, [0.0] * 3, [0.0] * 3,
                             reversal_profile=prof)


def test_one_seed_says_so_instead_of_a_zero_spread():
    one = "\n".join(compare_table(_report({"masked": _method(0.2, [0])})))
    assert "0.2000 (1 seed)" in one and "±" not in one.split("\n", 2)[2], one
    two = "\n".join(compare_table(_report({"masked": _method(0.2, [0, 1])})))
    assert "0.2000 ± 0.0000" in two, two
    table = "\n".join(in_process_table({"pd_dob": _summary([999])}))
    assert "1.000 (1 seed)" in table and "±" not in table.split("\n", 2)[2], table


def test_a_joint_that_never_reverses_is_named_and_its_panels_say_why(tmp_path):
    from deadzone_id_ros.experiments.compare.plots import _reversal_figure

    run = _summary([999, 1000], reversal=(1e-3, 1e-3, math.nan))  # a continuous wrist turning one way
    md = "\n".join(closed_loop_markdown({"pd_dob": run}, {}, {}, ClosedLoopSettings(seeds=[999, 1000]), "r.png"))
    assert "No velocity reversal on wrist_roll: the reference of that joint never changes direction" in md, md
    fig = _reversal_figure({"default DOB": {"pd_dob": run}})
    texts = [[t.get_text() for t in ax.texts] for ax in fig.axes]
    assert texts[0] == [] and texts[1] == [] and "no velocity reversal" in texts[2][0], texts
    none = dataclasses.replace(run, reversal_rmse_per_joint=[math.nan] * 3, reversal_rmse_mean=math.nan)
    assert "none (the reference never reverses)" in "\n".join(in_process_table({"pd_dob": none}))


def test_the_live_table_leaves_zero_stamp_bookkeeping_to_the_log():
    metrics = TrackingMetrics(JOINTS, [1e-3] * 3, 1e-3, [2e-3] * 3, [1e-3] * 3, 1e-3, [0.1] * 3, 1000, 1.0,
                              "header", zero_stamp_states=0, zero_stamp_states_dropped=35)
    text = "\n".join(live_table({"pd_dob": ClosedLoopResult("pd_dob", "none", None, "bag", metrics, 1e-3)}))
    assert "zero-stamp" not in text and "35" not in text, text


def test_progress_in_a_log_file_is_a_line_per_tenth():
    out = io.StringIO()  # not a terminal
    assert list(progress_iter(range(50), "simulate", "tick", stream=out)) == list(range(50))
    lines = out.getvalue().splitlines()
    assert [line.split(":")[1].split("%")[0].strip() for line in lines] == [str(p) for p in range(10, 101, 10)]
    assert lines[-1].startswith("simulate: 100% (50/50 tick) after ")
    bar = StepLines(3, "writing bag", "msg", io.StringIO())
    bar.update(3)
    assert bar.stream.getvalue().startswith("writing bag: 100% (3/3 msg)")


def test_simulate_and_write_print_lines_in_a_log_file(tmp_path, capsys):
    from deadzone_id_ros.data.bag import write_recording
    from deadzone_id_ros.sim.offline import simulate

    rec = simulate(0.3, seed=1, progress=True)
    write_recording(rec, tmp_path / "bag", progress=True)
    err = capsys.readouterr().err  # captured: not a terminal
    assert "\r" not in err, err
    assert "simulate: 100% (300/300 tick) after " in err and "writing bag: 100% (" in err, err


def test_the_next_commands_of_a_robot_demo_carry_robot_and_work_verbatim(tmp_path):
    cmp = _report({"masked": _method(0.3, [0, 1])})
    cmp.pick = Pick("masked", "lowest mean validation RMSE", 0.1)
    profile = tmp_path / "my_arm.yaml"
    profile.write_text("name: my_arm\nurdf: x.urdf\njoints: [a]\n")
    for robot, want in (("so101", "so101"), (str(profile), str(profile.resolve())), ("", None)):
        report = DemoReport({"quick": True, "robot": robot}, ["a"], "b", "cmp", cmp, "masked", {}, 1.0, {}, {})
        text = " ".join(_deploy_lines(report, "compare"))
        commands = re.findall(r"`deadzone-id launch ([^`]+)`", text)
        assert len(commands) == 2, text
        for command in commands:
            file, *tokens = command.split()
            args = dict(t.split(":=", 1) for t in tokens)
            assert args.get("robot") == want, command
            plan = load_launch_file(file, args)  # the command as printed is a valid launch
            controller = dict(plan.node("feedforward_controller").params)
            assert controller["robot"] == (want or "three_dof_arm") and controller["model"] == "learned"


def _effort_limit_scale(launch_file: str, args: dict[str, str]) -> float:
    """The controller's effort_limit_scale as its parameter files give it, later files winning (as ROS 2 reads
    them); no launch argument sets it on the command line."""
    import yaml

    spec = load_launch_file(launch_file, args).node("feedforward_controller")
    assert "effort_limit_scale" not in dict(spec.params)
    value = None
    for path in spec.param_files:
        for section in (yaml.safe_load(Path(path).read_text()) or {}).values():
            value = section["ros__parameters"].get("effort_limit_scale", value)
    return float(value)


def test_the_hardware_launch_starts_at_a_third_of_the_effort_limits_and_a_users_file_wins(tmp_path):
    assert _effort_limit_scale("feedforward.launch.yaml", {}) == 0.3
    assert _effort_limit_scale("sim_feedforward.launch.yaml", {}) == 1.0  # the simulated arm, as the demo measures it
    mine = tmp_path / "my_controller.yaml"
    mine.write_text("/**:\n  ros__parameters:\n    effort_limit_scale: 0.5\n")
    assert _effort_limit_scale("feedforward.launch.yaml", {"params_file": str(mine)}) == 0.5
    assert _effort_limit_scale("sim_feedforward.launch.yaml", {"controller_params_file": str(mine)}) == 0.5


def test_user_facing_text_has_no_issue_numbers_or_jargon():
    pick = Pick("masked", "lowest", 0.1, runner_up="conventional", margin=0.58899, spread=0.0001)
    text = confidence(pick)
    assert "x the spread" not in text and "over 100 times that spread" in text, text
    found = []
    for path in sorted((ROOT / "deadzone_id_ros").rglob("*.py")):
        tree = ast.parse(path.read_text())
        docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                      if isinstance(node, (ast.Module, ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef))
                      and node.body and isinstance(node.body[0], ast.Expr)
                      and isinstance(node.body[0].value, ast.Constant)}
        for node in ast.walk(tree):
            if (isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings
                    and re.search(r"\(issue \d+", node.value)):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {node.value[:80]}")
    assert not found, found
