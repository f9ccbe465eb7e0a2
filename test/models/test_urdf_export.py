"""The identified rigid body leaves the product as a URDF (issue 35): pinocchio, loading the exported file, gives the
identified model's torques (with the friction of its <dynamics> and the rotor inertia the export reports)."""

from __future__ import annotations

import numpy as np
import pytest

from deadzone_id_ros.cli.main import main
from deadzone_id_ros.errors import ArtifactError
from deadzone_id_ros.models.rbd import RigidBodyRegressor, fit_rigid_body
from deadzone_id_ros.models.urdf_export import export_rigid_body_urdf

NAMES = ("joint1", "joint2", "joint3")


@pytest.fixture(scope="module")
def identified():
    """Plain least squares and the consistent fit on 3 s of a two-frequency excitation of the 3-DOF arm whose
    torques come from changed masses, viscous and Coulomb friction and rotor inertia."""
    from deadzone_id_ros.resources import default_urdf

    reg = RigidBodyRegressor(default_urdf().read_text(), NAMES, friction_eps=0.02)
    t = np.arange(0.0, 3.0, 0.01)
    q = 0.6 * np.sin(2.1 * t)[:, None] * np.array([1.0, 0.8, 1.2]) + 0.3 * np.sin(5.3 * t + 1.0)[:, None]
    dq = np.gradient(q, t, axis=0)
    ddq = np.gradient(dq, t, axis=0)
    theta = reg.true_parameters(armature=[0.01, 0.02, 0.005], viscous=[0.3, 0.2, 0.1], coulomb=[0.2, 0.15, 0.05])
    theta[: reg.n_inertial] *= 1.3
    tau = reg.regressor(q, dq, ddq) @ theta + np.random.default_rng(3).normal(0, 0.02, q.shape)
    plain = fit_rigid_body(reg, q, dq, ddq, tau, prior_weight=0.0)
    return plain, fit_rigid_body(reg, q, dq, ddq, tau, prior_weight=1e-4, consistent=True)


def test_pinocchio_on_the_exported_urdf_gives_the_identified_torques(identified, tmp_path):
    import pinocchio as pin

    _, rbd = identified
    assert rbd.inconsistent_bodies() == []
    result = export_rigid_body_urdf(rbd, tmp_path / "identified.urdf")
    assert result.ok and result.path.exists()
    # independent reference: pinocchio loads the file; friction from its <dynamics>, rotor inertia from the result
    model = pin.buildModelFromUrdf(str(result.path))
    data = model.createData()
    ids = [model.joints[model.getJointId(n)].idx_v for n in NAMES]
    rng = np.random.default_rng(5)
    q, dq, ddq = rng.uniform(-1, 1, (20, 3)), rng.normal(0, 1, (20, 3)), rng.normal(0, 3, (20, 3))
    want = rbd.predict(q, dq, ddq)
    damping, friction = np.asarray(model.damping)[ids], np.asarray(model.friction)[ids]
    armature = np.array([result.armature[n] for n in NAMES])
    p = rbd.parameters()
    assert np.allclose(damping, [p[f"{n}.viscous"] for n in NAMES])
    assert np.allclose(friction, [p[f"{n}.coulomb"] for n in NAMES])
    for i in range(len(q)):
        v, a, qq = np.zeros(model.nv), np.zeros(model.nv), pin.neutral(model)
        qq[ids], v[ids], a[ids] = q[i], dq[i], ddq[i]
        tau = pin.rnea(model, data, qq, v, a)[ids]
        tau = tau + damping * dq[i] + friction * np.tanh(dq[i] / 0.02) + armature * ddq[i]
        assert np.allclose(tau, want[i], rtol=1e-8, atol=1e-8)
    # the URDF's own masses changed: what was exported is the identified body, not the input file
    assert not np.isclose(pin.computeTotalMass(model), pin.computeTotalMass(rbd.regressor.model))


def test_export_refuses_an_inconsistent_body_and_runs_from_the_cli(identified, tmp_path, capsys):
    from deadzone_id_ros.models import LearnedModel, save_artifact

    plain, rbd = identified
    assert plain.inconsistent_bodies()
    with pytest.raises(ArtifactError, match="not physically consistent.*rbd_consistent"):
        export_rigid_body_urdf(plain, tmp_path / "bad.urdf")
    save_artifact(LearnedModel(NAMES, "rbd_consistent", rbd=rbd), tmp_path / "art")
    assert main(["export", "--model", str(tmp_path / "art"), "--urdf", "--out", str(tmp_path / "x.urdf")]) == 0
    out = capsys.readouterr().out
    assert "identified inertials" in out and "rotor inertia" in out and (tmp_path / "x.urdf").exists()
    assert main(["export", "--model", str(tmp_path / "art"), "--urdf"]) == 2
    assert "needs --out" in capsys.readouterr().out


def test_negative_identified_friction_is_written_as_zero_and_reported(identified, tmp_path, capsys):
    # a link-side sensor on an arm moved from outside identifies negative friction (the KUKA and DFKI recordings);
    # URDF readers refuse it (pinocchio: min_dry_friction > max_dry_friction), so the file holds 0 and says so
    import dataclasses

    import pinocchio as pin

    from deadzone_id_ros.models import LearnedModel, save_artifact

    _, rbd = identified
    names = rbd.regressor.column_names
    coef = np.array(rbd.coefficients, dtype=float)
    coef[list(rbd.columns).index(names.index("joint2.coulomb"))] = -0.1
    coef[list(rbd.columns).index(names.index("joint3.viscous"))] = -0.05
    negative = dataclasses.replace(rbd, coefficients=coef)
    result = export_rigid_body_urdf(negative, tmp_path / "neg.urdf")
    assert result.ok  # the file against the model without the negative part
    assert set(result.clipped) == {"joint2", "joint3"} and result.clipped["joint2"][1] == pytest.approx(-0.1)
    model = pin.buildModelFromUrdf(str(result.path))  # parses
    ids = [model.joints[model.getJointId(n)].idx_v for n in NAMES]
    assert np.asarray(model.friction)[ids][1] == 0.0 and np.asarray(model.damping)[ids][2] == 0.0
    save_artifact(LearnedModel(NAMES, "rbd_consistent", rbd=negative), tmp_path / "art")
    assert main(["export", "--model", str(tmp_path / "art"), "--urdf", "--out", str(tmp_path / "x.urdf")]) == 0
    assert "negative identified friction written as 0" in capsys.readouterr().out


def test_a_urdf_pinocchio_reads_but_xml_does_not_is_refused_with_the_reason(identified, tmp_path):
    # "--" inside an XML comment: pinocchio's parser loads the robot, ElementTree (the export's) does not
    import dataclasses

    from deadzone_id_ros.resources import default_urdf

    _, rbd = identified
    text = default_urdf().read_text().replace("<robot", "<!-- made with --joint-map -->\n<robot", 1)
    reg = RigidBodyRegressor(text, NAMES, friction_eps=0.02)
    with pytest.raises(ArtifactError, match="not well-formed XML"):
        export_rigid_body_urdf(dataclasses.replace(rbd, regressor=reg), tmp_path / "x.urdf")


def test_every_bundled_urdf_is_well_formed_xml():
    import xml.etree.ElementTree as ET
    from pathlib import Path

    files = sorted((Path(__file__).resolve().parents[2] / "urdf").glob("*.urdf"))  # the repository's, as shipped
    assert len(files) >= 4
    for f in files:
        ET.parse(f)  # raises on a "--" inside a comment, which pinocchio would load
