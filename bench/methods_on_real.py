"""Test nRMSE of chosen methods on the split that ``deadzone-id demo-real`` makes of one shared real recording (or
of a simulated bag), without the rest of the comparison: the figures of docs/identification.md (issue 35).

    python bench/methods_on_real.py kuka|A0|C0|BAG_DIR METHOD[,METHOD...] [SEEDS, e.g. 0,1] [--full]

Same loading and split as demo-real (KUKA: 2 s blocks; DFKI: the CSV converted as demo-real does, 1 s blocks;
0.1 s Savitzky–Golay window), the ``--quick`` training settings (600 steps; ``--full``: the bundled training
settings that ``make demo-real`` trains with, up to 2000 steps), the real recordings from
../shared/data/real (``DEADZONE_REAL_DIR`` overrides). A BAG_DIR is a simulated bag (default training settings'
blocks) on the robot its episode.yaml names (``deadzone-id simulate --robot panda``; the bundled 3-DOF arm when it
names none). Prints, per method, the test normalized RMSE (RMSE / std of the measured torque on each joint's moving
pairs, mean over joints) per seed, its mean and its std over the seeds (ddof = 1), and the validation nRMSE the pick
reads.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import yaml

from deadzone_id_ros.cli.demo import DFKI_COLUMNS
from deadzone_id_ros.data.convert import convert_csv, parse_joint_spec
from deadzone_id_ros.data.dataset import DatasetConfig
from deadzone_id_ros.experiments.compare.run import quick_config
from deadzone_id_ros.training.config import load_train_config
from deadzone_id_ros.training.evaluate import evaluate_model
from deadzone_id_ros.training.fit import fit_plans
from deadzone_id_ros.training.pipeline import load_inputs, prepare_data, shared_fits
from deadzone_id_ros.training.planner import plan_method


def _quiet(_: str) -> None:
    """Drop a log line."""


def main(argv: list[str]) -> None:
    full = "--full" in argv
    argv = [a for a in argv if a != "--full"]
    if len(argv) < 2:
        raise SystemExit(__doc__)
    real = Path(os.environ.get("DEADZONE_REAL_DIR", Path(__file__).resolve().parents[1] / ".." / "shared" / "data"
                               / "real"))
    which, methods = argv[0], argv[1].split(",")
    seeds = [int(s) for s in (argv[2] if len(argv) > 2 else "0").split(",")]
    block: float | None
    if which == "kuka":
        bags, urdf, block = [real / "kuka_lwr4_fri.bag"], "kuka_lwr4plus", 2.0
    elif which in ("A0", "C0"):
        csv = next((real / "dfki_double_pendulum").glob(f"design_{which}_*.csv"))
        bag = Path(tempfile.mkdtemp()) / csv.stem
        convert_csv(csv, bag, "time", [parse_joint_spec(s) for s in DFKI_COLUMNS],
                    metadata={"robot": "dfki_double_pendulum", "notes": ""})
        bags, urdf, block = [bag], f"dfki_double_pendulum_{which.lower()}", 1.0
    else:  # a simulated bag: its robot is the one its episode.yaml names (the bundled arm when it names none)
        meta = Path(which) / "episode.yaml"
        robot = (yaml.safe_load(meta.read_text()) or {}).get("robot") if meta.is_file() else None
        bags, urdf, block = [Path(which)], str(robot or "three_dof_arm"), None
    base = load_train_config()
    cfg = base if block is None else base.with_overrides(block_seconds=block)
    cfg = cfg if full else quick_config(cfg)
    cfg = cfg.with_overrides(seeds=len(seeds))
    inputs = load_inputs(bags, DatasetConfig(savgol_window_s=0.1), simulator="no", urdf=urdf, log=_quiet)
    data = prepare_data(inputs, cfg, _quiet)
    shared = shared_fits(inputs, data, cfg, _quiet, "N·m")
    for m in methods:
        t0 = time.time()
        fits = fit_plans(plan_method(m, seeds, shared), cfg)
        test = [evaluate_model(f.model, data.test).nrmse_mean for f in fits]
        val = [evaluate_model(f.model, data.val).nrmse_mean for f in fits]
        std = f" ± {np.std(test, ddof=1):.4f}" if len(test) > 1 else ""
        print(f"{which} {m}: test nRMSE {np.mean(test):.4f}{std} (seeds {np.round(test, 4).tolist()}), validation "
              f"{np.mean(val):.4f} [{time.time() - t0:.0f} s]", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
