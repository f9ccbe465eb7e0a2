"""compare: every method runs on simulator data, and report.json's numbers are the run's (recomputed here)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from deadzone_id_ros.data.split import split_episodes
from deadzone_id_ros.experiments.compare.run import run_compare
from deadzone_id_ros.models import METHODS, load_artifact
from deadzone_id_ros.sim import SimArm
from deadzone_id_ros.training.pipeline import TrainingInputs


def _test_split(sim_dataset, cfg):
    return split_episodes(sim_dataset.episodes, tuple(cfg.split_fractions), cfg.block_seconds, seed=cfg.split_seed)


def test_report_has_the_stable_keys(compared):
    out, report, cfg, _ = compared
    on_disk = json.loads((out / "report.json").read_text())
    assert on_disk == report
    assert set(report["methods"]) == {m for m, method in METHODS.items() if method.by_default}
    for name, entry in report["methods"].items():
        assert len(entry["rmse_per_joint"]) == 3 and all(v > 0 for v in entry["rmse_per_joint"])
        assert entry["rmse_mean"] == pytest.approx(np.mean(entry["rmse_per_joint"]), rel=1e-9)
        assert 0 < entry["usable_fraction"] <= 1
        assert len(entry["per_seed"]) == (cfg.seeds if METHODS[name].learned else 1)  # deterministic: fitted once
    assert len(report["noise_floor"]["rmse_per_joint"]) == 3
    de = report["data_efficiency"]
    assert de["fractions"] == [0.5, 1.0] and len(de["masked"]["rmse_mean"]) == 2
    assert de["masked"]["rmse_mean"][-1] == pytest.approx(report["methods"]["masked"]["rmse_mean"])
    md = (out / "report.md").read_text()
    assert "| masked |" in md and "noise floor" in md and "## Data efficiency" in md
    # the identified rigid body's distance to the noise floor, in report.json and in the verdict
    ratio = report["methods"]["rbd"]["rmse_mean"] / report["noise_floor"]["rmse_mean"]
    assert report["noise_floor"]["rbd_ratio"] == pytest.approx(ratio, rel=1e-12)
    assert f"rbd (identified) is {ratio:.2f}× the noise floor." in md
    # the best method's distance to the measured torque's own white noise, by normalized RMSE
    mn = report["measurement_noise"]
    assert mn["nrmse_mean"] == pytest.approx(np.mean(mn["nrmse_per_joint"]), rel=1e-12)
    best = min(report["methods"], key=lambda m: report["methods"][m]["nrmse_mean"])
    assert f"the best method by normalized RMSE, {best} ({report['methods'][best]['nrmse_mean']:.3f}), is " \
           f"{report['methods'][best]['nrmse_mean'] / mn['nrmse_mean']:.2f}× it." in md
    # the simple references are in the torque table and the verdict names what is worse than them
    assert "| constant |" in md and "| gravity |" in md and "| rbd_consistent |" not in md  # opt-in (by_default)
    assert "the constant baseline (predicting each joint's mean training torque)" in md
    for png in ("rmse_per_joint", "data_efficiency", "pred_vs_measured", "dead_zone_timeseries"):
        assert (out / "plots" / f"{png}.png").stat().st_size > 1000


def test_masked_rmse_recomputed_from_the_saved_artifact(compared, sim_dataset):
    out, report, cfg, _ = compared
    model = load_artifact(out / "models" / "masked")
    assert model.metadata["metrics"]["seed"] == cfg.seed
    test = _test_split(sim_dataset, cfg).test
    q, dq, ddq, tau = (np.concatenate([getattr(e, a) for e in test]) for a in ("q", "dq", "ddq", "tau"))
    moving = np.abs(dq) > np.asarray(model.metadata["dead_zone"]["threshold"])
    err = model.predict(q, dq, ddq) - tau
    rmse = [np.sqrt(np.mean(err[moving[:, j], j] ** 2)) for j in range(3)]
    np.testing.assert_allclose(report["methods"]["masked"]["per_seed"][0]["rmse_per_joint"], rmse, rtol=1e-9)
    # the identified rigid body's physical consistency, as the saved model's bodies give it
    rbd = load_artifact(out / "models" / "rbd").rbd
    assert report["methods"]["rbd"]["inconsistent_bodies"] == rbd.inconsistent_bodies()
    assert report["methods"]["rbd"]["n_bodies"] == 3 and report["methods"]["masked"]["n_bodies"] is None
    # export --urdf's own answer: writes it, or refuses it for the reason recorded
    from deadzone_id_ros.errors import ArtifactError
    from deadzone_id_ros.models.urdf_export import identified_urdf

    with pytest.raises(ArtifactError) as refused:  # this short fit's bodies are not all consistent
        identified_urdf(rbd, "its rigid body")
    assert rbd.inconsistent_bodies() and report["methods"]["rbd"]["urdf_refusal"] == str(refused.value)
    assert "not physically consistent" in report["methods"]["rbd"]["urdf_refusal"]
    # the noise floor is the simulator's own inverse dynamics on the same pairs
    floor = SimArm().inverse_dynamics(q, dq, ddq, friction=True) - tau
    np.testing.assert_allclose(report["noise_floor"]["rmse_per_joint"],
                               [np.sqrt(np.mean(floor[moving[:, j], j] ** 2)) for j in range(3)], rtol=1e-9)
    # the measured torque's white noise: second differences inside each test block, where the middle sample moves
    e2 = [np.concatenate([(np.diff(e.tau[:, j], 2) / np.sqrt(6))[moving_e[1:-1, j]] for e, moving_e in
                          ((e, np.abs(e.dq) > np.asarray(model.metadata["dead_zone"]["threshold"])) for e in test)])
          for j in range(3)]
    np.testing.assert_allclose(report["measurement_noise"]["rmse_per_joint"],
                               [np.sqrt(np.mean(v ** 2)) for v in e2], rtol=1e-9)
    assert report["measurement_noise"]["pairs_per_joint"] == [len(v) for v in e2]
    assert "measured torque's white noise (estimate)" in (out / "report.md").read_text()


def test_usable_fractions_recomputed(compared, sim_dataset):
    out, report, cfg, _ = compared
    train = _test_split(sim_dataset, cfg).train
    dq = np.concatenate([e.dq for e in train])
    thr = np.asarray(report["dead_zone"]["threshold"])
    np.testing.assert_allclose(thr, cfg.dead_zone.alpha * dq.std(axis=0), rtol=1e-9)
    r = np.abs(dq) > thr
    m = report["methods"]
    assert m["masked"]["usable_fraction"] == pytest.approx(r.mean())
    assert m["conventional"]["usable_fraction"] == pytest.approx(r.all(axis=1).mean())
    assert m["mse_all"]["usable_fraction"] == 1.0
    assert m["rbd"]["usable_fraction"] == pytest.approx(r.mean())
    # the simulated arm's dead zone is real: the conventional method keeps clearly fewer samples
    assert m["conventional"]["usable_fraction"] < 0.8 * m["masked"]["usable_fraction"]


def test_methods_without_urdf_are_skipped_with_a_reason(sim_dataset, tmp_path, tiny_config):
    inputs = TrainingInputs(sim_dataset.episodes, sim_dataset.joint_names, simulator=False)
    report = run_compare(inputs, tmp_path, tiny_config.with_overrides(efficiency_fractions=(1.0,)),
                         methods=["masked", "rbd"], log=lambda m: None)
    assert set(report.methods) == {"masked"}
    assert "pass --urdf" in report.skipped_methods["rbd"]
    assert report.noise_floor is None and "noise_floor" not in report.to_dict()
    assert "| rbd | skipped: no URDF" in (tmp_path / "report.md").read_text()


def test_compare_errors(sim_dataset, tmp_path, tiny_config):
    from deadzone_id_ros.errors import DataError

    inputs = TrainingInputs(sim_dataset.episodes, sim_dataset.joint_names)
    with pytest.raises(ValueError, match=r"unknown method\(s\) \['best'\]"):
        run_compare(inputs, tmp_path, tiny_config, methods=["best"])
    with pytest.raises(DataError, match="cannot split .* need at least 3 episodes/blocks"):
        run_compare(inputs, tmp_path, tiny_config.with_overrides(block_seconds=0.0), methods=["masked"])
