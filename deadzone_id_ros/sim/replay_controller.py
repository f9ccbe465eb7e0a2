"""The controller configuration of a closed-loop replay (:func:`deadzone_id_ros.sim.replay.replay`).

The base is, in this order: the configuration given, the bag's own ``controller_config`` (a simulated bag; a bag from
before ``feedforward_velocity`` ran the model at the measured velocity), or the default controller of the simulated
arm's URDF and joints. The settings a user gives (``deadzone-id replay --controller-params FILE --controller
NAME:=VALUE``) go on top of that base, so that they work on any arm and keep whatever they do not name.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from ..config import dataclass_from_dict

if TYPE_CHECKING:
    from ..control import ControllerConfig
    from ..data.types import Recording
    from .arm import SimArm

__all__ = ["replay_controller_config"]


def replay_controller_config(recording: Recording, names: tuple[str, ...], arm: SimArm,
                             controller_config: ControllerConfig | None, settings: dict[str, object] | None,
                             source: str, notes: list[str]) -> ControllerConfig:
    """The controller of a closed-loop replay of ``recording`` on ``arm`` (joints ``names``); appends to ``notes``
    where it came from.

    Args:
        controller_config: the base, or None (the bag's, else the default).
        settings: ``ControllerConfig`` field -> value, set on top of the base (None or empty: none).

    Raises:
        ConfigError: the bag's controller_config is invalid, or a setting names no field of ``ControllerConfig`` or
            has a value it refuses (the message names the setting).
    """
    from ..control import ControllerConfig

    if controller_config is None:
        meta = recording.metadata.get("controller_config") if isinstance(recording.metadata, dict) else None
        if isinstance(meta, dict):
            from ..robot.defaults import fill_required

            meta = {"feedforward_velocity": "measured", **meta}  # older bags: their law saw the measured velocity
            controller_config = dataclass_from_dict(ControllerConfig, fill_required(ControllerConfig, meta),
                                                    f"{source}: episode.yaml controller_config")
            notes.append(f"controller: the bag's controller_config (mode {controller_config.mode}, "
                         f"feedforward_velocity {controller_config.feedforward_velocity})")
            if arm.config.urdf_path and controller_config.urdf_path != arm.config.urdf_path:
                controller_config = dataclasses.replace(controller_config, urdf_path=arm.config.urdf_path)
                notes.append(f"controller: URDF replaced by the simulated one, {arm.config.urdf_path}")
        else:
            from ..control.robot_configs import controller_config as profile_controller_config
            from ..robot.defaults import robot_for
            from .robot_configs import arm_values

            controller_config = profile_controller_config(robot_for(arm.config.urdf_path, names),
                                                          **arm_values(arm.config))
            notes.append(f"controller: default configuration (mode {controller_config.mode})")
    if settings:
        controller_config = dataclass_from_dict(ControllerConfig, {**dataclasses.asdict(controller_config),
                                                                   **settings}, "replay: controller settings")
        notes.append(f"controller: {', '.join(f'{k}={v!r}' for k, v in settings.items())} set on top (mode "
                     f"{controller_config.mode}, model {controller_config.model}, feedforward_velocity "
                     f"{controller_config.feedforward_velocity})")
    return controller_config
