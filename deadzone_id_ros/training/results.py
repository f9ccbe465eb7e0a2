"""Typed results of the comparison; report.json is written from these and read back into them.

Numbers that could not be measured (a joint that never moves in the test split, a failed fit) are None, as in
report.json. The JSON keys are stable (``methods.<name>.rmse_per_joint``, ``.rmse_mean``, ``.nrmse_mean``,
``.validation_rmse_mean``, ``.usable_fraction``, ``noise_floor.rmse_per_joint``, ``data_efficiency``, ``pick``,
``data_diagnosis``): consumers read them by name.

Artifacts of a comparison folder (paths relative to report.json, stable; the demo's closed loop reads them):
- ``models/<method>/``: the seed-0 model of each method (model.json + weights, no ONNX);
- ``pick/``: the model to deploy (:data:`PICK_DIR`; ``pick.artifact``; load with ``models.load_artifact``), with its
  network as ONNX (``pick.onnx``): ``pick/model.onnx`` (the full model) or, for hybrid, ``pick/residual.onnx`` (the
  MLP residual; add the rigid-body torque); None for rbd (no network).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..models.methods import METHODS
from .evaluate import json_clean

if TYPE_CHECKING:
    from ..sim.closed_loop import ClosedLoopSummary

__all__ = ["PICK_DIR", "REPORT_VERSION", "ClosedLoopResult", "CompareReport", "DataDiagnosis",
           "DataEfficiency", "DemoReport", "EfficiencyCurve", "MethodResult", "NoiseFloor", "Pick",
           "closed_loop_sections"]

REPORT_VERSION = 1
#: Folder of the picked model's artifact inside a comparison folder.
PICK_DIR = "pick"
Floats = list[float | None]


@dataclass
class MethodResult:
    """One method over its training seeds; torque errors [N·m] on test pairs where the joint moves.

    Attributes:
        rmse_per_joint, rmse_per_joint_std: (J,) mean and std over seeds.  rmse_mean, rmse_mean_std: of the
        per-seed mean over joints.  nrmse_*: the same for RMSE / std of the measured torque.  usable_fraction: share
        of the training data the method learns from.  seeds: the training seeds.  dead_zone: errors on stuck pairs
        (``rmse_vs_measured_per_joint`` (J,) [N·m], its ``_std``, and with a known band
        ``pred_within_band_per_joint``).  per_seed: the metrics of each seed (see evaluate_model).  artifact: the
        seed-0 model directory, relative to the report.  validation_rmse_mean [N·m], validation_rmse_per_joint (J,)
        [N·m], validation_nrmse_mean: the same errors on the validation split (moving pairs), mean over seeds; what
        the pick uses.  validation_rmse_per_seed: per seed.  steps_per_seed: the gradient steps each seed's
        network took before its validation loss stopped improving (or the maximum); empty for rbd (no network).
    """

    rmse_per_joint: Floats
    rmse_per_joint_std: Floats
    rmse_mean: float | None
    rmse_mean_std: float | None
    nrmse_per_joint: Floats
    nrmse_per_joint_std: Floats
    nrmse_mean: float | None
    usable_fraction: float
    seeds: list[int]
    dead_zone: dict[str, Any]
    per_seed: list[dict[str, Any]]
    artifact: str
    validation_rmse_mean: float | None = None
    validation_rmse_per_joint: Floats = field(default_factory=list)
    validation_nrmse_mean: float | None = None
    validation_rmse_per_seed: Floats = field(default_factory=list)
    steps_per_seed: list[int] = field(default_factory=list)


@dataclass
class Pick:
    """The model to deploy, chosen by validation error (never test).

    Attributes:
        method: the method with the lowest ``validation_rmse_mean`` (mean over seeds).  reason: why, in words, with
        the numbers.  validation_rmse_mean [N·m]: that method's.  seed: the seed exported (its lowest validation
        RMSE).  test_rmse_mean [N·m] / test_nrmse_mean: the exported model's test error, reported after the choice.
        artifact: its folder relative to report.json (:data:`PICK_DIR`).  onnx: ``pick/model.onnx``,
        ``pick/residual.onnx`` (hybrid) or None (rbd); see the module docstring.
    """

    method: str
    reason: str
    validation_rmse_mean: float | None
    seed: int = 0
    test_rmse_mean: float | None = None
    test_nrmse_mean: float | None = None
    artifact: str = PICK_DIR
    onnx: str | None = None


@dataclass
class DataDiagnosis:
    """Are the torques of stuck joints predictable? (then masking them cannot help).

    A model fitted on moving pairs only (``model``: the best of masked / hybrid / rbd by validation RMSE) is
    evaluated on the validation split's moving and stuck pairs. Where a stuck joint's measured torque is arbitrary
    inside its static-friction band (motor-side torque from current), its stuck RMSE is well above its moving RMSE;
    where it is predictable (link-side torque sensors, as on the KUKA LWR), the two are about equal
    (``ratio_per_joint`` = stuck / moving RMSE <= :attr:`threshold` on every joint with stuck pairs).

    Attributes:
        model: the method used.  rmse_moving_per_joint, rmse_stuck_per_joint (J,) [N·m], ratio_per_joint (J,).
        threshold: the ratio below which stuck torques count as predictable.  stuck_predictable: the verdict.
        note: the sentence report.md prints.
    """

    model: str
    rmse_moving_per_joint: Floats
    rmse_stuck_per_joint: Floats
    ratio_per_joint: Floats
    threshold: float
    stuck_predictable: bool
    note: str


@dataclass
class NoiseFloor:
    """The simulator's own inverse dynamics on the same measured inputs and test pairs (simulator data only).

    Attributes:
        rmse_per_joint (J,) [N·m], rmse_mean [N·m], nrmse_per_joint (J,); measured_within_band_per_joint (J,)
        fraction of stuck pairs whose measured torque lies in the friction band; band_halfwidth_per_joint (J,)
        [N·m].  rbd_ratio [1]: the identified rigid-body model's mean test RMSE over ``rmse_mean`` (None without
        an rbd result); :meth:`CompareReport.to_dict` fills it from :meth:`CompareReport.floor_ratio`.
    """

    description: str
    rmse_per_joint: Floats
    rmse_mean: float | None
    nrmse_per_joint: Floats
    measured_within_band_per_joint: Floats | None
    band_halfwidth_per_joint: Floats
    rbd_ratio: float | None = None


@dataclass
class EfficiencyCurve:
    """One method's points of the data-efficiency curve (one entry per training fraction).

    Attributes:
        rmse_mean, rmse_mean_std: mean test RMSE [N·m] over seeds and its std.  usable_samples: what the method
        learned from.  failed: "" or why the method could not train at that fraction.
    """

    rmse_mean: Floats = field(default_factory=list)
    rmse_mean_std: Floats = field(default_factory=list)
    usable_samples: list[int] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)


@dataclass
class DataEfficiency:
    """Masked vs conventional trained on growing shares of the training blocks (same validation and test sets)."""

    fractions: list[float]
    train_samples: list[int] = field(default_factory=list)
    train_blocks: list[int] = field(default_factory=list)
    curves: dict[str, EfficiencyCurve] = field(default_factory=dict)
    usable_samples_note: str = ""
    merged: list[list[float]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """report.json's ``data_efficiency``: the curves under their method names; ``merged`` per row: the
        requested fractions that selected the same blocks (one row, trained once), or [] for a row of its own."""
        out: dict[str, Any] = {"fractions": self.fractions, "train_samples": self.train_samples,
                               "train_blocks": self.train_blocks, "merged": self.merged}
        out.update({m: dataclasses.asdict(c) for m, c in self.curves.items()})
        out["usable_samples_note"] = self.usable_samples_note
        return out

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> DataEfficiency:
        """Inverse of :meth:`to_dict`."""
        known = ("fractions", "train_samples", "train_blocks", "usable_samples_note", "merged")
        curves = {m: EfficiencyCurve(**v) for m, v in d.items() if m not in known}
        return cls(d.get("fractions", []), d.get("train_samples", []), d.get("train_blocks", []), curves,
                   d.get("usable_samples_note", ""), d.get("merged", []))


@dataclass
class CompareReport:
    """Everything ``compare`` measured; :meth:`to_dict` is report.json.

    Attributes:
        joint_names: (J,).  units: of the numbers.  data: training-data record (sources, samples, split, loader
        report).  dead_zone: the fitted dead zone (``alpha``, ``sigma``, ``threshold``) and the moving fractions.
        config: the training configuration.  methods: per method.  skipped_methods: method -> reason.
        noise_floor: simulator data only.  data_efficiency: the curve.  seconds: wall time of the comparison [s].
        pick: the model to deploy (by validation error).  data_diagnosis: whether stuck torques are predictable.
    """

    joint_names: list[str]
    units: dict[str, str]
    data: dict[str, Any]
    dead_zone: dict[str, Any]
    config: dict[str, Any]
    methods: dict[str, MethodResult] = field(default_factory=dict)
    skipped_methods: dict[str, str] = field(default_factory=dict)
    noise_floor: NoiseFloor | None = None
    data_efficiency: DataEfficiency | None = None
    seconds: float = 0.0
    report_version: int = REPORT_VERSION
    pick: Pick | None = None
    data_diagnosis: DataDiagnosis | None = None

    @property
    def torque_unit(self) -> str:
        """The unit of every torque figure as printed: "N·m", or the recorded effort's ("mA", "unknown", "mixed
        units") when it was trained as recorded (:mod:`deadzone_id_ros.data.effort_units`)."""
        from ..data.effort_units import unit_label

        return unit_label(self.data.get("effort_units") or {"": self.units.get("rmse", "N*m")})

    def to_dict(self) -> dict[str, Any]:
        """The JSON-ready report (NaN -> None), with the stable keys of report.json."""
        out: dict[str, Any] = {
            "report_version": self.report_version, "joint_names": self.joint_names, "units": self.units,
            "data": self.data, "dead_zone": self.dead_zone, "config": self.config,
            "methods": {m: dataclasses.asdict(r) for m, r in self.methods.items()},
            "skipped_methods": self.skipped_methods,
        }
        if self.noise_floor is not None:
            out["noise_floor"] = dataclasses.asdict(dataclasses.replace(self.noise_floor,
                                                                        rbd_ratio=self.floor_ratio("rbd")))
        out["data_efficiency"] = self.data_efficiency.to_dict() if self.data_efficiency is not None else {}
        out["pick"] = dataclasses.asdict(self.pick) if self.pick is not None else None
        out["data_diagnosis"] = dataclasses.asdict(self.data_diagnosis) if self.data_diagnosis is not None else None
        out["seconds"] = self.seconds
        return json_clean(out)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> CompareReport:
        """Read a report.json back.

        Raises:
            KeyError: a stable key is missing.  TypeError: a method entry has unknown keys.
        """
        nf = d.get("noise_floor")
        de = d.get("data_efficiency")
        return cls(list(d["joint_names"]), dict(d["units"]), d["data"], d["dead_zone"], d["config"],
                   {m: MethodResult(**e) for m, e in d["methods"].items()}, dict(d.get("skipped_methods", {})),
                   NoiseFloor(**nf) if nf else None, DataEfficiency.from_dict(de) if de else None,
                   float(d.get("seconds", 0.0)), int(d.get("report_version", REPORT_VERSION)),
                   Pick(**d["pick"]) if d.get("pick") else None,
                   DataDiagnosis(**d["data_diagnosis"]) if d.get("data_diagnosis") else None)

    def best_learned(self) -> str | None:
        """The learned method (``METHODS[m].learned``) with the lowest mean test RMSE, or None (for display; the
        model to deploy is :attr:`pick`, chosen by validation error)."""
        learned = {m: e.rmse_mean for m, e in self.methods.items()
                   if m in METHODS and METHODS[m].learned and e.rmse_mean is not None}
        return min(learned, key=lambda m: learned[m]) if learned else None

    def floor_ratio(self, method: str) -> float | None:
        """``method``'s mean test RMSE over the noise floor's [1], or None when either is missing (or the floor is
        zero)."""
        entry, floor = self.methods.get(method), self.noise_floor
        if entry is None or entry.rmse_mean is None or floor is None or not floor.rmse_mean:
            return None
        return entry.rmse_mean / floor.rmse_mean


@dataclass
class ClosedLoopResult:
    """Tracking and effort figures of one live closed-loop run over DDS on a held-out reference.

    Attributes:
        mode, model: the controller mode and model.  artifact: the learned model's directory or None.  bag: the
        recording.  joint_names: (J,).  tracking_rmse_per_joint (J,) [rad]; tracking_rmse_mean [rad] (mean over
        joints of the per-joint RMSE); max_abs_error_per_joint (J,) [rad]: reference minus measured position.
        reversal_rmse_per_joint (J,), reversal_rmse_mean [rad]: the same near reversals of the reference velocity.
        effort_rms_per_joint (J,) [N·m]: applied torque.  samples: /joint_states samples inside the reference's
        span.  seconds: that span [s].  time_base: "header" (the states' header stamps).  zero_stamp_states: states
        stamped zero in the bag (not used).  zero_stamp_states_dropped: those the recorder did not record.
        inprocess_tracking_rmse_mean [rad]: the same controller, seed and duration run in-process (the check that
        the nodes behave like the in-process loop), or None.
    """

    mode: str
    model: str
    artifact: str | None
    bag: str
    joint_names: list[str]
    tracking_rmse_per_joint: list[float]
    tracking_rmse_mean: float
    max_abs_error_per_joint: list[float]
    reversal_rmse_per_joint: list[float]
    reversal_rmse_mean: float
    effort_rms_per_joint: list[float]
    samples: int
    seconds: float
    time_base: str = "header"
    zero_stamp_states: int = 0
    zero_stamp_states_dropped: int = 0
    inprocess_tracking_rmse_mean: float | None = None


@dataclass
class DemoReport:
    """What ``deadzone-id demo`` measured; :meth:`to_dict` is its report.json.

    Attributes:
        config: the demo's sizes (DemoConfig as a dict).  simulated_bags, live_bag: the recordings.  compare_dir:
        the comparison's folder.  compare: its report.  best_learned: the learned method exported to ONNX.
        closed_loop, closed_loop_weak_dob: controller name -> in-process summary over the held-out seeds
        (:class:`~deadzone_id_ros.sim.closed_loop.ClosedLoopSummary`), default and weak DOB.
        closed_loop_live: controller name -> one live run over DDS.  closed_loop_settings: seeds, durations, DOB
        fraction, the pick and where it came from, the in-process runs' ``time_base`` ("sim_time"), notes.
        stage_seconds: wall time of each stage [s].
        seconds: wall time of the demo [s].
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
    closed_loop_settings: dict[str, Any] = field(default_factory=dict)
    stage_seconds: dict[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """report.json: ``config``, ``data``, ``compare`` (dir, best_learned, methods, noise_floor,
        data_efficiency), ``closed_loop``, ``closed_loop_weak_dob``, ``closed_loop_live``,
        ``closed_loop_settings``, ``stage_seconds`` and ``seconds``."""
        cmp = self.compare.to_dict()
        return json_clean({
            "config": self.config,
            "data": {"simulated_bags": self.simulated_bags, "live_bag": self.live_bag},
            "compare": {"dir": self.compare_dir, "best_learned": self.best_learned, "methods": cmp["methods"],
                        "noise_floor": cmp.get("noise_floor"), "data_efficiency": cmp.get("data_efficiency")},
            **closed_loop_sections(self.closed_loop, self.closed_loop_weak_dob, self.closed_loop_live,
                                   self.closed_loop_settings),
            "stage_seconds": self.stage_seconds,
            "seconds": self.seconds,
        })


def closed_loop_sections(strong: dict[str, ClosedLoopSummary], weak: dict[str, ClosedLoopSummary],
                         live: dict[str, ClosedLoopResult], settings: dict[str, Any]) -> dict[str, Any]:
    """The closed-loop keys of report.json and closed_loop.json: ``closed_loop`` and ``closed_loop_weak_dob``
    (controller -> :meth:`~deadzone_id_ros.sim.closed_loop.ClosedLoopSummary.report_entry`, in mrad),
    ``closed_loop_live`` (controller -> :class:`ClosedLoopResult` fields) and ``closed_loop_settings``."""
    return {"closed_loop": {k: v.report_entry() for k, v in strong.items()},
            "closed_loop_weak_dob": {k: v.report_entry() for k, v in weak.items()},
            "closed_loop_live": {k: dataclasses.asdict(v) for k, v in live.items()},
            "closed_loop_settings": settings}
