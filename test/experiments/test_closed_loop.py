"""The in-process closed-loop comparison: reversal detection, figures, seeds and DOB setting, pick, verdicts."""

from __future__ import annotations

import json

import numpy as np
import pytest

from deadzone_id_ros.control import ControlMode
from deadzone_id_ros.errors import DataError
from deadzone_id_ros.experiments.closed_loop.report import closed_loop_targets
from deadzone_id_ros.experiments.closed_loop.run import read_pick
from deadzone_id_ros.experiments.closed_loop.sim import ControllerSpec, controller_specs, run_controller
from deadzone_id_ros.robot_configs import bundled_controller_config, bundled_sim_config
from deadzone_id_ros.sim.tracking import reversal_mask, tracking_figures

ISSUE_KEYS = {"tracking_rmse_mean_mrad", "tracking_rmse_std_mrad", "seeds", "reversal_rmse_mean_mrad"}


def test_reversal_mask_marks_the_window_around_each_sign_change_only():
    dq = np.ones((1000, 2))
    dq[300:700, 0] = -1.0  # joint 0 reverses at samples 300 and 700
    dq[500:510, 1] = 0.0  # joint 1 pauses (zero carries the previous sign): no reversal
    m = reversal_mask(dq, rate_hz=1000.0, window_s=0.01)
    expected = np.zeros(1000, dtype=bool)
    expected[290:311] = expected[690:711] = True
    np.testing.assert_array_equal(m[:, 0], expected)
    assert not m[:, 1].any()


def test_tracking_figures_per_joint():
    err = np.zeros((100, 2))
    err[:, 0] = 0.002
    err[10, 1] = -0.05
    near = np.zeros((100, 2), dtype=bool)
    near[:4, 0] = True
    f = tracking_figures(err, near)
    np.testing.assert_allclose(f.rmse, [0.002, 0.005])
    np.testing.assert_allclose(f.max_abs, [0.002, 0.05])
    assert f.reversal_rmse[0] == pytest.approx(0.002) and np.isnan(f.reversal_rmse[1])


def test_run_controller_over_seeds_and_a_weak_dob():
    """Two seeds give two different runs and a spread; the weak DOB really lowers the cutoff and tracks worse."""
    sim = bundled_sim_config()
    spec = ControllerSpec("pd_dob", "pd_dob", ControlMode("nominal_inertia", dob=True), "none")
    strong = run_controller(spec, [999, 1000], 1.5, sim, bundled_controller_config())
    weak = run_controller(spec, [999, 1000], 1.5, sim, bundled_controller_config(), dob_scale=0.2)
    assert strong.seeds == [999, 1000] and len(strong.per_seed) == 2
    assert strong.per_seed[0].rmse != strong.per_seed[1].rmse and strong.tracking_rmse_std > 0
    assert weak.dob_cutoff == pytest.approx([18.0, 30.0, 30.0])
    assert strong.dob_cutoff == pytest.approx([90.0, 150.0, 150.0])
    assert weak.tracking_rmse_mean > 1.5 * strong.tracking_rmse_mean
    # "mean" is the mean over joints of the per-joint RMSE, then over seeds
    assert strong.tracking_rmse_mean == pytest.approx(np.mean([np.mean(s.rmse) for s in strong.per_seed]))
    entry = strong.report_entry()
    assert ISSUE_KEYS <= set(entry)
    assert entry["tracking_rmse_mean_mrad"] == pytest.approx(strong.tracking_rmse_mean * 1e3)
    assert np.isfinite(entry["reversal_rmse_mean_mrad"])
    with pytest.raises(ValueError, match="at least one seed"):
        run_controller(spec, [], 1.0, sim, bundled_controller_config())


def test_controller_specs_names_and_missing_methods(tmp_path):
    specs = controller_specs(tmp_path, "hybrid", ["rbd", "masked", "conventional", "hybrid"])
    assert [s.name for s in specs] == ["pd_dob", "ctc_dob_rbd_nominal", "ctc_dob_rbd", "ctc_dob_masked",
                                       "ctc_dob_conventional", "ctc_dob_pick"]
    assert specs[-1].model_path == str(tmp_path / "hybrid") and specs[1].model == "rbd" and not specs[1].model_path
    assert [s.mode for s in specs] == ["pd_dob"] + ["ctc_dob"] * 5 and specs[0].control.feedforward == "nominal_inertia"
    assert all(s.control == ControlMode("model", dob=True) for s in specs[1:])
    assert [s.name for s in controller_specs(tmp_path, None, ["masked"])] == ["pd_dob", "ctc_dob_rbd_nominal",
                                                                              "ctc_dob_masked"]


def _report(tmp_path, rmse, pick=None):
    from deadzone_id_ros.data.deadzone import DeadZone
    from deadzone_id_ros.experiments.compare.results import (
        CompareReport,
        DeadZoneSummary,
        MethodDeadZone,
        MethodResult,
        Pick,
    )
    from deadzone_id_ros.training.config import TrainConfig
    from deadzone_id_ros.training.records import DataRecord

    methods = {m: MethodResult([v or 0.0] * 3, [0.0] * 3, v, 0.0, [0.5] * 3, [0.0] * 3, 0.5, 0.7, [0],
                               MethodDeadZone(), [], f"models/{m}") for m, v in rmse.items()}
    joints = ("j1", "j2", "j3")
    report = CompareReport(list(joints), {}, DataRecord(), DeadZoneSummary(DeadZone(joints, 0.1, np.zeros(3),
                                                                                    np.zeros(3))),
                           TrainConfig(), methods, pick=Pick(pick, "lowest validation RMSE", 0.1) if pick else None)
    (tmp_path / "report.json").write_text(json.dumps(report.to_dict()))
    return tmp_path


RMSE = {"rbd": 0.01, "masked": 0.3, "hybrid": 0.2, "conventional": None}


def test_read_pick_prefers_the_reports_pick(tmp_path):
    assert read_pick(_report(tmp_path, RMSE))[0] == "hybrid"  # no pick yet: the best learned method, never rbd
    assert read_pick(_report(tmp_path, RMSE, pick="masked")) == ("masked", "report.json `pick`")
    assert read_pick(_report(tmp_path, RMSE, pick="rbd"))[0] == "rbd"
    # every learned method of the comparison counts, band included (the registry: models.METHODS[m].learned)
    assert read_pick(_report(tmp_path, {**RMSE, "band": 0.1}))[0] == "band"
    assert read_pick(_report(tmp_path, {"rbd": 0.01})) == (None, "no learned method in report.json")
    (tmp_path / "report.json").write_text(json.dumps({"methods": {}}))
    with pytest.raises(DataError, match=r"report.json is not the report.json of `deadzone-id compare` \(KeyError"):
        read_pick(tmp_path)
    (tmp_path / "report.json").write_text(json.dumps([1, 2]))
    with pytest.raises(DataError, match=r"\(TypeError: a JSON list, not an object\)"):
        read_pick(tmp_path)
    doc = json.loads((_report(tmp_path, RMSE) / "report.json").read_text())
    (tmp_path / "report.json").write_text(json.dumps({**doc, "pick": "masked"}))  # an early report's plain name
    assert read_pick(tmp_path) == ("masked", "report.json `pick`")
    with pytest.raises(FileNotFoundError, match="report.json"):
        read_pick(tmp_path / "nowhere")


def _entry(mean, std):
    """A ClosedLoopSummary over two seeds with a mean ± std tracking RMSE of ``mean`` ± ``std`` mrad (the rest
    zero)."""
    from deadzone_id_ros.experiments.closed_loop.results import ClosedLoopSummary

    zeros = [0.0] * 3
    return ClosedLoopSummary("x", "x", "pd_dob", "none", "", ["j1", "j2", "j3"], [999, 1000], [150.0] * 3, 1.0, zeros,
                             zeros, mean * 1e-3, std * 1e-3, zeros, zeros, 0.0, 0.0, zeros, zeros)


def test_targets_are_judged_with_the_spread():
    met = closed_loop_targets({"pd_dob": _entry(1.0, 0.05), "ctc_dob_pick": _entry(0.4, 0.02),
                               "ctc_dob_masked": _entry(0.5, 0.05), "ctc_dob_conventional": _entry(0.8, 0.05)})
    assert "**met**" in met[0] and "more than the spread" in met[1]
    close = closed_loop_targets({"pd_dob": _entry(1.0, 0.2), "ctc_dob_pick": _entry(0.48, 0.05),
                                 "ctc_dob_masked": _entry(0.7, 0.1), "ctc_dob_conventional": _entry(0.75, 0.1)})
    assert "not beyond the spread" in close[0] and "spreads overlap" in close[1]
    missed = closed_loop_targets({"pd_dob": _entry(1.0, 0.0), "ctc_dob_pick": _entry(0.6, 0.0),
                                  "ctc_dob_masked": _entry(0.9, 0.0), "ctc_dob_conventional": _entry(0.8, 0.0)})
    assert all("**missed**" in line for line in missed)


def test_closed_loop_command_writes_valid_json_even_without_reversals(tmp_path):
    """`deadzone-id closed-loop` as documented, tiny: 0.3 s has no reversal (NaN inside), the JSON must still load."""
    from deadzone_id_ros.cli.main import main

    _report(tmp_path, {})
    assert main(["closed-loop", "--compare", str(tmp_path), "--seeds", "999", "--duration", "0.3",
                 "--workers", "1"]) == 0
    doc = json.loads((tmp_path / "closed_loop.json").read_text())
    assert set(doc["closed_loop"]) == {"pd_dob", "ctc_dob_rbd_nominal"} == set(doc["closed_loop_weak_dob"])
    assert ISSUE_KEYS <= set(doc["closed_loop"]["pd_dob"]) and doc["closed_loop_settings"]["pick"] is None
    assert doc["closed_loop_settings"]["time_base"] == "sim_time"  # the loop's simulated time (live: "header")
    assert "### Weak DOB" in (tmp_path / "closed_loop.md").read_text()
    assert (tmp_path / "plots" / "closed_loop_reversals.png").is_file()
    assert (tmp_path / "plots" / "closed_loop_tracking.png").is_file()
    assert "(plots/closed_loop_tracking.png)" in (tmp_path / "closed_loop.md").read_text()
    assert doc["closed_loop_settings"]["tracking_error_limit"] == 0.5 and doc["closed_loop"]["pd_dob"]["faults"] == []


def test_worker_pool_runs_niced_and_cancels_its_queue_when_the_block_raises():
    """The in-process runs beside live runs go to niced workers; an interrupt does not wait for the whole queue."""
    import os
    import time

    from deadzone_id_ros.experiments.closed_loop.run import worker_pool

    with worker_pool(1, 3) as pool:
        assert pool.submit(os.nice, 0).result() == min(os.nice(0) + 3, 19)
    futures = []
    with pytest.raises(KeyboardInterrupt), worker_pool(1) as pool:
        futures = [pool.submit(time.sleep, 0.5) for _ in range(20)]
        raise KeyboardInterrupt
    assert sum(f.cancelled() for f in futures) >= 15  # 20 x 0.5 s queued: at most the running one and a few taken
    assert all(f.done() for f in futures)


def test_closed_loop_runs_the_models_at_the_velocity_asked_and_says_so(tmp_path, monkeypatch):
    """`--feedforward-velocity measured` (docs/controller.md, "The velocity the model sees"): every in-process job's
    controller gets it, the report names it, and with live runs it is refused (they take the launch files')."""
    import dataclasses

    from deadzone_id_ros.cli.main import main
    from deadzone_id_ros.experiments.closed_loop.run import _jobs, run_closed_loop

    spec = object()
    for velocity in ("desired", "measured"):
        jobs = _jobs([spec], [999], 0.3, (1.0, 0.2), None, velocity)
        assert [j[4].feedforward_velocity for j in jobs] == [velocity, velocity]
        default = _jobs([spec], [999], 0.3, (1.0,))[0][4]  # nothing else of the controller changes
        assert dataclasses.replace(jobs[0][4], feedforward_velocity="desired") == default
    _report(tmp_path, {})
    import deadzone_id_ros.experiments.closed_loop.run as run_module

    seen: list[str] = []
    one = run_module._one

    def spy(job: tuple):  # every controller the command runs: its velocity (workers 1: in this process)
        seen.append(job[4].feedforward_velocity)
        return one(job)

    monkeypatch.setattr(run_module, "_one", spy)
    assert main(["closed-loop", "--compare", str(tmp_path), "--seeds", "999", "--duration", "0.3", "--workers", "1",
                 "--feedforward-velocity", "measured"]) == 0
    assert seen and set(seen) == {"measured"}
    doc = json.loads((tmp_path / "closed_loop.json").read_text())
    assert doc["closed_loop_settings"]["feedforward_velocity"] == "measured"
    assert "evaluated at the measured velocity (feedforward_velocity: measured)" in \
        (tmp_path / "closed_loop.md").read_text()
    assert main(["closed-loop", "--compare", str(tmp_path), "--live-duration", "1", "--feedforward-velocity",
                 "measured"]) == 2  # refused before anything runs
    with pytest.raises(ValueError, match="runs in process only"):
        run_closed_loop(tmp_path, tmp_path, [999], 0.3, live_duration=1.0, workers=1, feedforward_velocity="measured")
    with pytest.raises(ValueError, match="must be one of"):
        run_closed_loop(tmp_path, tmp_path, [999], 0.3, workers=1, feedforward_velocity="fast")
