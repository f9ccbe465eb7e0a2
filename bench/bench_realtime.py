"""Benchmark of the controller's period under load, with and without real-time scheduling, in one run.

Four scenarios: the machine idle, and under the standard load (4 busy processes on 2 cores: each one a Python loop
that never sleeps, pinned to the first two CPUs this process may use, normal priority, each ending by itself after
a bounded time and killed in ``finally``), each with normal scheduling and with ``thread_priority: 50``,
``lock_memory: true`` (SCHED_FIFO, as ros2_control_node; :mod:`deadzone_id_ros.realtime`). Each scenario runs in a
fresh process of this file (``--scenario``); with real-time priority that process applies it to itself first, so the
hardware stand-in, the in-process node and the controller process it starts all run SCHED_FIFO 50, as the
hardware interface and the controller share the real-time loop under ros2_control.

Per scenario (model rbd, mode ctc_dob: no training needed):
- compute p99 (``ctrl_tick_p99_us_<scenario>``): the node's /joint_states callback in this process, message in to
  message out, at 1 kHz (bench_controller.node_ticks, sleeping between ticks instead of spinning), p99 [µs];
- late-tick fraction (``ctrl_late_tick_fraction_<scenario>``): the feedforward_controller executable answering 1 kHz
  stamped states (bench/_ros.stamp_loop): a state answered later than 2 ms, or never, is late. The garbage collector
  of this process (the hardware stand-in) is off during that window, so its pauses are not counted as the
  controller's (measured: with it on, about 1% of the states were answered late by the stand-in's own pauses).
  ``ctrl_late_bunched_fraction_<scenario>``: the part of the late fraction that is states never answered and sent
  less than half a period after the previous one (the stand-in catching up after a stall of its own: the controller's
  TickGate skips such a state when it is not yet due on its period grid). The stand-in skips the 1 kHz slots it
  overran itself, as ros2_control_node skips missed cycles, instead of catching up with a burst of states stamped
  microseconds apart
  (``standin_missed_fraction_<scenario>``: those slots send nothing and are judged neither way). Before it did,
  the bursts were 0.2-0.9% of the states and the controller skipped them as faster than its rate; a plain
  SCHED_FIFO 50 loop sleeping to 1 ms deadlines overshoots by more than 0.5 ms in 0.3-0.45% of its periods on
  this 2-vCPU VM, idle or loaded (measured), so the stand-in cannot avoid such stalls. An answer counts from its
  DDS reception time in the stand-in.
- raw counterpart (``raw_late_tick_fraction_<scenario>``, ``raw_latency_p99_us_<scenario>``): the same loop, in the same
  scenario, against bench/_echo.py, a bare rclpy node that echoes each state (started by this process, so with its
  scheduling): the floor that two Python processes over DDS reach on this machine, whatever the controller does.
Scenarios: ``idle``, ``idle_rt``, ``loaded``, ``loaded_rt``, and ``loaded_rt_sensing``: ``loaded_rt`` with the
controller's force sensing on (``sensing:=true`` and the bundled arm's sensing settings of bench/_sensing.py: the
estimate, its friction correction, the dead-zone band, the contact test and the wrench every tick, five more topics
published per tick), in the compute p99 (the in-process node gets the same parameters) and in the late-tick
fraction; its raw counterpart is the bare echo again, in that scenario. ``loaded_rt_sensing_every10``: the same with
``sensing_publish_every:=10`` (the estimate and the contact test on every state, the topics at 100 Hz).
``loaded_rt_sensing_worker``: the same sensing in a process of its own (``sensing_worker:=true``, normal scheduling;
the in-process tick then pays the pipe write). With sensing on, ``sense_estimate_late_fraction_<scenario>`` is the
share of the states whose ``~/external_torque`` came more than 20 ms after the state, or never (the contact
detection target), and ``sense_estimate_latency_p99_us_<scenario>`` the p99 of those that came.
``ctrl_rt_granted`` is 1 when the kernel granted SCHED_FIFO (else the ``*_rt`` figures were measured with normal
scheduling and say nothing about it).

Usage: ``python bench/bench_realtime.py [--quick]``. ``run(quick)`` returns the bench/results.json keys.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _ros import REPO, answered_loop, ros_env  # noqa: E402
from _sensing import BUNDLED_SENSING, ros_args  # noqa: E402

PARAMS = str(REPO / "config" / "feedforward_controller.yaml")
PRIORITY = 50  # ros2_control_node's default; moderate, and the kernel throttles SCHED_FIFO at sched_rt_runtime_us
LOAD_PROCESSES, LOAD_CPUS = 4, 2
# A busy process of the standard load: spins on the given CPUs until its own deadline (it cannot outlive the bench).
BUSY = "import os, sys, time\nos.sched_setaffinity(0, {int(c) for c in sys.argv[1].split(',')})\n" \
       "end = time.monotonic() + float(sys.argv[2])\nwhile time.monotonic() < end:\n    pass\n"


@contextmanager
def busy_load(processes: int, seconds: float):
    """``processes`` busy Python processes on the first :data:`LOAD_CPUS` CPUs allowed, for at most ``seconds``;
    killed when the block ends."""
    cpus = ",".join(str(c) for c in sorted(os.sched_getaffinity(0))[:LOAD_CPUS])
    procs = [subprocess.Popen([sys.executable, "-c", BUSY, cpus, str(seconds)], start_new_session=True)
             for _ in range(processes)]
    try:
        yield
    finally:
        for p in procs:
            p.kill()
        for p in procs:
            p.wait()


def scenario(rt: bool, seconds: float, sensing: int = 0, worker: bool = False) -> dict[str, float]:
    """One scenario in this process (``--scenario``): real-time scheduling for itself first if ``rt``; the controller
    (in process and as the executable) with the force sensing of bench/_sensing.py if ``sensing`` > 0, its topics
    published on every ``sensing``-th state (``sensing_publish_every``), in a process of its own if ``worker``
    (``sensing_worker``; the figures ``estimate_*``: how late the estimates came, :func:`_ros.stamp_loop`'s
    ``watch``)."""
    from bench_controller import node_ticks, reference_publisher

    from deadzone_id_ros.realtime import RealtimeConfig, apply_realtime

    granted = 0.0
    if rt:
        state = apply_realtime(RealtimeConfig(thread_priority=PRIORITY, lock_memory=True))
        granted = float(state.policy == "SCHED_FIFO")
        for warning in state.warnings:
            print(f"bench_realtime: {warning}", file=sys.stderr)
    extra = {**BUNDLED_SENSING, "sensing_publish_every": int(sensing), "sensing_worker": worker} if sensing else {}
    ticks = node_ticks("rbd", "", seconds, busy_wait=False, extra=extra)["tick"]
    cmd = [str(Path(sys.prefix) / "bin" / "feedforward_controller"), "--ros-args", "--params-file", PARAMS,
           "-p", "mode:=ctc_dob", "-p", "model:=rbd", "-p", "watchdog_timeout:=1.0", "-p", "stamped_command:=true",
           "-p", f"thread_priority:={PRIORITY if rt else 0}", "-p", f"lock_memory:={'true' if rt else 'false'}",
           *ros_args(extra)]
    # the hardware stand-in's own collector pauses must not count as the controller's (or the echo's) late ticks
    loop = answered_loop(cmd, "/feedforward_controller/command_stamped", seconds,
                         reference=reference_publisher(seconds), collector_off=True,
                         watch="/feedforward_controller/external_torque" if sensing else None)
    raw = answered_loop([sys.executable, str(Path(__file__).with_name("_echo.py"))], "/bench_echo", seconds,
                        collector_off=True)
    return {"raw_late_fraction": raw["late_fraction"], "raw_latency_p99_us": raw["latency_p99_us"],
            "tick_p99_us": float(np.percentile(ticks, 99)), "tick_median_us": float(np.median(ticks)),
            "late_fraction": loop["late_fraction"], "latency_p99_us": loop["latency_p99_us"], "rt_granted": granted,
            "bunched_fraction": loop["bunched_fraction"], "missed_fraction": loop["missed_fraction"],
            **{k.replace("watch_", "estimate_"): v for k, v in loop.items() if k.startswith("watch_")}}


def _run_scenario(rt: bool, seconds: float, attempts: int = 2, sensing: int = 0,
                  worker: bool = False) -> dict[str, float]:
    """:func:`scenario` in a fresh process of this file; its figures. A scenario whose controller never answered
    (seen twice in a row on a machine at load average 10: no DDS match within 60 s) is run once more, and says so.

    Raises:
        RuntimeError: every attempt failed (with the last one's output).
    """
    for attempt in range(1, attempts + 1):
        done = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--scenario", "rt" if rt else "plain",
                               "--seconds", str(seconds)] + (["--sensing", str(sensing)] if sensing else [])
                              + (["--worker"] if worker else []),
                              capture_output=True, text=True, env=ros_env(), timeout=600)
        if done.returncode == 0:
            sys.stderr.write(done.stderr[-2000:])
            # the last JSON line: a node's INFO logs (ROS 2 writes them on stdout) may come after it
            return json.loads(next(line for line in reversed(done.stdout.splitlines()) if line.startswith("{")))
        print(f"bench_realtime: scenario rt={rt} sensing={sensing} failed (attempt {attempt} of {attempts}): "
              f"{done.stderr.strip().splitlines()[-1] if done.stderr.strip() else done.returncode}", file=sys.stderr)
    raise RuntimeError(f"bench_realtime scenario rt={rt} sensing={sensing} failed:\n{done.stdout[-2000:]}"
                       f"{done.stderr[-3000:]}")


# (name, real-time priority, force sensing: its topics on every N-th state, 0 = off, the sensor in its own process)
# of the scenarios run without, then with the standard load
SCENARIOS = {False: (("idle", False, 0, False), ("idle_rt", True, 0, False)),
             True: (("loaded", False, 0, False), ("loaded_rt", True, 0, False), ("loaded_rt_sensing", True, 1, False),
                    ("loaded_rt_sensing_every10", True, 10, False), ("loaded_rt_sensing_worker", True, 1, True))}


def run(quick: bool = False) -> dict[str, float]:
    """Run the seven scenarios and return the ``ctrl_*`` (and ``sense_estimate_*``) keys of bench/results.json (times
    in µs)."""
    seconds = 4.0 if quick else 15.0
    out: dict[str, float] = {}
    granted = 1.0
    for loaded, scenarios in SCENARIOS.items():
        # bounded: each scenario of at most two attempts (ticks, discovery up to 60 s, loop) fits in this; then the
        # processes end by themselves even if this one is killed
        with busy_load(LOAD_PROCESSES if loaded else 0, len(scenarios) * 2 * (3 * seconds + 180)):
            for name, rt, sensing, worker in scenarios:
                t0 = time.perf_counter()
                fig = _run_scenario(rt, seconds, sensing=sensing, worker=worker)
                print(f"scenario {name}: {time.perf_counter() - t0:.0f} s, {fig}", flush=True)
                out[f"ctrl_late_tick_fraction_{name}"] = fig["late_fraction"]
                out[f"ctrl_tick_p99_us_{name}"] = fig["tick_p99_us"]
                out[f"ctrl_latency_p99_us_{name}"] = fig["latency_p99_us"]
                out[f"ctrl_late_bunched_fraction_{name}"] = fig["bunched_fraction"]
                out[f"standin_missed_fraction_{name}"] = fig["missed_fraction"]
                out[f"raw_late_tick_fraction_{name}"] = fig["raw_late_fraction"]
                out[f"raw_latency_p99_us_{name}"] = fig["raw_latency_p99_us"]
                for key in ("estimate_late_fraction", "estimate_latency_p99_us"):
                    if key in fig:  # how late the force estimates came (sensing on)
                        out[f"sense_{key}_{name}"] = fig[key]
                if rt:
                    granted = min(granted, fig["rt_granted"])
    out["ctrl_rt_granted"] = granted
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="4 s windows instead of 15 s")
    parser.add_argument("--scenario", choices=("plain", "rt"), default=None, help=argparse.SUPPRESS)
    parser.add_argument("--seconds", type=float, default=4.0, help=argparse.SUPPRESS)
    parser.add_argument("--sensing", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.scenario is not None:  # the child of _run_scenario: one scenario, its figures as JSON on stdout
        print(json.dumps(scenario(args.scenario == "rt", args.seconds, sensing=args.sensing, worker=args.worker)))
        return 0
    for key, value in run(args.quick).items():
        print(f"{key:34s} {value:12.4g}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
