"""Golden test: the offline steps of ``deadzone-id demo --quick`` give the same numbers as before the renovation.

What runs (the demo's stages 1 and 3 without the live ROS 2 recording, shrunk to about 15 s on 2 cores):

1. ``simulate`` (the library call behind ``deadzone-id simulate``) of two 10 s episodes, seeds 1 and 2, with the
   simulator configuration read explicitly from ``config/sim_arm.yaml`` (:data:`SIM_CONFIG`), written as rosbag2
   episodes whose first stamp is fixed (:data:`START_NS`) instead of the wall clock;
2. ``deadzone-id compare --quick --simulator yes`` on both bags (every method, two training seeds, the data-efficiency
   curve, the noise floor) with a tiny training configuration (:data:`TINY`: a 9-32-32-3 net, 100 steps, 2 s split
   blocks, one thread);
3. ``deadzone-id train --method masked`` on the same bags with the same configuration.

The numbers compared (per-method torque RMSE per joint and per seed, nRMSE, usable fractions, dead-zone sigma and
thresholds, moving fractions, noise floor, data-efficiency curve, split sizes, and the train artifact's test metrics)
were recorded from the unmodified code at commit 794a3b2 by running this file as a script
(``.venv/bin/python test/test_golden.py``, which prints :data:`GOLDEN` and :data:`GOLDEN_TRAIN`) and pasting the
output; a second run on the same machine gave identical values (training is single-threaded and seeded). The
tolerance is rtol = 1e-6: a refactor that keeps the arithmetic gives the same floats bit for bit; a change that moves
any number (a different split, dead zone, seed use or data path) moves it by far more. Re-record only for a change
that is meant to alter the numbers, and say so in its commit message.

``SIM_CONFIG`` is a path so that it can be pinned: when the simulator gains new effects, point it at the profile
that reproduces today's arm.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

REPO = Path(__file__).resolve().parent.parent
SIM_CONFIG = REPO / "config" / "sim_arm.yaml"
SIM_SEEDS = (1, 2)
SIM_DURATION = 10.0  # [s] per episode
START_NS = 1_700_000_000_000_000_000  # first stamp of each bag [ns since epoch]
TINY = ("hidden_sizes: [32, 32]", "max_steps: 100", "eval_interval: 25", "batch_size: 256", "seeds: 2",
        "block_seconds: 2.0", "num_threads: 1", "progress: false")
RTOL = 1e-6


def _simulate_bags(folder: Path) -> list[Path]:
    """Stage 1: the offline simulated episodes as rosbag2 directories (what ``deadzone-id simulate`` writes)."""
    from deadzone_id_ros.data import write_recording
    from deadzone_id_ros.nodes.sim_arm_params import load_sim_config
    from deadzone_id_ros.sim.offline import simulate

    sim_config, _ = load_sim_config(SIM_CONFIG, {"profile": "ideal"})  # the arm the numbers were recorded on
    bags = []
    for seed in SIM_SEEDS:
        rec = simulate(SIM_DURATION, seed, sim_config=sim_config)
        offset = START_NS - int(rec.state_t_ns[0])
        rec.state_t_ns = np.asarray(rec.state_t_ns, dtype=np.int64) + offset
        rec.command_t_ns = np.asarray(rec.command_t_ns, dtype=np.int64) + offset
        rec.reference_t_ns = np.asarray(rec.reference_t_ns, dtype=np.int64) + offset
        bags.append(write_recording(rec, folder / f"sim_seed{seed}"))
    return bags


def _config_file(folder: Path) -> Path:
    path = folder / "training.yaml"
    path.write_text("/**:\n  ros__parameters:\n" + "".join(f"    {line}\n" for line in TINY))
    return path


def _run_compare(bags: list[Path], config: Path, out: Path) -> dict[str, Any]:
    """Stage 3: ``deadzone-id compare --quick --simulator yes``; returns report.json."""
    from deadzone_id_ros.cli.main import main

    status = main(["compare", "--bag", *map(str, bags), "--out", str(out), "--config", str(config), "--quick",
                   "--simulator", "yes"])
    assert status == 0
    return json.loads((out / "report.json").read_text())


def _run_train(bags: list[Path], config: Path, out: Path) -> dict[str, Any]:
    """``deadzone-id train --method masked``; returns the artifact's model.json."""
    from deadzone_id_ros.cli.main import main

    status = main(["train", "--bag", *map(str, bags), "--method", "masked", "--out", str(out), "--config",
                   str(config), "--no-onnx"])
    assert status == 0
    return json.loads((out / "model.json").read_text())


def compare_numbers(report: dict[str, Any]) -> dict[str, Any]:
    """The numbers of a compare report.json that must not move, under flat dotted keys."""
    dz = report["dead_zone"]
    out: dict[str, Any] = {
        "data.samples": [report["data"]["samples"][k] for k in ("train", "val", "test")],
        "dead_zone.sigma": dz["sigma"],
        "dead_zone.threshold": dz["threshold"],
        "dead_zone.moving_fraction_train_per_joint": dz["moving_fraction_train_per_joint"],
        "dead_zone.all_moving_fraction_train": dz["all_moving_fraction_train"],
        "dead_zone.pairs_moving_fraction_train": dz["pairs_moving_fraction_train"],
        "dead_zone.moving_fraction_test_per_joint": dz["moving_fraction_test_per_joint"],
        "noise_floor.rmse_per_joint": report["noise_floor"]["rmse_per_joint"],
    }
    for name, m in sorted(report["methods"].items()):
        out[f"{name}.rmse_per_joint"] = m["rmse_per_joint"]
        out[f"{name}.rmse_mean"] = m["rmse_mean"]
        out[f"{name}.nrmse_per_joint"] = m["nrmse_per_joint"]
        out[f"{name}.usable_fraction"] = m["usable_fraction"]
        out[f"{name}.per_seed_rmse_per_joint"] = [s["rmse_per_joint"] for s in m["per_seed"]]
        out[f"{name}.dead_zone_rmse_vs_measured_per_joint"] = m["dead_zone"]["rmse_vs_measured_per_joint"]
    eff = report["data_efficiency"]
    out["data_efficiency.train_samples"] = eff["train_samples"]
    for name in ("masked", "conventional"):
        out[f"data_efficiency.{name}.rmse_mean"] = eff[name]["rmse_mean"]
        out[f"data_efficiency.{name}.usable_samples"] = eff[name]["usable_samples"]
    return out


def train_numbers(meta: dict[str, Any]) -> dict[str, Any]:
    """The numbers of a train artifact's model.json that must not move."""
    m = meta["metrics"]
    return {"threshold": meta["dead_zone"]["threshold"], "rmse_per_joint": m["rmse_per_joint"],
            "nrmse_per_joint": m["nrmse_per_joint"], "usable_fraction": m["usable_fraction"],
            "samples": [meta["training_data"]["samples"][k] for k in ("train", "val", "test")]}


# Recorded at commit 794a3b2 (before the renovation of issue 10); see the module docstring.
GOLDEN: dict[str, Any] = {'data.samples': [14000, 2000, 4000],
 'dead_zone.sigma': [0.5389363739531969, 0.32744968427210724, 0.40821835900305925],
 'dead_zone.threshold': [0.053893637395319695, 0.032744968427210724, 0.04082183590030593],
 'dead_zone.moving_fraction_train_per_joint': [0.6457142857142857, 0.6313571428571428, 0.7074285714285714],
 'dead_zone.all_moving_fraction_train': 0.3357142857142857,
 'dead_zone.pairs_moving_fraction_train': 0.6615,
 'dead_zone.moving_fraction_test_per_joint': [0.817, 0.79, 0.65275],
 'noise_floor.rmse_per_joint': [0.012960895158516122, 0.03479590622372272, 0.005469283946864082],
 'conventional.rmse_per_joint': [0.1409248998122501, 1.1046193391429382, 0.12007093128879504],
 'conventional.rmse_mean': 0.45520505674799444,
 'conventional.nrmse_per_joint': [0.8222889487386633, 0.7985143665570406, 1.088022091981046],
 'conventional.usable_fraction': 0.3357142857142857,
 'conventional.per_seed_rmse_per_joint': [[0.13942727979763603, 1.0920988481234812, 0.11987383358015065],
                                          [0.14242251982686416, 1.117139830162395, 0.12026802899743942]],
 'conventional.dead_zone_rmse_vs_measured_per_joint': [0.2098527573933316, 1.0767901721221493, 0.2393751069174902],
 'hybrid.rmse_per_joint': [0.012994563216057641, 0.03482185890491536, 0.005493284161070637],
 'hybrid.rmse_mean': 0.01776990209401455,
 'hybrid.nrmse_per_joint': [0.07582255329246869, 0.025172250403809975, 0.04977736460125359],
 'hybrid.usable_fraction': 0.6615,
 'hybrid.per_seed_rmse_per_joint': [[0.012997222544302278, 0.034841840205416454, 0.005490316741739122],
                                    [0.012991903887813006, 0.03480187760441427, 0.005496251580402152]],
 'hybrid.dead_zone_rmse_vs_measured_per_joint': [0.038984779964730175, 0.15737196147836707, 0.1035779254741792],
 'masked.rmse_per_joint': [0.13243298320274027, 0.955484457730298, 0.10405715172838459],
 'masked.rmse_mean': 0.3973248642204743,
 'masked.nrmse_per_joint': [0.7727390878488334, 0.690706779687186, 0.9429133154368348],
 'masked.usable_fraction': 0.6615,
 'masked.per_seed_rmse_per_joint': [[0.12804238390163541, 0.8754297637577149, 0.10884849272848661],
                                    [0.13682358250384516, 1.0355391517028811, 0.09926581072828256]],
 'masked.dead_zone_rmse_vs_measured_per_joint': [0.21336496686661205, 1.0842556326239543, 0.21093275823829039],
 'mse_all.rmse_per_joint': [0.1304260094954315, 0.7344140044392253, 0.10667855191868084],
 'mse_all.rmse_mean': 0.32383952195111254,
 'mse_all.nrmse_per_joint': [0.7610285079433112, 0.5308979417293381, 0.9666671190290268],
 'mse_all.usable_fraction': 1.0,
 'mse_all.per_seed_rmse_per_joint': [[0.12087112776660965, 0.8350572852505063, 0.110003108953343],
                                     [0.1399808912242534, 0.6337707236279444, 0.10335399488401867]],
 'mse_all.dead_zone_rmse_vs_measured_per_joint': [0.20331432480029438, 0.9069416867503823, 0.1826292319450521],
 'rbd.rmse_per_joint': [0.012973709442074351, 0.034801539630619556, 0.005492417728732596],
 'rbd.rmse_mean': 0.017755888933808833,
 'rbd.nrmse_per_joint': [0.07570087268166961, 0.025157561875492337, 0.0497695134293265],
 'rbd.usable_fraction': 0.6615,
 'rbd.per_seed_rmse_per_joint': [[0.012973709442074351, 0.034801539630619556, 0.005492417728732596]],
 'rbd.dead_zone_rmse_vs_measured_per_joint': [0.03899475340739453, 0.15703554015762788, 0.10363606810914076],
 'data_efficiency.train_samples': [4000, 14000],
 'data_efficiency.masked.rmse_mean': [0.7190209895758741, 0.3973248642204743],
 'data_efficiency.masked.usable_samples': [8026, 27783],
 'data_efficiency.conventional.rmse_mean': [0.7078639316338433, 0.45520505674799444],
 'data_efficiency.conventional.usable_samples': [1713, 4700]}
GOLDEN_TRAIN: dict[str, Any] = {'threshold': [0.053893637395319695, 0.032744968427210724, 0.04082183590030593],
 'rmse_per_joint': [0.12804238390163541, 0.8754297637577149, 0.10884849272848661],
 'nrmse_per_joint': [0.7471201852386617, 0.632836325149396, 0.9863300258959802],
 'usable_fraction': 0.6615,
 'samples': [14000, 2000, 4000]}


def _assert_same(got: dict[str, Any], want: dict[str, Any]) -> None:
    assert sorted(got) == sorted(want), "the set of golden numbers changed"
    for key in want:
        np.testing.assert_allclose(np.asarray(got[key], dtype=float), np.asarray(want[key], dtype=float),
                                   rtol=RTOL, atol=0.0, err_msg=f"golden number {key} moved")


@pytest.fixture(scope="module")
def golden_inputs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("golden")
    return _simulate_bags(folder / "data"), _config_file(folder)


def test_offline_demo_steps_reproduce_the_recorded_numbers(golden_inputs, tmp_path):
    bags, config = golden_inputs
    report = _run_compare(bags, config, tmp_path / "compare")
    assert set(report["methods"]) == {"masked", "conventional", "mse_all", "rbd", "hybrid"}
    _assert_same(compare_numbers(report), GOLDEN)


def test_train_command_reproduces_the_recorded_numbers(golden_inputs, tmp_path):
    bags, config = golden_inputs
    _assert_same(train_numbers(_run_train(bags, config, tmp_path / "masked")), GOLDEN_TRAIN)


def test_the_golden_check_can_fail():
    """A change of one number by 1e-5 relative (ten times the tolerance) is caught."""
    want = {"x": [1.0, 2.0]}
    _assert_same({"x": [1.0, 2.0]}, want)
    with pytest.raises(AssertionError, match="golden number x moved"):
        _assert_same({"x": [1.0, 2.00002]}, want)


if __name__ == "__main__":  # print the golden values of the current code (see the module docstring)
    import pprint
    import tempfile
    from contextlib import redirect_stdout

    with tempfile.TemporaryDirectory() as tmp, redirect_stdout(sys.stderr):
        folder = Path(tmp)
        bags, cfg = _simulate_bags(folder / "data"), _config_file(folder)
        numbers = compare_numbers(_run_compare(bags, cfg, folder / "compare"))
        train = train_numbers(_run_train(bags, cfg, folder / "masked"))
    sys.stdout.write("GOLDEN: dict[str, Any] = " + pprint.pformat(numbers, width=116, sort_dicts=False) + "\n")
    sys.stdout.write("GOLDEN_TRAIN: dict[str, Any] = " + pprint.pformat(train, width=116, sort_dicts=False) + "\n")
