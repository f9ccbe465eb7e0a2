"""The controller's model at the desired velocity (ControllerConfig.feedforward_velocity, docs/controller.md "The
velocity the model sees"): with an identified model whose friction has a smooth sign (rbd_friction, fitted through
the planner on the simulated geared arm), the weak-DOB closed loop on held-out references tracks better when the
model sees the reference's dq_d than when it sees the measured dq, on every seed, and by at least 25% over the
seeds. The demo's identified rbd_friction measured 0.58 against 1.36 mrad (3 seeds x 6 s); this shorter fit and
run gave 0.68 / 0.97 against 1.48 / 1.34 mrad (0.59x over the two seeds), so 0.75x leaves the spread of a seed
room, and with the measured velocity (the old law) the test fails."""

from __future__ import annotations

import dataclasses

from deadzone_id_ros.control.config import ControlMode
from deadzone_id_ros.data.deadzone import fit_dead_zone
from deadzone_id_ros.experiments.closed_loop.run import _default_configs
from deadzone_id_ros.experiments.closed_loop.sim import ControllerSpec, run_controller
from deadzone_id_ros.models import save_artifact
from deadzone_id_ros.models.rbd import RigidBodyRegressor
from deadzone_id_ros.resources import default_urdf
from deadzone_id_ros.training.fit import stack_episodes
from deadzone_id_ros.training.planner import fit_method


def test_the_model_at_the_desired_velocity_tracks_better_with_a_weak_dob(sim_dataset, tiny_config, tmp_path):
    eps = sim_dataset.episodes
    dz = fit_dead_zone(eps[:1])
    train, val = stack_episodes(eps[:1], dz), stack_episodes(eps[1:], dz)
    reg = RigidBodyRegressor(default_urdf().read_text(), train.joint_names, tiny_config.friction_eps_for(dz.threshold))
    save_artifact(fit_method("rbd_friction", train, val, dz, tiny_config, regressor=reg).model, tmp_path / "art")
    sim, base = _default_configs()
    spec = ControllerSpec("ctc_dob_rbd_friction", "rbd_friction", ControlMode("model", dob=True), "learned",
                          str(tmp_path / "art"))
    rmse = {}
    for source in ("measured", "desired"):
        run = run_controller(spec, [999, 1000], 3.0, sim, dataclasses.replace(base, feedforward_velocity=source),
                             dob_scale=0.2)
        assert not run.faults
        rmse[source] = [float(sum(s.rmse) / len(s.rmse)) for s in run.per_seed]
    assert all(d < m for d, m in zip(rmse["desired"], rmse["measured"], strict=True)), rmse
    assert sum(rmse["desired"]) < 0.75 * sum(rmse["measured"]), rmse
