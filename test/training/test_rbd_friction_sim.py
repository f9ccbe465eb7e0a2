"""rbd_friction on the simulated geared arm (issue 35, item 3): the simulator's default profile has Stribeck and
load-dependent friction (sim/geared.py), so the rigid body with those friction columns, a registered method fitted
through the one planner, must explain a held-out run better than Coulomb + viscous alone; its artifact round-trips
and the URDF export refuses it (no URDF element holds that friction)."""

from __future__ import annotations

import numpy as np
import pytest

from deadzone_id_ros.data.deadzone import fit_dead_zone
from deadzone_id_ros.errors import ArtifactError
from deadzone_id_ros.models import load_artifact, save_artifact
from deadzone_id_ros.models.methods import get_method, resolve_methods
from deadzone_id_ros.models.rbd import RigidBodyRegressor
from deadzone_id_ros.models.urdf_export import export_rigid_body_urdf
from deadzone_id_ros.resources import default_urdf
from deadzone_id_ros.training.evaluate import evaluate_model
from deadzone_id_ros.training.fit import stack_episodes
from deadzone_id_ros.training.planner import fit_method


def test_rbd_friction_beats_coulomb_viscous_on_the_geared_sim(sim_dataset, tiny_config, tmp_path):
    eps = sim_dataset.episodes
    dz = fit_dead_zone(eps[:1])
    train, val = stack_episodes(eps[:1], dz), stack_episodes(eps[1:], dz)
    entry = get_method("rbd_friction")
    assert entry.needs.rigid_body == "required" and not entry.needs.network
    assert "rbd_friction" in [m.name for m in resolve_methods(None)]  # fitted by default
    reg = RigidBodyRegressor(default_urdf().read_text(), train.joint_names, tiny_config.friction_eps_for(dz.threshold))
    rbd = fit_method("rbd", train, val, dz, tiny_config, regressor=reg).model
    fric = fit_method("rbd_friction", train, val, dz, tiny_config, regressor=reg).model
    assert fric.rbd is not None and fric.rbd.regressor.friction is not None
    info = fric.rbd.fit_info
    assert len(info["stribeck_velocity"]) == 3 and len(info["static_band"]) == 3
    # held-out run (another seed of the simulator): at least 20% lower normalized RMSE on the moving pairs
    before, after = evaluate_model(rbd, val).nrmse_mean, evaluate_model(fric, val).nrmse_mean
    assert after < 0.8 * before, (before, after)
    save_artifact(fric, tmp_path / "art")
    again = load_artifact(tmp_path / "art")
    assert np.allclose(again.predict(val.q, val.dq, val.ddq), fric.predict(val.q, val.dq, val.ddq), atol=1e-9)
    with pytest.raises(ArtifactError, match="Stribeck / load-dependent friction has no URDF element"):
        export_rigid_body_urdf(fric.rbd, tmp_path / "x.urdf")
