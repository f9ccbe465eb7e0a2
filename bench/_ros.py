"""Shared helpers of the ROS benchmarks: process start/stop, and the 1 kHz state -> answer loop measured by stamp.

The loop plays the hardware: it publishes sensor_msgs/JointState on /joint_states at 1 kHz, stamped with the wall
clock (``time.time_ns()``, the ROS system clock) at the moment of sending, and listens for an answer that carries
the stamp of the state it answers (the controller's ``~/command_stamped``, or the raw echo's copy). The latency of a
state is the wall time its answer arrives minus its own stamp, so an answer that comes one or more periods late is
counted as late as it is. The same function measures the controller and the bare rclpy ping-pong.
"""

from __future__ import annotations

import gc
import math
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
NAMES = ("joint1", "joint2", "joint3")
LATE_S = 2e-3  # a state answered later than this (or never) is a late tick
# a force estimate published later than this after its state (or never) is late: the contact detection target (a push
# detected within 20 ms)
WATCH_LATE_S = 20e-3


def ros_env() -> dict[str, str]:
    """Environment for child nodes (loopback discovery, this run's domain id) and set it in this process too."""
    env = {**os.environ, "ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST"}
    env.setdefault("ROS_DOMAIN_ID", str(10 + os.getpid() % 90))
    env.setdefault("AMENT_PREFIX_PATH", sys.prefix)
    os.environ.update({k: env[k] for k in ("ROS_AUTOMATIC_DISCOVERY_RANGE", "ROS_DOMAIN_ID", "AMENT_PREFIX_PATH")})
    return env


def start(cmd: list[str]) -> tuple[subprocess.Popen, tempfile.TemporaryFile]:
    """Start ``cmd`` in its own session with its output in a temporary file."""
    log = tempfile.TemporaryFile()
    return subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=ros_env(), start_new_session=True), log


def stop(proc: subprocess.Popen) -> None:
    """SIGINT, then kill after 10 s."""
    proc.send_signal(signal.SIGINT)
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


@contextmanager
def realtime_threads(priority: int) -> Iterator[str]:
    """SCHED_FIFO at ``priority`` (1..99) for this process's threads during the block, as the nodes it talks to have
    (threads started meanwhile inherit it); afterwards each thread that was there before gets its policy back, and
    those started meanwhile get normal scheduling. Yields "" or the kernel's refusal (the block then runs with normal
    scheduling).

    A process that stands in for part of the graph (the live soak's relay) must not be the part that a busy machine
    starves: at normal priority beside 4 busy processes it fell behind the real-time nodes by up to 100 ms and passed
    states on in bursts, of which the controller's queue kept only the newest.

    Raises:
        RuntimeError: a thread could not be given its policy back (named, with the reason).
    """
    from deadzone_id_ros.realtime import RealtimeConfig, apply_realtime

    def threads() -> set[int]:
        return {int(t) for t in os.listdir("/proc/self/task")}

    before = {}
    for tid in threads():
        try:
            before[tid] = (os.sched_getscheduler(tid), os.sched_getparam(tid))
        except ProcessLookupError:
            continue
    try:
        yield "; ".join(apply_realtime(RealtimeConfig(thread_priority=priority)).warnings)
    finally:
        done: set[int] = set()
        failed: list[str] = []
        while todo := threads() - done:  # again until no thread is new: one may start another meanwhile
            for tid in todo:
                policy, param = before.get(tid, (os.SCHED_OTHER, os.sched_param(0)))
                try:
                    os.sched_setscheduler(tid, policy, param)
                except ProcessLookupError:
                    pass
                except OSError as err:
                    failed.append(f"thread {tid}: {err}")
            done |= todo
        if failed:
            raise RuntimeError(f"realtime_threads: could not restore the scheduling of {', '.join(failed)}")


def log_tail(log) -> str:
    log.seek(0)
    return log.read().decode(errors="replace")[-2000:]


def answered_loop(cmd: list[str], answer_topic: str, seconds: float, *, reference=None,
                  collector_off: bool = False, watch: str | None = None) -> dict[str, float]:
    """Start ``cmd`` (the answering process), run :func:`stamp_loop` against its answers on ``answer_topic``, stop it.

    Args:
        collector_off: freeze and disable this process's garbage collector during the loop, so that the stand-in's
            own collector pauses do not count as late answers.
        watch: as :func:`stamp_loop`'s.

    Returns:
        :func:`stamp_loop`'s figures.

    Raises:
        RuntimeError: no answer (the message ends with the answering process's log tail).
    """
    proc, log = start(cmd)
    if collector_off:
        gc.freeze()
        gc.disable()
    try:
        return stamp_loop(answer_topic, seconds, reference=reference, watch=watch)
    except RuntimeError as err:
        raise RuntimeError(f"{err}: {log_tail(log)}") from err
    finally:
        gc.enable()
        stop(proc)


def stamp_loop(answer_topic: str, seconds: float, *, reference=None, watch: str | None = None) -> dict[str, float]:
    """Publish 1 kHz stamped states for ``seconds`` after the first answer; return latency/rate figures.

    Args:
        answer_topic: JointState topic whose header stamp is the stamp of the answered state.
        seconds: measured window [s] (after discovery; the window starts with nothing in flight).
        reference: optional callable ``(node) -> callable(now_ns)`` publishing reference windows; called every
            0.5 s of the window, as the excitation node does in the demo.
        watch: optional second JointState topic stamped with the state it was computed from (the force sensor's
            ``external_torque``): its figures ``watch_*`` are those of a slower answer, judged against
            :data:`WATCH_LATE_S`.

    Returns:
        latency_median_us, latency_p99_us (answered states), late_fraction (answered after ``LATE_S`` or never),
        answered_rate_hz (answers per second of window), state_rate_hz, bunched_fraction (the part of
        late_fraction that is states never answered and sent less than half a period after the previous one),
        missed_fraction (the 1 kHz slots this stand-in overran and skipped, as ros2_control_node skips the cycles
        it missed: no state, so no late answer, is counted for them); with ``watch``, watch_late_fraction (states
        of the window whose message on ``watch`` came after :data:`WATCH_LATE_S`, or never), watch_latency_median_us
        and watch_latency_p99_us (those that came). An answer's arrival is its DDS reception
        time in this process, so the stand-in's own delay in taking it is not counted against the answerer.
    """
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.node import Node
    from sensor_msgs.msg import JointState

    ros_env()
    ctx = rclpy.Context()
    rclpy.init(context=ctx)
    node = Node("bench_hw", context=ctx)
    answers: dict[int, int] = {}  # state stamp [ns] -> arrival [ns]

    def on_answer(m: JointState, info) -> None:
        # the answer's arrival is its DDS reception time in this process (system clock, as the state stamps), not
        # the moment this loop got round to its callback: the stand-in's own delays are not the answerer's
        arrival = int(info.get("received_timestamp") or 0) or time.time_ns()
        answers.setdefault(m.header.stamp.sec * 1_000_000_000 + m.header.stamp.nanosec, arrival)

    node.create_subscription(JointState, answer_topic, on_answer, 100)
    watched: dict[int, int] = {}
    if watch is not None:
        node.create_subscription(JointState, watch, lambda m, info: watched.setdefault(
            m.header.stamp.sec * 1_000_000_000 + m.header.stamp.nanosec,
            int(info.get("received_timestamp") or 0) or time.time_ns()), 1000)
    pub = node.create_publisher(JointState, "/joint_states", 10)
    send_ref = reference(node) if reference is not None else None
    ex = SingleThreadedExecutor(context=ctx)
    ex.add_node(node)
    msg = JointState(name=list(NAMES), position=[0.0, 0.3, 0.6], velocity=[0.0] * 3, effort=[0.0] * 3)

    def publish() -> int:
        ns = time.time_ns()
        msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(ns, 1_000_000_000)
        pub.publish(msg)
        return ns

    try:
        deadline = time.monotonic() + 60
        while not answers and time.monotonic() < deadline:  # discovery and start-up
            publish()
            if send_ref is not None:
                send_ref(time.time_ns())
            ex.spin_once(timeout_sec=0.02)
        if not answers:
            raise RuntimeError(f"no answer on {answer_topic} within 60 s")
        end_warm = time.monotonic() + 1.0  # one second of 1 kHz traffic before the window
        sent: list[int] = []
        t_next = time.perf_counter()
        next_ref = 0
        k = skipped = 0
        measuring = False
        while True:
            now = time.monotonic()
            if not measuring and now >= end_warm:
                measuring, k, next_ref, skipped = True, 0, 0, 0
                end = t_next + seconds
            if measuring and t_next >= end:
                break
            ns = publish()
            if measuring:
                sent.append(ns)
                if send_ref is not None and k >= next_ref:
                    send_ref(ns)
                    next_ref += 500
                k += 1
            t_next += 1e-3
            if (behind := time.perf_counter() - t_next) > 0:
                # an overrun of this stand-in: skip the slots it missed, as ros2_control_node's loop does, instead
                # of sending a burst of states stamped within microseconds of each other; counted in missed_fraction
                missed = math.ceil(behind / 1e-3)
                t_next += missed * 1e-3
                if measuring:
                    k += missed
                    skipped += missed
            while (p := time.perf_counter()) < t_next:
                ex.spin_once(timeout_sec=max(0.0, t_next - p))
        drain = time.monotonic() + 0.2  # answers still in flight for the last states
        while time.monotonic() < drain:
            ex.spin_once(timeout_sec=0.01)
    finally:
        node.destroy_node()
        rclpy.shutdown(context=ctx)
    sent_arr = np.array(sent, dtype=np.int64)
    arrival = np.array([answers.get(int(s), -1) for s in sent_arr], dtype=np.int64)
    answered = arrival >= 0
    lat = (arrival[answered] - sent_arr[answered]) * 1e-3  # µs
    late = ~answered | ((arrival - sent_arr) > LATE_S * 1e9)
    window = (sent_arr[-1] - sent_arr[0]) * 1e-9 + 1e-3
    extra: dict[str, float] = {}
    if watch is not None:
        w_arrival = np.array([watched.get(int(s), -1) for s in sent_arr], dtype=np.int64)
        w_ok = w_arrival >= 0
        w_lat = (w_arrival[w_ok] - sent_arr[w_ok]) * 1e-3
        extra = {"watch_late_fraction": float(np.mean(~w_ok | ((w_arrival - sent_arr) > WATCH_LATE_S * 1e9))),
                 "watch_latency_median_us": float(np.median(w_lat)) if len(w_lat) else float("nan"),
                 "watch_latency_p99_us": float(np.percentile(w_lat, 99)) if len(w_lat) else float("nan")}
    return {**extra,
        "latency_median_us": float(np.median(lat)) if len(lat) else float("nan"),
        "latency_p99_us": float(np.percentile(lat, 99)) if len(lat) else float("nan"),
        "late_fraction": float(np.mean(late)),
        "answered_rate_hz": float(answered.sum() / window),
        "state_rate_hz": float(len(sent_arr) / window),
        # never answered and sent less than half a period after the previous state (a burst after a stall of this
        # stand-in): the controller's TickGate skips such a state when it is off its 1 ms grid; counted late all
        # the same, and said here
        "bunched_fraction": float(np.mean(~answered & (np.diff(sent_arr, prepend=sent_arr[0] - 10**6) < 500_000))),
        # 1 kHz slots of the window this stand-in itself overran and skipped (no state sent, so none judged)
        "missed_fraction": skipped / max(1, k),
    }
