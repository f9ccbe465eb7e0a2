"""Benchmark of the feedforward controller in its deployment path, each figure beside its raw-library counterpart.

1. The model: a real artifact, trained by ``deadzone-id train`` (masked loss) on a short recording made by
   ``deadzone-id simulate``, loaded the way the node loads it (``model: learned``, ``model_path``: the artifact).
2. The tick (``ctrl_tick_*_us_mlp``, ``*_rbd``): the node's /joint_states callback from message in to message out,
   i.e. deserializing the CDR bytes of a JointState, ``FeedforwardControllerNode._on_joint_state`` (mapping by
   name, the control law in mode ctc_dob, the command published over DDS to a subscriber in another process, the
   diagnostics bookkeeping), at 1 kHz in real time with states from the simulated arm, and reference windows
   (2 s of points every 10 ms, as the excitation node sends them) arriving every 0.5 s through
   ``_on_reference`` (serialized, as the node subscribes it; a worker thread prepares it off the tick); the reference
   callback's time is reported too (``ctrl_reference_update_*``).
   Raw counterpart: a bare numpy forward of the same network (its float32 weights, float64 matmuls and ReLU on
   one (9,) input, normalization applied), timed right after each tick on that tick's state (so under the same
   load); ``ctrl_tick_ratio_raw_mlp`` = tick p99 / forward p99.
3. Across processes (``ctrl_latency_*``): the feedforward_controller executable (ctc_dob, the trained artifact,
   ``stamped_command: true``) answers 1 kHz states that this script stamps with the wall clock when it sends them;
   the latency of a state is the arrival time of the ``~/command_stamped`` message carrying that state's stamp minus
   the stamp (published after the command itself, so never shorter than the command's). A state answered later than
   2 ms, or never, is a late tick (``ctrl_late_tick_fraction``). Reference windows arrive every 0.5 s as in the
   demo. Raw counterpart: the same loop against bench/_echo.py, a bare rclpy node that echoes each state back with the
   same QoS and executor; ``ctrl_latency_ratio_raw`` = controller median / echo median
   (``ctrl_latency_p99_ratio_raw`` for the p99s).

4. Force sensing (``sense_estimate_*_us_*``): the in-process cost per tick of the controller's force sensor (the
   direct residual with the controller's model, its friction correction, the dead-zone band, the contact test, the
   wrench at the last link, with the bundled arm's settings of bench/_sensing.py:
   :class:`deadzone_id_ros.sensing.ForceSensor` as the node runs it) beside the control law's own step
   (``sense_control_law_*_us_*``), on the simulated arm in closed loop, no DDS. ``--sensing-only`` runs just this
   part (with ``--model DIR``: that artifact, else the rigid body only).

Usage: ``python bench/bench_controller.py [--quick] [--sensing-only [--model DIR]]``. ``run(quick)`` returns the
bench/results.json keys.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from deadzone_id_ros.robot_configs import bundled_excitation_config

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _ros import NAMES, REPO, answered_loop, log_tail, ros_env, start, stop  # noqa: E402
from _sensing import BUNDLED_SENSING  # noqa: E402

PARAMS = str(REPO / "config" / "feedforward_controller.yaml")


def train_artifact(tmp: Path, quick: bool) -> Path:
    """Simulate a short recording and train a masked-loss artifact on it with the ``deadzone-id`` CLI."""
    exe = str(Path(sys.prefix) / "bin" / "deadzone-id")
    bag, model = tmp / "bag", tmp / "model"
    subprocess.run([exe, "simulate", "--duration", "60" if quick else "120", "--seed", "3", "--out", str(bag),
                    "--no-progress"], check=True, stdout=subprocess.DEVNULL)
    subprocess.run([exe, "train", "--bag", str(bag), "--method", "masked", "--out", str(model), "--no-onnx",
                    "--max-steps", "200" if quick else "600", "--no-progress"], check=True, stdout=subprocess.DEVNULL)
    return model


def _reference_msg(points, t0_ns: int, rel: float, horizon: float = 2.0):
    """A JointTrajectory window as the excitation node publishes it: points from ``rel`` [s] to rel + horizon."""
    from deadzone_id_ros.nodes.excitation import reference_message, window_rows

    return reference_message(points, t0_ns, window_rows(points.t, rel, 0.01, horizon))


def _excitation(seconds: float, start_q):
    from deadzone_id_ros.control import generate_excitation

    return generate_excitation(bundled_excitation_config(duration=seconds + 5.0, seed=0, lead_in=0.2), start=start_q)


def node_ticks(model: str, model_path: str, seconds: float, raw_forward=None, *,
               busy_wait: bool = True, extra: dict[str, object] | None = None) -> dict[str, np.ndarray]:
    """Time the node's callbacks in this process at 1 kHz real time; returns tick and reference times [µs].

    ``extra``: further node parameters, name -> value (e.g. :data:`_sensing.BUNDLED_SENSING`: the tick then includes
    the force sensor's update and its five topics).

    With ``raw_forward`` (a callable on a (9,) input), it is timed right after each tick on that tick's state, so
    the raw figure sees the same machine load as the tick ("raw" in the result). ``busy_wait`` False sleeps until
    the next tick instead of spinning (a SCHED_FIFO process must not spin: it would hold its core).
    """
    import rclpy
    from rclpy.parameter import Parameter
    from rclpy.serialization import deserialize_message, serialize_message
    from sensor_msgs.msg import JointState

    from deadzone_id_ros.nodes.feedforward_controller import FeedforwardControllerNode
    from deadzone_id_ros.sim import SimArm

    ros_env()
    sink, sink_log = start([sys.executable, "-c", (
        "import rclpy,signal,time;from std_msgs.msg import Float64MultiArray as F;rclpy.init();"
        "n=rclpy.create_node('bench_sink');n.create_subscription(F,'/effort_controller/commands',lambda m:None,10);"
        "rclpy.spin(n)")])
    ctx = rclpy.Context()
    rclpy.init(context=ctx, args=["--ros-args", "--params-file", PARAMS])
    overrides = [Parameter("mode", value="ctc_dob"), Parameter("model", value=model),
                 Parameter("model_path", value=model_path), Parameter("watchdog_timeout", value=1.0)]
    overrides += [Parameter(k, value=list(v) if isinstance(v, tuple) else v) for k, v in (extra or {}).items()]
    node = FeedforwardControllerNode(context=ctx, parameter_overrides=overrides)
    try:
        if (extra or {}).get("sensing") and node._sensing is None and node._sensing_worker is None:
            raise RuntimeError(f"the node does not sense with the parameters {extra}")
        deadline = time.monotonic() + 30
        while node._cmd_pub.get_subscription_count() == 0:
            if time.monotonic() > deadline:
                raise RuntimeError(f"the command sink did not appear: {log_tail(sink_log)}")
            time.sleep(0.05)
        arm = SimArm()
        order = [arm.joint_names.index(j) for j in NAMES]
        cmd_order = [list(node.command_joint_names).index(j) for j in arm.joint_names]
        ticks = int(seconds * 1000)
        points = _excitation(seconds, arm.q[order])
        t0_ns = time.time_ns() + 200_000_000
        state = JointState(name=list(arm.joint_names), position=[0.0] * 3, velocity=[0.0] * 3, effort=[0.0] * 3)
        tick_us, raw_us, ref_us = np.empty(ticks), np.empty(ticks), []
        t_next = time.perf_counter()
        for k in range(ticks):
            ns = time.time_ns()
            if k % 500 == 0:
                raw_ref = serialize_message(_reference_msg(points, t0_ns, (ns - t0_ns) * 1e-9))
                c0 = time.perf_counter()
                node._on_reference(raw_ref)  # the node subscribes ~/reference serialized (raw=True)
                ref_us.append((time.perf_counter() - c0) * 1e6)
            m = arm.measure()
            state.header.stamp.sec, state.header.stamp.nanosec = divmod(ns, 1_000_000_000)
            state.position, state.velocity = m.q.tolist(), m.dq.tolist()
            raw = serialize_message(state)
            c0 = time.perf_counter()
            node._on_joint_state(deserialize_message(raw, JointState))
            tick_us[k] = (time.perf_counter() - c0) * 1e6
            if raw_forward is not None:
                x = np.concatenate([m.q, m.dq, np.zeros(3)])
                c0 = time.perf_counter()
                raw_forward(x)
                raw_us[k] = (time.perf_counter() - c0) * 1e6
            arm.step(np.asarray(node._cmd_msg.data)[cmd_order])
            t_next += 1e-3
            if not busy_wait:
                time.sleep(max(0.0, t_next - time.perf_counter()))
            while time.perf_counter() < t_next:
                pass  # real time: the next state 1 ms after this one (busy wait, sleep is too coarse)
    finally:
        node.destroy_node()
        rclpy.shutdown(context=ctx)
        stop(sink)
    skip = min(500, ticks // 10)
    return {"tick": tick_us[skip:], "raw": raw_us[skip:], "reference": np.asarray(ref_us)}


def numpy_forward(model_path: str):
    """A bare numpy forward of the artifact's network on one (9,) input [q, dq, ddq] -> (3,) torque [N·m]."""
    from deadzone_id_ros.models.artifact import load_artifact

    mlp = load_artifact(model_path).mlp
    ws = [np.asarray(w, dtype=np.float64).T.copy() for w in mlp.weights]
    bs = [np.asarray(b, dtype=np.float64) for b in mlp.biases]
    xm, xs, ym, ys = mlp.x_norm.mean, mlp.x_norm.std, mlp.y_norm.mean, mlp.y_norm.std

    def forward(x: np.ndarray) -> np.ndarray:
        h = (x - xm) / xs
        for w, b in zip(ws[:-1], bs[:-1]):
            h = np.maximum(h @ w + b, 0.0)
        return (h @ ws[-1] + bs[-1]) * ys + ym
    return forward


def reference_publisher(seconds: float):
    """``stamp_loop``'s ``reference``: ``(node) -> send(now_ns)`` publishing excitation windows to the controller.

    The windows (2 s of points from each multiple of 0.5 s of the trajectory) are built before the loop: building
    one takes milliseconds of Python, which inside the 1 kHz loop would delay the stand-in's own states and answers
    and count as the controller's late ticks. A send takes the window of the last multiple of 0.5 s before ``now``
    and stamps it with the trajectory's start (the first send).
    """
    from deadzone_id_ros.sim import SimArm

    points = _excitation(seconds + 5.0, SimArm().q)
    windows = [_reference_msg(points, 0, 0.5 * k) for k in range(int(2 * (seconds + 10.0)) + 1)]
    t0 = {}

    def reference(node):
        from trajectory_msgs.msg import JointTrajectory

        pub = node.create_publisher(JointTrajectory, "/feedforward_controller/reference", 10)

        def send(now_ns: int) -> None:
            t0.setdefault("ns", now_ns)
            msg = windows[min(len(windows) - 1, (now_ns - t0["ns"]) // 500_000_000)]
            msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(t0["ns"], 1_000_000_000)
            pub.publish(msg)
        return send
    return reference


def loop_across_processes(model_path: str, seconds: float) -> dict[str, float]:
    """The controller process and the bare echo, each answering 1 kHz stamped states; figures of both."""
    reference = reference_publisher(seconds)
    out: dict[str, float] = {}
    exe = str(Path(sys.prefix) / "bin" / "feedforward_controller")
    runs = (("raw", [sys.executable, str(Path(__file__).with_name("_echo.py"))], "/bench_echo", None),
            ("ctrl", [exe, "--ros-args", "--params-file", PARAMS, "-p", "mode:=ctc_dob", "-p", "model:=learned",
                      "-p", f"model_path:={model_path}", "-p", "watchdog_timeout:=1.0",
                      "-p", "stamped_command:=true"], "/feedforward_controller/command_stamped", reference))
    for name, cmd, topic, ref in runs:
        fig = answered_loop(cmd, topic, seconds, reference=ref)
        out.update({f"{name}_{k}": v for k, v in fig.items()})
    return out


def sensing_cost(model: str, model_path: str, seconds: float, key: str) -> dict[str, float]:
    """Median and p99 [µs] of the control law's step and the force sensor's update per tick, in process (item 4)."""
    import dataclasses

    from deadzone_id_ros.control import build_controller
    from deadzone_id_ros.control.excitation import generate_excitation
    from deadzone_id_ros.robot_configs import bundled_controller_config
    from deadzone_id_ros.sensing import SensingConfig, build_sensor
    from deadzone_id_ros.sim import SimArm

    arm = SimArm()
    cfg = dataclasses.replace(bundled_controller_config(), mode="ctc_dob", model=model, model_path=model_path)
    controller = build_controller(cfg, arm.description)
    controller.set_reference(generate_excitation(dataclasses.replace(
        bundled_excitation_config(), duration=seconds + 1.0, seed=7), start=arm.q))
    sensing = SensingConfig(**BUNDLED_SENSING)  # type: ignore[arg-type]
    from deadzone_id_ros.resources import default_urdf

    sensor = build_sensor(sensing, controller.model, str(default_urdf()), arm.joint_names, cfg.nominal_inertia,
                          nominal=cfg)
    n = int(seconds * 1000)
    law, sense = np.empty(n), np.empty(n)
    for k in range(n):
        m = arm.measure()
        c0 = time.perf_counter()
        tau = controller.step(k * 1e-3, m.q, m.dq)
        c1 = time.perf_counter()
        sensor.update(m.t, m.q, m.dq, m.effort)
        c2 = time.perf_counter()
        law[k], sense[k] = (c1 - c0) * 1e6, (c2 - c1) * 1e6
        arm.step(tau)
    skip = min(500, n // 10)
    law, sense = law[skip:], sense[skip:]
    return {f"sense_control_law_median_us_{key}": float(np.median(law)),
            f"sense_control_law_p99_us_{key}": float(np.percentile(law, 99)),
            f"sense_estimate_median_us_{key}": float(np.median(sense)),
            f"sense_estimate_p99_us_{key}": float(np.percentile(sense, 99))}


def run(quick: bool = False) -> dict[str, float]:
    """Run the benchmark and return its figures (the ``ctrl_*`` keys of bench/results.json; times in µs)."""
    seconds = 4.0 if quick else 15.0
    out: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="bench_controller_") as tmp:
        t0 = time.perf_counter()
        model = str(train_artifact(Path(tmp), quick))
        print(f"trained the artifact (simulate + train) in {time.perf_counter() - t0:.0f} s")
        mlp = node_ticks("learned", model, seconds, raw_forward=numpy_forward(model))
        rbd = node_ticks("rbd", "", seconds)
        fwd = mlp["raw"]
        for key, arr in (("mlp", mlp["tick"]), ("rbd", rbd["tick"])):
            out[f"ctrl_tick_median_us_{key}"] = float(np.median(arr))
            out[f"ctrl_tick_p99_us_{key}"] = float(np.percentile(arr, 99))
        out["ctrl_reference_update_median_us"] = float(np.median(mlp["reference"]))
        out["ctrl_reference_update_max_us"] = float(np.max(mlp["reference"]))
        out["raw_numpy_forward_median_us"] = float(np.median(fwd))
        out["raw_numpy_forward_p99_us"] = float(np.percentile(fwd, 99))
        out["ctrl_tick_ratio_raw_mlp"] = out["ctrl_tick_p99_us_mlp"] / out["raw_numpy_forward_p99_us"]
        out.update(sensing_cost("learned", model, seconds, "mlp"))
        out.update(sensing_cost("rbd", "", seconds, "rbd"))
        loop = loop_across_processes(model, seconds)
    out.update({
        "ctrl_latency_median_us": loop["ctrl_latency_median_us"],
        "ctrl_latency_p99_us": loop["ctrl_latency_p99_us"],
        "ctrl_loop_rate_hz": loop["ctrl_answered_rate_hz"],
        "ctrl_state_rate_hz": loop["ctrl_state_rate_hz"],
        "ctrl_late_tick_fraction": loop["ctrl_late_fraction"],
        "raw_pingpong_latency_median_us": loop["raw_latency_median_us"],
        "raw_pingpong_latency_p99_us": loop["raw_latency_p99_us"],
        "raw_pingpong_late_fraction": loop["raw_late_fraction"],
    })
    out["ctrl_latency_ratio_raw"] = out["ctrl_latency_median_us"] / out["raw_pingpong_latency_median_us"]
    out["ctrl_latency_p99_ratio_raw"] = out["ctrl_latency_p99_us"] / out["raw_pingpong_latency_p99_us"]
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="4 s windows and a smaller training run")
    parser.add_argument("--sensing-only", action="store_true", help="only the force sensor's cost per tick (item 4)")
    parser.add_argument("--model", default="", metavar="DIR", help="with --sensing-only: a trained artifact")
    args = parser.parse_args()
    if args.sensing_only:
        figures = sensing_cost("rbd", "", 4.0 if args.quick else 15.0, "rbd")
        if args.model:
            figures.update(sensing_cost("learned", args.model, 4.0 if args.quick else 15.0, "mlp"))
    else:
        figures = run(args.quick)
    for key, value in figures.items():
        print(f"{key:34s} {value:12.4g}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
