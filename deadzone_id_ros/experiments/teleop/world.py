"""The teleoperation world of one simulated arm of a live run (core, no ROS): the sim_arm node's ``teleop_*``
parameters.

A live run over DDS has two sim_arm nodes, one per namespace (``/leader``, ``/follower``). Each builds its part of
the scenario that ``deadzone-id teleop`` runs in process (:func:`.run.case_world`, the same code): the leader gets
the scripted operator's hand (a joint impedance pulling it along the scenario's reference), the follower the box of
``push``/``hold`` or the gentle push of ``stuck``. Both arms take the robot profile of both arms' nominal setup
(``teleop_robot``); the world does not depend on the controller's model, except the ``stuck`` push, sized from the
static-friction band of ``teleop_model``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from .results import SCENARIOS

if TYPE_CHECKING:
    from ...sim.external_forces import ExternalForces
    from .run import TeleopSettings

__all__ = ["TELEOP_ROLES", "TeleopWorldConfig"]

#: the arm a sim_arm node plays in a live teleoperation run ("" = none)
TELEOP_ROLES = ("", "leader", "follower")


@dataclass(frozen=True)
class TeleopWorldConfig:
    """The sim_arm node's ``teleop_*`` parameters (the settings of :class:`.run.TeleopSettings` a world needs).

    Attributes:
        teleop_role: "" (no teleoperation world), "leader" (the operator's hand) or "follower" (the obstacle).
        teleop_scenario: free, push, hold or stuck (as ``deadzone-id teleop --scenarios``).
        teleop_seed: the scenario's seed (free-motion phases), as ``deadzone-id teleop --seeds``.
        teleop_robot: the robot profile of both arms ("" = bundled), for the box's and the push's placement.
        teleop_model: the model whose static-friction band sizes the ``stuck`` push (nominal, identified, a path).
        teleop_duration: the scenario's duration [s] (its reference's timing).
        teleop_hand_stiffness: the operator's stiffness [N·m/rad]; 0: sized to the arm, as ``deadzone-id teleop``
            does by default (:func:`.sizing.hand_impedance`).  teleop_hand_damping: its damping [N·m·s/rad]; 0:
            :data:`.sizing.HAND_DAMPING_TIME` times the stiffness (so a live hand always has some damping, where
            ``deadzone-id teleop --hand-damping 0`` has none).
        teleop_amplitude: free-motion amplitude [rad].  teleop_position_scale: s_p (where the box is).

    Raises:
        ValueError: a bad role or scenario, or a setting :class:`.run.TeleopSettings` rejects (named).
    """

    teleop_role: str = ""
    teleop_scenario: str = "free"
    teleop_seed: int = 1
    teleop_robot: str = ""
    teleop_model: str = "identified"
    teleop_duration: float = 4.0
    teleop_hand_stiffness: float = 0.0
    teleop_hand_damping: float = 0.0
    teleop_amplitude: float = 0.2
    teleop_position_scale: float = 1.0

    def __post_init__(self) -> None:
        if self.teleop_role not in TELEOP_ROLES:
            raise ValueError(f"teleop_role = {self.teleop_role!r} must be one of {list(TELEOP_ROLES)}")
        if self.teleop_scenario not in SCENARIOS:
            raise ValueError(f"teleop_scenario = {self.teleop_scenario!r} must be one of {list(SCENARIOS)}")
        self.settings()

    def settings(self) -> TeleopSettings:
        """The :class:`.run.TeleopSettings` of these parameters (one seed, one model, this scenario)."""
        from .run import TeleopSettings

        return TeleopSettings(robot=self.teleop_robot, models=(self.teleop_model,), scenarios=(self.teleop_scenario,),
                              seeds=(int(self.teleop_seed),), duration=self.teleop_duration,
                              amplitude=self.teleop_amplitude, hand_stiffness=self.teleop_hand_stiffness or None,
                              hand_damping=self.teleop_hand_damping or None, position_scale=self.teleop_position_scale)

    def external(self) -> ExternalForces | None:
        """This arm's external forces (the leader's :class:`~deadzone_id_ros.teleop.sim.OperatorHand`, the follower's
        obstacle or push), unbound; None without a role.

        Raises:
            FileNotFoundError, ConfigError: the profile or model cannot be loaded.
        """
        if not self.teleop_role:
            return None
        from ...teleop.build import arm_setup
        from .run import case_world

        arm = arm_setup(self.teleop_robot, self.teleop_model, friction=False)  # the world needs no force sensor
        hand, world, _, _ = case_world(arm, arm, self.teleop_scenario, int(self.teleop_seed), self.settings())
        return hand if self.teleop_role == "leader" else world
