"""``deadzone-id teleop``: leader–follower teleoperation with force feedback, in process (core, no ROS).

- :mod:`.run`: the scenarios and their figures.  :mod:`.results`: typed results.  :mod:`.report`: markdown, JSON,
  plots.  :mod:`.record`: a demonstration as one rosbag2.
"""

from typing import Any

from .results import SCENARIOS, CaseFigures, TeleopResults


def __getattr__(name: str) -> Any:
    """The runner's names, imported on first use (they load MuJoCo; the command line's parser must not)."""
    if name in ("TeleopSettings", "run_case", "run_teleop"):
        from . import run

        return getattr(run, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

__all__ = ["SCENARIOS", "CaseFigures", "TeleopResults", "TeleopSettings", "run_case", "run_teleop"]
