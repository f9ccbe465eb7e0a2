"""Sub-records of :class:`deadzone_id_ros.experiments.compare.results.CompareReport` about the data rather than
one method: the stuck-torque diagnosis, the simulator's noise floor, the measured torque's noise and the
data-efficiency curves (report.json's ``data_diagnosis``, ``noise_floor``, ``measurement_noise`` and
``data_efficiency``). Import them from :mod:`.results` as before; they live
here to keep that module short."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ...jsonrecord import JsonRecord, as_object, record_from_dict, sub_key

__all__ = ["DataDiagnosis", "DataEfficiency", "EfficiencyCurve", "Floats", "MeasurementNoise", "NoiseFloor"]

#: A per-joint (or per-point) list of numbers, None where one could not be measured.
Floats = list[float | None]


@dataclass
class DataDiagnosis(JsonRecord):
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
class NoiseFloor(JsonRecord):
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
class MeasurementNoise(JsonRecord):
    """The measured torque's white noise on the test pairs, estimated from its second differences
    (:func:`deadzone_id_ros.training.evaluate.torque_noise`; any data, recorded or simulated): about the least RMSE a
    model of the state can reach on these pairs.

    Attributes:
        description: how it was estimated.  rmse_per_joint (J,) [N·m], rmse_mean [N·m]; nrmse_per_joint (J,),
        nrmse_mean [1] (over the std of the measured torque, as the methods' nRMSE); pairs_per_joint (J,): the
        second differences counted.
    """

    description: str
    rmse_per_joint: Floats
    rmse_mean: float | None
    nrmse_per_joint: Floats
    nrmse_mean: float | None
    pairs_per_joint: list[int]


@dataclass
class EfficiencyCurve(JsonRecord):
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
    def from_dict(cls, d: Mapping[str, Any], key: str = "") -> DataEfficiency:
        """The inverse of :meth:`to_dict`: every key that is not a field is a method's curve.

        Raises:
            DataError: a missing, unknown or malformed key (named).
        """
        own = ("fractions", "train_samples", "train_blocks", "merged", "usable_samples_note")
        curves = {m: EfficiencyCurve.from_dict(v, sub_key(key, m))
                  for m, v in as_object(d, key, cls.__name__).items() if m not in own}
        return record_from_dict(cls, {k: d[k] for k in own if k in d}, key, curves=curves)
