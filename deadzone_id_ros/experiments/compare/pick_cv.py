"""Cross-validation over time blocks for the pick when the validation split is too small to choose by, and the
warning on a small training share.

On a short recording the split leaves one or two validation blocks: every method is then judged on the same few
seconds of motion, and the differences between methods are mostly which segment fell into validation (a public
Franka Panda recording: 0.72 N·m validation for every network against 2.4–3.4 on test; the pick between two methods
0.0001 N·m apart chose the one with the worse test error). With fewer than :data:`MIN_VAL_BLOCKS` validation blocks
:func:`cross_validate` pools the training and validation blocks (the test blocks stay untouched), orders them in
time, and holds out each of :data:`CV_FOLDS` contiguous groups in turn. The blocks keep the guards
:func:`~deadzone_id_ros.data.split.time_blocks` dropped at their edges, so no fold's training data shares recorded
samples with its held-out blocks. Per fold the dead zone, the rigid-body fit and the band are identified on the
fold's training blocks and every candidate method is refitted with the same seeds and the configured steps; all
networks of all folds train in one call (:func:`~deadzone_id_ros.training.fit.fit_plans`: each alone, over the worker
processes).

Why 3 blocks: with one or two held-out blocks there is no block-to-block spread to tell a real difference from the
luck of the segment; three is the least that gives one. (Standard K-fold for time series with blocks: Bergmeir &
Benítez, "On the use of cross-validation for time series predictor evaluation", Information Sciences 191, 2012.)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import numpy as np

from ...data.deadzone import DeadZone, DeadZoneConfig, fit_dead_zone
from ...data.split import Split, time_blocks
from ...data.types import Episode
from ...errors import DataError
from ...training.config import TrainConfig
from ...training.evaluate import evaluate_predictions
from ...training.fit import FitPlan, fit_plans, predict_stacked, stack_episodes
from ...training.planner import SharedFits, plan_methods
from .results import CrossValidation

if TYPE_CHECKING:
    from ...models.rbd import RigidBodyRegressor

#: The rigid-body regressor for a fold's dead zone (its friction smoothing follows the thresholds).
RegressorFor = Callable[[DeadZone], "RigidBodyRegressor"]

__all__ = ["CV_FOLDS", "MIN_VAL_BLOCKS", "RegressorFor", "cross_validate", "cv_folds", "needs_cv", "share_warnings"]

#: Fewer validation blocks than this and the pick is made by cross-validation (see the module docstring).
MIN_VAL_BLOCKS = 3
#: Folds of the cross-validation (fewer when train+validation has fewer blocks); each refits every method.
CV_FOLDS = 3


def needs_cv(split: Split) -> str | None:
    """Why the pick needs cross-validation (one sentence), or None when the validation split has
    :data:`MIN_VAL_BLOCKS` blocks or more."""
    n = len(split.val)
    if n >= MIN_VAL_BLOCKS:
        return None
    samples = sum(len(b) for b in split.val)
    return (f"the validation split is {n} block(s) ({samples} samples), fewer than {MIN_VAL_BLOCKS}: one segment "
            "of motion cannot tell the methods apart")


def _order(block: Episode) -> tuple[str, float]:
    """Time order of a block: its episode (the name before the first "/block" of :func:`time_blocks`), then its
    start time [s]."""
    return block.name.split("/block", 1)[0], float(block.t[0]) if len(block) else 0.0


def cv_folds(split: Split, folds: int = CV_FOLDS) -> list[tuple[list[Episode], list[Episode]]]:
    """[(training blocks, held-out blocks)] of each fold over the time-ordered train+validation blocks.

    The held-out groups are contiguous in time and cover every train+validation block once. When there are fewer
    blocks than ``folds``, each block is cut in two (:func:`time_blocks`, with its edge guards) while that is
    possible. The test blocks never appear.

    Raises:
        DataError: fewer than 2 blocks even after cutting (nothing to cross-validate).
    """
    pool = sorted([*split.train, *split.val], key=_order)
    while len(pool) < folds:
        try:
            cut = [p for b in pool for p in time_blocks(b, (b.t[-1] - b.t[0]) / 2 + b.dt)]
        except ValueError:
            break
        if len(cut) <= len(pool):
            break
        pool = cut
    k = min(folds, len(pool))
    if k < 2:
        raise DataError(f"cannot cross-validate: train+validation is {len(pool)} block(s)")
    groups = [set(g.tolist()) for g in np.array_split(np.arange(len(pool)), k)]
    return [([b for i, b in enumerate(pool) if i not in g], [b for i, b in enumerate(pool) if i in g]) for g in groups]


def _fold_plans(train_eps: list[Episode], val_eps: list[Episode], methods: Sequence[str], seeds: list[int],
                dz_config: DeadZoneConfig, regressor_for: RegressorFor | None) -> dict[str, list[FitPlan]]:
    """The seed plans of every method on one fold (dead zone, rigid body and band identified on its training part);
    a method that cannot be fitted on this fold is left out."""
    try:
        dz = fit_dead_zone(train_eps, dz_config)
    except ValueError as err:
        raise DataError(f"cross-validation fold dead zone: {err}") from err
    train, val = stack_episodes(train_eps, dz), stack_episodes(val_eps, dz)
    # the one planner; the rigid body (rbd, hybrid, band) and the band are identified once on the fold's training part
    regressor = (lambda: regressor_for(dz)) if regressor_for is not None else None
    return plan_methods(methods, seeds, SharedFits(train, val, dz, regressor))[0]


def cross_validate(split: Split, methods: Sequence[str], config: TrainConfig, reason: str,
                   regressor_for: RegressorFor | None,
                   log: Callable[[str], None] = print) -> CrossValidation:
    """Refit ``methods`` on each fold of :func:`cv_folds` and measure each on the fold's held-out blocks.

    Args:
        split: the comparison's split (its test blocks are not used).
        methods: the candidate methods (those the comparison trained).
        config: the training settings (seeds ``config.seed`` .. + ``config.seeds`` - 1, steps, batch size).
        reason: why cross-validation is used (:func:`needs_cv`).
        regressor_for: a fold's dead zone -> the rigid-body regressor (None without a URDF).
        log: progress messages.

    Returns:
        the per-method RMSE [N·m] on moving held-out pairs, fold x seed, with mean and std over all of them (None
        for a method missing on some fold).

    Raises:
        DataError: nothing to cross-validate (:func:`cv_folds`), or a fold whose dead zone cannot be fitted.
    """
    folds = cv_folds(split)
    seeds = [config.seed + s for s in range(config.seeds)]
    fold_plans = [_fold_plans(tr, va, methods, seeds, config.dead_zone, regressor_for) for tr, va in folds]
    flat = [p for fp in fold_plans for ps in fp.values() for p in ps]
    log(f"pick by cross-validation ({reason}): {len(folds)} folds of contiguous train+validation blocks, "
        f"{sum(p.spec is not None for p in flat)} networks over the workers")
    fits = dict(zip(map(id, flat), fit_plans(flat, config)))
    per_fold: dict[str, list[list[float | None]]] = {m: [] for m in methods}
    for (_, va), fp in zip(folds, fold_plans):
        for m in methods:
            if m not in fp:
                per_fold[m].append([None] * len(seeds))
                continue
            val = stack_episodes(va, fp[m][0].dead_zone)
            row = []
            for plan in fp[m]:
                pred = predict_stacked(fits[id(plan)].model, val)
                v = evaluate_predictions(pred, val).rmse_mean
                row.append(float(v) if np.isfinite(v) else None)
            per_fold[m].append(row + [row[-1]] * (len(seeds) - len(row)))  # rbd: one deterministic fit
    mean: dict[str, float | None] = {}
    std: dict[str, float | None] = {}
    for m, rows in per_fold.items():
        flat_v = [v for r in rows for v in r]
        ok = all(v is not None for v in flat_v)
        mean[m] = float(np.mean(flat_v)) if ok else None  # type: ignore[arg-type]
        std[m] = float(np.std(flat_v, ddof=1)) if ok and len(flat_v) > 1 else None  # type: ignore[arg-type]
    return CrossValidation(reason=reason, folds=len(folds), seeds=seeds,
                           held_out_blocks=[[b.name for b in va] for _, va in folds],
                           held_out_samples=[sum(len(b) for b in va) for _, va in folds],
                           rmse_mean=mean, rmse_std=std, rmse_per_fold=per_fold)


def share_warnings(train: int, val: int, test: int) -> list[str]:
    """One warning when the training split holds fewer samples than the validation or the test split (else [])."""
    smaller = [f"{name} ({n})" for name, n in (("validation", val), ("test", test)) if n > train]
    if not smaller:
        return []
    total = max(train + val + test, 1)
    return [f"the training split is smaller than the {' and the '.join(smaller)}: {train} training samples "
            f"({train / total:.0%} of {total}); every model learns from less data than it is judged on, so its errors "
            "say little about a model trained on the whole recording (record longer, or set split_fractions / "
            "--block-seconds)"]
