"""The dead-zone interval, the thresholds, the contact detector and the sensor's config (pure numpy)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from deadzone_id_ros.models.runtime import NominalRigidBodyModel
from deadzone_id_ros.resources import default_urdf
from deadzone_id_ros.sensing import (
    ContactDetector,
    SensingConfig,
    StaticFrictionBand,
    build_sensor,
    calibrate_band,
    calibrate_thresholds,
)

NAMES = ("joint1", "joint2", "joint3")


def test_band_is_tau_s_while_stuck_and_fades_outside_the_dead_zone():
    band = StaticFrictionBand(NAMES, np.full(3, 0.01), np.array([0.1, 0.4, 0.2]), np.array([0.0, 0.02, 0.0]))
    stuck = band.interval_half_width(np.array([0.005, -0.01, 0.0]))
    np.testing.assert_allclose(stuck, [0.1, 0.4, 0.2])
    moving = band.interval_half_width(np.array([0.05, 0.03, -0.05]))
    # joint 2 fades: tau_s exp(-(|dq| - threshold) / fade) = 0.4 / e at 0.02 rad/s beyond the threshold
    np.testing.assert_allclose(moving, [0.0, 0.4 / math.e, 0.0])
    assert not StaticFrictionBand.none(NAMES).interval_half_width(np.zeros(3)).any()


def test_a_joint_without_fade_is_exact_at_any_speed_beside_one_that_fades():
    band = StaticFrictionBand(("a", "b"), np.array([0.02, 0.02]), np.array([0.3, 0.4]), np.array([0.0, 0.05]))
    half = band.interval_half_width(np.array([np.inf, 0.07]))  # joint a: no fade, even at an infinite speed
    assert half[0] == 0.0 and half[1] == pytest.approx(0.4 * np.exp(-1.0))
    np.testing.assert_array_equal(band.interval_half_width(np.array([0.01, -0.01])), [0.3, 0.4])


def test_calibrated_fade_lowers_the_excess_of_breakaway_errors():
    # free motion whose estimate errs near the dead zone (breakaway) and is clean at speed
    rng = np.random.default_rng(3)
    dq = rng.uniform(-0.2, 0.2, size=(4000, 3))
    est = 0.3 * np.exp(-np.abs(dq) / 0.02) * rng.choice([-1.0, 1.0], size=dq.shape) + 0.01 * rng.normal(size=dq.shape)
    plain = calibrate_band(est, dq, np.full(3, 0.01), NAMES, 0.999)
    faded = calibrate_band(est, dq, np.full(3, 0.01), NAMES, 0.999, fade_factors=(0.0, 1.0, 2.0, 4.0))
    assert np.all(faded.fade_velocity > 0) and not np.any(plain.fade_velocity)
    t_plain = calibrate_thresholds(est, plain.interval_half_width(dq))
    t_faded = calibrate_thresholds(est, faded.interval_half_width(dq))
    assert np.all(t_faded < 0.5 * t_plain)


def test_thresholds_are_margin_times_the_quantile_of_the_excess():
    est = np.array([[0.1, -0.5], [-0.3, 0.2], [0.2, 0.1]])
    half = np.array([[0.0, 0.4], [0.0, 0.0], [0.0, 0.0]])
    np.testing.assert_allclose(calibrate_thresholds(est, half, 1.0, 2.0), [0.6, 0.4])
    with pytest.raises(ValueError, match="margin = 0.5 must be >= 1"):
        calibrate_thresholds(est, half, 1.0, 0.5)
    with pytest.raises(ValueError, match="must be the same"):
        calibrate_thresholds(est, half[:2])


def test_contact_onset_and_hysteresis_on_intervals():
    det = ContactDetector(np.array([0.2, 0.2]), release=0.5, confirm=1)
    assert not det.update(0.0, np.array([0.5, 0.0]), np.array([0.4, 0.0])).in_contact  # the interval holds 0.1
    s = det.update(0.001, np.array([0.5, 0.0]), np.array([0.0, 0.0]))
    assert s.in_contact and s.onset_t == 0.001 and s.joints.tolist() == [True, False]
    s = det.update(0.002, np.array([0.15, 0.0]), np.zeros(2))  # below the threshold, above the release: held
    assert s.in_contact and s.onset_t == 0.001 and not s.joints.any()
    assert not det.update(0.003, np.array([0.05, 0.0]), np.zeros(2)).in_contact


def test_a_one_sample_peak_is_no_contact_and_a_sustained_excess_is():
    # the Panda's false contacts in free motion were single-sample peaks above the threshold (docs/sensing_results.md)
    thr, zero = np.array([0.2, 0.2]), np.zeros(2)
    peak = [np.array([0.1, 0.0]), np.array([0.3, 0.0]), np.array([0.1, 0.0]), np.array([0.25, 0.0])]
    old, new = ContactDetector(thr, confirm=1), ContactDetector(thr)
    assert new.confirm == 2
    old_flags = [old.update(0.001 * k, e, zero).in_contact for k, e in enumerate(peak)]
    new_flags = [new.update(0.001 * k, e, zero).in_contact for k, e in enumerate(peak)]
    assert old_flags == [False, True, True, True]  # the old rule fires on the peak (and holds above the release)
    assert new_flags == [False, False, False, False]  # two peaks apart are not a contact either
    # a sustained excess (on any joints, not necessarily the same) starts a contact one sample later, dated at its start
    s = new.update(0.004, np.array([0.0, 0.3]), zero)
    assert s.in_contact and s.onset_t == 0.003 and s.joints.tolist() == [False, True]
    new.reset()
    assert not new.update(0.005, np.array([0.3, 0.0]), zero).in_contact  # reset forgets the pending sample
    with pytest.raises(ValueError, match="confirm = 0 must be a whole number of samples >= 1"):
        ContactDetector(thr, confirm=0)
    with pytest.raises(ValueError, match="sensing_confirm = 1.5 must be a whole number"):
        SensingConfig(sensing_confirm=1.5)  # type: ignore[arg-type]
    sensor = build_sensor(SensingConfig(sensing_threshold=(0.1,) * 3, sensing_confirm=3),
                          NominalRigidBodyModel(default_urdf(), NAMES), default_urdf(), NAMES)
    assert sensor.detector is not None and sensor.detector.confirm == 3


def test_sensor_config_errors_and_a_missing_stuck_threshold_is_said():
    with pytest.raises(ValueError, match="sensing_estimator = 'lstm' must be one of"):
        SensingConfig(sensing_estimator="lstm")
    with pytest.raises(ValueError, match="sensing_threshold = \\[0.0\\] must be > 0"):
        SensingConfig(sensing_threshold=(0.0,))
    model = NominalRigidBodyModel(default_urdf(), NAMES)
    with pytest.raises(ValueError, match="sensing_threshold has 2 values for the 3 joints"):
        build_sensor(SensingConfig(sensing_threshold=(0.1, 0.1)), model, default_urdf(), NAMES)
    said: list[str] = []
    sensor = build_sensor(SensingConfig(), model, default_urdf(), NAMES, warn=said.append)
    assert said and "sensing_velocity_threshold" in said[0] and not sensor.band.half_width.any()
    sensor = build_sensor(SensingConfig(sensing_velocity_threshold=(0.01,) * 3), model, default_urdf(), NAMES)
    np.testing.assert_allclose(sensor.band.half_width, [0.12, 0.40, 0.15])  # the URDF's <dynamics friction>
    with pytest.raises(ValueError, match="needs the nominal inertia"):
        build_sensor(SensingConfig(sensing_estimator="dob"), model, default_urdf(), NAMES)


def test_fade_is_not_kept_where_it_only_widens_the_interval():
    # free motion whose estimate errs most at speed, not near the dead zone: a fade would lower the largest excess a
    # little (every candidate shaves something off it) but widen every slow sample's interval far more
    rng = np.random.default_rng(4)
    dq = rng.uniform(-0.2, 0.2, size=(4000, 3))
    est = 0.02 * rng.normal(size=dq.shape) + 0.1 * (np.abs(dq) > 0.19)
    band = calibrate_band(est, dq, np.full(3, 0.01), NAMES, 0.999, fade_factors=(0.0, 1.0, 2.0, 4.0))
    assert not np.any(band.fade_velocity)
    # what it weighs: the threshold plus the mean interval, per joint, is lowest without a fade
    for factor in (1.0, 2.0, 4.0):
        faded = StaticFrictionBand(NAMES, np.full(3, 0.01), band.half_width, np.full(3, factor * 0.01))
        half = faded.interval_half_width(dq)
        plain_half = band.interval_half_width(dq)
        assert np.all(calibrate_thresholds(est, half) + half.mean(axis=0)
                      > calibrate_thresholds(est, plain_half) + plain_half.mean(axis=0))


def test_the_sensor_config_carries_the_calibrated_fade():
    # the nodes build their band from SensingConfig: the fade deadzone-id sense calibrates must reach it
    model = NominalRigidBodyModel(default_urdf(), NAMES)
    config = SensingConfig(sensing_velocity_threshold=(0.01,) * 3, sensing_fade_velocity=(0.0, 0.02, 0.04))
    band = build_sensor(config, model, default_urdf(), NAMES).band
    np.testing.assert_allclose(band.fade_velocity, [0.0, 0.02, 0.04])
    moving = band.interval_half_width(np.array([0.03, 0.03, 0.03]))
    assert moving[0] == 0 and moving[1] > 0 and moving[2] > 0  # joints 2 and 3 still carry a band
    with pytest.raises(ValueError, match="sensing_fade_velocity has 2 values for the 3 joints"):
        build_sensor(SensingConfig(sensing_fade_velocity=(0.1, 0.1)), model, default_urdf(), NAMES)
