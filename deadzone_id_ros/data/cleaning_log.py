"""What the cleaning stages did (core, no ROS): the :class:`CleaningLog` every stage records into.

Each stage of :data:`~deadzone_id_ros.data.stages.STAGES` records three kinds of entries, and
:meth:`~deadzone_id_ros.data.cleaning_report.BagReport.from_log` builds the bag's report from them, so no report
field is filled by hand:

- counts (:meth:`CleaningLog.count`): integers summed over the runs of a bag and over the bags of a data set
  (``Dataset.report``, ``deadzone-id inspect``'s counts), under the name the stage gives them;
- notes (:meth:`CleaningLog.note`): what a stage decided (time source, velocity source, rate, joints skipped...),
  each the value of the :class:`~deadzone_id_ros.data.cleaning_report.BagReport` field of the same name;
- warnings (:meth:`CleaningLog.warn`): one sentence per problem naming the bag, topic and first message, in the
  order the stages met them, each tagged with the stage that wrote it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["CleaningLog"]


@dataclass
class CleaningLog:
    """Counts, notes and warnings of one bag's cleaning, in the order the stages recorded them.

    Attributes:
        counts: ``{name: n}``; :meth:`count` adds to it.
        notes: ``{report field: value}``; :meth:`note` sets it (a later note of the same name replaces an earlier).
        entries: ``(stage, warning)`` pairs; :meth:`warn` appends to it.
        stage: the name of the stage now recording (set by the runner,
            :func:`~deadzone_id_ros.data.episodes.build_episodes`); tags the warnings.
    """

    counts: dict[str, int] = field(default_factory=dict)
    notes: dict[str, Any] = field(default_factory=dict)
    entries: list[tuple[str, str]] = field(default_factory=list)
    stage: str = ""

    def count(self, name: str, n: int) -> None:
        """Add ``n`` (>= 0) to the count ``name`` (created at 0, so a stage that found nothing still reports 0).

        Raises:
            ValueError: ``n`` is negative (names the stage and the count).
        """
        if n < 0:
            raise ValueError(f"cleaning stage {self.stage!r}: count {name} = {n} must be >= 0")
        self.counts[name] = self.counts.get(name, 0) + int(n)

    def note(self, name: str, value: object) -> None:
        """Record a decision: ``value`` becomes the report field ``name``."""
        self.notes[name] = value

    def warn(self, *texts: str) -> None:
        """Append warnings (each a sentence naming the bag, topic and first message), tagged with :attr:`stage`."""
        self.entries.extend((self.stage, t) for t in texts)

    @property
    def warnings(self) -> tuple[str, ...]:
        """(W,) every warning, in the order recorded."""
        return tuple(t for _, t in self.entries)

    def warnings_of(self, *stages: Callable[..., object]) -> list[str]:
        """The warnings written by ``stages`` (stage functions), in the order recorded."""
        names = {s.__name__ for s in stages}
        return [t for stage, t in self.entries if stage in names]
