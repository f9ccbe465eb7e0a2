"""A robot profile: one YAML file per robot, the one place a robot is described beyond its URDF.

A profile names the URDF (a path, relative to the profile's folder, or a name from ``deadzone-id robots``), the
controlled joints, the joints to lock and where, the effort controller's joint order and a home pose, plus only the
per-joint settings a URDF cannot give: the simulated friction and actuator figures, each number with a ``source:``
citation, and optionally a closed-loop bandwidth. Everything else is derived from the URDF by
:func:`deadzone_id_ros.robot.derived.derive_robot` (limits, friction, the nominal inertia, default gains).

Schema (every key but ``urdf`` and ``joints`` optional; unknown keys are refused)::

    name: so101
    urdf: so101                      # file path (relative to this file) or a `deadzone-id robots` name
    joints: [shoulder_pan, ...]      # controlled joints, in the order of every per-joint list
    command_joints: [...]            # effort controller's joint order (default: joints)
    locked: {gripper: 0.0}           # URDF joints held fixed [rad or m]
    home: [0.0, ...]                 # home pose [rad] (default: zeros, clipped into the limits)
    control_rate: 1000.0             # [Hz]: the controller's rate and the simulator's /joint_states rate
    bandwidth: 20.0                  # closed-loop bandwidth w of every joint [rad/s]
    damping_ratio: 1.0               # zeta
    dob_cutoff_ratio: 7.5            # DOB cutoff = ratio * w (capped below Nyquist)
    torque_rise_time: 0.01           # torque_rate_limit = effort_limit / rise time [s]
    settings:                        # per joint: only what a URDF cannot give, each with its source
      shoulder_pan:
        frictionloss: {value: 0.0524, source: "..."}
        effort_limit: {value: 1.91, source: "..."}              # [N·m], beats the URDF's <limit effort>
        encoder_resolution: {value: 0.00153398, source: "..."}  # one encoder count [rad]
    overrides:                       # explicit per-joint values beating the derived ones
      nominal_inertia: [...]

Profiles shipped with the package live in ``config/robots/<name>.yaml`` (:func:`available_profiles`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import ConfigError

__all__ = ["OVERRIDE_KEYS", "SETTING_KEYS", "RobotProfile", "Setting", "available_profiles", "load_profile",
           "profile_from_dict", "resolve_profile"]

#: Per-joint settings a profile may give (each with a source): simulated static friction [N·m], viscous friction
#: [N·m·s/rad], reflected rotor inertia [kg·m²], torque and velocity noise [N·m, rad/s], closed-loop bandwidth
#: [rad/s], the actuator's effort limit [N·m] (beats the URDF's ``<limit effort>``: the controller's clamp and the
#: simulator's saturation) and the position encoder's resolution, one count [rad] (the simulator reports positions
#: in whole counts).
SETTING_KEYS = ("frictionloss", "damping", "armature", "torque_noise_std", "velocity_noise_std", "bandwidth",
                "effort_limit", "encoder_resolution")
#: Settings that must be > 0 (the others may be 0).
_POSITIVE_SETTINGS = ("bandwidth", "effort_limit", "encoder_resolution")
#: Derived per-joint values a profile may set explicitly (``overrides``): gains [1/s², 1/s], nominal inertia
#: [kg·m²], DOB cutoff [rad/s], torque rate limit [N·m/s], excitation amplitude [rad] and acceleration limit [rad/s²].
OVERRIDE_KEYS = ("kp", "kd", "nominal_inertia", "dob_cutoff", "torque_rate_limit", "amplitude", "acceleration_limit")
_SCALARS = ("control_rate", "bandwidth", "damping_ratio", "dob_cutoff_ratio", "torque_rise_time")
_KEYS = ("name", "urdf", "joints", "command_joints", "locked", "home", "settings", "overrides", *_SCALARS)


@dataclass(frozen=True)
class Setting:
    """One per-joint number of a profile and where it comes from.

    Attributes:
        value: the number, in the unit of its key (:data:`SETTING_KEYS`).
        source: citation (datasheet, paper, measurement) or the rule that gave it; never empty.
    """

    value: float
    source: str


@dataclass(frozen=True)
class RobotProfile:
    """A robot profile as written in its YAML file (nothing derived yet; see :mod:`.derived`).

    Attributes:
        name: the robot's name.
        urdf: the URDF as written: a path (relative to ``folder``) or a ``deadzone-id robots`` name.
        joint_names: (J,) controlled joints.
        command_joint_names: (J,) the same joints in the effort controller's order.
        locked: URDF joint -> position it is locked at [rad or m].
        home: (J,) home pose [rad], or () for zeros clipped into the limits.
        control_rate: controller rate [Hz] (> 0): the rate the hardware delivers states and takes commands, so also
            the simulator's /joint_states rate and the offline simulation's control period.
        bandwidth: default closed-loop bandwidth w of every joint [rad/s] (> 0).
        damping_ratio: zeta of the closed loop (> 0).
        dob_cutoff_ratio: DOB cutoff as a multiple of w (> 0).
        torque_rise_time: time the command may take to sweep the full effort limit [s] (> 0).
        settings: joint -> key (:data:`SETTING_KEYS`) -> :class:`Setting`.
        overrides: key (:data:`OVERRIDE_KEYS`) -> (J,) explicit values.
        folder: the profile file's folder (relative URDF paths resolve there).

    Raises:
        ValueError: a bad value; the message names the key and the value.
    """

    name: str
    urdf: str
    joint_names: tuple[str, ...]
    command_joint_names: tuple[str, ...] = ()
    locked: Mapping[str, float] = field(default_factory=dict)
    home: tuple[float, ...] = ()
    control_rate: float = 1000.0
    bandwidth: float = 20.0
    damping_ratio: float = 1.0
    dob_cutoff_ratio: float = 7.5
    torque_rise_time: float = 0.01
    settings: Mapping[str, Mapping[str, Setting]] = field(default_factory=dict)
    overrides: Mapping[str, tuple[float, ...]] = field(default_factory=dict)
    folder: Path = Path(".")

    def __post_init__(self) -> None:
        from ..config import check_joint_names, check_per_joint, check_positive

        n = check_joint_names(self.joint_names)
        if not self.urdf:
            raise ValueError("urdf is empty: give a URDF path or a `deadzone-id robots` name")
        if not self.command_joint_names:
            object.__setattr__(self, "command_joint_names", tuple(self.joint_names))
        if sorted(self.command_joint_names) != sorted(self.joint_names):
            raise ValueError(f"command_joints {list(self.command_joint_names)} must hold the same joints as joints "
                             f"{list(self.joint_names)}")
        if self.home:
            check_per_joint("home", self.home, n, sign="any")
        for name in _SCALARS:
            check_positive(name, getattr(self, name))
        both = [j for j in self.locked if j in self.joint_names]
        if both:
            raise ValueError(f"locked joint(s) {both} are also controlled joints")
        for j, v in self.locked.items():
            if not (isinstance(v, (int, float)) and math.isfinite(v)):
                raise ValueError(f"locked.{j} = {v!r} must be a finite number")
        for j, entries in self.settings.items():
            if j not in self.joint_names:
                raise ValueError(f"settings.{j}: not a controlled joint (joints: {list(self.joint_names)})")
            for key, s in entries.items():
                if key not in SETTING_KEYS:
                    raise ValueError(f"settings.{j}.{key}: unknown key; known: {list(SETTING_KEYS)}")
                sign = "positive" if key in _POSITIVE_SETTINGS else "non-negative"
                check_per_joint(f"settings.{j}.{key}", (s.value,), 1, sign=sign)
                if not s.source.strip():
                    raise ValueError(f"settings.{j}.{key}: every number needs a source (a citation or a rule)")
        for key, values in self.overrides.items():
            if key not in OVERRIDE_KEYS:
                raise ValueError(f"overrides.{key}: unknown key; known: {list(OVERRIDE_KEYS)}")
            check_per_joint(f"overrides.{key}", values, n)

    def setting(self, joint: str, key: str) -> Setting | None:
        """The profile's :class:`Setting` ``key`` of ``joint``, or None when the profile gives none."""
        return self.settings.get(joint, {}).get(key)


def _setting(where: str, raw: Any) -> Setting:
    if not isinstance(raw, dict) or set(raw) != {"value", "source"}:
        raise ValueError(f"{where} = {raw!r} must be {{value: NUMBER, source: TEXT}}")
    if isinstance(raw["value"], bool) or not isinstance(raw["value"], (int, float)):
        raise ValueError(f"{where}.value = {raw['value']!r} must be a number")
    return Setting(float(raw["value"]), str(raw["source"]))


def profile_from_dict(values: Mapping[str, Any], source: str = "<profile>", folder: Path | None = None) -> RobotProfile:
    """Build a :class:`RobotProfile` from a parsed YAML mapping.

    Args:
        values: the mapping (keys of the schema in the module docstring).
        source: the file's name, for messages; its stem is the default ``name``.
        folder: where relative URDF paths resolve (default: the current directory).

    Raises:
        ConfigError: not a mapping, an unknown key, or a bad value; names ``source`` and the key.
    """
    if not isinstance(values, Mapping):
        raise ConfigError(f"{source}: a robot profile must be a YAML mapping, got {type(values).__name__}")
    unknown = sorted(k for k in values if k not in _KEYS)
    if unknown:
        raise ConfigError(f"{source}: unknown key(s) {unknown}; known keys: {sorted(_KEYS)}")
    try:
        settings = {str(j): {str(k): _setting(f"settings.{j}.{k}", raw) for k, raw in (entries or {}).items()}
                    for j, entries in (values.get("settings") or {}).items()}
        overrides = {str(k): tuple(float(v) for v in vs) for k, vs in (values.get("overrides") or {}).items()}
        scalars = {k: float(values[k]) for k in _SCALARS if k in values}
        return RobotProfile(
            name=str(values.get("name") or Path(source).stem), urdf=str(values.get("urdf") or ""),
            joint_names=tuple(str(j) for j in values.get("joints") or ()),
            command_joint_names=tuple(str(j) for j in values.get("command_joints") or ()),
            locked={str(k): float(v) for k, v in (values.get("locked") or {}).items()},
            home=tuple(float(v) for v in values.get("home") or ()), settings=settings, overrides=overrides,
            folder=folder if folder is not None else Path("."), **scalars)
    except (TypeError, ValueError, AttributeError) as err:
        raise ConfigError(f"{source}: {err}") from err


def load_profile(path: str | Path) -> RobotProfile:
    """Read a robot profile file.

    Raises:
        FileNotFoundError: the file does not exist.
        ConfigError: malformed YAML, an unknown key or a bad value (names the file and key).
    """
    import yaml

    from ..config import load_yaml

    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"robot profile {path} does not exist")
    try:
        values = load_yaml(path.read_text())
    except yaml.YAMLError as err:
        raise ConfigError(f"{path}: malformed YAML: {err}") from err
    return profile_from_dict(values, str(path), folder=path.resolve().parent)


def available_profiles() -> dict[str, Path]:
    """The profiles shipped with the package: name -> ``config/robots/<name>.yaml``, sorted by name."""
    from ..resources import share_dir

    try:
        folder = share_dir() / "config" / "robots"
    except FileNotFoundError:
        return {}
    return {p.stem: p for p in sorted(folder.glob("*.yaml"))}


def resolve_profile(spec: str | Path) -> RobotProfile:
    """The profile ``spec`` names: an existing file, else a shipped profile's name (:func:`available_profiles`).

    Raises:
        FileNotFoundError: ``spec`` ends in .yaml/.yml and does not exist.
        ConfigError: neither a file nor a known name (the names are listed), or a bad profile.
    """
    path = Path(spec)
    if path.is_file():
        return load_profile(path)
    known = available_profiles()
    if str(spec) in known:
        return load_profile(known[str(spec)])
    if path.suffix.lower() in (".yaml", ".yml"):
        raise FileNotFoundError(f"robot profile {path} does not exist")
    raise ConfigError(f"--robot {spec!r} is neither a profile file nor a shipped profile (known: "
                      f"{', '.join(known) or 'none'})")
