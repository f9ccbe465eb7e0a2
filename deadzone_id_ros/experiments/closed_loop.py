"""The closed-loop comparison (``deadzone-id closed-loop --compare DIR``): every controller in closed loop on held-out
references.

Runs pd_dob, ctc_dob with the URDF's nominal rigid body, and ctc_dob with the comparison's identified rigid body,
masked, conventional and picked models, each on several held-out excitation seeds in-process (the controller and
simulator code of the nodes, no DDS, faster than real time), with the default DOB and with a weak DOB (cutoff a
fraction of the default, where the feedforward has to carry the load). Optionally one live run per controller
over DDS (sim_feedforward.launch.yaml in lockstep) on the first seed, beside the in-process run of the same seed
and duration: the check that the nodes behave like the in-process loop. Writes OUT/closed_loop.json,
OUT/closed_loop.md and OUT/plots/closed_loop_reversals.png.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path
from typing import TYPE_CHECKING, Any

__all__ = ["DEFAULT_SEEDS", "TRACKING_PLOT", "WEAK_DOB_FRACTION", "live_closed_loop", "read_pick", "run_closed_loop",
           "run_in_process", "write_closed_loop"]

from .closed_loop_results import (
    IN_PROCESS_TIME_BASE,
    ClosedLoopResult,
    ClosedLoopRun,
    ClosedLoopSettings,
    ClosedLoopSummary,
)

if TYPE_CHECKING:
    from .closed_loop_sim import ControllerSpec

DEFAULT_SEEDS = (999, 1000, 1001)  # held out: the demo trains on seeds 1..5 and 100
WEAK_DOB_FRACTION = 0.2
#: The tracking plot's file under the output's plots/ (q and q_d over time per joint, and the error).
TRACKING_PLOT = "closed_loop_tracking.png"


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def read_pick(compare_dir: Path) -> tuple[str | None, str]:
    """The comparison's pick (a method with an artifact in ``compare_dir``/models) and where it came from.

    The report's :attr:`~.compare_results.CompareReport.pick` when it has one; otherwise its
    :meth:`~.compare_results.CompareReport.best_learned` (lowest mean test RMSE among the learned methods).

    Raises:
        FileNotFoundError: ``compare_dir``/report.json is missing.
        DataError: report.json is not a comparison's report (names the missing or unknown key).
    """
    from ..errors import DataError
    from .compare_results import Pick, best_learned

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


def _default_configs(robot: str | None = None) -> tuple[Any, Any]:
    """(SimArmConfig, ControllerConfig): of the robot profile ``robot`` (name or file), else the bundled
    config/sim_arm.yaml and the default ControllerConfig for its joints."""
    from ..robot_configs import controller_config, load_robot, robot_for, sim_config
    from ..sim.sim_arm_params import load_sim_config

    if robot:
        derived = load_robot(robot)
        return sim_config(derived), controller_config(derived)
    sim, _ = load_sim_config(None)
    return sim, controller_config(robot_for(sim.urdf_path, sim.joint_names, sim.initial_position))


def _one(args: tuple) -> ClosedLoopSummary:
    from .closed_loop_sim import run_controller

    return run_controller(*args)


def run_in_process(specs: Sequence[ControllerSpec], seeds: Sequence[int], duration: float,
                   dob_fractions: Sequence[float], workers: int = 2,
                   log: Callable[[str], None] = _log, robot: str | None = None) -> list[dict[str, ClosedLoopSummary]]:
    """Each controller on each seed, once per DOB fraction, over ``workers`` processes (1: in this process).

    Uses the robot profile ``robot`` (name or file) when given, else the bundled config/sim_arm.yaml (the live
    sim_arm's physics) and the default ControllerConfig.

    Returns:
        one {name: summary} per entry of ``dob_fractions``, in spec order.
    """
    sim, base = _default_configs(robot)
    jobs = [(spec, tuple(seeds), float(duration), sim, base, float(f)) for f in dob_fractions for spec in specs]
    if workers > 1:
        with ProcessPoolExecutor(max_workers=workers, mp_context=get_context("spawn")) as pool:
            results = list(pool.map(_one, jobs))
    else:
        results = [_one(j) for j in jobs]
    out: list[dict[str, ClosedLoopSummary]] = []
    for k, f in enumerate(dob_fractions):
        chunk = results[k * len(specs):(k + 1) * len(specs)]
        log(f"DOB cutoff x{f:g}:")
        for s in chunk:
            log(f"  {s.label:34s} tracking RMSE {s.tracking_rmse_mean * 1e3:8.3f} ± {s.tracking_rmse_std * 1e3:.3f} "
                f"mrad, at reversals {s.reversal_rmse_mean * 1e3:8.3f} mrad ({len(seeds)} seeds)")
        out.append({s.name: s for s in chunk})
    return out


def live_closed_loop(specs: Sequence[ControllerSpec], seed: int, duration: float, out: Path,
                     log: Callable[[str], None] = _log) -> tuple[dict[str, ClosedLoopResult], dict[str, str]]:
    """One live run per controller over DDS (lockstep), beside the in-process run of the same seed and duration.

    Returns:
        (name -> result, name -> why the live run failed): a live run that fails twice (a node died, lockstep
        stalls under load; logs under ``out``/logs) is reported, not fatal, since the in-process runs measure.
    """
    from ..errors import DeadzoneIdError
    from ..launching.live import closed_loop_metrics, live_run
    from .closed_loop_sim import run_controller

    sim, base = _default_configs()
    (out / "logs").mkdir(parents=True, exist_ok=True)
    results: dict[str, ClosedLoopResult] = {}
    failures: dict[str, str] = {}
    for spec in specs:
        args = {"mode": spec.mode, "model": spec.model, "seed": str(seed)}
        if spec.model_path:
            args["model_path"] = spec.model_path
        try:
            bag = live_run(out / "closed_loop" / spec.name, args, duration,
                           out / "logs" / f"closed_loop_{spec.name}.log")
        except DeadzoneIdError as err:
            failures[spec.name] = str(err)
            log(f"  {spec.label:34s} live run FAILED: {err}")
            continue
        inproc = run_controller(spec, [seed], duration, sim, base)
        r = ClosedLoopResult(mode=spec.mode, model=spec.model, artifact=spec.model_path or None, bag=str(bag),
                             metrics=closed_loop_metrics(bag), inprocess_tracking_rmse_mean=inproc.tracking_rmse_mean)
        results[spec.name] = r
        m = r.metrics
        log(f"  {spec.label:34s} live {m.tracking_rmse_mean * 1e3:7.3f} mrad, in-process "
            f"{inproc.tracking_rmse_mean * 1e3:7.3f} mrad (time base {m.time_base}; zero-stamp states: "
            f"{m.zero_stamp_states_dropped} not recorded, {m.zero_stamp_states} in the bag)")
    return results, failures


def run_closed_loop(compare_dir: Path, out: Path, seeds: Sequence[int] = DEFAULT_SEEDS, duration: float = 8.0,
                    weak_dob_fraction: float = WEAK_DOB_FRACTION, live_duration: float = 0.0, workers: int = 2,
                    log: Callable[[str], None] = _log, robot: str | None = None) -> ClosedLoopRun:
    """The closed-loop comparison for the models of ``compare_dir``; plots go to ``out``/plots.

    Args:
        compare_dir: a ``deadzone-id compare`` output (report.json, models/).  seeds: held-out excitation seeds
        (>= 1).  duration: per seed [s].  weak_dob_fraction: the weak DOB's cutoff as a fraction of the default,
        in (0, 1).  live_duration: live run length [s] per controller; 0 skips the live runs.  workers: processes.
        robot: a robot profile (name or file) for the in-process runs; None: the bundled arm.

    Raises:
        ValueError: no seeds, weak_dob_fraction outside (0, 1), or live runs asked for with ``robot`` (the launch
            files take the bundled arm only).  FileNotFoundError: no report.json.  DataError:
            report.json is not a comparison's report.
    """
    from .closed_loop_sim import controller_specs
    from .plots import reversal_error_plot, tracking_plot

    if not seeds:
        raise ValueError("closed loop needs at least one seed")
    if not 0 < weak_dob_fraction < 1:
        raise ValueError(f"weak DOB fraction = {weak_dob_fraction} must be in (0, 1)")
    if robot and live_duration > 0:
        raise ValueError("live closed-loop runs take the bundled arm only (--robot works in process; drop "
                         "--live-duration)")
    pick, pick_source = read_pick(compare_dir)
    models = Path(compare_dir) / "models"
    available = [p.name for p in models.iterdir() if p.is_dir()] if models.is_dir() else []
    specs = controller_specs(models, pick, available)
    strong, weak = run_in_process(specs, seeds, duration, (1.0, weak_dob_fraction), workers, log, robot)
    (out / "plots").mkdir(parents=True, exist_ok=True)
    reversal_error_plot({"default DOB": strong, f"weak DOB (cutoff x{weak_dob_fraction:g})": weak},
                        out / "plots" / "closed_loop_reversals.png")
    tracking_plot(strong, out / "plots" / TRACKING_PLOT)
    live: dict[str, ClosedLoopResult] = {}
    failures: dict[str, str] = {}
    if live_duration > 0:
        log(f"live runs over DDS (lockstep), seed {seeds[0]}, {live_duration:g} s each:")
        live, failures = live_closed_loop(specs, seeds[0], live_duration, out, log)
    settings = ClosedLoopSettings(
        seeds=[int(s) for s in seeds], duration_s=float(duration), weak_dob_fraction=float(weak_dob_fraction),
        live_seed=int(seeds[0]), live_duration_s=float(live_duration), pick=pick, pick_source=pick_source,
        live_failures=failures, missing=sorted(set(("rbd", "masked", "conventional")) - set(available)),
        sim_profile=_default_configs(robot)[0].profile, time_base=IN_PROCESS_TIME_BASE,
        tracking_error_limit=float(_default_configs(robot)[1].tracking_error_limit))
    return ClosedLoopRun(strong, weak, live, settings)


def write_closed_loop(out: Path, res: ClosedLoopRun) -> str:
    """Write ``out``/closed_loop.json (:meth:`ClosedLoopRun.to_dict`, read back by :meth:`ClosedLoopRun.read`) and
    ``out``/closed_loop.md for ``res``; returns the markdown text.

    Raises:
        ValueError: a non-finite number left in the JSON document (NaN is written as null).
    """
    from .closed_loop_report import closed_loop_markdown

    (out / "closed_loop.json").write_text(json.dumps(res.to_dict(), indent=2, allow_nan=False) + "\n")
    text = "\n".join(closed_loop_markdown(res.summaries, res.summaries_weak, res.live, res.settings,
                                          "plots/closed_loop_reversals.png", f"plots/{TRACKING_PLOT}"))
    (out / "closed_loop.md").write_text(text + "\n")
    return text
