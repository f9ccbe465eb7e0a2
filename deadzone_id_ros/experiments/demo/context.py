"""What a demo stage sees and returns (:class:`StageContext`, :class:`StageRecord`) and what a stage is
(:class:`Stage`); the stages themselves are :mod:`.demo.stages`, the resumable run :mod:`.demo.run`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict

from .config import DemoConfig

if TYPE_CHECKING:
    from ..closed_loop.results import ClosedLoopRun
    from ..compare.results import CompareReport
    from ..improve.results import ImproveRun
    from ..sense.results import SenseResults
    from ..teleop.results import TeleopResults

__all__ = ["Stage", "StageContext", "StageObjects", "StageRecord"]


class StageRecord(TypedDict, total=False):
    """What a stage records in demo_state.json (JSON; paths relative to the output folder), read by later stages
    and by a resumed run; each stage fills its own keys.

    Keys:
        bags: simulate: the offline-simulated bags.  robot_check: simulate, with a robot profile: its robot check's
        file.  bag: live: the live recording ("" when there is none).  skipped: live, sense, teleop: why it did not
        run.
        compare_dir: compare: the comparison's folder.  best: compare: the learned method exported to ONNX.
        closed_loop_json: closed_loop: its record.  improve_dir: improve: its folder, None when skipped.
        sense_dir: sense: its folder (sense.json, sense.md, sensing.yaml).  teleop_dir: teleop: its folder
        (teleop.json, teleop.md, plots).  report: report: the report's file.
    """

    bags: list[str]
    robot_check: str
    bag: str
    skipped: str
    compare_dir: str
    best: str
    closed_loop_json: str
    improve_dir: str | None
    sense_dir: str
    teleop_dir: str
    report: str


@dataclass
class StageObjects:
    """The typed results of the stages finished in this process, for the report stage (None: not run here; a
    resumed report stage reads them back from the files those stages wrote).

    Attributes:
        compare: the comparison's report.  closed_loop: the closed-loop run.  improve: the improve run.
        sense: the force-sensing run.  teleop: the teleoperation run.
    """

    compare: CompareReport | None = None
    closed_loop: ClosedLoopRun | None = None
    improve: ImproveRun | None = None
    sense: SenseResults | None = None
    teleop: TeleopResults | None = None


@dataclass
class StageContext:
    """What a stage sees.

    Attributes:
        out: the output folder.  cfg: the sizes.  results: stage name -> JSON record of every finished stage (this
        run's and, on resume, the earlier run's).  log: prints a line.  stage_seconds: ``"<n>_<stage>"`` -> wall
        time of each finished stage [s].  objects: the typed results of the stages finished in this process (the
        comparison's report, the closed-loop, improve, force-sensing and teleoperation runs), for the report stage; on
        resume the report stage reads what is missing back from the files those stages wrote.
    """

    out: Path
    cfg: DemoConfig
    results: dict[str, StageRecord]
    log: Callable[[str], None] = print
    stage_seconds: dict[str, float] = field(default_factory=dict)
    objects: StageObjects = field(default_factory=StageObjects)


@dataclass(frozen=True)
class Stage:
    """One stage of a resumable run.

    Attributes:
        name: its key in demo_state.json and INCOMPLETE.json.  title: (config) -> the header line.
        run: (context) -> its JSON record.  owns: glob patterns (relative to the output folder) of what it
        writes, moved aside before it runs again after an interruption.
    """

    name: str
    title: Callable[[DemoConfig], str]
    run: Callable[[StageContext], StageRecord]
    owns: tuple[str, ...] = ()
