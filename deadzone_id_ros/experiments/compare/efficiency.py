"""The data-efficiency curve of ``compare``: methods trained on growing prefixes of the shuffled training blocks.

Each row of the curve is a distinct training set. A fraction f selects the first ceil(f * B) of the B training blocks
(at least one); when two requested fractions select the same number of blocks (few long blocks, e.g. 10 % and 30 % of
four blocks), they are one row, trained once, and :attr:`~.results.DataEfficiency.merged` names the fractions it
stands for, so the table says so instead of printing the same numbers twice. The row of the full training split
reuses the main runs.

The fits are only planned here (:func:`plan_efficiency`); ``compare`` trains them in the same call as the
main methods, then :func:`collect_efficiency` fills the curve.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, SupportsFloat

import numpy as np

from ...models.methods import get_method
from ...training.blocks import fmt_values
from ...training.config import TrainConfig
from ...training.fit import FitPlan, FitResult, Stacked, stack_episodes
from ...training.planner import RegressorFactory, SharedFits, plan_methods
from .results import DataEfficiency, EfficiencyCurve

if TYPE_CHECKING:
    from ...models.rbd import RigidBodyRegressor
    from ...training.pipeline import PreparedData

__all__ = ["EfficiencyRow", "collect_efficiency", "efficiency_rows", "plan_efficiency"]


@dataclass
class EfficiencyRow:
    """One distinct training size of the curve.

    Attributes:
        fractions: the requested fractions that select these blocks (more than one: merged rows).  blocks: number of
        training blocks.  full: the whole training split (reuses the main runs).  data: the stacked subset (None for
        the full split).  plans: method -> the seed plans, or the reason it could not train.
    """

    fractions: list[float]
    blocks: int
    full: bool
    data: Stacked | None = None
    plans: dict[str, list[FitPlan] | str] = field(default_factory=dict)


def _finite(v: SupportsFloat) -> float | None:
    """``v``, or None where it could not be measured (NaN)."""
    f = float(v)
    return f if math.isfinite(f) else None


def efficiency_rows(fractions: list[float] | tuple[float, ...], n_blocks: int) -> list[tuple[list[float], int]]:
    """Group the requested ``fractions`` by the number of training blocks they select, ascending.

    Args:
        fractions: in (0, 1].  n_blocks: training blocks available (>= 1).

    Returns:
        [(fractions of the row, blocks)], one entry per distinct block count.

    Raises:
        ValueError: ``n_blocks`` < 1.
    """
    if n_blocks < 1:
        raise ValueError(f"n_blocks = {n_blocks} must be >= 1")
    rows: dict[int, list[float]] = {}
    for f in sorted(set(float(f) for f in fractions)):
        rows.setdefault(min(n_blocks, max(1, int(math.ceil(f * n_blocks)))), []).append(f)
    return [(fs, k) for k, fs in sorted(rows.items())]


def plan_efficiency(data: PreparedData, config: TrainConfig, methods: Sequence[str],
                    regressor: RigidBodyRegressor | RegressorFactory | None = None) -> list[EfficiencyRow]:
    """Plan the fits of every row below the full split (``data``: the compare's PreparedData) with the one planner
    (:func:`~deadzone_id_ros.training.planner.plan_methods`; a rigid body, when a method needs one, is identified on
    the row's own blocks with ``regressor``)."""
    train_eps = data.split.train
    order = np.random.default_rng(config.split_seed + 1).permutation(len(train_eps))
    rows = []
    for fracs, k in efficiency_rows(config.efficiency_fractions, len(train_eps)):
        row = EfficiencyRow(fracs, k, full=k == len(train_eps))
        if not row.full:
            row.data = stack_episodes([train_eps[i] for i in order[:k]], data.dead_zone)
            plans, failed = plan_methods(methods, config.seed_list,
                                         SharedFits(row.data, data.val, data.dead_zone, regressor),
                                         label=f"{fracs[0]:.0%}")
            row.plans = {m: plans[m] if m in plans else failed[m] for m in methods}
        rows.append(row)
    return rows


def collect_efficiency(rows: list[EfficiencyRow], fits: dict[int, FitResult], main_rmse: dict[str, list[float]],
                       train: Stacked, test_rmse: Callable[[FitResult], float], methods: Sequence[str],
                       log: Callable[[str], None]) -> DataEfficiency:
    """The curve from the trained ``fits`` (keyed by ``id`` of their plan) and the main runs' test RMSE per seed."""
    out = DataEfficiency([r.fractions[0] for r in rows], curves={m: EfficiencyCurve() for m in methods})
    out.merged = [r.fractions if len(r.fractions) > 1 else [] for r in rows]
    for row in rows:
        sub = train if row.full else row.data
        assert sub is not None
        out.train_samples.append(len(sub))
        out.train_blocks.append(row.blocks)
        for m in methods:
            plans = row.plans.get(m, [])
            fail = plans if isinstance(plans, str) else ""
            vals = main_rmse[m] if row.full else ([] if fail else [test_rmse(fits[id(p)]) for p in plans])
            c = out.curves[m]
            c.rmse_mean.append(_finite(np.mean(vals)) if vals else None)
            c.rmse_mean_std.append(_finite(np.std(vals)) if vals else None)
            c.usable_samples.append(get_method(m).usable_count(sub.r))
            c.failed.append(fail)
            log(f"data efficiency {'/'.join(f'{f:.0%}' for f in row.fractions)} ({len(sub)} samples): {m} mean "
                f"RMSE {fmt_values([c.rmse_mean[-1]])}{' (' + fail + ')' if fail else ''}")
    counts = {True: "samples with all joints moving", False: "(sample, joint) pairs with r = 1"}
    out.usable_samples_note = "; ".join(f"{m}: {counts[get_method(m).drops_stuck_samples]}" for m in methods)
    return out
