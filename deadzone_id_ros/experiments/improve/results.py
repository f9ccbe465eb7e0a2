"""Results of ``deadzone-id improve`` (:mod:`.improve.run`): how it ran (:class:`ImproveSettings`), what one iteration's
training decided (:class:`TrainingStep`), one iteration (:class:`ImproveIteration`) and the whole loop
(:class:`ImproveRun`), whose :meth:`ImproveRun.to_dict` is report.json's ``improve`` section.

Errors are kept in [rad] and torques in [N·m] in the objects; the JSON entries of an iteration
(:meth:`ImproveIteration.report_entry`) give tracking errors in mrad, as the closed-loop comparison's report does.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...config import check_positive
from ...jsonrecord import JsonRecord, as_object, read_record, record_from_dict, take

if TYPE_CHECKING:  # annotations only: `deadzone-id --help` imports the CLI, which must not load numpy-heavy modules
    import numpy as np

    from ...control.config import ControllerConfig
    from ...sim.config import SimArmConfig
    from ..closed_loop.results import ClosedLoopSummary

__all__ = ["DEFAULT_HELD_OUT_SEEDS", "DEFAULT_TASK_SEEDS", "MAX_PICK_RATIO", "MAX_STEP_WORSENING", "MIN_GAIN",
           "ImproveIteration", "ImproveRun", "ImproveSettings", "ImproveTargets", "RunSetup", "TrainingStep",
           "targets"]

#: The task references every iteration runs and records (excitation seeds); the demo's training bags use seeds 1..5
#: and 100, the closed-loop comparison holds out 999..1001.
DEFAULT_TASK_SEEDS = (11, 12, 13, 14)
#: The held-out references every iteration is scored on and none runs for training (those of the closed-loop
#: comparison, so the two reports are comparable).
DEFAULT_HELD_OUT_SEEDS = (999, 1000, 1001)


@dataclass(frozen=True)
class ImproveSettings(JsonRecord):
    """How ``deadzone-id improve`` runs.

    Attributes:
        iterations: trainings after iteration 0 (>= 0; each followed by runs with the model it accepted).
        task_seeds: excitation seeds of the task references every iteration runs and records.
        task_duration_s: seconds per task run (> 0).
        held_out_seeds: excitation seeds of the held-out references (scored, never recorded for training); none may
            be a task seed.
        held_out_duration_s: seconds per held-out run (> 0).
        check_seed: excitation seed of the check reference a candidate's trial run tracks before it is accepted
            (never trained on, never scored; neither a task nor a held-out seed).
        dob_cutoff_scale: factor on the DOB cutoff of every run (> 0; 0.2: the closed-loop comparison's weak DOB).
        methods: the candidate methods of each training (registered names, none reading the joint-state history:
            each drives the controller; empty: every method compare fits by default).
        warm_start: start each method's network from its previous iteration's network.
        robot: robot profile (name or file); None: the bundled arm.
        compare_model: a model artifact to score beside the iterations (the dedicated-excitation pick); None: none.
        live: record the task runs over DDS in lockstep by the nodes (sim_arm, excitation, feedforward_controller,
            recorder; :mod:`.improve.live`) instead of in-process; scoring stays in-process either way.

    Raises:
        ValueError: a value out of range, no task or held-out seed, a held-out seed that is also a task seed
            (both named), an unknown method or one that reads the joint-state history (named).
    """

    iterations: int = 3
    task_seeds: tuple[int, ...] = DEFAULT_TASK_SEEDS
    task_duration_s: float = 10.0
    held_out_seeds: tuple[int, ...] = DEFAULT_HELD_OUT_SEEDS
    held_out_duration_s: float = 6.0
    check_seed: int = 21
    dob_cutoff_scale: float = 1.0
    methods: tuple[str, ...] = ()
    warm_start: bool = True
    robot: str | None = None
    compare_model: str | None = None
    live: bool = False

    def __post_init__(self) -> None:
        check_positive("iterations", self.iterations, integer=True, allow_zero=True)
        for name in ("task_duration_s", "held_out_duration_s", "dob_cutoff_scale"):
            check_positive(name, getattr(self, name))
        if not isinstance(self.live, bool):
            raise ValueError(f"live = {self.live!r} must be true or false")
        if not self.task_seeds or not self.held_out_seeds:
            raise ValueError(f"task_seeds = {list(self.task_seeds)} and held_out_seeds = {list(self.held_out_seeds)} "
                             "must each name at least one seed")
        both = sorted(set(self.task_seeds) & set(self.held_out_seeds))
        if both:
            raise ValueError(f"held-out seed(s) {both} are also task seeds {list(self.task_seeds)}: a held-out "
                             "reference must never be run for training")
        if self.check_seed in (*self.task_seeds, *self.held_out_seeds):
            raise ValueError(f"check_seed = {self.check_seed} must be neither a task seed {list(self.task_seeds)} "
                             f"nor a held-out seed {list(self.held_out_seeds)}")
        from ...models.methods import resolve_methods

        offline = [m.name for m in resolve_methods(self.methods) if m.history]  # unknown names raise here too
        if offline:
            raise ValueError(f"methods {offline} read the joint-state history and cannot drive the controller that "
                             "improve runs each model in; leave them out")

    def to_dict(self) -> dict[str, Any]:
        """The JSON form, keys as the fields (tuples as lists)."""
        return {k: list(v) if isinstance(v, tuple) else v for k, v in dataclasses.asdict(self).items()}


@dataclass(frozen=True)
class TrainingStep(JsonRecord):
    """What one iteration's training did.

    Attributes:
        bags: the bags it trained on (every task run recorded so far).  samples: (train, val, test) samples.
        validation_rmse: method -> mean validation torque RMSE over its seeds [N·m] (None: could not be fitted).
        skipped: method -> why it was not fitted.  pick: the method chosen by validation error
        (:func:`~.pick.choose_pick`).  pick_reason: its sentence.  candidate_validation_rmse: the exported seed's
        validation RMSE [N·m].  running_validation_rmse: the model that ran this iteration's runs, on the same
        validation split [N·m].  accepted: the candidate replaced the running model.  refusal: why not ("" when
        accepted).  artifact: the candidate's artifact directory.  warm_started: methods started from the previous
        iteration's network.  trial_tracking_rmse: the candidate's trial run on the check reference [rad] (mean over
        joints).  running_trial_tracking_rmse: the running model's run of it [rad].
    """

    bags: list[str]
    samples: list[int]
    validation_rmse: dict[str, float | None]
    skipped: dict[str, str]
    pick: str
    pick_reason: str
    candidate_validation_rmse: float
    running_validation_rmse: float
    accepted: bool
    refusal: str
    artifact: str
    warm_started: list[str] = field(default_factory=list)
    trial_tracking_rmse: float | None = None
    running_trial_tracking_rmse: float | None = None

    def to_dict(self) -> dict[str, Any]:
        """The JSON form, keys as the fields."""
        return dataclasses.asdict(self)


@dataclass
class ImproveIteration:
    """One iteration: the model it ran, how it got it, its recorded runs and its held-out score.

    Attributes:
        index: 0 for the nominal rigid body.  label: for tables.  model: the controller's ``model`` ("rbd": the
        URDF's nominal rigid body; "learned").  model_path: the artifact ("" for rbd).  method: the model's method.
        training: the training that preceded it (None for iteration 0).  runs: the bags recorded with it.
        held_out: its in-process runs on the held-out references
        (:class:`~.closed_loop.results.ClosedLoopSummary`).
    """

    index: int
    label: str
    model: str
    model_path: str
    method: str
    training: TrainingStep | None
    runs: list[str]
    held_out: ClosedLoopSummary

    def report_entry(self) -> dict[str, Any]:
        """report.json's ``improve.iterations[k]``: the model, the training decision, and the held-out figures of
        :meth:`~.closed_loop.results.ClosedLoopSummary.report_entry` (mrad) plus ``dob_mean_abs_per_joint`` [N·m]."""
        from ...training.evaluate import json_clean

        h = self.held_out
        return json_clean({
            "iteration": self.index, "label": self.label, "model": self.model, "model_path": self.model_path,
            "method": self.method, "training": self.training.to_dict() if self.training else None,
            "runs": self.runs, "held_out": h.report_entry(),
            "dob_mean_abs_per_joint": h.dob_mean_abs_per_joint,
            "dob_mean_abs": sum(h.dob_mean_abs_per_joint) / max(len(h.dob_mean_abs_per_joint), 1)})

    def to_dict(self) -> dict[str, Any]:
        """The full-precision JSON form (improve.json): keys as the fields, ``held_out`` as
        :meth:`~.closed_loop.results.ClosedLoopSummary.to_dict`."""
        out = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        out["training"] = self.training.to_dict() if self.training else None
        out["held_out"] = self.held_out.to_dict()
        return out

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], key: str = "") -> ImproveIteration:
        """The inverse of :meth:`to_dict`.

        Raises:
            DataError: a missing, unknown or malformed key (named).
        """
        from ..closed_loop.results import ClosedLoopSummary

        return record_from_dict(cls, d, key, localns={"ClosedLoopSummary": ClosedLoopSummary,
                                                      "TrainingStep": TrainingStep})


@dataclass
class ImproveRun:
    """Everything ``deadzone-id improve`` measured.

    Attributes:
        settings: how it ran.  iterations: 0..N.  compare: the ``compare_model`` on the held-out references, or
        None.  joint_names: (J,).  sim_profile: the simulated arm's profile.  seconds: wall time [s].
    """

    settings: ImproveSettings
    iterations: list[ImproveIteration]
    compare: ClosedLoopSummary | None
    joint_names: list[str]
    sim_profile: str
    seconds: float = 0.0

    def rmse(self) -> list[float]:
        """Held-out tracking RMSE [rad] (mean over joints, then seeds) per iteration."""
        return [it.held_out.tracking_rmse_mean for it in self.iterations]

    def to_dict(self) -> dict[str, Any]:
        """report.json: ``improve`` with ``settings``, ``iterations`` (:meth:`ImproveIteration.report_entry`),
        ``compare_model`` (its held-out entry or None), ``targets`` (:func:`targets`),
        ``joint_names``, ``sim_profile`` and ``seconds``."""
        from ...training.evaluate import json_clean

        return json_clean({"improve": {
            "settings": self.settings.to_dict(), "joint_names": self.joint_names, "sim_profile": self.sim_profile,
            "iterations": [it.report_entry() for it in self.iterations],
            "compare_model": self.compare.report_entry() if self.compare else None,
            "targets": targets(self).to_dict(), "seconds": self.seconds}})

    def record(self) -> dict[str, Any]:
        """improve.json: every field at full precision (iterations as :meth:`ImproveIteration.to_dict`, ``compare``
        as :meth:`~.closed_loop.results.ClosedLoopSummary.to_dict` or None), read back by :meth:`read`."""
        from ...training.evaluate import json_clean

        return json_clean({"settings": self.settings.to_dict(), "iterations": [it.to_dict() for it in self.iterations],
                           "compare": self.compare.to_dict() if self.compare else None,
                           "joint_names": self.joint_names, "sim_profile": self.sim_profile, "seconds": self.seconds})

    @classmethod
    def from_record(cls, d: Mapping[str, Any], key: str = "") -> ImproveRun:
        """The inverse of :meth:`record`.

        Raises:
            DataError: a missing or malformed key (named).
        """
        from ..closed_loop.results import ClosedLoopSummary

        as_object(d, key, cls.__name__)
        return cls(take(d, "settings", ImproveSettings, key), take(d, "iterations", list[ImproveIteration], key),
                   take(d, "compare", ClosedLoopSummary | None, key), take(d, "joint_names", list[str], key),
                   take(d, "sim_profile", str, key), take(d, "seconds", float, key))

    @classmethod
    def read(cls, path: str | Path) -> ImproveRun:
        """improve.json (:func:`~.improve.report.write_improve`) read back.

        Raises:
            FileNotFoundError: no such file.  DataError: not JSON or not an improve record (names the file and key).
        """
        return read_record(path, cls.from_record)


#: Issue 23's targets: the last iteration's held-out RMSE at least this much below iteration 0's ...
MIN_GAIN = 0.40
#: ... within this factor of the dedicated-excitation pick's ...
MAX_PICK_RATIO = 1.2
#: ... and no iteration worse than the one before by more than this share.
MAX_STEP_WORSENING = 0.05


@dataclass(frozen=True)
class ImproveTargets(JsonRecord):
    """Issue 23's targets measured on one run (held-out tracking RMSE, mean over joints and seeds).

    Attributes:
        gain: 1 - last / iteration 0 (>= :data:`MIN_GAIN` meets it; None without a trained iteration).
        gain_met: whether it does.  pick_ratio: last / the compare model's (None without one).  pick_met: whether it
        is <= :data:`MAX_PICK_RATIO`.  worst_step: largest (iteration k / iteration k-1) - 1 (None without k >= 1).
        steps_met: whether it is <= :data:`MAX_STEP_WORSENING`.
    """

    gain: float | None
    gain_met: bool | None
    pick_ratio: float | None
    pick_met: bool | None
    worst_step: float | None
    steps_met: bool | None

    def to_dict(self) -> dict[str, float | bool | None]:
        """The JSON form, keys as the fields."""
        return dataclasses.asdict(self)


def targets(run: ImproveRun) -> ImproveTargets:
    """The targets of :class:`ImproveTargets` on ``run``. A compare model that faulted on a held-out run (a
    runaway: its RMSE counts an arm out of control) is no yardstick: ``pick_ratio`` and ``pick_met`` are then None,
    and the reports say why (:func:`compare_faulted`)."""
    r = run.rmse()
    gain = 1.0 - r[-1] / r[0] if len(r) > 1 and r[0] > 0 else None
    ratio = (r[-1] / run.compare.tracking_rmse_mean
             if run.compare and run.compare.tracking_rmse_mean > 0 and not compare_faulted(run) else None)
    worst = max((b / a - 1.0 for a, b in zip(r, r[1:]) if a > 0), default=None)
    return ImproveTargets(gain, None if gain is None else gain >= MIN_GAIN,
                          ratio, None if ratio is None else ratio <= MAX_PICK_RATIO,
                          worst, None if worst is None else worst <= MAX_STEP_WORSENING)


def compare_faulted(run: ImproveRun) -> bool:
    """Whether ``run``'s compare model latched a fault (runaway) on any of its held-out runs."""
    return run.compare is not None and bool(run.compare.faults)


@dataclass(frozen=True)
class RunSetup:
    """What every run and training of one ``improve`` shares.

    Attributes:
        sim: the simulated arm's SimArmConfig.  base: the ControllerConfig whose gains and limits every run uses.
        urdf: the URDF for rbd/hybrid (None: the bundled arm's).  locked: URDF joint -> lock position of the
        profile.  effort_limit: (J,) [N·m] the controller's effort clamp (``ControllerConfig.effort_limits``).
    """

    sim: SimArmConfig
    base: ControllerConfig
    urdf: str | None
    locked: dict[str, float]
    effort_limit: np.ndarray

    @classmethod
    def for_robot(cls, robot: str | None) -> RunSetup:
        """The setup of the robot profile ``robot`` (name or file), or the bundled arm (None)."""

        from ...resources import default_urdf
        from ...robot import load_robot_description
        from ...robot_configs import load_robot
        from ..closed_loop.run import _default_configs

        sim, base = _default_configs(robot)
        urdf, locked = None, {}
        if robot:
            derived = load_robot(robot)
            urdf, locked = str(derived.urdf_path), dict(derived.profile.locked)
        desc = load_robot_description(base.urdf_path or default_urdf(), base.joint_names)
        return cls(sim, base, urdf, locked, base.effort_limits(desc))
