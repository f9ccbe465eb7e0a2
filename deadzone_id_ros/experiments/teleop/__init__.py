"""``deadzone-id teleop``: leader–follower teleoperation with force feedback, in process (core, no ROS).

- :mod:`.run`: the scenarios and their figures.  :mod:`.results`: typed results.  :mod:`.report`: markdown, JSON,
  plots.  :mod:`.record`: a demonstration as one rosbag2.
"""

from .results import CaseFigures, TeleopResults
from .run import SCENARIOS, TeleopSettings, run_case, run_teleop

__all__ = ["SCENARIOS", "CaseFigures", "TeleopResults", "TeleopSettings", "run_case", "run_teleop"]
