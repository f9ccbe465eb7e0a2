"""Teleoperation demonstrations -> LeRobot v2.1 dataset (issue 38 item 3): `export-lerobot` and `teleop --lerobot`.

The demonstrations are small synthetic :class:`TeleopTrace` runs written by the product's own bag writer
(:func:`trace_to_bag`, 1 kHz, smooth and different signals per field, the leader's joints in another order than the
follower's); the datasets are read back with the product's LeRobot reader and with pyarrow.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from deadzone_id_ros.data.bag import read_recording
from deadzone_id_ros.data.bag.namespaced import arm_topics, write_namespaced
from deadzone_id_ros.data.lerobot import lerobot_recordings, open_lerobot
from deadzone_id_ros.data.lerobot_export import DemoTopics, export_lerobot
from deadzone_id_ros.data.types import Recording
from deadzone_id_ros.errors import DataError
from deadzone_id_ros.experiments.teleop.record import trace_to_bag
from deadzone_id_ros.teleop.sim import TeleopTrace

JOINTS = ("joint1", "joint2", "joint3")
LEADER = ("joint3", "joint1", "joint2")  # the leader's messages list the joints in another order
START = 1.7e9  # [s since epoch]


def _trace(seconds: float = 1.0, seed: int = 0) -> TeleopTrace:
    """A 1 kHz trace; every field a different smooth signal (leader arrays in LEADER order)."""
    rng = np.random.default_rng(seed)
    t = np.arange(int(round(seconds * 1000))) * 1e-3

    def sig() -> np.ndarray:
        f, ph, a = rng.uniform(0.5, 3.0, 3), rng.uniform(0, np.pi, 3), rng.uniform(0.2, 1.5, 3)
        return a * np.sin(2 * np.pi * f * t[:, None] + ph)

    names = [f.name for f in TeleopTrace.__dataclass_fields__.values() if f.name not in ("t", "fault", "wall_s")]
    return TeleopTrace(t=t, **{n: sig() for n in names})


@pytest.fixture
def demo(tmp_path):
    tr = _trace()
    return tr, trace_to_bag(tr, LEADER, JOINTS, tmp_path / "demo", start_time=START, metadata={"robot": "rig"})


def _at_frames(rec: Recording, values: np.ndarray, frame_ns: np.ndarray) -> np.ndarray:
    """``values`` (M, J) of a recording interpolated at the frame stamps [ns]."""
    x = (rec.state_t_ns - frame_ns[0]) / 1e9
    return np.stack([np.interp((frame_ns - frame_ns[0]) / 1e9, x, values[:, j]) for j in range(values.shape[1])],
                    axis=1)


def test_round_trip_through_the_products_lerobot_reader(demo, tmp_path):
    """Export at 30 fps (frames between the 1 kHz samples), read back with data/lerobot.py (unit rad): the follower's
    joints, q and effort equal the bag's at the frame times, the frame count is the span times fps plus one; the
    action is the leader's q mapped onto the follower's joints; the forces are the bag's."""
    tr, bag = demo
    res = export_lerobot([bag], tmp_path / "ds", fps=30)
    span = tr.t[-1] - tr.t[0]
    assert res.episodes[0].frames == int(np.floor(span * 30 + 1e-9)) + 1 == 30
    assert not res.notes and res.joints == JOINTS

    ds = open_lerobot(res.root)
    assert ds.joint_names == JOINTS and ds.fps == 30 and ds.frames == 30 and ds.robot_type == "rig"
    assert ds.effort_key == "observation.effort" and ds.effort_unit == "N*m"
    [(index, back)] = lerobot_recordings(ds, "rad", res.episodes[0].start_ns)
    frame_ns = back.state_t_ns
    np.testing.assert_allclose(np.diff(frame_ns), 1e9 / 30, atol=1e3)  # float32 timestamps: within 1 µs

    follower = read_recording(bag, **{k + "_topic" if k != "state" else "joint_state_topic": v
                                      for k, v in arm_topics("follower").items()})
    np.testing.assert_allclose(back.position, _at_frames(follower, follower.position, frame_ns), atol=2e-6)
    np.testing.assert_allclose(back.effort, _at_frames(follower, follower.effort, frame_ns), atol=2e-6)
    assert np.abs(np.diff(back.position, axis=0)).max() > 1e-2  # the signals move: the check can tell frames apart

    import pyarrow.parquet as pq

    table = pq.read_table(res.root / "data" / "chunk-000" / "episode_000000.parquet")
    col = {k: np.asarray(table.column(k).to_pylist(), dtype=float) for k in table.column_names}
    t = (frame_ns - frame_ns[0]) / 1e9
    leader_q = np.stack([np.interp(t, tr.t, tr.q_l[:, LEADER.index(j)]) for j in JOINTS], axis=1)
    np.testing.assert_allclose(col["action"], leader_q, atol=2e-6)
    for key, arr in (("observation.external_torque", tr.est_f), ("observation.external_torque_true", tr.true_f),
                     ("observation.external_torque_half_width", tr.half_f), ("observation.velocity", tr.dq_f)):
        want = np.stack([np.interp(t, tr.t, arr[:, j]) for j in range(3)], axis=1)
        np.testing.assert_allclose(col[key], want, atol=2e-6, err_msg=key)
    want = np.stack([np.interp(t, tr.t, tr.est_l[:, LEADER.index(j)]) for j in JOINTS], axis=1)
    np.testing.assert_allclose(col["leader.external_torque"], want, atol=2e-6)


def test_layout_info_episodes_and_stats_agree_with_the_parquet_files(tmp_path):
    """Two demonstrations, one dataset: info.json's keys, feature shapes and totals match the parquet files,
    episodes.jsonl, tasks.jsonl and episodes_stats.jsonl; index runs on over the episodes; units are stated."""
    import pyarrow.parquet as pq

    bags = [trace_to_bag(_trace(s, seed), LEADER, JOINTS, tmp_path / f"d{seed}", start_time=START)
            for seed, s in ((1, 0.6), (2, 0.9))]
    res = export_lerobot(bags, tmp_path / "ds", fps=20, task="hold the box")
    root = res.root
    info = json.loads((root / "meta" / "info.json").read_text())
    assert info["codebase_version"] == "v2.1" and info["fps"] == 20 and info["video_path"] is None
    for key in ("robot_type", "total_episodes", "total_frames", "total_tasks", "chunks_size", "splits", "data_path",
                "features"):
        assert key in info, key
    episodes = [json.loads(x) for x in (root / "meta" / "episodes.jsonl").read_text().splitlines()]
    tasks = [json.loads(x) for x in (root / "meta" / "tasks.jsonl").read_text().splitlines()]
    stats = [json.loads(x) for x in (root / "meta" / "episodes_stats.jsonl").read_text().splitlines()]
    assert tasks == [{"task_index": 0, "task": "hold the box"}]
    assert [e["length"] for e in episodes] == [12, 18] == [e.frames for e in res.episodes]  # 0.599 s, 0.899 s at 20 fps
    assert info["total_episodes"] == 2 and info["total_frames"] == 30 and info["splits"] == {"train": "0:2"}
    assert info["units"]["observation.state"] == "rad" and info["units"]["observation.effort"] == "N*m"
    features = info["features"]
    assert features["observation.state"]["names"] == [f"{j}.pos" for j in JOINTS]
    assert features["action"]["names"] == [f"{j}.pos" for j in JOINTS]
    index = []
    for e in episodes:
        path = root / info["data_path"].format(episode_chunk=0, episode_index=e["episode_index"])
        table = pq.read_table(path)
        assert sorted(table.column_names) == sorted(features) and table.num_rows == e["length"]
        for key, ft in features.items():
            rows = table.column(key).to_pylist()
            assert all(len(r) == ft["shape"][0] for r in rows) if ft["shape"] != [1] else \
                all(not isinstance(r, list) for r in rows), key
        index += table.column("index").to_pylist()
        st = stats[e["episode_index"]]["stats"]
        assert set(st) == set(features) and st["observation.state"]["count"] == [e["length"]]
        q = np.asarray(table.column("observation.state").to_pylist())
        np.testing.assert_allclose(st["observation.state"]["max"], q.max(axis=0), rtol=1e-6)
        np.testing.assert_allclose(st["observation.state"]["mean"], q.mean(axis=0), rtol=1e-5, atol=1e-7)
        assert table.column("episode_index").to_pylist() == [e["episode_index"]] * e["length"]
        assert table.column("task_index").to_pylist() == [0] * e["length"]
    assert index == list(range(30))


def test_a_missing_required_topic_is_named_and_optional_ones_are_left_out(tmp_path):
    tr = _trace(0.3)
    t_ns = (START * 1e9 + tr.t * 1e9).astype(np.int64)
    follower = Recording(JOINTS, t_ns, tr.q_f, tr.dq_f, tr.eff_f)
    only_follower = write_namespaced({"follower": follower}, tmp_path / "f")
    with pytest.raises(DataError, match=r"required topic /leader/joint_states \(leader joint_states\) not in bag"):
        export_lerobot([only_follower], tmp_path / "ds1")
    assert not (tmp_path / "ds1").exists()

    leader = Recording(LEADER, t_ns, tr.q_l, tr.dq_l, tr.eff_l)
    empty = {"/follower/external_torque/true": (np.zeros(0, dtype=np.int64), np.zeros((0, 3)), "follower")}
    plain = write_namespaced({"follower": follower, "leader": leader}, tmp_path / "plain", extra=empty)
    res = export_lerobot([plain], tmp_path / "ds2")  # no external-torque message: left out, each named
    assert "observation.external_torque" not in res.features and "observation.effort" in res.features
    assert any("/follower/external_torque/estimated not in bag" in n for n in res.notes)
    assert any("observation.external_torque_true left out: topic /follower/external_torque/true has no usable "
               "message" in n for n in res.notes), res.notes
    assert "observation.external_torque" not in json.loads((res.root / "meta/info.json").read_text())["features"]

    with pytest.raises(DataError, match="it exists"):
        export_lerobot([plain], tmp_path / "ds2")
    other = Recording(("a", "b", "c"), t_ns, tr.q_l, tr.dq_l, tr.eff_l)
    bad = write_namespaced({"follower": follower, "leader": other}, tmp_path / "bad")
    with pytest.raises(DataError, match=r"joints \['a', 'b', 'c'\] disagree with the follower's"):
        export_lerobot([bad], tmp_path / "ds3")
    with pytest.raises(DataError, match="required topic /arm/joint_states"):
        export_lerobot([plain], tmp_path / "ds4", topics=DemoTopics(follower_state="/arm/joint_states"))


def test_a_topic_that_ends_a_sample_early_holds_its_last_value(tmp_path):
    """A live node's estimate may end a sample or two before the states: the last frame holds its last value (no
    NaN, which would break training); a topic that ends more than a frame period early leaves NaN there, named."""
    import pyarrow.parquet as pq

    tr = _trace(0.501)  # states 0 to 500 ms: frames 0, 20, ..., 500 ms at 50 fps
    t_ns = (START * 1e9 + tr.t * 1e9).astype(np.int64)
    arms = {"follower": Recording(JOINTS, t_ns, tr.q_f, tr.dq_f, tr.eff_f),
            "leader": Recording(LEADER, t_ns, tr.q_l, tr.dq_l, tr.eff_l)}
    lagging = {"/follower/external_torque/estimated": (t_ns[:-2], tr.est_f[:-2], "follower"),  # last at 498 ms
               "/follower/external_torque/true": (t_ns[:390], tr.true_f[:390], "follower")}  # last at 389 ms
    res = export_lerobot([write_namespaced(arms, tmp_path / "lag", extra=lagging)], tmp_path / "ds", fps=50)
    table = pq.read_table(res.root / "data/chunk-000/episode_000000.parquet").to_pydict()
    est = np.array(table["observation.external_torque"])
    assert len(est) == 26 and np.all(np.isfinite(est))
    np.testing.assert_allclose(est[-1], tr.est_f[-3], rtol=1e-6)  # float32: the held last value
    true = np.array(table["observation.external_torque_true"])
    assert np.all(np.isfinite(true[:21])) and np.all(np.isnan(true[21:]))  # held to 400 ms, NaN from 420 ms
    assert any("observation.external_torque_true" in n and "5 of 26 frames" in n for n in res.notes), res.notes
    assert not any("observation.external_torque:" in n for n in res.notes), res.notes


def _live_bag(path, tr: TeleopTrace):
    """A bag as the live launch's recorder writes one: every topic sensor_msgs/JointState stamped with the simulated
    time (the first state of each arm stamped zero, before the simulator's first step), logged at the wall-clock
    receive time (5 s later, jittered); the torques under the live nodes' names, the leader's in LEADER order."""
    from rosbags.rosbag2 import StoragePlugin, Writer

    from deadzone_id_ros.data.bag import JOINT_STATE_TYPE, MessageEncoders, typestore

    live = DemoTopics.live()
    stamp = (START * 1e9 + tr.t * 1e9).astype(np.int64)
    log = stamp + 5_000_000_000 + np.random.default_rng(1).integers(0, 400_000, len(stamp))
    zeros = np.zeros_like(tr.q_f)
    topics = {live.follower_state: (JOINTS, tr.q_f, tr.dq_f, tr.eff_f), live.leader_state: (LEADER, tr.q_l, tr.dq_l,
                                                                                             tr.eff_l),
              live.follower_torque: (JOINTS, zeros, zeros, tr.est_f), live.follower_true: (JOINTS, zeros, zeros,
                                                                                           tr.true_f),
              live.leader_torque: (LEADER, zeros, zeros, tr.est_l)}
    rows = sorted((int(log[i]), topic, i) for topic in topics for i in range(len(stamp)))
    with Writer(path, version=9, storage_plugin=StoragePlugin.MCAP) as writer:
        conns = {t: writer.add_connection(t, JOINT_STATE_TYPE, typestore=typestore()) for t in topics}
        enc = {t: MessageEncoders(v[0]) for t, v in topics.items()}
        for log_ns, topic, i in rows:
            _, q, dq, eff = topics[topic]
            t_ns = 0 if i == 0 and topic.endswith("joint_states") else int(stamp[i])
            writer.write(conns[topic], log_ns, enc[topic].joint_state(t_ns, q[i], dq[i], eff[i]))
    return path


def test_a_live_recording_jointstate_torques_on_header_stamps(tmp_path, capsys):
    """The live launch's torque topics are sensor_msgs/JointState (effort, mapped by joint name) under the nodes'
    names (--live): read on header stamps like the states (not the receive times, 5 s later), the zero-stamped first
    states left out, the topics the recording lacks (the bands, the leader's true torque) left out and named."""
    from deadzone_id_ros.cli.main import main

    tr = _trace(0.5)
    bag = _live_bag(tmp_path / "live", tr)
    out = tmp_path / "ds"
    assert main(["export-lerobot", str(bag), "--out", str(out), "--fps", "25", "--live"]) == 0
    err = capsys.readouterr().err
    assert "observation.external_torque_half_width left out: topic /teleop_bilateral/follower/external_torque_band " \
           "not in bag" in err and "/leader/leader_sim/true_external_torque not in bag" in err
    import pyarrow.parquet as pq

    table = pq.read_table(out / "data/chunk-000/episode_000000.parquet")
    assert table.num_rows == 13  # from the second state (1 ms) to the last (499 ms) at 25 fps
    t = 1e-3 + np.arange(table.num_rows) / 25
    for key, arr, order in (("observation.external_torque", tr.est_f, JOINTS),
                            ("observation.external_torque_true", tr.true_f, JOINTS),
                            ("leader.external_torque", tr.est_l, LEADER), ("observation.state", tr.q_f, JOINTS),
                            ("action", tr.q_l, LEADER)):
        want = np.stack([np.interp(t, tr.t, arr[:, order.index(j)]) for j in JOINTS], axis=1)
        np.testing.assert_allclose(np.asarray(table.column(key).to_pylist()), want, atol=2e-6, err_msg=key)


def test_cli_exports_and_names_what_it_left_out(demo, tmp_path, capsys):
    from deadzone_id_ros.cli.main import main

    _, bag = demo
    out = tmp_path / "ds"
    assert main(["export-lerobot", str(bag), "--out", str(out), "--fps", "25", "--topic", "leader_true=",
                 "--topic", "follower_true=/nowhere"]) == 0
    cap = capsys.readouterr()
    assert f"wrote LeRobot dataset {out} (v2.1): 1 episode(s), 25 frames at 25 fps" in cap.out
    assert "observation.external_torque_true left out: topic /nowhere not in bag" in cap.err
    features = json.loads((out / "meta/info.json").read_text())["features"]
    assert "leader.external_torque_true" not in features and "observation.external_torque_true" not in features
    assert main(["export-lerobot", str(bag), "--out", str(tmp_path / "x"), "--topic", "torque=/t"]) == 2
    assert "--topic 'torque=/t' must be KEY=TOPIC with KEY one of" in capsys.readouterr().err


def test_convert_takes_the_exports_stated_units(demo, tmp_path, capsys):
    """The export states rad and N·m in info.json: inspect says so, and convert needs no --position-unit and asks for
    no torque constant (a dataset without the key still needs --position-unit: LeRobot records no unit)."""
    from deadzone_id_ros.cli.main import main

    _, bag = demo
    ds_dir = tmp_path / "ds"
    export_lerobot([bag], ds_dir)
    ds = open_lerobot(ds_dir)
    assert ds.position_unit == "rad"
    assert main(["inspect", str(ds_dir)]) == 0
    out = capsys.readouterr().out
    assert "positions: unit rad (info.json units)" in out and "--torque-constant" not in out
    assert main(["convert", str(ds_dir), "--out", str(tmp_path / "bags")]) == 0
    out = capsys.readouterr().out
    assert "next: deadzone-id inspect" in out and "--torque-constant" not in out
    rec = read_recording(tmp_path / "bags" / "episode_000000")
    np.testing.assert_allclose(rec.position, lerobot_recordings(ds, "rad", 0)[0][1].position)
    info = json.loads((ds_dir / "meta/info.json").read_text())
    del info["units"]
    (ds_dir / "meta/info.json").write_text(json.dumps(info))
    assert open_lerobot(ds_dir).position_unit == ""
    assert main(["convert", str(ds_dir), "--out", str(tmp_path / "bags2")]) == 2
    assert "give --position-unit" in capsys.readouterr().err


def test_lerobots_own_loader_reads_the_export(demo, tmp_path, monkeypatch):
    """lerobot's ``LeRobotDataset`` of format v2.1 (lerobot 0.3.x; skipped where it is not installed, it is no
    requirement) loads the export: its timestamp check, stats and frames, and an action chunk by delta_timestamps."""
    lerobot_dataset = pytest.importorskip("lerobot.datasets.lerobot_dataset")
    if lerobot_dataset.CODEBASE_VERSION != "v2.1":
        pytest.skip(f"lerobot writes format {lerobot_dataset.CODEBASE_VERSION}, not v2.1")
    import pyarrow.parquet as pq

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    tr, bag = demo
    res = export_lerobot([bag, trace_to_bag(_trace(seed=3), LEADER, JOINTS, tmp_path / "d2", start_time=START)],
                         tmp_path / "ds", task="hold the box")
    ds = lerobot_dataset.LeRobotDataset("local/teleop_demo", root=res.root,
                                        delta_timestamps={"action": [0.0, 0.02, 0.04]})
    assert ds.num_episodes == 2 and ds.num_frames == res.frames == 100 and ds.fps == 50
    item = ds[res.episodes[0].frames + 7]
    assert int(item["episode_index"]) == 1 and int(item["frame_index"]) == 7 and item["task"] == "hold the box"
    q = pq.read_table(res.root / "data/chunk-000/episode_000001.parquet").column("observation.state").to_pylist()
    np.testing.assert_allclose(item["observation.state"].numpy(), q[7])
    assert tuple(item["action"].shape) == (3, 3) and not item["action_is_pad"].any()
    np.testing.assert_allclose(ds.meta.stats["observation.state"]["max"],
                               np.max(np.asarray(q + pq.read_table(res.root / "data/chunk-000/episode_000000.parquet")
                                                 .column("observation.state").to_pylist()), axis=0), rtol=1e-6)


def test_without_live_each_bag_is_read_with_the_topics_it_holds(demo, tmp_path, capsys):
    """An in-process bag and a live recording in one export, no --live: each bag's estimates are found (with the
    in-process topics alone, the live bag's would be left out)."""
    from deadzone_id_ros.cli.main import main

    _, inproc = demo
    live = _live_bag(tmp_path / "live", _trace(0.5))
    out = tmp_path / "ds"
    assert main(["export-lerobot", str(inproc), str(live), "--out", str(out), "--fps", "25"]) == 0
    err = capsys.readouterr().err
    features = json.loads((out / "meta/info.json").read_text())["features"]
    assert {"observation.external_torque", "observation.external_torque_true", "leader.external_torque"} <= set(
        features), (sorted(features), err)
    assert DemoTopics.detect({"/follower/joint_states"}) == DemoTopics()  # nothing to tell: the defaults
