"""``deadzone-id demo`` and ``deadzone-id demo-real``: the main job end to end (see deadzone_id_ros.demo)."""

from __future__ import annotations

import argparse
from pathlib import Path

__all__ = ["register", "run", "run_real"]


def _default_real_dir() -> Path:
    """../shared/data/real next to the source checkout or the current directory, whichever exists."""
    here = Path(__file__).resolve().parents[2]
    for base in (Path.cwd(), here):
        candidate = base.parent / "shared" / "data" / "real"
        if candidate.is_dir():
            return candidate
    return Path.cwd().parent / "shared" / "data" / "real"


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``demo`` and ``demo-real`` subcommands."""
    p = subparsers.add_parser(
        "demo", help="the main job end to end on the simulated arm (data, live ROS 2 run, compare, closed loop)",
        description="Simulate data, record a live ROS 2 run on the simulated arm, train and compare every method, "
        "run the controllers in closed loop on a held-out reference, and write DIR/report.md. About 10 minutes on "
        "2 cores (--quick: about 2).")
    p.add_argument("--out", type=Path, default=Path("out/demo"), help="output directory (replaced if it exists)")
    p.add_argument("--quick", action="store_true", help="smaller data and shorter training (about 2 minutes)")
    p.set_defaults(func=run)
    r = subparsers.add_parser(
        "demo-real", help="compare every method on the real recordings (KUKA LWR4+ bag, DFKI double pendulum CSVs)",
        description="Convert the DFKI CSVs, run compare on them and on the KUKA LWR4+ bag, write DIR/report.md.")
    r.add_argument("--out", type=Path, default=Path("out/real"), help="output directory (replaced if it exists)")
    r.add_argument("--real-dir", type=Path, default=None,
                   help="folder with kuka_lwr4_fri.bag and dfki_double_pendulum/ (default: ../shared/data/real)")
    r.add_argument("--quick", action="store_true", help="shorter training")
    r.set_defaults(func=run_real)


def run(args: argparse.Namespace) -> int:
    """Run the demo; returns 0 (errors propagate as DeadzoneIdError, printed by the CLI)."""
    from ..demo import DemoConfig, run_demo

    run_demo(args.out, DemoConfig.quick_run() if args.quick else DemoConfig())
    return 0


def run_real(args: argparse.Namespace) -> int:
    """Run demo-real; returns 0."""
    from ..demo import run_demo_real

    run_demo_real(args.out, args.real_dir or _default_real_dir(), quick=args.quick)
    return 0
