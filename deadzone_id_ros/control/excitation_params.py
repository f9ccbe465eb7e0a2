"""Parameters of the excitation node (ROS-free: no rclpy import, so the loader works without ROS).

The parameter file (config/excitation.yaml) holds two configs: the trajectory,
:class:`deadzone_id_ros.control.ExcitationConfig`, and the node-only :class:`ExcitationNodeConfig` below.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..config import check_positive, load_node_configs
from .excitation import ExcitationConfig

__all__ = ["ExcitationNodeConfig", "load_excitation_config"]


@dataclass(frozen=True)
class ExcitationNodeConfig:
    """ROS-side settings of the excitation node.

    Attributes:
        start_delay: the trajectory starts this long after the node has its start position [s] (>= 0).
        publish_period: a new JointTrajectory window is published this often [s] (> 0).
        horizon: each window covers this much of the future [s] (> publish_period).
        wait_for_subscribers: start the trajectory only once the reference topic has at least this many subscribers
            (e.g. 2: the controller and the recorder), so that a recording holds the whole reference even when DDS
            matches a subscriber late on a busy machine; 0 starts at once (>= 0).
        exit_when_finished: exit (status 0) once the node clock has passed the end of the motion, so that a launch
            that marks the node ``on_exit: shutdown`` ends by itself and the recorder closes its episode
            (sim_feedforward.launch.yaml, ``end_when_finished``); False keeps publishing nothing and idling.

    Raises:
        ValueError: a bad value; the message names the field and the value.
    """

    start_delay: float = 2.0
    publish_period: float = 0.5
    horizon: float = 2.0
    wait_for_subscribers: int = 0
    exit_when_finished: bool = False

    def __post_init__(self) -> None:
        check_positive("start_delay", self.start_delay, allow_zero=True)
        check_positive("publish_period", self.publish_period)
        check_positive("horizon", self.horizon)
        check_positive("wait_for_subscribers", self.wait_for_subscribers, integer=True, allow_zero=True)
        if self.horizon <= self.publish_period:
            raise ValueError(f"horizon = {self.horizon} must be > publish_period = {self.publish_period}")


def load_excitation_config(
    path: str | Path | None = None, overrides: dict | None = None, robot: str | None = None
) -> tuple[ExcitationConfig, ExcitationNodeConfig]:
    """Load the excitation configs from a parameter file (default: the bundled config/excitation.yaml).

    Args:
        path: parameter file in ROS 2 format; None for the bundled default.
        overrides: parameter name -> value applied on top of the file.
        robot: robot profile (a shipped name or a profile file; else the file's or the overrides' ``robot``
            key, else the bundled arm) whose values fill the joints, URDF and per-joint values the file
            leaves out (:func:`deadzone_id_ros.robot.defaults.fill_required`); the file's own values win.

    Raises:
        FileNotFoundError: the file does not exist.
        ConfigError: malformed YAML, an unknown key or a bad value (names the file and key).
    """
    from ..robot.defaults import fill_required

    return load_node_configs(ExcitationConfig, ExcitationNodeConfig, "excitation", "excitation.yaml", path,
                             {**(overrides or {}), **({"robot": robot} if robot else {})},
                             fill=fill_required)
