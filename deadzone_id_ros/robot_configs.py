"""The component configs of a robot, built from its profile (:mod:`deadzone_id_ros.robot.profile`).

No config dataclass names a joint by default: a config for J joints is built from a robot profile here, every
per-joint value taken from the profile's derived values (:mod:`deadzone_id_ros.robot.derived`), explicit keyword
arguments overriding them. Where a caller has no profile, the bundled 3-joint arm's profile
(``config/robots/three_dof_arm.yaml``) gives the defaults (:func:`bundled_robot`), and :func:`robot_for` builds an
implicit profile (URDF-derived values only) for any other URDF and joint list.

Each room builds its own (:mod:`deadzone_id_ros.control.robot_configs`, :mod:`deadzone_id_ros.sim.robot_configs`);
this module gathers them for the experiments, nodes and the command line, above every room it names.
"""

from __future__ import annotations

from .control.robot_configs import (
    bundled_controller_config,
    bundled_excitation_config,
    controller_config,
    controller_node_config,
    excitation_config,
)
from .robot.defaults import BUNDLED_ROBOT, bundled_robot, load_robot, robot_for
from .sim.robot_configs import bag_replay_config, bundled_sim_config, sim_config, simulation_configs

__all__ = ["BUNDLED_ROBOT", "bag_replay_config", "bundled_controller_config", "bundled_excitation_config",
           "bundled_robot", "bundled_sim_config", "controller_config", "controller_node_config", "excitation_config",
           "load_robot", "robot_for", "sim_config", "simulation_configs"]
