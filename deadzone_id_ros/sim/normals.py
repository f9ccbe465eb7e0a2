"""Standard normal noise drawn from a numpy Generator in blocks and handed out in order (core, no ROS).

The simulator draws J standard normals per physics step (torque noise) and J per measurement (velocity noise) from
one seeded Generator, each scaled by a per-joint standard deviation. One ``standard_normal(J)`` call costs about a
microsecond, as much as the arithmetic of a physics step; :class:`NormalPool` draws many rows of J at once, scales
each block by every standard deviation once, and hands the rows out in the order they are asked for.

The numbers are the same, in the same order: ``Generator.standard_normal(n)`` fills its output with n successive
draws of the bit generator (numpy's ziggurat sampler keeps no state between calls apart from the bit generator's),
so one call for r * J numbers gives the concatenation of r calls for J; and ``scale * z`` is one IEEE multiplication
per element whether done per row or per block (test/sim/test_normals.py checks both against per-call draws). Only the
Generator's own state runs ahead of the rows handed out (by less than one block), so nothing else may draw from it.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Sequence

import numpy as np

__all__ = ["NormalPool"]


class NormalPool:
    """Rows of J standard normals of ``rng``, in the order of successive ``rng.standard_normal(J)`` calls, each row
    handed out multiplied by every one of ``scales``.

    Args:
        rng: the Generator; the pool owns it from here on (a draw made elsewhere would reorder the stream).
        scales: the per-joint standard deviations, each (J,).
        rows: rows drawn per refill (> 0).

    Raises:
        ValueError: ``rows`` < 1, no scales, or scales that are not (J,) arrays of one J.

    Attributes:
        next_row: a function of no arguments returning the next row as a tuple of read-only (J,) arrays,
            ``scales[i] * z`` for each i (``z`` = the row of standard normals); a C-level iterator's ``__next__``,
            which costs tens of nanoseconds between refills (replaced by :meth:`unread`).
    """

    def __init__(self, rng: np.random.Generator, scales: Sequence[Sequence[float] | np.ndarray],
                 rows: int = 1024) -> None:
        self._scales = [np.asarray(s, dtype=float) for s in scales]
        if rows < 1:
            raise ValueError(f"rows must be >= 1, got {rows}")
        if not self._scales or len({s.shape for s in self._scales}) != 1 or self._scales[0].ndim != 1:
            raise ValueError(f"scales must be one or more (J,) arrays of one J, got shapes "
                             f"{[s.shape for s in self._scales]}")
        self._rng = rng
        self._rows = int(rows)
        self._stream = itertools.chain.from_iterable(self._blocks())
        self.next_row: Callable[[], tuple[np.ndarray, ...]] = self._stream.__next__

    def unread(self, row: tuple[np.ndarray, ...]) -> None:
        """Hand ``row``, the row ``next_row`` returned last and that was not used, out again as the next row, so the
        stream goes on as if it had not been taken. ``next_row`` is a new function from here on."""
        self.next_row = itertools.chain((row,), self._stream).__next__

    def _blocks(self) -> Iterator[Iterator[tuple[np.ndarray, ...]]]:
        """Draw ``rows`` rows at a time (only when the previous block is used up) and yield their scaled rows."""
        n = self._scales[0].shape[0]
        while True:
            z = self._rng.standard_normal(self._rows * n).reshape(self._rows, n)
            scaled = []
            for s in self._scales:
                block = s * z
                block.flags.writeable = False
                scaled.append(list(block))  # the rows, as views
            yield zip(*scaled)
