"""Text forms of a resolved robot profile: the human-readable listing of ``deadzone-id robot show`` and the
controller_manager parameter file of ``deadzone-id robot ros2-control`` (ros2_control: joint_state_broadcaster and
an effort forward_command_controller whose joint order is the profile's ``command_joints``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .derived import DerivedRobot
    from .profile import RobotProfile

__all__ = ["SHOWN", "profile_listing", "ros2_control_yaml"]

#: Per-joint values ``robot show`` prints: (attribute of DerivedRobot, unit of a revolute joint, of a prismatic one).
#: Bandwidth and DOB cutoff are frequencies [rad/s] on either kind; inertia becomes mass, torque force.
SHOWN = (("home", "rad", "m"), ("effort_limit", "N*m", "N"), ("encoder_resolution", "rad", "m"),
         ("mass_diagonal", "kg*m^2", "kg"), ("armature", "kg*m^2", "kg"),
         ("nominal_inertia", "kg*m^2", "kg"), ("bandwidth", "rad/s", "rad/s"), ("kp", "1/s^2", "1/s^2"),
         ("kd", "1/s", "1/s"), ("dob_cutoff", "rad/s", "rad/s"), ("torque_rate_limit", "N*m/s", "N/s"),
         ("frictionloss", "N*m", "N"), ("damping", "N*m*s/rad", "N*s/m"), ("torque_noise_std", "N*m", "N"),
         ("velocity_noise_std", "rad/s", "m/s"), ("amplitude", "rad", "m"), ("acceleration_limit", "rad/s^2", "m/s^2"))
_LIMITS = (("lower", "rad", "m"), ("upper", "rad", "m"), ("velocity_limit", "rad/s", "m/s"))


def profile_listing(robot: DerivedRobot) -> str:
    """The resolved profile as text: header, then per joint every value with its unit and origin.

    Units follow each joint's kind (revolute/continuous: rad, N·m; prismatic: m, N). Origins: ``urdf`` (read from
    the URDF), ``derived`` (a formula of :mod:`.derived`), ``profile`` (a setting of the
    profile, its source printed below), ``override`` (an explicit value of the profile's ``overrides``).
    """
    from .derived import PHASE_MARGIN_DEG, loop_delay

    p = robot.profile
    locked = ", ".join(f"{k}={v:g}" for k, v in p.locked.items()) or "none"
    lines = [f"robot {p.name}", f"  urdf: {robot.urdf_path}", f"  joints: {', '.join(p.joint_names)}",
             f"  command order: {', '.join(p.command_joint_names)}", f"  locked: {locked}",
             *([f"  profile: {p.derivation}"] if p.derivation else []),
             f"  control_rate: {p.control_rate:g} Hz, damping ratio {p.damping_ratio:g}, DOB cutoff ratio "
             f"{p.dob_cutoff_ratio:g}, torque rise time {p.torque_rise_time:g} s",
             f"  loop: delay T_d {1e3 * loop_delay(p):.3g} ms, crossover limit {robot.loop_crossover_limit:.4g} rad/s "
             f"({PHASE_MARGIN_DEG:g} deg phase margin), inertia gain kappa {robot.inertia_gain:.3g} (the lightest the "
             "sampled workspace looks to the joint loops)"]
    desc = robot.description
    for i, joint in enumerate(p.joint_names):
        kind = desc.kinds[i]
        lines.append(f"  {joint} ({kind}):")
        for name, rot, lin in _LIMITS:
            unit = lin if kind == "prismatic" else rot
            lines.append(f"    {name:<20} {float(getattr(desc, name)[i]):>12.6g} {unit:<10} [urdf]")
        for name, rot, lin in SHOWN:
            unit = lin if kind == "prismatic" else rot
            where = robot.origin.get(name, ("derived",) * len(p.joint_names))[i]
            where = "profile" if name == "home" and p.home else where
            lines.append(f"    {name:<20} {float(getattr(robot, name)[i]):>12.6g} {unit:<10} [{where}]")
        for key, setting in p.settings.get(joint, {}).items():
            lines.append(f"    source of {key}: {setting.source}")
        for key, why in robot.reasons.items():
            if robot.origin.get(key, ("derived",) * len(p.joint_names))[i] == "derived":
                lines.append(f"    why {key}: {why}")
    return "\n".join(lines) + "\n"


def ros2_control_yaml(profile: RobotProfile, update_rate: float | None = None) -> str:
    """The controller_manager parameter file for ``profile``: joint_state_broadcaster plus ``effort_controller``
    (forward_command_controller/ForwardCommandController, interface ``effort``, joints in ``command_joints`` order).

    Args:
        profile: the robot profile.
        update_rate: controller_manager update rate [Hz]; default the profile's ``control_rate``.
    """
    import yaml

    rate = update_rate if update_rate is not None else profile.control_rate
    doc = {
        "controller_manager": {"ros__parameters": {
            "update_rate": int(round(rate)),
            "joint_state_broadcaster": {"type": "joint_state_broadcaster/JointStateBroadcaster"},
            "effort_controller": {"type": "forward_command_controller/ForwardCommandController"},
        }},
        "effort_controller": {"ros__parameters": {"joints": list(profile.command_joint_names),
                                                  "interface_name": "effort"}},
    }
    header = (f"# controller_manager configuration of robot {profile.name} (written by `deadzone-id robot "
              "ros2-control`).\n# /effort_controller/commands carries one torque per joint in the order of "
              "effort_controller.joints.\n")
    return header + yaml.safe_dump(doc, sort_keys=False)
