"""Model swap at run time (issue 23 item 2): check_swap refuses wrong joints, wrong units, non-finite outputs and
torques beyond the effort limits (naming the joint and by how much); a refused swap leaves the controller running the
old model, command for command; an accepted one keeps the rate limit (no command step beyond it)."""

from __future__ import annotations

import re

import numpy as np
import pytest

from deadzone_id_ros.control import FeedforwardController, TrajectoryPoints
from deadzone_id_ros.control.model_swap import ProbeBuffer, check_swap
from deadzone_id_ros.models.mlp import MLPWeights, Standardizer
from deadzone_id_ros.models.predictor import LearnedModel
from deadzone_id_ros.models.runtime import NominalRigidBodyModel, ZeroModel
from deadzone_id_ros.resources import default_urdf
from deadzone_id_ros.robot_configs import bundled_controller_config

NAMES = ("joint1", "joint2", "joint3")
LIMITS = np.array([4.0, 10.0, 5.0])  # URDF effort limits of the bundled arm [N m]
Q0 = np.array([0.0, 0.3, 0.6])


def constant_model(tau, names=NAMES, metadata=None) -> LearnedModel:
    """A learned model (zero weights) that predicts ``tau`` [its unit] at every state."""
    j = len(names)
    mlp = MLPWeights((np.zeros((j, 3 * j), np.float32),), (np.zeros(j, np.float32),), "tanh",
                     Standardizer(np.zeros(3 * j), np.ones(3 * j)), Standardizer(np.asarray(tau, float), np.ones(j)))
    return LearnedModel(names, "masked", mlp=mlp, metadata=metadata)


class OffsetModel:
    """The rigid body plus a constant torque [N m]; NaN for joint2 where q[joint2] > ``nan_above`` [rad]."""

    joint_names = NAMES

    def __init__(self, offset, nan_above: float = np.inf) -> None:
        self.rbd = NominalRigidBodyModel(default_urdf(), NAMES)
        self.offset, self.nan_above = np.asarray(offset, float), nan_above

    def predict(self, q, dq, ddq):
        tau = self.rbd.predict(q, dq, ddq) + self.offset
        tau[..., 1] = np.where(np.asarray(q)[..., 1] > self.nan_above, np.nan, tau[..., 1])
        return tau


def probe(n: int = 20, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return Q0 + 0.1 * rng.standard_normal((n, 3)), rng.standard_normal((n, 3)), rng.standard_normal((n, 3))


def check(model, states=None):
    return check_swap(model, NAMES, LIMITS, *(states if states is not None else probe()))


def test_check_swap_accepts_a_good_model_and_refuses_each_fault_naming_it():
    ok = check(NominalRigidBodyModel(default_urdf(), NAMES[::-1]))  # another joint order is fine: mapped by name
    assert ok.accepted and "within the effort limits on 20 probe states" in ok.reason, ok.reason
    wrong_joints = check(ZeroModel(("joint1", "joint2", "elbow")))
    assert not wrong_joints.accepted
    assert "missing from the model ['joint3'], not controlled ['elbow']" in wrong_joints.reason
    current = check(constant_model([0.1, 0.1, 0.1], metadata={"effort_units": {j: "mA" for j in NAMES}}))
    assert not current.accepted and "'joint2': 'mA'" in current.reason and "not N·m" in current.reason
    degrees = check(constant_model([0.1] * 3, metadata={"units": {"q": "deg", "dq": "rad/s", "ddq": "rad/s^2",
                                                                  "tau": "N*m"}}))
    assert not degrees.accepted and "{'q': 'deg'}" in degrees.reason, degrees.reason
    assert check(constant_model([0.1] * 3, metadata={"units": {"q": "rad", "dq": "rad/s", "ddq": "rad/s^2",
                                                               "tau": "N*m"}})).accepted
    nan = check(OffsetModel([0.0, 0.0, 0.0], nan_above=0.3))
    assert not nan.accepted and "non-finite torque on" in nan.reason and "joints ['joint2']" in nan.reason
    over = check(constant_model([0.0, -12.5, 1.0]))
    assert not over.accepted, over.reason
    assert "|tau| of joint2 reaches 12.5 N·m" in over.reason and "2.5 N·m beyond its effort limit 10 N·m" in over.reason
    assert "20 probe states exceed a limit; joints ['joint2']" in over.reason
    assert check(constant_model([0.0, -9.99, 1.0])).accepted  # just inside the limit


def test_check_swap_refuses_a_failing_predict_and_an_empty_probe():
    class Broken:
        joint_names = NAMES

        def predict(self, q, dq, ddq):
            raise RuntimeError("session closed")

    verdict = check(Broken())
    assert not verdict.accepted and "RuntimeError: session closed" in verdict.reason
    empty = np.zeros((0, 3))
    verdict = check(ZeroModel(NAMES), (empty, empty, empty))
    assert not verdict.accepted and "no probe states" in verdict.reason
    with pytest.raises(ValueError, match=r"q must have shape \(N, 3\)"):
        check_swap(ZeroModel(NAMES), NAMES, LIMITS, np.zeros((4, 2)), np.zeros((4, 2)), np.zeros((4, 2)))


def test_probe_buffer_keeps_the_latest_states_in_order():
    buf = ProbeBuffer(3, capacity=4, every=2)
    assert buf.states()[0].shape == (0, 3)
    for k in range(11):  # kept: calls 0, 2, 4, ..., 10 -> the last four are 4, 6, 8, 10
        buf.record(np.full(3, k), np.full(3, -k), np.full(3, 2 * k))
    q, dq, ddq = buf.states()
    assert q[:, 0].tolist() == [4, 6, 8, 10] and dq[:, 0].tolist() == [-4, -6, -8, -10]
    q, _, ddq = buf.states((np.full(3, 99.0), np.zeros(3), np.zeros(3)))
    assert q[:, 0].tolist() == [4, 6, 8, 10, 99] and ddq[:, 0].tolist() == [8, 12, 16, 20, 0]


def _controller(model, **kw) -> FeedforwardController:
    return FeedforwardController(bundled_controller_config(mode="ctc", model="rbd", **kw), model)


def _reference(t0: float = 0.0, seconds: float = 1.0) -> TrajectoryPoints:
    """A slow swing of joint2 from Q0 to Q0 + 0.2 rad and back."""
    t = np.linspace(t0, t0 + seconds, 11)
    pos = Q0 + np.outer(0.2 * np.sin(np.pi * (t - t0) / seconds), [0.0, 1.0, 0.0])
    return TrajectoryPoints(NAMES, t, pos, np.zeros_like(pos), np.zeros_like(pos))


def _run(ctrl: FeedforwardController, ticks: range, swap_at: int | None = None, new_model=None):
    """Step ``ctrl`` along the reference with the arm at the desired position (q = q_d); swap at tick ``swap_at``.
    Returns (commands (K, 3) [N m], the verdict or None)."""
    verdict = None
    out = []
    for k in ticks:
        if k == swap_at:
            verdict = ctrl.swap_model(new_model)
        t = 1e-3 * k
        q_d = ctrl.reference.sample(t)[0] if ctrl.reference is not None else Q0
        out.append(ctrl.step(t, np.array(q_d), np.zeros(3)))
    return np.array(out), verdict


@pytest.mark.parametrize("bad", ["joints", "units", "nonfinite", "limits"])
def test_a_refused_swap_leaves_the_old_model_running(bad):
    """A refused swap changes nothing: the commands are those of a twin controller never asked to swap, bit for bit.
    The non-finite model is finite on the swap's own probe and NaN only on states the controller has seen (joint2
    above 0.35 rad): the ring of recent states is what refuses it."""
    new = {"joints": ZeroModel(("joint1", "joint2", "elbow")),
           "units": constant_model([0.1] * 3, metadata={"effort_units": {j: "mA" for j in NAMES}}),
           "nonfinite": OffsetModel([0.0, 0.0, 0.0], nan_above=0.35),
           "limits": OffsetModel([0.0, 0.0, 6.0])}[bad]  # joint3 beyond 5 N m where gravity pulls it
    rbd = NominalRigidBodyModel(default_urdf(), NAMES)
    ctrl, twin = _controller(rbd), _controller(rbd)
    for c in (ctrl, twin):
        c.set_reference(_reference())
    first, _ = _run(ctrl, range(0, 500))
    if bad == "nonfinite":
        assert check(new, (np.array([Q0]), np.zeros((1, 3)), np.zeros((1, 3)))).accepted  # fine at Q0 alone
    verdict = ctrl.swap_model(new, probe=(np.array([Q0]), np.zeros((1, 3)), np.zeros((1, 3))))
    assert not verdict.accepted, verdict.reason
    assert {"joints": "not controlled ['elbow']", "units": "not N·m", "nonfinite": "joints ['joint2']",
            "limits": "of joint3 reaches"}[bad] in verdict.reason
    assert ctrl.model is rbd
    second, _ = _run(ctrl, range(500, 1000))
    expected, _ = _run(twin, range(0, 1000))
    np.testing.assert_array_equal(np.concatenate([first, second]), expected)
    assert np.abs(np.diff(expected, axis=0)).max() > 0  # the reference moved the command


def test_the_rate_limit_holds_across_an_accepted_swap():
    """Swap to the rigid body + 3 N m on joint1 (60 rate steps of 0.05 N m at 50 N m/s and 1 kHz): no command step
    beyond the rate limit, and the command reaches the new model's torque by ramping."""
    rate = 50.0
    rbd = NominalRigidBodyModel(default_urdf(), NAMES)
    ctrl = _controller(rbd, torque_rate_limit=(rate,) * 3)
    new = OffsetModel([3.0, 0.0, 0.0])
    before = ctrl.status.rate_limit_events.copy()
    tau, verdict = _run(ctrl, range(0, 400), swap_at=200, new_model=new)
    assert verdict is not None and verdict.accepted, verdict
    assert ctrl.model is new and ctrl.config.model == "rbd"  # a swap without config keeps the description
    steps = np.abs(np.diff(tau, axis=0))
    assert steps.max() <= rate * 1e-3 + 1e-12, steps.max()
    # the ramp: rate-limited from the swap on, 60 ticks of 0.05 N m, then at the new torque
    assert steps[199:259, 0].min() == pytest.approx(rate * 1e-3)
    assert ctrl.status.rate_limit_events[0] - before[0] >= 59
    np.testing.assert_allclose(tau[-1], rbd.predict(Q0, np.zeros(3), np.zeros(3)) + [3.0, 0, 0], atol=1e-9)
    np.testing.assert_allclose(tau[199], rbd.predict(Q0, np.zeros(3), np.zeros(3)), atol=1e-9)


def test_swap_with_a_config_takes_its_model_fields_only():
    ctrl = _controller(NominalRigidBodyModel(default_urdf(), NAMES))
    ctrl.step(0.0, Q0, np.zeros(3))
    import dataclasses

    friction = dataclasses.replace(ctrl.config, model_friction=True)
    assert ctrl.swap_model(NominalRigidBodyModel(default_urdf(), NAMES, friction=True), config=friction).accepted
    assert ctrl.config.model_friction
    with pytest.raises(ValueError, match="a model swap changes only .* kp differs"):
        ctrl.swap_model(ZeroModel(NAMES), config=dataclasses.replace(ctrl.config, kp=(1.0,) * 3))


def _scaled_arm(path, factor: float, link1_izz: float = 1.0) -> str:
    """The bundled arm's URDF with every moving link's mass and inertia times ``factor`` (link1's izz times
    ``link1_izz`` more), written to ``path``."""
    import xml.etree.ElementTree as ET

    root = ET.fromstring(default_urdf().read_text())
    for link in root.iter("link"):
        if link.get("name") == "base_link":
            continue
        for mass in link.iter("mass"):
            mass.set("value", repr(factor * float(mass.get("value"))))
        for inertia in link.iter("inertia"):
            for key in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz"):
                extra = link1_izz if (link.get("name"), key) == ("link1", "izz") else 1.0
                inertia.set(key, repr(extra * factor * float(inertia.get(key))))
    text = ET.tostring(root, encoding="unicode")
    path.write_text(text)
    return text


def _rbd_artifact(tmp_path, name: str, factor: float, link1_izz: float = 1.0):
    """An rbd artifact as `deadzone-id train` writes one, identified on the nominal torques of the bundled arm with
    masses and inertias times ``factor`` (:func:`_scaled_arm`), and carrying that arm's URDF; loaded back."""
    from deadzone_id_ros.data.deadzone import DeadZone
    from deadzone_id_ros.models import RigidBodyRegressor, fit_rigid_body, load_artifact, save_artifact

    urdf = tmp_path / f"{name}.urdf"
    xml = _scaled_arm(urdf, factor, link1_izz)
    q, dq, ddq = probe(300, seed=1)
    tau = NominalRigidBodyModel(urdf, NAMES).predict(q, dq, ddq)
    rbd = fit_rigid_body(RigidBodyRegressor(xml, NAMES), q, dq, ddq, tau)
    dz = DeadZone(NAMES, None, np.full(3, 0.01), np.full(3, 0.02))
    saved = save_artifact(LearnedModel(NAMES, "rbd", rbd=rbd, dead_zone=dz), tmp_path / name, onnx=False)
    return load_artifact(saved.path)


def test_a_model_of_another_arm_with_the_same_joints_is_refused_at_swap_and_at_start_up(tmp_path):
    """Issue 40 item 4: an artifact whose URDF is the bundled arm with 2.5x the masses (same joint names, N·m)."""
    from deadzone_id_ros.control.arm_check import ARM_TOLERANCE
    from deadzone_id_ros.errors import SafetyError

    heavy = _rbd_artifact(tmp_path, "heavy", 2.5)
    ctrl = _controller(NominalRigidBodyModel(default_urdf(), NAMES))
    assert abs(heavy.predict(Q0, np.zeros(3), np.zeros(3))[1]) > 2 * abs(ctrl.static_torque(Q0)[1])  # it would run
    before = ctrl.model
    verdict = ctrl.swap_model(heavy, probe())
    assert not verdict.accepted and ctrl.model is before, verdict.reason
    assert "trained for another arm" in verdict.reason and f"tolerance {ARM_TOLERANCE:.0%}" in verdict.reason
    for joint in NAMES:  # every nominal torque scales with the masses: each joint differs by (2.5 - 1) of itself
        assert re.search(rf"{joint} by [0-9.]+ N·m RMS \({2.5 - 1:.0%} of its", verdict.reason), verdict.reason
    assert f"link2 (moved by joint2) mass {2.5 * 0.8:.4g} kg in the model's URDF, {0.8:.4g} kg" in verdict.reason
    assert "(x2.5)" in verdict.reason
    with pytest.raises(SafetyError, match=r"another arm.*link3 \(moved by joint3\) mass.*refusing to start"):
        _controller(heavy)
    same = _rbd_artifact(tmp_path, "same", 1.0)
    ok = ctrl.swap_model(same, probe())
    assert ok.accepted and "same arm (nominal torques within 1%" in ok.reason, ok.reason
    near = _rbd_artifact(tmp_path, "near", 1.05)  # a URDF revision of the same arm: accepted, the difference said
    noted = ctrl.swap_model(near, probe())
    assert noted.accepted and "same arm within the 10% tolerance, but" in noted.reason, noted.reason
    assert "(x1.05)" in noted.reason


def test_a_model_of_another_arm_is_refused_when_the_controllers_urdf_is_xacro(tmp_path):
    """Review of issue 40: the arm check read the controller's URDF as raw text, so a xacro description was "not
    compared" and the other arm's model accepted. It is read as every URDF is (xacro expanded)."""
    from deadzone_id_ros.errors import SafetyError

    xacro = tmp_path / "arm.urdf.xacro"  # the bundled arm with its last joint and link in a macro (a gripper's form)
    text = default_urdf().read_text()
    a, b = text.index("  <!-- Joint 3"), text.index("  <ros2_control")
    xacro.write_text(text[:a].replace('<robot name="three_dof_arm">', '<robot xmlns:xacro="http://www.ros.org/wiki/'
                                      'xacro" name="three_dof_arm">', 1)
                     + f'<xacro:macro name="wrist">\n{text[a:b]}</xacro:macro>\n<xacro:wrist/>\n' + text[b:])
    heavy = _rbd_artifact(tmp_path, "heavy", 2.5)
    with pytest.raises(SafetyError, match=r"trained for another arm.*arm\.urdf\.xacro.*refusing to start"):
        _controller(heavy, urdf_path=str(xacro))
    ctrl = _controller(NominalRigidBodyModel(default_urdf(), NAMES), urdf_path=str(xacro))
    verdict = ctrl.swap_model(heavy, probe())
    assert not verdict.accepted and "trained for another arm" in verdict.reason, verdict.reason


def test_a_model_whose_arm_cannot_be_compared_is_refused_with_the_reason(tmp_path):
    """A model that carries a URDF, checked against a controller URDF that lacks one of its joints: the comparison
    fails, and the model is refused naming why (it was accepted as "arm not compared")."""
    import dataclasses

    from deadzone_id_ros.control.arm_check import ArmReference, arm_verdict
    from deadzone_id_ros.robot import load_robot_description

    same = _rbd_artifact(tmp_path, "same", 1.0)
    reference = ArmReference.of(load_robot_description(default_urdf(), NAMES))
    assert reference.urdf_xml is not None and arm_verdict(same, reference, NAMES, LIMITS)[0] is False
    other = dataclasses.replace(reference, urdf_xml=reference.urdf_xml.replace('"joint3"', '"wrist"'))
    refuse, why = arm_verdict(same, other, NAMES, LIMITS)
    assert refuse, why
    assert re.search(r"cannot compare the model's robot\.urdf with the controller's arm: .*joint\(s\) \['joint3'\] "
                     r"not in the URDF.*refused", why), why
    unreadable = dataclasses.replace(reference, urdf_xml=None, error="URDF /gone.urdf does not exist")
    refuse, why = arm_verdict(same, unreadable, NAMES, LIMITS)
    assert refuse and "cannot read the controller's URDF" in why and "/gone.urdf does not exist" in why, why


def test_the_arm_check_at_start_up_uses_the_controllers_effort_limits_as_the_swap_does(tmp_path):
    """Review of issue 40: at start-up the arm check took the URDF's effort limits for the floor of its scale (1% of
    the limit), at a swap the controller's (the profile's). On a light arm (the bundled one at 0.1x its masses) whose
    joint1 carries less than 1% of the URDF's 4 N·m, a model whose link1 is 10x as hard to turn differs by about 20%
    of joint1's torque, but by under 10% of the URDF floor: accepted at start-up, refused at a swap. With the
    drive's 0.4 N·m limit (a profile's effort_limit) both see 20% and refuse."""
    from deadzone_id_ros.control.arm_check import ARM_TOLERANCE, ArmReference, compare_arms, model_urdf
    from deadzone_id_ros.errors import SafetyError
    from deadzone_id_ros.robot import load_robot_description

    light = tmp_path / "light.urdf"
    _scaled_arm(light, 0.1)
    other = _rbd_artifact(tmp_path, "other", 0.1, link1_izz=10.0)
    desc = load_robot_description(light, NAMES)
    limit = (0.4, float(desc.effort_limit[1]), float(desc.effort_limit[2]))
    ref = ArmReference.of(desc)
    by_urdf, by_drive = (compare_arms(model_urdf(other), ref.urdf_xml, NAMES, ref.lower, ref.upper, np.asarray(lim))
                         for lim in (desc.effort_limit, limit))
    assert by_urdf.relative[0] < ARM_TOLERANCE < by_drive.relative[0], (by_urdf.relative, by_drive.relative)
    with pytest.raises(SafetyError, match=r"trained for another arm.*joint1.*refusing to start"):
        _controller(other, urdf_path=str(light), effort_limit=limit)
    ctrl = _controller(NominalRigidBodyModel(light, NAMES), urdf_path=str(light), effort_limit=limit)
    verdict = ctrl.swap_model(other, probe())
    assert not verdict.accepted and "trained for another arm" in verdict.reason, verdict.reason
