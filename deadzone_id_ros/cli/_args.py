"""Argument and data-loading helpers shared by the ``train``, ``evaluate``, ``compare`` and ``inspect`` commands, and
the parser of the in-process simulated experiments (``sense``, ``teleop``)."""

from __future__ import annotations

import argparse
import dataclasses
import os
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..data.dataset import Dataset, DatasetConfig
    from ..data.deadzone import DeadZoneConfig
    from ..errors import ConfigError
    from ..training.config import TrainConfig
    from ..training.pipeline import TrainingInputs

__all__ = ["FLAGS", "add_config_arguments", "add_data_arguments", "add_dead_zone_arguments", "add_engine_arguments",
           "add_loader_arguments",
           "add_robot_arguments", "add_simulation_parser", "check_bags",
           "command_line_error", "dataset_config_from_args", "dead_zone_from_args", "effort_options", "load_bags",
           "robot_options", "train_config_from_args", "training_inputs"]

# Configuration field -> the command-line flag that sets it (hints name what the user typed, not internal names).
FLAGS: dict[str, str] = {
    "dead_zone.alpha": "--alpha", "dead_zone.absolute_thresholds": "--thresholds",
    "absolute_thresholds": "--thresholds",
    "block_seconds": "--block-seconds", "max_steps": "--max-steps", "num_threads": "--threads", "workers": "--workers",
    "seeds": "--seeds",
    "seed": "--seed", "joints": "--joints", "topic": "--topic", "max_gap_s": "--max-gap",
    "effort_unit": "--effort-unit", "torque_constants": "--torque-constant", "velocity": "--velocity",
    "time_source": "--time-source", "savgol_window_s": "--savgol-window", "effort_sign_bit": "--effort-sign-bit",
}
_FIELD_RE = re.compile(r"\b(?:(?:DatasetConfig|TrainConfig|DeadZoneConfig)\.)?(" +
                       "|".join(re.escape(k) for k in sorted(FLAGS, key=len, reverse=True)) + r")\b(?= = )")


def command_line_error(err: Exception) -> ConfigError:
    """A ConfigError for a bad command-line value, its message naming the flags (``--block-seconds``), not the
    configuration fields behind them (``TrainConfig.block_seconds``)."""
    from ..errors import ConfigError

    return ConfigError("command line: " + _FIELD_RE.sub(lambda m: FLAGS[m.group(1)], str(err)))


def add_data_arguments(p: argparse.ArgumentParser, *, bag_required: bool = True) -> None:
    """--bag: which bags to read; then the loader's flags (:func:`add_loader_arguments`)."""
    p.add_argument("--bag", nargs="+", required=bag_required, metavar="BAG",
                   help="ROS 1 .bag files or rosbag2 directories (sqlite3/MCAP); all must have the same joints")
    add_loader_arguments(p)


def add_engine_arguments(p: argparse.ArgumentParser) -> None:
    """--engine, --address, --num-cpus: where the coarse cells run (:mod:`~deadzone_id_ros.engine`)."""
    p.add_argument("--engine", choices=("local", "ray"), default="local",
                   help="local: in this process (default); ray: one Ray task per cell (needs `make install-ray`)")
    p.add_argument("--address", default=None, metavar="ADDR",
                   help="with --engine ray: local (a fresh local cluster), auto, or a head node's HOST:PORT "
                   "(default: $RAY_ADDRESS, else local)")
    p.add_argument("--num-cpus", type=int, default=None, metavar="N",
                   help="with --engine ray and a local cluster: its CPUs (default: the CPUs this process may use)")


def add_loader_arguments(p: argparse.ArgumentParser) -> None:
    """--topic, --joints: which JointState topic/joints to read; --savgol-window, --velocity, --time-source: how dq,
    ddq and time are taken; --torque-constant, --effort-unit: the unit of the effort. The same flags for every
    command that reads bags (train, evaluate, compare, inspect), so each judges a bag as training will."""
    p.add_argument("--topic", default=None, help="JointState topic (default: the only usable one)")
    p.add_argument("--joints", nargs="+", default=None, metavar="JOINT", help="joints to use, in this order")
    p.add_argument("--rename-joint", nargs="+", default=None, metavar="BAG_NAME:NAME",
                   help="bag-side joint map: read joint BAG_NAME as NAME in every message (joins the runs of a "
                   "recording whose joint names changed part-way, e.g. a driver relaunched with a prefix)")
    p.add_argument("--savgol-window", type=float, default=None, metavar="SECONDS",
                   help="Savitzky–Golay window of ddq (and dq when differentiated) [s] (default 0.05; slow or "
                   "low-rate recordings want more, e.g. 0.1 at 100 Hz); evaluate a model with the window it was "
                   "trained with")
    p.add_argument("--velocity", choices=("auto", "message", "differentiate"), default=None,
                   help="dq from the message's velocity field or the derivative of q (default auto: the field when it "
                   "agrees with dq from q, else the derivative)")
    p.add_argument("--time-source", choices=("auto", "header", "log"), default=None,
                   help="time of each sample: header stamps or log (receive) time (default auto: header stamps, log "
                   "time when they are zero)")
    p.add_argument("--torque-constant", nargs="+", default=None, metavar="JOINT:K",
                   help="convert a joint's recorded effort to N·m: K in N·m per unit of the effort (e.g. motor "
                   "current: wrist:0.0018 for N·m per mA); the unit goes into the report and the model")
    p.add_argument("--effort-unit", default=None, metavar="UNIT",
                   help="the unit of the recorded effort of joints without --torque-constant (e.g. N*m, mA; default: "
                   "guessed from the bag, N*m unless it looks like motor current); the controller only runs N*m "
                   "models")
    p.add_argument("--effort-sign-bit", nargs="+", default=None, metavar="JOINT:BIT",
                   help="decode a joint's effort recorded as a sign-and-magnitude register with the sign in bit BIT "
                   "(Feetech's raw Present_Load: JOINT:10, values 0..2047 where 1024 + m means -m)")


def effort_options(args: argparse.Namespace) -> tuple[dict[str, float], str | None]:
    """(torque constants {joint: k [N·m per unit]}, effort unit or None) of ``--torque-constant`` /
    ``--effort-unit``.

    Raises:
        ConfigError: a malformed ``--torque-constant`` item, naming it.
    """
    from ..data.effort_units import parse_torque_constants
    from ..errors import ConfigError

    try:
        constants = parse_torque_constants(getattr(args, "torque_constant", None))
    except ValueError as err:
        raise ConfigError(f"command line: {err}") from err
    return constants, getattr(args, "effort_unit", None)


def add_dead_zone_arguments(p: argparse.ArgumentParser) -> None:
    """--alpha or --thresholds (mutually exclusive): the dead-zone setting, overriding the config's dead_zone."""
    g = p.add_mutually_exclusive_group()
    g.add_argument("--alpha", type=float, default=None,
                   help="dead-zone threshold in velocity stds (overrides dead_zone; default from the config: 0.1)")
    g.add_argument("--thresholds", type=float, nargs="+", default=None, metavar="RAD_PER_S",
                   help="per-joint dead-zone thresholds [rad/s] instead of alpha, one per joint in the data's order")


def add_simulation_parser(subparsers: argparse._SubParsersAction, name: str, help_text: str, doc: str,
                          robot_help: str) -> argparse.ArgumentParser:
    """The parser of an in-process simulated experiment ``name``: its ``--help`` description is the second paragraph
    of ``doc`` (the command module's docstring), with ``--out DIR`` (required) and ``--robot NAME|FILE`` (a robot
    profile, "" the bundled arm; ``robot_help``). The caller adds its own flags and ``set_defaults(func=run)``."""
    p = subparsers.add_parser(name, help=help_text, description=doc.split("\n\n")[1])
    p.add_argument("--out", type=Path, required=True, metavar="DIR", help="output folder")
    p.add_argument("--robot", default="", metavar="NAME|FILE", help=robot_help)
    return p


def add_robot_arguments(p: argparse.ArgumentParser) -> None:
    """--joint-map and --lock: how the recording's joints meet the URDF of rbd/hybrid."""
    p.add_argument("--joint-map", nargs="+", default=None, metavar="BAG_NAME:URDF_NAME",
                   help="URDF joint of a recorded joint named differently (checked: a URDF joint that cannot be "
                   "matched is refused, naming both lists)")
    p.add_argument("--lock", nargs="+", default=None, metavar="URDF_JOINT=VALUE",
                   help="position [rad or m] of a URDF joint the recording lacks (every such joint is locked, "
                   "default 0)")
    p.add_argument("--urdf-check", choices=("refuse", "warn", "off"), default="refuse",
                   help="check the recording against the URDF before training: torque sign and scale against the "
                   "nominal rigid body, positions against the limits. refuse (default): an effort sign opposite to "
                   "the URDF's stops, the rest is warned; warn: everything is warned; off: no check")


def robot_options(args: argparse.Namespace) -> tuple[dict[str, str], dict[str, float]]:
    """(joint map bag name -> URDF name, lock positions URDF joint -> value) of ``--joint-map`` / ``--lock``.

    Raises:
        RobotDescriptionError: a malformed item (the message quotes it).
    """
    from ..robot import parse_joint_map, parse_locked

    return parse_joint_map(getattr(args, "joint_map", None)), parse_locked(getattr(args, "lock", None))


def add_config_arguments(p: argparse.ArgumentParser) -> None:
    """--config and the common overrides (--seed, --threads, --workers, --max-steps, --alpha/--thresholds,
    --block-seconds, --no-progress, --urdf, --joint-map, --lock)."""
    p.add_argument(
        "--config", default=None, help="training parameters file (default: the bundled config/training.yaml)"
    )
    p.add_argument("--seed", type=int, default=None, help="training seed (overrides the config)")
    p.add_argument("--threads", type=int, default=None, help="torch CPU threads per network (overrides num_threads)")
    p.add_argument("--workers", type=int, default=None,
                   help="processes training the networks, each alone (overrides workers; 0: one per core)")
    p.add_argument("--max-steps", type=int, default=None, help="gradient steps at most (overrides max_steps)")
    add_dead_zone_arguments(p)
    p.add_argument("--block-seconds", type=float, default=None,
                   help="split block length [s] (overrides block_seconds; 0 keeps whole episodes)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument(
        "--urdf",
        default=None,
        help="URDF file or robot model name (`deadzone-id robots`) for rbd/hybrid (default: the bundled arm, "
        "only for simulator data whose joints match)",
    )
    add_robot_arguments(p)
    p.add_argument("--robot", default=None, metavar="NAME|FILE",
                   help="robot profile (`deadzone-id robot show`): its URDF and locked joints for rbd/hybrid "
                   "(--urdf and --lock override)")


def dead_zone_from_args(args: argparse.Namespace, base: DeadZoneConfig) -> DeadZoneConfig:
    """``base`` with ``--alpha`` (which also drops absolute thresholds) or ``--thresholds`` applied.

    Raises:
        ConfigError: a bad value, naming the flag.
    """
    from ..data.deadzone import DeadZoneConfig

    try:
        if args.alpha is not None:
            return DeadZoneConfig(alpha=args.alpha)
        if args.thresholds is not None:
            return DeadZoneConfig(alpha=base.alpha, absolute_thresholds=tuple(args.thresholds))
    except ValueError as err:
        raise command_line_error(err) from err
    return base


def train_config_from_args(args: argparse.Namespace) -> TrainConfig:
    """Load the TrainConfig of ``--config`` with the command-line overrides applied (validated)."""
    from ..training.config import load_train_config

    cfg = load_train_config(args.config)
    try:
        return cfg.with_overrides(seed=args.seed, num_threads=args.threads, workers=args.workers,
                                  max_steps=args.max_steps,
                                  dead_zone=dead_zone_from_args(args, cfg.dead_zone), block_seconds=args.block_seconds,
                                  progress=False if args.no_progress else None)
    except ValueError as err:
        raise command_line_error(err) from err


def _renames(items: list[str] | None) -> dict[str, str]:
    """``--rename-joint`` items ``bag_name:name`` as a dict; raises ValueError naming a malformed item."""
    out: dict[str, str] = {}
    for item in items or ():
        old, sep, new = item.partition(":")
        if not sep or not old.strip() or not new.strip():
            raise ValueError(f"--rename-joint {item!r}: expected BAG_NAME:NAME")
        out[old.strip()] = new.strip()
    return out


def _sign_bits(items: list[str] | None) -> dict[str, int]:
    """``--effort-sign-bit JOINT:BIT ...`` -> {joint: bit}; ValueError names a malformed item."""
    out: dict[str, int] = {}
    for item in items or ():
        name, sep, bit = item.rpartition(":")
        if not sep or not name.strip() or not bit.strip().isdigit():
            raise ValueError(f"--effort-sign-bit {item!r}: expected JOINT:BIT (e.g. shoulder_pan:10)")
        out[name.strip()] = int(bit)
    return out


def dataset_config_from_args(args: argparse.Namespace, joints: Sequence[str] | None = None,
                             torque_constants: dict[str, float] | None = None) -> DatasetConfig:
    """The DatasetConfig of ``--topic``, ``--joints`` (or ``joints``), ``--rename-joint``, ``--savgol-window``,
    ``--velocity``, ``--time-source``, ``--torque-constant`` (else ``torque_constants``), ``--effort-unit``,
    ``--effort-sign-bit`` and, where the command has it, ``--max-gap``.

    Raises:
        ConfigError: a bad flag value, naming the flag.
    """
    from ..data.dataset import DatasetConfig

    constants, unit = effort_options(args)
    constants = constants or dict(torque_constants or {})
    joints = joints or args.joints
    try:
        renames = _renames(getattr(args, "rename_joint", None))
        sign_bits = _sign_bits(getattr(args, "effort_sign_bit", None))
        dcfg = DatasetConfig(topic=args.topic, joints=tuple(joints) if joints else None,
                             torque_constants=constants or None, effort_unit=unit, joint_renames=renames or None,
                             effort_sign_bit=sign_bits or None,
                             velocity=getattr(args, "velocity", None) or "auto",
                             time_source=getattr(args, "time_source", None) or "auto")
        if getattr(args, "savgol_window", None) is not None:
            dcfg = dataclasses.replace(dcfg, savgol_window_s=float(args.savgol_window))
        if getattr(args, "max_gap", None) is not None:
            dcfg = dataclasses.replace(dcfg, max_gap_s=float(args.max_gap))
    except ValueError as err:
        raise command_line_error(err) from err
    return dcfg


def check_bags(paths: str | os.PathLike | Sequence[str | os.PathLike]) -> None:
    """Fail at once on a bag that does not exist or is no bag, before the command loads its heavy libraries (a missing
    file is reported in well under a second): :func:`~deadzone_id_ros.data.bag.format.detect_format` of each path.

    Args:
        paths: a bag path or a list of them (ROS 1 .bag files, rosbag2 directories, .mcap/.db3 files).

    Raises:
        FileNotFoundError: ``"bag PATH does not exist"``.
        DataError: the path holds no ROS 1 bag, MCAP file or SQLite database (names the path).
    """
    from ..data.bag.format import detect_format

    for path in [paths] if isinstance(paths, (str, os.PathLike)) else paths:
        detect_format(Path(path))


def load_bags(args: argparse.Namespace, joints: Sequence[str] | None = None,
              torque_constants: dict[str, float] | None = None) -> Dataset:
    """Load ``args.bag`` with the data loader (:func:`dataset_config_from_args`); returns the Dataset.

    Raises:
        FileNotFoundError / DataError: from the loader, naming the bag, topic, message index and field.
        ConfigError: a bad flag value, naming the flag.
    """
    check_bags(args.bag)
    from ..data.dataset import load_dataset

    return load_dataset(args.bag, dataset_config_from_args(args, joints, torque_constants))


def training_inputs(args: argparse.Namespace, *, simulator: str | None = None) -> TrainingInputs:
    """:func:`~deadzone_id_ros.training.pipeline.load_inputs` of ``--bag``, the data flags
    (:func:`dataset_config_from_args`), ``--urdf``, ``--joint-map``, ``--lock``; ``simulator`` ("auto", "yes", "no"
    or None) as there, its decision printed on stderr; with ``--engine ray`` one Ray task per bag.

    Raises:
        ConfigError: a bad data flag (the message names the flag).
        RobotDescriptionError: a malformed ``--joint-map`` / ``--lock``, or a URDF whose joints cannot be matched.
    """
    check_bags(args.bag)
    from ..training.pipeline import load_inputs

    dcfg = dataset_config_from_args(args)
    joint_map, locked = robot_options(args)
    urdf = args.urdf
    if getattr(args, "robot", None):
        from ..robot import derive_robot, resolve_profile

        robot = derive_robot(resolve_profile(args.robot))
        urdf = urdf or str(robot.urdf_path)
        locked = {**robot.profile.locked, **locked}
    return load_inputs(args.bag, dcfg, urdf=urdf, simulator=simulator, joint_map=joint_map, locked=locked,
                       urdf_check=getattr(args, "urdf_check", "refuse"), engine=getattr(args, "engine", "local"),
                       address=getattr(args, "address", None), num_cpus=getattr(args, "num_cpus", None),
                       log=lambda m: print(m, file=sys.stderr))
