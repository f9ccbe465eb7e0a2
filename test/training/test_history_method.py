"""The history residual (issue 35 item 4, issue 34 item 1: FACTR 2's short joint-state history): a registered,
opt-in method whose network reads the last 90 ms of joint states beside the current one, trained with the dead-zone
mask through the one planner; its window never reads another episode, it saves and loads, and it refuses every
place that evaluates one state per tick (controller, ONNX)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from deadzone_id_ros.data.deadzone import fit_dead_zone
from deadzone_id_ros.data.types import Episode
from deadzone_id_ros.errors import ArtifactError, DataError
from deadzone_id_ros.models import load_artifact, save_artifact
from deadzone_id_ros.models.history import HISTORY_TAPS, JointHistory, episode_starts
from deadzone_id_ros.models.methods import get_method, resolve_methods
from deadzone_id_ros.models.rbd import RigidBodyRegressor
from deadzone_id_ros.resources import default_urdf
from deadzone_id_ros.training.evaluate import evaluate_model
from deadzone_id_ros.training.fit import Stacked, predict_stacked, stack_episodes
from deadzone_id_ros.training.planner import HISTORY_HIDDEN, fit_method


def test_window_taps_are_displacements_clamped_at_each_episode_start():
    h = JointHistory(taps=3, stride=2, sample_period_s=0.01)
    assert h.span_s == pytest.approx(0.04) and h.n_inputs(2) == 12
    n = 7
    q = np.stack([np.arange(n) * 1.0, np.arange(n) * 10.0], axis=1)
    dq, ddq = q + 100.0, q + 200.0
    ep = np.array([0, 0, 0, 0, 1, 1, 1])
    assert episode_starts(ep).tolist() == [0, 0, 0, 0, 4, 4, 4]
    f = h.features(q, dq, ddq, ep)
    assert f.shape == (n, 12)
    # row 3, tap 1 (lag 2): row 1; tap 2 (lag 4): clamped to row 0 (its episode's start)
    assert f[3, 0:2].tolist() == [1.0 - 3.0, 10.0 - 30.0] and f[3, 2:4].tolist() == [101.0, 110.0]
    assert f[3, 6:8].tolist() == [0.0 - 3.0, 0.0 - 30.0] and f[3, 10:12].tolist() == [200.0, 200.0]
    # row 5 (second episode): lag 2 reads row 4, never rows of the first episode
    assert f[5, 0:2].tolist() == [4.0 - 5.0, 40.0 - 50.0] and f[5, 6:8].tolist() == [4.0 - 5.0, 40.0 - 50.0]
    # positions enter as displacements: a whole turn added everywhere changes nothing
    assert np.allclose(h.features(q + 2 * np.pi, dq, ddq, ep), f, rtol=0, atol=1e-12)
    assert JointHistory.for_period(0.002).stride == 5 and JointHistory.for_period(0.001).stride == 10
    assert JointHistory.for_period(0.01).stride == 1 and JointHistory.for_period(0.02).stride == 1
    assert JointHistory.from_dict(h.to_dict()) == h
    with pytest.raises(ValueError, match="taps"):
        JointHistory(taps=1, stride=1, sample_period_s=0.01)
    with pytest.raises(ValueError, match="episode_index has 3 rows"):
        h.features(q, dq, ddq, ep[:3])


def _memory_episodes(joint_names, rbd, seeds):
    """Episodes at 1 kHz whose joints random-walk and whose torque is the rigid body's plus a memory term,
    0.5 N·m/rad (q_{i-40} - q_i): the displacement over the last 40 ms, a sum of 40 independent steps that no
    function of the current (q, dq, ddq) predicts, and exactly the window's fifth tap."""
    out = []
    for s in seeds:
        rng = np.random.default_rng(s)
        n, dt = 6000, 1e-3
        q = 0.2 + np.cumsum(rng.normal(0.0, 1e-3, (n, len(joint_names))), axis=0)
        dq = np.gradient(q, dt, axis=0)
        ddq = np.gradient(dq, dt, axis=0)
        lag = np.maximum(np.arange(n) - 40, 0)
        tau = rbd.predict(q, dq, ddq) + 0.5 * (q[lag] - q)
        out.append(Episode(f"walk{s}", "synthetic", tuple(joint_names), np.arange(n) * dt, q, dq, ddq, tau))
    return out


def test_history_residual_learns_what_the_current_state_cannot_tell(sim_dataset, tiny_config, tmp_path):
    entry = get_method("hybrid_history")
    assert entry.history and entry.needs.residual and entry.needs.mask and not entry.by_default
    assert "hybrid_history" not in [m.name for m in resolve_methods(None)]  # opt-in: the demo's pick drives a loop
    eps = sim_dataset.episodes
    dz0 = fit_dead_zone(eps[:1])
    sim_train, sim_val = stack_episodes(eps[:1], dz0), stack_episodes(eps[1:], dz0)
    reg = RigidBodyRegressor(default_urdf().read_text(), sim_train.joint_names,
                             tiny_config.friction_eps_for(dz0.threshold))
    rbd = fit_method("rbd", sim_train, sim_val, dz0, tiny_config, regressor=reg).model.rbd
    walk = _memory_episodes(sim_train.joint_names, rbd, (1, 2))
    dz = fit_dead_zone(walk[:1])
    train, val = stack_episodes(walk[:1], dz), stack_episodes(walk[1:], dz)
    assert train.sample_period == pytest.approx(1e-3)
    cfg = tiny_config.with_overrides(max_steps=600, patience=20)
    hist = fit_method("hybrid_history", train, val, dz, cfg, rbd=rbd).model
    plain = fit_method("hybrid", train, val, dz, cfg, rbd=rbd).model
    assert hist.history is not None and (hist.history.taps, hist.history.stride) == (HISTORY_TAPS, 10)
    assert hist.mlp is not None and hist.mlp.hidden_sizes == HISTORY_HIDDEN and hist.mlp.activation == "tanh"
    memory = np.sqrt(np.mean((val.tau - rbd.predict(val.q, val.dq, val.ddq)) ** 2))
    e_hist, e_plain = evaluate_model(hist, val).rmse_mean, evaluate_model(plain, val).rmse_mean
    assert e_plain > 0.7 * memory  # the current state does not tell the memory term
    assert e_hist < 0.3 * e_plain  # the window does
    # the artifact keeps the window; the loaded model predicts the same, episode by episode
    saved = save_artifact(hist, tmp_path / "art")
    again = load_artifact(tmp_path / "art")
    assert again.history == hist.history
    both = Stacked(val.joint_names, *(np.concatenate([a, a]) for a in (val.q, val.dq, val.ddq, val.tau, val.r)),
                   np.concatenate([np.zeros(len(val), int), np.ones(len(val), int)]), val.sample_period)
    got = predict_stacked(again, both)
    assert np.allclose(got[:len(val)], hist.predict(val.q, val.dq, val.ddq), atol=1e-9)
    assert np.allclose(got[len(val):], got[:len(val)], atol=1e-9)  # the second episode's window starts anew
    meta = json.loads((tmp_path / "art" / "model.json").read_text())
    assert meta["history"]["stride"] == 10 and saved.onnx_file is None
    assert "joint-state history" in meta["onnx"]["reason"]
    with pytest.raises(ValueError, match="cannot evaluate one state at a time"):
        hist.predict(val.q[0], val.dq[0], val.ddq[0])


def test_the_controller_refuses_a_history_model(sim_dataset, tiny_config, tmp_path):
    from deadzone_id_ros.control.robot_configs import bundled_controller_config
    from deadzone_id_ros.models.runtime import load_model

    eps = sim_dataset.episodes
    dz = fit_dead_zone(eps[:1])
    train, val = stack_episodes(eps[:1], dz), stack_episodes(eps[1:], dz)
    reg = RigidBodyRegressor(default_urdf().read_text(), train.joint_names, tiny_config.friction_eps_for(dz.threshold))
    rbd = fit_method("rbd", train, val, dz, tiny_config, regressor=reg).model.rbd
    model = fit_method("hybrid_history", train, val, dz, tiny_config.with_overrides(max_steps=30), rbd=rbd).model
    save_artifact(model, tmp_path / "art")
    with pytest.raises(ArtifactError, match="cannot run one state per tick"):
        load_model(bundled_controller_config(model="learned", model_path=str(tmp_path / "art")))


def test_a_history_method_refuses_episodes_of_different_rates(sim_dataset, tiny_config):
    eps = sim_dataset.episodes
    dz = fit_dead_zone(eps[:1])
    slow = eps[1]
    slow = Episode(slow.name, slow.source, slow.joint_names, slow.t * 2.0, slow.q, slow.dq, slow.ddq, slow.tau)
    train, val = stack_episodes([eps[0], slow], dz), stack_episodes(eps[1:], dz)
    assert train.sample_period is None
    reg = RigidBodyRegressor(default_urdf().read_text(), train.joint_names, tiny_config.friction_eps_for(dz.threshold))
    with pytest.raises(DataError, match="no common sample period"):
        fit_method("hybrid_history", train, val, dz, tiny_config, regressor=reg)
