"""Issue 22 item 10: a pick made on too little validation data. With few validation blocks the pick is made by
cross-validation over time blocks of train+validation (test untouched, refit per fold), says how sure it is, and a
training split smaller than validation or test is warned about."""

from __future__ import annotations

import json

import numpy as np
import pytest

from deadzone_id_ros.data.split import split_episodes
from deadzone_id_ros.experiments.compare.pick_cv import MIN_VAL_BLOCKS, cv_folds, needs_cv, share_warnings
from deadzone_id_ros.training.config import TrainConfig


def _names(blocks):
    return {b.name for b in blocks}


@pytest.mark.parametrize(("fractions", "block", "pooled"), [
    ((0.2, 0.4, 0.4), 3.0, 4),  # 2 train+val blocks of 3 s, each cut in two (with guards) -> 4
    ((0.8, 0.1, 0.1), 1.0, 11),  # 12 blocks of 1 s, 1 in test: block10, block11 must sort after block9
])
def test_folds_hold_out_contiguous_train_val_blocks_and_never_test(sim_dataset, fractions, block, pooled):
    ep = sim_dataset.episodes[0]  # 12 s at 1 kHz
    split = split_episodes([ep], fractions, block, seed=0)
    assert len(split.val) < MIN_VAL_BLOCKS and "fewer than 3" in needs_cv(split)
    folds = cv_folds(split)
    assert len(folds) == 3
    held = [b for _, va in folds for b in va]
    assert len(held) == len(_names(held)) == pooled  # every block held out exactly once
    pooled_t = np.concatenate([b.t for b in (*split.train, *split.val)])
    test_t = np.concatenate([b.t for b in split.test])
    reach = ep.edge_reach * ep.dt
    for train, val in folds:
        assert not _names(train) & _names(val) and sorted(_names(train) | _names(val)) == sorted(_names(held))
        vt = np.concatenate([b.t for b in val])
        assert vt.min() >= pooled_t.min() and not np.isin(vt, test_t).any()  # the test blocks never appear
        for tb in train:  # edge guards: no training sample within 2 x edge_reach of a held-out sample
            assert np.min(np.abs(tb.t[:, None] - vt[None, :])) > 2 * reach - 1e-9
        starts = sorted(float(b.t[0]) for b in val)  # contiguous: no training block between held-out ones
        assert not any(starts[0] < float(b.t[0]) < starts[-1] for b in train)


def test_many_validation_blocks_keep_the_validation_pick(sim_dataset):
    split = split_episodes(sim_dataset.episodes, (0.4, 0.4, 0.2), 1.0, seed=0)
    assert len(split.val) >= MIN_VAL_BLOCKS and needs_cv(split) is None


def test_share_warning_only_when_training_is_smaller():
    assert share_warnings(700, 150, 150) == []
    (w,) = share_warnings(487, 974, 400)  # the Barrett WAM case
    assert "smaller than the validation (974)" in w and "test" not in w.split(":")[0] and "487 training" in w
    (w,) = share_warnings(100, 200, 300)
    assert "validation (200) and the test (300)" in w


@pytest.fixture(scope="module")
def short_compare(sim_dataset, tmp_path_factory):
    """compare on one 12 s recording cut into 4 blocks of 3 s: 1 training, 1 validation, 2 test blocks."""
    from deadzone_id_ros.experiments.compare.run import run_compare
    from deadzone_id_ros.resources import default_urdf
    from deadzone_id_ros.training.pipeline import TrainingInputs

    cfg = TrainConfig(hidden_sizes=(16, 16), max_steps=60, eval_interval=20, patience=3, batch_size=256,
                      num_threads=1, seeds=2, progress=False, block_seconds=3.0, split_fractions=(0.2, 0.4, 0.4),
                      efficiency_fractions=(1.0,))
    ep = sim_dataset.episodes[0]
    inputs = TrainingInputs([ep], sim_dataset.joint_names, simulator=True, urdf_xml=default_urdf().read_text(),
                            urdf_source="three_dof_arm.urdf")
    out = tmp_path_factory.mktemp("short_compare")
    logs: list[str] = []
    report = run_compare(inputs, out, cfg, methods=["masked", "mse_all", "rbd"], log=logs.append)
    return out, report, logs


def test_few_blocks_pick_by_cross_validation_with_its_margin(short_compare):
    out, typed, logs = short_compare
    report = json.loads((out / "report.json").read_text())
    assert report["data"]["samples"]["val"] > 0
    pick = report["pick"]
    assert pick["selection"] == "cross-validation"
    cv = pick["cv"]
    assert cv["folds"] == 3 and cv["seeds"] == [0, 1] and len(cv["held_out_samples"]) == 3
    for m in ("masked", "mse_all", "rbd"):
        rows = cv["rmse_per_fold"][m]
        assert len(rows) == 3 and all(len(r) == 2 and all(v > 0 for v in r) for r in rows)
        assert cv["rmse_mean"][m] == pytest.approx(np.mean(rows))
    means = cv["rmse_mean"]
    ranked = sorted(means, key=means.get)
    assert pick["method"] == ranked[0] and pick["runner_up"] == ranked[1]
    assert pick["margin"] == pytest.approx(means[ranked[1]] - means[ranked[0]])
    diffs = np.subtract(cv["rmse_per_fold"][ranked[1]], cv["rmse_per_fold"][ranked[0]]).ravel()
    assert pick["spread"] == pytest.approx(np.std(diffs, ddof=1))
    assert pick["tie"] == (pick["margin"] <= pick["spread"])
    assert f"margin {pick['margin']:.4g} N·m over {ranked[1]}" in pick["confidence"]
    # the validation column still holds the validation split's figure; the exported model is the pick
    assert pick["validation_rmse_mean"] == pytest.approx(report["methods"][pick["method"]]["validation_rmse_mean"])
    md = (out / "report.md").read_text()
    assert "Chosen by cross-validation because the validation split is 1 block(s)" in md
    assert f"How sure: {pick['confidence']}." in md and "CV RMSE (mean ± std)" in md
    assert any(line.startswith("pick by cross-validation") for line in logs)
    assert any("how sure: margin" in line for line in logs)


def test_small_training_share_is_warned_in_log_and_report(short_compare):
    out, typed, logs = short_compare
    report = json.loads((out / "report.json").read_text())
    s = report["data"]["samples"]
    assert s["train"] < s["test"]
    (w,) = report["split_warnings"]
    assert f"{s['train']} training samples" in w and f"test ({s['test']})" in w
    assert any(line == f"WARNING: {w}" for line in logs)
    assert f"**Warning:** {w}." in (out / "report.md").read_text()
