"""Results of ``deadzone-id demo``: :class:`DemoReport`, written to its report.json."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ...training.evaluate import json_clean
from ..closed_loop.results import ClosedLoopResult, ClosedLoopSettings, ClosedLoopSummary, closed_loop_sections
from ..compare.results import CONV, PROP, CompareReport
from ..improve.results import ImproveRun

if TYPE_CHECKING:
    from ..check import RobotCheck
    from ..sense.results import SenseResults
    from ..teleop.results import TeleopResults

__all__ = ["DemoReport"]


@dataclass
class DemoReport:
    """What ``deadzone-id demo`` measured; :meth:`to_dict` is its report.json.

    Attributes:
        config: the demo's sizes (DemoConfig as a dict).  simulated_bags, live_bag: the recordings.  compare_dir:
        the comparison's folder.  compare: its report.  best_learned: the learned method exported to ONNX.
        closed_loop, closed_loop_weak_dob: controller name -> in-process summary over the held-out seeds
        (:class:`~deadzone_id_ros.experiments.closed_loop.results.ClosedLoopSummary`), default and weak DOB.
        closed_loop_live: controller name -> one live run over DDS.  closed_loop_settings: seeds, durations, DOB
        fraction, the pick and where it came from, the in-process runs' ``time_base`` ("sim_time"), notes.
        robot_check: the robot check of the profile (:class:`~deadzone_id_ros.experiments.check.RobotCheck`), or
            None (the bundled arm, or ``--no-check``).
        improve: the improve stage's run (learning from its own runs), or None (stage not run or skipped).
        sense: the force-sensing stage's results (``deadzone-id sense``), or None (stage not run).  sense_dir: its
        folder, relative to the demo's.  sense_skipped: "" or why the stage could not run.
        teleop: the teleoperation stage's results (``deadzone-id teleop``), or None (stage not run).  teleop_dir: its
        folder, relative to the demo's.  teleop_skipped: "" or why the stage could not run.
        stage_seconds: wall time of each stage [s].
        seconds: wall time of the demo [s].
        robot: the robot profile's name (the bundled arm: "three_dof_arm").  live_skipped: "" or why the live stages
        did not run (a robot other than the bundled arm).
    """

    config: dict[str, Any]
    simulated_bags: list[str]
    live_bag: str
    compare_dir: str
    compare: CompareReport
    best_learned: str
    closed_loop: dict[str, ClosedLoopSummary] = field(default_factory=dict)
    seconds: float = 0.0
    closed_loop_weak_dob: dict[str, ClosedLoopSummary] = field(default_factory=dict)
    closed_loop_live: dict[str, ClosedLoopResult] = field(default_factory=dict)
    closed_loop_settings: ClosedLoopSettings = field(default_factory=ClosedLoopSettings)
    stage_seconds: dict[str, float] = field(default_factory=dict)
    robot: str = ""
    live_skipped: str = ""
    improve: ImproveRun | None = None
    robot_check: RobotCheck | None = None
    sense: SenseResults | None = None
    sense_dir: str = ""
    sense_skipped: str = ""
    teleop: TeleopResults | None = None
    teleop_dir: str = ""
    teleop_skipped: str = ""

    def comparison_refused(self) -> str:
        """Why the torque comparison must not be presented ("" when it may): the simulator's noise floor (its own
        inverse dynamics on the same test pairs) above the best method's mean error, so that the methods' differences
        are noise."""
        floor = self.compare.noise_floor
        errors = [m.rmse_mean for m in self.compare.methods.values() if m.rmse_mean is not None]
        if floor is None or floor.rmse_mean is None or not errors or floor.rmse_mean <= min(errors):
            return ""
        best = min(errors)
        return (f"the simulator's own noise floor ({floor.rmse_mean:.4g} {self.compare.torque_unit}, its exact inverse "
                f"dynamics on the same test pairs) exceeds the best method's error ({best:.4g}): the differences "
                "between methods are noise")

    def masked_vs_conventional(self) -> dict[str, float | None]:
        """The paper's claim on this arm: usable fraction and mean torque RMSE [N·m] of the masked and the
        conventional method and their ratios (masked / conventional); None where a method is missing or its value
        is undefined."""
        m, c = self.compare.methods.get(PROP), self.compare.methods.get(CONV)

        def ratio(a: float | None, b: float | None) -> float | None:
            return a / b if a is not None and b else None

        um, uc = (m.usable_fraction if m else None), (c.usable_fraction if c else None)
        rm, rc = (m.rmse_mean if m else None), (c.rmse_mean if c else None)
        return {"joints": len(self.compare.joint_names), "usable_fraction_masked": um,
                "usable_fraction_conventional": uc, "usable_ratio": ratio(um, uc), "rmse_masked": rm,
                "rmse_conventional": rc, "rmse_ratio": ratio(rm, rc)}

    def to_dict(self) -> dict[str, Any]:
        """report.json: ``robot`` (name, joints), ``config``, ``data`` (with ``live_skipped``), ``compare``
        (dir, best_learned, methods, noise_floor, data_efficiency, pick: the model to deploy), ``closed_loop``,
        ``closed_loop_weak_dob``, ``closed_loop_live``, ``closed_loop_settings``, ``robot_check`` (or None),
        ``comparison_refused`` (:meth:`comparison_refused`), ``improve`` (the improve stage's
        report.json section, :meth:`~.improve.results.ImproveRun.to_dict`, or None), ``sense`` (the force-sensing
        stage's sense.json with its ``dir``, ``{"skipped": why}`` when it could not run, or None), ``teleop`` (the
        teleoperation stage's teleop.json with its ``dir``, ``{"skipped": why}``, or None), ``masked_vs_conventional``
        (:meth:`masked_vs_conventional`), ``stage_seconds`` and ``seconds``."""
        cmp = self.compare.to_dict()
        return json_clean({
            "robot": {"name": self.robot, "joints": list(self.compare.joint_names)},
            "config": self.config,
            "data": {"simulated_bags": self.simulated_bags, "live_bag": self.live_bag,
                     "live_skipped": self.live_skipped},
            "compare": {"dir": self.compare_dir, "best_learned": self.best_learned, "methods": cmp["methods"],
                        "noise_floor": cmp.get("noise_floor"), "data_efficiency": cmp.get("data_efficiency"),
                        "pick": cmp.get("pick")},
            **closed_loop_sections(self.closed_loop, self.closed_loop_weak_dob, self.closed_loop_live,
                                   self.closed_loop_settings),
            "improve": self.improve.to_dict()["improve"] if self.improve else None,
            "sense": ({"dir": self.sense_dir, **self.sense.to_dict()} if self.sense else
                      {"skipped": self.sense_skipped} if self.sense_skipped else None),
            "teleop": ({"dir": self.teleop_dir, **self.teleop.to_dict()} if self.teleop else
                       {"skipped": self.teleop_skipped} if self.teleop_skipped else None),
            "robot_check": self.robot_check.to_dict() if self.robot_check else None,
            "comparison_refused": self.comparison_refused(),
            "masked_vs_conventional": self.masked_vs_conventional(),
            "stage_seconds": self.stage_seconds,
            "seconds": self.seconds,
        })
