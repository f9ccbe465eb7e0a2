"""The eight stages of ``deadzone-id demo`` on the simulated 3-DOF arm, each the library function behind an ordinary
command a user could run by hand:

1. ``simulate``: bulk data from the offline simulator (``deadzone-id simulate``, several simulated minutes, no DDS);
2. ``live``: a live ROS 2 run through ``sim_feedforward.launch.yaml`` (sim_arm, excitation, feedforward_controller
   with pd_dob, recorder, as separate processes over DDS, in lockstep), the path a user takes on real hardware;
3. ``compare``: ``deadzone-id compare`` on all recordings (every method, several seeds) and an ONNX export of the
   best learned model;
4. ``closed_loop``: ``deadzone-id closed-loop``: pd_dob and ctc_dob with the URDF's nominal rigid body, the identified
   rigid body, the masked, conventional and picked models on held-out references (in-process, default and weak
   DOB), plus one short live run per controller over DDS;
5. ``improve``: ``deadzone-id improve`` with small settings (weak DOB, the closed-loop comparison's held-out
   references, rbd and hybrid as candidates, the comparison's pick beside it), in ``DIR/improve``;
6. ``sense``: ``deadzone-id sense`` with small settings in ``DIR/sense``: the force sensor the nodes run with
   ``sensing:=true`` (the URDF's rigid body with its friction correction and the dead-zone band), calibrated on free
   motion, against the simulator's true external torques (pushes of 0.25 to 4 N, a hold with a quasi-static push, a
   collision with an obstacle) on held-out seeds, and its ``sensing.yaml`` for the nodes;
7. ``teleop``: ``deadzone-id teleop`` in ``DIR/teleop``: two simulated arms as leader and follower with force feedback
   (bilateral), each arm's force sensed by its own model, the comparison's pick beside the URDF's nominal rigid body
   and the identified one, in free motion, a push into a box, a held contact and a gentle push on a stuck joint;
8. ``report``: ``DIR/report.md`` and ``DIR/report.json``.

Each stage returns a JSON-able result (paths relative to the output folder) that :mod:`.demo.run` records, so that a
resumed run rebuilds what later stages need without running the stage again.
"""

from __future__ import annotations

import dataclasses
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from ...robot.defaults import BUNDLED_ROBOT
from .config import DemoConfig
from .context import Stage, StageContext, StageObjects, StageRecord

__all__ = ["CLOSED_LOOP_JSON", "DEMO_STAGES", "ROBOT_CHECK_JSON", "DemoConfig", "Stage", "StageContext",
           "StageObjects", "StageRecord"]

_T = TypeVar("_T")

#: The closed-loop stage's record in the output folder (:meth:`.closed_loop.results.ClosedLoopRun.read`).
CLOSED_LOOP_JSON = "closed_loop.json"
#: The robot check's record in the output folder (:class:`deadzone_id_ros.experiments.check.RobotCheck`).
ROBOT_CHECK_JSON = "robot_check.json"


def _log(message: str) -> None:
    print(message, file=sys.stderr)


def _rel(ctx: StageContext, path: Path) -> str:
    return str(Path(path).relative_to(ctx.out))


def _simulate_one(duration: float, seed: int, path: Path, start_time: float,
                  robot: str = "") -> tuple[str, int, float]:
    """One offline bag (a worker of :func:`simulate`) of the profile ``robot`` ("" the bundled arm): (its path, its
    /joint_states samples, simulation wall [s])."""
    from ...robot_configs import simulation_configs
    from ...sim.record import simulate_bag

    result = simulate_bag(duration, seed, path, start_time=start_time, **simulation_configs(robot))
    return str(result.path), len(result.recording.state_t_ns), result.sim_seconds


def simulate(ctx: StageContext) -> StageRecord:
    """Stage 1: one offline-simulated bag per seed of the configured robot, two at a time in worker processes when
    there are several (each bag depends on its seed only; the stamps of the k-th seed start k seconds after the
    stage's start, in seed order as one after the other would); result ``{"bags": [...]}``, plus
    ``"robot_check"`` (the file of :func:`_robot_check`) with a robot profile."""
    import time

    from ..closed_loop.run import worker_pool

    start = time.time()
    jobs = [(ctx.cfg.sim_duration, seed, ctx.out / "data" / f"sim_seed{seed}", start + k, ctx.cfg.robot)
            for k, seed in enumerate(ctx.cfg.sim_seeds)]
    bags: list[str] = []

    def wrote(path: str, samples: int, seconds: float) -> None:
        ctx.log(f"wrote {path}: {samples} samples, {ctx.cfg.sim_duration:g} s simulated in {seconds:.1f} s")
        bags.append(_rel(ctx, Path(path)))

    if len(jobs) == 1:
        wrote(*_simulate_one(*jobs[0]))
    else:
        with worker_pool(2) as pool:
            for future in [pool.submit(_simulate_one, *job) for job in jobs]:
                wrote(*future.result())
    check = _robot_check(ctx)
    record = StageRecord(bags=bags)
    if check:
        record["robot_check"] = check
    return record


def _robot_check(ctx: StageContext) -> str | None:
    """With a robot profile (and ``robot_check``): its robot check, written to robot_check.json and logged; returns
    that file's name (relative to the output folder), else None."""
    if not ctx.cfg.robot or not ctx.cfg.robot_check:
        return None
    from ..check import write_check

    ctx.log(write_check(ctx.cfg.robot, ctx.out / ROBOT_CHECK_JSON).text().rstrip())
    return ROBOT_CHECK_JSON


def live(ctx: StageContext) -> StageRecord:
    """Stage 2: the live recording of the configured robot (lockstep, no wall-clock deadline); result
    ``{"bag": ...}``.

    Raises:
        DataError: the recording cannot be trained on, or the run stalled (:func:`~..launching.live.live_run`).
    """
    from ...data.dataset import DatasetConfig
    from ...data.inspect import format_report, inspect_bag
    from ...errors import DataError
    from ...launching.live import live_run, robot_launch_args
    from ...training.config import load_train_config

    (ctx.out / "logs").mkdir(exist_ok=True)
    bag = live_run(ctx.out / "data" / "live", {"mode": "pd_dob", "model": "rbd", "seed": str(ctx.cfg.live_seed),
                                               **robot_launch_args(ctx.cfg.robot)},
                   ctx.cfg.live_duration, ctx.out / "logs" / "live_recording.log")
    ctx.log(f"recorded {bag}")
    info = inspect_bag(bag, DatasetConfig(), load_train_config().dead_zone)
    ctx.log(format_report(info))
    if not info["trainable"]:
        raise DataError(f"the live recording {bag} cannot be trained on: {info['why_not']}")
    return StageRecord(bag=_rel(ctx, bag))


def compare(ctx: StageContext) -> StageRecord:
    """Stage 3: compare every method on every recording, export the best learned model to ONNX; result
    ``{"compare_dir": "compare", "best": METHOD}`` (the report is compare/report.json).

    Raises:
        DataError: no learned model, or the ONNX export check failed.
    """
    from ...errors import DataError
    from ...models.export import export_artifact_onnx
    from ...training.config import load_train_config
    from ...training.pipeline import load_inputs
    from ..compare.results import best_learned
    from ..compare.run import compare_config, run_compare

    live_bag = ctx.results["live"]["bag"]
    bags = [ctx.out / b for b in ctx.results["simulate"]["bags"]] + ([ctx.out / live_bag] if live_bag else [])
    urdf: str | None = None
    locked: dict[str, float] | None = None
    if ctx.cfg.robot:
        from ...robot_configs import load_robot

        robot = load_robot(ctx.cfg.robot)
        urdf, locked = str(robot.urdf_path), dict(robot.profile.locked)
    compare_dir = ctx.out / "compare"
    cfg = compare_config(load_train_config(), quick=ctx.cfg.quick, seeds=ctx.cfg.compare_seeds)
    # every bag here comes from the simulated arm (the live one through sim_arm): report the noise floor too
    report = run_compare(load_inputs(bags, simulator="yes", log=_log, urdf=urdf, locked=locked), compare_dir, cfg,
                         log=_log)
    ctx.objects.compare = report
    best = report.best_learned()
    if best is None:
        raise DataError("compare produced no learned model to export")
    ctx.log(f"best learned model: {best} -> {compare_dir / 'models' / best}")
    # a per-joint residual reads the rigid-body torque, which the ONNX format's inputs (q, dq, ddq) do not carry: the
    # controller runs it from its artifact directory; the ONNX check then takes the best learned model that exports
    exportable = best_learned({m: e.rmse_mean for m, e in report.methods.items()}, onnx=True)
    if exportable is None:
        ctx.log(f"no ONNX export: {best} is a per-joint residual (reads the rigid-body torque, not an ONNX input) "
                "and no other learned model was compared")
        return StageRecord(compare_dir=_rel(ctx, compare_dir), best=best)
    if exportable != best:
        ctx.log(f"ONNX export: {best} is a per-joint residual (reads the rigid-body torque, not an ONNX input; the "
                f"controller runs it from its artifact directory); exporting the best learned model that exports, "
                f"{exportable}")
    export = export_artifact_onnx(compare_dir / "models" / exportable)
    ctx.log(f"wrote {export.path}; onnxruntime vs numpy: max |diff| = {export.max_abs_diff:.2e} N*m")
    if not export.ok:
        raise DataError(f"ONNX export check failed: onnxruntime differs by {export.max_abs_diff:.3g} N*m")
    return StageRecord(compare_dir=_rel(ctx, compare_dir), best=best)


def closed_loop(ctx: StageContext) -> StageRecord:
    """Stage 4: the closed-loop comparison, written to closed_loop.json (read back by a resumed report stage) and
    closed_loop.md; result ``{"closed_loop_json": "closed_loop.json"}``."""
    from ..closed_loop.run import run_closed_loop, write_closed_loop
    from ..compare.plots import closed_loop_plot

    cfg = ctx.cfg
    res = run_closed_loop(ctx.out / ctx.results["compare"]["compare_dir"], ctx.out, cfg.closed_loop_seeds,
                          cfg.closed_loop_duration, cfg.weak_dob_fraction,
                          cfg.closed_loop_live_duration, log=ctx.log,
                          robot=cfg.robot or None)
    if res.live:
        closed_loop_plot(res.live, ctx.out / "plots" / "closed_loop.png")
    write_closed_loop(ctx.out, res)
    ctx.objects.closed_loop = res
    return StageRecord(closed_loop_json=CLOSED_LOOP_JSON)


def improve(ctx: StageContext) -> StageRecord:
    """Stage 5: ``deadzone-id improve`` with the demo's small settings into ``improve/`` (weak DOB, where the
    feedforward carries the load; held out: the closed-loop seeds and duration; candidates rbd and hybrid, the
    methods every iteration of the measurement in docs/improve.md picked, so the stage trains one network per iteration;
    compared with the comparison's pick); result ``{"improve_dir": "improve"}``, or ``{"improve_dir": null}`` with
    ``improve_iterations`` 0."""
    from ...training.config import load_train_config
    from ..compare.run import compare_config
    from ..improve.report import write_improve
    from ..improve.results import ImproveSettings
    from ..improve.run import run_improve

    cfg = ctx.cfg
    if cfg.improve_iterations == 0:
        ctx.log("improve_iterations = 0: skipped")
        return StageRecord(improve_dir=None)
    pick = ctx.out / ctx.results["compare"]["compare_dir"] / "pick"
    settings = ImproveSettings(
        iterations=cfg.improve_iterations, task_seeds=cfg.improve_task_seeds, task_duration_s=cfg.improve_duration,
        held_out_seeds=cfg.closed_loop_seeds, held_out_duration_s=cfg.closed_loop_duration,
        dob_cutoff_scale=cfg.weak_dob_fraction, methods=("rbd", "hybrid"), robot=cfg.robot or None,
        compare_model=str(pick) if (pick / "model.json").is_file() else None)
    run = run_improve(ctx.out / "improve", settings, compare_config(load_train_config(), quick=cfg.quick),
                      workers=2, log=ctx.log)
    write_improve(ctx.out / "improve", run)
    ctx.objects.improve = run
    return StageRecord(improve_dir="improve")


def sense(ctx: StageContext) -> StageRecord:
    """Stage 6: ``deadzone-id sense`` with the demo's small settings into ``sense/`` (the configured robot, the
    URDF's rigid body as the sensor's model, held-out seeds :attr:`DemoConfig.sense_seeds`, no extra free-motion
    run); result ``{"sense_dir": "sense"}``, or ``{"sense_dir": "", "skipped": why}`` when the sensor cannot be
    calibrated on this arm (e.g. a joint that moves in too few samples of the calibration run to fit its friction):
    the report says why instead of the demo stopping after its other stages."""
    from ..sense import SenseSettings, run_sense, write_sense

    cfg = ctx.cfg
    settings = SenseSettings(robot=cfg.robot, seeds=tuple(cfg.sense_seeds), duration=cfg.sense_duration,
                             calibration_duration=cfg.sense_calibration_duration)
    try:
        res, traces = run_sense(settings)
    except ValueError as err:
        ctx.log(f"force sensing not run: {err}")
        return StageRecord(sense_dir="", skipped=str(err))
    write_sense(ctx.out / "sense", res, traces)
    ctx.objects.sense = res
    return StageRecord(sense_dir="sense")


def teleop(ctx: StageContext) -> StageRecord:
    """Stage 7: ``deadzone-id teleop`` into ``teleop/``: the configured robot as leader and follower, bilateral (force
    feedback), every scenario on seeds :attr:`DemoConfig.teleop_seeds`, with the URDF's nominal rigid body (the
    baseline), the identified one and the comparison's pick (``compare/pick``, the model the closed loop runs: a
    learned dead-zone-aware model, or a fitted rigid body where that wins) as each arm's model and force sensor, each
    with the friction correction and the dead-zone band; result ``{"teleop_dir": "teleop"}``, or ``{"teleop_dir":
    "", "skipped": why}`` when the pair cannot be set up on this arm (e.g. a friction calibration that cannot fit a
    joint, or a pick the controller refuses): the report says why instead of the demo stopping after its other
    stages."""
    from ...errors import ArtifactError, ConfigError
    from ..compare.results import PICK_DIR
    from ..teleop import TeleopSettings, run_teleop
    from ..teleop.report import write_teleop

    cfg = ctx.cfg
    pick = Path(ctx.results["compare"]["compare_dir"]) / PICK_DIR  # relative to the demo's folder
    # the pick first: a pick the pair refuses stops the stage before the other models run
    models = ((str(ctx.out / pick),) if (ctx.out / pick / "model.json").is_file() else ()) + ("nominal", "identified")
    settings = TeleopSettings(robot=cfg.robot, models=models, modes=("bilateral",), seeds=tuple(cfg.teleop_seeds),
                              duration=cfg.teleop_duration)
    try:
        res, traces = run_teleop(settings)
    except (ValueError, ConfigError, ArtifactError) as err:
        ctx.log(f"teleoperation not run: {err}")
        return StageRecord(teleop_dir="", skipped=str(err))
    # the pick is named by its path inside the demo's folder (as its report's launch line gives it), not where the
    # folder was when it ran
    ran, named = str(ctx.out / pick), pick.as_posix()
    res = dataclasses.replace(res, cases=[
        dataclasses.replace(c, model=named, model_label=c.model_label.replace(ran, named)) if c.model == ran else c
        for c in res.cases])
    traces = {(named if m == ran else m, mode, scenario): tr for (m, mode, scenario), tr in traces.items()}
    write_teleop(ctx.out / "teleop", res, traces)
    ctx.objects.teleop = res
    return StageRecord(teleop_dir="teleop")


def _robot_name(cfg: DemoConfig) -> str:
    """The robot's name for the report: the profile's name, else the bundled arm's."""
    if not cfg.robot:
        return BUNDLED_ROBOT
    from ...robot_configs import load_robot

    return load_robot(cfg.robot).profile.name


def _read_back(ctx: StageContext, done: _T | None, stage: str, name: str, read: Callable[[Path], _T]) -> _T | None:
    """A stage's typed result: ``done`` (finished in this process), else ``read`` of ``name`` in the folder the stage
    recorded (``<stage>_dir``); None when it did not run or recorded none (skipped). Raises FileNotFoundError (the
    file is missing) or DataError (it is malformed)."""
    if done is not None:
        return done
    folder = ctx.results.get(stage, StageRecord()).get(f"{stage}_dir")
    return read(ctx.out / str(folder) / name) if folder else None


def report(ctx: StageContext) -> StageRecord:
    """Stage 8: report.json and report.md from the recorded results of stages 1-7; result ``{"report": ...}``.

    The stages' results are the typed objects of this process (:attr:`StageContext.objects`) or, when those stages
    finished in an earlier run, read back from the files they wrote (compare/report.json, closed_loop.json,
    improve/improve.json, sense/sense.json, teleop/teleop.json); the report is the same either way.

    Raises:
        FileNotFoundError: a file to read back is missing.  DataError: it is malformed (names the file and key).
    """
    from ...jsonrecord import read_record
    from ..closed_loop.results import ClosedLoopRun
    from ..compare.results import CompareReport
    from ..improve.report import RECORD
    from ..improve.results import ImproveRun
    from ..sense.results import SenseResults
    from ..teleop.results import TeleopResults
    from .report import demo_markdown
    from .results import DemoReport

    r = ctx.results
    compare_dir = ctx.out / r["compare"]["compare_dir"]
    cmp = ctx.objects.compare or CompareReport.read(compare_dir / "report.json")
    closed = ctx.objects.closed_loop or ClosedLoopRun.read(ctx.out / r["closed_loop"]["closed_loop_json"])
    improved = _read_back(ctx, ctx.objects.improve, "improve", RECORD, ImproveRun.read)
    sensed = _read_back(ctx, ctx.objects.sense, "sense", "sense.json",
                        lambda path: read_record(path, SenseResults.from_dict))
    teleoperated = _read_back(ctx, ctx.objects.teleop, "teleop", "teleop.json",
                              lambda path: read_record(path, TeleopResults.from_dict))
    check = None
    if r["simulate"].get("robot_check"):
        from ..check import RobotCheck

        check = read_record(ctx.out / r["simulate"]["robot_check"], RobotCheck.from_dict)
    doc = DemoReport(config=dataclasses.asdict(ctx.cfg), robot_check=check,
                     simulated_bags=[str(ctx.out / b) for b in r["simulate"]["bags"]],
                     live_bag=str(ctx.out / r["live"]["bag"]) if r["live"]["bag"] else "",
                     live_skipped=r["live"].get("skipped", ""), robot=_robot_name(ctx.cfg),
                     compare_dir=str(compare_dir), compare=cmp,
                     best_learned=r["compare"]["best"], closed_loop=closed.summaries,
                     closed_loop_weak_dob=closed.summaries_weak, closed_loop_live=closed.live,
                     closed_loop_settings=closed.settings, improve=improved, sense=sensed,
                     sense_dir=str(r["sense"]["sense_dir"]) if sensed is not None else "",
                     sense_skipped=str(r.get("sense", StageRecord()).get("skipped", "")),
                     teleop=teleoperated,
                     teleop_dir=str(r["teleop"]["teleop_dir"]) if teleoperated is not None else "",
                     teleop_skipped=str(r.get("teleop", StageRecord()).get("skipped", "")),
                     stage_seconds=ctx.stage_seconds,
                     seconds=sum(ctx.stage_seconds.values()))
    (ctx.out / "report.json").write_text(json.dumps(doc.to_dict(), indent=2) + "\n")
    (ctx.out / "report.md").write_text(demo_markdown(doc, ctx.out))
    ctx.log("stage times [s]: " + ", ".join(f"{k} {v:.0f}" for k, v in ctx.stage_seconds.items()))
    ctx.log(f"Read {ctx.out / 'report.md'} (plots in {ctx.out / 'plots'} and {compare_dir / 'plots'}).")
    return StageRecord(report="report.md")


def _live_title(c: DemoConfig) -> str:
    return (f"live ROS 2 recording{f' of {c.robot}' if c.robot else ''}: sim_feedforward.launch.yaml, pd_dob, "
            f"{c.live_duration:g} s excitation (sim_arm, excitation, feedforward_controller, recorder as processes "
            "over DDS; simulated time, lockstep)")


def _closed_loop_title(c: DemoConfig) -> str:
    live = (f"one live run of {c.closed_loop_live_duration:g} s per controller over DDS"
            if c.closed_loop_live_duration > 0 else "no live run")
    return (f"closed loop: seeds {list(c.closed_loop_seeds)} x {c.closed_loop_duration:g} s in-process, default and "
            f"weak DOB, {live} (deadzone-id closed-loop)")


DEMO_STAGES: tuple[Stage, ...] = (
    Stage("simulate", lambda c: f"offline simulation{f' of {c.robot}' if c.robot else ''}: {len(c.sim_seeds)} "
          f"episodes x {c.sim_duration:g} s (deadzone-id simulate)", simulate, ("data/sim_seed*", ROBOT_CHECK_JSON)),
    Stage("live", _live_title, live, ("data/live*", "logs/live_recording*.log")),
    Stage("compare", lambda c: "compare every method on all recordings (deadzone-id compare)", compare,
          ("compare",)),
    Stage("closed_loop", _closed_loop_title, closed_loop,
          ("closed_loop", CLOSED_LOOP_JSON, "closed_loop.md", "logs/closed_loop_*.log", "plots/closed_loop*.png")),
    Stage("improve", lambda c: f"learning from its own runs: {c.improve_iterations} iteration(s), task seeds "
          f"{list(c.improve_task_seeds)} x {c.improve_duration:g} s, weak DOB (deadzone-id improve)", improve,
          ("improve",)),
    Stage("sense", lambda c: f"force sensing without a force sensor: seeds {list(c.sense_seeds)} x "
          f"{c.sense_duration:g} s of pushes, a hold and a collision (deadzone-id sense)", sense, ("sense",)),
    Stage("teleop", lambda c: f"teleoperation with force feedback: leader and follower, bilateral, seeds "
          f"{list(c.teleop_seeds)} x {c.teleop_duration:g} s per scenario, the nominal and identified rigid bodies "
          "and the comparison's pick (deadzone-id teleop)", teleop, ("teleop",)),
    Stage("report", lambda c: "report", report, ("report.json", "report.md")),
)
