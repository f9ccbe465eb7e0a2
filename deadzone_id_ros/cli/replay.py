"""``deadzone-id replay BAG [--urdf URDF] [--closed-loop] --out DIR``: replay a recorded bag through a simulated arm.

``--urdf`` takes a URDF file or a robot model name (``deadzone-id robots``); the bag's joints must be joints of it
(mapped by name), and it is simulated as a rigid body with its URDF friction and no noise. ``--robot NAME|FILE``
takes a robot profile instead (``deadzone-id robot show``): its simulated arm (friction, armature, noise) and, with
``--closed-loop``, its controller. Without either the bag's own sim configuration (a simulated bag) or the bundled
arm is used.

Open loop (default): the recorded effort commands drive the simulator from the recorded initial state. Closed loop:
the recorded reference is followed by the controller against the simulator: the bag's own controller configuration
(a simulated bag), else the robot profile's default controller, or the one you ran: ``--controller-params FILE``
(the feedforward_controller's parameter file, as given to ``controller_params_file:=``) and ``--controller
NAME:=VALUE`` (as the launch arguments: ``mode:=ctc_dob model:=learned model_path:=report/pick``; the value is YAML,
so quote a string that YAML reads otherwise, such as ``on``), set on top of that base. Writes
DIR/report.json, DIR/report.md and plots (position.png, effort.png) with the RMSE per joint. A bag recorded from the
simulator (``deadzone-id simulate``) replays open loop exactly (RMSE 0). Exit status 0, or 1 with ``--max-rmse``
exceeded, 2 for a bad bag (joints not the URDF's, missing topics) or a controller setting it refuses.
"""

from __future__ import annotations

import argparse
from pathlib import Path

__all__ = ["register", "run"]


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``replay`` subcommand."""
    p = subparsers.add_parser(
        "replay", help="replay a bag through the simulated arm and report the difference",
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("bag", help="bag directory or file (rosbag2 MCAP/sqlite3, or ROS 1 .bag)")
    p.add_argument("--urdf", default=None,
                   help="the robot to simulate: a URDF file or a robot model name (`deadzone-id robots`); default: "
                        "the bag's own sim configuration, else the bundled arm")
    p.add_argument("--robot", default=None, metavar="NAME|FILE",
                   help="robot profile (`deadzone-id robot show`): its simulated arm and, with --closed-loop, its "
                        "controller (instead of --urdf)")
    p.add_argument("--closed-loop", action="store_true",
                   help="follow the recorded reference with the controller instead of replaying the commands")
    p.add_argument("--controller-params", default=None, metavar="FILE",
                   help="with --closed-loop: the feedforward_controller's parameter file (ROS 2 format, as given to "
                        "controller_params_file:=); its control-law parameters go on top of the bag's or the "
                        "profile's controller")
    p.add_argument("--controller", action="append", default=[], metavar="NAME:=VALUE",
                   help="with --closed-loop: one controller parameter (repeatable; YAML value), e.g. mode:=ctc_dob "
                        "model:=learned model_path:=report/pick feedforward_velocity:=measured")
    p.add_argument("--out", required=True,
                   help="report directory: new, empty, or an earlier `replay` output, which is replaced")
    p.add_argument("--force", action="store_true", help="replace --out even if it is not an earlier `replay` output")
    p.add_argument("--joint-state-topic", default=None, help="JointState topic in the bag (default /joint_states)")
    p.add_argument("--command-topic", default=None, help="command topic (default /effort_controller/commands)")
    p.add_argument("--reference-topic", default=None,
                   help="reference topic (default /feedforward_controller/reference)")
    p.add_argument("--max-rmse", type=float, default=None,
                   help="exit 1 if any joint's position RMSE exceeds this [rad] (for regression checks)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run the replay, print the per-joint errors and the report paths; returns the exit status.

    Raises:
        ConfigError: both ``--urdf`` and ``--robot``; ``--controller-params`` or ``--controller`` without
            ``--closed-loop``, a ``--controller`` that is not NAME:=VALUE or names no parameter of the control law,
            or a value the controller's config refuses.
        FileNotFoundError: the bag or ``--controller-params`` does not exist.
    """
    from ..errors import ConfigError
    from ..outputs import check_output_dir, output_dir
    from ._args import check_bags

    if args.urdf and args.robot:
        raise ConfigError("replay: give --urdf or --robot, not both (--robot names its own URDF)")
    if (args.controller_params or args.controller) and not args.closed_loop:
        raise ConfigError("replay: --controller-params and --controller set the controller of a --closed-loop replay")
    check_bags(args.bag)  # a missing bag: said at once, before MuJoCo and the bag readers are loaded
    from ..data.bag import read_recording
    from ..sim.replay import replay, write_report

    topics = {k: v for k, v in (("joint_state_topic", args.joint_state_topic), ("command_topic", args.command_topic),
                                ("reference_topic", args.reference_topic)) if v}
    check_output_dir(args.out, "replay", force=args.force)
    recording = read_recording(args.bag, **topics)
    sim_config, controller_config = None, None
    if args.robot:
        from ..robot_configs import controller_config as robot_controller
        from ..robot_configs import load_robot
        from ..robot_configs import sim_config as robot_sim

        profile = load_robot(args.robot)
        sim_config, controller_config = robot_sim(profile), robot_controller(profile)
        print(f"simulating robot profile {profile.profile.name} ({profile.urdf_path})")
    elif args.urdf:
        from ..robot.catalog import resolve_robot_model
        from ..sim.replay import sim_config_for_urdf

        robot = resolve_robot_model(args.urdf)
        sim_config = sim_config_for_urdf(robot.urdf_path, tuple(recording.joint_names))
        print(f"simulating {robot.name} ({robot.urdf_path}): rigid body and URDF friction, no noise")
    settings = _controller_settings(args.controller_params, args.controller)
    result = replay(recording, closed_loop=args.closed_loop, source=str(args.bag), sim_config=sim_config,
                    controller_config=controller_config, controller_settings=settings)
    with output_dir(args.out, "replay", force=args.force) as out:
        files = {k: Path(args.out) / Path(p).relative_to(out) for k, p in write_report(result, out).items()}
    print(f"{result.mode.replace('_', ' ')} replay of {args.bag}: {len(result.t)} samples, {result.t[-1]:.3f} s")
    print(f"{'joint':<12} {'RMSE q [rad]':>14} {'max |q| err':>14} {'RMSE effort [N·m]':>18}")
    for i, name in enumerate(result.joint_names):
        print(f"{name:<12} {result.rmse_q[i]:>14.3e} {result.max_abs_q_error[i]:>14.3e} {result.rmse_effort[i]:>18.3e}")
    for note in result.notes:
        print(f"  - {note}")
    print("report: " + ", ".join(str(p) for p in files.values()))
    if args.max_rmse is not None and float(result.rmse_q.max()) > args.max_rmse:
        print(f"position RMSE {float(result.rmse_q.max()):.3e} rad exceeds --max-rmse {args.max_rmse:g}")
        return 1
    return 0


def _controller_settings(params_file: str | None, settings: list[str]) -> dict[str, object]:
    """``ControllerConfig`` field -> value from ``--controller-params`` (its control-law parameters; the node's own,
    such as thread_priority, do not act in a replay) and the ``--controller`` settings after it.

    Raises:
        ConfigError: a setting that is not NAME:=VALUE or names no controller parameter; a malformed file.
        FileNotFoundError: the parameter file does not exist.
    """
    import dataclasses

    import yaml

    from ..config import load_ros_parameters
    from ..control import ControllerConfig
    from ..control.feedforward_controller_params import ControllerNodeConfig
    from ..errors import ConfigError, LaunchError
    from ..launching.description import parse_launch_arguments

    law = {f.name for f in dataclasses.fields(ControllerConfig)}
    node = {f.name for f in dataclasses.fields(ControllerNodeConfig)} | {"robot", "use_sim_time"}
    out: dict[str, object] = {}
    if params_file:
        params = load_ros_parameters(params_file, "feedforward_controller")
        unknown = sorted(k for k in params if k not in law and k not in node and not k.startswith("sensing_"))
        if unknown:
            raise ConfigError(f"replay: {params_file}: unknown controller parameter(s) {unknown}")
        out.update({k: v for k, v in params.items() if k in law})
    try:
        given = parse_launch_arguments(settings)  # the launch files' NAME:=VALUE, parsed as `launch` parses it
    except LaunchError as err:
        raise ConfigError(f"replay: --controller must be NAME:=VALUE, e.g. mode:=ctc_dob ({err})") from None
    for name, text in given.items():
        if name not in law:
            raise ConfigError(f"replay: --controller {name}: not a parameter of the control law; known: {sorted(law)}")
        try:
            out[name] = yaml.safe_load(text) if text else ""
        except yaml.YAMLError:
            out[name] = text
    return out
