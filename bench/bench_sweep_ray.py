"""Benchmark: a sweep of 8 cells in-process and on a two-node Ray cluster started on this machine (issue 24).

A *cell* here is one ``compare`` (as in ``deadzone-id sweep``): one data set x one dead-zone alpha x one data fraction,
its 3 methods (masked, conventional, rbd) x 1 seed trained batched on a 32-32 network for a few steps, plus the
pick and the report files. The grid: one short simulated recording (:data:`SWEEP`: 20 s, or 12 s with ``--quick``)
x 4 alphas x 2 data fractions = 8 cells, sized so that the whole benchmark (both sweeps and the cluster start)
takes at most about 4 minutes on an idle 2-core machine (measured: 1.5 minutes at load average 5): the
figures are for the engine's overhead, not for model quality.

The cluster: ``ray start --head --num-cpus 1`` plus a second ``ray start --address HEAD --num-cpus 1``, each with
ports of its own (free ones picked here) and the head's ``--temp-dir`` in a fresh folder under /tmp, so that runs
in parallel do not clash. The same sweep runs once in this process (``--engine local``) and once with
``--address`` of the head. Figures:

- ``sweep_cells_per_hour_local`` / ``sweep_cells_per_hour_ray``: cells over the wall time of each sweep (the Ray
  one includes attaching to the running cluster, not starting it);
- ``sweep_seconds_local`` / ``sweep_seconds_ray``, ``ray_cluster_start_seconds`` (both nodes up);
- ``sweep_ray_overhead_s_per_cell``: Ray wall / cells - in-process wall / cells [s]: what a cell costs on the
  cluster beyond the in-process run, with the 2 nodes working in parallel (negative when the parallelism wins);
  ``sweep_ray_cluster_start_s_per_cell``: the cluster start spread over the cells (not in either wall time);
- ``sweep_ray_cpu_overhead_s_per_cell``: (Ray wall x its 2 CPUs - in-process wall) / cells: the CPU-seconds per
  cell the Ray path spends beyond the work itself (task start, shipping data and results, idle tail), taking the
  in-process run as one CPU's work; on shared cores it also holds what other processes took;
- ``sweep_ray_same_metrics``: 1 when every cell's RMSE of every method is the same on both paths.

Token authentication (on by default since Ray 2.59): the bench writes a token of its own into the cluster's temp
dir and points ``RAY_AUTH_TOKEN_PATH`` at it for the head, the second node and the driver (with
``RAY_AUTH_MODE=token``); ``~/.ray`` is left alone. The cluster is stopped in a ``finally`` by ending
the processes of its own session only (their command lines or open log files name its temp dir), never ``ray stop``,
which would end every Ray process of the machine, other users' included.
Run: ``python bench/bench_sweep_ray.py [--quick]``, or through ``make bench`` (bench/run_all.py). Needs the ray
extra (``make install-ray``; ``make bench`` installs it); without Ray it prints why and gives no figures.
"""

from __future__ import annotations

import importlib.util
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SWEEP = """\
data:
  - name: sim
    simulate: {{seconds: {seconds}, seed: 1}}
alpha: [0.05, 0.1, 0.2, 0.3]
fractions: [0.5, 1.0]
seeds: 1
methods: [masked, conventional, rbd]
train: {{hidden_sizes: [32, 32], max_steps: {steps}, eval_interval: 20, batch_size: 512, block_seconds: 1.0,
        efficiency_fractions: [1.0]}}
"""
SIZES = {False: {"seconds": 20, "steps": 60}, True: {"seconds": 12, "steps": 40}}  # --quick: True


def _free_ports(n: int) -> list[int]:
    socks = [socket.socket() for _ in range(n)]
    for s in socks:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


def _ray(*args: str) -> None:
    ray_bin = str(Path(sys.executable).with_name("ray"))
    # workers at niceness 0, as engine.py's local clusters (Ray's default 15 starves them on a busy machine)
    env = dict(os.environ, RAY_USAGE_STATS_ENABLED="0", RAY_AUTH_MODE="token", RAY_worker_niceness="0")
    done = subprocess.run([ray_bin, "start", *args, "--disable-usage-stats"], env=env, capture_output=True,
                          text=True, timeout=180)
    if done.returncode != 0:
        raise RuntimeError(f"ray start {' '.join(args)} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")


def _node_ports() -> list[str]:
    p = _free_ports(6)
    return ["--node-manager-port", str(p[0]), "--object-manager-port", str(p[1]), "--dashboard-agent-grpc-port",
            str(p[2]), "--dashboard-agent-listen-port", str(p[3]), "--metrics-export-port", str(p[4]),
            "--runtime-env-agent-port", str(p[5])]


def _holds(proc: Path, marker: str) -> bool:
    """The process's command line or one of its open files names ``marker`` (Ray's agents rename their command
    line to ``ray::DashboardAgent`` but keep their logs under the session folder open)."""
    if marker in (proc / "cmdline").read_bytes().decode(errors="replace"):
        return True
    for fd in (proc / "fd").iterdir():
        try:
            if marker in os.readlink(fd):
                return True
        except OSError:
            continue
    return False


def _session_pids(marker: str) -> list[int]:
    pids = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit() and int(proc.name) != os.getpid():
            try:
                if _holds(proc, marker):
                    pids.append(int(proc.name))
            except OSError:
                continue
    return pids


def stop_cluster(marker: str, grace_s: float = 10.0) -> int:
    """SIGTERM, then SIGKILL after ``grace_s``, every process whose command line holds ``marker``; returns how many
    were found."""
    pids = _session_pids(marker)
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in _session_pids(marker):
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + grace_s
        while _session_pids(marker) and time.monotonic() < deadline:
            time.sleep(0.2)
    return len(pids)


def _rmse(report) -> dict[tuple[str, str], float | None]:
    return {(c.key, m): e.rmse_mean for c in report.cells for m, e in c.methods.items()}


def run(quick: bool = False) -> dict[str, float]:
    if importlib.util.find_spec("ray") is None:  # not imported here: Ray reads RAY_AUTH_MODE when imported
        print("bench_sweep_ray: skipped, Ray is not installed (make install-ray)", file=sys.stderr)
        return {}
    from deadzone_id_ros.experiments.sweep.config import load_sweep
    from deadzone_id_ros.experiments.sweep.run import run_sweep

    work = Path(tempfile.mkdtemp(prefix="dzsweep"))
    temp = tempfile.mkdtemp(prefix="dzray", dir="/tmp")  # short: Ray's socket paths must stay under 107 chars
    (work / "sweep.yaml").write_text(SWEEP.format(**SIZES[quick]))
    sweep = load_sweep(work / "sweep.yaml")
    quiet = lambda m: None  # noqa: E731
    print(f"bench_sweep_ray: load average {os.getloadavg()} at the start")
    try:
        # the data set is simulated once, outside both timings
        from deadzone_id_ros.experiments.sweep.run import load_data_set

        load_data_set(sweep.data[0], work / "local", quiet)
        shutil.copytree(work / "local" / "data", work / "ray" / "data")
        t0 = time.perf_counter()
        local = run_sweep(sweep, work / "local", engine="local", log=quiet)
        t_local = time.perf_counter() - t0
        print(f"in-process: {len(local.cells)} cells in {t_local:.1f} s ({len(local.failed)} failed)")

        # this cluster's own token, in its temp dir: Ray 2.60's `ray start` does not create one, and ~/.ray is the
        # user's (measured: on a machine without ~/.ray/auth_token the head refused to start)
        token = Path(temp) / "auth_token"
        token.write_text(secrets.token_hex(32))
        token.chmod(0o600)
        os.environ["RAY_AUTH_TOKEN_PATH"] = str(token)
        port = _free_ports(1)[0]
        t0 = time.perf_counter()
        _ray("--head", "--num-cpus", "1", "--port", str(port), "--temp-dir", temp, "--include-dashboard=false",
             "--node-ip-address", "127.0.0.1", *_node_ports())
        _ray("--address", f"127.0.0.1:{port}", "--num-cpus", "1", "--node-ip-address", "127.0.0.1", *_node_ports())
        t_start = time.perf_counter() - t0
        print(f"two-node cluster (1 CPU each) up in {t_start:.1f} s")
        os.environ["RAY_AUTH_MODE"] = "token"  # token authentication (Ray >= 2.59): the driver sends that token
        t0 = time.perf_counter()
        remote = run_sweep(sweep, work / "ray", engine="ray", address=f"127.0.0.1:{port}", log=print)
        t_ray = time.perf_counter() - t0
        print(f"ray: {len(remote.cells)} cells in {t_ray:.1f} s ({len(remote.failed)} failed)")
    finally:
        found = stop_cluster(temp)
        print(f"stopped the cluster: {found} processes; load average {os.getloadavg()}")
        shutil.rmtree(work, ignore_errors=True)
        shutil.rmtree(temp, ignore_errors=True)
    n = len(local.cells)
    return {
        "sweep_cells": float(n),
        "sweep_seconds_local": t_local,
        "sweep_seconds_ray": t_ray,
        "sweep_cells_per_hour_local": 3600.0 * n / t_local,
        "sweep_cells_per_hour_ray": 3600.0 * n / t_ray,
        "ray_cluster_start_seconds": t_start,
        "sweep_ray_overhead_s_per_cell": (t_ray - t_local) / n,
        "sweep_ray_cluster_start_s_per_cell": t_start / n,
        "sweep_ray_cpu_overhead_s_per_cell": (2 * t_ray - t_local) / n,
        "sweep_ray_same_metrics": float(_rmse(local) == _rmse(remote) and not local.failed and not remote.failed),
    }


if __name__ == "__main__":
    for key, value in run(quick="--quick" in sys.argv[1:]).items():
        print(f"{key}: {value:.3f}")
