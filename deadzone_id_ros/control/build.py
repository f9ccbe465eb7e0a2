"""The controller a configuration asks for, built with its inverse-dynamics model (core, no ROS), and the swap to the
model another configuration asks for."""

from __future__ import annotations

import dataclasses

from ..errors import DeadzoneIdError
from ..models.runtime import load_model
from ..robot import RobotDescription
from .config import ControllerConfig
from .controller import FeedforwardController
from .model_swap import MODEL_FIELDS, SwapVerdict

__all__ = ["build_controller", "swap_configured_model"]


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


def swap_configured_model(controller: FeedforwardController, config: ControllerConfig) -> SwapVerdict:
    """Load the model ``config`` names (its :data:`.model_swap.MODEL_FIELDS`: ``model``, ``model_path``, ...) and
    swap it into the running ``controller`` (:meth:`FeedforwardController.swap_model`, which checks it first).

    Runs in the caller's thread: a control loop there waits for the load and the check (measured for the bundled
    arm's artifacts on 2 cores shared with other work: 2-100 ms, the first load in a process the slowest).

    Returns:
        the verdict; a model that cannot be loaded (missing file, not the artifact/ONNX format, a unit other than
        N·m, unknown kind) is refused with the loader's reason. Refused, the old model keeps running.
    """
    if config.model != "learned" and config.model_path != controller.config.model_path:
        return SwapVerdict(False, f"model_path is read by model 'learned' only, not {config.model!r}: set model to "
                                  "'learned' with it")
    try:
        model = load_model(config)
    except (DeadzoneIdError, FileNotFoundError, ValueError) as err:
        return SwapVerdict(False, f"cannot load the model (model {config.model!r}, model_path {config.model_path!r}): "
                                  f"{err}")
    changes = {name: getattr(config, name) for name in MODEL_FIELDS}
    return controller.swap_model(model, config=dataclasses.replace(controller.config, **changes))
