"""bag_replay: play a recorded bag's effort commands into the (simulated) arm over DDS and report the difference.

Publishes the bag's commands on ``/effort_controller/commands`` (std_msgs/Float64MultiArray, reordered by name to
``command_joint_names``, the effort controller's joint order) at their recorded times relative to the start of
playback, and records the arm's ``/joint_states``. Playback starts ``start_delay`` after the first /joint_states.
When the bag is played out it logs the position RMSE per joint between the live /joint_states and the recorded ones
at the same time since start, writes ``report_dir/report.json`` when set, and exits 0 -- or 1 when more than
``max_skipped`` recorded commands were skipped (a late timer tick publishes only the latest due command): then the
arm did not get the recorded input, the report says ``"valid": false`` with the count, and the RMSE is not reported
as if it were the model's. The node clock is used throughout, so ``use_sim_time:=true`` follows /clock; then nothing
starts before the first /clock message, and with none within ``clock_timeout`` seconds the node exits 1 (it warns
after a few seconds).

Over DDS with a free-running simulator the comparison is approximate (message latency, wall-clock stepping, a
late timer): an open-loop torque replay of an arm with stiction is sensitive to all of them. With ``lockstep`` (the
default of launch/replay.launch.yaml) the node instead answers every /joint_states with the command due at that
state's header stamp, and a simulator in lockstep waits for that answer before it steps: the replay is then the same
on a loaded machine and matches ``deadzone-id replay`` (deadzone_id_ros.sim.replay), the exact offline open-loop
replay, given the bag's seed.

Parameters: see :class:`deadzone_id_ros.sim.bag_replay_params.BagReplayNodeConfig`.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import numpy as np
from rclpy.node import Node
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from ..sim.bag_replay_params import BagReplayNodeConfig
from ..sim.replay import check_joints
from ..stamps import NS_PER_S, increasing_rows, ns_to_s, stamp_to_ns
from ._common import SimClockWatch, declare_dataclass_parameters, run_node

__all__ = ["BagReplayNode", "main"]

LOCKSTEP_STAMP_TOLERANCE_NS = 100_000  # a state and a recorded command this close [ns] belong to the same tick
LOCKSTEP_REANSWER_S = 0.5  # lockstep: answer a repeated state again after this long without a newer one [s]


class BagReplayNode(Node):
    """rclpy adapter: plays the recorded commands and collects /joint_states.

    Raises:
        ConfigError: invalid parameters (``bag`` missing, bad rate).
        FileNotFoundError, DataError: the bag cannot be read, has no commands, or its joints are not
            ``command_joint_names`` (both lists named).
    """

    def __init__(self, **kwargs) -> None:
        super().__init__("bag_replay", **kwargs)
        from ..data.bag import read_recording

        self.config = cfg = declare_dataclass_parameters(
            self, BagReplayNodeConfig, read_only=("bag", "command_joint_names", "joint_state_topic", "command_topic"),
        )
        rec = read_recording(cfg.bag, joint_state_topic=cfg.joint_state_topic, command_topic=cfg.command_topic)
        check_joints(tuple(rec.joint_names), tuple(cfg.command_joint_names), cfg.bag)
        if rec.command is None or rec.command_t_ns is None or not len(rec.command_t_ns):
            from ..errors import DataError

            raise DataError(f"{cfg.bag}: no messages on {cfg.command_topic}; nothing to replay")
        self.joint_names = tuple(cfg.command_joint_names)
        cols = [list(rec.joint_names).index(n) for n in self.joint_names]
        rows = increasing_rows(rec.state_t_ns)  # zero, repeated and older stamps skipped
        t0 = int(rec.state_t_ns[rows][0])
        self._cmd_t = (np.asarray(rec.command_t_ns, np.int64) - t0)  # [ns] since the first recorded state
        self._cmd = np.asarray(rec.command, float)[:, cols]
        self._rec_t = ns_to_s(np.asarray(rec.state_t_ns, np.int64)[rows] - t0)
        self._rec_q = np.asarray(rec.position, float)[rows][:, cols]
        self._next = 0
        self._start_ns: int | None = None
        self._first_state_ns: int | None = None
        self._answered_ns: int | None = None  # lockstep: header stamp of the last state answered [ns]
        self._answered_at = 0.0  # lockstep: time.monotonic() of that answer [s]
        self._answer_msg = Float64MultiArray()
        self._live_t: list[float] = []
        self._live_q: list[np.ndarray] = []
        self.published = 0
        self.skipped = 0
        self.done = False
        self.clock_watch = SimClockWatch(self, timeout=cfg.clock_timeout)
        self.failure: str | None = None
        self._pub = self.create_publisher(Float64MultiArray, "/effort_controller/commands", 10)
        self.create_subscription(JointState, "/joint_states", self._on_joint_state, 10)
        if not cfg.lockstep:
            self._timer = self.create_timer(1.0 / cfg.rate, self._on_tick)
        self.get_logger().info(
            f"bag_replay: {len(self._cmd)} commands over {ns_to_s(self._cmd_t[-1]):.3f} s from {cfg.bag}, joints "
            f"{list(self.joint_names)}; waiting for /joint_states"
        )

    def _now_ns(self) -> int:
        return self.get_clock().now().nanoseconds

    def _on_joint_state(self, msg: JointState) -> None:
        if self.config.lockstep:
            self._answer(msg)  # times from the header stamps: the node's clock is not used
            return
        if not self.clock_watch.ready:
            return  # use_sim_time before the first /clock: the node's time is 0, no start time can be fixed yet
        now = self._now_ns()
        if self._first_state_ns is None:
            self._first_state_ns = now
        if self._start_ns is None or self.done:
            return
        q = self._positions(msg)
        if q is not None:
            self._live_t.append(ns_to_s(now - self._start_ns))
            self._live_q.append(q)

    def _answer(self, msg: JointState) -> None:
        """Lockstep: record this state and answer it with the command due at its header stamp (zero torque before the
        first recorded command, as the offline replay applies)."""
        if self.done:
            return
        q = self._positions(msg)
        if q is None:
            return
        stamp = stamp_to_ns(msg.header.stamp)
        if self._answered_ns is not None and stamp <= self._answered_ns:
            # answered already: a second answer would let the simulator step once more with the wrong command --
            # unless the answer was lost (DDS still matching the other way): then the simulator, still waiting,
            # repeats the state, and after LOCKSTEP_REANSWER_S without a newer one the same answer goes out again
            if stamp == self._answered_ns and time.monotonic() - self._answered_at >= LOCKSTEP_REANSWER_S:
                self._pub.publish(self._answer_msg)
                self._answered_at = time.monotonic()
            return
        if self._pub.get_subscription_count() == 0:
            return  # the simulator would not get the answer yet; it repeats its first state until it does
        self._answered_ns = stamp
        if self._start_ns is None:
            self._start_ns = stamp
            self.get_logger().info("playing (lockstep: one command per /joint_states)")
        elapsed = stamp - self._start_ns
        t = ns_to_s(elapsed)
        self._live_t.append(t)
        self._live_q.append(q)
        # the command recorded with this state (stamps within LOCKSTEP_STAMP_TOLERANCE_NS count as equal)
        due = int(np.searchsorted(self._cmd_t, elapsed + LOCKSTEP_STAMP_TOLERANCE_NS, side="right"))
        if due > self._next:
            self.skipped += due - self._next - 1
            self._next = due
        out = Float64MultiArray()
        out.data = self._cmd[due - 1].tolist() if due else [0.0] * len(self.joint_names)
        self._pub.publish(out)
        self._answer_msg, self._answered_at = out, time.monotonic()
        self.published += 1
        if self._next >= len(self._cmd_t) and t >= self._rec_t[-1]:
            self._finish()

    def _positions(self, msg: JointState) -> np.ndarray | None:
        """(J,) positions of ``msg`` in ``joint_names`` order [rad], or None (logged) when a joint is missing."""
        names = list(msg.name)
        try:
            idx = [names.index(n) for n in self.joint_names]
        except ValueError:
            self.get_logger().error(
                f"/joint_states names {names} lack a joint of {list(self.joint_names)}", throttle_duration_sec=1.0
            )
            return None
        pos = np.asarray(msg.position, float)
        if pos.size != len(names):
            return None
        return pos[idx]

    def _on_tick(self) -> None:
        if self.done or self._first_state_ns is None:
            return
        now = self._now_ns()
        if self._start_ns is None:
            if now - self._first_state_ns < self.config.start_delay * NS_PER_S:
                return
            self._start_ns = now
            self.get_logger().info("playing")
        elapsed = now - self._start_ns
        due = int(np.searchsorted(self._cmd_t, elapsed, side="right"))
        if due > self._next:
            self.skipped += due - self._next - 1  # only the latest due command matters: the arm holds it
            msg = Float64MultiArray()
            msg.data = self._cmd[due - 1].tolist()
            self._pub.publish(msg)
            self.published += 1
            self._next = due
        if self._next >= len(self._cmd_t) and ns_to_s(elapsed) >= self._rec_t[-1]:
            self._finish()

    def report(self) -> dict:
        """Position RMSE per joint [rad] between live and recorded /joint_states at equal time since start."""
        t = np.asarray(self._live_t)
        if len(t) == 0:
            return {"valid": False, "samples": 0, "failure": "no /joint_states received during playback"}
        q = np.asarray(self._live_q)
        keep = t <= self._rec_t[-1]
        t, q = t[keep], q[keep]
        rec = np.column_stack([np.interp(t, self._rec_t, self._rec_q[:, j]) for j in range(len(self.joint_names))])
        rmse = np.sqrt(np.mean((q - rec) ** 2, axis=0))
        valid = self.skipped <= self.config.max_skipped
        return {
            "valid": valid,
            "failure": None if valid else (
                f"{self.skipped} of {len(self._cmd)} recorded commands were skipped (max_skipped = "
                f"{self.config.max_skipped}): " + (
                    "the simulator's states came further apart than the recorded commands (a publish_rate below the "
                    "bag's command rate?)" if self.config.lockstep else
                    "the playback timer fell behind; rerun on a less loaded machine, in lockstep, or offline with "
                    "`deadzone-id replay`") + ", so the arm did not receive the recorded input and the error below "
                "is not the model's"),
            "bag": self.config.bag,
            "mode": "open_loop_dds_lockstep" if self.config.lockstep else "open_loop_dds",
            "joints": list(self.joint_names),
            "samples": int(len(t)),
            "commands_published": self.published,
            "commands_skipped": self.skipped,
            "rmse_q_rad": {n: float(v) for n, v in zip(self.joint_names, rmse)},
        }

    def _finish(self) -> None:
        self.done = True
        summary = self.report()
        self.failure = summary["failure"]
        if self.failure:
            self.get_logger().error(f"replay INVALID: {self.failure}; report: {json.dumps(summary)}")
        else:
            self.get_logger().info(f"replay finished: {json.dumps(summary)}")
        if self.config.report_dir:
            out = Path(self.config.report_dir)
            out.mkdir(parents=True, exist_ok=True)
            (out / "report.json").write_text(json.dumps(summary, indent=2) + "\n")


def main(args=None) -> int:
    """Run bag_replay until the bag is played out (exit 0; 1 if the replay is invalid: commands skipped, no state) or
    SIGINT/SIGTERM (0); 2 on a bad bag or parameter."""
    failure: list[str] = []

    def on_exit(node: Node) -> None:
        if isinstance(node, BagReplayNode) and node.done and node.failure:
            failure.append(node.failure)

    status = run_node("bag_replay", BagReplayNode, args, until=lambda node: node.done, on_exit=on_exit)
    if status == 0 and failure:
        print(f"bag_replay: replay failed: {failure[0]}", file=sys.stderr)
        return 1
    return status


if __name__ == "__main__":
    sys.exit(main())
