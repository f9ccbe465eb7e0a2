"""LeRobot datasets (issue 40 item 5): `inspect` says what one holds, `convert` makes bags of one that records effort
(its unit carried into training), and one without effort is refused saying why and what to record instead.

The datasets are written in tmp_path with pyarrow in LeRobot's v2.1 layout (meta/info.json, one parquet file per
episode under data/chunk-000/), as an SO-101 follower records them: observation.state and action as list columns
named "<joint>.pos", timestamp, frame_index, episode_index, index, task_index.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from deadzone_id_ros.cli.main import main
from deadzone_id_ros.data.bag import read_recording
from deadzone_id_ros.data.dataset import DatasetConfig, load_dataset
from deadzone_id_ros.data.effort_units import PRESENT_LOAD
from deadzone_id_ros.data.lerobot import CURRENT_UNIT

JOINTS = ("shoulder_pan", "shoulder_lift", "elbow_flex", "wrist_flex", "wrist_roll", "gripper")
FPS = 30.0
FRAMES = 240


def make_dataset(root, *, effort: str | None = None, effort_in_state: str | None = None, episodes: int = 2):
    """A LeRobot v2.1 SO-101 dataset; returns [(q [deg] (FRAMES, 6), effort (FRAMES, 6) or None)] per episode.

    ``effort``: an ``observation.<effort>`` feature (names ``<joint>.<effort>``); ``effort_in_state``:
    ``<joint>.<kind>`` elements appended to observation.state instead."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    state_names = [f"{j}.pos" for j in JOINTS] + ([f"{j}.{effort_in_state}" for j in JOINTS] if effort_in_state
                                                    else [])
    scalar = {"dtype": "int64", "shape": [1], "names": None}
    features = {
        "action": {"dtype": "float32", "shape": [6], "names": [f"{j}.pos" for j in JOINTS]},
        "observation.state": {"dtype": "float32", "shape": [len(state_names)], "names": state_names},
        "observation.images.front": {"dtype": "video", "shape": [480, 640, 3],
                                     "names": ["height", "width", "channels"]},
        "timestamp": {"dtype": "float32", "shape": [1], "names": None},
        "frame_index": scalar, "episode_index": scalar, "index": scalar, "task_index": scalar,
    }
    if effort:
        features[f"observation.{effort}"] = {"dtype": "float32", "shape": [6],
                                             "names": [f"{j}.{effort}" for j in JOINTS]}
    info = {"codebase_version": "v2.1", "robot_type": "so101_follower", "total_episodes": episodes,
            "total_frames": FRAMES * episodes, "total_tasks": 1, "total_videos": episodes, "total_chunks": 1,
            "chunks_size": 1000, "fps": FPS, "splits": {"train": f"0:{episodes}"},
            "data_path": "data/chunk-{episode_chunk:03d}/episode_{episode_index:06d}.parquet",
            "video_path": "videos/chunk-{episode_chunk:03d}/{video_key}/episode_{episode_index:06d}.mp4",
            "features": features}
    (root / "meta").mkdir(parents=True)
    (root / "meta" / "info.json").write_text(json.dumps(info, indent=2))
    rng = np.random.default_rng(0)
    out = []
    for e in range(episodes):
        t = np.arange(FRAMES) / FPS
        q = (30.0 * np.sin(2 * np.pi * 0.4 * t[:, None] + rng.uniform(0, np.pi, 6))).astype(np.float32)
        load = np.round(300.0 * np.cos(2 * np.pi * 0.4 * t[:, None] + rng.uniform(0, np.pi, 6))).astype(np.float32)
        state = np.hstack([q, load]) if effort_in_state else q
        cols = {"observation.state": pa.array(state.tolist(), type=pa.list_(pa.float32())),
                "action": pa.array((q + 1.0).tolist(), type=pa.list_(pa.float32())),
                "timestamp": pa.array(t.astype(np.float32)), "frame_index": pa.array(np.arange(FRAMES)),
                "episode_index": pa.array(np.full(FRAMES, e)), "index": pa.array(e * FRAMES + np.arange(FRAMES)),
                "task_index": pa.array(np.zeros(FRAMES, dtype=np.int64))}
        if effort:
            cols[f"observation.{effort}"] = pa.array(load.tolist(), type=pa.list_(pa.float32()))
        path = root / "data" / "chunk-000" / f"episode_{e:06d}.parquet"
        path.parent.mkdir(parents=True, exist_ok=True)
        pq.write_table(pa.table(cols), path)
        out.append((q, load if (effort or effort_in_state) else None))
    return out


def test_inspect_says_what_a_dataset_without_effort_holds_and_convert_refuses_it(tmp_path, capsys):
    root = tmp_path / "so101_pick"
    make_dataset(root)
    assert main(["inspect", str(root)]) == 1
    out = capsys.readouterr().out
    assert f"LeRobot dataset {root} (lerobot v2.1, robot so101_follower)" in out
    assert f"{FPS:g} fps, 2 episode(s), {2 * FRAMES} frames, 2 parquet file(s)" in out
    assert "observation.state float32[6]" in out and "action float32[6]" in out
    assert f"joints (observation.state): {', '.join(JOINTS)}" in out
    assert "effort: none" in out and "cannot be trained" in out and "Present_Load" in out
    assert main(["inspect", str(root), "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["joints"] == list(JOINTS) and report["trainable"] is False and report["fps"] == FPS
    parquet = root / "data" / "chunk-000" / "episode_000000.parquet"
    assert main(["convert", str(parquet), "--out", str(tmp_path / "bags"), "--position-unit", "deg"]) == 2
    err = capsys.readouterr().err
    assert "no effort (a servo's load or current)" in err and "cannot be trained on these data" in err, err
    assert "Record the servos' Present_Load" in err
    assert not (tmp_path / "bags").exists()
    # handed to a command that reads bags, the dataset is named with what to run
    assert main(["train", "--bag", str(root), "--out", str(tmp_path / "model"), "--method", "masked"]) == 2
    err = capsys.readouterr().err
    assert f"{root} is a LeRobot dataset: `deadzone-id inspect {root}`" in err, err


@pytest.mark.parametrize(("kind", "unit"), [("load", PRESENT_LOAD), ("current", CURRENT_UNIT)])
def test_convert_a_dataset_with_servo_effort_into_bags_that_train_in_its_unit(tmp_path, capsys, kind, unit):
    root = tmp_path / "so101_push"
    episodes = make_dataset(root, effort=kind if kind == "load" else None,
                            effort_in_state=kind if kind == "current" else None)
    assert main(["inspect", str(root)]) == 0
    assert f"unit {unit}" in capsys.readouterr().out
    out = tmp_path / "bags"
    assert main(["convert", str(root), "--out", str(out)]) == 2  # the position unit is not in the dataset
    assert "give --position-unit deg" in capsys.readouterr().err
    assert main(["convert", str(root), "--out", str(out), "--position-unit", "deg"]) == 0
    bags = sorted(out.glob("episode_*"))
    assert [b.name for b in bags] == ["episode_000000", "episode_000001"]
    for bag, (q_deg, effort) in zip(bags, episodes):
        rec = read_recording(bag)
        assert rec.joint_names == JOINTS
        np.testing.assert_allclose(rec.position, np.deg2rad(q_deg.astype(float)), rtol=0, atol=1e-12)
        np.testing.assert_array_equal(rec.effort, effort)
        np.testing.assert_allclose(np.diff(rec.state_t_ns) / 1e9, 1.0 / FPS, rtol=0, atol=1e-6)
    data = load_dataset(bags, DatasetConfig(savgol_window_s=0.2))
    assert data.joint_names == JOINTS and len(data.episodes) == 2
    assert data.effort_units == {j: unit for j in JOINTS}, data.effort_unit_reason
    assert "LeRobot feature" in data.effort_unit_reason
    k = 1.912e-3  # a torque constant [N·m per unit] makes the labels N·m
    converted = load_dataset(bags, DatasetConfig(savgol_window_s=0.2, torque_constants={j: k for j in JOINTS}))
    assert set(converted.effort_units.values()) == {"N*m"}
