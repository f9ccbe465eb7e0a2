"""Typed results of the comparison; report.json is written from these (:meth:`CompareReport.to_dict`).

Numbers that could not be measured (a joint that never moves in the test split, a failed fit) are None, as in
report.json. The JSON keys are stable (``methods.<name>.rmse_per_joint``, ``.rmse_mean``, ``.nrmse_mean``,
``.validation_rmse_mean``, ``.usable_fraction``, ``noise_floor.rmse_per_joint``, ``measurement_noise.nrmse_mean``,
``data_efficiency``, ``pick``, ``data_diagnosis``): consumers read them by name.

Artifacts of a comparison folder (paths relative to report.json, stable; the demo's closed loop reads them):

- ``models/<method>/``: the seed-0 model of each method (model.json + weights, no ONNX);
- ``pick/``: the model to deploy (:data:`PICK_DIR`; ``pick.artifact``; load with ``models.load_artifact``), with its
  network as ONNX (``pick.onnx``): ``pick/model.onnx`` (the full model) or, for hybrid, ``pick/residual.onnx`` (the
  MLP residual; add the rigid-body torque); None for rbd (no network).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ...data.deadzone import DeadZone
from ...errors import DataError
from ...jsonrecord import JsonRecord, as_object, read_record, record_from_dict, sub_key, take
from ...models.methods import CONVENTIONAL, METHODS, NAIVE, PROPOSED, RIGID_BODY, method_with_role
from ...training.config import TrainConfig
from ...training.evaluate import json_clean
from ...training.records import DataRecord, RunMetrics
from .data_records import DataDiagnosis, DataEfficiency, EfficiencyCurve, Floats, MeasurementNoise, NoiseFloor

__all__ = ["PICK_DIR", "REPORT_VERSION", "CompareReport", "CrossValidation", "DataDiagnosis", "DataEfficiency",
           "DeadZoneSummary", "EfficiencyCurve", "MeasurementNoise", "MethodDeadZone", "MethodResult", "NoiseFloor",
           "Pick", "best_learned"]

#: The methods the comparisons name, by registry role (masked, conventional, mse_all, rbd; "" if none holds it).
PROP, CONV, NAIVE_M, RIGID = (method_with_role(r) for r in (PROPOSED, CONVENTIONAL, NAIVE, RIGID_BODY))

REPORT_VERSION = 1
#: Folder of the picked model's artifact inside a comparison folder.
PICK_DIR = "pick"


@dataclass(frozen=True)
class MethodDeadZone(JsonRecord):
    """One method's errors on stuck test pairs, over its seeds.

    Attributes:
        rmse_vs_measured_per_joint, rmse_vs_measured_per_joint_std: (J,) [N·m] mean and std over seeds of the RMSE
        against the measured torque.  pred_within_band_per_joint: (J,) mean fraction of predictions inside the
        friction band (None: no band known).
    """

    rmse_vs_measured_per_joint: Floats = field(default_factory=list)
    rmse_vs_measured_per_joint_std: Floats = field(default_factory=list)
    pred_within_band_per_joint: Floats | None = None

    def to_dict(self) -> dict[str, Any]:
        """report.json's ``methods.<name>.dead_zone`` (no band key without a band)."""
        return {k: v for k, v in dataclasses.asdict(self).items() if v is not None}


@dataclass(frozen=True)
class DeadZoneSummary:
    """The dead zone fitted on the training split and how much of the data moves.

    Attributes:
        dead_zone: the fitted thresholds.  moving_fraction_train_per_joint, moving_fraction_test_per_joint: (J,) share
        of samples where each joint moves.  all_moving_fraction_train: share of training samples with every joint
        moving (what the conventional method keeps).  pairs_moving_fraction_train: share of (sample, joint) pairs
        with r = 1 (what the masked loss uses).
    """

    dead_zone: DeadZone
    moving_fraction_train_per_joint: list[float] = field(default_factory=list)
    all_moving_fraction_train: float = 0.0
    pairs_moving_fraction_train: float = 0.0
    moving_fraction_test_per_joint: list[float] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """report.json's ``dead_zone``: the dead zone's keys (``alpha``, ``sigma``, ``threshold``, ...) and the
        fractions."""
        return {**self.dead_zone.to_dict(), "moving_fraction_train_per_joint": self.moving_fraction_train_per_joint,
                "all_moving_fraction_train": self.all_moving_fraction_train,
                "pairs_moving_fraction_train": self.pairs_moving_fraction_train,
                "moving_fraction_test_per_joint": self.moving_fraction_test_per_joint}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], key: str = "") -> DeadZoneSummary:
        """The inverse of :meth:`to_dict`: the dead zone from its keys, the fractions from theirs.

        Raises:
            DataError: a missing, unknown or malformed key (named).
        """
        as_object(d, key, cls.__name__)
        dead_zone = DeadZone(tuple(take(d, "joint_names", list[str], key)), take(d, "alpha", float | None, key),
                             np.asarray(take(d, "sigma", list[float], key), dtype=float),
                             np.asarray(take(d, "threshold", list[float], key), dtype=float))
        return record_from_dict(cls, {k: v for k, v in d.items() if k not in _DEAD_ZONE_KEYS}, key,
                                dead_zone=dead_zone)


#: The keys of :meth:`DeadZone.to_dict` inside report.json's ``dead_zone``.
_DEAD_ZONE_KEYS = ("joint_names", "alpha", "sigma", "threshold")


@dataclass
class MethodResult(JsonRecord):
    """One method over its training seeds; torque errors [N·m] on test pairs where the joint moves.

    Attributes:
        rmse_per_joint, rmse_per_joint_std: (J,) mean and std over seeds.  rmse_mean, rmse_mean_std: of the
        per-seed mean over joints.  nrmse_*: the same for RMSE / std of the measured torque.  usable_fraction: share
        of the training data the method learns from.  seeds: the training seeds.  dead_zone: errors on stuck pairs
        (:class:`MethodDeadZone`).  per_seed: the metrics of each seed
        (:class:`~deadzone_id_ros.training.records.RunMetrics`).  artifact: the
        seed-0 model directory, relative to the report.  validation_rmse_mean [N·m], validation_rmse_per_joint (J,)
        [N·m], validation_nrmse_mean: the same errors on the validation split (moving pairs), mean over seeds; what
        the pick uses.  validation_rmse_per_seed: per seed.  steps_per_seed: the gradient steps each seed's
        network took before its validation loss stopped improving (or the maximum); empty for rbd (no network).
        n_bodies, inconsistent_bodies: the seed-0 model's rigid-body bodies and those whose identified inertial
        parameters are not physically consistent (:meth:`~deadzone_id_ros.models.RigidBodyModel.inconsistent_bodies`);
        urdf_refusal: "" when ``deadzone-id export --urdf`` writes that rigid body as a URDF, else why it refuses
        (:func:`~deadzone_id_ros.models.urdf_export.identified_urdf`); all None for a method without a rigid body.
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
    dead_zone: MethodDeadZone
    per_seed: list[RunMetrics]
    artifact: str
    validation_rmse_mean: float | None = None
    validation_rmse_per_joint: Floats = field(default_factory=list)
    validation_nrmse_mean: float | None = None
    validation_rmse_per_seed: Floats = field(default_factory=list)
    steps_per_seed: list[int] = field(default_factory=list)
    n_bodies: int | None = None
    inconsistent_bodies: list[str] | None = None
    urdf_refusal: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """report.json's ``methods.<name>``: the fields under their names, ``dead_zone`` and ``per_seed`` as JSON."""
        out = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        out.update(dead_zone=self.dead_zone.to_dict(), per_seed=[r.to_dict() for r in self.per_seed])
        return out


@dataclass
class CrossValidation(JsonRecord):
    """The cross-validation the pick was made by when the validation split had too few blocks
    (:mod:`.compare.pick_cv`).

    Attributes:
        reason: why it was used.  folds: number of folds.  seeds: the training seeds of every fold.
        held_out_blocks: per fold, the names of its held-out (contiguous) train+validation blocks.
        held_out_samples: per fold, their samples.  rmse_mean, rmse_std [N·m]: per method, mean and std (ddof 1)
        of the held-out RMSE on moving pairs over folds x seeds (None: the method could not be fitted on a fold).
        rmse_per_fold [N·m]: per method, fold x seed.
    """

    reason: str
    folds: int
    seeds: list[int]
    held_out_blocks: list[list[str]]
    held_out_samples: list[int]
    rmse_mean: dict[str, float | None]
    rmse_std: dict[str, float | None]
    rmse_per_fold: dict[str, list[Floats]]


@dataclass
class Pick(JsonRecord):
    """The model to deploy, chosen by validation error (never test).

    Attributes:
        method: the method with the lowest ``validation_rmse_mean`` (mean over seeds), or with the lowest
        cross-validation RMSE when ``cv`` is set.  reason: why, in words, with the numbers.  validation_rmse_mean
        [N·m]: that method's on the validation split.  seed: the seed exported (its lowest validation RMSE).
        test_rmse_mean [N·m] / test_nrmse_mean: the exported model's test error, reported after the choice.
        artifact: its folder relative to report.json (:data:`PICK_DIR`).  onnx: ``pick/model.onnx``,
        ``pick/residual.onnx`` (hybrid) or None (rbd); see the module docstring.  selection: ``"validation"`` or
        ``"cross-validation"``.  runner_up: the second-best method (None: only one).  margin [N·m]: runner-up's
        error minus the pick's.  spread [N·m]: std of that difference over seeds (and folds), paired by seed and
        fold (None: one value only).  tie: margin within the spread (None: no spread to judge by).  confidence: the
        sentence saying how sure the pick is.  cv: the cross-validation, when used.
    """

    method: str
    reason: str
    validation_rmse_mean: float | None
    seed: int = 0
    test_rmse_mean: float | None = None
    test_nrmse_mean: float | None = None
    artifact: str = PICK_DIR
    onnx: str | None = None
    selection: str = "validation"
    runner_up: str | None = None
    margin: float | None = None
    spread: float | None = None
    tie: bool | None = None
    confidence: str = ""
    cv: CrossValidation | None = None


@dataclass
class CompareReport:
    """Everything ``compare`` measured; :meth:`to_dict` is report.json.

    Attributes:
        joint_names: (J,).  units: of the numbers.  data: training-data record (sources, samples, split, loader
        report).  dead_zone: the fitted dead zone and the moving fractions.  config: the training configuration.
        methods: per method.  skipped_methods: method -> reason.
        noise_floor: simulator data only.  data_efficiency: the curve.  seconds: wall time of the comparison [s].
        pick: the model to deploy (by validation error).  data_diagnosis: whether stuck torques are predictable.
        split_warnings: warnings on the split's shares (a training split smaller than validation or test).
        measurement_noise: the measured torque's white noise on the test pairs (any data).
    """

    joint_names: list[str]
    units: dict[str, str]
    data: DataRecord
    dead_zone: DeadZoneSummary
    config: TrainConfig
    methods: dict[str, MethodResult] = field(default_factory=dict)
    skipped_methods: dict[str, str] = field(default_factory=dict)
    noise_floor: NoiseFloor | None = None
    data_efficiency: DataEfficiency | None = None
    seconds: float = 0.0
    report_version: int = REPORT_VERSION
    pick: Pick | None = None
    data_diagnosis: DataDiagnosis | None = None
    split_warnings: list[str] = field(default_factory=list)
    measurement_noise: MeasurementNoise | None = None

    @property
    def torque_unit(self) -> str:
        """The unit of every torque figure as printed: "N·m", or the recorded effort's ("mA", "unknown", "mixed
        units") when it was trained as recorded (:mod:`deadzone_id_ros.data.effort_units`)."""
        from ...data.effort_units import unit_label

        return unit_label(self.data.effort_units or {"": self.units.get("rmse", "N*m")})

    def to_dict(self) -> dict[str, Any]:
        """The JSON-ready report (NaN -> None), with the stable keys of report.json."""
        out: dict[str, Any] = {
            "report_version": self.report_version, "joint_names": self.joint_names, "units": self.units,
            "data": self.data.to_dict(), "dead_zone": self.dead_zone.to_dict(),
            "config": dataclasses.asdict(self.config),
            "methods": {m: r.to_dict() for m, r in self.methods.items()},
            "skipped_methods": self.skipped_methods,
        }
        if self.noise_floor is not None:
            out["noise_floor"] = dataclasses.asdict(dataclasses.replace(self.noise_floor,
                                                                        rbd_ratio=self.floor_ratio(RIGID)))
        out["data_efficiency"] = self.data_efficiency.to_dict() if self.data_efficiency is not None else {}
        out["pick"] = dataclasses.asdict(self.pick) if self.pick is not None else None
        out["data_diagnosis"] = dataclasses.asdict(self.data_diagnosis) if self.data_diagnosis is not None else None
        out["split_warnings"] = self.split_warnings
        out["measurement_noise"] = (dataclasses.asdict(self.measurement_noise)
                                    if self.measurement_noise is not None else None)
        out["seconds"] = self.seconds
        return json_clean(out)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], key: str = "") -> CompareReport:
        """The inverse of :meth:`to_dict` (report.json): ``data_efficiency`` {} is None; ``noise_floor.rbd_ratio``
        is read as written (:meth:`to_dict` computes it again).

        Raises:
            DataError: a missing, unknown or malformed key (named), or another ``report_version``.
        """
        version = take(as_object(d, key, cls.__name__), "report_version", int, key)
        if version != REPORT_VERSION:
            raise DataError(f"key {sub_key(key, 'report_version')!r}: {version} is not {REPORT_VERSION}, the "
                            "version this package reads")
        eff = d.get("data_efficiency")
        return record_from_dict(cls, {k: v for k, v in d.items() if k != "data_efficiency"}, key,
                                data_efficiency=DataEfficiency.from_dict(eff, sub_key(key, "data_efficiency"))
                                if eff else None)

    @classmethod
    def read(cls, path: str | Path) -> CompareReport:
        """A comparison's report.json (``deadzone-id compare``) read back.

        Raises:
            FileNotFoundError: no such file.  DataError: not JSON or not a comparison's report (names the file and
                the key).
        """
        return read_record(path, cls.from_dict)

    def best_learned(self) -> str | None:
        """The learned method (``METHODS[m].learned``) with the lowest mean test RMSE, or None (for display; the
        model to deploy is :attr:`pick`, chosen by validation error)."""
        return best_learned({m: e.rmse_mean for m, e in self.methods.items()})

    def floor_ratio(self, method: str) -> float | None:
        """``method``'s mean test RMSE over the noise floor's [1], or None when either is missing (or the floor is
        zero)."""
        entry, floor = self.methods.get(method), self.noise_floor
        if entry is None or entry.rmse_mean is None or floor is None or not floor.rmse_mean:
            return None
        return entry.rmse_mean / floor.rmse_mean


def best_learned(test_rmse: Mapping[str, float | None], onnx: bool = False) -> str | None:
    """The learned method (``METHODS[m].learned`` in the method registry) with the lowest mean test RMSE [N·m] among
    ``test_rmse`` (method -> its mean test RMSE, None when missing), or None when there is none (ties: the first
    listed). ``onnx``: only methods whose network exports to the ONNX format (neither a per-joint residual, whose
    network reads the rigid-body torque besides q, dq, ddq, nor a history method, whose network reads the earlier
    joint states: :mod:`deadzone_id_ros.models.onnx_format`)."""
    learned = {m: v for m, v in test_rmse.items()
               if m in METHODS and METHODS[m].learned and v is not None
               and not (onnx and (METHODS[m].per_joint or METHODS[m].history))}
    return min(learned, key=lambda m: learned[m]) if learned else None
