"""``deadzone-id simulate --duration S --seed N --out DIR [--storage mcap|sqlite3]``: offline simulated recording.

Runs the simulated arm under the seeded excitation with the tracking controller
(:func:`deadzone_id_ros.sim.offline.simulate`, no DDS, much faster than real time) and writes a rosbag2 with the
same topics and message types as a live recording (/joint_states, /effort_controller/commands, the reference
topic) plus episode.yaml. This is the bulk-data path for training and tests.
"""

from __future__ import annotations

import argparse

from ..data.bag import DEFAULT_REFERENCE_TOPIC, STORAGE_CHOICES
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
    p.add_argument("--rate", type=float, default=None, metavar="HZ",
                   help="control and /joint_states rate [Hz] (default: the robot profile's control_rate, 1000 Hz for "
                   "the bundled arm)")
    p.add_argument("--reference-topic", default=DEFAULT_REFERENCE_TOPIC, help="topic of the reference trajectory")
    p.add_argument("--start-time", type=float, default=None, metavar="EPOCH_S",
                   help="wall-clock time [s since epoch] of the first sample (default: now), as a live recording "
                   "would stamp it")
    p.add_argument(
        "--sim-profile",
        default=None,
        metavar="NAME",
        help="simulator profile: geared_desktop_arm (default of config/sim_arm.yaml) or ideal (rigid arm with "
        "constant Coulomb friction, no delays); other physics keys come from --sim-config",
    )
    p.add_argument("--sim-config", default=None, metavar="FILE",
                   help="sim_arm parameter file (default: the package's config/sim_arm.yaml); with --robot, its keys "
                   "override the profile's")
    p.add_argument("--robot", default=None, metavar="NAME|FILE",
                   help="robot profile (`deadzone-id robot show`): the simulated arm, its controller and its "
                   "excitation (default: the bundled arm)")
    p.add_argument("--notes", default="", help="free text for episode.yaml")
    p.add_argument("--no-progress", action="store_true", help="no progress bars")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Simulate, write the bag, print a summary; returns 0.

    Raises:
        ConfigError: duration/rate not positive, the rate not a whole number of physics steps, or a bad
            ``--sim-profile`` / ``--sim-config``.
    """
    from ..sim.record import simulate_bag
    from ..sim.sim_arm_params import load_sim_config

    if not args.duration > 0:
        raise ConfigError(f"--duration = {args.duration} must be > 0 s")
    try:
        overrides = {"profile": args.sim_profile} if args.sim_profile else None
        configs: dict = {}
        if args.robot:
            configs = _robot_configs(args.robot, args.sim_config, overrides or {})
            sim_config = configs.pop("sim_config")
        else:
            sim_config, _ = load_sim_config(args.sim_config, overrides)
        result = simulate_bag(args.duration, args.seed, args.out, storage=args.storage, rate_hz=args.rate,
                              start_time=args.start_time, notes=args.notes, progress=not args.no_progress,
                              sim_config=sim_config, reference_topic=args.reference_topic, **configs)
    except ValueError as err:
        raise ConfigError(f"simulate: {err}") from err
    rec, sim_s = result.recording, result.sim_seconds
    print(f"wrote {result.path} ({args.storage}): {len(rec.state_t_ns)} samples, {args.duration:g} s simulated in "
          f"{sim_s:.1f} s ({args.duration / max(sim_s, 1e-9):.0f}x real time), joints {list(rec.joint_names)}")
    return 0


def _robot_configs(spec: str, sim_file: str | None, overrides: dict) -> dict:
    """sim_config, controller_config, excitation_config and robot name of the profile ``spec``; the keys of
    ``sim_file`` (a sim_arm parameter file) and ``overrides`` override the profile's simulator values.

    Raises:
        ConfigError: an unknown key or a bad value in ``sim_file``.
    """
    import dataclasses

    from ..config import NODE_ONLY_PARAMETERS, dataclass_from_dict, load_ros_parameters
    from ..robot_configs import simulation_configs
    from ..sim.config import SimArmConfig
    from ..sim.sim_arm_params import SimArmNodeConfig

    configs = simulation_configs(spec)
    if sim_file or overrides:
        node_keys = {f.name for f in dataclasses.fields(SimArmNodeConfig)}
        given = {k: v for k, v in (load_ros_parameters(sim_file, "sim_arm") if sim_file else {}).items()
                 if k not in node_keys}
        configs["sim_config"] = dataclass_from_dict(
            SimArmConfig, {**dataclasses.asdict(configs["sim_config"]), **given, **overrides},
            str(sim_file or "--sim-profile"), ignore=NODE_ONLY_PARAMETERS)
    return configs
