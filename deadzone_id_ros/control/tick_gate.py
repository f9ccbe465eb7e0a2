"""Which joint states are control ticks: never closer than half a period (as before), and jitter in the state stamps
costs no tick.

A controller driven by its state messages (``/joint_states`` from joint_state_broadcaster) answers each state that
is a tick and skips the others, so that a publisher much faster than ``control_rate`` does not make it compute
faster. The plain rule, "skip a state closer than half a period to the last answered one", loses a tick whenever
one state comes late and the next on time. On a shared 2-core machine even a SCHED_FIFO loop that sleeps to 1 ms
deadlines overshoots by more than 0.5 ms in about 0.3% of its periods (measured here), and each such overshoot made
the state after it a skipped tick, through which the hardware held the old command.

:class:`TickGate` keeps a grid instead: the next tick is due one period after the last one was *due*, not after
it arrived, so a late state followed by an on-time one gives two ticks. It never asks more than the plain rule (a
state half a period after the last tick is always a tick, so a clock a little faster than ``control_rate`` loses no
tick), and after a gap (a state more than half a period past its slot) it restarts from that state, as the plain
rule does, instead of answering a backlog. So ticks come at least half a period apart, except the on-time state
right after a late one.
"""

from __future__ import annotations

__all__ = ["TickGate"]


class TickGate:
    """Decides, state by state, which stamps [ns] are control ticks at ``rate`` [Hz] (see the module docstring).

    Args:
        rate: control rate [Hz]; the period P = 1/rate.

    Raises:
        ValueError: ``rate`` is not finite and > 0.
    """

    def __init__(self, rate: float) -> None:
        if not (rate > 0 and rate < float("inf")):
            raise ValueError(f"control rate {rate!r} Hz must be finite and > 0")
        self.period_ns = int(round(1e9 / rate))
        self._half_ns = self.period_ns // 2
        self.last_ns: int | None = None  # stamp of the last tick [ns]
        self.due_ns: int | None = None  # the earliest stamp after last_ns that is a tick [ns]

    def is_tick(self, stamp_ns: int) -> bool:
        """Whether the state stamped ``stamp_ns`` [ns] is a tick to answer; does not record it (see :meth:`ticked`).

        The first state is a tick; a stamp before the last tick's is passed on too (the control law judges a stamp
        that goes back); a stamp equal to the last tick's is not (a repeated state); a later stamp is a tick once it
        reaches the due time.
        """
        if self.last_ns is None or self.due_ns is None or stamp_ns < self.last_ns:
            return True
        return stamp_ns >= self.due_ns and stamp_ns != self.last_ns

    def ticked(self, stamp_ns: int) -> None:
        """Record that the state stamped ``stamp_ns`` [ns] was answered as a tick. The next one is due at
        ``min(due + P, stamp + P/2)``, or at ``stamp + P/2`` when this stamp is more than half a period past
        ``due + P`` (a gap in the states, not jitter). A stamp before the last tick's changes nothing."""
        if self.last_ns is not None and stamp_ns <= self.last_ns:
            return
        restart = stamp_ns + self._half_ns  # the plain rule: half a period after this tick
        grid = None if self.due_ns is None else self.due_ns + self.period_ns
        # on the grid unless this tick came more than half a period after the grid's next slot (a gap, not jitter)
        self.due_ns = restart if grid is None or grid < stamp_ns - self._half_ns else min(grid, restart)
        self.last_ns = stamp_ns
