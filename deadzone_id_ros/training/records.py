"""Typed records of a training run (core, no ROS): the training-data record written to model.json and report.json
(:class:`DataRecord`), and the test metrics of one fitted method and seed (:class:`RunMetrics`). A dict appears only
in their ``to_dict``, where JSON is written.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..jsonrecord import JsonRecord, record_from_dict, sub_key
from .blocks import BlockChoice
from .evaluate import TorqueMetrics
from .fit_summary import FitSummary
from .sources import BagSource

__all__ = ["DataRecord", "FitSummary", "RunMetrics", "SampleCounts", "SplitRecord"]


@dataclass(frozen=True)
class SampleCounts(JsonRecord):
    """Samples per split after the block guards."""

    train: int = 0
    val: int = 0
    test: int = 0


@dataclass(frozen=True)
class SplitRecord:
    """How the samples were split.

    Attributes:
        fractions: train/val/test shares of the blocks.  block_seconds: the configured block length [s] (None:
        chosen from the data; ``blocks`` says what was used).  split_seed: the block shuffle's seed.
        guard_samples: samples dropped at each block edge.  blocks: how the block length was set and the joints
        without moving pairs (None: not recorded).
    """

    fractions: tuple[float, ...] = ()
    block_seconds: float | None = None
    split_seed: int = 0
    guard_samples: int = 0
    blocks: BlockChoice | None = None

    @property
    def missing(self) -> dict[str, str]:
        """{joint: why its test figure is missing} (empty without a block record)."""
        return dict(self.blocks.missing) if self.blocks is not None else {}

    @property
    def note(self) -> str:
        """The sentence that says how the block length was set ("set in the configuration" without a record)."""
        return self.blocks.note if self.blocks is not None else "set in the configuration"

    @property
    def block_seconds_used(self) -> float | None:
        """The block length the split used [s] (the record's, else the configured one)."""
        return self.blocks.block_seconds if self.blocks is not None else self.block_seconds

    def to_dict(self) -> dict[str, Any]:
        """report.json / model.json ``training_data.split`` (the block record's keys merged in)."""
        return {"fractions": list(self.fractions), "block_seconds": self.block_seconds, "split_seed": self.split_seed,
                "guard_samples": self.guard_samples, **(self.blocks.to_dict() if self.blocks else {})}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], key: str = "") -> SplitRecord:
        """The inverse of :meth:`to_dict`. With a block record, ``block_seconds`` is the length used; the configured
        one was that length when the record's source is ``"config"`` (0 for whole episodes, written as null) and
        None when the length was chosen from the data.

        Raises:
            DataError: a missing, unknown or malformed key (named).
        """
        own = ("fractions", "block_seconds", "split_seed", "guard_samples")
        if "block_seconds_source" not in d:
            return record_from_dict(cls, d, key)
        blocks = BlockChoice.from_dict({k: v for k, v in d.items() if k not in own or k == "block_seconds"}, key)
        configured = (blocks.block_seconds or 0.0) if blocks.source == "config" else None
        return record_from_dict(cls, {k: d[k] for k in own if k in d}, key, block_seconds=configured, blocks=blocks)


@dataclass(frozen=True)
class DataRecord(JsonRecord):
    """The training-data record of report.json (``data``) and model.json (``training_data``).

    Attributes:
        sources: one entry per bag (path, sha256, size).  simulator: the data came from the simulated arm (None:
        not determined).  samples: per split.  split: how.  loader_report: the loader's counts and warnings
        (``samples``, ``episodes``, ``messages``, ``messages_dropped``, ``warnings``, ``velocity_source``).
        effort_units: {joint: unit of its torque label}.  torque_constants: {joint: k [N·m per recorded unit]}.
        joint_kinds: {joint: "revolute" | "continuous" | "prismatic"} from the URDF ({} without one): a prismatic
        joint's q, dq, ddq and effort are in m, m/s, m/s², N.
    """

    sources: list[BagSource] = field(default_factory=list)
    simulator: bool | None = None
    samples: SampleCounts = SampleCounts()
    split: SplitRecord = SplitRecord()
    loader_report: dict[str, Any] = field(default_factory=dict)
    effort_units: dict[str, str] = field(default_factory=dict)
    torque_constants: dict[str, float] = field(default_factory=dict)
    joint_kinds: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The JSON record, keys as the fields."""
        return {"sources": [s.to_dict() for s in self.sources], "simulator": self.simulator,
                "samples": dataclasses.asdict(self.samples), "split": self.split.to_dict(),
                "loader_report": self.loader_report, "effort_units": dict(self.effort_units),
                "torque_constants": dict(self.torque_constants), "joint_kinds": dict(self.joint_kinds)}


@dataclass(frozen=True)
class RunMetrics:
    """The evaluation of one fitted method and seed.

    Attributes:
        test: torque errors on the test split.  seed: the training seed.  usable_fraction: share of the training data
        the method learns from.  train: the fit's record (:class:`FitSummary`).  missing: {joint: why its test
        figure is missing}.  validation: the same errors on the validation split (compare; None in ``train``).
    """

    test: TorqueMetrics
    seed: int
    usable_fraction: float
    train: FitSummary
    missing: dict[str, str]
    validation: TorqueMetrics | None = None

    def to_dict(self, *, with_train: bool = True) -> dict[str, Any]:
        """The JSON form (report.json ``per_seed``; model.json ``metrics`` without ``train``): the test metrics'
        keys, ``seed``, ``usable_fraction``, ``train``, ``missing`` and, when evaluated, ``validation_rmse_mean`` /
        ``validation_rmse_per_joint`` and the validation metrics' other keys with the same ``validation_`` prefix (so
        that :meth:`from_dict` reads them back whole)."""
        out: dict[str, Any] = {**self.test.to_dict(), "seed": self.seed, "usable_fraction": self.usable_fraction}
        if with_train:
            out["train"] = self.train.to_dict()
        out["missing"] = dict(self.missing)
        if self.validation is not None:
            out["validation_rmse_mean"] = self.validation.rmse_mean
            out["validation_rmse_per_joint"] = list(self.validation.rmse_per_joint)
            out.update({f"{_VALIDATION}{k}": v for k, v in self.validation.to_dict().items()
                        if f"{_VALIDATION}{k}" not in out})
        return out

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], key: str = "") -> RunMetrics:
        """The inverse of :meth:`to_dict` with ``train``: the test metrics from their flat keys, the validation
        metrics from the ``validation_`` ones (None without), ``train`` as written.

        Raises:
            DataError: a missing, unknown or malformed key (named).
        """
        own = ("seed", "usable_fraction", "train", "missing")
        val = {k[len(_VALIDATION):]: v for k, v in d.items() if k.startswith(_VALIDATION)}
        test = TorqueMetrics.from_dict({k: v for k, v in d.items()
                                        if k not in own and not k.startswith(_VALIDATION)}, key)
        validation = TorqueMetrics.from_dict(val, sub_key(key, "validation_*")) if val else None
        return record_from_dict(cls, {k: d[k] for k in own if k in d}, key, test=test, validation=validation,
                                train=FitSummary.from_dict(d.get("train", {"method": "", "seed": d.get("seed", 0)}),
                                                           sub_key(key, "train")))


_VALIDATION = "validation_"
