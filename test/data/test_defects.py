"""Recording defects (issue 11, items 1-3 and 5) on every input path: ROS 2 bags (MCAP), ROS 1 bags and in-memory
recordings (the recorder's and the simulator's path); bags are written in tmp_path with rosbags' own Writers."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from data_helpers import T0, make_recording, sine_messages, write_joint_state_bag

from deadzone_id_ros.data.dataset import DatasetConfig, dataset_from_recordings, load_dataset
from deadzone_id_ros.errors import DataError

STEP = 5_000_000  # 200 Hz [ns]


def write_ros1_joint_state_bag(path: Path, messages: list[dict], topic: str = "/joint_states") -> Path:
    """The same hand-made JointState messages as a ROS 1 bag (rosbags' rosbag1 Writer, Noetic types)."""
    from rosbags.rosbag1 import Writer
    from rosbags.typesys import Stores, get_typestore

    ts = get_typestore(Stores.ROS1_NOETIC)
    JS, Header, Time = ts.types["sensor_msgs/msg/JointState"], ts.types["std_msgs/msg/Header"], ts.types[
        "builtin_interfaces/msg/Time"]
    with Writer(path) as w:
        conn = w.add_connection(topic, "sensor_msgs/msg/JointState", typestore=ts)
        for k, m in enumerate(messages):
            t = int(m["t"])
            msg = JS(header=Header(seq=k, stamp=Time(sec=t // 10**9, nanosec=t % 10**9), frame_id=""),
                     name=list(m["name"]), position=np.asarray(m.get("position", []), float),
                     velocity=np.asarray(m.get("velocity", []), float), effort=np.asarray(m.get("effort", []), float))
            w.write(conn, int(m.get("log", t)), ts.serialize_ros1(msg, "sensor_msgs/msg/JointState"))
    return path


WRITERS = {"ros2": lambda p, m: write_joint_state_bag(p, m), "ros1": lambda p, m: write_ros1_joint_state_bag(
    p.with_suffix(".bag"), m)}


def _split(msgs: list[dict], offset_ns: int = 1_000_000) -> list[dict]:
    """Each message split in two: joints a, b (one driver) and joint c (another driver, ``offset_ns`` later)."""
    out = []
    for m in msgs:
        for sel, dt in (([0, 1], 0), ([2], offset_ns)):
            out.append({"t": m["t"] + dt, "name": [m["name"][i] for i in sel],
                        **{f: np.asarray(m[f])[sel] for f in ("position", "velocity", "effort")}})
    return out


# --- 1. joints split across publishers


@pytest.mark.parametrize("fmt", ["ros2", "ros1"])
def test_joints_split_across_publishers_are_merged_by_name(tmp_path, fmt):
    whole = sine_messages(400, names=("a", "b", "c"))
    ref = load_dataset([WRITERS[fmt](tmp_path / "whole", whole)])
    ds = load_dataset([WRITERS[fmt](tmp_path / "split", _split(whole))])
    rep = next(iter(ds.report.bags.values()))
    assert ds.joint_names == ("a", "b", "c")
    assert rep.messages_merged == 400 and rep.merge_unmatched == 1  # the first a,b message has no c before it
    assert "split across publishers" in " ".join(ds.report.warnings) and "0.02 s" in " ".join(ds.report.warnings)
    assert ds.num_samples == ref.num_samples - 1
    # joint c's values are stamped 1 ms late by construction (<= 2 pi rad/s x 1 ms), then interpolated linearly
    # between its own messages 5 ms apart (error <= (2 pi)^2 (5 ms)^2 / 8)
    np.testing.assert_allclose(ds.episodes[0].q, ref.episodes[0].q[1:],
                               atol=2 * np.pi * 1e-3 + (2 * np.pi * 5e-3) ** 2 / 8)
    np.testing.assert_allclose(ds.episodes[0].q[:, :2], ref.episodes[0].q[1:, :2], atol=1e-12)


def test_split_publishers_beyond_tolerance_are_refused_naming_topic_and_joints_option(tmp_path):
    msgs = _split(sine_messages(400, names=("a", "b", "c")), offset_ns=2_500_000)  # c always 2.5 ms off
    bag = write_joint_state_bag(tmp_path / "b", msgs)
    with pytest.raises(DataError, match=r"topic /joint_states: joints are split across publishers .*\['a', 'b'\].*"
                                        r"\['c'\].*merge_tolerance_s = 0.001 s.*--joints"):
        load_dataset([bag], DatasetConfig(merge_tolerance_s=0.001))
    ds = load_dataset([bag], DatasetConfig(joints=("a", "b"), merge_tolerance_s=0.001))  # one publisher's joints
    assert ds.report.messages_without_joints == 400 and ds.report.nan_samples_dropped == 0
    assert ds.joint_names == ("a", "b")


# --- 2. a velocity field that is not the derivative of position


@pytest.mark.parametrize("fault", ["constant", "degrees", "sign", "maximum"])
@pytest.mark.parametrize("fmt", ["ros2", "ros1"])
def test_velocity_not_derivative_of_position_is_replaced(tmp_path, fmt, fault):
    msgs = sine_messages(600)
    truth = [np.asarray(m["velocity"]).copy() for m in msgs]
    for m in msgs:
        v = np.asarray(m["velocity"], float)
        m["velocity"] = {"constant": np.array([1.0, v[1]]), "degrees": np.degrees(v), "sign": -v,
                         "maximum": np.array([np.pi, v[1]])}[fault]
    ds = load_dataset([WRITERS[fmt](tmp_path / "b", msgs)])
    rep = next(iter(ds.report.bags.values()))
    assert rep.velocity_source == "savgol derivative of position"
    assert "a" in rep.velocity_mismatch
    text = " ".join(ds.report.warnings)
    assert "field velocity is not the derivative of position (a: gain" in text and "correlation" in text
    dq_true = np.asarray(truth)[: len(ds.episodes[0])]
    assert np.abs(ds.episodes[0].dq[20:-20, 0] - dq_true[20:-20, 0]).max() < 0.05  # the derivative of q


def test_consistent_velocity_is_kept_and_forced_message_velocity_only_warns(tmp_path):
    msgs = sine_messages(600)
    ds = load_dataset([write_joint_state_bag(tmp_path / "ok", msgs)])
    assert next(iter(ds.report.bags.values())).velocity_source == "message"
    for m in msgs:
        m["velocity"] = -np.asarray(m["velocity"])
    ds = load_dataset([write_joint_state_bag(tmp_path / "neg", msgs)], DatasetConfig(velocity="message"))
    rep = next(iter(ds.report.bags.values()))
    assert rep.velocity_source == "message" and set(rep.velocity_mismatch) == {"a", "b"}


def test_recording_with_wrong_velocity_units_is_differentiated():
    rec = make_recording(2000)
    rec.velocity = np.degrees(rec.velocity)
    ds = dataset_from_recordings([rec])
    assert ds.report.velocity_source["recording0"] == "savgol derivative of position"
    assert set(ds.report.bags["recording0"].velocity_mismatch) == {"joint1", "joint2", "joint3"}


# --- 3. time that jumps backwards


def _max_neighbour_jump(ds) -> float:
    return max(float(np.abs(np.diff(e.q, axis=0)).max()) for e in ds.episodes)


@pytest.mark.parametrize("fmt", ["ros2", "ros1"])
def test_time_reset_splits_episodes_and_says_where(tmp_path, fmt):
    first, second = sine_messages(400), sine_messages(300)
    for m in second:  # a second run appended: its stamps restart at T0 (log time keeps going)
        m["position"] = np.asarray(m["position"]) + 1.0
        m["effort"] = 2 * m["position"] + 1
    msgs = first + second
    for k, m in enumerate(msgs):
        m["log"] = T0 + k * STEP
    ds = load_dataset([WRITERS[fmt](tmp_path / "b", msgs)])
    assert ds.report.resets_split == 1 and len(ds.episodes) == 2
    assert "time jumps back by 1.995 s before message 400" in " ".join(ds.report.warnings)
    assert ds.report.out_of_order_sorted == 0
    assert [len(e) for e in ds.episodes] == [400, 300]
    assert _max_neighbour_jump(ds) < 2 * np.pi * STEP * 1e-9 * 1.01  # no radian jump between neighbours
    assert len({e.name for e in ds.episodes}) == 2


def test_small_disorder_is_sorted_not_split(tmp_path):
    msgs = sine_messages(400)
    msgs[100], msgs[101] = msgs[101], msgs[100]
    for k, m in enumerate(msgs):
        m["log"] = T0 + k * STEP
    ds = load_dataset([write_joint_state_bag(tmp_path / "b", msgs)])
    assert ds.report.resets_split == 0 and ds.report.out_of_order_sorted == 1 and len(ds.episodes) == 1


def test_recording_with_clock_reset_splits():
    rec = make_recording(2000)
    rec.state_t_ns = np.concatenate([rec.state_t_ns[:1200], rec.state_t_ns[:800]])  # a simulation reset
    ds = dataset_from_recordings([rec])
    assert ds.report.resets_split == 1 and len(ds.episodes) == 2
    assert "before message 1200" in " ".join(ds.report.warnings)


# --- 5. effort that is numerically garbage or implausible for the robot's limits


def test_denormal_effort_is_unusable_with_joint_and_reason(tmp_path):
    msgs = sine_messages(400)
    for m in msgs:
        m["effort"] = np.array([m["effort"][0], 1e-310 * np.sign(m["position"][1])])
    ds = load_dataset([write_joint_state_bag(tmp_path / "b", msgs)])
    assert ds.joint_names == ("a",)
    assert "b (numerically garbage: largest magnitude 1e-310 (denormal/underflow level))" in " ".join(
        ds.report.warnings)
    with pytest.raises(DataError, match=r"field effort of joint b: numerically garbage"):
        load_dataset([tmp_path / "b"], DatasetConfig(joints=("a", "b")))


def test_effort_beyond_the_limits_is_implausible(tmp_path):
    bag = write_joint_state_bag(tmp_path / "b", sine_messages(400))  # effort 2 q + 1 reaches 3
    ds = load_dataset([bag], DatasetConfig(effort_limits={"a": 0.5, "b": 5.0}))
    assert ds.joint_names == ("b",)
    assert "a (reaches 3, more than 3x its effort limit 0.5 N·m: physically implausible" in " ".join(
        ds.report.warnings)
    with pytest.raises(DataError, match=r"field effort of joint a: reaches 3"):
        load_dataset([bag], DatasetConfig(joints=("a",), effort_limits={"a": 0.5}))
    with pytest.raises(DataError, match=r"field effort of a reaches 3.*of b reaches 3"):
        load_dataset([bag], DatasetConfig(effort_limits={"a": 0.5, "b": 0.5}))


# --- 6. effort in other units (data side): a torque constant per joint converts at load time


def test_torque_constant_converts_effort_at_load_time(tmp_path):
    bag = write_joint_state_bag(tmp_path / "b", sine_messages(400))  # effort 2 q + 1, "in mA"
    plain = load_dataset([bag])
    ds = load_dataset([bag], DatasetConfig(torque_constants={"a": 0.002}))
    np.testing.assert_allclose(ds.episodes[0].tau[:, 0], 0.002 * plain.episodes[0].tau[:, 0], rtol=1e-12)
    np.testing.assert_array_equal(ds.episodes[0].tau[:, 1], plain.episodes[0].tau[:, 1])
    with pytest.raises(ValueError, match=r"torque_constants: constants \{'a': 0.0\} must be finite and non-zero"):
        DatasetConfig(torque_constants={"a": 0.0})
    # the effort limits judge the converted effort: 3 "mA" x 0.1 N·m/mA is within 3 x 0.5 N·m
    limited = load_dataset([bag], DatasetConfig(effort_limits={"a": 0.5}, torque_constants={"a": 0.1}))
    assert limited.joint_names == ("a", "b")


def test_a_second_publisher_filling_zeros_is_dropped_and_named(tmp_path):
    """Issue 22 item 7 (yahboom_rosmaster issue 4, xarm_ros issue 185): every 10th /joint_states message carries 0.0
    in every position, velocity and effort field for the arm's joints. It used to be read as one stream with no
    warning (0.7 rad position errors, ddq three times the true maximum); it is dropped, counted and named."""
    clean = sine_messages(n=880)
    mixed = [dict(m) for m in clean]
    zeros = np.zeros(2)
    for k in range(5, len(mixed), 10):  # a second publisher's message between two of the arm's, same joints
        t = (mixed[k - 1]["t"] + mixed[k]["t"]) // 2
        mixed.insert(k, {"t": t, "name": ["a", "b"], "position": zeros, "velocity": zeros, "effort": zeros})
    n_zero = len(mixed) - len(clean)
    ref = load_dataset([write_joint_state_bag(tmp_path / "clean", clean)], DatasetConfig(rate_hz=200.0))
    ds = load_dataset([write_joint_state_bag(tmp_path / "mixed", mixed)], DatasetConfig(rate_hz=200.0))
    assert ds.report.to_dict()["zero_filled_dropped"] == n_zero
    assert any(f"{n_zero} of {len(mixed)} message(s) carry 0.0 in every position, velocity and effort field" in w
               and "second publisher filling zeros" in w for w in ds.report.warnings), ds.report.warnings
    q, ref_q = np.concatenate([e.q for e in ds.episodes]), np.concatenate([e.q for e in ref.episodes])
    np.testing.assert_allclose(q, ref_q, atol=1e-9)  # the arm's own stream, as if the zeros were never there
    ddq = np.concatenate([e.ddq for e in ds.episodes])
    assert np.abs(ddq).max() <= 1.05 * np.abs(np.concatenate([e.ddq for e in ref.episodes])).max()


def test_an_arm_at_rest_reporting_zeros_only_is_not_dropped_as_another_publisher(tmp_path):
    """All messages zero is not a second publisher: nothing is dropped here (a later stage says nothing moves)."""
    zeros = np.zeros(2)
    msgs = [{"t": T0 + k * 5_000_000, "name": ["a", "b"], "position": zeros, "velocity": zeros, "effort": zeros}
            for k in range(200)]
    with pytest.raises(DataError, match="position exactly zero in every message"):
        load_dataset([write_joint_state_bag(tmp_path / "rest", msgs)], DatasetConfig(rate_hz=200.0))


def _renamed_mid_recording(tmp_path):
    msgs = sine_messages(n=400)
    for m in msgs[200:]:  # the driver relaunched with a prefix (UR driver tf_prefix, ros_kortex)
        m["name"] = ["arm_a", "arm_b"]
    return write_joint_state_bag(tmp_path / "renamed", msgs), msgs


def test_joints_renamed_mid_recording_name_the_cause_and_a_joint_map_joins_the_runs(tmp_path):
    """Issue 22 item 4 (ros_kortex issue 188, Universal_Robots_ROS2_Driver 924): joint names that change part-way
    were refused as "split across publishers"; the cause is named with the message where it happens, and the
    bag-side joint map it suggests joins the two runs into one."""
    bag, msgs = _renamed_mid_recording(tmp_path)
    with pytest.raises(DataError, match=r"joint names change at message 200: \['a', 'b'\] before it, \['arm_a', "
                                        r"'arm_b'\] from it on: the driver was restarted .*not two publishers.*"
                                        r"--rename-joint arm_a:a arm_b:b"):
        load_dataset([bag], DatasetConfig(rate_hz=200.0))
    ds = load_dataset([bag], DatasetConfig(rate_hz=200.0, joint_renames={"arm_a": "a", "arm_b": "b"}))
    for m in msgs[200:]:
        m["name"] = ["a", "b"]
    ref = load_dataset([write_joint_state_bag(tmp_path / "one_name", msgs)], DatasetConfig(rate_hz=200.0))
    assert ds.joint_names == ("a", "b") and ds.num_samples == ref.num_samples
    np.testing.assert_array_equal(np.concatenate([e.q for e in ds.episodes]),
                                  np.concatenate([e.q for e in ref.episodes]))
    assert ds.report.to_dict()["messages_renamed"] == 200
    assert any("arm_a -> a" in w for w in ds.report.warnings)


def test_a_joint_map_onto_a_joint_the_same_message_carries_is_refused(tmp_path):
    bag = write_joint_state_bag(tmp_path / "both", sine_messages(n=100))
    with pytest.raises(DataError, match=r"message 0 carries \['a', 'b'\], which the joint map renames to one joint "
                                        r"'a'"):
        load_dataset([bag], DatasetConfig(rate_hz=200.0, joint_renames={"b": "a"}))


def test_interleaved_publishers_are_not_called_a_rename(tmp_path):
    msgs = sine_messages(n=400, names=("a", "b", "c", "d"))
    for k, m in enumerate(msgs):  # two drivers, two joints each, in turn, too far apart in time to merge
        keep = ["a", "b"] if k % 2 == 0 else ["c", "d"]
        idx = [("a", "b", "c", "d").index(n) for n in keep]
        m.update(name=keep, position=m["position"][idx], velocity=m["velocity"][idx], effort=m["effort"][idx])
    with pytest.raises(DataError, match="split across publishers") as err:
        load_dataset([write_joint_state_bag(tmp_path / "two", msgs)], DatasetConfig(rate_hz=200.0,
                                                                                    merge_tolerance_s=1e-4))
    assert "restarted" not in str(err.value)


def test_a_continuous_joint_wrapped_at_pi_is_unwrapped_and_its_velocity_field_kept(tmp_path):
    """Issue 20 item 4 (ros2_kortex PR 32): a continuous joint turning at 2 rad/s is reported in [-pi, pi). The
    wrap used to make the velocity check call the (correct) velocity field wrong and replace it: dq spiked to
    hundreds of rad/s and the samples stayed trainable. The angle is unwrapped, counted, and the field kept."""
    rate, n = 200.0, 1200
    msgs = []
    for k in range(n):
        t = k / rate
        turn = 2.0 * t + 0.1 * np.sin(3.0 * t)  # a continuous wrist, always turning one way
        arm = 0.5 * np.sin(2 * np.pi * 0.5 * t)
        q = np.array([(turn + np.pi) % (2 * np.pi) - np.pi, arm])
        dq = np.array([2.0 + 0.3 * np.cos(3.0 * t), 0.5 * 2 * np.pi * 0.5 * np.cos(2 * np.pi * 0.5 * t)])
        msgs.append({"t": T0 + int(round(t * 1e9)), "name": ["wrist", "arm"], "position": q, "velocity": dq,
                     "effort": np.array([0.1, 2 * q[1] + 1])})
    ds = load_dataset([write_joint_state_bag(tmp_path / "wrap", msgs)], DatasetConfig(rate_hz=rate))
    rep = ds.report.to_dict()
    assert rep["angle_wraps_unwrapped"] == 2 and set(rep["velocity_source"].values()) == {"message"}, rep
    assert any("wraps at ±pi" in w and "wrist" in w for w in ds.report.warnings), ds.report.warnings
    dq = np.concatenate([e.dq for e in ds.episodes])
    q = np.concatenate([e.q for e in ds.episodes])
    assert np.abs(dq[:, 0]).max() < 2.5  # no spike at a wrap
    assert np.all(np.diff(q[:, 0]) > 0)  # unwrapped: the wrist keeps turning
