"""``deadzone-id compare``: every method on the same split over several seeds; writes report.md/json and plots.

    deadzone-id compare --bag BAG [BAG ...] --out DIR [--seeds N] [--quick] [--methods M ...] [--urdf URDF]

Methods: masked (the dead-zone loss of Inami et al., arXiv 2402.00393), conventional, mse_all, rbd, hybrid. rbd and
hybrid need a URDF with the data's joints (the bundled arm is used when its joints match); without one they are
skipped and the report says why. On simulator data (``episode.yaml`` says so, or ``--simulator yes``) the report
adds the noise floor and the friction band.
"""

from __future__ import annotations

import argparse
import sys

__all__ = ["register", "run"]


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``compare`` subcommand."""
    from ..models.predictor import METHODS
    from .train import add_config_arguments, add_data_arguments

    p = subparsers.add_parser("compare", help="compare every method on bags and write a report",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_data_arguments(p)
    p.add_argument("--out", required=True, help="report directory (report.md, report.json, plots/, models/)")
    p.add_argument("--seeds", type=int, default=None, help="training seeds per method (overrides the config)")
    p.add_argument("--quick", action="store_true", help="short run: <= 600 steps, <= 2 seeds, 2 efficiency points")
    p.add_argument("--methods", nargs="+", choices=list(METHODS), default=None, help="subset of methods")
    p.add_argument("--simulator", choices=("auto", "yes", "no"), default="auto",
                   help="data from the simulated arm (noise floor); auto reads episode.yaml")
    add_config_arguments(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run the comparison. Returns 0."""
    from ..errors import ConfigError
    from ..training.compare import CompareInputs, quick_config, run_compare
    from ..training.sources import detect_simulator, fingerprint, resolve_urdf
    from .train import load_bags, train_config_from_args

    cfg = train_config_from_args(args)
    if args.quick:
        cfg = quick_config(cfg)
    if args.seeds is not None:
        try:
            cfg = cfg.with_overrides(seeds=args.seeds)
        except ValueError as err:
            raise ConfigError(f"command line: {err}") from err
    sources = fingerprint(args.bag)
    ds = load_bags(args)
    sim_cfg = None
    if args.simulator == "auto":
        simulated, sim_cfg, why = detect_simulator(args.bag)
    else:
        simulated, why = args.simulator == "yes", f"--simulator {args.simulator}"
        if simulated:
            _, sim_cfg, _ = detect_simulator(args.bag)
    print(f"simulator data: {'yes' if simulated else 'no'} ({why})", file=sys.stderr)
    urdf_xml, urdf_source = resolve_urdf(args.urdf, ds.joint_names, simulated=simulated)
    inputs = CompareInputs(ds.episodes, tuple(ds.joint_names), sources=sources, simulator=simulated,
                           sim_config=sim_cfg, urdf_xml=urdf_xml, urdf_source=urdf_source, dataset_report=ds.report)
    report = run_compare(inputs, args.out, cfg, methods=args.methods,
                         log=lambda m: print(m, file=sys.stderr))
    for m, e in report["methods"].items():
        print(f"{m:>13s}: mean test RMSE {e['rmse_mean']:.4f} ± {e['rmse_mean_std']:.4f} N*m, "
              f"usable {e['usable_fraction']:.1%}")
    print(f"report: {args.out}/report.md")
    return 0
