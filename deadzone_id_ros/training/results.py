"""Typed results of the comparison; report.json is written from these and read back into them.

Numbers that could not be measured (a joint that never moves in the test split, a failed fit) are None, as in
report.json. The JSON keys are stable (``methods.<name>.rmse_per_joint``, ``.rmse_mean``, ``.nrmse_mean``,
``.usable_fraction``, ``noise_floor.rmse_per_joint``, ``data_efficiency``): consumers read them by name.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from .evaluate import json_clean

__all__ = ["REPORT_VERSION", "ClosedLoopResult", "CompareReport", "DataEfficiency", "DemoReport", "EfficiencyCurve",
           "MethodResult", "NoiseFloor"]

REPORT_VERSION = 1
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
        seed-0 model directory, relative to the report.
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


@dataclass
class NoiseFloor:
    """The simulator's own inverse dynamics on the same measured inputs and test pairs (simulator data only).

    Attributes:
        rmse_per_joint (J,) [N·m], rmse_mean [N·m], nrmse_per_joint (J,); measured_within_band_per_joint (J,)
        fraction of stuck pairs whose measured torque lies in the friction band; band_halfwidth_per_joint (J,)
        [N·m].
    """

    description: str
    rmse_per_joint: Floats
    rmse_mean: float | None
    nrmse_per_joint: Floats
    measured_within_band_per_joint: Floats | None
    band_halfwidth_per_joint: Floats


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

    def to_dict(self) -> dict[str, Any]:
        """report.json's ``data_efficiency``: the curves under their method names."""
        out: dict[str, Any] = {"fractions": self.fractions, "train_samples": self.train_samples,
                               "train_blocks": self.train_blocks}
        out.update({m: dataclasses.asdict(c) for m, c in self.curves.items()})
        out["usable_samples_note"] = self.usable_samples_note
        return out

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> DataEfficiency:
        """Inverse of :meth:`to_dict`."""
        known = ("fractions", "train_samples", "train_blocks", "usable_samples_note")
        curves = {m: EfficiencyCurve(**v) for m, v in d.items() if m not in known}
        return cls(d.get("fractions", []), d.get("train_samples", []), d.get("train_blocks", []), curves,
                   d.get("usable_samples_note", ""))


@dataclass
class CompareReport:
    """Everything ``compare`` measured; :meth:`to_dict` is report.json.

    Attributes:
        joint_names: (J,).  units: of the numbers.  data: training-data record (sources, samples, split, loader
        report).  dead_zone: the fitted dead zone (``alpha``, ``sigma``, ``threshold``) and the moving fractions.
        config: the training configuration.  methods: per method.  skipped_methods: method -> reason.
        noise_floor: simulator data only.  data_efficiency: the curve.  seconds: wall time of the comparison [s].
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

    def to_dict(self) -> dict[str, Any]:
        """The JSON-ready report (NaN -> None), with the stable keys of report.json."""
        out: dict[str, Any] = {
            "report_version": self.report_version, "joint_names": self.joint_names, "units": self.units,
            "data": self.data, "dead_zone": self.dead_zone, "config": self.config,
            "methods": {m: dataclasses.asdict(r) for m, r in self.methods.items()},
            "skipped_methods": self.skipped_methods,
        }
        if self.noise_floor is not None:
            out["noise_floor"] = dataclasses.asdict(self.noise_floor)
        out["data_efficiency"] = self.data_efficiency.to_dict() if self.data_efficiency is not None else {}
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
                   float(d.get("seconds", 0.0)), int(d.get("report_version", REPORT_VERSION)))

    def best_learned(self) -> str | None:
        """The learned method (masked, conventional, mse_all, hybrid) with the lowest mean RMSE, or None."""
        learned = {m: e.rmse_mean for m, e in self.methods.items()
                   if m in ("masked", "conventional", "mse_all", "hybrid") and e.rmse_mean is not None}
        return min(learned, key=lambda m: learned[m]) if learned else None


@dataclass
class ClosedLoopResult:
    """Tracking and effort figures of one live closed-loop run on a held-out reference.

    Attributes:
        mode, model: the controller mode and model.  artifact: the learned model's directory or None.  bag: the
        recording.  joint_names: (J,).  tracking_rmse_per_joint (J,) [rad], tracking_rmse_mean [rad],
        max_abs_error_per_joint (J,) [rad]: reference minus measured position.  effort_rms_per_joint (J,) [N·m]:
        applied torque.  samples: /joint_states samples inside the reference's span.  seconds: that span [s].
    """

    mode: str
    model: str
    artifact: str | None
    bag: str
    joint_names: list[str]
    tracking_rmse_per_joint: list[float]
    tracking_rmse_mean: float
    max_abs_error_per_joint: list[float]
    effort_rms_per_joint: list[float]
    samples: int
    seconds: float


@dataclass
class DemoReport:
    """What ``deadzone-id demo`` measured; :meth:`to_dict` is its report.json.

    Attributes:
        config: the demo's sizes (DemoConfig as a dict).  simulated_bags, live_bag: the recordings.  compare_dir:
        the comparison's folder.  compare: its report.  best_learned: the learned method exported to ONNX.
        closed_loop: label -> result of each closed-loop run.  seconds: wall time of the demo [s].
    """

    config: dict[str, Any]
    simulated_bags: list[str]
    live_bag: str
    compare_dir: str
    compare: CompareReport
    best_learned: str
    closed_loop: dict[str, ClosedLoopResult] = field(default_factory=dict)
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        """report.json: ``config``, ``data``, ``compare`` (dir, best_learned, methods, noise_floor,
        data_efficiency), ``closed_loop`` and ``seconds``."""
        cmp = self.compare.to_dict()
        return json_clean({
            "config": self.config,
            "data": {"simulated_bags": self.simulated_bags, "live_bag": self.live_bag},
            "compare": {"dir": self.compare_dir, "best_learned": self.best_learned, "methods": cmp["methods"],
                        "noise_floor": cmp.get("noise_floor"), "data_efficiency": cmp.get("data_efficiency")},
            "closed_loop": {k: dataclasses.asdict(v) for k, v in self.closed_loop.items()},
            "seconds": self.seconds,
        })
