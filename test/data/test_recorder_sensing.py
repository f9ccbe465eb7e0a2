"""The recorder keeps the force-sensing topics beside /joint_states: the external torque is stamped with the state it
was computed from, so each JointState topic is checked against its own previous stamp, never another topic's."""

from __future__ import annotations

from deadzone_id_ros.data.bag import MessageEncoders, open_bag, read_joint_states
from deadzone_id_ros.data.recorder import EpisodeWriter, RecorderConfig

T0 = 1_700_000_000_000_000_000


def test_external_torque_with_the_states_stamps_is_recorded_in_full(tmp_path):
    w = EpisodeWriter(RecorderConfig(output_dir=str(tmp_path)))
    enc = MessageEncoders(["j1", "j2"])
    path = w.start(T0)
    w.set_joint_names(["j1", "j2"])
    for k in range(50):
        t = T0 + k * 1_000_000
        w.write("/joint_states", t, enc.joint_state(t, [k, -k], [1.0, 1.0], [0.1, 0.2]))
        w.write("/feedforward_controller/external_torque", t, enc.joint_state(t, [], [], [0.01 * k, 0.0]))
    _, counts = w.stop(T0 + 60_000_000)
    assert counts["/joint_states"] == 50 and counts["/feedforward_controller/external_torque"] == 50, w.skipped
    assert not w.skipped
    with open_bag(path) as handle:
        series = read_joint_states(handle, "/feedforward_controller/external_torque")
    assert len(series) == 50
