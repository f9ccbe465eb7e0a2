"""The controller's choice of /joint_states messages by joint name (the ROS-free part of issue 22 item 5)."""

from __future__ import annotations

from deadzone_id_ros.control.state_names import StateNameMap


def test_foreign_messages_are_counted_and_reported_once_missing_joints_every_time():
    foreign, missing = [], []
    names = StateNameMap(("j1", "j2"), foreign.append, lambda m, k: missing.append((m, k)))
    assert names.indices(("j2", "grip", "j1")).tolist() == [2, 0]
    for _ in range(3):
        assert names.indices(("grip_l", "grip_r")) is None
    assert foreign == [("grip_l", "grip_r")] and names.foreign_states == 3
    assert names.foreign_names == ("grip_l", "grip_r")
    for _ in range(2):
        assert names.indices(("j1", "grip_l")) is None
    assert missing == [(["j2"], ("j1", "grip_l"))] * 2 and names.foreign_states == 3
