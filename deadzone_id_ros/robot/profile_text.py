"""Text forms of a resolved robot profile: the human-readable listing of ``deadzone-id robot show`` and the
controller_manager parameter file of ``deadzone-id robot ros2-control`` (ros2_control: joint_state_broadcaster and
an effort forward_command_controller whose joint order is the profile's ``command_joints``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .derived import DerivedRobot
    from .profile import RobotProfile

__all__ = ["SHOWN", "profile_listing", "ros2_control_yaml"]

#: Per-joint values ``robot show`` prints: (attribute of DerivedRobot, unit).
SHOWN = (("home", "rad"), ("effort_limit", "N*m"), ("encoder_resolution", "rad"), ("mass_diagonal", "kg*m^2"),
         ("armature", "kg*m^2"), ("nominal_inertia", "kg*m^2"),
         ("bandwidth", "rad/s"), ("kp", "1/s^2"), ("kd", "1/s"), ("dob_cutoff", "rad/s"),
         ("torque_rate_limit", "N*m/s"), ("frictionloss", "N*m"), ("damping", "N*m*s/rad"),
         ("torque_noise_std", "N*m"), ("velocity_noise_std", "rad/s"), ("amplitude", "rad"),
         ("acceleration_limit", "rad/s^2"))
_LIMITS = (("lower", "rad"), ("upper", "rad"), ("velocity_limit", "rad/s"))


def profile_listing(robot: DerivedRobot) -> str:
    """The resolved profile as text: header, then per joint every value with its unit and origin.

    Origins: ``urdf`` (read from the URDF), ``derived`` (a formula of :mod:`.derived`), ``profile`` (a setting of the
    profile, its source printed below), ``override`` (an explicit value of the profile's ``overrides``).
    """
    p = robot.profile
    locked = ", ".join(f"{k}={v:g}" for k, v in p.locked.items()) or "none"
    lines = [f"robot {p.name}", f"  urdf: {robot.urdf_path}", f"  joints: {', '.join(p.joint_names)}",
             f"  command order: {', '.join(p.command_joint_names)}", f"  locked: {locked}",
             f"  control_rate: {p.control_rate:g} Hz, damping ratio {p.damping_ratio:g}, DOB cutoff ratio "
             f"{p.dob_cutoff_ratio:g}, torque rise time {p.torque_rise_time:g} s"]
    desc = robot.description
    for i, joint in enumerate(p.joint_names):
        kind = "continuous" if desc.continuous[i] else "revolute"
        lines.append(f"  {joint} ({kind}):")
        for name, unit in _LIMITS:
            lines.append(f"    {name:<20} {float(getattr(desc, name)[i]):>12.6g} {unit:<10} [urdf]")
        for name, unit in SHOWN:
            where = robot.origin.get(name, ("derived",) * len(p.joint_names))[i]
            where = "profile" if name == "home" and p.home else where
            lines.append(f"    {name:<20} {float(getattr(robot, name)[i]):>12.6g} {unit:<10} [{where}]")
        for key, setting in p.settings.get(joint, {}).items():
            lines.append(f"    source of {key}: {setting.source}")
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
