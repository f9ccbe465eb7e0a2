"""Offline closed-loop simulation: the recording's shape and stamps, seeding, tracking, dead-zone content."""

from __future__ import annotations

import numpy as np
import pytest

from deadzone_id_ros.errors import SafetyError
from deadzone_id_ros.robot_configs import bundled_controller_config, bundled_sim_config
from deadzone_id_ros.sim.offline import simulate


def test_recording_layout_and_reproducibility():
    rec = simulate(1.0, seed=3)
    n = 1000
    assert rec.joint_names == ("joint1", "joint2", "joint3")
    assert rec.state_t_ns.dtype == np.int64 and rec.state_t_ns.shape == (n,)
    assert np.all(np.diff(rec.state_t_ns) == 1_000_000)
    for arr in (
        rec.position,
        rec.velocity,
        rec.effort,
        rec.command,
        rec.reference_position,
        rec.reference_acceleration,
    ):
        assert arr.shape == (n, 3) and np.all(np.isfinite(arr))
    # effort is the applied torque of the sample: the command of 1 + actuation + measurement delay ticks before
    cfg = bundled_sim_config()
    lag = 1 + int(round((cfg.actuation_delay + cfg.measurement_delay) / 0.001))
    assert lag == 2
    np.testing.assert_allclose(rec.effort[lag:], rec.command[:-lag], atol=1e-12)
    np.testing.assert_array_equal(rec.effort[:lag], np.zeros((lag, 3)))
    # no delay: the previous tick's command
    ideal = simulate(0.2, seed=3, sim_config=bundled_sim_config(profile="ideal"))
    np.testing.assert_allclose(ideal.effort[1:], ideal.command[:-1], atol=1e-12)
    # position is quantized by the encoder
    res = bundled_sim_config().encoder_resolution
    np.testing.assert_allclose(rec.position / res, np.round(rec.position / res), atol=1e-6)
    assert rec.metadata["seed"] == 3 and rec.metadata["controller_config"]["mode"] == "pd_dob"
    again = simulate(1.0, seed=3)
    np.testing.assert_array_equal(rec.velocity, again.velocity)
    other = simulate(1.0, seed=4)
    assert not np.array_equal(rec.velocity, other.velocity)


def test_dob_tracks_better_than_pd():
    rmse = {}
    for mode in ("pd", "pd_dob", "ctc_dob"):
        rec = simulate(4.0, seed=1, controller_config=bundled_controller_config(mode=mode))
        rmse[mode] = np.sqrt(np.mean((rec.reference_position - rec.position) ** 2))
    print("offline tracking RMSE [rad]:", rmse)
    assert rmse["pd_dob"] < 0.2 * rmse["pd"]
    assert rmse["ctc_dob"] < 0.2 * rmse["pd"]


def test_recordings_contain_dead_zone_phases():
    rec = simulate(30.0, seed=2)
    stats = rec.metadata["stats"]
    stuck = np.asarray(stats["stuck_fraction_per_joint"])
    print("stuck per joint", stuck, "any", stats["any_joint_stuck_fraction"])
    assert np.all((stuck > 0.05) & (stuck < 0.3))
    assert 0.2 < stats["any_joint_stuck_fraction"] < 0.6
    moving = np.abs(rec.velocity) > 0.1 * rec.velocity.std(axis=0)  # the paper's mask, alpha = 0.1
    print("masked pairs used", moving.mean(), "conventional samples", moving.all(axis=1).mean())
    assert 0.55 < moving.mean() < 0.85
    assert 0.2 < moving.all(axis=1).mean() < 0.5


def test_bad_arguments_are_refused():
    with pytest.raises(ValueError, match="rate_hz = 300 gives a control period of 3.33333 physics steps"):
        simulate(1.0, 0, rate_hz=300)
    with pytest.raises(ValueError, match="duration = 0 must be a positive number"):
        simulate(0, 0)
    with pytest.raises(SafetyError, match=r"controller joints \['joint1', 'joint2'\] differ"):
        simulate(
            1.0,
            0,
            controller_config=bundled_controller_config(
                joint_names=("joint1", "joint2"),
                kp=(1.0, 1.0),
                kd=(1.0, 1.0),
                nominal_inertia=(1.0, 1.0),
                dob_cutoff=(1.0, 1.0),
                torque_rate_limit=(1.0, 1.0),
                effort_limit=(1.0, 1.0),
                armature=(0.0, 0.0),
            ),
        )
