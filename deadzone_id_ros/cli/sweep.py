"""``deadzone-id sweep``: a grid of comparisons over data sets x dead-zone alpha x data fractions, from a YAML file.

    deadzone-id sweep SWEEP.yaml --out DIR [--engine ray [--address ADDR] [--num-cpus N]]

Each cell (a data set x an alpha x a data fraction) is one ``compare`` of its methods x seeds, trained batched; its
report lands in DIR/cells/<cell>/, the table of every cell in DIR/report.md, report.json and plots/rmse_vs_alpha.png.
A cell that fails is reported and the others go on; running the sweep into the same DIR again skips the cells that
finished with the same settings (training configuration, methods, data set) and runs the rest. ``--engine ray`` runs
one Ray task per bag file to load the data and one per cell, on a fresh local cluster or on ``--address``
(docs/cluster.md). The file's keys:
:mod:`deadzone_id_ros.experiments.sweep_config`.
"""

from __future__ import annotations

import argparse
import sys

__all__ = ["register", "run"]


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``sweep`` subcommand."""
    from ._args import add_engine_arguments

    p = subparsers.add_parser("sweep", help="a grid of comparisons (data sets x alpha x data fractions) from YAML",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("sweep", metavar="SWEEP.yaml", help="the grid: data, alpha, fractions, seeds, methods, train")
    p.add_argument("--out", required=True, metavar="DIR",
                   help="the sweep's folder: new, or an earlier run of this sweep, whose finished cells are kept")
    add_engine_arguments(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run the sweep; returns 0 when every cell finished, 1 when some failed (the table says which)."""
    from ..experiments.engine import require_ray
    from ..experiments.sweep import run_sweep
    from ..experiments.sweep_config import load_sweep
    from ..outputs import output_lock

    sweep = load_sweep(args.sweep)
    if args.engine == "ray":
        require_ray()  # say what to install before loading anything
    with output_lock(args.out):  # one run at a time writes DIR
        report = run_sweep(sweep, args.out, engine=args.engine, address=args.address, num_cpus=args.num_cpus,
                           log=lambda m: print(m, file=sys.stderr))
    for key in report.failed:
        print(f"failed: {key} (see {args.out}/cells/{key}/error.txt)")
    print(f"report: {args.out}/report.md ({len(report.cells)} cells, {len(report.ran)} run, "
          f"{len(report.skipped)} skipped as finished, {len(report.failed)} failed)")
    return 1 if report.failed else 0
