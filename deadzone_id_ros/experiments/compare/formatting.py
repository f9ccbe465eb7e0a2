"""The number formatting every report shares (the comparison's, the closed loop's, the demo's): values with their
seed spread, per-joint lists, missing values."""

from __future__ import annotations

import math
from collections.abc import Sequence

from ...training.blocks import MISSING

__all__ = ["as_float", "data_origin", "fmt", "fmt_joints", "mean_std", "num"]


def fmt(v: object, std: object = None, digits: int = 4) -> str:
    """``v`` with ``digits`` decimals, then ``± std`` when ``std`` is a finite number; the missing-value mark for
    None or a non-finite float."""
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return MISSING
    s = f"{v:.{digits}f}"
    if std is not None and isinstance(std, (int, float)) and math.isfinite(std):
        s += f" ± {std:.{digits}f}"
    return s


def fmt_joints(values: Sequence[float | None], scale: float = 1.0, digits: int = 3) -> str:
    """Per-joint values joined by " / " (None: n/a), each times ``scale``."""
    return " / ".join("n/a" if v is None else f"{v * scale:.{digits}f}" for v in values)


def num(v: float | None, spec: str) -> str:
    """``v`` formatted with ``spec``, or "n/a" for None."""
    return "n/a" if v is None else format(v, spec)


def mean_std(mean: float | None, std: float | None, n_seeds: int, spec: str) -> str:
    """``mean ± std`` over ``n_seeds`` seeds, each formatted with ``spec``; ``mean (1 seed)`` for one seed, where a
    spread of 0 would only say that nothing was repeated."""
    if n_seeds <= 1:
        return f"{num(mean, spec)} (1 seed)"
    return f"{num(mean, spec)} ± {num(std, spec)}"


def data_origin(simulator: bool | None) -> str:
    """What the report calls its data, from the comparison's simulator flag (True: this project's simulator)."""
    if simulator:
        return "simulated arm (this project's simulator)"
    return "recorded data, not marked as simulator data (no noise floor, friction band unknown)"


def as_float(value: float | None) -> float:
    """A figure that may be missing (None: no moving test pair) as a float, NaN when missing."""
    return float("nan") if value is None else float(value)
