"""The closed-loop comparison (``deadzone-id closed-loop --compare DIR``): every controller in closed loop on held-out
references.

Runs pd_dob, ctc_dob with the URDF's nominal rigid body, and ctc_dob with the comparison's identified rigid body,
masked, conventional and picked models, each on several held-out excitation seeds in-process (the controller and
simulator code of the nodes, no DDS, faster than real time), with the default DOB and with a weak DOB (cutoff a
fraction of the default, where the feedforward has to carry the load). Optionally one live run per controller
over DDS (sim_feedforward.launch.yaml in lockstep) on the first seed, beside the in-process run of the same seed
and duration: the check that the nodes behave like the in-process loop. With live runs, the in-process runs go on in
niced worker processes meanwhile (same results: each run is deterministic in its seed). Writes OUT/closed_loop.json,
OUT/closed_loop.md and OUT/plots/closed_loop_reversals.png.
"""

from __future__ import annotations

import dataclasses
import json
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from multiprocessing import get_context
from pathlib import Path
from typing import TYPE_CHECKING

__all__ = ["DEFAULT_SEEDS", "OVERLAP_NICENESS", "TRACKING_PLOT", "WEAK_DOB_FRACTION", "check_feedforward_velocity",
           "live_closed_loop", "read_pick", "run_closed_loop", "run_in_process", "worker_pool", "write_closed_loop"]

from .results import (
    IN_PROCESS_TIME_BASE,
    ClosedLoopResult,
    ClosedLoopRun,
    ClosedLoopSettings,
    ClosedLoopSummary,
)

if TYPE_CHECKING:
    from ...control.config import ControllerConfig
    from ...sim.config import SimArmConfig
    from .sim import ControllerSpec

DEFAULT_SEEDS = (999, 1000, 1001)  # held out: the demo trains on seeds 1..5 and 100
WEAK_DOB_FRACTION = 0.2
#: The tracking plot's file under the output's plots/ (q and q_d over time per joint, and the error).
TRACKING_PLOT = "closed_loop_tracking.png"


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def read_pick(compare_dir: Path) -> tuple[str | None, str]:
    """The comparison's pick (a method with an artifact in ``compare_dir``/models) and where it came from.

    The report's :attr:`~.compare.results.CompareReport.pick` when it has one; otherwise its
    :meth:`~.compare.results.CompareReport.best_learned` (lowest mean test RMSE among the learned methods).

    Raises:
        FileNotFoundError: ``compare_dir``/report.json is missing.
        DataError: report.json is not a comparison's report (names the missing or unknown key).
    """
    from ...errors import DataError
    from ..compare.results import Pick, best_learned

    path = Path(compare_dir) / "report.json"
    if not path.is_file():
        raise FileNotFoundError(f"{path} does not exist (run `deadzone-id compare --out {compare_dir}` first)")
    try:
        doc = json.loads(path.read_text())
        if not isinstance(doc, dict):
            raise TypeError(f"a JSON {type(doc).__name__}, not an object")
        doc["joint_names"]  # a key every comparison's report has
        pick = doc.get("pick")
        method = pick if isinstance(pick, str) else Pick(**pick).method if pick else None  # str: an early report
        test_rmse = {m: e["rmse_mean"] for m, e in doc["methods"].items()}
    except (KeyError, TypeError, ValueError, AttributeError) as err:
        raise DataError(f"{path} is not the report.json of `deadzone-id compare` ({type(err).__name__}: {err})") \
            from err
    if method is not None:
        return method, "report.json `pick`"
    best = best_learned(test_rmse)
    if best is None:
        return None, "no learned method in report.json"
    return best, "lowest test RMSE among learned methods (report.json has no `pick`)"


def _default_configs(robot: str | None = None) -> tuple[SimArmConfig, ControllerConfig]:
    """(SimArmConfig, ControllerConfig): of the robot profile ``robot`` (name or file), else the bundled
    config/sim_arm.yaml and the default ControllerConfig for its joints."""
    from ...robot_configs import controller_config, load_robot, robot_for, sim_config
    from ...sim.sim_arm_params import load_sim_config

    if robot:
        derived = load_robot(robot)
        return sim_config(derived), controller_config(derived)
    sim, _ = load_sim_config(None)
    return sim, controller_config(robot_for(sim.urdf_path, sim.joint_names, sim.initial_position))


def _one(args: tuple) -> ClosedLoopSummary:
    from .sim import run_controller

    return run_controller(*args)


def _lower_priority(niceness: int) -> None:
    """Pool worker initializer: raise the worker's niceness by ``niceness`` (>= 0) so that the nodes of a live run
    come first."""
    if niceness > 0:
        os.nice(niceness)


@contextmanager
def worker_pool(workers: int, niceness: int = 0) -> Iterator[ProcessPoolExecutor]:
    """``workers`` spawned processes (fresh interpreters: no rclpy or MuJoCo state inherited) at ``niceness`` (>= 0)
    more than this process. When the block raises (an interrupt included), the jobs not yet started are cancelled, so
    that the caller waits for the running ones only, not the whole queue."""
    pool = ProcessPoolExecutor(max_workers=workers, mp_context=get_context("spawn"), initializer=_lower_priority,
                               initargs=(niceness,))
    try:
        yield pool
    except BaseException:
        pool.shutdown(wait=True, cancel_futures=True)
        raise
    pool.shutdown(wait=True)


def _jobs(specs: Sequence[ControllerSpec], seeds: Sequence[int], duration: float,
          dob_fractions: Sequence[float], robot: str | None = None,
          feedforward_velocity: str = "desired") -> list[tuple]:
    """The arguments of :func:`~.closed_loop.sim.run_controller` per DOB fraction and controller, in that order, on
    the robot profile ``robot`` (None: the bundled arm), the ctc models evaluated at ``feedforward_velocity``
    (``ControllerConfig.feedforward_velocity``)."""
    sim, base = _default_configs(robot)
    base = dataclasses.replace(base, feedforward_velocity=feedforward_velocity)
    return [(spec, tuple(seeds), float(duration), sim, base, float(f)) for f in dob_fractions for spec in specs]


def _by_fraction(results: Sequence[ClosedLoopSummary], n_specs: int, seeds: Sequence[int],
                 dob_fractions: Sequence[float], log: Callable[[str], None]) -> list[dict[str, ClosedLoopSummary]]:
    """``results`` (the order of :func:`_jobs`) as one {name: summary} per DOB fraction; logs each table."""
    out: list[dict[str, ClosedLoopSummary]] = []
    for k, f in enumerate(dob_fractions):
        chunk = results[k * n_specs:(k + 1) * n_specs]
        log(f"DOB cutoff x{f:g}:")
        for s in chunk:
            log(f"  {s.label:34s} tracking RMSE {s.tracking_rmse_mean * 1e3:8.3f} ± {s.tracking_rmse_std * 1e3:.3f} "
                f"mrad, at reversals {s.reversal_rmse_mean * 1e3:8.3f} mrad ({len(seeds)} seeds)")
        out.append({s.name: s for s in chunk})
    return out


def run_in_process(specs: Sequence[ControllerSpec], seeds: Sequence[int], duration: float,
                   dob_fractions: Sequence[float], workers: int = 2,
                   log: Callable[[str], None] = _log, robot: str | None = None,
                   feedforward_velocity: str = "desired") -> list[dict[str, ClosedLoopSummary]]:
    """Each controller on each seed, once per DOB fraction, over ``workers`` processes (1: in this process).

    Uses the robot profile ``robot`` (name or file) when given, else the bundled config/sim_arm.yaml (the live
    sim_arm's physics) and the default ControllerConfig, with ``feedforward_velocity``.

    Returns:
        one {name: summary} per entry of ``dob_fractions``, in spec order.
    """
    jobs = _jobs(specs, seeds, duration, dob_fractions, robot, feedforward_velocity)
    if workers > 1:
        with worker_pool(workers) as pool:
            results = list(pool.map(_one, jobs))
    else:
        results = [_one(j) for j in jobs]
    return _by_fraction(results, len(specs), seeds, dob_fractions, log)


def live_closed_loop(specs: Sequence[ControllerSpec], seed: int, duration: float, out: Path,
                     log: Callable[[str], None] = _log,
                     inprocess: Callable[[ControllerSpec], ClosedLoopSummary] | None = None,
                     robot: str | None = None) -> tuple[dict[str, ClosedLoopResult], dict[str, str]]:
    """One live run per controller over DDS (lockstep), beside the in-process run of the same seed and duration.

    Args:
        inprocess: (spec) -> that in-process run (:func:`run_closed_loop` has it computed in its worker processes
            meanwhile); default: run it here, after the live run.
        robot: the robot profile (name or file) of both runs (the launch files' ``robot:=``); None: the bundled arm.

    Returns:
        (name -> result, name -> why the live run failed): a live run that fails twice (a node died, lockstep
        stalls under load; logs under ``out``/logs) is reported, not fatal, since the in-process runs measure.
    """
    from ...errors import DeadzoneIdError
    from ...launching.live import closed_loop_metrics, live_run, robot_launch_args
    from .sim import run_controller

    if inprocess is None:
        sim, base = _default_configs(robot)

        def inprocess(spec: ControllerSpec) -> ClosedLoopSummary:
            return run_controller(spec, [seed], duration, sim, base)

    (out / "logs").mkdir(parents=True, exist_ok=True)
    results: dict[str, ClosedLoopResult] = {}
    failures: dict[str, str] = {}
    for spec in specs:
        args = {"mode": spec.mode, "model": spec.model, "seed": str(seed), **robot_launch_args(robot or "")}
        if spec.model_path:
            args["model_path"] = spec.model_path
        try:
            bag = live_run(out / "closed_loop" / spec.name, args, duration,
                           out / "logs" / f"closed_loop_{spec.name}.log")
        except DeadzoneIdError as err:
            failures[spec.name] = str(err)
            log(f"  {spec.label:34s} live run FAILED: {err}")
            continue
        inproc = inprocess(spec)
        r = ClosedLoopResult(mode=spec.mode, model=spec.model, artifact=spec.model_path or None, bag=str(bag),
                             metrics=closed_loop_metrics(bag), inprocess_tracking_rmse_mean=inproc.tracking_rmse_mean)
        results[spec.name] = r
        m = r.metrics
        log(f"  {spec.label:34s} live {m.tracking_rmse_mean * 1e3:7.3f} mrad, in-process "
            f"{inproc.tracking_rmse_mean * 1e3:7.3f} mrad (time base {m.time_base}; "
            f"{m.zero_stamp_states_dropped} state(s) published before simulated time started, stamped 0, were not "
            f"recorded, as expected in lockstep; {m.zero_stamp_states} stamped 0 in the bag)")
    return results, failures


#: Niceness of the in-process workers while live runs go on beside them: the lockstep nodes get the CPU first and the
#: workers take what the live runs leave (start-up, discovery, shutdown, waits between ticks); 5, not 19, so that on a
#: machine busy with other work they still finish within the live runs.
OVERLAP_NICENESS = 5


def _in_process_and_live(specs: Sequence[ControllerSpec], seeds: Sequence[int], duration: float,
                         fractions: Sequence[float], live_duration: float, out: Path, workers: int,
                         log: Callable[[str], None], robot: str | None = None, feedforward_velocity: str = "desired"
                         ) -> tuple[list[dict[str, ClosedLoopSummary]], dict[str, ClosedLoopResult], dict[str, str]]:
    """The in-process runs (one {name: summary} per DOB fraction) and the live runs (:func:`live_closed_loop`;
    none when ``live_duration`` is 0).

    With ``workers`` > 1 and live runs, the in-process runs, and the in-process run beside each live one, go to
    ``workers`` processes at :data:`OVERLAP_NICENESS` while the live runs go on in this one: the results are the
    same as one after the other (each run is deterministic in its seed), the wall time is about the live runs'.
    """
    jobs = _jobs(specs, seeds, duration, fractions, robot, feedforward_velocity)
    if live_duration <= 0 or workers <= 1:
        summaries = run_in_process(specs, seeds, duration, fractions, workers, log, robot, feedforward_velocity)
        if live_duration <= 0:
            return summaries, {}, {}
        log(f"live runs over DDS (lockstep), seed {seeds[0]}, {live_duration:g} s each:")
        return summaries, *live_closed_loop(specs, seeds[0], live_duration, out, log, robot=robot)
    with worker_pool(workers, OVERLAP_NICENESS) as pool:
        beside = {s.name: pool.submit(_one, j)
                  for s, j in zip(specs, _jobs(specs, seeds[:1], live_duration, (1.0,), robot, feedforward_velocity))}
        futures = [pool.submit(_one, j) for j in jobs]
        log(f"live runs over DDS (lockstep), seed {seeds[0]}, {live_duration:g} s each (the in-process runs go on "
            f"meanwhile in {workers} processes):")
        live, failures = live_closed_loop(specs, seeds[0], live_duration, out, log,
                                          inprocess=lambda spec: beside[spec.name].result(), robot=robot)
        results = [f.result() for f in futures]
    return _by_fraction(results, len(specs), seeds, fractions, log), live, failures


def check_feedforward_velocity(feedforward_velocity: str, live_duration: float) -> None:
    """Check the velocity the ctc_dob models are to be evaluated at, for runs with ``live_duration`` [s] of live runs.

    Raises:
        ValueError: not one of ``FEEDFORWARD_VELOCITIES``, or not "desired" with live runs (they take the launch
            files' controller settings).
    """
    from ...control.config import FEEDFORWARD_VELOCITIES

    if feedforward_velocity not in FEEDFORWARD_VELOCITIES:
        raise ValueError(f"feedforward velocity = {feedforward_velocity!r} must be one of "
                         f"{list(FEEDFORWARD_VELOCITIES)}")
    if feedforward_velocity != "desired" and live_duration > 0:
        raise ValueError(f"feedforward velocity {feedforward_velocity!r} runs in process only: the live runs take the "
                         "launch files' controller settings (drop --live-duration, or set it in a controller "
                         "parameter file for a live run of your own)")


def run_closed_loop(compare_dir: Path, out: Path, seeds: Sequence[int] = DEFAULT_SEEDS, duration: float = 8.0,
                    weak_dob_fraction: float = WEAK_DOB_FRACTION, live_duration: float = 0.0, workers: int = 2,
                    log: Callable[[str], None] = _log, robot: str | None = None,
                    feedforward_velocity: str = "desired") -> ClosedLoopRun:
    """The closed-loop comparison for the models of ``compare_dir``; plots go to ``out``/plots.

    Args:
        compare_dir: a ``deadzone-id compare`` output (report.json, models/).  seeds: held-out excitation seeds
        (>= 1).  duration: per seed [s].  weak_dob_fraction: the weak DOB's cutoff as a fraction of the default,
        in (0, 1).  live_duration: live run length [s] per controller; 0 skips the live runs.  workers: processes
        for the in-process runs (they run beside the live runs when there are both, :func:`_in_process_and_live`).
        robot: a robot profile (name or file) for the in-process and the live runs; None: the bundled arm.
        feedforward_velocity: the velocity the ctc_dob models are evaluated at (``ControllerConfig``'s;
            "measured" only in process: the live runs take the launch files' setting).

    Raises:
        ValueError: no seeds, weak_dob_fraction outside (0, 1), or a feedforward_velocity that is not one of
            ``FEEDFORWARD_VELOCITIES`` or not "desired" with live runs.  FileNotFoundError: no report.json.  DataError:
            report.json is not a comparison's report.
    """
    from ...models.methods import METHODS
    from ..compare.plots import reversal_error_plot, tracking_plot
    from .sim import closed_loop_methods, controller_specs

    if not seeds:
        raise ValueError("closed loop needs at least one seed")
    if not 0 < weak_dob_fraction < 1:
        raise ValueError(f"weak DOB fraction = {weak_dob_fraction} must be in (0, 1)")
    check_feedforward_velocity(feedforward_velocity, live_duration)
    pick, pick_source = read_pick(compare_dir)
    models = Path(compare_dir) / "models"
    available = [p.name for p in models.iterdir() if p.is_dir()] if models.is_dir() else []
    specs = controller_specs(models, pick, available)
    if pick is not None and pick in METHODS and METHODS[pick].history:
        log(f"the comparison's pick {pick} reads the joint-state history, which no controller can run one state per "
            "tick: ctc_dob_pick is left out (the other controllers run)")
    (strong, weak), live, failures = _in_process_and_live(specs, seeds, duration, (1.0, weak_dob_fraction),
                                                           live_duration, out, workers, log, robot,
                                                           feedforward_velocity)
    (out / "plots").mkdir(parents=True, exist_ok=True)
    reversal_error_plot({"default DOB": strong, f"weak DOB (cutoff x{weak_dob_fraction:g})": weak},
                        out / "plots" / "closed_loop_reversals.png")
    tracking_plot(strong, out / "plots" / TRACKING_PLOT)
    sim, base = _default_configs(robot)
    settings = ClosedLoopSettings(
        seeds=[int(s) for s in seeds], duration_s=float(duration), weak_dob_fraction=float(weak_dob_fraction),
        live_seed=int(seeds[0]), live_duration_s=float(live_duration), pick=pick, pick_source=pick_source,
        live_failures=failures, missing=sorted(set(closed_loop_methods()) - set(available)),
        sim_profile=sim.profile, time_base=IN_PROCESS_TIME_BASE,
        tracking_error_limit=float(base.tracking_error_limit), robot=str(robot or ""),
        feedforward_velocity=feedforward_velocity)
    return ClosedLoopRun(strong, weak, live, settings)


def write_closed_loop(out: Path, res: ClosedLoopRun) -> str:
    """Write ``out``/closed_loop.json (:meth:`ClosedLoopRun.to_dict`, read back by :meth:`ClosedLoopRun.read`) and
    ``out``/closed_loop.md for ``res``; returns the markdown text.

    Raises:
        ValueError: a non-finite number left in the JSON document (NaN is written as null).
    """
    from .report import closed_loop_markdown

    (out / "closed_loop.json").write_text(json.dumps(res.to_dict(), indent=2, allow_nan=False) + "\n")
    text = "\n".join(closed_loop_markdown(res.summaries, res.summaries_weak, res.live, res.settings,
                                          "plots/closed_loop_reversals.png", f"plots/{TRACKING_PLOT}"))
    (out / "closed_loop.md").write_text(text + "\n")
    return text
