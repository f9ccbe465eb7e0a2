"""One source for the effort limit (review of issues 39/40): a robot profile's ``effort_limit`` (the drive's datasheet)
where it gives one, else the URDF's ``<limit effort>`` (:meth:`RobotDescription.effort_limits`), in the controller's
clamp, the simulator, the excitation's effort fit, the robot check and the offline simulation's controller; a limit
above the URDF's is refused naming the joint and both values. Before, the effort fit and the robot check divided by
the URDF's 10 N·m while the SO-101 profile's drives saturate at 1.9 N·m, and the offline simulation's controller
clamped at the URDF's limit while its simulated arm saturated at the profile's.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from deadzone_id_ros.control import build_controller, generate_excitation
from deadzone_id_ros.errors import RobotDescriptionError
from deadzone_id_ros.models.runtime import NominalRigidBodyModel
from deadzone_id_ros.resources import default_urdf
from deadzone_id_ros.robot import load_robot_description
from deadzone_id_ros.robot.derived import derive_robot
from deadzone_id_ros.robot.profile import load_profile
from deadzone_id_ros.robot_configs import (
    bundled_controller_config,
    bundled_sim_config,
    controller_config,
    excitation_config,
    sim_config,
)
from deadzone_id_ros.sim import SimArm

NAMES = ("joint1", "joint2", "joint3")
HOME = (0.0, 0.3, 0.6)


def _profile(tmp_path, joint2_limit: float):
    """The bundled arm's URDF under a profile whose joint2 drive is rated ``joint2_limit`` N·m."""
    path = tmp_path / "rated.yaml"
    path.write_text(f"name: rated\nurdf: {default_urdf()}\njoints: [joint1, joint2, joint3]\nhome: {list(HOME)}\n"
                    f"settings:\n  joint2:\n    effort_limit: {{value: {joint2_limit!r}, source: test drive}}\n")
    return derive_robot(load_profile(path))


def _quiet(factory, *args):  # noqa: ANN001, ANN202
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # FrictionSourceWarning of a profile beside the URDF
        return factory(*args)


def test_an_effort_limit_above_the_urdfs_is_refused_naming_the_joint_and_both_values(tmp_path):
    urdf = load_robot_description(default_urdf(), NAMES).effort_limit[1]
    above = float(urdf) * 1.5
    with pytest.raises(RobotDescriptionError, match=rf"robot profile 'rated': effort_limit: joint joint2 effort "
                                                    rf"limit {above:g} N\*m is above the URDF's <limit effort> "
                                                    rf"{urdf:g} N\*m"):
        _profile(tmp_path, above)
    desc = load_robot_description(default_urdf(), NAMES)
    too_high = tuple(float(v) for v in desc.effort_limit * np.array([1.0, 1.5, 1.0]))
    with pytest.raises(RobotDescriptionError, match=rf"controller effort_limit: joint joint2 .* above the URDF's "
                                                    rf"<limit effort> {urdf:g}"):
        build_controller(bundled_controller_config(effort_limit=too_high), desc)
    with pytest.raises(RobotDescriptionError, match=r"sim_config.effort_limit: joint joint2 .* above the URDF's"):
        SimArm(bundled_sim_config(effort_limit=too_high))


def test_the_profiles_effort_limit_bounds_the_excitations_effort_fit(tmp_path):
    """The fit keeps the rigid-body torque within effort_fraction of the profile's limit, not the URDF's."""
    rbd = NominalRigidBodyModel(default_urdf(), NAMES, friction=True)
    free_cfg = excitation_config(_profile(tmp_path, 10.0), duration=20.0, seed=3, effort_fraction=0.0)
    free = generate_excitation(free_cfg, start=HOME)
    static = abs(float(rbd.predict(np.array(HOME), np.zeros(3), np.zeros(3))[1]))
    peak_free = float(np.abs(rbd.predict(free.position, free.velocity, free.acceleration)).max(axis=0)[1])
    fraction = 0.6
    rated = (static + peak_free) / 2 / fraction  # holds the centre, but not the free motion's peak
    assert static < fraction * rated < peak_free
    robot = _profile(tmp_path, rated)
    fitted = generate_excitation(excitation_config(robot, duration=20.0, seed=3, effort_fraction=fraction),
                                 start=HOME)
    peak = np.abs(rbd.predict(fitted.position, fitted.velocity, fitted.acceleration)).max(axis=0)
    assert peak[1] <= fraction * rated * (1 + 1e-9), (peak, rated)


def test_the_robot_check_and_the_offline_controller_use_the_profiles_limit(tmp_path):
    from deadzone_id_ros.experiments.check.results import CheckSettings
    from deadzone_id_ros.experiments.check.run import run_check
    from deadzone_id_ros.sim.offline import simulate

    robot = _profile(tmp_path, 3.0)
    limit = robot.values("effort_limit")
    assert limit[1] == 3.0 and load_robot_description(default_urdf(), NAMES).effort_limit[1] > 3.0
    # the offline simulation with the profile's simulated arm and no controller config: the default controller
    # clamps where the simulated drives saturate
    rec = _quiet(simulate, 0.02, 0, sim_config(robot))
    assert tuple(rec.metadata["controller_config"]["effort_limit"]) == limit
    assert tuple(_quiet(SimArm, sim_config(robot)).effort_limit) == limit
    ctrl = build_controller(controller_config(robot), load_robot_description(default_urdf(), NAMES))
    np.testing.assert_array_equal(ctrl.effort_limit, np.asarray(limit))
    # the robot check: the excitation's peak torque (the simulator's inverse dynamics) over the profile's limit
    settings = CheckSettings(duration=0.3, excitation_duration=10.0)
    check = _quiet(run_check, robot, settings)
    import dataclasses

    exc = generate_excitation(dataclasses.replace(excitation_config(robot), duration=10.0, seed=settings.seed),
                              start=robot.values("home"))
    tau = _quiet(SimArm, sim_config(robot)).inverse_dynamics(exc.position, exc.velocity, exc.acceleration,
                                                              friction=True)
    expected = np.abs(tau).max(axis=0) / np.asarray(limit)
    np.testing.assert_allclose([j.peak_effort_fraction for j in check.joints], expected, rtol=1e-9)


def test_a_closed_loop_replay_without_a_controller_config_clamps_at_the_simulated_arms_limit(tmp_path):
    """A recording whose metadata holds the simulated arm (with the profile's effort limit) but no controller
    config: the replay's default controller takes the arm's limit, not the URDF's."""
    from deadzone_id_ros.sim.offline import simulate
    from deadzone_id_ros.sim.replay import replay

    robot = _profile(tmp_path, 3.0)
    rec = _quiet(simulate, 0.05, 0, sim_config(robot))
    del rec.metadata["controller_config"]
    result = _quiet(lambda: replay(rec, closed_loop=True))
    limit = list(robot.values("effort_limit"))
    assert "controller: default configuration (mode pd_dob)" in result.notes, result.notes
    assert f"controller: effort limits {limit} (arm: {limit})" in result.notes, result.notes
