"""Progress of long work on a terminal and in a log file (core, no ROS).

On a terminal (stderr is a TTY) a tqdm bar; elsewhere (a log file, a pipe, CI) tqdm's carriage-return updates would
make one unreadable line or nothing useful, so a plain line is printed at every tenth of the work instead:
``simulate: 30% (9000/30000 tick) after 4.8 s``.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterable, Iterator, Sized
from typing import Protocol, TextIO, TypeVar

__all__ = ["ProgressBar", "StepLines", "progress_bar", "progress_iter"]

T = TypeVar("T")
STEPS = 10  # lines per piece of work in a log file


def _on_terminal(stream: TextIO) -> bool:
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


class ProgressBar(Protocol):
    """What :func:`progress_bar` hands back: a tqdm bar or :class:`StepLines`."""

    def update(self, n: int = 1) -> object:
        """Count ``n`` more units of work."""

    def close(self) -> None:
        """End the bar."""


class StepLines:
    """A stand-in for a tqdm bar outside a terminal: ``update(n)`` counts, a line is printed at each tenth.

    Args:
        total: the amount of work (> 0 for lines to appear).  desc: what is done.  unit: of ``total``.
        stream: where lines go (default stderr).
    """

    def __init__(self, total: int, desc: str, unit: str, stream: TextIO | None = None) -> None:
        self.total, self.desc, self.unit = int(total), desc, unit
        self.stream = stream if stream is not None else sys.stderr
        self.n, self._step, self._t0 = 0, 0, time.perf_counter()

    def update(self, n: int = 1) -> None:
        """Count ``n`` more; print a line for each tenth of ``total`` passed."""
        self.n += n
        if self.total <= 0:
            return
        step = min(STEPS, self.n * STEPS // self.total)
        if step > self._step:
            self._step = step
            print(f"{self.desc}: {100 * step // STEPS}% ({self.n}/{self.total} {self.unit}) after "
                  f"{time.perf_counter() - self._t0:.1f} s", file=self.stream, flush=True)

    def close(self) -> None:
        """Nothing to release (the same interface as tqdm's)."""


def progress_bar(total: int, desc: str, unit: str, stream: TextIO | None = None) -> ProgressBar:
    """A tqdm bar on a terminal, else :class:`StepLines` (both have ``update(n)`` and ``close()``)."""
    stream = stream if stream is not None else sys.stderr
    if _on_terminal(stream):
        from tqdm import tqdm

        return tqdm(total=total, desc=desc, unit=unit, mininterval=0.5, file=stream)
    return StepLines(total, desc, unit, stream)


def progress_iter(items: Iterable[T], desc: str, unit: str, stream: TextIO | None = None) -> Iterator[T]:
    """``items`` with progress: tqdm's iterator on a terminal, else a line at each tenth (``items`` must be Sized
    for those lines; otherwise nothing is printed)."""
    stream = stream if stream is not None else sys.stderr
    if _on_terminal(stream):
        from tqdm import tqdm

        yield from tqdm(items, desc=desc, unit=unit, unit_scale=True, mininterval=0.5, file=stream)
        return
    lines = StepLines(len(items) if isinstance(items, Sized) else 0, desc, unit, stream)
    for item in items:
        yield item
        lines.update(1)
