"""Benchmark: the simulated arm's speed at a 1 ms physics step, in-process and as the sim_arm node over DDS.

In-process: steps of :class:`deadzone_id_ros.sim.SimArm` (MuJoCo step + torque clip + noise + measurement) per wall
second, as a real-time factor (``sim_realtime_factor`` for the default profile geared_desktop_arm,
``sim_realtime_factor_ideal`` for the ideal arm). Raw counterpart, measured right after on the same model:
a bare ``mujoco.mj_step`` loop on ``SimArm().model`` setting ``ctrl``/``qfrc_applied`` from the same torque
(``raw_mujoco_realtime_factor``), the two timed in alternating blocks (``_timing.paired_factors``) so both see the
same load; ``sim_ratio_raw_mujoco`` = SimArm / bare mj_step, the median over the blocks.
Node: starts ``sim_arm`` as its own process and counts the /joint_states messages whose header stamps (wall clock,
``clock_mode: wall``) fall inside a window that opens after start-up: messages stamped before the window opened
are not counted however late they are delivered, and messages stamped inside it are collected until 0.3 s after
it closed. ``sim_node_rate_hz`` = count / window length; ``sim_node_late_tick_fraction``: stamp steps > 2 ms.
Run: ``python bench/bench_sim.py [--quick]``.
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

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _timing  # noqa: E402
from _timing import sim_arm_factor  # noqa: E402

from deadzone_id_ros.robot_configs import bundled_sim_config  # noqa: E402
from deadzone_id_ros.sim import SimArm  # noqa: E402
from deadzone_id_ros.stamps import ns_to_s, stamp_to_ns  # noqa: E402

REPO = Path(__file__).resolve().parent.parent


def realtime_factor(sim_seconds: float, profile: str = "geared_desktop_arm") -> float:
    """Simulated seconds per wall second for SimArm (``profile``) under a sinusoidal torque (step + measure per
    1 ms)."""
    return sim_arm_factor([SimArm(bundled_sim_config(profile=profile))], sim_seconds)


def node_rate(seconds: float) -> tuple[float, float, int]:
    """Run sim_arm as a process; return (/joint_states stamped per second of the window, late fraction, count)."""
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
    stamps: list[int] = []  # header stamps [ns, wall clock]
    node.create_subscription(JointState, "/joint_states",
                             lambda m: stamps.append(stamp_to_ns(m.header.stamp)), 1000)
    ex = rclpy.executors.SingleThreadedExecutor(context=ctx)
    ex.add_node(node)
    try:
        deadline = time.monotonic() + 30
        while not stamps and time.monotonic() < deadline:
            ex.spin_once(timeout_sec=0.05)
        t_warm = time.monotonic() + 0.5
        while time.monotonic() < t_warm:
            ex.spin_once(timeout_sec=0.01)
        w0 = time.time_ns()
        w1 = w0 + int(seconds * 1e9)
        while time.time_ns() < w1 + 300_000_000:  # messages stamped near the end may arrive a little later
            ex.spin_once(timeout_sec=0.01)
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
        node.destroy_node()
        rclpy.shutdown(context=ctx)
    s = np.sort(np.asarray(stamps, dtype=np.int64))
    s = s[(s >= w0) & (s < w1)]
    if len(s) < 2:
        return 0.0, 1.0, len(s)
    steps = ns_to_s(np.diff(np.concatenate([[w0], s, [w1]])))  # gaps at the window edges count too
    return len(s) / seconds, float(np.mean(steps > 2e-3)), len(s)


def run(quick: bool = False) -> dict[str, float]:
    """Return sim_realtime_factor(_ideal), sim_node_rate_hz and sim_node_late_tick_fraction."""
    rtf, raw, ratio = _timing.paired_factors([SimArm(bundled_sim_config(profile="geared_desktop_arm"))], [SimArm()],
                                             5.0 if quick else 20.0, copy_state=False)
    rtf_ideal = realtime_factor(5.0 if quick else 20.0, "ideal")
    print(f"in-process SimArm, 1 ms step: {rtf:.0f}x real time (profile ideal {rtf_ideal:.0f}x); bare mj_step on the "
          f"same model {raw:.0f}x, timed in alternating blocks; ratio {ratio:.2f} (median over the blocks)")
    rate, late, count = node_rate(3.0 if quick else 10.0)
    print(f"sim_arm node: {rate:.0f} Hz /joint_states received ({count} msgs), {100 * late:.2f}% ticks later than "
          "2 ms (targets: 1000 Hz, < 1%)")
    return {"sim_realtime_factor": rtf, "sim_realtime_factor_ideal": rtf_ideal, "raw_mujoco_realtime_factor": raw,
            "sim_ratio_raw_mujoco": ratio, "sim_node_rate_hz": rate, "sim_node_late_tick_fraction": late}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="shorter runs")
    print(run(parser.parse_args().quick))
