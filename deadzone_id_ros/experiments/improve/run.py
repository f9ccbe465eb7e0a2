"""Learning from its own runs (``deadzone-id improve``): the controller improves its feedforward from the motions it
executes, starting from the URDF's nominal rigid body, with no excitation experiment (issue 23).

Iteration 0 runs ctc_dob with the nominal rigid body on the task references (seeded excitations,
:data:`~.improve.results.DEFAULT_TASK_SEEDS`) and records each run as an ordinary rosbag2 bag
(:func:`~deadzone_id_ros.sim.record.simulate_bag`: the bags ``compare`` and ``train`` read). Each further iteration
trains every candidate method on everything recorded so far with the training pipeline of ``compare``
(:func:`~deadzone_id_ros.training.planner.plan_methods`, :func:`~deadzone_id_ros.training.fit.fit_plans`), each network
warm-started from its previous iteration's network; picks the method by validation error
(:func:`~.compare.pick.choose_pick`, as ``compare`` does); checks the candidate (:func:`_accept_model`: finite torque
within the limits on the recorded states, validation error, and a trial run on a check reference that no iteration
trains on); runs the task references again with the model it accepted as the feedforward, and records. Every iteration
is scored on held-out references that no iteration runs (:data:`~.improve.results.DEFAULT_HELD_OUT_SEEDS`, refused as
task seeds): tracking RMSE per joint, at velocity reversals and the DOB's mean |estimate|
(:func:`~.closed_loop.sim.run_controller`). Runs are in-process (the nodes' controller and simulator code, no DDS); each
run builds its controller with the iteration's model, so no model is swapped inside a running controller here (the
run-time swap of the node is issue 23 item 2). With ``settings.live`` the task runs are recorded over DDS in lockstep by
the nodes (:mod:`.improve.live`: a fresh launch per run with the iteration's model); the trial runs and the held-out
scoring stay in-process, so that the two modes are scored alike.

The label is the applied torque (the recorded effort: the command after the rate limit and the clamp), with the
dead-zone mask of training (r_ij = 1 where |dq_ij| > alpha sigma_j, sigma_j from the training split). Why not the
applied torque minus the DOB's estimate: the DOB estimates tau - f(q, dq, ddq) for the running model f, the model's
error on the motion, so tau - tau_dis_hat is about f's own prediction (low-pass filtered): training on it teaches the
model itself and the loop learns nothing. The applied torque is what the arm's dynamics turned into the measured
motion, the label of the dedicated excitation experiment (DESIGN.md); on an arm with an external load that is not
part of the task (a contact), the applied torque would carry it too, and there the DOB's estimate would be the part
to remove.
"""

from __future__ import annotations

import dataclasses
import math
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from .report import held_out_text
from .results import ImproveIteration, ImproveRun, ImproveSettings, RunSetup, TrainingStep

if TYPE_CHECKING:
    from ...models.base import InverseDynamicsModel
    from ...models.mlp import MLPWeights
    from ...training.config import TrainConfig
    from ...training.fit import FitResult, Stacked
    from ...training.pipeline import PreparedData, TrainingInputs
    from ..closed_loop.results import ClosedLoopSummary
    from ..closed_loop.sim import ControllerSpec

__all__ = ["MAX_OVER_LIMIT_FRACTION", "MAX_TRIAL_WORSENING", "RunSetup", "improve_train_config", "run_improve"]

#: A candidate whose predicted torque exceeds a joint's effort limit on more than this share of the recorded states
#: is refused (the applied torques it was trained on were clamped to the limits, so a sound model rarely does).
MAX_OVER_LIMIT_FRACTION = 0.01
#: A candidate whose trial run tracks a task reference worse than the running model did by more than this share is
#: refused (issue 23: no iteration more than 5 % worse than the one before).
MAX_TRIAL_WORSENING = 0.05
#: Stamp of simulated time 0 of the first recorded run [s since epoch]; each run starts a day later than the one
#: before, so bags never overlap in time and a rerun writes the same bags.
START_TIME = 1.7e9


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def improve_train_config(config: TrainConfig | None = None) -> TrainConfig:
    """The training configuration of each iteration: ``config`` (default: the bundled config/training.yaml) with one
    training seed per method and no progress bar."""
    from ...training.config import load_train_config

    return (config or load_train_config()).with_overrides(seeds=1, progress=False)


def _record_one(args: tuple) -> str:
    """One task run written as a bag (a pool job): (spec, seed, duration, setup, dob_scale, path, start) -> path."""
    from ...sim.record import simulate_bag
    from ..closed_loop.sim import run_config

    spec, seed, duration, setup, scale, path, start = args
    cfg = run_config(spec, setup.base, scale)
    bag = simulate_bag(duration, seed, path, sim_config=setup.sim, controller_config=cfg, start_time=start,
                       notes=f"deadzone-id improve: task run with {spec.label}")
    return str(bag.path)


def _score(args: tuple) -> ClosedLoopSummary:
    """The held-out runs of one model (a pool job): (spec, seeds, duration, setup, dob_scale) -> summary."""
    from ..closed_loop.sim import run_controller

    spec, seeds, duration, setup, scale = args
    return run_controller(spec, seeds, duration, setup.sim, setup.base, scale)


def _run_iteration(k: int, spec: ControllerSpec, settings: ImproveSettings, setup: RunSetup, out: Path,
                   workers: int, log: Callable[[str], None] = _log) -> tuple[list[str], ClosedLoopSummary]:
    """Iteration ``k``'s task runs (recorded under ``out``/runs/iter{k}) and its held-out score, over ``workers``
    processes (1: here). With ``settings.live`` the task runs are live runs over DDS in this process
    (:func:`~.improve.live.record_live`) while the held-out score, in-process as without, goes on in a worker
    process at :data:`~.closed_loop.run.OVERLAP_NICENESS`."""
    from ..closed_loop.run import OVERLAP_NICENESS, worker_pool

    n = len(settings.task_seeds)
    folder = out / "runs" / f"iter{k}"
    jobs = [(spec, int(s), settings.task_duration_s, setup, settings.dob_cutoff_scale,
             folder / f"seed{int(s)}", START_TIME + 86400.0 * (k * n + i))
            for i, s in enumerate(settings.task_seeds)]
    held = (spec, tuple(settings.held_out_seeds), settings.held_out_duration_s, setup, settings.dob_cutoff_scale)
    if settings.live:
        from .live import controller_params_file, record_live

        params = controller_params_file(setup, settings.dob_cutoff_scale, out / "runs")
        live_args = (spec, settings.task_seeds, settings.task_duration_s, settings.robot, params, folder, log)
        if workers <= 1:
            return record_live(*live_args), _score(held)
        with worker_pool(1, OVERLAP_NICENESS) as pool:
            score = pool.submit(_score, held)
            return record_live(*live_args), score.result()
    if workers <= 1:
        return [_record_one(j) for j in jobs], _score(held)
    with worker_pool(workers) as pool:
        score = pool.submit(_score, held)  # the longest job first
        bags = list(pool.map(_record_one, jobs))
        return bags, score.result()


def _validation_rmse(model: InverseDynamicsModel, val: Stacked) -> float:
    """Mean over joints of the torque RMSE [N·m] of ``model`` on the moving pairs of ``val``."""
    from ...training.evaluate import evaluate_model

    return float(evaluate_model(model, val).rmse_mean)


def _accept_model(model: InverseDynamicsModel, probe: Stacked, effort_limit: np.ndarray, candidate_rmse: float,
                  running_rmse: float, trial: ClosedLoopSummary | None = None,
                  running_trial_rmse: float = math.inf) -> str:
    """Whether a newly trained model may replace the running one: "" to accept, else the reason.

    Refused when the run-time swap refuses it (:func:`deadzone_id_ros.control.model_swap.check_swap`: other joints,
    other units, a torque on the recorded states ``probe`` not finite anywhere), when its torque there exceeds
    ``effort_limit`` (J,) [N·m] on more than :data:`MAX_OVER_LIMIT_FRACTION` of them for some joint, its validation RMSE
    ``candidate_rmse`` is above the running model's ``running_rmse`` on the same split [N·m], or its ``trial`` run
    (in-process, on the check reference: no iteration trains on it, none is scored on it) latched a fault or tracked
    worse than the running model's run of it, ``running_trial_rmse`` [rad], by more than :data:`MAX_TRIAL_WORSENING`.
    The one acceptance rule of ``improve`` (the node's run-time swap has its own checks).

    Why the trial run: a model fitted on a few seconds of runs can predict the validation torques well and still
    destabilize the loop off its data (measured: an rbd fitted on 2 x 5 s, validation 0.165 N·m against the
    nominal rigid body's 0.452, tracked the held-out references at 737 mrad against 2.5; a trial on a reference it
    was trained on still passed it, hence a reference no iteration trains on).
    """
    from ...control.model_swap import check_swap

    # the run-time swap's checks (joints, units, finite torque on every recorded state); its limit check refuses a
    # single state beyond the clamp, where this rule allows MAX_OVER_LIMIT_FRACTION of states (below)
    verdict = check_swap(model, probe.joint_names, np.full(len(probe.joint_names), np.inf), probe.q, probe.dq,
                         probe.ddq)
    if not verdict.accepted:
        return verdict.reason
    pred = model.predict(probe.q, probe.dq, probe.ddq)
    over = (np.abs(pred) > effort_limit).mean(axis=0)
    if np.any(over > MAX_OVER_LIMIT_FRACTION):
        j = int(np.argmax(over))
        return (f"torque beyond the effort limit of {probe.joint_names[j]} ({effort_limit[j]:g} N·m) on "
                f"{over[j]:.1%} of the recorded states (at most {MAX_OVER_LIMIT_FRACTION:.0%})")
    if not candidate_rmse <= running_rmse:
        return (f"validation RMSE {candidate_rmse:.4g} N·m is above the running model's {running_rmse:.4g} N·m "
                "on the same split")
    if trial is not None and trial.faults:
        return f"its trial run on the check reference faulted: {trial.faults[0]}"
    if trial is not None and not trial.tracking_rmse_mean <= running_trial_rmse * (1.0 + MAX_TRIAL_WORSENING):
        return (f"its trial run on the check reference tracked at {trial.tracking_rmse_mean * 1e3:.4g} mrad, worse "
                f"than the running model's {running_trial_rmse * 1e3:.4g} mrad by more than {MAX_TRIAL_WORSENING:.0%}")
    return ""


@dataclasses.dataclass
class _Candidates:
    """Every candidate of one training: the inputs (TrainingInputs) and prepared split (PreparedData) they were fitted
    on, method -> its fit, method -> why it was not fitted."""

    inputs: TrainingInputs
    data: PreparedData
    fits: dict[str, FitResult]
    skipped: dict[str, str]


def _fit_candidates(bags: Sequence[str], warm: Mapping[str, MLPWeights], settings: ImproveSettings,
                    setup: RunSetup, config: TrainConfig, log: Callable[[str], None]) -> _Candidates:
    """Fit every candidate method (one seed each) on ``bags``, warm-started from ``warm`` where it has a network."""
    from ...resources import default_urdf
    from ...training.fit import fit_plans
    from ...training.pipeline import load_inputs, prepare_data, shared_fits
    from ...training.planner import plan_methods

    # a live bag is the recorder node's, whose episode.yaml does not name the simulator (a robot's would not either):
    # its rigid body comes from the controller's URDF, as for a robot
    urdf = setup.urdf or (str(setup.base.urdf_path or default_urdf()) if settings.live else None)
    inputs = load_inputs(list(bags), urdf=urdf, simulator="auto", locked=setup.locked or None,
                         log=lambda _m: None)
    data = prepare_data(inputs, config, log)
    plans, skipped = plan_methods(settings.methods or None, config.seed_list, shared_fits(inputs, data, config, log),
                                  init=warm)
    flat = [p for ps in plans.values() for p in ps]
    fits = dict(zip((p.method for p in flat), fit_plans(flat, config)))  # one seed per method
    return _Candidates(inputs, data, fits, skipped)


def _train(k: int, bags: Sequence[str], warm: Mapping[str, MLPWeights], running: InverseDynamicsModel,
           running_trial: float, settings: ImproveSettings, setup: RunSetup, config: TrainConfig, out: Path,
           log: Callable[[str], None]) -> tuple[TrainingStep, dict[str, FitResult]]:
    """Iteration ``k``'s training on ``bags``: fit the candidates, pick by validation error, save the pick's artifact
    under ``out``/models/iter{k}, check it (:func:`_accept_model`) against the ``running`` model, whose run of the
    check reference tracked at ``running_trial`` [rad]. Returns (the step, method -> fit)."""
    from ...training.pipeline import MethodRun, evaluate_on_test, save_method
    from ..compare.pick import choose_pick

    cands = _fit_candidates(bags, warm, settings, setup, config, log)
    inputs, data, fits, skipped = cands.inputs, cands.data, cands.fits, cands.skipped
    val = {m: _validation_rmse(f.model, data.val) for m, f in fits.items()}
    pick = choose_pick(val, scores={m: [[v]] for m, v in val.items()})
    fit = fits[pick.method]
    artifact = out / "models" / f"iter{k}"
    save_method(MethodRun(fit, evaluate_on_test(fit, data)[0]), artifact, inputs, data, config, onnx=True)
    running_rmse = _validation_rmse(running, data.val)
    trial = _score((_spec(k, str(artifact), pick.method), (settings.check_seed,), settings.task_duration_s, setup,
                    settings.dob_cutoff_scale))
    refusal = _accept_model(fit.model, data.train, setup.effort_limit, val[pick.method], running_rmse, trial,
                            running_trial)
    step = TrainingStep(
        bags=[str(b) for b in bags], samples=[len(data.train), len(data.val), len(data.test)],
        validation_rmse={m: (v if np.isfinite(v) else None) for m, v in val.items()}, skipped=dict(skipped),
        pick=pick.method, pick_reason=pick.reason, candidate_validation_rmse=val[pick.method],
        running_validation_rmse=running_rmse, accepted=not refusal, refusal=refusal, artifact=str(artifact),
        warm_started=sorted(m for m in fits if m in warm), trial_tracking_rmse=trial.tracking_rmse_mean,
        running_trial_tracking_rmse=running_trial)
    log(f"iteration {k}: trained on {len(bags)} runs ({len(data.train)} train / {len(data.val)} val samples); "
        f"pick {pick.method} (validation {val[pick.method]:.4f} N·m, running model {running_rmse:.4f} N·m): "
        + ("accepted" if not refusal else f"REFUSED, the running model stays: {refusal}"))
    return step, fits


def _spec(k: int, artifact: str | None, method: str) -> ControllerSpec:
    """The controller of iteration ``k``: ctc_dob with the nominal rigid body (``artifact`` None) or the model
    artifact ``artifact`` of method ``method``."""
    from ...control.config import ControlMode
    from ..closed_loop.sim import ControllerSpec

    ctc_dob = ControlMode("model", dob=True)
    if artifact is None:
        return ControllerSpec(f"improve_iter{k}", f"iteration {k}: ctc_dob + rbd (URDF nominal)", ctc_dob, "rbd")
    return ControllerSpec(f"improve_iter{k}", f"iteration {k}: ctc_dob + {method}", ctc_dob, "learned", artifact)


def run_improve(out: Path, settings: ImproveSettings, config: TrainConfig | None = None, workers: int = 1,
                log: Callable[[str], None] = _log) -> ImproveRun:
    """Run the loop of the module docstring: iteration 0 with the nominal rigid body, then ``settings.iterations``
    trainings, each followed by runs with the model it accepted; bags under ``out``/runs, models under ``out``/models.

    Args:
        out: output folder (created).  settings: seeds, durations, iterations, DOB scale, methods, robot.
        config: training configuration (default :func:`improve_train_config` of the bundled one).
        workers: processes for the runs of an iteration (1: in this process).  log: progress lines.

    Raises:
        ValueError: workers < 1.  ConfigError: a ``settings.compare_model`` that reads the joint-state history.
        FileNotFoundError, ArtifactError: ``settings.compare_model`` cannot be loaded.
        DataError, ConfigError, RobotDescriptionError: from loading the recorded bags or training on them.
    """
    from ...models.runtime import load_model
    from ..closed_loop.sim import run_config

    if workers < 1:
        raise ValueError(f"workers = {workers} must be >= 1")
    if settings.compare_model:  # before any run: a model no controller can run is refused now, not at the end
        from ...errors import ConfigError
        from ...models.artifact import load_artifact
        from ...models.history import per_tick_refusal

        refusal = per_tick_refusal(load_artifact(settings.compare_model))
        if refusal:
            raise ConfigError(f"compare model {settings.compare_model}: {refusal} (the comparison's models/METHOD "
                              "folder)")
    t0 = time.perf_counter()
    out = Path(out)
    setup = RunSetup.for_robot(settings.robot)
    config = improve_train_config(config)
    iterations: list[ImproveIteration] = []
    bags: list[str] = []
    warm: dict[str, MLPWeights] = {}
    step: TrainingStep | None = None
    spec = _spec(0, None, "rbd")
    running_trial = _score((spec, (settings.check_seed,), settings.task_duration_s, setup,
                            settings.dob_cutoff_scale)).tracking_rmse_mean
    method = "rbd (URDF nominal)"
    running: InverseDynamicsModel = load_model(run_config(spec, setup.base, settings.dob_cutoff_scale))
    for k in range(settings.iterations + 1):
        if k > 0:
            step, fits = _train(k, bags, warm if settings.warm_start else {}, running, running_trial, settings,
                                setup, config, out, log)
            warm = {m: f.model.mlp for m, f in fits.items() if f.model.mlp is not None}
            if step.accepted:
                spec, method, running = _spec(k, step.artifact, step.pick), step.pick, fits[step.pick].model
                assert step.trial_tracking_rmse is not None  # _train runs the trial of every candidate
                running_trial = step.trial_tracking_rmse  # the same controller on the same reference
        runs, held = _run_iteration(k, spec, settings, setup, out, workers, log)
        bags += runs
        iterations.append(ImproveIteration(k, spec.label, spec.model, spec.model_path, method, step, runs, held))
        label = spec.label if spec.label.startswith(f"iteration {k}:") else f"iteration {k}: kept {spec.label}"
        log(f"{label}: held-out tracking RMSE {held_out_text(held)} mrad, at reversals "
            f"{held.reversal_rmse_mean * 1e3:.3f} mrad, "
            f"DOB mean |estimate| {np.mean(held.dob_mean_abs_per_joint):.4f} N·m")
    compare = None
    if settings.compare_model:
        compare = _score((_compare_spec(settings.compare_model), tuple(settings.held_out_seeds),
                          settings.held_out_duration_s, setup, settings.dob_cutoff_scale))
        log(f"{compare.label}: held-out tracking RMSE {compare.tracking_rmse_mean * 1e3:.3f} mrad")
    return ImproveRun(settings, iterations, compare, list(setup.sim.joint_names), str(setup.sim.profile),
                      time.perf_counter() - t0)


def _compare_spec(path: str) -> ControllerSpec:
    """ctc_dob with the model artifact ``path`` (the dedicated-excitation pick)."""
    from ...control.config import ControlMode
    from ..closed_loop.sim import ControllerSpec

    return ControllerSpec("compare_model", f"ctc_dob + {Path(path).name} (dedicated excitation)",
                          ControlMode("model", dob=True), "learned", str(path))
