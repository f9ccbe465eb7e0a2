"""The robot check (``deadzone-id robot check PROFILE``): a short in-process closed-loop test of a robot profile in
the simulator that says what is wrong and what to change (:mod:`.run`), with its typed results (:mod:`.results`)."""

from .results import (
    CHATTER_FRACTION,
    LIMIT_FRACTION,
    MOVING_FRACTION,
    NOISE_FLOOR_FRACTION,
    TRACKING_FRACTION,
    CheckSettings,
    Finding,
    JointFigures,
    RobotCheck,
)
from .run import run_check, write_check

__all__ = ["CHATTER_FRACTION", "LIMIT_FRACTION", "MOVING_FRACTION", "NOISE_FLOOR_FRACTION", "TRACKING_FRACTION",
           "CheckSettings", "Finding", "JointFigures", "RobotCheck", "run_check", "write_check"]
