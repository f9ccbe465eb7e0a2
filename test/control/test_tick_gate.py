"""TickGate: at most the control rate on average, and a late state followed by an on-time one costs no tick."""

import pytest

from deadzone_id_ros.control.tick_gate import TickGate

MS = 1_000_000  # ns


def ticks(gate: TickGate, stamps_ms: list[float]) -> list[float]:
    """The stamps [ms] the gate answers, in order (each answered one recorded as the node does)."""
    out = []
    for s in stamps_ms:
        ns = int(round(s * MS))
        if gate.is_tick(ns):
            gate.ticked(ns)
            out.append(s)
    return out


def test_a_late_state_then_an_on_time_one_are_both_ticks():
    # state 3 comes 0.6 ms late, state 4 on time: 0.4 ms apart. The plain half-period rule skipped state 4.
    assert ticks(TickGate(1000.0), [0, 1, 2, 3.6, 4, 5, 6]) == [0, 1, 2, 3.6, 4, 5, 6]
    assert ticks(TickGate(1000.0), [0, 1, 2, 3.95, 4, 5]) == [0, 1, 2, 3.95, 4, 5]


def test_a_faster_publisher_is_answered_as_by_the_plain_rule():
    # 4 kHz states: every other one (2 kHz), never closer than half a period, as the half-period rule did
    stamps = [k / 4 for k in range(4000)]
    answered = ticks(TickGate(1000.0), stamps)
    assert answered == stamps[::2]


def test_a_publisher_slightly_faster_than_the_rate_loses_no_tick():
    # 0.1% fast clock: every state is still a tick (the due time never runs more than half a period ahead)
    stamps = [k * 0.999 for k in range(5000)]
    assert ticks(TickGate(1000.0), stamps) == stamps


def test_after_a_gap_a_backlog_burst_is_not_answered_state_by_state():
    gate = TickGate(1000.0)
    burst = [100 + 0.05 * k for k in range(20)]  # 20 states within 1 ms after a 100 ms gap
    answered = ticks(gate, [0, 1, 2] + burst)
    assert answered == [0, 1, 2, 100, 100.5]  # restarted at the state that ends the gap, half a period apart


def test_a_repeated_stamp_is_not_a_tick_and_a_stamp_going_back_is_passed_to_the_law():
    gate = TickGate(1000.0)
    assert ticks(gate, [0, 1]) == [0, 1]
    assert not gate.is_tick(1 * MS)  # the same state again (a simulator in lockstep repeating it)
    assert gate.is_tick(0)  # older than the last tick: the control law judges it (stale)
    gate.ticked(0)
    assert gate.last_ns == 1 * MS


@pytest.mark.parametrize("rate", [0.0, -5.0, float("inf"), float("nan")])
def test_a_bad_rate_is_refused(rate):
    with pytest.raises(ValueError, match="control rate"):
        TickGate(rate)
