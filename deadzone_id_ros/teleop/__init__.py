"""Leader–follower teleoperation with force feedback on arms without force sensors (core, no ROS).

- :mod:`.joint_map`: which leader joint drives which follower joint; refuses profiles that cannot be mapped.
- :mod:`.bilateral`: the four-channel bilateral controller (and the unilateral position copy) on two
  :class:`~deadzone_id_ros.control.FeedforwardController` instances, so every single-arm safety limit holds on both.
- :mod:`.sim`: the whole setup in process: two simulated arms, a scripted operator (an impedance on the leader) and
  an obstacle for the follower.

See docs/teleoperation.md.
"""

from .bilateral import TELEOP_MODES, BilateralConfig, BilateralController, BilateralSample
from .joint_map import JointMap

__all__ = ["TELEOP_MODES", "BilateralConfig", "BilateralController", "BilateralSample", "JointMap"]
