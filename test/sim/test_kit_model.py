"""A profile's actuator kit in the simulator and the controller (issue 39, item 5): encoder counts, the effort limit,
the hardware's rate and the servo's Present_Load readout, generic for any profile (here one of the bundled arm's
URDF, whose <limit effort> is 4 / 10 / 5 N·m)."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from deadzone_id_ros.control import build_controller
from deadzone_id_ros.resources import default_urdf
from deadzone_id_ros.robot.derived import derive_robot
from deadzone_id_ros.robot.profile import load_profile
from deadzone_id_ros.robot_configs import controller_config, sim_config
from deadzone_id_ros.sim import SimArm
from deadzone_id_ros.sim.offline import simulate
from deadzone_id_ros.sim.servo import present_load
from deadzone_id_ros.sim.sim_arm_params import load_sim_config

JOINTS = ("joint1", "joint2", "joint3")
COUNT = 2 * math.pi / 4096  # one count of a 12-bit encoder [rad]
LIMIT = (1.5, 3.0, 1.0)  # the kit's effort limits [N·m], below the URDF's 4 / 10 / 5
RATE = 250.0  # the kit's state/command rate [Hz]: 4 physics steps of 1 ms


def _kit(tmp_path):
    settings = "".join(f"  {j}:\n    effort_limit: {{value: {e}, source: test datasheet}}\n"
                       f"    encoder_resolution: {{value: {COUNT!r}, source: 12-bit encoder}}\n"
                       for j, e in zip(JOINTS, LIMIT))
    path = tmp_path / "kit.yaml"
    path.write_text(f"name: kit\nurdf: {default_urdf()}\njoints: [{', '.join(JOINTS)}]\nhome: [0.0, 0.3, 0.6]\n"
                    f"control_rate: {RATE}\nsettings:\n{settings}")
    return path, derive_robot(load_profile(path))


def test_simulated_positions_are_whole_encoder_counts_at_the_profiles_rate(tmp_path):
    """The recorded /joint_states positions of an offline run are multiples of 2 pi / 4096 (zero offset), sampled
    at the profile's control_rate; with the default 16-bit encoder they would not be."""
    _, robot = _kit(tmp_path)
    rec = simulate(1.0, 3, sim_config(robot), controller_config(robot))
    counts = rec.position / COUNT
    np.testing.assert_allclose(counts, np.round(counts), rtol=0, atol=1e-6)
    assert len(np.unique(np.round(counts[:, 0]))) > 10  # the arm moved over many counts
    np.testing.assert_array_equal(np.diff(rec.state_t_ns), round(1e9 / RATE))
    assert rec.metadata["rate_hz"] == RATE and len(rec.state_t_ns) == round(RATE)


def test_the_clamp_acts_at_the_profiles_effort_limit(tmp_path):
    """Controller and simulator clamp at the profile's effort limit, not the URDF's."""
    _, robot = _kit(tmp_path)
    cfg = controller_config(robot)
    np.testing.assert_allclose(build_controller(cfg).effort_limit, LIMIT)
    np.testing.assert_allclose(cfg.torque_rate_limit, np.array(LIMIT) / robot.profile.torque_rise_time)
    arm = SimArm(sim_config(robot, profile="ideal"))
    np.testing.assert_allclose(arm.step(np.array([-9.0, 9.0, 4.5])), [-1.5, 3.0, 1.0])
    np.testing.assert_allclose(arm.measure().effort, [-1.5, 3.0, 1.0])


def test_the_sim_arm_node_takes_the_profiles_rate_and_resolution(tmp_path):
    """The sim_arm node's parameter file names neither; the profile fills both."""
    path, _ = _kit(tmp_path)
    physics, node = load_sim_config(None, robot=str(path))
    assert node.publish_rate == RATE
    assert physics.encoder_resolution == (COUNT,) * 3 and physics.effort_limit == LIMIT


def test_present_load_readout_is_the_pwm_duty_in_tenths_of_a_percent(tmp_path):
    """effort_readout "present_load": round(1000 (tau / tau_stall + dq / w0)), clipped to +-1000."""
    _, robot = _kit(tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        arm = SimArm(sim_config(robot, profile="ideal", effort_readout="present_load", no_load_speed=(5.0, 5.0, 5.0),
                                velocity_noise_std=(0.0, 0.0, 0.0)))
    arm.reset(np.array([0.0, 0.3, 0.6]), np.array([0.5, -1.0, 0.0]))
    tau = np.array([0.3, 1.0, -2.0])
    arm.step(tau)
    meas = arm.measure()
    expected = np.round(1000 * np.clip(np.clip(tau, -np.array(LIMIT), LIMIT) / LIMIT + arm.dq / 5.0, -1, 1))
    np.testing.assert_array_equal(meas.effort, expected)
    assert meas.effort[2] == -1000 and np.all(meas.effort == np.round(meas.effort))
    np.testing.assert_array_equal(present_load(np.array([0.0]), np.array([0.0]), np.array([1.0])), [0.0])


def test_a_profile_refuses_a_zero_effort_limit_or_encoder_resolution(tmp_path):
    from deadzone_id_ros.errors import ConfigError

    path, _ = _kit(tmp_path)
    bad = tmp_path / "bad.yaml"
    bad.write_text(path.read_text().replace(f"value: {COUNT!r}", "value: 0.0", 1))
    with pytest.raises(ConfigError, match=r"settings.joint1.encoder_resolution\[0\] = 0.0 must be a finite positive"):
        load_profile(bad)


def test_a_present_load_recording_is_loaded_with_its_unit_declared(tmp_path):
    """A bag whose effort is the simulated servo's Present_Load: the loader's effort-unit handling names the unit
    (so training warns and the controller refuses a model of it) instead of calling it unknown or N·m."""
    from deadzone_id_ros.data.dataset import load_dataset
    from deadzone_id_ros.data.effort_units import PRESENT_LOAD
    from deadzone_id_ros.sim.record import simulate_bag

    _, robot = _kit(tmp_path)
    sim = sim_config(robot, effort_readout="present_load", no_load_speed=(5.0, 5.0, 5.0))
    bag = simulate_bag(4.0, 5, tmp_path / "servo_bag", sim_config=sim, controller_config=controller_config(robot)).path
    ds = load_dataset(bag)
    assert ds.effort_units == {j: PRESENT_LOAD for j in JOINTS}, ds.effort_unit_reason
    assert "Present_Load" in ds.effort_unit_reason
