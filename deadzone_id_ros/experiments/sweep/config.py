"""The sweep file (``deadzone-id sweep SWEEP.yaml``): data sets x alpha x data fractions, each cell one comparison.

Example (paths relative to the YAML file; unknown keys are refused)::

    data:                       # one entry per robot / bag set
      - name: arm_a
        bags: [runs/arm_a_1, runs/arm_a_2]
      - name: sim
        simulate: {seconds: 30, seed: 1}   # the simulated arm, recorded once into OUT/data/sim
    alpha: [0.05, 0.1, 0.3]     # dead-zone thresholds (units of each joint's velocity std)
    fractions: [0.5, 1.0]       # share of each episode kept (its first part, in time)
    seeds: 2                    # training seeds per method, trained batched inside each cell
    methods: [masked, conventional, rbd]
    config: training.yaml       # optional ROS 2 parameter file of TrainConfig (default: the package's)
    train: {max_steps: 600}     # optional overrides of its keys

A data fraction keeps the first ``fraction`` of every episode, so the cell's split (train, validation and test) is
taken from that shorter recording: the question it answers is "how much recording does each method need", with each
cell tested on its own held-out blocks.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from ...config import check_positive, dataclass_from_dict
from ...errors import ConfigError

__all__ = ["DataSpec", "SweepConfig", "cell_key", "load_sweep"]


@dataclass(frozen=True)
class DataSpec:
    """One data set of the sweep: recorded bags, or a simulated recording made once (``simulate``).

    Attributes:
        name: label in the cell keys and the table (letters, digits, ``_-.``).
        bags: bag paths (absolute after :func:`load_sweep`).
        simulate: ``{seconds: S, seed: N, robot: NAME|FILE}`` of the simulated arm instead of bags (``robot``:
            a robot profile, ``deadzone-id robot show``; default the bundled arm).
    """

    name: str
    bags: tuple[str, ...] = ()
    simulate: dict[str, Any] | None = None

    def __post_init__(self) -> None:
        if not self.name or not all(c.isalnum() or c in "_-." for c in self.name):
            raise ValueError(f"name = {self.name!r} must be letters, digits, '_', '-' or '.'")
        if bool(self.bags) == (self.simulate is not None):
            which = "both" if self.bags else "neither"
            raise ValueError(f"data set {self.name!r}: give either bags or simulate, not {which}")
        if self.simulate is not None:
            unknown = sorted(set(self.simulate) - {"seconds", "seed", "robot"})
            if unknown or not float(self.simulate.get("seconds", 0)) > 0:
                raise ValueError(f"data set {self.name!r}: simulate = {self.simulate!r} must be "
                                 "{seconds: S > 0, seed: N, robot: NAME|FILE (optional)}")


@dataclass(frozen=True)
class SweepConfig:
    """The grid and the training settings of a sweep (see the module docstring for the file).

    Attributes:
        data: the data sets.  alpha: dead-zone alphas (>= 0).  fractions: data fractions in (0, 1].
        seeds: training seeds per method in each cell.  methods: method names (empty: all).
        config: TrainConfig parameter file (None: the package's).  train: overrides of its keys.
    """

    data: tuple[DataSpec, ...]
    alpha: tuple[float, ...]
    fractions: tuple[float, ...] = (1.0,)
    seeds: int = 2
    methods: tuple[str, ...] = ()
    config: str | None = None
    train: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.data:
            raise ValueError("data = [] must name at least one data set")
        if len({d.name for d in self.data}) != len(self.data):
            raise ValueError(f"data: names {[d.name for d in self.data]} must be unique")
        if not self.alpha or any(not isinstance(a, (int, float)) or not math.isfinite(a) or a < 0
                                 for a in self.alpha):
            raise ValueError(f"alpha = {list(self.alpha)} must be a non-empty list of numbers >= 0")
        if not self.fractions or any(not isinstance(f, (int, float)) or not 0 < f <= 1 for f in self.fractions):
            raise ValueError(f"fractions = {list(self.fractions)} must be a non-empty list of numbers in (0, 1]")
        check_positive("seeds", self.seeds, integer=True)

    def cells(self) -> list[tuple[DataSpec, float, float]]:
        """Every (data set, alpha, fraction) of the grid, data sets outermost."""
        return [(d, float(a), float(f)) for d in self.data for a in self.alpha for f in self.fractions]


def cell_key(data: str, alpha: float, fraction: float) -> str:
    """The name of a cell and of its folder, e.g. ``arm_a-alpha0.1-frac0.5``."""
    return f"{data}-alpha{alpha:g}-frac{fraction:g}"


def load_sweep(path: str | Path) -> SweepConfig:
    """Read and validate a sweep file; relative paths are taken from the file's folder.

    Raises:
        FileNotFoundError: ``path`` does not exist.
        ConfigError: malformed YAML, an unknown key, or a bad value (names the file and the key).
    """
    path = Path(path)
    try:
        doc = yaml.safe_load(path.read_text())
    except yaml.YAMLError as err:
        raise ConfigError(f"{path}: not valid YAML: {err}") from err
    if not isinstance(doc, dict):
        raise ConfigError(f"{path}: expected a mapping with data, alpha, fractions, ..., got {type(doc).__name__}")
    base = path.resolve().parent
    if not isinstance(doc.get("data"), list):
        raise ConfigError(f"{path}: data must be a list of {{name, bags | simulate}}, got {doc.get('data')!r:.80}")
    specs = []
    for i, entry in enumerate(doc["data"]):
        if not isinstance(entry, dict):
            raise ConfigError(f"{path}: data[{i}] must be a mapping, got {entry!r:.80}")
        entry = dict(entry, bags=[str(base / b) for b in entry.get("bags") or []])
        specs.append(dataclass_from_dict(DataSpec, entry, f"{path}: data[{i}]"))
    doc = dict(doc, data=specs)
    if isinstance(doc.get("alpha"), (int, float)):
        doc["alpha"] = [doc["alpha"]]
    if doc.get("config") is not None:
        doc["config"] = str(base / doc["config"])
    if not isinstance(doc.get("train", {}), dict):
        raise ConfigError(f"{path}: train must be a mapping of training.yaml keys, got {doc['train']!r:.80}")
    return dataclass_from_dict(SweepConfig, doc, str(path))
