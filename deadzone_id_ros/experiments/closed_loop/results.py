"""Results of the closed-loop comparison: the in-process summary of one controller over its seeds
(:class:`ClosedLoopSummary`), one live run over DDS (:class:`ClosedLoopResult`), everything one comparison measured
(:class:`ClosedLoopRun`), and their JSON sections (:func:`closed_loop_sections`).

closed_loop.json is :meth:`ClosedLoopRun.to_dict`: the stable sections of :func:`closed_loop_sections` (in mrad, for
people and consumers that read keys) and, under ``summaries`` / ``summaries_weak``, every in-process summary at full
precision in [rad] (:meth:`ClosedLoopSummary.to_dict`), which :meth:`ClosedLoopRun.read` reads back (a resumed demo
builds its report from it)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...jsonrecord import JsonRecord, as_object, read_record, record_from_dict, take

if TYPE_CHECKING:  # annotations only: `deadzone-id --help` imports this module and must not load MuJoCo
    from ...sim.tracking import TrackingFigures, TrackingMetrics

__all__ = ["IN_PROCESS_TIME_BASE", "ClosedLoopResult", "ClosedLoopRun", "ClosedLoopSettings", "ClosedLoopSummary",
           "closed_loop_sections"]

#: Time base of the in-process runs (``closed_loop_settings.time_base``): the loop's own simulated time, one control
#: tick per 1/rate_hz; the live runs' is "header" (the recorded states' header stamps, ClosedLoopResult.time_base).
IN_PROCESS_TIME_BASE = "sim_time"


@dataclass
class ClosedLoopSummary:
    """One controller over several held-out seeds (in-process). Errors in [rad].

    Attributes:
        name, label, mode, model, model_path: the controller.  joint_names: (J,).  seeds: reference/noise seeds.
        dob_cutoff: (J,) the DOB cutoff used [rad/s].  duration: per seed [s].
        tracking_rmse_per_joint, tracking_rmse_per_joint_std: (J,) mean and std over seeds.
        tracking_rmse_mean, tracking_rmse_std: mean over joints of the per-joint RMSE, then mean/std over seeds.
        max_abs_error_per_joint: (J,) largest |e| over all seeds.
        reversal_rmse_per_joint: (J,) mean over seeds; reversal_rmse_mean, reversal_rmse_std as above.
        rate_limit_fraction, clamp_fraction: (J,) share of ticks whose command was rate limited / clamped.
        per_seed: the figures of each seed (:func:`~deadzone_id_ros.sim.tracking.tracking_figures`).
        reversal_profile: (T,) times from the reversal [s] and (T, J) mean |e| there [rad] (seed of the first run),
            for the plot.
        faults: one line per seed whose controller latched a fault (runaway: tracking error or position limit,
            :mod:`~deadzone_id_ros.control.safety`), naming the seed, the control time and the controller's reason;
            empty when no run faulted.
        trace: the first seed's run for the tracking plot, at most 100 Hz: ``t`` (T,) [s], ``q`` and ``q_d``
            (T, J) [rad] (measured and reference position); empty when not recorded.
        dob_mean_abs_per_joint: (J,) the DOB's mean |estimate| [N·m], mean over seeds: how much the observer still
            corrects the feedforward (0 without DOB; empty in a record written before it was measured).
    """

    name: str
    label: str
    mode: str
    model: str
    model_path: str
    joint_names: list[str]
    seeds: list[int]
    dob_cutoff: list[float]
    duration: float
    tracking_rmse_per_joint: list[float]
    tracking_rmse_per_joint_std: list[float]
    tracking_rmse_mean: float
    tracking_rmse_std: float
    max_abs_error_per_joint: list[float]
    reversal_rmse_per_joint: list[float]
    reversal_rmse_mean: float
    reversal_rmse_std: float
    rate_limit_fraction: list[float]
    clamp_fraction: list[float]
    per_seed: list[TrackingFigures] = field(default_factory=list)
    reversal_profile: dict[str, list] = field(default_factory=dict)
    faults: list[str] = field(default_factory=list)
    trace: dict[str, list] = field(default_factory=dict)
    dob_mean_abs_per_joint: list[float] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """The JSON form at full precision (closed_loop.json ``summaries.<name>``): keys as the fields, ``per_seed``
        as :meth:`TrackingFigures.to_dict`."""
        from ...training.evaluate import json_clean

        out = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        out["per_seed"] = [s.to_dict() for s in self.per_seed]
        return json_clean(out)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], key: str = "") -> ClosedLoopSummary:
        """The inverse of :meth:`to_dict` (NaN written as null read back as NaN).

        Raises:
            DataError: a missing, unknown or malformed key (named).
        """
        from ...sim.tracking import TrackingFigures  # a resumed report only: --help never gets here

        return record_from_dict(cls, d, key, localns={"TrackingFigures": TrackingFigures})

    def report_entry(self) -> dict[str, Any]:
        """report.json's ``closed_loop.<name>``: the keys of issue 15 in mrad, plus per-joint detail."""
        mrad = lambda v: [round(x * 1e3, 5) for x in v]  # noqa: E731
        return {"label": self.label, "mode": self.mode, "model": self.model, "model_path": self.model_path,
                "seeds": self.seeds, "duration_s": self.duration, "dob_cutoff": self.dob_cutoff,
                "tracking_rmse_mean_mrad": self.tracking_rmse_mean * 1e3,
                "tracking_rmse_std_mrad": self.tracking_rmse_std * 1e3,
                "reversal_rmse_mean_mrad": self.reversal_rmse_mean * 1e3,
                "reversal_rmse_std_mrad": self.reversal_rmse_std * 1e3,
                "tracking_rmse_per_joint_mrad": mrad(self.tracking_rmse_per_joint),
                "tracking_rmse_per_joint_std_mrad": mrad(self.tracking_rmse_per_joint_std),
                "max_abs_error_per_joint_mrad": mrad(self.max_abs_error_per_joint),
                "reversal_rmse_per_joint_mrad": mrad(self.reversal_rmse_per_joint),
                "rate_limit_fraction": self.rate_limit_fraction, "clamp_fraction": self.clamp_fraction,
                "faults": self.faults}


@dataclass(frozen=True)
class ClosedLoopResult:
    """Tracking and effort figures of one live closed-loop run over DDS on a held-out reference.

    Attributes:
        mode, model: the controller mode and model.  artifact: the learned model's directory or None.  bag: the
        recording.  metrics: its tracking and effort figures
        (:class:`~deadzone_id_ros.sim.tracking.TrackingMetrics`, the type of every recorded run).
        inprocess_tracking_rmse_mean [rad]: the same controller, seed and duration run in-process (the check that
        the nodes behave like the in-process loop), or None.
    """

    mode: str
    model: str
    artifact: str | None
    bag: str
    metrics: TrackingMetrics
    inprocess_tracking_rmse_mean: float | None = None

    def to_dict(self) -> dict[str, Any]:
        """closed_loop.json's ``closed_loop_live.<name>``: ``mode``, ``model``, ``artifact``, ``bag``, the metrics'
        fields and ``inprocess_tracking_rmse_mean``, flat."""
        return {"mode": self.mode, "model": self.model, "artifact": self.artifact, "bag": self.bag,
                **dataclasses.asdict(self.metrics), "inprocess_tracking_rmse_mean": self.inprocess_tracking_rmse_mean}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], key: str = "") -> ClosedLoopResult:
        """The inverse of :meth:`to_dict`: every key that is not a field of this class is a metric.

        Raises:
            DataError: a missing, unknown or malformed key (named).
        """
        from ...sim.tracking import TrackingMetrics

        own = {f.name for f in dataclasses.fields(cls)} - {"metrics"}
        metrics = TrackingMetrics.from_dict({k: v for k, v in as_object(d, key, cls.__name__).items()
                                             if k not in own}, key)
        return record_from_dict(cls, {k: v for k, v in d.items() if k in own}, key,
                                localns={"TrackingMetrics": TrackingMetrics}, metrics=metrics)


@dataclass(frozen=True)
class ClosedLoopSettings(JsonRecord):
    """How a closed-loop comparison ran (report.json / closed_loop.json ``closed_loop_settings``).

    Attributes:
        seeds: held-out excitation seeds.  duration_s: in-process run per seed [s].  weak_dob_fraction: the weak
        DOB's cutoff over the default.  live_seed, live_duration_s [s]: the live runs' seed and length (0: none).
        pick, pick_source: the comparison's pick and where it came from.  live_failures: controller -> why its live
        run failed.  missing: methods without an artifact (their controllers left out).  sim_profile: the simulator's
        profile.  time_base: the in-process runs' (:data:`IN_PROCESS_TIME_BASE`).  tracking_error_limit: the
        controllers' runaway limit on |q_d - q| [rad] (``ControllerConfig.tracking_error_limit``; None: not known),
        against which the report marks a run whose largest error is above it.  robot: the robot profile the runs
        used (a shipped name or a profile file; "": the bundled arm of config/sim_arm.yaml).  feedforward_velocity:
        the velocity the ctc_dob models saw (``ControllerConfig.feedforward_velocity``; "": a run from before the
        setting existed, when it was the measured one).
    """

    seeds: list[int] = field(default_factory=list)
    duration_s: float = 0.0
    weak_dob_fraction: float = 0.0
    live_seed: int | None = None
    live_duration_s: float = 0.0
    pick: str | None = None
    pick_source: str = ""
    live_failures: dict[str, str] = field(default_factory=dict)
    missing: list[str] = field(default_factory=list)
    sim_profile: str = "?"
    time_base: str = IN_PROCESS_TIME_BASE
    tracking_error_limit: float | None = None
    robot: str = ""
    feedforward_velocity: str = ""

    def to_dict(self) -> dict[str, Any]:
        """The JSON form, keys as the fields."""
        return dataclasses.asdict(self)


@dataclass
class ClosedLoopRun:
    """Everything :func:`~deadzone_id_ros.experiments.closed_loop.run.run_closed_loop` measured.

    Attributes:
        summaries, summaries_weak: name -> ClosedLoopSummary, default and weak DOB.  live: name -> live run.
        settings: seeds, durations, DOB fraction, pick and its source, simulator profile, the in-process runs' time
        base (:data:`IN_PROCESS_TIME_BASE`).
    """

    summaries: dict[str, ClosedLoopSummary]
    summaries_weak: dict[str, ClosedLoopSummary]
    live: dict[str, ClosedLoopResult]
    settings: ClosedLoopSettings

    def to_dict(self) -> dict[str, Any]:
        """closed_loop.json: :func:`closed_loop_sections` and, at full precision, ``summaries`` and
        ``summaries_weak`` (name -> :meth:`ClosedLoopSummary.to_dict`); NaN written as null."""
        from ...training.evaluate import json_clean

        return json_clean({**closed_loop_sections(self.summaries, self.summaries_weak, self.live, self.settings),
                           "summaries": {k: v.to_dict() for k, v in self.summaries.items()},
                           "summaries_weak": {k: v.to_dict() for k, v in self.summaries_weak.items()}})

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], key: str = "") -> ClosedLoopRun:
        """The inverse of :meth:`to_dict`: the summaries from ``summaries`` / ``summaries_weak``, the live runs from
        ``closed_loop_live``, the settings from ``closed_loop_settings`` (the mrad sections ``closed_loop`` and
        ``closed_loop_weak_dob`` are derived from the summaries and not read).

        Raises:
            DataError: a missing or malformed key (named).
        """
        as_object(d, key, cls.__name__)
        return cls(take(d, "summaries", dict[str, ClosedLoopSummary], key),
                   take(d, "summaries_weak", dict[str, ClosedLoopSummary], key),
                   take(d, "closed_loop_live", dict[str, ClosedLoopResult], key),
                   take(d, "closed_loop_settings", ClosedLoopSettings, key))

    @classmethod
    def read(cls, path: str | Path) -> ClosedLoopRun:
        """closed_loop.json (:func:`~deadzone_id_ros.experiments.closed_loop.run.write_closed_loop`) read back.

        Raises:
            FileNotFoundError: no such file.  DataError: not JSON or not a closed-loop comparison's record (names the
                file and the key).
        """
        return read_record(path, cls.from_dict)


def closed_loop_sections(strong: dict[str, ClosedLoopSummary], weak: dict[str, ClosedLoopSummary],
                         live: dict[str, ClosedLoopResult], settings: ClosedLoopSettings) -> dict[str, Any]:
    """The closed-loop keys of report.json and closed_loop.json: ``closed_loop`` and ``closed_loop_weak_dob``
    (controller -> :meth:`ClosedLoopSummary.report_entry`, in mrad),
    ``closed_loop_live`` (controller -> :class:`ClosedLoopResult` fields) and ``closed_loop_settings``."""
    return {"closed_loop": {k: v.report_entry() for k, v in strong.items()},
            "closed_loop_weak_dob": {k: v.report_entry() for k, v in weak.items()},
            "closed_loop_live": {k: v.to_dict() for k, v in live.items()},
            "closed_loop_settings": settings.to_dict()}
