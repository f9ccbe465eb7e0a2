"""The sizes of ``deadzone-id demo``'s stages (:class:`DemoConfig`: seeds, durations, the robot), checked when made."""

from __future__ import annotations

from dataclasses import dataclass

from ...config import check_positive

__all__ = ["DemoConfig"]


@dataclass(frozen=True)
class DemoConfig:
    """Sizes of the demo's stages.

    Attributes:
        sim_seeds: excitation/noise seeds of the offline-simulated episodes (one bag each).
        sim_duration: simulated seconds per offline episode [s].
        live_duration: excitation length of the live recording [s].
        live_seed: excitation seed of the live recording.
        closed_loop_seeds: held-out reference seeds of the closed-loop comparison (in no training data).
        closed_loop_duration: in-process closed-loop run per seed and controller [s].
        closed_loop_live_duration: the live closed-loop run per controller over DDS (first seed) [s]; 0: none (the
            in-process comparison only).
        weak_dob_fraction: the weak-DOB setting's cutoff as a fraction of the default, in (0, 1).
        compare_seeds: training seeds per method.
        quick: shorter training (``compare --quick``): under-trained models, said so in the report.
        improve_iterations: trainings of the improve stage after its iteration 0 (0: the stage is skipped).
        improve_task_seeds: its task references' excitation seeds (none a closed-loop seed).
        improve_duration: its seconds per task run [s].
        robot_check: with ``robot``, record its robot check (:mod:`deadzone_id_ros.experiments.check`) in
            ``robot_check.json`` for the report (``deadzone-id demo --no-check``: False).
        sense_seeds: held-out seeds of the force-sensing stage (``deadzone-id sense``: pushes, a hold and a
            collision on each).  sense_duration: its seconds of free motion with pushes per seed [s].
            sense_calibration_duration: its calibration run [s] (free motion on its own seed).
        teleop_seeds: seeds of the teleoperation stage (``deadzone-id teleop``: free motion, a push into a box,
            a held contact and a gentle push on a stuck joint, bilateral, each seed one run per model and scenario).
            teleop_duration: its seconds per run [s] (at least 3.2, the contact windows need it).
        robot: the robot profile (``deadzone-id robot show``: a shipped name or a profile file) every stage runs:
            simulated offline, recorded live over DDS (every node and launch file takes it, ``robot:=``), compared
            (rbd and hybrid on its URDF, its locked joints) and run in closed loop in process and live; "" (default):
            the bundled arm.

    Raises:
        ValueError: an empty seed list, a duration <= 0 (the live closed-loop one < 0), a weak-DOB fraction outside
            (0, 1), a closed-loop seed that is also a training seed or an improve task seed, improve_iterations
            < 0, sense settings ``deadzone-id sense`` refuses (e.g. a sense seed that is its calibration seed), or
            teleop settings ``deadzone-id teleop`` refuses (e.g. a run shorter than its contact windows).
    """

    sim_seeds: tuple[int, ...] = (1, 2, 3, 4, 5)
    sim_duration: float = 60.0
    live_duration: float = 20.0
    live_seed: int = 100
    closed_loop_seeds: tuple[int, ...] = (999, 1000, 1001)
    closed_loop_duration: float = 6.0
    closed_loop_live_duration: float = 4.0
    weak_dob_fraction: float = 0.2
    compare_seeds: int = 3
    quick: bool = False
    improve_iterations: int = 1
    improve_task_seeds: tuple[int, ...] = (11, 12, 13, 14)
    improve_duration: float = 10.0
    robot: str = ""
    robot_check: bool = True
    sense_seeds: tuple[int, ...] = (1, 2)
    sense_duration: float = 30.0
    sense_calibration_duration: float = 60.0
    teleop_seeds: tuple[int, ...] = (1, 2)
    teleop_duration: float = 4.0

    def __post_init__(self) -> None:
        if not self.sim_seeds:
            raise ValueError("sim_seeds is empty")
        if not self.closed_loop_seeds:
            raise ValueError("closed_loop_seeds is empty")
        if not self.sense_seeds:
            raise ValueError("sense_seeds is empty")
        from ..sense.settings import SenseSettings  # its own checks, before the long stages that come first

        try:
            SenseSettings(seeds=tuple(self.sense_seeds), duration=self.sense_duration,
                          calibration_duration=self.sense_calibration_duration)
        except ValueError as err:
            raise ValueError(f"the sense stage's settings: {err}") from err
        from ..teleop.run import TeleopSettings

        try:
            TeleopSettings(seeds=tuple(self.teleop_seeds), duration=self.teleop_duration)
        except ValueError as err:
            raise ValueError(f"the teleop stage's settings: {err}") from err
        for name in ("sim_duration", "live_duration", "closed_loop_duration", "improve_duration", "sense_duration",
                     "sense_calibration_duration"):
            check_positive(name, getattr(self, name))
        check_positive("closed_loop_live_duration", self.closed_loop_live_duration, allow_zero=True)  # 0: no live run
        if not 0 < self.weak_dob_fraction < 1:
            raise ValueError(f"weak_dob_fraction = {self.weak_dob_fraction} must be in (0, 1)")
        for seed in self.closed_loop_seeds:
            if seed in self.sim_seeds or seed == self.live_seed or seed in self.improve_task_seeds:
                raise ValueError(f"closed_loop_seed {seed} must differ from the training seeds")
        if self.improve_iterations < 0 or not self.improve_task_seeds:
            raise ValueError(f"improve_iterations = {self.improve_iterations} must be >= 0 and improve_task_seeds "
                             f"= {list(self.improve_task_seeds)} not empty")

    @classmethod
    def quick_run(cls) -> DemoConfig:
        """The ``--quick`` sizes (about 3 minutes on 2 cores; the models are under-trained)."""
        return cls(sim_seeds=(1, 2), sim_duration=30.0, live_duration=8.0, closed_loop_duration=3.0,
                   closed_loop_live_duration=3.0, compare_seeds=1, quick=True, improve_task_seeds=(11, 12),
                   improve_duration=5.0, sense_seeds=(1,), sense_duration=10.0, sense_calibration_duration=30.0,
                   teleop_seeds=(1,))
