"""Benchmark: MLP training throughput and the wall time of `compare` on 10 simulated minutes at 1 kHz.

1. ``train_samples_per_s``: Adam steps of the default MLP (9-256-256-3, ReLU) at batch 1024 with the masked loss on
   synthetic 3-joint data, measured with 1 and 2 torch threads; the key holds the better of the two (the
   per-thread figures are printed and returned too). Raw counterpart on the same tensors and thread count: a bare
   torch loop (the same nn.Sequential, torch.optim.Adam, random batches, the masked loss written inline, nothing
   else) -> ``raw_torch_samples_per_s``; ``train_ratio_raw_torch`` = train_mlp / bare loop (2 threads).
   ``train_batched_speedup``: wall time of 6 models (3 seeds x masked/mse) trained one by one with train_mlp over
   the wall time of the same 6 with :func:`deadzone_id_ros.training.trainer.train_mlps` (same steps, 1 thread).
2. ``compare_seconds_10min``: :func:`deadzone_id_ros.sim.offline.simulate` for 600 s at 1 kHz, the data pipeline
   (:func:`deadzone_id_ros.data.dataset.dataset_from_recordings`), then :func:`run_compare` with every method and the
   bundled config/training.yaml (3 seeds, data-efficiency curve). Only the compare itself is timed (the simulation
   and loading times are printed). With ``--quick``: 60 simulated seconds and the ``--quick`` settings, returned
   as ``compare_seconds_1min_quick`` instead. ``compare_cpu_seconds_10min`` (``..._1min_quick``): the CPU time of
   the same run (every thread of the process and of its training workers, ``TrainConfig.workers``), the figure to
   read when other processes share the two cores.

Run: ``python bench/bench_train.py [--quick]``. The machine is shared: other processes on the two cores lower the
figures (load average is printed).
"""

from __future__ import annotations

import argparse
import os
import resource
import tempfile
import time

import numpy as np

from deadzone_id_ros.training.config import TrainConfig, load_train_config
from deadzone_id_ros.training.trainer import TrainArrays, train_mlp


def _data(n: int = 200_000):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(n, 9))
    y = np.c_[np.sin(x[:, 0]), x[:, 1] * x[:, 2], x[:, 3]]
    r = rng.random((n, 3)) > 0.3
    return x, y, r


def train_throughput(threads: int, steps: int) -> float:
    """Samples per second of Adam on the default MLP at batch 1024 (masked loss) with ``threads`` torch threads."""
    x, y, r = _data()
    cfg = TrainConfig(max_steps=steps, eval_interval=steps, num_threads=threads, progress=False, batch_size=1024)
    train_mlp(TrainArrays(x, y, r), None, "masked", cfg.with_overrides(max_steps=20, eval_interval=20))  # warm-up
    _, info = train_mlp(TrainArrays(x, y, r), None, "masked", cfg)
    return info.samples_per_s


def raw_torch_throughput(threads: int, steps: int) -> float:
    """Samples per second of a bare torch Adam loop on the same standardized tensors (masked loss inline)."""
    import torch

    from deadzone_id_ros.models.mlp import MLPConfig, build_torch_mlp

    x, y, r = _data()
    torch.set_num_threads(threads)
    torch.manual_seed(0)
    xt = torch.from_numpy(((x - x.mean(0)) / x.std(0)).astype(np.float32))
    yt = torch.from_numpy(((y - y.mean(0)) / y.std(0)).astype(np.float32))
    rt = torch.from_numpy(r.astype(np.float32))
    net = build_torch_mlp(9, 3, MLPConfig((256, 256), "relu"))
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    gen = torch.Generator().manual_seed(0)

    def loop(n_steps: int) -> None:
        for _ in range(n_steps):
            idx = torch.randint(len(xt), (1024,), generator=gen)
            m = rt[idx]
            loss = (m * (net(xt[idx]) - yt[idx]) ** 2).sum() / m.sum().clamp(min=1.0)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()

    loop(20)  # warm-up
    t0 = time.perf_counter()
    loop(steps)
    return steps * 1024 / (time.perf_counter() - t0)


def batched_speedup(steps: int) -> tuple[float, float]:
    """(seconds one by one, seconds batched) for 6 models of the default size, 1 thread, no early stop."""
    from deadzone_id_ros.training.trainer import MLPSpec, train_mlps

    x, y, r = _data(50_000)
    arrays = TrainArrays(x, y, r)
    cfg = TrainConfig(max_steps=steps, eval_interval=steps, num_threads=1, progress=False, batch_size=1024)
    specs = [MLPSpec(arrays, None, loss, seed) for loss in ("masked", "mse") for seed in range(3)]
    t0 = time.perf_counter()
    for sp in specs:
        train_mlp(sp.train, None, sp.loss, cfg.with_overrides(seed=sp.seed))
    alone = time.perf_counter() - t0
    t0 = time.perf_counter()
    train_mlps(specs, cfg)
    return alone, time.perf_counter() - t0


def _cpu_seconds() -> float:
    """CPU time [s] of this process and of its waited-for children (the training workers)."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def compare_time(seconds: float, quick: bool) -> tuple[float, float]:
    """(wall time, CPU time) [s] of run_compare on ``seconds`` of simulated data (every method, bundled config)."""
    from deadzone_id_ros.data.dataset import dataset_from_recordings
    from deadzone_id_ros.experiments.compare.run import quick_config, run_compare
    from deadzone_id_ros.resources import default_urdf
    from deadzone_id_ros.sim.offline import simulate
    from deadzone_id_ros.training.parallel import worker_count
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
        t0, c0 = time.perf_counter(), _cpu_seconds()
        report = run_compare(inputs, tmp, cfg, log=lambda m: None)
        secs, cpu = time.perf_counter() - t0, _cpu_seconds() - c0
    print(f"compare: {secs:.1f} s wall, {cpu:.1f} s CPU ({cfg.num_threads} torch thread(s) per network, "
          f"{worker_count(cfg, 1000)} worker process(es))")
    for m, e in report.methods.items():
        print(f"  {m:>12s}: mean test RMSE {e.rmse_mean:.4f} ± {e.rmse_mean_std:.4f} N*m, "
              f"usable {e.usable_fraction:.1%}")
    if report.noise_floor is not None:
        print(f"  noise floor: {report.noise_floor.rmse_mean:.4f} N*m")
    return secs, cpu


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
    out["raw_torch_samples_per_s"] = raw_torch_throughput(2, steps)
    out["train_ratio_raw_torch"] = out["train_samples_per_s_2threads"] / out["raw_torch_samples_per_s"]
    print(f"bare torch loop, same tensors, 2 threads: {out['raw_torch_samples_per_s']:,.0f} samples/s; "
          f"ratio {out['train_ratio_raw_torch']:.2f}")
    alone, batched = batched_speedup(40 if quick else 150)
    out["train_batched_speedup"] = alone / batched
    print(f"6 models one by one {alone:.1f} s, batched (train_mlps) {batched:.1f} s: {alone / batched:.2f}x")
    key, seconds = ("compare_seconds_1min_quick", 60.0) if quick else ("compare_seconds_10min", 600.0)
    out[key], out[key.replace("_seconds_", "_cpu_seconds_")] = compare_time(seconds, quick)
    print(f"compare on {seconds:.0f} simulated seconds at 1 kHz{' (--quick settings)' if quick else ''}: "
          f"{out[key]:.1f} s")
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    return out


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer steps; 60 s of data with --quick compare settings")
    print(run(parser.parse_args().quick))
