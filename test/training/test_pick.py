"""The pick of ``compare``: validation error decides, never test error; the data diagnosis; the efficiency rows."""

from __future__ import annotations

import json

import numpy as np
import pytest

from deadzone_id_ros.experiments.compare.efficiency import efficiency_rows
from deadzone_id_ros.experiments.compare.pick import PREDICTABLE_RATIO, choose_pick, diagnose_stuck, pick_seed
from deadzone_id_ros.experiments.compare.results import DataEfficiency, MethodDeadZone, MethodResult
from deadzone_id_ros.models.methods import METHODS


def _result(test: float, val: float, val_per_seed=(None,)) -> MethodResult:
    return MethodResult([test], [0.0], test, 0.0, [1.0], [0.0], 1.0, 1.0, [0], MethodDeadZone(), [], "models/x",
                        validation_rmse_mean=val, validation_rmse_per_seed=list(val_per_seed))


def _report_of(joints, methods=None, **kw):
    """A CompareReport with an empty data record, a zero dead zone and the default configuration."""
    from deadzone_id_ros.data.deadzone import DeadZone
    from deadzone_id_ros.experiments.compare.results import CompareReport, DeadZoneSummary
    from deadzone_id_ros.training.config import TrainConfig
    from deadzone_id_ros.training.records import DataRecord

    dz = DeadZoneSummary(DeadZone(tuple(joints), 0.1, np.zeros(len(joints)), np.zeros(len(joints))))
    return CompareReport(list(joints), {}, DataRecord(), dz, TrainConfig(), methods or {}, **kw)


def test_validation_not_test_decides_the_pick():
    # On test data masked would win (0.10 < 0.20); on validation data hybrid wins (0.11 < 0.30).
    methods = {"masked": _result(test=0.10, val=0.30), "hybrid": _result(test=0.20, val=0.11),
               "rbd": _result(test=0.15, val=0.50)}
    assert min(methods, key=lambda m: methods[m].rmse_mean) == "masked"  # what a test-set pick would say
    pick = choose_pick({m: r.validation_rmse_mean for m, r in methods.items()})
    assert pick.method == "hybrid" and pick.validation_rmse_mean == 0.11
    assert "validation" in pick.reason and "next: masked" in pick.reason
    assert pick.test_rmse_mean is None  # filled in after the choice, from the exported model


def test_pick_skips_missing_validation_and_refuses_none():
    assert choose_pick({"a": None, "b": float("nan"), "c": 2.0}).method == "c"
    with pytest.raises(ValueError, match="no method has a validation RMSE"):
        choose_pick({"a": None})


def test_a_tie_is_reported_as_a_tie():
    # the Franka case: two methods 0.0001 N·m apart, their seed-to-seed difference spread 0.02
    scores = {"masked": [[0.7200, 0.7400, 0.7001]], "hybrid": [[0.7301, 0.7000, 0.7303]]}
    means = {m: float(np.mean(v)) for m, v in scores.items()}
    pick = choose_pick(means, scores=scores)
    assert pick.method == "masked" and pick.runner_up == "hybrid" and pick.tie is True
    assert pick.margin == pytest.approx(means["hybrid"] - means["masked"]) and pick.margin < 0.001
    assert pick.spread == pytest.approx(np.std(np.subtract(scores["hybrid"], scores["masked"]), ddof=1))
    assert pick.spread > 0.01
    assert f"within the spread {pick.spread:.4g} N·m" in pick.confidence and ": a tie; choosing masked" in (
        pick.confidence)
    report = _report_of(["j1"], {m: _result(1.0, means[m], scores[m][0]) for m in scores}, pick=pick)
    from deadzone_id_ros.experiments.compare.pick_report import pick_section

    assert f"How sure: {pick.confidence}." in "\n".join(pick_section(report))
    assert json.loads(json.dumps(report.to_dict()))["pick"]["tie"] is True


def test_a_clear_margin_and_no_spread_are_said_so():
    scores = {"masked": [[0.50, 0.52], [0.61, 0.60]], "mse_all": [[0.60, 0.63], [0.70, 0.71]]}  # fold x seed
    pick = choose_pick({m: float(np.mean(v)) for m, v in scores.items()}, scores=scores, basis="cross-validation")
    assert pick.method == "masked" and pick.tie is False and pick.selection == "cross-validation"
    assert "a clear pick" in pick.confidence and "over folds and seeds" in pick.confidence
    assert "cross-validation" in pick.reason and "never the test split" in pick.reason
    one = choose_pick({"masked": 0.5, "mse_all": 0.6}, scores={"masked": [[0.5]], "mse_all": [[0.6]]})
    assert one.spread is None and one.tie is None and "cannot be said" in one.confidence
    assert "only method" in choose_pick({"rbd": 0.4}).confidence
    # rbd is deterministic (one fit for every seed): its one value is paired with each seed of the other method
    rbd = choose_pick({"rbd": 0.5, "hybrid": 0.52}, scores={"rbd": [[0.5]], "hybrid": [[0.51, 0.53]]})
    assert rbd.spread == pytest.approx(np.std([0.01, 0.03], ddof=1)) and rbd.tie is False  # margin 0.02 > 0.014


def test_a_tie_goes_to_the_simpler_method():
    # hybrid beats rbd by 0.005 N·m, within the 0.014 spread of their difference over seeds: rbd (simpler) is chosen
    scores = {"hybrid": [[0.49, 0.51, 0.485]], "rbd": [[0.4967]], "constant": [[0.9]]}
    means = {m: float(np.mean(v)) for m, v in scores.items()}
    pick = choose_pick(means, scores=scores)
    assert pick.method == "rbd" and pick.runner_up == "hybrid" and pick.tie is True
    assert pick.validation_rmse_mean == pytest.approx(0.4967) and pick.margin < 0
    assert "simpler rbd" in pick.confidence and "the simpler method is chosen" in pick.reason
    # beyond the spread the better, more complex method stays the pick
    clear = {"hybrid": [[0.40, 0.41, 0.405]], "rbd": [[0.4967]]}
    assert choose_pick({m: float(np.mean(v)) for m, v in clear.items()}, scores=clear).method == "hybrid"
    # a tie between two networks stays with the lower mean: only references that learn nothing take a tie
    nets = {"hybrid": [[0.49, 0.51, 0.485]], "masked": [[0.50, 0.50, 0.50]]}
    assert choose_pick({m: float(np.mean(v)) for m, v in nets.items()}, scores=nets).method == "hybrid"


def test_pick_seed_is_the_lowest_validation_seed():
    assert pick_seed(_result(1.0, 1.0, (0.3, 0.1, 0.2))) == 1
    assert pick_seed(_result(1.0, 1.0, (None, 0.5))) == 1


def _val_metrics(moving, stuck):
    from deadzone_id_ros.training.evaluate import StuckMetrics, TorqueMetrics

    n = len(moving)
    return TorqueMetrics(tuple(moving), (1.0,) * n, float(np.mean(moving)), 1.0, (10,) * n,
                         StuckMetrics(tuple(stuck), (10,) * n))


def test_diagnosis_predictable_vs_friction_band():
    methods = {"masked": _result(0.2, 0.2), "hybrid": _result(0.1, 0.1)}
    # Link-side sensor: the moving-pairs model predicts stuck pairs about as well -> masking cannot help.
    d = diagnose_stuck(methods, {"hybrid": _val_metrics([0.1, 0.2], [0.11, 0.25]), "masked": _val_metrics(
        [1, 1], [9, 9])})
    assert d is not None and d.model == "hybrid" and d.stuck_predictable
    assert d.ratio_per_joint == pytest.approx([1.1, 1.25]) and "cannot help" in d.note and "1.10" in d.note
    # Motor-side torque in a friction band: stuck pairs are missed by far more.
    d = diagnose_stuck(methods, {"hybrid": _val_metrics([0.1, 0.2], [0.3, 0.21]), "masked": _val_metrics(
        [1, 1], [1, 1])})
    assert d is not None and not d.stuck_predictable and d.ratio_per_joint[0] > PREDICTABLE_RATIO
    assert diagnose_stuck({"mse_all": _result(1, 1)}, {}) is None


def test_efficiency_rows_merge_fractions_that_select_the_same_blocks():
    assert efficiency_rows([0.1, 0.3, 1.0], 3) == [([0.1, 0.3], 1), ([1.0], 3)]  # ceil(0.3 * 3) = 1 block too
    assert efficiency_rows([0.1, 0.3, 1.0], 30) == [([0.1], 3), ([0.3], 9), ([1.0], 30)]
    assert efficiency_rows([1.0, 0.5, 0.5], 1) == [([0.5, 1.0], 1)]
    with pytest.raises(ValueError, match="n_blocks"):
        efficiency_rows([0.5], 0)


def test_merged_rows_are_named_in_the_table():
    from deadzone_id_ros.experiments.compare.pick_report import fraction_cell

    de = DataEfficiency([0.1, 1.0], [500, 2000], [2, 4], merged=[[0.1, 0.3], []])
    rep = _report_of(["j"], data_efficiency=de)
    assert fraction_cell(rep, 0) == "10% = 30% (same 2 blocks, trained once)"
    assert fraction_cell(rep, 1) == "100%"
    assert json.loads(json.dumps(rep.to_dict()))["data_efficiency"]["merged"] == [[0.1, 0.3], []]


def test_compare_report_carries_and_exports_the_pick(compared_report):
    from deadzone_id_ros.models import load_artifact

    out, report, typed = compared_report
    pick = report["pick"]
    assert {"method", "reason", "validation_rmse_mean"} <= set(pick)
    vals = {m: e["validation_rmse_mean"] for m, e in report["methods"].items()}
    ranked_by = pick["cv"]["rmse_mean"] if pick["cv"] else vals  # few validation blocks: cross-validation decides
    best = min(ranked_by, key=ranked_by.get)
    if pick["method"] != best:  # a tie goes to the simpler method
        assert pick["runner_up"] == best and pick["tie"]
        assert ranked_by[pick["method"]] - ranked_by[best] <= pick["spread"]
        assert METHODS[pick["method"]].simplicity < METHODS[best].simplicity
    assert pick["validation_rmse_mean"] == pytest.approx(vals[pick["method"]])
    assert pick["selection"] == ("cross-validation" if pick["cv"] else "validation") and pick["confidence"]
    model = load_artifact(out / pick["artifact"])
    assert model.method == pick["method"] and model.metadata["metrics"]["seed"] == pick["seed"]
    assert model.metadata["metrics"]["rmse_mean"] == pytest.approx(pick["test_rmse_mean"])
    if model.mlp is not None:
        want = "pick/residual.onnx" if model.rbd is not None else "pick/model.onnx"
        assert pick["onnx"] == want and (out / pick["onnx"]).stat().st_size > 1000
    else:
        assert pick["onnx"] is None
    assert report["data_diagnosis"]["stuck_predictable"] is False  # simulator: stuck torque is in a friction band
    md = (out / "report.md").read_text()
    assert "## Which model to deploy" in md and f"**Deploy `{pick['method']}`**" in md and "band loss" in md
    band = report["methods"]["band"]["per_seed"][0]["train"]["band_halfwidth"]
    assert len(band) == 3 and all(b > 0 for b in band)
    assert np.isfinite(report["methods"]["band"]["rmse_mean"])
    # demo-real's summary names the pick of each recording, its test error and where it was exported
    from deadzone_id_ros.experiments.demo.report import real_markdown

    # the typed report run_compare returned is what report.json holds (no round trip through from_dict)
    assert typed.to_dict() == report and typed.pick is not None and typed.pick.onnx == pick["onnx"]
    summary = real_markdown({"rec": typed}, {"rec": "A recording"})
    assert f"**Deploy: {pick['method']}** (seed {pick['seed']})" in summary
    assert f"Its test RMSE {pick['test_rmse_mean']:.4f} N·m" in summary
    assert f"`rec/{pick['onnx'] or 'pick/'}`" in summary
