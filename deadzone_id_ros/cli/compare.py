"""``deadzone-id compare``: every method on the same split over several seeds; writes report.md/json and plots.

    deadzone-id compare --bag BAG [BAG ...] --out DIR [--seeds N] [--quick] [--methods M ...] [--urdf URDF]
                        [--engine ray [--address ADDR] [--num-cpus N]]

Methods: every registered method that runs by default (--methods lists them all, the opt-in ones too); masked is
the dead-zone loss of Inami et al., arXiv 2402.00393. Those with a rigid body (rbd, hybrid, ...) need a URDF with the
data's joints (the bundled arm is used when its joints match); without one they are skipped and the report says why.
On simulator data (``episode.yaml`` says so, or ``--simulator yes``) the report adds the noise floor and the friction
band. ``--engine ray`` loads the bags as Ray tasks (one per bag, each logging its cleaning report) and runs the
comparison as one Ray task, on one cluster (a fresh local one, or ``--address`` of a running one) with the same
metrics as in-process. With ``--robot`` on simulator data, the robot check
(``deadzone-id robot check``) runs first and stops a profile whose simulated arm is not trustworthy (``--no-check``
skips it).
"""

from __future__ import annotations

import argparse
import sys

__all__ = ["register", "run"]


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``compare`` subcommand."""
    from ..models.methods import DEFAULT_METHODS
    from ..models.predictor import METHODS
    from ._args import add_config_arguments, add_data_arguments, add_engine_arguments
    from ._check import add_check_argument

    p = subparsers.add_parser("compare", help="compare every method on bags and write a report",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_data_arguments(p)
    p.add_argument("--out", required=True, help="report directory (report.md, report.json, plots/, models/): new, "
                   "empty, or an earlier `compare` output, which is replaced")
    p.add_argument("--force", action="store_true", help="replace --out even if it is not an earlier `compare` output")
    p.add_argument("--seeds", type=int, default=None, help="training seeds per method (overrides the config)")
    p.add_argument("--quick", action="store_true", help="short run: <= 600 steps, <= 2 seeds, 2 efficiency points")
    default = [m for m, e in METHODS.items() if e.by_default]
    p.add_argument("--methods", nargs="+", choices=[DEFAULT_METHODS, *METHODS], default=None, metavar="METHOD",
                   help=f"methods to run (default: {' '.join(default)}; opt-in: "
                   f"{' '.join(m for m in METHODS if m not in default)}; '{DEFAULT_METHODS}' stands for the default "
                   f"set, e.g. --methods {DEFAULT_METHODS} hybrid_history)")
    p.add_argument("--simulator", choices=("auto", "yes", "no"), default="auto",
                   help="data from the simulated arm (noise floor); auto reads episode.yaml")
    add_config_arguments(p)
    add_engine_arguments(p)
    add_check_argument(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run the comparison. Returns 0."""
    from ..data.effort_units import unit_label
    from ..engine import engine_session, require_ray
    from ..experiments.compare.cell import run_compare_on
    from ..experiments.compare.run import compare_config
    from ..outputs import check_output_dir, output_dir
    from ..training.blocks import MISSING, fmt_values
    from ._args import command_line_error, train_config_from_args, training_inputs
    from ._check import robot_check_first

    try:
        cfg = compare_config(train_config_from_args(args), quick=args.quick, seeds=args.seeds)
    except ValueError as err:
        raise command_line_error(err) from err
    check_output_dir(args.out, "compare", force=args.force)  # refuse before loading anything
    if args.engine == "ray":
        require_ray()  # say what to install before loading anything
    # with --engine ray: one cluster for the bags' tasks (training_inputs) and the comparison's task
    with engine_session(args.engine, args.address, args.num_cpus, log=lambda m: print(m, file=sys.stderr)):
        inputs = training_inputs(args, simulator=args.simulator)
        if inputs.simulator:  # bags of the simulated arm: is that arm trustworthy?
            robot_check_first(args.robot, args.no_check)
        with output_dir(args.out, "compare", force=args.force) as out:
            # the work goes to a temporary sibling renamed at the end: the log names the final folder
            report = run_compare_on(args.engine, inputs, out, cfg, methods=args.methods,
                                    log=lambda m: print(m.replace(str(out), str(args.out)), file=sys.stderr))
    for m, e in report.methods.items():
        print(f"{m:>13s}: mean test RMSE {fmt_values([e.rmse_mean])} ± {fmt_values([e.rmse_mean_std])} "
              f"{unit_label(inputs.effort_units)}, "
              f"usable {e.usable_fraction:.1%}; per joint {fmt_values(e.rmse_per_joint)}")
    for joint, why in report.data.split.missing.items():
        print(f"{joint}: {MISSING} ({why})")
    print(f"report: {args.out}/report.md")
    return 0
