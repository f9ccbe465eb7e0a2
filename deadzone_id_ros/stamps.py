"""Time in one place: ROS stamps <-> integer nanoseconds <-> float seconds (core, no ROS import).

Inside the data path time is an integer in nanoseconds, as in ROS messages and rosbag2 log times; it becomes float
seconds only through :func:`ns_to_s` and goes back through :func:`s_to_ns`. A ROS stamp is any object with integer
``sec`` and ``nanosec`` fields: builtin_interfaces/msg/Time or Duration, from rclpy or from the rosbags typestore.
"""

from __future__ import annotations

from typing import Protocol, TypeVar, overload

import numpy as np

__all__ = ["NS_PER_S", "EpochSeconds", "Stamp", "increasing_rows", "ns_to_s", "ns_to_stamp", "s_to_ns", "stamp_to_ns",
           "stamp_to_s"]

NS_PER_S = 1_000_000_000
"""Nanoseconds per second (an int: ``NS_PER_S * x`` is the float ``x * 1e9`` exactly)."""

_T = TypeVar("_T", int, float, np.ndarray, np.integer, np.floating)


class Stamp(Protocol):
    """A ROS time or duration (builtin_interfaces Time / Duration, as rclpy or rosbags decode it)."""

    sec: int
    nanosec: int


def stamp_to_ns(stamp: Stamp) -> int:
    """Integer nanoseconds [ns] of a ROS stamp (``sec`` [s] + ``nanosec`` [ns]); also for a Duration."""
    return int(stamp.sec) * NS_PER_S + int(stamp.nanosec)


def stamp_to_s(stamp: Stamp) -> float:
    """Float seconds [s] of a ROS stamp: ``sec + nanosec * 1e-9`` (loses sub-µs precision at epoch times)."""
    return stamp.sec + stamp.nanosec * 1e-9


def ns_to_stamp(t_ns: int) -> tuple[int, int]:
    """``(sec, nanosec)`` of ``t_ns`` [ns] for a ROS stamp; ``nanosec`` is in 0..999_999_999 (floor division)."""
    return divmod(int(t_ns), NS_PER_S)


def ns_to_s(t_ns: _T) -> _T:
    """Nanoseconds [ns] (int, float or an array of any shape) to float seconds [s]: ``t_ns * 1e-9``.

    Subtract a start time in nanoseconds first (``ns_to_s(t_ns - t0_ns)``) to keep full precision.
    """
    return t_ns * 1e-9  # type: ignore[return-value]


@overload
def s_to_ns(t_s: np.ndarray) -> np.ndarray: ...


@overload
def s_to_ns(t_s: float | np.floating) -> int: ...


def s_to_ns(t_s: float | np.floating | np.ndarray) -> int | np.ndarray:
    """Seconds [s] to integer nanoseconds [ns], rounded to the nearest nanosecond (ties to even).

    A scalar gives a Python int; an array gives an int64 array of the same shape.
    """
    if isinstance(t_s, np.ndarray):
        return np.round(t_s * 1e9).astype(np.int64)
    return int(round(t_s * 1e9))


def increasing_rows(t_ns: np.ndarray) -> np.ndarray:
    """(N,) bool: rows whose stamp [ns] is after every earlier stamp, for a stream that must be strictly increasing.

    Repeated and older stamps are False, and so is a zero stamp (a stamp left unset), except a first stamp of zero
    followed within 1 s by the next one: simulated time starting at 0."""
    t = np.asarray(t_ns, dtype=np.int64)
    if not len(t):
        return np.zeros(0, dtype=bool)
    before = np.maximum.accumulate(np.concatenate([[-1], t[:-1]]))
    keep = (t > 0) & (t > before)
    keep[0] = t[0] > 0 or (t[0] == 0 and (len(t) == 1 or 0 < t[1] < NS_PER_S))
    return keep


class EpochSeconds:
    """Float seconds since a fixed epoch, for code that computes with float time (a controller): at wall-clock
    stamps (~1.8e9 s) a float of seconds resolves only 0.24 µs, so a 1 ms period would be off by 2e-4 of itself;
    relative to an epoch near the data, differences keep nanosecond precision.

    The epoch is the whole second at or before the first time converted (0 for simulated time starting at 0).
    """

    def __init__(self) -> None:
        self.epoch_ns: int | None = None

    def to_s(self, t_ns: int) -> float:
        """Seconds [s] since the epoch of the time ``t_ns`` [ns] (fixing the epoch on the first call)."""
        if self.epoch_ns is None:
            self.epoch_ns = int(t_ns) // NS_PER_S * NS_PER_S
        return ns_to_s(int(t_ns) - self.epoch_ns)

    def to_ns(self, t_s: float) -> int:
        """Inverse of :meth:`to_s`: the time [ns] of ``t_s`` seconds since the epoch (rounded to 1 ns)."""
        return (self.epoch_ns or 0) + s_to_ns(t_s)

    def text(self, t_s: float | None) -> str:
        """``t_s`` as the absolute time it stands for, "sec.nanosec" in seconds (exact; for log lines); "?" for None."""
        if t_s is None:
            return "?"
        sec, nanosec = ns_to_stamp(self.to_ns(t_s))
        return f"{sec}.{nanosec:09d}"
