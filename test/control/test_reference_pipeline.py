"""Reference updates prepared off the control thread: when they take effect, what they continue from, errors.

Each prepared sampler is compared bit for bit with the one ``set_reference(points, now=t_switch)`` builds
synchronously in a twin controller given the same history: same process, same arithmetic, so equality is exact.
"""

from __future__ import annotations

import threading

import numpy as np
import pytest

from deadzone_id_ros.control import FeedforwardController, TrajectoryPoints
from deadzone_id_ros.control.feedforward_controller_params import load_controller_config
from deadzone_id_ros.control.reference_pipeline import ReferencePipeline
from deadzone_id_ros.errors import SafetyError
from deadzone_id_ros.models.runtime import ZeroModel

NAMES = ("joint1", "joint2", "joint3")
Q0 = np.array([0.0, 0.3, 0.6])
LEAD = 0.02


def _points(t0: float, seed: int, names=NAMES) -> TrajectoryPoints:
    """Eight waypoints from t0 [s], 0.1 s apart, with velocities and accelerations."""
    rng = np.random.default_rng(seed)
    k = 8
    return TrajectoryPoints(names, t0 + 0.1 * np.arange(k), Q0 + 0.1 * rng.normal(size=(k, len(names))),
                            rng.normal(size=(k, len(names))), rng.normal(size=(k, len(names))))


MESSAGES = {b"A": _points(0.1, 0), b"B": _points(0.6, 1), b"C": _points(0.62, 2), b"late": _points(0.3, 3)}


def decode(raw: bytes, now: float) -> TrajectoryPoints | None:
    """The test's wire format: a key of MESSAGES; b"" is an empty message; b"bad" a refused one."""
    if raw == b"":
        return None
    if raw == b"bad":
        raise SafetyError("reference lacks joint(s) ['joint3']")
    return MESSAGES[raw]


def _gated_decode():
    """(release, decode): a decoder that blocks in the worker until ``release`` is set (at most 5 s)."""
    release = threading.Event()

    def slow(raw: bytes, now: float) -> TrajectoryPoints | None:
        release.wait(5.0)
        return decode(raw, now)

    return release, slow


def _controller() -> FeedforwardController:
    config = load_controller_config(overrides={"mode": "pd", "model": "none"})[0]  # the bundled arm's joints
    assert config.joint_names == NAMES
    ctrl = FeedforwardController(config, ZeroModel(NAMES))
    ctrl.step(0.0, Q0, np.zeros(3))
    ctrl.set_reference(MESSAGES[b"A"], now=0.0)
    return ctrl


def _assert_same(a, b, times) -> None:
    for t in times:
        for x, y in zip(a.sample(t), b.sample(t)):
            np.testing.assert_array_equal(x, y)


@pytest.fixture
def pipe():
    ctrl = _controller()
    p = ReferencePipeline(ctrl, decode, LEAD)
    yield p
    p.close()


def test_an_update_takes_effect_at_arrival_plus_lead_continuous_and_as_set_reference_builds_it(pipe):
    before = pipe.controller.reference
    pipe.submit(b"B", 0.5)
    assert pipe.due(0.5 + LEAD - 1e-6) == [] and pipe.controller.reference is before  # a tick before the switch
    installed = pipe.due(0.5 + LEAD)
    assert [u.error for u in installed] == [""] and pipe.pending == 0
    twin = _controller()
    twin.set_reference(MESSAGES[b"B"], now=0.5 + LEAD)
    _assert_same(pipe.controller.reference, twin.reference, np.linspace(0.5, 1.5, 23))
    # continuous at the switch: the new reference's first point is the old one's q, dq, ddq there
    first = pipe.controller.reference.points
    assert first.t[0] == 0.5 + LEAD
    for x, y in zip((first.position[0], first.velocity[0], first.acceleration[0]), before.sample(0.5 + LEAD)):
        np.testing.assert_array_equal(x, y)


def test_an_update_arriving_before_the_previous_one_switched_continues_from_it(pipe):
    pipe.submit(b"B", 0.5)
    pipe.submit(b"C", 0.505)  # B still pending: C continues from B at its own switch time
    assert [u.t_switch for u in pipe.due(1.0)] == [0.5 + LEAD, 0.505 + LEAD]
    twin = _controller()
    twin.set_reference(MESSAGES[b"B"], now=0.5 + LEAD)
    twin.set_reference(MESSAGES[b"C"], now=0.505 + LEAD)
    _assert_same(pipe.controller.reference, twin.reference, np.linspace(0.5, 1.5, 23))


def test_a_refused_update_keeps_the_previous_reference_and_the_next_one_continues_it(pipe):
    before = pipe.controller.reference
    pipe.submit(b"bad", 0.5)
    pipe.submit(b"B", 0.505)
    bad, good = pipe.due(1.0)
    assert bad.error == "reference lacks joint(s) ['joint3']" and good.error == ""
    twin = _controller()
    twin.set_reference(MESSAGES[b"B"], now=0.505 + LEAD)
    _assert_same(pipe.controller.reference, twin.reference, np.linspace(0.5, 1.5, 23))
    assert pipe.controller.reference is not before


def test_an_empty_update_holds_and_clear_drops_pending_ones(pipe):
    pipe.submit(b"", 0.5)
    (held,) = pipe.due(0.6)
    assert held.points is None and held.error == "" and pipe.controller.reference is None
    pipe.submit(b"B", 0.7)
    pipe.clear()
    assert pipe.due(1.0) == [] and pipe.controller.reference is None


def test_a_due_update_is_waited_for_so_the_switch_time_does_not_depend_on_the_worker():
    release, slow = _gated_decode()
    ctrl = _controller()
    pipe = ReferencePipeline(ctrl, slow, LEAD, wait=0.05)
    try:
        pipe.submit(b"B", 0.5)
        (late,) = pipe.due(0.6)  # not prepared within 50 ms of wall time: dropped, reference unchanged
        assert late.error == "not prepared within 0.05 s of wall time; dropped"
        release.set()
        pipe.wait = 5.0
        pipe.submit(b"late", 0.25)  # the worker finishes B first, then this one: due() waits for it
        (ok,) = pipe.due(0.3)
        assert ok.error == "" and ok.done.is_set()
        twin = _controller()
        twin.set_reference(MESSAGES[b"late"], now=0.25 + LEAD)
        _assert_same(ctrl.reference, twin.reference, np.linspace(0.2, 1.2, 17))
    finally:
        pipe.close()


def test_with_wait_zero_a_tick_never_blocks_and_the_late_update_is_installed_once_prepared():
    """A real robot's clock (wait 0): the tick returns at once while the worker is still busy, keeps the old
    reference, and the first tick after the worker finished installs the new one (the sampler set_reference builds at
    the switch time; nothing dropped)."""
    release, slow = _gated_decode()
    ctrl = _controller()
    before = ctrl.reference
    pipe = ReferencePipeline(ctrl, slow, LEAD, wait=0.0)
    try:
        pipe.submit(b"B", 0.5)
        assert pipe.due(0.6) == [] and pipe.pending == 1 and ctrl.reference is before  # did not wait, not dropped
        release.set()
        pipe._pending[0].done.wait(5.0)
        (ok,) = pipe.due(0.601)
        assert ok.error == "" and pipe.pending == 0
        twin = _controller()
        twin.set_reference(MESSAGES[b"B"], now=0.5 + LEAD)
        _assert_same(ctrl.reference, twin.reference, np.linspace(0.6, 1.4, 17))
    finally:
        pipe.close()


def test_lead_must_be_positive_and_wait_not_negative():
    with pytest.raises(ValueError, match=r"lead \(0\) must be > 0 s and wait \(1.0\) >= 0 s"):
        ReferencePipeline(_controller(), decode, 0)
    with pytest.raises(ValueError, match=r"wait \(-1.0\) >= 0 s"):
        ReferencePipeline(_controller(), decode, LEAD, wait=-1.0)
