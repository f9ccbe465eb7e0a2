"""Train many networks, each alone, over worker processes: how ``compare`` and ``train`` use every core.

Each network is trained by itself (:func:`~.trainer.train_mlps` with one spec, ``num_threads`` torch threads), so its
weights are the same bit for bit whatever the number of workers or the order the workers take the networks in. With
``workers`` > 1 a pool of forked processes takes the networks one at a time from a shared queue (the longest tail is
one network); the forked workers inherit the training arrays, so nothing large is copied or pickled, and only each
network's weights and training summary come back.

Why processes and not torch threads: a 9-256-256-3 step at batch 1024 is about 10 ms of work on one core, too short
for two OpenMP threads to share well; on the 2-core bench machine two threads gave 1.58 times the throughput of one
when alone (bench/results.json: 205k vs 130k samples/s) and lose badly as soon as another process takes one of the
cores (their barriers wait for the descheduled thread), whereas single-threaded processes share nothing but the
memory bus: alone they can approach 2 times, and under load each simply gets its share of the cores. Why one
network at a time and not one stack of all of them (:class:`~.batched.StackedMLP`): on one core a stack cost the
same CPU time per network and step as one network alone (9-11 ms for stacks of 1, 3, 9 and 27 networks, measured
with ``time.process_time`` on the shared machine; the 1024 x 256 x 256 GEMMs already run at the core's speed and
a batched GEMM only adds the copy of the broadcast bias), so stacking saves nothing, while separate networks balance
over the workers and make the result independent of how the networks are grouped.
"""

from __future__ import annotations

import multiprocessing
import os
import sys
from collections.abc import Sequence

from ..models.mlp import MLPWeights
from .config import TrainConfig
from .trainer import MLPSpec, TrainInfo, train_mlps

__all__ = ["available_cores", "train_each", "worker_count"]

# The job of the current pool, inherited by its forked workers (set only while train_each runs).
_JOB: tuple[list[MLPSpec], TrainConfig] | None = None


def available_cores() -> int:
    """CPU cores this process may run on (``os.sched_getaffinity``; ``os.cpu_count`` where that does not exist)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def worker_count(config: TrainConfig, n_networks: int) -> int:
    """Worker processes for ``n_networks`` networks: ``config.workers`` (0: :func:`available_cores` divided by
    ``config.num_threads``), at most one per network, at least one."""
    wanted = config.workers or max(1, available_cores() // config.num_threads)
    return max(1, min(wanted, n_networks))


def _train_one(k: int) -> tuple[int, tuple[MLPWeights, TrainInfo]]:
    """(k, trained network k of the current job); runs in a forked worker."""
    assert _JOB is not None, "train_each sets the job before the pool forks"
    specs, config = _JOB
    return k, train_mlps([specs[k]], config)[0]


def train_each(specs: Sequence[MLPSpec], config: TrainConfig) -> list[tuple[MLPWeights, TrainInfo]]:
    """Train every spec's network alone (``train_mlps([spec], config)``), over :func:`worker_count` processes.

    Args:
        specs: the networks (data, loss, seed, validation each).
        config: training settings; ``workers`` and ``num_threads`` set the parallelism (see the module docstring).

    Returns:
        [(best weights, info)] in the order of ``specs``, equal bit for bit to training each alone in this process.

    Raises:
        DataError, ValueError: as :func:`~.trainer.train_mlps`, for the first network that raises.
    """
    global _JOB
    n = worker_count(config, len(specs))
    # A process that has used Ray in-process keeps its gRPC threads after ray.shutdown(); a fork then copies their
    # held locks and the child hangs (measured: a forked worker of the test suite waited on a futex for 10 min after
    # the Ray engine tests). Such a process trains in order (the same weights, bit for bit).
    if n == 1 or "fork" not in multiprocessing.get_all_start_methods() or "ray" in sys.modules:
        return [train_mlps([s], config)[0] for s in specs]
    _JOB = (list(specs), config)
    # close() + join(), not the with-block's terminate(): terminate() holds the task queue's lock and SIGTERMs the
    # idle workers, and a worker forked from a process with a SIGTERM handler of its own (rclpy's, or a CLI's run
    # in-process) does not die of it: measured, the test suite hung in Pool.terminate's join for 10 min
    pool = multiprocessing.get_context("fork").Pool(n)
    try:
        done = dict(pool.imap_unordered(_train_one, range(len(specs))))
        pool.close()  # the idle workers get the end sentinel and exit on their own
    except BaseException:
        pool.terminate()
        raise
    finally:
        pool.join()
        _JOB = None
    return [done[k] for k in range(len(specs))]
