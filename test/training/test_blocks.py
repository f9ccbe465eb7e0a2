"""Validation that never silently vanishes (issue 11 item 10): the split's block length is chosen from the data when
the user sets none, and a joint without moving test pairs shows "—" with its reason, never a bare nan."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from deadzone_id_ros.training.blocks import MIN_MOVING_PAIRS, choose_split
from deadzone_id_ros.training.config import TrainConfig, load_train_config

KUKA = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "real" / "kuka_lwr4_fri.bag"


@pytest.fixture(scope="module")
def kuka_inputs():
    if not KUKA.is_file():
        pytest.skip(f"real recording {KUKA} is absent")
    from deadzone_id_ros.training.pipeline import load_inputs

    return load_inputs([KUKA], log=lambda m: None)


def test_bundled_config_leaves_the_block_length_to_the_data():
    assert load_train_config().block_seconds is None


def test_kuka_41s_gets_blocks_with_moving_pairs_in_every_split(kuka_inputs):
    from deadzone_id_ros.training.pipeline import prepare_data

    lines: list[str] = []
    data = prepare_data(kuka_inputs, TrainConfig(), lines.append)
    assert data.blocks is not None and data.blocks.source == "data" and data.blocks.block_seconds < 5.0
    assert "chosen from the data" in lines[0] and f"blocks of {data.blocks.block_seconds:g} s" in lines[0]
    for name in ("train", "val", "test"):
        assert (getattr(data, name).r.sum(axis=0) >= MIN_MOVING_PAIRS).all(), name
    assert data.blocks.missing == {} and data.blocks.warnings == []
    # the old fixed 5 s blocks leave joints of this recording without a single moving test pair
    fixed = prepare_data(kuka_inputs, TrainConfig(block_seconds=5.0), lines.append)
    assert fixed.blocks.source == "config" and fixed.blocks.missing
    assert (fixed.test.r.sum(axis=0) == 0).any()


def test_missing_figures_show_a_dash_and_why_in_report_and_cli(kuka_inputs, tmp_path, capsys):
    from deadzone_id_ros.experiments.compare.run import run_compare

    cfg = TrainConfig(hidden_sizes=(16, 16), max_steps=40, eval_interval=20, batch_size=256, seeds=1,
                      progress=False, block_seconds=5.0, efficiency_fractions=(1.0,))
    logged: list[str] = []
    report = run_compare(kuka_inputs, tmp_path / "cmp", cfg, methods=["masked"], log=logged.append)
    missing = report.data.split.missing
    assert missing and all("no test pair where" in why and "threshold" in why for why in missing.values())
    md = (tmp_path / "cmp" / "report.md").read_text()
    for joint, why in missing.items():
        assert f"— {joint}: {why}" in md
    assert "nan" not in md.lower().replace("nanosec", "")
    doc = json.loads((tmp_path / "cmp" / "report.json").read_text())
    assert doc["methods"]["masked"]["per_seed"][0]["missing"] == missing
    run_line = next(m for m in logged if m.strip().startswith("masked seed"))
    assert "nan" not in run_line and "—" in run_line and next(iter(missing)) in run_line


def test_a_5s_recording_can_be_compared(sim_recordings, tmp_path):
    from deadzone_id_ros.data.dataset import dataset_from_recordings
    from deadzone_id_ros.experiments.compare.run import run_compare
    from deadzone_id_ros.training.pipeline import TrainingInputs

    ds = dataset_from_recordings(sim_recordings[:1])
    ep = ds.episodes[0]
    keep = ep.t - ep.t[0] < 5.0
    short = type(ep)(name=ep.name, source=ep.source, joint_names=ep.joint_names, t=ep.t[keep], q=ep.q[keep],
                     dq=ep.dq[keep], ddq=ep.ddq[keep], tau=ep.tau[keep], tau_true=None)
    cfg = TrainConfig(hidden_sizes=(16, 16), max_steps=40, eval_interval=20, batch_size=256, seeds=1,
                      progress=False, efficiency_fractions=(1.0,))
    inputs = TrainingInputs([short], tuple(ds.joint_names))
    report = run_compare(inputs, tmp_path / "cmp", cfg, methods=["masked"], log=lambda m: None)
    blocks = report.data.split.blocks
    assert blocks is not None and blocks.source == "data" and blocks.block_seconds is not None
    assert blocks.block_seconds < 5.0 and report.data.split.block_seconds_used == blocks.block_seconds
    assert all(np.isfinite(v) for v in report.methods["masked"].rmse_per_joint)


def test_too_short_recording_names_the_flag(sim_dataset):
    ep = sim_dataset.episodes[0]
    tiny = type(ep)(name="t", source="s", joint_names=ep.joint_names, t=ep.t[:300], q=ep.q[:300], dq=ep.dq[:300],
                    ddq=ep.ddq[:300], tau=ep.tau[:300], tau_true=None)
    from deadzone_id_ros.data.deadzone import DeadZoneConfig

    with pytest.raises(ValueError, match=r"too short to cut into 3 blocks of 0.5 s; .*"
                                         r"\(--block-seconds of train and compare\)"):
        choose_split([tiny], (0.7, 0.15, 0.15), None, 0, DeadZoneConfig())


def _cut(ep, seconds: float):
    keep = ep.t - ep.t[0] < seconds
    return type(ep)(name=f"{ep.name}[:{seconds:g}s]", source=ep.source, joint_names=ep.joint_names, t=ep.t[keep],
                    q=ep.q[keep], dq=ep.dq[keep], ddq=ep.ddq[keep], tau=ep.tau[keep], tau_true=None)


def test_a_short_tail_block_is_never_the_whole_training_split(sim_dataset):
    """Two short recordings whose lengths are not multiples of a block (3.42 and 4.14 s, as two live runs of the
    learning loop): blocks of 4 s leave a 0.14 s tail block, which the seeded assignment can make the whole training
    split (it still had 20 moving pairs per joint; the fit on it was refused). A length that gives training fewer
    samples than validation or test is passed over, whatever the seed."""
    from deadzone_id_ros.data.deadzone import DeadZoneConfig

    eps = [_cut(sim_dataset.episodes[0], 3.42), _cut(sim_dataset.episodes[1], 4.14)]
    for seed in range(12):
        split, _dz, choice = choose_split(eps, (0.7, 0.15, 0.15), None, seed, DeadZoneConfig())
        n = [sum(len(e) for e in getattr(split, name)) for name in ("train", "val", "test")]
        assert n[0] >= max(n[1], n[2]), f"seed {seed}: blocks of {choice.block_seconds:g} s give train/val/test {n}"
