"""Benchmark of the feedforward controller: per-tick compute time, and the loop across processes at 1 kHz.

1. Compute: ``FeedforwardController.step`` (reference sampling + model + DOB + limits) in mode ctc_dob, fed by the
   simulated arm, with the rigid-body model (pinocchio RNEA) and with a random 9->256->256->3 MLP exported to ONNX
   (torch.onnx.export) run by onnxruntime on one thread. Median and p99 per tick [µs].
2. Across processes: the feedforward_controller executable runs as its own process; this script plays the hardware,
   publishing /joint_states at 1 kHz (stamped with the send time) and receiving /effort_controller/commands. The
   state->command latency is the time from publishing a state to receiving the command computed from it (two DDS
   hops plus the controller's tick). The achieved loop rate is commands per second, and a late tick is a gap of
   more than 2 ms between consecutive commands.

Usage: ``python bench/bench_controller.py [--quick]``. ``run(quick)`` returns the bench/results.json keys.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
NAMES = ("joint1", "joint2", "joint3")


def _compute_times(model, kind: str, ticks: int) -> np.ndarray:
    """Per-tick compute time [µs] of ``step`` in mode ctc_dob with ``model`` (config model kind ``kind``)."""
    from deadzone_id_ros.control import ControllerConfig, ExcitationConfig, FeedforwardController, generate_excitation
    from deadzone_id_ros.sim import SimArm

    arm = SimArm()
    ctrl = FeedforwardController(ControllerConfig(mode="ctc_dob", model=kind, model_path="bench.onnx"), model)
    ctrl.set_reference(generate_excitation(ExcitationConfig(duration=ticks / 1000 + 1, seed=0), start=arm.q))
    times = np.empty(ticks)
    for k in range(ticks):
        m = arm.measure()
        t0 = time.perf_counter()
        tau = ctrl.step(k * 1e-3, m.q, m.dq)
        times[k] = time.perf_counter() - t0
        arm.step(tau)
    return times[min(200, ticks // 10):] * 1e6


def _mlp_onnx(tmp: Path):
    import json

    import torch

    from deadzone_id_ros.models.runtime import OnnxModel

    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(9, 256), torch.nn.Tanh(), torch.nn.Linear(256, 256), torch.nn.Tanh(),
                              torch.nn.Linear(256, 3))
    path = tmp / "mlp.onnx"
    torch.onnx.export(net, (torch.zeros(1, 9),), str(path), input_names=["x"], output_names=["tau"],
                      dynamic_axes={"x": {0: "n"}, "tau": {0: "n"}}, dynamo=False)
    path.with_suffix(".json").write_text(json.dumps({
        "joint_names": list(NAMES), "input_mean": [0.0] * 9, "input_std": [1.0] * 9,
        "output_mean": [0.0] * 3, "output_std": [0.1] * 3}))
    return OnnxModel(path)


def _loop_across_processes(seconds: float) -> dict[str, float]:
    import rclpy
    from rclpy.node import Node
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Float64MultiArray

    env = {**os.environ, "ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST"}
    env.setdefault("ROS_DOMAIN_ID", str(10 + os.getpid() % 90))
    env.setdefault("AMENT_PREFIX_PATH", sys.prefix)
    os.environ.update({k: env[k] for k in ("ROS_AUTOMATIC_DISCOVERY_RANGE", "ROS_DOMAIN_ID", "AMENT_PREFIX_PATH")})
    exe = str(Path(sys.prefix) / "bin" / "feedforward_controller")
    log = tempfile.TemporaryFile()
    proc = subprocess.Popen([exe, "--ros-args", "--params-file", str(REPO / "config" / "feedforward_controller.yaml"),
                             "-p", "mode:=ctc_dob", "-p", "watchdog_timeout:=1.0"],
                            stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    ctx = rclpy.Context()
    rclpy.init(context=ctx)
    node = Node("bench_controller_hw", context=ctx)
    received: list[float] = []
    node.create_subscription(Float64MultiArray, "/effort_controller/commands",
                             lambda _m: received.append(time.perf_counter()), 100)
    pub = node.create_publisher(JointState, "/joint_states", 10)
    ex = rclpy.executors.SingleThreadedExecutor(context=ctx)
    ex.add_node(node)
    msg = JointState(name=list(NAMES), position=[0.0, 0.3, 0.6], velocity=[0.0] * 3, effort=[0.0] * 3)
    clock = node.get_clock()

    def publish() -> float:
        msg.header.stamp = clock.now().to_msg()
        pub.publish(msg)
        return time.perf_counter()

    try:
        deadline = time.monotonic() + 60
        while not received and time.monotonic() < deadline:  # discovery and start-up
            publish()
            ex.spin_once(timeout_sec=0.01)
        if not received:
            log.seek(0)
            raise RuntimeError(f"no command from feedforward_controller: {log.read().decode()[-2000:]}")
        sent: list[float] = []
        received.clear()
        t_next = time.perf_counter()
        end = t_next + seconds
        while t_next < end:
            sent.append(publish())
            t_next += 1e-3
            while (now := time.perf_counter()) < t_next:
                ex.spin_once(timeout_sec=max(0.0, t_next - now))
        ex.spin_once(timeout_sec=0.01)
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        node.destroy_node()
        rclpy.shutdown(context=ctx)
    sent_arr, recv = np.array(sent), np.array(received)
    idx = np.searchsorted(sent_arr, recv, side="right") - 1  # the latest state sent before each command
    lat = (recv - sent_arr[np.maximum(idx, 0)])[idx >= 0] * 1e6
    gaps = np.diff(recv)
    return {
        "ctrl_latency_median_us": float(np.median(lat)),
        "ctrl_latency_p99_us": float(np.percentile(lat, 99)),
        "ctrl_loop_rate_hz": float(len(recv) / seconds),
        "ctrl_state_rate_hz": float(len(sent_arr) / seconds),
        "ctrl_late_tick_fraction": float(np.mean(gaps > 2e-3)) if len(gaps) else 1.0,
    }


def run(quick: bool = False) -> dict[str, float]:
    """Run the benchmark and return its figures (the ``ctrl_*`` keys of bench/results.json; times in µs)."""
    from deadzone_id_ros.models.runtime import NominalRigidBodyModel
    from deadzone_id_ros.resources import default_urdf

    ticks = 2000 if quick else 10000
    rbd = _compute_times(NominalRigidBodyModel(default_urdf(), NAMES), "rbd", ticks)
    with tempfile.TemporaryDirectory() as tmp:
        mlp_model = _mlp_onnx(Path(tmp))
        mlp = _compute_times(mlp_model, "learned", ticks)
        x = [np.zeros(3)] * 3
        t0 = time.perf_counter()
        for _ in range(ticks):
            mlp_model.predict(*x)
        mlp_only = (time.perf_counter() - t0) / ticks * 1e6
    out = {
        "ctrl_compute_median_us_rbd": float(np.median(rbd)),
        "ctrl_compute_p99_us_rbd": float(np.percentile(rbd, 99)),
        "ctrl_compute_median_us_mlp": float(np.median(mlp)),
        "ctrl_compute_p99_us_mlp": float(np.percentile(mlp, 99)),
        "ctrl_mlp_inference_mean_us": float(mlp_only),
    }
    out.update(_loop_across_processes(3.0 if quick else 10.0))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer ticks, 3 s across processes")
    args = parser.parse_args()
    for key, value in run(args.quick).items():
        print(f"{key:32s} {value:12.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
