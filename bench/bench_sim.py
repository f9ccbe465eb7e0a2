"""Benchmark: the simulated arm's speed at a 1 ms physics step, in-process and as the sim_arm node over DDS.

In-process: steps of :class:`deadzone_id_ros.sim.SimArm` (MuJoCo step + torque clip + noise + measurement) per wall
second, as a real-time factor (target >= 50x), for the default profile (geared_desktop_arm) and for "ideal". Node: starts ``sim_arm`` as its own process, subscribes to
/joint_states for a few seconds and reports the achieved message rate (target 1 kHz) and the fraction of ticks
later than 2 ms (header-stamp step > 2 ms; target < 1%).
Run: ``python bench/bench_sim.py [--quick]``. Keys: sim_realtime_factor (default profile),
sim_realtime_factor_ideal, sim_node_rate_hz, sim_node_late_tick_fraction.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from deadzone_id_ros.sim import SimArm, SimArmConfig
from deadzone_id_ros.stamps import ns_to_s, stamp_to_ns

REPO = Path(__file__).resolve().parent.parent


def realtime_factor(sim_seconds: float, profile: str = "geared_desktop_arm") -> float:
    """Simulated seconds per wall second for SimArm (``profile``) under a sinusoidal torque (step + measure per 1 ms)."""
    arm = SimArm(SimArmConfig(profile=profile))
    n = int(sim_seconds / arm.dt)
    tau = np.zeros(arm.n_joints)
    t0 = time.perf_counter()
    for k in range(n):
        tau[:] = 0.5 * np.sin(0.002 * k)
        arm.step(tau)
        arm.measure()
    return sim_seconds / (time.perf_counter() - t0)


def node_rate(seconds: float) -> tuple[float, float, int]:
    """Run sim_arm as a process; return (received /joint_states per second, late-tick fraction, message count)."""
    import rclpy
    from rclpy.node import Node
    from sensor_msgs.msg import JointState

    env = {**os.environ, "ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST"}
    env.setdefault("ROS_DOMAIN_ID", str(60 + os.getpid() % 30))
    env.setdefault("AMENT_PREFIX_PATH", sys.prefix)
    os.environ.update({k: env[k] for k in ("ROS_AUTOMATIC_DISCOVERY_RANGE", "ROS_DOMAIN_ID", "AMENT_PREFIX_PATH")})
    exe = shutil.which("sim_arm", path=str(Path(sys.prefix) / "bin")) or "sim_arm"
    proc = subprocess.Popen([exe, "--ros-args", "--params-file", str(REPO / "config" / "sim_arm.yaml")],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    ctx = rclpy.Context()
    rclpy.init(context=ctx)
    node = Node("bench_sim_probe", context=ctx)
    stamps: list[int] = []
    node.create_subscription(JointState, "/joint_states",
                             lambda m: stamps.append(stamp_to_ns(m.header.stamp)), 1000)
    ex = rclpy.executors.SingleThreadedExecutor(context=ctx)
    ex.add_node(node)
    try:
        deadline = time.monotonic() + 30
        while not stamps and time.monotonic() < deadline:
            ex.spin_once(timeout_sec=0.05)
        time.sleep(0.5)
        stamps.clear()
        t0 = time.monotonic()
        while time.monotonic() - t0 < seconds:
            ex.spin_once(timeout_sec=0.01)
        elapsed = time.monotonic() - t0
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
        node.destroy_node()
        rclpy.shutdown(context=ctx)
    if len(stamps) < 2:
        return 0.0, 1.0, len(stamps)
    steps = ns_to_s(np.diff(np.sort(np.asarray(stamps, dtype=np.int64))))
    return len(stamps) / elapsed, float(np.mean(steps > 2e-3)), len(stamps)


def run(quick: bool = False) -> dict[str, float]:
    """Return sim_realtime_factor(_ideal), sim_node_rate_hz and sim_node_late_tick_fraction."""
    rtf = realtime_factor(5.0 if quick else 20.0)
    rtf_ideal = realtime_factor(5.0 if quick else 20.0, "ideal")
    print(f"in-process SimArm, 1 ms step: {rtf:.0f}x real time, profile ideal {rtf_ideal:.0f}x (target >= 50x)")
    rate, late, count = node_rate(3.0 if quick else 10.0)
    print(f"sim_arm node: {rate:.0f} Hz /joint_states received ({count} msgs), {100 * late:.2f}% ticks later than "
          "2 ms (targets: 1000 Hz, < 1%)")
    return {"sim_realtime_factor": rtf, "sim_realtime_factor_ideal": rtf_ideal, "sim_node_rate_hz": rate, "sim_node_late_tick_fraction": late}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="shorter runs")
    print(run(parser.parse_args().quick))
