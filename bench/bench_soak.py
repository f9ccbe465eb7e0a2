"""Soak of the controller against the simulated arm (issue 12): in process for 10 simulated minutes, then live over
DDS in lockstep for 60 simulated seconds; prints its figures.

1. In process (:func:`deadzone_id_ros.sim.soak.run_soak`): FeedforwardController + SimArm at 1 kHz with random
   reference switches, live parameter sets, measurement gaps, NaNs and runaways; every command checked against the
   clamp and the rate limit, the safe state checked to start exactly on the tick a limit is crossed.
2. Live: sim_arm (clock_mode sim, lockstep) and feedforward_controller (use_sim_time, stamped_command) as processes;
   this script sends excitation references every 3 s, random parameter sets every 4 s through the controller's
   set_parameters service (among them tracking_error_limit 0.002 rad, which trips the safe state) and calls
   ~/reset after each fault. Checked on ~/command_stamped (each command with the stamp of the state it answers):
   finite, within the URDF effort limits, and changing by at most the largest torque-rate limit set times
   min(dt, rate_limit_max_period).

Usage: ``python bench/bench_soak.py [--quick]`` (quick: 60 s in process, 15 s live). ``run(quick)`` returns the
bench/results.json keys (``soak_*``).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _ros import NAMES, REPO, log_tail, ros_env, start, stop  # noqa: E402

EFFORT = np.array([4.0, 10.0, 5.0])  # URDF effort limits of the bundled arm [N m]


def in_process(seconds: float) -> dict[str, float]:
    from deadzone_id_ros.sim.soak import run_soak

    res = run_soak(seconds, seed=0, progress=True)
    print(f"in process: {res.sim_seconds:.0f} s simulated in {res.wall_seconds:.0f} s; {res.commands} commands, "
          f"{res.reference_switches} reference switches, {res.parameter_sets} parameter sets, {res.gaps} gaps, "
          f"{res.nonfinite_injected} NaN states, {res.excursions} excursions; faults {res.faults} (expected "
          f"{res.expected_faults}, {res.fault_reasons}), resets {res.resets}; max |tau|/clamp "
          f"{res.max_clamp_ratio:.4f}, max change/rate limit {res.max_rate_ratio:.6f}; violations "
          f"{len(res.violations)}")
    for v in res.violations:
        print("  VIOLATION", v)
    return {"soak_sim_seconds": res.sim_seconds, "soak_violations": float(len(res.violations)),
            "soak_faults": float(res.faults), "soak_faults_expected": float(res.expected_faults),
            "soak_max_rate_ratio": res.max_rate_ratio, "soak_max_clamp_ratio": res.max_clamp_ratio}


def live(seconds: float) -> dict[str, float]:
    """The DDS part: ``seconds`` of simulated time in lockstep."""
    import rclpy
    from builtin_interfaces.msg import Duration
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.node import Node
    from rclpy.parameter import Parameter
    from rclpy.parameter_client import AsyncParameterClient
    from sensor_msgs.msg import JointState
    from std_srvs.srv import Trigger
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

    from deadzone_id_ros.control import ExcitationConfig, generate_excitation

    exe = Path(sys.prefix) / "bin"
    sim, sim_log = start([str(exe / "sim_arm"), "--ros-args", "--params-file", str(REPO / "config" / "sim_arm.yaml"),
                          "-p", "clock_mode:=sim", "-p", "lockstep:=true"])
    ctl, ctl_log = start([str(exe / "feedforward_controller"), "--ros-args", "--params-file",
                          str(REPO / "config" / "feedforward_controller.yaml"), "-p", "use_sim_time:=true",
                          "-p", "stamped_command:=true"])
    ros_env()
    ctx = rclpy.Context()
    rclpy.init(context=ctx)
    node = Node("bench_soak", context=ctx)
    answers: list[tuple[int, list[float]]] = []
    states: list[tuple[int, list[float]]] = []
    node.create_subscription(JointState, "/feedforward_controller/command_stamped",
                             lambda m: answers.append((m.header.stamp.sec * 10**9 + m.header.stamp.nanosec,
                                                       list(m.effort))), 1000)
    node.create_subscription(JointState, "/joint_states",
                             lambda m: states.append((m.header.stamp.sec * 10**9 + m.header.stamp.nanosec,
                                                      list(m.position))), 1000)
    ref_pub = node.create_publisher(JointTrajectory, "/feedforward_controller/reference", 10)
    params = AsyncParameterClient(node, "/feedforward_controller")
    reset = node.create_client(Trigger, "/feedforward_controller/reset")
    ex = SingleThreadedExecutor(context=ctx)
    ex.add_node(node)
    rng = np.random.default_rng(0)
    max_rate = np.array([400.0, 1000.0, 500.0])
    refused = sets = refs = resets = 0
    # Start-up: wait until this node has matched every peer it needs, not just until the first answer. Discovery is
    # pairwise: sim_arm and the controller start stepping as soon as they see each other, so the first answer can
    # arrive before this node matched sim_arm's /joint_states (``states`` still empty), or before the controller
    # matched the reference publisher (the first reference would be dropped) or its services were ready.
    missing = {
        "a /joint_states state": lambda: bool(states),
        "an answer on ~/command_stamped": lambda: bool(answers),
        "the controller's ~/reference subscription": lambda: ref_pub.get_subscription_count() > 0,
        "the controller's parameter services": params.services_are_ready,
        "the controller's ~/reset service": reset.service_is_ready,
    }
    try:
        deadline = time.monotonic() + 60
        while not all(ready() for ready in missing.values()) and time.monotonic() < deadline:
            ex.spin_once(timeout_sec=0.05)
        lacking = [what for what, ready in missing.items() if not ready()]
        if lacking:
            raise RuntimeError(f"live soak: no {', no '.join(lacking)} within 60 s:\n" + log_tail(ctl_log)
                               + log_tail(sim_log))
        t0 = answers[-1][0]
        next_ref = next_set = 0.0
        wall_end = time.monotonic() + 30 * seconds
        while states[-1][0] - t0 < seconds * 1e9 and time.monotonic() < wall_end:
            ex.spin_once(timeout_sec=0.01)
            now = (states[-1][0] - t0) * 1e-9
            if now >= next_ref:
                pts = generate_excitation(ExcitationConfig(duration=6.0, seed=int(rng.integers(1 << 30)),
                                                           lead_in=0.1), start=states[-1][1])
                msg = JointTrajectory(joint_names=list(NAMES))
                msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(states[-1][0] + 200_000_000, 10**9)
                for k in range(0, len(pts.t), 10):
                    sec, nsec = divmod(round(pts.t[k] * 1e9), 10**9)
                    msg.points.append(JointTrajectoryPoint(
                        positions=pts.position[k].tolist(), velocities=pts.velocity[k].tolist(),
                        accelerations=pts.acceleration[k].tolist(), time_from_start=Duration(sec=sec, nanosec=nsec)))
                ref_pub.publish(msg)
                refs += 1
                next_ref = now + 3.0
                reset.call_async(Trigger.Request())  # an operator reset after any fault (a no-op without one)
                resets += 1
            if now >= next_set:
                rate = max_rate * rng.uniform(0.5, 1.0)
                values = [Parameter("torque_rate_limit", value=rate.tolist()),
                          Parameter("kp", value=[float(rng.uniform(200, 600))] * 3),
                          Parameter("tracking_error_limit", value=float(rng.choice([0.5, 0.2, 0.002])))]
                if rng.random() < 0.3:
                    values.append(Parameter("dob_cutoff", value=[150.0, 5000.0, 150.0]))  # must be refused
                    refused += 1
                params.set_parameters(values)
                sets += 1
                next_set = now + 4.0
        span_s = (states[-1][0] - t0) * 1e-9  # simulated time from the start of the soak (what the loop ran for)
    finally:
        node.destroy_node()
        rclpy.shutdown(context=ctx)
        stop(ctl)
        stop(sim)
    log = log_tail(ctl_log)
    stamps = np.array([a[0] for a in answers], dtype=np.int64)
    effort = np.array([a[1] for a in answers])
    finite = bool(np.all(np.isfinite(effort)))
    clamp = float(np.max(np.abs(effort) / EFFORT))
    dt = np.diff(stamps) * 1e-9
    allowed = max_rate * np.minimum(dt, 0.002)[:, None]
    step = np.abs(np.diff(effort, axis=0))
    moving = np.any(effort[1:] != 0, axis=1)  # a cut to zero torque is never rate-limited
    rate_ratio = float(np.max(step[moving] / allowed[moving])) if moving.any() else 0.0
    faults = log.count("safe state:")
    print(f"live over DDS (lockstep): {span_s:.3f} s simulated, {len(answers)} commands, "
          f"{refs} references, {sets} parameter sets ({refused} with a refused DOB cutoff), {faults} faults logged "
          f"in the last 2000 characters of the log; finite {finite}, max |tau|/limit {clamp:.4f}, max change/largest "
          f"rate limit {rate_ratio:.6f}")
    return {"soak_live_sim_seconds": float(span_s),
            "soak_live_max_rate_ratio": rate_ratio, "soak_live_max_clamp_ratio": clamp,
            "soak_live_nonfinite": float(not finite)}


def run(quick: bool = False) -> dict[str, float]:
    """Both parts; returns the ``soak_*`` figures."""
    out = in_process(60.0 if quick else 600.0)
    out.update(live(15.0 if quick else 60.0))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    for key, value in run(args.quick).items():
        print(f"{key}: {value:.6g}")


if __name__ == "__main__":
    main()
