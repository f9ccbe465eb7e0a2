"""The excitation generator (control/excitation.py): limits, derivatives, seeding, dead-zone phases, validation."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from deadzone_id_ros.control import generate_excitation
from deadzone_id_ros.errors import ConfigError
from deadzone_id_ros.resources import default_urdf
from deadzone_id_ros.robot import load_robot_description
from deadzone_id_ros.robot_configs import bundled_excitation_config

NAMES = ("joint1", "joint2", "joint3")


def test_excitation_stays_within_limits_and_is_consistent():
    cfg = bundled_excitation_config(duration=30.0, seed=4)
    pts = generate_excitation(cfg, start=[0.0, 0.3, 0.6])
    desc = load_robot_description(default_urdf(), NAMES)
    assert np.all(pts.position >= desc.lower + cfg.position_margin - 1e-9)
    assert np.all(pts.position <= desc.upper - cfg.position_margin + 1e-9)
    assert np.all(np.abs(pts.velocity) <= cfg.velocity_fraction * desc.velocity_limit + 1e-9)
    assert np.all(np.abs(pts.acceleration) <= np.asarray(cfg.acceleration_limit) + 1e-9)
    assert np.all(np.abs(pts.position - [0.0, 0.3, 0.6]) <= np.asarray(cfg.amplitude) + 1e-9)
    # velocity and acceleration are the derivatives of the position (trapezoid-integrated phase: ~1e-3 relative)
    dq_fd = np.gradient(pts.position, pts.t, axis=0)
    assert np.max(np.abs(dq_fd - pts.velocity)) < 0.02 * np.abs(pts.velocity).max()
    ddq_fd = np.gradient(pts.velocity, pts.t, axis=0)
    assert np.max(np.abs(ddq_fd - pts.acceleration)) < 0.05 * np.abs(pts.acceleration).max()
    np.testing.assert_allclose(pts.position[0], [0.0, 0.3, 0.6])
    assert not np.any(pts.velocity[0])


@pytest.mark.parametrize("duration", [2.0, 30.0])
def test_excitation_ends_at_rest(duration):
    # the samplers hold the last position after the trajectory: a joint still moving there would be asked to stop at
    # once (a short run on the DFKI pendulum ended at -12 rad/s and tripped the controller's tracking-error limit)
    cfg = bundled_excitation_config(duration=duration, seed=4)
    pts = generate_excitation(cfg, start=[0.0, 0.3, 0.6])
    assert np.abs(pts.velocity).max() > 0.1  # it moves
    np.testing.assert_allclose(pts.velocity[-1], 0.0, atol=1e-9)
    np.testing.assert_allclose(pts.acceleration[-1], 0.0, atol=1e-9)
    # and it comes to rest smoothly: the last transition's speed falls, it does not drop
    last = pts.t >= pts.t[-1] - cfg.transition
    assert np.abs(np.diff(pts.velocity[last], axis=0)).max() < 0.2 * np.abs(pts.velocity).max()



@pytest.mark.parametrize("duration", [0.8, 0.95, 1.2])
def test_a_short_excitation_still_moves_and_still_ends_at_rest(duration):
    # lead_in 0.5 s, then motion: a short run (a 1 s live recording) keeps its motion, damped over the last 0.3 s
    cfg = bundled_excitation_config(duration=duration, seed=4)
    pts = generate_excitation(cfg, start=[0.0, 0.3, 0.6])
    assert np.abs(pts.velocity).max() > 0.05
    np.testing.assert_allclose(pts.velocity[-1], 0.0, atol=1e-9)
    np.testing.assert_allclose(pts.acceleration[-1], 0.0, atol=1e-9)
    dq_fd = np.gradient(pts.position, pts.t, axis=0)  # still the derivative of the position: no jump
    assert np.max(np.abs(dq_fd - pts.velocity)) < 0.05 * np.abs(pts.velocity).max()


def test_excitation_has_hold_and_slow_phases_per_joint():
    cfg = bundled_excitation_config(duration=60.0, seed=1)
    pts = generate_excitation(cfg, start=[0.0, 0.3, 0.6])
    speed = np.abs(pts.velocity)
    held = (speed < 1e-3).mean(axis=0)
    slow = ((speed > 1e-3) & (speed < 0.1 * speed.std(axis=0))).mean(axis=0)
    # hold segments include their smooth rate transitions, so the still time is somewhat below hold_fraction
    assert np.all((held > 0.3 * cfg.hold_fraction) & (held < 1.5 * cfg.hold_fraction)), held
    assert np.all(slow > 0.5 * cfg.slow_fraction), slow
    # joints hold at different times
    assert (speed < 1e-3).all(axis=1).mean() < 0.5 * held.min()


def test_excitation_is_seeded():
    cfg = bundled_excitation_config(duration=5.0, seed=7)
    a = generate_excitation(cfg, start=[0.0, 0.3, 0.6])
    b = generate_excitation(cfg, start=[0.0, 0.3, 0.6])
    c = generate_excitation(dataclasses.replace(cfg, seed=8), start=[0.0, 0.3, 0.6])
    np.testing.assert_array_equal(a.position, b.position)
    assert np.abs(a.position - c.position).max() > 0.01


def test_excitation_start_outside_the_range_is_moved_inside_and_bad_center_refused():
    # the shoulder resting on its limit
    pts = generate_excitation(bundled_excitation_config(duration=2.0), start=[0.0, 1.6, 0.6])
    assert pts.position[0, 1] < 1.6 - 0.2
    with pytest.raises(ConfigError, match=r"outside the position limits .* for joint\(s\) \['joint2'\]"):
        generate_excitation(bundled_excitation_config(duration=2.0, center=(0.0, 1.5, 0.0), center_from_start=False))
    with pytest.raises(ValueError, match="start must have 3 values"):
        generate_excitation(bundled_excitation_config(duration=2.0), start=[0.0, 0.1])


def test_excitation_config_validation_names_the_field():
    with pytest.raises(ValueError, match="leaves too little motion"):
        bundled_excitation_config(hold_fraction=0.5, slow_fraction=0.5)
    with pytest.raises(ValueError, match=r"amplitude has 2 values but joint_names has 3"):
        bundled_excitation_config(amplitude=(1.0, 1.0))
    with pytest.raises(ValueError, match="duration = -1.0 must be a positive number"):
        bundled_excitation_config(duration=-1.0)
    with pytest.raises(ValueError, match="velocity_fraction = 1.5 must be in"):
        bundled_excitation_config(velocity_fraction=1.5)


def _weak_arm(tmp_path, effort2: float) -> str:
    """The bundled arm with joint2's effort limit lowered to ``effort2`` [N·m]."""
    text = default_urdf().read_text().replace('upper="1.6" effort="10.0"', f'upper="1.6" effort="{effort2}"')
    path = tmp_path / "weak.urdf"
    path.write_text(text)
    return str(path)


def test_excitation_fits_the_effort_limits_under_gravity_and_friction(tmp_path):
    """Issue 36: the motion's rigid-body torque (URDF friction included) stays within effort_fraction of every effort
    limit; the excitation shrinks about its centre instead of asking for more than the drive has."""
    from deadzone_id_ros.models.runtime import NominalRigidBodyModel

    urdf = _weak_arm(tmp_path, 4.0)
    model = NominalRigidBodyModel(urdf, NAMES, friction=True)
    start = [0.0, 0.3, 0.6]
    free = generate_excitation(bundled_excitation_config(urdf_path=urdf, effort_limit=(), duration=30.0, seed=4,
                                                         effort_fraction=0.0), start=start)
    cfg = bundled_excitation_config(urdf_path=urdf, effort_limit=(), duration=30.0, seed=4)  # the weak URDF's limits
    fitted = generate_excitation(cfg, start=start)
    peak = lambda p: np.abs(model.predict(p.position, p.velocity, p.acceleration)).max(axis=0)  # noqa: E731
    assert peak(free)[1] > cfg.effort_fraction * 4.0  # unfitted, joint2 asks for more
    assert np.all(peak(fitted) <= cfg.effort_fraction * np.array([4.0, 4.0, 5.0]) * (1 + 1e-9))
    shrink = np.ptp(fitted.position, axis=0) / np.ptp(free.position, axis=0)
    assert np.allclose(shrink, shrink[0]) and 0.2 < shrink[0] < 1.0  # one common factor, the motion kept
    np.testing.assert_allclose(fitted.position[0], free.position[0])  # about the same centre


def test_a_centre_the_drive_cannot_hold_against_gravity_is_refused(tmp_path):
    urdf = _weak_arm(tmp_path, 0.5)
    with pytest.raises(ConfigError, match=r"needs more than effort_fraction = 0.6 .*joint2 .* N\*m of 0.5.*home pose"):
        generate_excitation(bundled_excitation_config(urdf_path=urdf, effort_limit=(), duration=5.0, seed=1),
                            start=[0.0, 0.3, 0.6])
