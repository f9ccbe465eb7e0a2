"""The controller a configuration asks for, built with its inverse-dynamics model (core, no ROS)."""

from __future__ import annotations

from ..models.runtime import load_model
from ..robot import RobotDescription
from .config import ControllerConfig
from .controller import FeedforwardController

__all__ = ["build_controller"]


def build_controller(config: ControllerConfig, description: RobotDescription | None = None) -> FeedforwardController:
    """A :class:`FeedforwardController` for ``config`` with the model :func:`~deadzone_id_ros.models.runtime.load_model`
    builds from it (``model``, ``model_path``, ``urdf_path``, ...).

    The one constructor of the offline simulation, the soak test and closed-loop replay.

    Args:
        config: the controller configuration (joints, mode, gains, limits, model).
        description: the controlled robot's description (joint order, position and effort limits); default: loaded
            from ``config.urdf_path`` (the bundled arm when empty) for ``config.joint_names``.

    Raises:
        ConfigError: unknown ``model``, or "learned" without ``model_path``.
        FileNotFoundError, ArtifactError, RobotDescriptionError: the model or URDF cannot be loaded, or a learned
            model does not predict N·m.
        SafetyError: the model's or the description's joints are not the controller's.
    """
    return FeedforwardController(config, load_model(config), description)
