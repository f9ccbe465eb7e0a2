"""The simple references every comparison carries (issue 35): the constant baseline (each joint's mean training
torque) and the URDF's gravity torque are registered methods, fitted by the one planner, shown in every torque table,
and the verdict names, in plain words, every method worse than them."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from deadzone_id_ros.training.config import TrainConfig


@pytest.fixture(scope="module")
def noise_compare(sim_dataset, tmp_path_factory):
    """A comparison on torques that are pure noise around a per-joint offset: nothing in (q, dq, ddq) predicts
    them, so every network can at best equal the constant and loses to it by what it fits of the noise."""
    from deadzone_id_ros.experiments.compare.run import run_compare
    from deadzone_id_ros.training.pipeline import TrainingInputs

    rng = np.random.default_rng(7)
    offset = np.array([2.0, -1.0, 0.5])
    episodes = [dataclasses.replace(ep, tau=offset + rng.normal(0.0, 1.0, ep.tau.shape), tau_true=None)
                for ep in sim_dataset.episodes]
    cfg = TrainConfig(hidden_sizes=(64, 64), max_steps=300, eval_interval=50, patience=6, batch_size=256,
                      num_threads=1, seeds=2, progress=False, block_seconds=3.0, efficiency_fractions=(1.0,))
    out = tmp_path_factory.mktemp("noise_compare")
    inputs = TrainingInputs(episodes, sim_dataset.joint_names, simulator=False)
    report = run_compare(inputs, out, cfg, methods=["masked", "mse_all", "constant"], log=lambda m: None)
    return out, report


def test_a_network_worse_than_the_constant_is_named_in_the_verdict(noise_compare):
    from deadzone_id_ros.experiments.compare.report import verdict
    from deadzone_id_ros.experiments.demo.report import compare_table, real_markdown

    out, report = noise_compare
    ms = report.methods
    assert set(ms) == {"masked", "mse_all", "constant"}
    losers = [m for m in ("masked", "mse_all") if ms[m].rmse_mean > ms["constant"].rmse_mean]
    assert losers, "on pure-noise torque a network cannot beat each joint's mean"
    text = "\n".join(verdict(report))
    line = next(s for s in verdict(report) if s.startswith("**Worse than the constant baseline"))
    assert all(m in line for m in losers) and "do not deploy it" in line
    assert "constant" in text
    md = (out / "report.md").read_text()
    assert "| constant |" in md and line in md
    assert any(row.startswith("| constant |") for row in compare_table(report))
    assert line in real_markdown({"noise": report}, {"noise": "noise"})
    # the constant is each joint's mean torque over its moving training pairs, exported like any network
    from deadzone_id_ros.models import load_artifact

    model = load_artifact(out / "models" / "constant")
    x = np.random.default_rng(0).normal(size=(4, 3))
    pred = model.predict(x, x, x)
    assert np.allclose(pred, pred[0]) and np.allclose(pred[0], [2.0, -1.0, 0.5], atol=0.1)
    from deadzone_id_ros.models.export import export_artifact_onnx

    assert export_artifact_onnx(out / "models" / "constant", out / "constant.onnx").ok
