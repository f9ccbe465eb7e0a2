"""``deadzone-id simulate --duration S --seed N --out DIR [--storage mcap|sqlite3]``: offline simulated recording.

Runs the simulated arm under the seeded excitation with the tracking controller
(:func:`deadzone_id_ros.sim.offline.simulate`, no DDS, much faster than real time) and writes a rosbag2 with the
same topics and message types as a live recording (/joint_states, /effort_controller/commands, the reference
topic) plus episode.yaml. This is the bulk-data path for training and tests.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from ..data.bags import DEFAULT_REFERENCE_TOPIC, STORAGE_CHOICES, write_recording
from ..errors import ConfigError

__all__ = ["register", "run"]


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``simulate`` subcommand."""
    p = subparsers.add_parser(
        "simulate",
        help="simulate the arm under excitation and write a bag like a live recording",
        description=__doc__.split("\n\n")[1],
    )
    p.add_argument("--duration", type=float, required=True, metavar="S", help="simulated time [s]")
    p.add_argument("--seed", type=int, required=True, metavar="N", help="seed of excitation and simulator noise")
    p.add_argument("--out", required=True, metavar="DIR", help="bag directory to create (must not exist)")
    p.add_argument("--storage", default="mcap", choices=STORAGE_CHOICES, help="rosbag2 storage (default mcap)")
    p.add_argument("--rate", type=float, default=1000.0, metavar="HZ", help="control and /joint_states rate [Hz]")
    p.add_argument("--reference-topic", default=DEFAULT_REFERENCE_TOPIC, help="topic of the reference trajectory")
    p.add_argument("--start-time", type=float, default=None, metavar="EPOCH_S",
                   help="wall-clock time [s since epoch] of the first sample (default: now), as a live recording "
                   "would stamp it")
    p.add_argument("--sim-profile", default=None, metavar="NAME",
                   help="simulator profile: geared_desktop_arm (default of config/sim_arm.yaml) or ideal (rigid arm with "
                   "constant Coulomb friction, no delays); other physics keys come from --sim-config")
    p.add_argument("--sim-config", default=None, metavar="FILE",
                   help="sim_arm parameter file (default: the package's config/sim_arm.yaml)")
    p.add_argument("--notes", default="", help="free text for episode.yaml")
    p.add_argument("--no-progress", action="store_true", help="no progress bars")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Simulate, write the bag, print a summary; returns 0.

    Raises:
        ConfigError: duration/rate not positive, the rate not a whole number of physics steps, or a bad
            ``--sim-profile`` / ``--sim-config``.
    """
    from ..sim.config import load_sim_config
    from ..sim.offline import simulate

    if not args.duration > 0:
        raise ConfigError(f"--duration = {args.duration} must be > 0 s")
    start = time.time() if args.start_time is None else args.start_time
    t0 = time.perf_counter()
    try:
        overrides = {"profile": args.sim_profile} if args.sim_profile else None
        sim_config, _ = load_sim_config(args.sim_config, overrides)
        rec = simulate(args.duration, args.seed, sim_config, rate_hz=args.rate, progress=not args.no_progress)
    except ValueError as err:
        raise ConfigError(f"simulate: {err}") from err
    sim_s = time.perf_counter() - t0
    offset = int(round(start * 1e9)) - int(rec.state_t_ns[0])  # sim time 0 -> the start wall time
    rec.state_t_ns = np.asarray(rec.state_t_ns, dtype=np.int64) + offset
    if rec.command_t_ns is not None:
        rec.command_t_ns = np.asarray(rec.command_t_ns, dtype=np.int64) + offset
    if rec.reference_t_ns is not None:
        rec.reference_t_ns = np.asarray(rec.reference_t_ns, dtype=np.int64) + offset
    rec.metadata.setdefault("robot", "deadzone_id_ros simulated 3-DOF arm")
    if args.notes:
        rec.metadata["notes"] = args.notes
    out = write_recording(rec, args.out, storage=args.storage, reference_topic=args.reference_topic,
                          progress=not args.no_progress)
    n = len(rec.state_t_ns)
    print(f"wrote {out} ({args.storage}): {n} samples, {args.duration:g} s simulated in {sim_s:.1f} s "
          f"({args.duration / max(sim_s, 1e-9):.0f}x real time), joints {list(rec.joint_names)}")
    return 0
