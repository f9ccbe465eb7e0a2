"""Benchmark: MLP training throughput and the wall time of `compare` on 10 simulated minutes at 1 kHz.

1. ``train_samples_per_s``: Adam steps of the default MLP (9-256-256-3, ReLU) at batch 1024 with the masked loss on
   synthetic 3-joint data, measured with 1 and 2 torch threads; the key holds the better of the two (the
   per-thread figures are printed and returned too). Target: >= 150k samples/s on 2 cores.
2. ``compare_seconds_10min``: :func:`deadzone_id_ros.sim.offline.simulate` for 600 s at 1 kHz, the data pipeline
   (:func:`deadzone_id_ros.data.dataset.dataset_from_recordings`), then :func:`run_compare` with every method and the
   bundled config/training.yaml (3 seeds, data-efficiency curve). Only the compare itself is timed (the simulation
   and loading times are printed). With ``--quick``: 60 simulated seconds and the ``--quick`` settings, returned
   as ``compare_seconds_1min_quick`` instead.

Run: ``python bench/bench_train.py [--quick]``. The machine is shared: other processes on the two cores lower the
figures (load average is printed).
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

import numpy as np

from deadzone_id_ros.training.config import TrainConfig, load_train_config
from deadzone_id_ros.training.trainer import TrainArrays, train_mlp


def train_throughput(threads: int, steps: int) -> float:
    """Samples per second of Adam on the default MLP at batch 1024 (masked loss) with ``threads`` torch threads."""
    rng = np.random.default_rng(0)
    n = 200_000
    x = rng.normal(size=(n, 9))
    y = np.c_[np.sin(x[:, 0]), x[:, 1] * x[:, 2], x[:, 3]]
    r = rng.random((n, 3)) > 0.3
    cfg = TrainConfig(max_steps=steps, eval_interval=steps, num_threads=threads, progress=False, batch_size=1024)
    train_mlp(TrainArrays(x, y, r), None, "masked", cfg.with_overrides(max_steps=20, eval_interval=20))  # warm-up
    _, info = train_mlp(TrainArrays(x, y, r), None, "masked", cfg)
    return info.samples_per_s


def compare_time(seconds: float, quick: bool) -> float:
    """Wall time [s] of run_compare on ``seconds`` of simulated data (every method, bundled config)."""
    from deadzone_id_ros.data.dataset import dataset_from_recordings
    from deadzone_id_ros.resources import default_urdf
    from deadzone_id_ros.sim.offline import simulate
    from deadzone_id_ros.training.compare import quick_config, run_compare
    from deadzone_id_ros.training.pipeline import TrainingInputs

    t0 = time.perf_counter()
    rec = simulate(seconds, seed=1)
    ds = dataset_from_recordings([rec])
    print(f"simulated and loaded {ds.num_samples} samples in {time.perf_counter() - t0:.1f} s")
    cfg = load_train_config().with_overrides(progress=False)
    if quick:
        cfg = quick_config(cfg)
    inputs = TrainingInputs(ds.episodes, ds.joint_names, simulator=True, sim_config=None,
                           urdf_xml=default_urdf().read_text(), urdf_source=str(default_urdf()))
    with tempfile.TemporaryDirectory(prefix="bench_compare_") as tmp:
        t0 = time.perf_counter()
        report = run_compare(inputs, tmp, cfg, log=lambda m: None)
        secs = time.perf_counter() - t0
    for m, e in report.methods.items():
        print(f"  {m:>12s}: mean test RMSE {e.rmse_mean:.4f} ± {e.rmse_mean_std:.4f} N*m, "
              f"usable {e.usable_fraction:.1%}")
    if report.noise_floor is not None:
        print(f"  noise floor: {report.noise_floor.rmse_mean:.4f} N*m")
    return secs


def run(quick: bool = False) -> dict[str, float]:
    """Return {"train_samples_per_s", "train_samples_per_s_1thread", "train_samples_per_s_2threads",
    "compare_seconds_10min" (or "compare_seconds_1min_quick" with quick)}."""
    print(f"load average before: {os.getloadavg()[0]:.2f} (2 cores)")
    steps = 60 if quick else 300
    out: dict[str, float] = {}
    for threads in (1, 2):
        sps = train_throughput(threads, steps)
        out[f"train_samples_per_s_{threads}thread{'s' if threads > 1 else ''}"] = sps
        print(f"training, default MLP 9-256-256-3, batch 1024, {threads} thread(s): {sps:,.0f} samples/s")
    out["train_samples_per_s"] = max(out["train_samples_per_s_1thread"], out["train_samples_per_s_2threads"])
    key, seconds = ("compare_seconds_1min_quick", 60.0) if quick else ("compare_seconds_10min", 600.0)
    out[key] = compare_time(seconds, quick)
    print(f"compare on {seconds:.0f} simulated seconds at 1 kHz{' (--quick settings)' if quick else ''}: "
          f"{out[key]:.1f} s")
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    return out


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer steps; 60 s of data with --quick compare settings")
    print(run(parser.parse_args().quick))
