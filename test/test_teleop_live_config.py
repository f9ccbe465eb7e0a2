"""The settings of the live teleoperation run (no ROS graph): the teleop_bilateral node's parameters
(:class:`TeleopNodeConfig`) and sim_arm's teleoperation world (:class:`TeleopWorldConfig`)."""

from __future__ import annotations

import numpy as np
import pytest

from deadzone_id_ros.errors import SafetyError
from deadzone_id_ros.experiments.teleop.world import TeleopWorldConfig
from deadzone_id_ros.teleop.node_config import TeleopNodeConfig
from deadzone_id_ros.teleop.sim import OperatorHand


def test_joint_map_entries_parse_and_bad_ones_are_named():
    assert TeleopNodeConfig().mapping() is None
    cfg = TeleopNodeConfig(joint_map=("joint1:joint1", " joint2 : joint2", "joint3:joint3"))
    assert cfg.mapping() == {"joint1": "joint1", "joint2": "joint2", "joint3": "joint3"}
    for bad in (("joint1",), ("joint1:",), ("joint1:joint1", "joint1:joint2")):
        with pytest.raises(ValueError, match="must be 'follower_joint:leader_joint'"):
            TeleopNodeConfig(joint_map=bad)
    with pytest.raises(ValueError, match="mode = 'bilateal'"):
        TeleopNodeConfig(mode="bilateal")
    with pytest.raises(ValueError, match="max_stamp_skew = -0.001"):
        TeleopNodeConfig(max_stamp_skew=-0.001)


def test_the_node_builds_the_pair_and_refuses_profiles_it_cannot_map():
    ctl = TeleopNodeConfig(model="nominal", joint_map=("joint1:joint1", "joint2:joint2", "joint3:joint3")).build()
    assert ctl.map.follower_joints == ("joint1", "joint2", "joint3")
    assert ctl.config.dead_zone is False  # the nominal model has no band: nothing to shrink
    uni = TeleopNodeConfig(model="identified", mode="unilateral").build()
    assert uni.config.dead_zone is True and not uni.leader.config.uses_dob  # the leader must not resist the operator
    with pytest.raises(SafetyError, match=r"cannot map.*shoulder_pan.*joint1.*refusing to start"):
        TeleopNodeConfig(model="nominal", leader_robot="three_dof_arm", follower_robot="so101").build()


def test_world_roles_give_the_hand_and_the_box_of_the_in_process_scenario():
    with pytest.raises(ValueError, match="teleop_role = 'boss'"):
        TeleopWorldConfig(teleop_role="boss")
    with pytest.raises(ValueError, match="teleop_scenario = 'dance'"):
        TeleopWorldConfig(teleop_scenario="dance")
    assert TeleopWorldConfig().external() is None
    hand = TeleopWorldConfig(teleop_role="leader", teleop_scenario="free", teleop_seed=2).external()
    assert isinstance(hand, OperatorHand) and hand.reference is not None
    other = TeleopWorldConfig(teleop_role="leader", teleop_scenario="free", teleop_seed=3).external()
    assert isinstance(other, OperatorHand) and other.reference is not None
    assert not np.allclose(hand.reference(1.0), other.reference(1.0))  # the seed sets the free-motion phases
    box = TeleopWorldConfig(teleop_role="follower", teleop_scenario="hold").external()
    assert box is not None and box.obstacle is not None and not box.pushes
    push = TeleopWorldConfig(teleop_role="follower", teleop_scenario="stuck").external()
    assert push is not None and push.obstacle is None and len(push.pushes) == 1
    free = TeleopWorldConfig(teleop_role="follower", teleop_scenario="free").external()
    assert free is not None and free.obstacle is None and not free.pushes
    # the hand: sized to the arm by default (0), as deadzone-id teleop's; a given stiffness taken as it is
    assert (list(hand.stiffness), list(hand.damping)) == ([10.0] * 3, [0.5] * 3)
    given = TeleopWorldConfig(teleop_role="leader", teleop_hand_stiffness=4.0, teleop_hand_damping=0.3).external()
    assert isinstance(given, OperatorHand)
    assert (list(given.stiffness), list(given.damping)) == ([4.0] * 3, [0.3] * 3)
