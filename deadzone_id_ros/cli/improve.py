"""``deadzone-id improve``: the controller learns its feedforward from its own runs, starting from the URDF's nominal
rigid body, with no excitation experiment.

Iteration 0 runs ctc_dob with the nominal rigid body on the task references (--task-seeds) in-process (--live: over
DDS in lockstep by the nodes, the recorder node's bags) and records each run as a rosbag2 bag (OUT/runs); each
further iteration trains every candidate method on everything recorded so far (warm start from the previous
iteration's networks), picks the method by validation error as `compare` does, checks the new model (finite torque on
the recorded states, within the effort limits, validation error not above the running model's, a trial run on a check
reference no iteration trains on, without fault and at most 5% worse than the running model's), runs the task
references again with the model it accepted, and records. Every iteration is scored on held-out references no
iteration runs (--seeds): tracking RMSE per joint, at velocity reversals, and the DOB's mean absolute estimate. The
label is the applied torque (see the experiment's docstring for why). Writes OUT/report.json (`improve.iterations`),
OUT/report.md and OUT/plots/improve_iterations.png (the experiment: :mod:`deadzone_id_ros.experiments.improve.run`).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ..experiments.improve.results import DEFAULT_HELD_OUT_SEEDS, DEFAULT_TASK_SEEDS
from ._check import add_check_argument, robot_check_first

__all__ = ["register", "run"]


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``improve`` subcommand."""
    p = subparsers.add_parser("improve", help="learn the feedforward from the controller's own runs",
                              description=__doc__.split("\n\n")[1])
    p.add_argument("--out", type=Path, required=True, metavar="DIR", help="output folder (bags, models, report)")
    p.add_argument("--robot", default=None, metavar="NAME|FILE",
                   help="robot profile (`deadzone-id robot show`) of the simulated arm and the controller "
                   "(default: the bundled arm)")
    p.add_argument("--iterations", type=int, default=3, metavar="N",
                   help="trainings after iteration 0 (default 3)")
    p.add_argument("--seeds", type=int, nargs="+", default=list(DEFAULT_HELD_OUT_SEEDS), metavar="N",
                   help="held-out reference seeds, never run for training (default 999 1000 1001)")
    p.add_argument("--task-seeds", type=int, nargs="+", default=list(DEFAULT_TASK_SEEDS), metavar="N",
                   help="task reference seeds, run and recorded every iteration (default 11 12 13 14)")
    p.add_argument("--check-seed", type=int, default=21, metavar="N",
                   help="seed of the check reference a new model's trial run tracks before it is accepted (default 21)")
    p.add_argument("--duration", type=float, default=10.0, metavar="S", help="seconds per task run (default 10)")
    p.add_argument("--held-out-duration", type=float, default=6.0, metavar="S",
                   help="seconds per held-out run (default 6, as the closed-loop comparison)")
    p.add_argument("--dob-cutoff-scale", type=float, default=1.0, metavar="F",
                   help="factor on the DOB cutoff of every run (default 1; 0.2: the closed-loop comparison's weak DOB)")
    p.add_argument("--methods", nargs="+", default=None, metavar="M",
                   help="candidate methods of each training (default: every method `compare` trains)")
    p.add_argument("--no-warm-start", action="store_true", help="train every iteration's networks from scratch")
    p.add_argument("--compare-model", default=None, metavar="DIR",
                   help="a model artifact to score beside the iterations, e.g. the dedicated-excitation pick "
                   "(`deadzone-id compare` OUT/pick)")
    p.add_argument("--live", action="store_true",
                   help="record every task run over DDS in lockstep by the nodes (sim_arm, excitation, "
                   "feedforward_controller, recorder; a fresh launch per run with the iteration's model); trial runs "
                   "and held-out scoring stay in-process")
    p.add_argument("--config", default=None, help="training parameters file (default: config/training.yaml)")
    p.add_argument("--max-steps", type=int, default=None, help="gradient steps at most per network (overrides)")
    p.add_argument("--workers", type=int, default=2, help="processes for the runs of an iteration (default 2)")
    add_check_argument(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run the loop, write report.json, report.md and the plot, print the report; returns 0.

    Raises:
        FileNotFoundError: --compare-model or --config does not exist.
        ConfigError: --out exists and is not empty; a bad value of --iterations, --seeds, --task-seeds, the
            durations, --dob-cutoff-scale, --methods, --max-steps or --workers.
    """
    from ..errors import ConfigError

    out = Path(args.out)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):  # before iteration 0 runs, not after
        raise ConfigError(f"--out {out} exists and is not empty: improve writes its runs and models into a new "
                          "folder; choose another --out or remove that one")
    if args.compare_model and not (Path(args.compare_model) / "model.json").is_file():  # before the heavy imports
        raise FileNotFoundError(f"model artifact {args.compare_model} does not exist (no model.json)")
    from ..experiments.improve.report import write_improve
    from ..experiments.improve.results import ImproveSettings
    from ..experiments.improve.run import run_improve
    from ..training.config import load_train_config

    try:
        settings = ImproveSettings(
            iterations=args.iterations, task_seeds=tuple(args.task_seeds), task_duration_s=args.duration,
            held_out_seeds=tuple(args.seeds), held_out_duration_s=args.held_out_duration, check_seed=args.check_seed,
            dob_cutoff_scale=args.dob_cutoff_scale, methods=tuple(args.methods or ()),
            warm_start=not args.no_warm_start, robot=args.robot,
            compare_model=str(args.compare_model) if args.compare_model else None, live=args.live)
        config = load_train_config(args.config).with_overrides(max_steps=args.max_steps)
        if args.workers < 1:
            raise ValueError(f"--workers = {args.workers} must be >= 1")
    except ValueError as err:
        raise ConfigError(f"command line: {err}") from err
    robot_check_first(args.robot, args.no_check)
    res = run_improve(args.out, settings, config, workers=args.workers)
    print(write_improve(args.out, res))
    return 0
