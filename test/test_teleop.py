"""Leader–follower teleoperation (deadzone_id_ros.teleop): joint map refusals, bilateral signs on a known push,
a stuck joint's gentle push, safety on both arms. Real MuJoCo arms in process (the simulator owns time)."""

from __future__ import annotations

import dataclasses
import math

import mujoco
import numpy as np
import pytest
from conftest import REPO

from deadzone_id_ros.control import FeedforwardController
from deadzone_id_ros.errors import SafetyError
from deadzone_id_ros.experiments.teleop.run import TeleopSettings, _probe, run_case
from deadzone_id_ros.sim.arm import SimArm
from deadzone_id_ros.sim.external_forces import ExternalForces, PushConfig
from deadzone_id_ros.teleop import BilateralConfig, BilateralController, JointMap
from deadzone_id_ros.teleop.build import arm_setup, build_controller_pair
from deadzone_id_ros.teleop.sim import OperatorHand, TeleopRig


@pytest.fixture(scope="module")
def arm():
    return arm_setup("", "identified")


def test_joint_map_by_name_and_explicit():
    jm = JointMap.build(("a", "b", "c"), ("c", "a"))
    assert jm.leader_index.tolist() == [2, 0]
    assert jm.unmapped_leader == ("b",)
    jm2 = JointMap.build(("l1", "l2"), ("f1", "f2"), {"f1": "l2", "f2": "l1"})
    assert jm2.to_follower(np.array([1.0, 2.0])).tolist() == [2.0, 1.0]
    assert jm2.to_leader(np.array([5.0, 6.0]), np.zeros(2)).tolist() == [6.0, 5.0]


@pytest.mark.parametrize("leader, follower, mapping, words", [
    (("a", "b"), ("x", "y"), None, "['x', 'y'] have no leader joint"),
    (("a", "b"), ("x", "y"), {"x": "a"}, "['y'] have no leader joint"),
    (("a", "b"), ("x", "y"), {"x": "a", "y": "zz"}, "leader joint(s) ['zz'] the leader lacks"),
    (("a", "b"), ("x",), {"x": "a", "q": "b"}, "follower joint(s) ['q'] the follower lacks"),
    (("a", "b"), ("x", "y"), {"x": "a", "y": "a"}, "drive several follower joints"),
])
def test_joint_map_refuses_unmappable(leader, follower, mapping, words):
    with pytest.raises(SafetyError, match="refusing to start") as err:
        JointMap.build(leader, follower, mapping)
    assert words in str(err.value)


def test_bilateral_pair_refuses_profiles_that_do_not_map(arm):
    other = dataclasses.replace(arm, sim=dataclasses.replace(arm.sim, joint_names=("j_a", "j_b", "j_c")))
    with pytest.raises(SafetyError, match="have no leader joint"):
        build_controller_pair(arm, other, BilateralConfig())


def test_unilateral_leader_with_a_dob_is_refused(arm):
    with pytest.raises(ValueError, match="resist the operator"):
        build_controller_pair(arm, arm, BilateralConfig(mode="unilateral"))


def test_the_pair_runs_each_model_at_its_own_measured_velocity(arm):
    """The pair's references are made of measured velocities: each arm's model sees its own (docs/controller.md,
    "The velocity the model sees"); the builder sets it whatever the arm's config says, and the controller refuses a
    pair that would feed the model the reference's velocity."""
    assert arm.ctrl.feedforward_velocity == "desired"  # the single-arm default
    ctl = build_controller_pair(arm, arm, BilateralConfig())
    assert ctl.leader.config.feedforward_velocity == ctl.follower.config.feedforward_velocity == "measured"
    desired = FeedforwardController(arm.ctrl, arm.model, ctl.follower.description)
    with pytest.raises(ValueError, match="the follower's controller has feedforward_velocity = 'desired'"):
        BilateralController(ctl.leader, desired, ctl.leader_sensor, ctl.follower_sensor, ctl.map, ctl.config,
                            ctl.q_l0, ctl.q_f0)


def _push_rig(arm, mode: str, magnitude: float, direction: np.ndarray, duration: float):
    home = np.asarray(arm.sim.initial_position, float)
    link, point = _probe(arm)
    push = PushConfig(link=link, point=point, direction=tuple(direction), magnitude=magnitude, shape="ramp",
                      start=0.2, rise_time=0.3, duration=10.0)
    hand = OperatorHand(reference=lambda t: home, stiffness=[10.0] * 3, damping=[0.5] * 3)
    la = SimArm(dataclasses.replace(arm.sim, seed=3), external=hand)
    fa = SimArm(dataclasses.replace(arm.sim, seed=4), external=ExternalForces(pushes=[push]))
    lead = arm if mode == "bilateral" else dataclasses.replace(arm, ctrl=dataclasses.replace(arm.ctrl, mode="ctc"))
    ctl = build_controller_pair(lead, arm, BilateralConfig(mode=mode))
    la.reset(home)
    fa.reset(home)
    return TeleopRig(la, fa, ctl).run(duration), home


def _tangent(arm) -> np.ndarray:
    """World direction in which a force at the probe point turns joint 1 the most (the Jacobian's row)."""
    link, point = _probe(arm)
    sim = SimArm(arm.sim)
    body = sim.model.body(link).id
    jac = np.zeros((3, sim.model.nv))
    p = sim.data.xpos[body] + sim.data.xmat[body].reshape(3, 3) @ np.asarray(point)
    mujoco.mj_jac(sim.model, sim.data, jac, None, p, body)
    v = jac[:, 0]
    return v / np.linalg.norm(v)


def test_known_push_position_symmetry_and_reflection_signs(arm):
    """A push on the follower's tip turning joint 1: the follower yields, the leader follows it (same direction,
    symmetric), and the operator's hand holds the reaction (opposite sign of the push's torque), its size up to the
    static friction of the two arms' stuck joints."""
    tr, home = _push_rig(arm, "bilateral", 3.0, _tangent(arm), 1.5)
    assert not tr.fault
    end = slice(-200, None)
    push = tr.true_f[end].mean(axis=0)
    j = int(np.argmax(np.abs(push)))
    assert j == 0 and abs(push[0]) > 0.3  # the push turns joint 1 well past its static friction
    moved_f = tr.q_f[end, 0].mean() - home[0]
    moved_l = tr.q_l[end, 0].mean() - home[0]
    assert np.sign(moved_f) == np.sign(push[0]) and abs(moved_f) > 0.02  # the follower yields to the push
    assert np.sign(moved_l) == np.sign(moved_f)  # position symmetry: the leader goes along
    assert abs(moved_l - moved_f) < 0.1 * abs(moved_f)
    assert np.sqrt(np.mean(tr.error[end] ** 2)) < 2e-3
    hand = tr.true_l[end, 0].mean()
    assert np.sign(hand) == -np.sign(push[0])  # the operator feels the reaction
    # action-reaction up to the static friction the two stuck joints hide (each arm's band on joint 1)
    assert abs(hand + push[0]) < arm.band.half_width[0] * 2
    assert np.sign(tr.reflected_f[end, 0].mean()) == np.sign(push[0])  # the estimate has the push's sign


def test_unilateral_reflects_nothing(arm):
    """The same push in unilateral mode: the follower holds the leader's position, the hand feels no reaction."""
    tr, home = _push_rig(arm, "unilateral", 3.0, _tangent(arm), 1.5)
    end = slice(-200, None)
    push = tr.true_f[end, 0].mean()
    assert abs(push) > 0.3
    assert abs(tr.true_l[end, 0].mean()) < 0.1 * abs(push)
    assert abs(tr.q_f[end, 0].mean() - home[0]) < 0.01


def test_stuck_joint_gentle_push_neither_phantom_nor_lost(arm):
    """A push below the static friction leaves the follower stuck: the dead-zone-aware interval holds the true
    torque on every pushed tick (not lost), and nothing is reflected to the operator (no phantom force); the
    estimate without the band misses it (the truth lies outside a zero-width interval)."""
    st = TeleopSettings(duration=2.5, window=0.1, stuck_push=0.5)
    tr, _, push = run_case(arm, arm, "bilateral", "stuck", 5, st)
    assert push is not None and push.magnitude > 0
    pushed = np.abs(tr.true_f).max(axis=1) > 0.25 * 0.5 * arm.band.half_width.min()
    assert pushed.sum() > 300
    assert np.all(np.abs(tr.dq_f[pushed]) <= arm.band.velocity_threshold)  # stuck throughout
    lo, hi = tr.est_f - tr.half_f, tr.est_f + tr.half_f
    assert np.all((tr.true_f[pushed] >= lo[pushed]) & (tr.true_f[pushed] <= hi[pushed]))  # not lost
    settled = tr.t >= 0.5  # after the start-up transient of the first ticks
    assert np.abs(tr.reflected_f[settled]).max() < 0.1 * np.abs(tr.true_f).max()  # no phantom force reflected
    raw_miss = np.abs(tr.est_f[pushed] - tr.true_f[pushed]).max(axis=1)
    assert np.median(raw_miss) > 0.25 * np.abs(tr.true_f[pushed]).max()  # without the band it would be lost


def test_both_arms_keep_the_single_arm_limits_and_faults_couple(arm):
    """NaN measurements and a runaway on the follower: every command finite and within the effort limits, and the
    follower's fault latches the leader too."""
    ctl = build_controller_pair(arm, arm, BilateralConfig())
    home = np.asarray(arm.sim.initial_position, float)
    z = np.zeros(3)
    lim = np.asarray(arm.ctrl.effort_limit, float)
    for k in range(5):
        s = ctl.step(k * 1e-3, (home, z, z), (home + (np.nan if k == 2 else 0.0), z, z))
        for tau in (s.tau_leader, s.tau_follower):
            assert np.all(np.isfinite(tau)) and np.all(np.abs(tau) <= lim + 1e-12)
    assert ctl.follower.status.nonfinite_events == 1
    assert not ctl.fault
    upper = ctl.follower.description.upper
    out_f = home.copy()
    out_f[0] = upper[0] + arm.ctrl.position_limit_margin + 0.01  # the follower beyond its position limit
    in_l = home.copy()
    in_l[0] = upper[0] - 0.1  # the leader inside its limits, the half difference below the tracking limit
    ctl.step(0.006, (in_l, z, z), (out_f, z, z))
    assert "position of joint1" in ctl.follower.safety.fault
    assert ctl.leader.safety.fault.startswith("the follower faulted: position of joint1")
    s = ctl.step(0.007, (in_l, z, z), (out_f, z, z))
    assert ctl.leader.status.safe_state == "hold" and np.all(np.abs(s.tau_leader) <= lim)


def test_recorded_demonstration_holds_both_arms_and_the_forces(arm, tmp_path):
    """One bag per demonstration: both arms read back with the data path's reader (the topic train and compare take
    with --topic), and the estimated and true external torques as logged."""
    from rosbags.highlevel import AnyReader

    from deadzone_id_ros.data import read_recording
    from deadzone_id_ros.data.bag.format import typestore
    from deadzone_id_ros.data.bag.namespaced import arm_topics
    from deadzone_id_ros.experiments.teleop.record import trace_to_bag

    st = TeleopSettings(duration=2.5, window=0.1)
    tr, _, _ = run_case(arm, arm, "bilateral", "hold", 2, st)
    names = tuple(arm.sim.joint_names)
    bag = trace_to_bag(tr, names, names, tmp_path / "demo", start_time=1.7e9)
    for ns, q, tau in (("leader", tr.q_l, tr.tau_l), ("follower", tr.q_f, tr.tau_f)):
        topics = arm_topics(ns)
        rec = read_recording(bag, joint_state_topic=topics["state"], command_topic=topics["command"],
                             reference_topic=topics["reference"])
        assert rec.joint_names == names and len(rec.state_t_ns) == len(tr.t)
        np.testing.assert_array_equal(rec.position, q)
        np.testing.assert_array_equal(rec.command, tau)
    with AnyReader([bag], default_typestore=typestore()) as reader:
        got = {}
        for conn, _, raw in reader.messages():
            if "external_torque" in conn.topic:
                got.setdefault(conn.topic, []).append(reader.deserialize(raw, conn.msgtype).data)
    np.testing.assert_array_equal(np.array(got["/follower/external_torque/true"]), tr.true_f)
    np.testing.assert_array_equal(np.array(got["/follower/external_torque/estimated"]), tr.est_f)
    np.testing.assert_array_equal(np.array(got["/leader/external_torque/true"]), tr.true_l)
    assert np.abs(tr.true_f).max() > 0.1  # the demonstration holds a contact


def test_teleop_cli_refuses_an_existing_lerobot_directory_before_running(tmp_path, capsys):
    from deadzone_id_ros.cli.main import main

    (tmp_path / "lerobot").mkdir()
    rc = main(["teleop", "--out", str(tmp_path / "t"), "--models", "identified", "--scenarios", "hold", "--seeds", "4",
               "--lerobot", str(tmp_path / "lerobot")])
    assert rc == 2 and "it exists" in capsys.readouterr().err
    assert not (tmp_path / "t").exists()  # nothing ran


def test_teleop_cli_refuses_a_foreign_out_before_running_and_replaces_its_own(tmp_path, capsys):
    """A new user's rerun into the same --out kept the plots of the earlier run beside the new report; a folder that
    is not teleop's own was written into. Now: a foreign non-empty --out is refused before any run (exit 2, --force
    named), and an earlier teleop output is replaced whole."""
    from deadzone_id_ros.cli.main import main

    foreign = tmp_path / "notes"
    foreign.mkdir()
    (foreign / "mine.txt").write_text("keep")
    assert main(["teleop", "--out", str(foreign), "--models", "identified", "--scenarios", "free", "--seeds", "4",
                 "--duration", "3.2"]) == 2
    assert "--force" in capsys.readouterr().err and [p.name for p in foreign.iterdir()] == ["mine.txt"]
    out = tmp_path / "t"
    argv = ["teleop", "--out", str(out), "--models", "identified", "--modes", "bilateral", "--seeds", "4",
            "--duration", "3.2"]
    assert main([*argv, "--scenarios", "free"]) == 0
    assert (out / "plots" / "teleop_identified_bilateral_free.png").is_file()
    assert main([*argv, "--scenarios", "stuck"]) == 0
    assert not (out / "plots" / "teleop_identified_bilateral_free.png").exists()  # the earlier run's plot is gone
    assert (out / "plots" / "teleop_identified_bilateral_stuck.png").is_file()


def test_teleop_cli_writes_the_report_and_a_demonstration(tmp_path):
    """``deadzone-id teleop`` end to end on one short case: the report's JSON reads back as typed results, the
    markdown names the Done-when items, the demonstration bag exists and its LeRobot export (--lerobot) reads back."""
    import json

    from deadzone_id_ros.cli.main import main
    from deadzone_id_ros.experiments.teleop import TeleopResults

    out = tmp_path / "t"
    rc = main(["teleop", "--out", str(out), "--models", "identified", "--modes", "bilateral", "--scenarios", "hold",
               "--seeds", "4", "--duration", "3.2", "--lerobot", str(tmp_path / "lerobot")])
    assert rc == 0
    res = TeleopResults.from_dict(json.loads((out / "teleop.json").read_text()))
    case = res.case("identified", "bilateral", "hold")
    assert case is not None and case.per_seed[0]["contact_s"] > 1.0 and not case.faults
    md = (out / "teleop.md").read_text()
    assert "oscillation against the box decays" in md and "Why the felt force misses" in md
    # without a bilateral contact case (--scenarios free stuck) no section of headers without rows
    import dataclasses

    from deadzone_id_ros.experiments.teleop.report import markdown

    free = dataclasses.replace(res, cases=[dataclasses.replace(case, scenario="free")])
    assert "Why the felt force misses" not in markdown(free) and "Figures: " in markdown(free)
    assert res.hand_auto and (res.hand_stiffness, res.hand_damping) == (10.0, 0.5)  # sized to the bundled arm
    assert "joint impedance 10 N·m/rad, 0.5 N·m·s/rad (sized to the arm" in md
    assert 0 < case.mean["stuck_share"] <= 1 and case.mean["felt_beyond_band"] <= case.mean["felt_error_settled"]
    assert (out / "plots" / "teleop_identified_bilateral_hold.png").stat().st_size > 0
    assert (out / "demonstration" / "episode.yaml").is_file()  # --lerobot records it (as --record) and exports it
    from deadzone_id_ros.data.lerobot import open_lerobot

    ds = open_lerobot(tmp_path / "lerobot")
    assert ds.frames == 160 and ds.fps == 50 and ds.effort_unit == "N*m"  # 3.2 s at 50 fps, the last tick 3.199 s
    assert {"observation.external_torque_true", "leader.external_torque"} <= set(ds.features)


def test_ideal_sensing_reflects_the_true_torques_and_the_felt_error_parts_add_up(arm):
    """The ideal comparator senses each arm's true external torque of the tick (exactly what the trace logs as
    true), and the felt-error split adds up per tick for a sensorless run; ideal sensing leaves no estimation part
    and less felt error in the held contact than the estimate."""
    from deadzone_id_ros.experiments.teleop.run import felt_error_parts

    st = TeleopSettings(duration=2.5, window=0.1)
    idx = JointMap.build(arm.sim.joint_names, arm.sim.joint_names).leader_index
    ideal, _, _ = run_case(arm, arm, "bilateral", "hold", 2, st, ideal=True)
    sensed, _, _ = run_case(arm, arm, "bilateral", "hold", 2, st)
    assert not ideal.fault and not sensed.fault
    np.testing.assert_array_equal(ideal.reflected_f, ideal.true_f)
    np.testing.assert_array_equal(ideal.reflected_l, ideal.true_l[:, idx])
    contact = [np.abs(tr.true_f).max(axis=1) > 0.02 for tr in (ideal, sensed)]
    assert contact[0].sum() > 500 and contact[1].sum() > 500
    for tr in (ideal, sensed):
        p = felt_error_parts(tr, idx, 1.0)
        np.testing.assert_allclose(p.total, p.law - p.dead_zone - p.leader_estimate - p.follower_estimate,
                                   atol=1e-12)
    ip, sp = felt_error_parts(ideal, idx, 1.0), felt_error_parts(sensed, idx, 1.0)
    assert not ip.leader_estimate.any() and not ip.follower_estimate.any()
    assert np.abs(sp.leader_estimate[contact[1]]).max() > 0.05  # the sensorless run does misestimate in contact

    def rel(tr, c):
        return np.sqrt(np.mean(np.sum((tr.true_l[:, idx] + tr.true_f)[c] ** 2, axis=1))
                       / np.mean(np.sum(tr.true_f[c] ** 2, axis=1)))
    assert rel(ideal, contact[0]) < rel(sensed, contact[1])


def test_load_aware_band_widens_stuck_joints_with_the_transmitted_torque(arm):
    """A stuck joint's interval is tau_s + slope |tau| wide (the profile's load-dependent static friction), a moving
    joint's stays exact; a bad slope is refused."""
    from deadzone_id_ros.sensing import ResidualEstimator
    from deadzone_id_ros.teleop.build import LoadAwareSensor

    names = tuple(arm.sim.joint_names)
    slope = np.asarray(arm.load_slope, float)
    assert slope.shape == (3,) and np.all(slope > 0)  # the bundled profile's friction grows with load
    sensor = LoadAwareSensor(ResidualEstimator(arm.model, np.full(3, 100.0), names), arm.band, slope)
    q = np.asarray(arm.sim.initial_position, float)
    tau = np.array([1.0, -2.0, 0.5])
    sensor.update(0.0, q, np.zeros(3), tau)
    s = sensor.update(1e-3, q, np.array([0.0, 0.5, 0.0]), tau)  # joints 1 and 3 stuck, joint 2 moving
    np.testing.assert_allclose(s.half_width, [arm.band.half_width[0] + slope[0] * 1.0, 0.0,
                                              arm.band.half_width[2] + slope[2] * 0.5])
    with pytest.raises(ValueError, match="load_slope must be 3 finite values >= 0"):
        LoadAwareSensor(ResidualEstimator(arm.model, np.full(3, 100.0), names), arm.band, np.array([0.1, -1, 0]))


def test_held_contact_intervals_hold_the_felt_imbalance_with_the_load_aware_band(arm):
    """In a held contact both arms' stuck joints hide the force within their static friction; the load-aware
    intervals of the two arms hold the felt-vs-contact imbalance on more settled ticks than the constant band."""
    st = TeleopSettings(duration=2.5, window=0.1)
    idx = np.arange(3)
    inside = []
    for a in (arm, dataclasses.replace(arm, load_slope=())):
        tr, _, _ = run_case(a, a, "bilateral", "hold", 2, st)
        contact = np.abs(tr.true_f).max(axis=1) > 0.02
        settled = contact & (tr.t >= tr.t[contact][0] + 0.3)
        assert settled.sum() > 500
        imbalance = np.abs(tr.true_l[:, idx] + tr.true_f)[settled]
        inside.append(np.mean(imbalance <= (tr.half_l + tr.half_f)[settled] + 1e-12))
    assert inside[0] > 0.9 > inside[1]


def test_friction_correction_identifies_the_profiles_load_friction(arm):
    """The correction identified on free motion of the simulated arm (teleop.calibration) grows with the transmitted
    torque as the profile's friction law does: its load gain |load + load x Stribeck| lies within 15% of the
    profile's Kl + Kls on every joint (the ridge fit shrinks it a little: 0.215-0.224 against 0.234 measured)."""
    assert arm.friction is not None and arm.friction.joint_names == tuple(arm.sim.joint_names)
    np.testing.assert_allclose(arm.friction.load_gain(), arm.load_slope, rtol=0.15)
    assert arm_setup("", "nominal").friction is None  # the baseline stays the URDF rigid body alone
    assert arm_setup("", "identified").friction is arm.friction  # identified once per process


def test_friction_correction_keeps_the_felt_force_of_sliding_joints_within_the_intervals():
    """so101 with a gentle operator (3 N·m/rad), held contact: both arms slide slowly along the box with the contact
    torque through their gears, so their friction is the load-dependent one. Without the correction the estimates
    miss it and the felt error lies mostly beyond the two arms' dead-zone intervals (56% of the contact torque
    measured); with it, within 10% (8% measured)."""
    from deadzone_id_ros.experiments.teleop.run import _figures

    st = TeleopSettings(robot="so101", hand_stiffness=3.0, hand_damping=0.5)
    beyond = []
    for friction in (True, False):
        a = arm_setup("so101", "identified", friction=friction)
        tr, _, _ = run_case(a, a, "bilateral", "hold", 1, st)
        beyond.append(_figures(tr, "hold", st, np.arange(len(a.sim.joint_names)))["felt_beyond_band"])
    assert beyond[0] < 0.10 < 0.40 < beyond[1], beyond


def test_the_operator_is_sized_to_the_arm_so_a_panda_feels_the_contact():
    """The scripted operator's default impedance follows the arm (hand_impedance): 10 N·m/rad and 0.5 N·m·s/rad on
    the bundled arm, the values chosen there by hand, and on a Panda (87 N·m joints) stiff enough to hold the leader
    against the contact. With the bundled arm's fixed 10 N·m/rad a Panda pair bounced off the box and the operator
    felt almost nothing of it even with ideal force sensors (felt error 97% measured, hold, seed 1); sized to the
    arm, 13% (the same run)."""
    from deadzone_id_ros.experiments.teleop.run import _figures
    from deadzone_id_ros.experiments.teleop.sizing import hand_impedance

    assert hand_impedance(arm_setup("", "nominal"), TeleopSettings()) == (10.0, 0.5)
    panda = arm_setup("panda", "identified")
    k, d = hand_impedance(panda, TeleopSettings(robot="panda"))
    assert k > 100.0 and d == pytest.approx(0.05 * k)
    assert hand_impedance(panda, TeleopSettings(hand_stiffness=3.0)) == (3.0, pytest.approx(0.15))
    idx = np.arange(len(panda.sim.joint_names))
    felt = []
    for stiffness in (None, 10.0):
        st = TeleopSettings(robot="panda", hand_stiffness=stiffness, hand_damping=None if stiffness is None else 0.5)
        tr, _, _ = run_case(panda, panda, "bilateral", "hold", 1, st, ideal=True)
        assert not tr.fault
        felt.append(_figures(tr, "hold", st, idx)["felt_error"])
    assert felt[0] < 0.3 and felt[1] > 0.8, felt


def test_teleop_help_gives_the_sized_operator_of_each_shipped_arm(capsys):
    """--help names the default operator stiffness of the bundled arm, so101 and panda: the numbers hand_impedance
    gives (rounded as printed)."""
    import re

    from deadzone_id_ros.cli.main import main
    from deadzone_id_ros.experiments.teleop.sizing import HAND_DAMPING_TIME, HAND_LOAD_SHARE, hand_impedance

    with pytest.raises(SystemExit):
        main(["teleop", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    m = re.search(r"([\d.]+) N·m/rad on the bundled arm, ([\d.]+) on so101, ([\d.]+) on panda", text)
    assert m, text
    for robot, printed in zip(("", "so101", "panda"), m.groups()):
        k, _ = hand_impedance(arm_setup(robot, "nominal"), TeleopSettings(robot=robot))
        assert float(printed) == pytest.approx(k, rel=0.01), (robot, printed, k)
    assert f"asks for {HAND_LOAD_SHARE:.3g} of the moved joint's effort limit" in text
    assert f"default: {HAND_DAMPING_TIME:g} s times the stiffness" in text
    launch = (REPO / "launch" / "teleop.launch.yaml").read_text()
    assert f"0 = {HAND_DAMPING_TIME:g} s times the stiffness" in launch


def test_stuck_scenario_without_static_friction_is_not_applicable():
    """A follower whose joints have no static friction (the derived UR profiles) gets no stuck push, and the report
    says the item does not apply instead of "NOT met: coverage nan%"; one with friction is judged as before."""
    from deadzone_id_ros.experiments.teleop.report import done_when
    from deadzone_id_ros.experiments.teleop.results import CaseFigures, TeleopResults

    def results(push_peak: float) -> TeleopResults:
        seed = {"phantom": 0.0, "coverage": math.nan if push_peak == 0 else 1.0, "push_peak": push_peak}
        case = CaseFigures.from_seeds("identified", "identified", "bilateral", "stuck", [seed], [])
        return TeleopResults(robot="r", joint_names=["a"], seeds=[1], duration=4.0, hand_stiffness=1.0,
                             hand_damping=0.05, force_gain=1.0, force_damping=0.0, position_scale=1.0,
                             force_scale=1.0, cases=[case], wall_s=1.0)

    (item, met, text), = done_when(results(0.0))
    assert met is None and "no joint of the follower has static friction" in text
    (item, met, text), = done_when(results(0.03))
    assert met is True and "coverage 100.0%" in text


def test_an_arm_without_static_friction_gets_no_stuck_push():
    """The derived UR5 profile has no static friction on any joint: the stuck scenario's push is 0 N (the report
    then says the item does not apply); an arm with friction gets a push below its smallest static friction."""
    from deadzone_id_ros.experiments.teleop.sizing import stuck_push

    ur5 = arm_setup("catalog:ur5_robot", "identified")
    home = np.asarray(ur5.sim.initial_position, float)
    assert stuck_push(ur5, home, TeleopSettings()).magnitude == 0.0
    bundled = arm_setup("", "identified")
    push = stuck_push(bundled, np.asarray(bundled.sim.initial_position, float), TeleopSettings())
    assert push.magnitude > 0.0


def test_a_move_that_moves_nothing_is_refused_with_its_name():
    with pytest.raises(ValueError, match=r"move = \[0.0, 0.0, 0.0\] must move some joint"):
        TeleopSettings(move=(0.0, 0.0, 0.0))


def test_an_operator_reference_of_the_wrong_length_is_named():
    """The operator's reference must give one value per joint (or one for all): anything else is refused with the
    count it needs, before any torque reaches the arm."""
    setup = arm_setup("", "nominal")
    hand = OperatorHand(reference=lambda t: np.zeros(2), stiffness=[1.0] * 3, damping=[0.1] * 3)
    arm = SimArm(setup.sim, external=hand)
    with pytest.raises(ValueError, match=r"operator reference\(t\) must give 3 values \[rad\] \(or one\), got shape "
                                         r"\(2,\)"):
        arm.step(np.zeros(3))


def test_report_of_learned_models_given_by_path_names_a_plot_per_path(tmp_path):
    """A learned model is given by its path (``--models runs/a/pick``), which holds "/": the report writes one plot per
    model, two artifacts of one folder name in different places apart (the report once split the trace's key on "/"
    and crashed after every run), and the Done-when items of each."""
    from deadzone_id_ros.experiments.teleop import run_teleop
    from deadzone_id_ros.experiments.teleop.report import plot_name, write_teleop

    res, traces = run_teleop(TeleopSettings(models=("identified",), modes=("bilateral",), scenarios=("hold",),
                                            seeds=(4,), duration=3.2), progress=False)
    (case,), (trace,) = res.cases, traces.values()
    paths = ("runs/a/pick", "runs/b/pick")
    res = dataclasses.replace(res, cases=[dataclasses.replace(case, model=p) for p in paths])
    md = write_teleop(tmp_path, res, {(p, "bilateral", "hold"): trace for p in paths})
    names = [plot_name(p, "bilateral", "hold") for p in paths]
    assert names == ["teleop_runs_a_pick_bilateral_hold.png", "teleop_runs_b_pick_bilateral_hold.png"]
    for name in names:
        assert (tmp_path / "plots" / name).stat().st_size > 0 and f"(plots/{name})" in md
    # the Done-when items of each dead-zone-aware model, not the identified model's alone
    done = md.split("## Done when")[1].split("## Every case")[0]
    assert done.index("Model `runs/a/pick`:") < done.index("Model `runs/b/pick`:")
    assert done.count("hold: felt vs true contact torque") == 2
