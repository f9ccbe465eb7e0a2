"""The honest pick of ``compare``: which model to deploy, chosen on the validation split, and a diagnosis of the data.

The pick is the method with the lowest mean validation RMSE over its seeds (torque RMSE on moving validation pairs,
mean over joints); within it, the seed with the lowest validation RMSE is exported. The test split plays no part in
the choice: its error is reported afterwards, as the estimate of what the deployed model will do. (Choosing by test
error would make that estimate optimistic: the minimum of several noisy test errors is biased low.)

When the validation split has too few blocks to choose by, the methods are ranked by cross-validation over time blocks
of train+validation instead (:mod:`.compare.pick_cv`). Either way the pick says how sure it is: its margin over the
runner-up against the spread of their difference over seeds (and folds); a margin within that spread is a tie.
A tie with a reference that learns nothing (the constant baseline, the URDF's gravity, the identified rigid bodies:
no trained network) goes to the simplest such reference (:attr:`~deadzone_id_ros.models.methods.Method.simplicity`):
the pick never deploys a network that beats one of them by no more than the spread of their difference. Ties between
networks stay with the lower mean.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

from ...models.methods import METHODS, NAIVE, PROPOSED, method_with_role
from ...training.evaluate import TorqueMetrics
from .results import PICK_DIR, DataDiagnosis, MethodResult, Pick

__all__ = ["PREDICTABLE_RATIO", "choose_pick", "confidence", "diagnose_stuck", "margin_spread", "pick_seed"]

#: Stuck-pair RMSE / moving-pair RMSE at or below which the torques of stuck joints count as predictable.
PREDICTABLE_RATIO = 1.5


def _opts(values: np.ndarray) -> list[float | None]:
    """The values as floats, None where not finite (a joint without pairs)."""
    return [float(v) if np.isfinite(v) else None for v in values]


def _ok(v: float | None) -> bool:
    return v is not None and math.isfinite(v)


def choose_pick(validation_rmse: Mapping[str, float | None], unit: str = "N·m", *,
                scores: Mapping[str, Sequence[Sequence[float | None]]] | None = None,
                basis: str = "validation") -> Pick:
    """The method to deploy from each method's mean validation RMSE [``unit``, N·m unless the effort was recorded in
    another unit] (test errors are not an input), with how sure the choice is.

    Args:
        validation_rmse: method -> the mean error it is ranked by (validation split, or cross-validation).
        scores: method -> its errors, fold x seed (one row without cross-validation), paired by position across
            methods: the margin's spread is the std of the runner-up-minus-pick differences over them.
        basis: ``"validation"`` or ``"cross-validation"`` (only the wording and :attr:`Pick.selection`).

    Ties go to the method listed first. Returns a :class:`Pick` whose test figures are still None.

    Raises:
        ValueError: no method has a finite validation RMSE.
    """
    ranked = sorted((float(v), k, m) for k, (m, v) in enumerate(validation_rmse.items())
                    if v is not None and math.isfinite(v))
    if not ranked:
        raise ValueError(f"no method has a validation RMSE to pick by: {dict(validation_rmse)}")
    best, _, method = ranked[0]
    simpler = _simpler_within_spread(method, best, ranked, scores or {})
    what, over = ("validation", "seeds") if basis == "validation" else ("cross-validation", "folds and seeds")
    reason = f"lowest mean {what} RMSE ({best:.4g} {unit} over its {over})"
    pick = Pick(method=method, reason="", validation_rmse_mean=float(best), artifact=PICK_DIR, selection=basis)
    if len(ranked) > 1:
        second, _, other = ranked[1]
        reason += f"; next: {other} ({second:.4g} {unit}, {(second - best) / max(best, 1e-300):+.1%})"
        pick.runner_up, pick.margin = other, second - best
        pick.spread = margin_spread((scores or {}).get(method), (scores or {}).get(other))
        pick.tie = None if pick.spread is None else bool(pick.margin <= pick.spread)
    pick.confidence = confidence(pick, unit)
    if simpler is not None:
        name, value, spread = simpler
        pick = Pick(method=name, reason="", validation_rmse_mean=value, artifact=PICK_DIR, selection=basis,
                    runner_up=method, margin=best - value, spread=spread, tie=True)
        reason = (f"{method} has the lowest mean {what} RMSE ({best:.4g} {unit} over its {over}), but the simpler "
                  f"{name} ({value:.4g} {unit}) is within the spread {spread:.4g} {unit} of their difference: the "
                  "simpler method is chosen")
        pick.confidence = (f"{method} beats {name} by {value - best:.4g} {unit}, within the spread {spread:.4g} "
                           f"{unit} over {over}: a tie, which goes to the simpler {name}")
    where = "on the validation split" if basis == "validation" else "by cross-validation over train+validation blocks"
    pick.reason = reason + f"; chosen {where}, never the test split"
    return pick


def _simpler_within_spread(method: str, best: float, ranked: Sequence[tuple[float, int, str]],
                           scores: Mapping[str, Sequence[Sequence[float | None]]]) -> tuple[str, float, float] | None:
    """The simplest method without a trained network (then the lowest error) that ``method`` (error ``best``) beats
    by no more than the spread of their paired difference, as (name, its error, the spread); None when there is none
    (or no spread)."""
    rank = METHODS[method].simplicity if method in METHODS else math.inf
    cands = []
    for value, _, other in ranked[1:]:
        if other not in METHODS or METHODS[other].learned or METHODS[other].simplicity >= rank:
            continue
        spread = margin_spread(scores.get(method), scores.get(other))
        if spread is not None and value - best <= spread:
            cands.append((METHODS[other].simplicity, value, other, spread))
    if not cands:
        return None
    _, value, other, spread = min(cands)
    return other, value, spread


def margin_spread(best: Sequence[Sequence[float | None]] | None,
                  other: Sequence[Sequence[float | None]] | None) -> float | None:
    """Std (ddof 1) [N·m] of ``other - best`` paired by fold and seed (None: fewer than two finite pairs).

    A row of one value (rbd: deterministic, fitted once) stands for every seed of the other method's row.
    """
    if best is None or other is None:
        return None
    diffs = []
    for rb, ro in zip(best, other):
        n = max(len(rb), len(ro))
        rb, ro = (list(rb) * n if len(rb) == 1 else rb), (list(ro) * n if len(ro) == 1 else ro)
        diffs += [o - b for b, o in zip(rb, ro) if b is not None and o is not None and math.isfinite(b - o)]
    return float(np.std(diffs, ddof=1)) if len(diffs) >= 2 else None


def confidence(pick: Pick, unit: str = "N·m") -> str:
    """The sentence saying how sure ``pick`` is: its margin over the runner-up against the seed (and fold) spread."""
    if pick.runner_up is None or pick.margin is None:
        return f"{pick.method} is the only method with a validation error: nothing to compare it with"
    over = "seeds" if pick.selection == "validation" else "folds and seeds"
    head = f"margin {pick.margin:.4g} {unit} over {pick.runner_up}"
    if pick.spread is None:
        return (f"{head}, with no spread to judge it by (one value per method: one seed on one validation split): "
                "how sure the pick is "
                f"cannot be said; choosing {pick.method} by its lower mean")
    if pick.tie:
        return (f"{head}, within the spread {pick.spread:.4g} {unit} of their difference over {over}: a tie; "
                f"choosing {pick.method} by its lower mean, which the data cannot confirm (either is as good)")
    times = pick.margin / pick.spread
    how = "over 100 times" if times > 100 else f"{times:.0f} times" if times >= 2 else f"{times:.1f} times"
    return (f"{head}, beyond the spread {pick.spread:.4g} {unit} of their difference over {over}: a clear pick "
            f"(the margin is {how} that spread)")


def pick_seed(result: MethodResult) -> int:
    """Index (into ``result.per_seed``) of the seed with the lowest validation RMSE (the first when none is finite)."""
    vals = [v if v is not None and math.isfinite(v) else math.inf for v in result.validation_rmse_per_seed]
    return int(np.argmin(vals)) if vals else 0


def diagnose_stuck(methods: Mapping[str, MethodResult],
                   val_metrics: Mapping[str, TorqueMetrics]) -> DataDiagnosis | None:
    """Whether the torques of stuck joints are predictable, from a model fitted on moving pairs only.

    Args:
        methods: the results (to choose, among the methods fitted on moving pairs only, masked / rbd / hybrid
            (:attr:`~deadzone_id_ros.models.methods.Method.fits_moving_pairs_only`), the one with the lowest
            validation RMSE).
        val_metrics: method -> the seed-0 metrics on the validation split (:func:`evaluate_predictions`).

    Returns:
        the diagnosis, or None when none of those methods ran.
    """
    cands = [m for m in methods if m in METHODS and METHODS[m].fits_moving_pairs_only and m in val_metrics
             and _ok(methods[m].validation_rmse_mean)]
    if not cands:
        return None
    model = min(cands, key=lambda m: methods[m].validation_rmse_mean)  # type: ignore[arg-type, return-value]
    vm = val_metrics[model]
    moving = np.asarray(vm.rmse_per_joint, dtype=float)
    stuck = np.asarray(vm.dead_zone.rmse_vs_measured_per_joint, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = np.where(moving > 0, stuck / moving, np.nan)
    have = np.isfinite(ratio)
    predictable = bool(have.any() and np.all(ratio[have] <= PREDICTABLE_RATIO))
    nums = ", ".join(f"{r:.2f}" if np.isfinite(r) else "n/a" for r in ratio)
    naive, proposed = method_with_role(NAIVE) or "plain MSE", method_with_role(PROPOSED) or "masking"
    if predictable:
        note = (f"The torques of stuck joints are predictable here: {model}, fitted on moving pairs only, predicts "
                f"the stuck validation pairs about as well as the moving ones (stuck / moving RMSE per joint: {nums}; "
                f"all <= {PREDICTABLE_RATIO}). The measured torque of a stuck joint is then not an arbitrary value in "
                "a friction band (e.g. link-side torque sensors, as on the KUKA LWR), so masking those pairs cannot "
                f"help: it only discards data. Expect {naive} to match or beat {proposed}.")
    else:
        note = (f"The torques of stuck joints are not predictable from (q, dq, ddq): {model}, fitted on moving pairs "
                f"only, misses the stuck validation pairs by far more than the moving ones (stuck / moving RMSE per "
                f"joint: {nums}; threshold {PREDICTABLE_RATIO}), as expected when a stuck joint's torque is any value "
                "in its static-friction band. Masking (or the band loss) keeps that arbitrary part out of the fit.")
    return DataDiagnosis(model, _opts(moving), _opts(stuck), _opts(ratio), PREDICTABLE_RATIO, predictable, note)
