"""The typed results read back from the JSON they wrote (a resumed demo builds its report from them): the comparison's
report.json (:class:`CompareReport`) and closed_loop.json (:class:`ClosedLoopRun`), each on real objects of a small
real run, round-trip exactly, and the demo's report stage writes the same report.md and report.json from the files as
from the objects of the process that ran the stages.

Tolerance: none. JSON writes every float as its shortest repr, which reads back as the same float, so a lossless
``from_dict`` gives the same JSON text; a field dropped, renamed or rounded on the way shows as a difference.
"""

from __future__ import annotations

import json
import shutil

import pytest

from deadzone_id_ros.errors import DataError
from deadzone_id_ros.experiments.closed_loop.results import ClosedLoopRun
from deadzone_id_ros.experiments.closed_loop.run import run_closed_loop, write_closed_loop
from deadzone_id_ros.experiments.compare.results import CompareReport
from deadzone_id_ros.experiments.demo.stages import DEMO_STAGES, DemoConfig, StageContext, StageObjects


def _text(doc) -> str:
    return json.dumps(doc, indent=2, allow_nan=False)


@pytest.fixture(scope="module")
def closed(compared, tmp_path_factory):
    """A small real closed-loop comparison of the shared comparison's models (one held-out seed, 0.6 s in-process,
    no live run): (output folder with compare/ and closed_loop.json, the typed run)."""
    out = tmp_path_factory.mktemp("demo")
    shutil.copytree(compared[0], out / "compare")
    res = run_closed_loop(out / "compare", out, seeds=(999,), duration=0.6, live_duration=0.0, workers=1,
                          log=lambda m: None)
    write_closed_loop(out, res)
    return out, res


def test_compare_report_reads_back_exactly(compared):
    out, doc, _, typed = compared
    back = CompareReport.from_dict(typed.to_dict())
    assert _text(back.to_dict()) == _text(typed.to_dict())
    assert _text(CompareReport.read(out / "report.json").to_dict()) == _text(json.loads((out / "report.json")
                                                                                        .read_text()))
    # the nested types come back typed, not as dicts (what the report's markdown reads)
    assert back.data.split.blocks == typed.data.split.blocks and back.data.split.block_seconds == 3.0
    assert back.config == typed.config and back.pick == typed.pick and back.data.sources == typed.data.sources
    assert list(back.dead_zone.dead_zone.threshold) == list(typed.dead_zone.dead_zone.threshold)
    val, val0 = back.methods["masked"].per_seed[0].validation, typed.methods["masked"].per_seed[0].validation
    assert val is not None and val0 is not None and val.nrmse_per_joint == val0.nrmse_per_joint
    assert back.data_efficiency is not None and set(back.data_efficiency.curves) == set(typed.data_efficiency.curves)


def test_closed_loop_run_reads_back_exactly(closed):
    out, res = closed
    assert set(res.summaries) >= {"pd_dob", "ctc_dob_masked", "ctc_dob_pick"}  # the learned models ran too
    assert _text(ClosedLoopRun.from_dict(res.to_dict()).to_dict()) == _text(res.to_dict())
    back = ClosedLoopRun.read(out / "closed_loop.json")
    assert _text(back.to_dict()) == (out / "closed_loop.json").read_text().rstrip("\n")
    s, s0 = back.summaries["pd_dob"], res.summaries["pd_dob"]
    assert s.tracking_rmse_per_joint == s0.tracking_rmse_per_joint and s.per_seed[0].rmse == s0.per_seed[0].rmse
    assert back.settings == res.settings


def test_a_malformed_file_names_the_file_and_the_key(compared, closed, tmp_path):
    doc = json.loads((compared[0] / "report.json").read_text())
    doc["methods"]["masked"]["per_seed"][0]["rmse_mean"] = "small"
    bad = tmp_path / "report.json"
    bad.write_text(json.dumps(doc))
    with pytest.raises(DataError, match=rf"{bad}: key 'methods.masked.per_seed\[0\].rmse_mean': expected float, "
                                        r"got 'small'"):
        CompareReport.read(bad)
    doc = json.loads((compared[0] / "report.json").read_text())
    del doc["dead_zone"]["sigma"]
    bad.write_text(json.dumps(doc))
    with pytest.raises(DataError, match=rf"{bad}: key 'dead_zone': missing key 'sigma'"):
        CompareReport.read(bad)
    doc = json.loads((compared[0] / "report.json").read_text())
    bad.write_text(json.dumps({**doc, "report_version": 2}))
    with pytest.raises(DataError, match=rf"{bad}: key 'report_version': 2 is not 1, the version this package reads"):
        CompareReport.read(bad)
    doc = json.loads((closed[0] / "closed_loop.json").read_text())
    doc["summaries"]["pd_dob"]["warp"] = 1
    bad = tmp_path / "closed_loop.json"
    bad.write_text(json.dumps(doc))
    with pytest.raises(DataError, match=rf"{bad}: key 'summaries.pd_dob': unknown key\(s\) \['warp'\]"):
        ClosedLoopRun.read(bad)
    bad.write_text("{")
    with pytest.raises(DataError, match=rf"{bad}: not valid JSON"):
        ClosedLoopRun.read(bad)


def test_the_demo_report_from_the_files_equals_the_one_from_the_objects(compared, closed):
    """The report stage of a demo whose compare and closed-loop stages finished in an earlier process (a resume)
    reads their files back and writes the same report, byte for byte (its wall times come from demo_state.json, the
    same either way)."""
    out, res = closed
    report = next(s for s in DEMO_STAGES if s.name == "report")
    results = {"simulate": {"bags": ["data/sim_seed1"]}, "live": {"bag": "data/live"},
               "compare": {"compare_dir": "compare", "best": compared[3].best_learned()},
               "closed_loop": {"closed_loop_json": "closed_loop.json"}}
    seconds = {"1_simulate": 1.5, "2_live": 2.5, "3_compare": 30.25, "4_closed_loop": 12.0}
    cfg = DemoConfig.quick_run()
    report.run(StageContext(out, cfg, dict(results), lambda m: None, dict(seconds),
                            StageObjects(compare=compared[3], closed_loop=res)))
    in_process = {name: (out / name).read_bytes() for name in ("report.md", "report.json")}
    for name in in_process:
        (out / name).unlink()
    report.run(StageContext(out, cfg, dict(results), lambda m: None, dict(seconds)))  # a fresh process: no objects
    for name, text in in_process.items():
        assert (out / name).read_bytes() == text, name
    assert b"ctc_dob_masked" in in_process["report.json"] and b"## Closed loop" in in_process["report.md"]


def test_the_demo_report_names_the_robot_and_gives_masked_vs_conventional(compared, closed):
    """report.json names the robot and its joints, and gives the paper's claim on this arm: usable fraction and mean
    torque RMSE of masked and conventional, the same numbers as the methods' entries, and their ratios."""
    out, res = closed
    report = next(s for s in DEMO_STAGES if s.name == "report")
    results = {"simulate": {"bags": ["data/sim_seed1"]}, "live": {"bag": None, "skipped": "robot 'x': skipped"},
               "compare": {"compare_dir": "compare", "best": compared[3].best_learned()},
               "closed_loop": {"closed_loop_json": "closed_loop.json"}}
    report.run(StageContext(out, DemoConfig.quick_run(), results, lambda m: None, {"1_simulate": 1.0}))
    doc = json.loads((out / "report.json").read_text())
    assert doc["robot"] == {"name": "three_dof_arm", "joints": list(compared[3].joint_names)}
    assert doc["data"]["live_bag"] == "" and doc["data"]["live_skipped"] == "robot 'x': skipped"
    assert doc["compare"]["pick"] == json.loads((compared[0] / "report.json").read_text())["pick"]
    assert doc["compare"]["pick"]["method"] in doc["compare"]["methods"]
    claim, methods = doc["masked_vs_conventional"], doc["compare"]["methods"]
    assert claim["joints"] == len(compared[3].joint_names)
    for key, field in (("usable_fraction", "usable_fraction"), ("rmse", "rmse_mean")):
        m, c = methods["masked"][field], methods["conventional"][field]
        assert claim[f"{key}_masked"] == pytest.approx(m) and claim[f"{key}_conventional"] == pytest.approx(c)
        assert claim[f"{key.split('_')[0]}_ratio"] == pytest.approx(m / c)
    text = (out / "report.md").read_text()
    assert "Masked vs conventional on" in text and "no live recording (robot 'x': skipped)" in text
