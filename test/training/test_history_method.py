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
from deadzone_id_ros.models.artifact import export_onnx
from deadzone_id_ros.models.history import HISTORY_TAPS, JointHistory, episode_starts
from deadzone_id_ros.models.methods import get_method, resolve_methods
from deadzone_id_ros.models.rbd import RigidBodyRegressor
from deadzone_id_ros.resources import default_urdf
from deadzone_id_ros.training.evaluate import evaluate_model
from deadzone_id_ros.training.fit import Stacked, predict_stacked, stack_episodes
from deadzone_id_ros.training.planner import HISTORY_HIDDEN, SharedFits, fit_method, plan_method


def test_window_taps_are_displacements_clamped_at_each_episode_start():
    h = JointHistory(taps=3, stride=2, sample_period_s=0.01)
    assert h.span_s == pytest.approx(0.04) and h.n_inputs(2) == 12
    n = 7
    q = np.stack([np.arange(n) * 1.0, np.arange(n) * 0.1], axis=1)
    dq, ddq = q + 100.0, q + 200.0
    ep = np.array([0, 0, 0, 0, 1, 1, 1])
    assert episode_starts(ep).tolist() == [0, 0, 0, 0, 4, 4, 4]
    f = h.features(q, dq, ddq, ep)
    assert f.shape == (n, 12)
    # row 3, tap 1 (lag 2): row 1; tap 2 (lag 4): clamped to row 0 (its episode's start)
    assert np.allclose(f[3, 0:2], [1.0 - 3.0, 0.1 - 0.3]) and np.allclose(f[3, 2:4], [101.0, 100.1])
    assert np.allclose(f[3, 6:8], [0.0 - 3.0, 0.0 - 0.3]) and np.allclose(f[3, 10:12], [200.0, 200.0])
    # row 5 (second episode): lag 2 reads row 4, never rows of the first episode
    assert np.allclose(f[5, 0:2], [4.0 - 5.0, 0.4 - 0.5]) and np.allclose(f[5, 6:8], [4.0 - 5.0, 0.4 - 0.5])
    # positions enter as displacements: a whole turn added everywhere, or a continuous joint's angle wrapped into
    # [-pi, pi) in the middle of the window, changes nothing
    assert np.allclose(h.features(q + 2 * np.pi, dq, ddq, ep), f, rtol=0, atol=1e-12)
    turning = np.stack([np.linspace(3.0, 3.3, n), np.zeros(n)], axis=1)
    wrapped = np.mod(turning + np.pi, 2 * np.pi) - np.pi
    assert np.allclose(h.features(wrapped, dq, ddq, ep), h.features(turning, dq, ddq, ep), rtol=0, atol=1e-12)
    h.check_period(0.01 * 1.005, "model")  # within 1%
    with pytest.raises(ValueError, match="trained at 100 Hz and reads only data of that rate"):
        h.check_period(0.02, "model")
    with pytest.raises(ValueError, match="no common sample period"):
        h.check_period(None, "model")
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
    # the planner builds each training episode's window apart: the second episode's first row reads itself only
    two = stack_episodes(walk, dz)
    plan = plan_method("hybrid_history", [0], SharedFits.with_rbd(two, val, dz, rbd))[0]
    assert plan.spec is not None and plan.history is not None
    start = len(walk[0].t)
    taps = plan.spec.train.x[:, -plan.history.n_inputs(3):]
    assert np.array_equal(taps[start, 0:3], np.zeros(3)) and np.array_equal(taps[start, 3:6], two.dq[start])
    assert not np.array_equal(taps[start - 1, 0:3], np.zeros(3))
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
    assert np.allclose(got[:len(val)], hist.predict_sequence(val.q, val.dq, val.ddq, 1e-3), atol=1e-9)
    assert np.allclose(got[len(val):], got[:len(val)], atol=1e-9)  # the second episode's window starts anew
    slow = Stacked(val.joint_names, val.q, val.dq, val.ddq, val.tau, val.r, val.episode_index, 2e-3)
    with pytest.raises(DataError, match="trained at 1000 Hz"):  # evaluate on data of another rate: refused
        evaluate_model(again, slow)
    meta = json.loads((tmp_path / "art" / "model.json").read_text())
    assert meta["history"]["stride"] == 10 and saved.onnx_file is None
    assert "joint-state history" in meta["onnx"]["reason"]
    with pytest.raises(ValueError, match="cannot evaluate one state at a time"):
        hist.predict_sequence(val.q[0], val.dq[0], val.ddq[0], 1e-3)
    with pytest.raises(ValueError, match="cannot evaluate independent states"):  # rows of predict are independent
        hist.predict(val.q, val.dq, val.ddq)
    with pytest.raises(ArtifactError, match="joint-state history"):
        export_onnx(hist, tmp_path / "h.onnx")


def test_the_controller_refuses_a_history_model(sim_dataset, tiny_config, tmp_path):
    from deadzone_id_ros.control.controller import FeedforwardController
    from deadzone_id_ros.control.model_swap import check_swap
    from deadzone_id_ros.control.robot_configs import bundled_controller_config
    from deadzone_id_ros.errors import ConfigError
    from deadzone_id_ros.experiments.closed_loop.sim import controller_specs
    from deadzone_id_ros.experiments.improve.results import ImproveSettings
    from deadzone_id_ros.experiments.improve.run import run_improve
    from deadzone_id_ros.models.runtime import load_model
    from deadzone_id_ros.sensing import ResidualEstimator

    eps = sim_dataset.episodes
    dz = fit_dead_zone(eps[:1])
    train, val = stack_episodes(eps[:1], dz), stack_episodes(eps[1:], dz)
    reg = RigidBodyRegressor(default_urdf().read_text(), train.joint_names, tiny_config.friction_eps_for(dz.threshold))
    rbd = fit_method("rbd", train, val, dz, tiny_config, regressor=reg).model.rbd
    model = fit_method("hybrid_history", train, val, dz, tiny_config.with_overrides(max_steps=30), rbd=rbd).model
    save_artifact(model, tmp_path / "art")
    config = bundled_controller_config(model="learned", model_path=str(tmp_path / "art"))
    with pytest.raises(ArtifactError, match="cannot run one state per tick"):
        load_model(config)
    # an object in memory: the controller refuses it at construction, a swap refuses it with the reason
    with pytest.raises(ValueError, match="evaluates one state per tick"):
        FeedforwardController(config, model)
    running = FeedforwardController(config, load_model(bundled_controller_config(model="rbd")))
    verdict = check_swap(model, running.joint_names, running.effort_limit, val.q[:5], val.dq[:5], val.ddq[:5])
    assert not verdict.accepted and "reads the last 90 ms" in verdict.reason
    assert not running.swap_model(model, (val.q[:5], val.dq[:5], val.ddq[:5])).accepted
    with pytest.raises(ValueError, match=r"methods \['hybrid_history'\] read the joint-state history"):
        ImproveSettings(methods=("hybrid_history",))
    with pytest.raises(ValueError, match="reads the last 90 ms"):  # the force sensor refuses it too
        ResidualEstimator(model, np.full(3, 100.0))
    # closed-loop leaves a history pick out (the other controllers run); improve refuses it before any run
    specs = controller_specs(tmp_path / "models", "hybrid_history", ["hybrid_history", "rbd", "masked"])
    assert "ctc_dob_pick" not in [c.name for c in specs] and "ctc_dob_rbd" in [c.name for c in specs]
    assert "ctc_dob_pick" in [c.name for c in controller_specs(tmp_path / "models", "rbd", ["rbd"])]
    with pytest.raises(ConfigError, match="compare model .* reads the last 90 ms"):
        run_improve(tmp_path / "improve", ImproveSettings(iterations=0, compare_model=str(tmp_path / "art")))
    assert not (tmp_path / "improve").exists()


def test_demo_real_compares_the_history_method():
    from deadzone_id_ros.cli.demo import real_methods

    names = real_methods()
    assert "hybrid_history" in names and "hybrid" in names and "hybrid_history_mse_all" not in names
    assert "rbd_consistent" in names  # the identified rigid body a URDF can hold


def test_a_history_method_refuses_a_validation_split_of_another_rate(sim_dataset, tiny_config):
    eps = sim_dataset.episodes
    dz = fit_dead_zone(eps[:1])
    slow = Episode(eps[1].name, eps[1].source, eps[1].joint_names, eps[1].t * 2.0, eps[1].q, eps[1].dq, eps[1].ddq,
                   eps[1].tau)
    train, val = stack_episodes(eps[:1], dz), stack_episodes([slow], dz)
    reg = RigidBodyRegressor(default_urdf().read_text(), train.joint_names, tiny_config.friction_eps_for(dz.threshold))
    with pytest.raises(DataError, match="validation split reads joint-state taps"):
        fit_method("hybrid_history", train, val, dz, tiny_config, regressor=reg)


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
