"""sim_arm: the MuJoCo arm standing in for ros2_control hardware + joint_state_broadcaster + effort controller.

Publishes ``/joint_states`` (sensor_msgs/JointState: name, position [rad], velocity [rad/s], effort = applied torque
[N·m]) at ``publish_rate`` and, with ``clock_mode: sim``, ``/clock`` (it then owns simulated time). Subscribes
``/effort_controller/commands`` (std_msgs/Float64MultiArray, one torque per joint in ``joint_names`` order, as a
forward_command_controller with interface_name effort). Holds the last good command; after ``command_timeout``
without one it applies zero torque; before the first command the joints sit on their brakes at
``initial_position`` (``brake_until_first_command``); clamps to the URDF effort limits; rejects a command of the
wrong length or with NaN/inf (throttled error) and keeps the last good one.

Scripted push (``push_*`` parameters, :class:`deadzone_id_ros.sim.external_forces.ScriptedPushConfig`; off without
``push_link``): a known force on a link from ``push_start`` (simulated time) for ``push_duration``; the true external
joint torque J^T F of each state is published on ``~/true_external_torque`` (sensor_msgs/JointState, ``effort``
[N·m], the state's stamp), the ground truth of force sensing.

Obstacle (``obstacle_*`` parameters, :class:`deadzone_id_ros.sim.external_forces.ScriptedObstacleConfig`; off
without ``obstacle_position``): a fixed box in the world and a probe sphere on ``obstacle_probe_link``; the arm
touches it through MuJoCo's contact, and the contact's joint torque is part of ``~/true_external_torque``. With or
without a push.

Teleoperation world (``teleop_*`` parameters, :class:`deadzone_id_ros.experiments.teleop.world.TeleopWorldConfig`;
off without ``teleop_role``): the arm's part of a ``deadzone-id teleop`` scenario, for a live leader-follower run with
two sim_arm nodes in namespaces (``-r __ns:=/leader``; launch/teleop.launch.yaml): the leader gets the scripted
operator's hand (its torque is the arm's ``~/true_external_torque``; the reference it pulls the leader along is
published on ``reference``, trajectory_msgs/JointTrajectory with one point per state: the state's stamp, positions
[rad], velocities by central difference [rad/s] and zero accelerations, as ``deadzone-id teleop --record`` writes
it), the follower the scenario's box or push. Not together with a ``push_link`` or an ``obstacle_position``.

The hardware topics are relative names (``joint_states``, ``effort_controller/commands``): without a namespace they
resolve to ``/joint_states`` and ``/effort_controller/commands``, in namespace ``/leader`` to ``/leader/joint_states``
etc. ``/clock`` stays absolute (one simulated clock); a second simulator in lockstep beside the one that owns it
remaps its own away (``-r /clock:=/follower/clock``).

Real-time scheduling (``thread_priority``, ``lock_memory``, ``cpu_affinity``; :mod:`deadzone_id_ros.realtime`) is
applied before the node spins; off by default (a simulator in lockstep needs none).

Lockstep (``lockstep: true``, ``clock_mode: sim``): each state waits for the command that answers it; the next timer
tick steps the physics, or with ``step_on_answer`` the answer itself at once, unless simulated time would then run
ahead of ``real_time_factor`` (the timer steps it then). A command received before the state awaiting an answer
was published answers an earlier state: it does not count as the answer (see ``_answers_an_earlier_state``).

Parameters: config/sim_arm.yaml (physics: deadzone_id_ros.sim.config; timing and the file loader:
deadzone_id_ros.sim.sim_arm_params).
"""

from __future__ import annotations

import dataclasses
import sys
import time
import warnings
from collections.abc import Callable

import numpy as np
from builtin_interfaces.msg import Time
from rclpy.node import Node
from rclpy.publisher import Publisher
from rclpy.subscription import MessageInfo
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from ..errors import ConfigError, DeadzoneIdError
from ..experiments.teleop.world import TeleopWorldConfig
from ..realtime import RealtimeConfig
from ..sim import SimArm, SimArmConfig
from ..sim.arm import FrictionSourceWarning
from ..sim.external_forces import ScriptedObstacleConfig, ScriptedPushConfig, scripted_forces
from ..sim.sim_arm_params import SimArmNodeConfig
from ..stamps import ns_to_stamp, s_to_ns
from ._common import declare_dataclass_parameters, run_node

__all__ = ["SimArmNode", "main"]

PUBLISH_DEPTH = 1000  # /joint_states writer history: about 1 s at 1 kHz for a slow reliable reader
MAX_CATCH_UP_STEPS = 50  # physics steps per tick at most; beyond that the sim falls behind instead of spiralling


class SimArmNode(Node):
    """rclpy adapter around :class:`deadzone_id_ros.sim.SimArm`.

    Raises:
        ConfigError: a parameter value is invalid (names the parameter).
        RobotDescriptionError: the URDF lacks a configured joint.
    """

    def __init__(self, **kwargs) -> None:
        super().__init__("sim_arm", **kwargs)
        self.sim_config = declare_dataclass_parameters(self, SimArmConfig, read_only=("urdf_path", "joint_names"))
        self.node_config = declare_dataclass_parameters(
            self, SimArmNodeConfig, read_only=("clock_mode", "thread_priority", "lock_memory", "cpu_affinity"))
        self.push_config = declare_dataclass_parameters(
            self, ScriptedPushConfig, read_only=[f.name for f in dataclasses.fields(ScriptedPushConfig)])
        self.obstacle_config = declare_dataclass_parameters(
            self, ScriptedObstacleConfig, read_only=[f.name for f in dataclasses.fields(ScriptedObstacleConfig)])
        self.teleop_config = declare_dataclass_parameters(
            self, TeleopWorldConfig, read_only=[f.name for f in dataclasses.fields(TeleopWorldConfig)])
        if self.teleop_config.teleop_role and (self.push_config.push_link or self.obstacle_config.obstacle_position):
            raise ConfigError(f"sim_arm: teleop_role {self.teleop_config.teleop_role!r} and a push_link or an "
                              "obstacle_position both set: the teleoperation world brings its own forces; give one "
                              "of them")
        external = (self.teleop_config.external() if self.teleop_config.teleop_role
                    else scripted_forces(self.push_config, self.obstacle_config))
        nc = self.node_config  # run_node applies it in the spin thread (nodes._common.apply_node_realtime)
        self.realtime_config = RealtimeConfig(nc.thread_priority, nc.lock_memory, nc.cpu_affinity)
        with warnings.catch_warnings(record=True) as caught:  # e.g. friction that overrides the URDF's: to the log
            warnings.simplefilter("always", FrictionSourceWarning)
            self.arm = SimArm(self.sim_config, external=external)
        for w in caught:
            self.get_logger().warning(str(w.message))
        self._owns_clock = self.node_config.clock_mode == "sim"
        if self._owns_clock and self.get_parameter("use_sim_time").value:
            raise DeadzoneIdError(
                "sim_arm with clock_mode 'sim' publishes /clock itself: set use_sim_time false for it"
            )
        self._command = np.zeros(self.arm.n_joints)
        self._last_command_sim_t: float | None = None
        self._timed_out = True
        self._awaiting_since: float | None = None  # lockstep: wall time the last state went out unanswered
        self._last_idle_publish = 0.0
        self._subscribers_seen = False  # lockstep: wait_for_subscriber_nodes all matched once
        self._steps_per_tick = max(1, int(round(1.0 / (self.node_config.publish_rate * self.arm.dt))))
        self.rejected_commands = 0
        self.stale_commands = 0  # lockstep: commands that answered an earlier state (no step)
        self._state_sent_ns = 0  # system time [ns] just before the last state was published
        self._wall_start = time.monotonic()
        self.done = False  # exit_after reached: run_node stops the node
        self._said_second = 0  # exit_after: the last whole simulated second logged
        self._epoch_ns = self.get_clock().now().nanoseconds  # sim time 0 maps to this wall time in clock_mode wall
        # deep history: a reliable writer keeps this many states for a reader that falls behind (a recorder at normal
        # priority beside this node at real-time priority on a busy machine lost a third of them at depth 10)
        self._joint_pub = self.create_publisher(JointState, "joint_states", PUBLISH_DEPTH)
        self._clock_pub = (
            self.create_publisher(Clock, "/clock", 10) if self._owns_clock else None
        )  # reliable: matches both kinds of subscriber
        self.create_subscription(Float64MultiArray, "effort_controller/commands", self._on_command, 10)
        self._truth_pub = (self.create_publisher(JointState, "~/true_external_torque", PUBLISH_DEPTH)
                           if self.arm.external is not None else None)
        self._truth_msg = JointState(name=list(self.arm.joint_names))
        # the operator's reference of a teleoperation leader (its hand pulls the arm along it), for the recording
        reference = getattr(self.arm.external, "reference", None)
        self._reference: Callable[[float], np.ndarray] | None = reference if callable(reference) else None
        self._ref_pub = (self.create_publisher(JointTrajectory, "reference", PUBLISH_DEPTH)
                         if self._reference is not None else None)
        self._ref_msg = JointTrajectory(joint_names=list(self.arm.joint_names), points=[JointTrajectoryPoint(
            accelerations=[0.0] * self.arm.n_joints)])
        self._msg = JointState()
        self._clock_msg = Clock()
        self._idle_state_published = False
        self._msg.name = list(self.arm.joint_names)
        self._timer = self.create_timer(1.0 / self.node_config.publish_rate, self._on_tick)
        self.get_logger().info(
            f"sim_arm: joints {list(self.arm.joint_names)}, physics dt {self.arm.dt * 1e3:.3g} ms, publishing "
            f"/joint_states at {self.node_config.publish_rate:g} Hz, clock_mode {self.node_config.clock_mode}"
        )

    def _on_command(self, msg: Float64MultiArray, info: MessageInfo) -> None:
        data = np.asarray(msg.data, dtype=float)
        if data.shape != (self.arm.n_joints,):
            self.rejected_commands += 1
            self.get_logger().error(
                f"/effort_controller/commands: got {data.size} values, expected {self.arm.n_joints} "
                f"(joints {list(self.arm.joint_names)}); keeping the last good command",
                throttle_duration_sec=1.0,
            )
            return
        if not np.all(np.isfinite(data)):
            self.rejected_commands += 1
            bad = [n for n, v in zip(self.arm.joint_names, data) if not np.isfinite(v)]
            self.get_logger().error(
                f"/effort_controller/commands: non-finite torque for joint(s) {bad}; keeping the last good command",
                throttle_duration_sec=1.0,
            )
            return
        stale = self._answers_an_earlier_state(info)
        answered = not stale and (self._awaiting_since is not None or self._last_command_sim_t is None)
        self._command = data  # a stale one too: the newest command (a controller's zero torque as it shuts down)
        self._last_command_sim_t = self.arm.time
        if not stale:
            self._awaiting_since = None
        if self._timed_out:
            self._timed_out = False
            self.get_logger().info("receiving effort commands")
        if self.node_config.lockstep and self.node_config.step_on_answer and answered:
            # the answer to the last state: step now rather than at the next timer tick (up to a period later), so
            # a lockstep run goes as fast as the controller answers, still capped by real_time_factor
            self._on_tick()

    def _answers_an_earlier_state(self, info: MessageInfo) -> bool:
        """Lockstep: whether a command reached this node (DDS reception time, this host's clock) before the state
        now awaiting an answer was published, so it answers an earlier state: a controller that answered two copies
        of the initial state, both queued while this process was starved. Counted as the answer, it would step the
        physics once more with a stale command and leave every later command one state behind (an extra 1 ms of
        loop delay: measured, the DOB loops of the bundled arm's joints 2 and 3 then chattered through a whole
        live recording). Such a command does not count as the answer (no step; counted in ``stale_commands``), but
        it is kept as the newest command: the controller's zero torque, sent as it shuts down right after its last
        answer, must still be what the arm gets."""
        if not (self.node_config.lockstep and self._awaiting_since is not None):
            return False
        received = int(info.get("received_timestamp") or 0)  # 0: the middleware does not give it
        if received <= 0 or received >= self._state_sent_ns:
            return False
        self.stale_commands += 1
        self.get_logger().info(
            f"lockstep: {self.stale_commands} command(s) reached the simulator before the state they would answer "
            "(answers to an earlier state): kept as the newest command, not counted as an answer",
            throttle_duration_sec=5.0)
        return True

    def _subscribers_ready(self) -> bool:
        """Lockstep, before the first state: whether every node of ``wait_for_subscriber_nodes`` subscribes to
        /joint_states in the ROS graph and this node's publisher has matched every subscription the graph shows (so
        the first state reaches them all: a subscription matched late would miss the start of the recording). Logs
        what it waits for, every 5 s."""
        wanted = self.node_config.wait_for_subscriber_nodes
        if self._subscribers_seen or not wanted:
            return True
        infos = self.get_subscriptions_info_by_topic(self._joint_pub.topic_name)
        present = {i.node_name for i in infos} | {
            f"{i.node_namespace.rstrip('/')}/{i.node_name}" for i in infos}
        missing = [n for n in wanted if n not in present and f"/{n}" not in present]
        matched = self._joint_pub.get_subscription_count()
        if missing or matched < len(infos):
            self.get_logger().info(
                f"lockstep: simulated time waits for /joint_states subscribers: missing {missing}, "
                f"{matched} of {len(infos)} subscription(s) matched", throttle_duration_sec=5.0)
            return False
        self._subscribers_seen = True
        self.get_logger().info(
            f"lockstep: /joint_states subscribers ready ({matched} matched, including {list(wanted)})")
        return True

    def _target_sim_time(self) -> float:
        elapsed = time.monotonic() - self._wall_start
        factor = self.node_config.real_time_factor if self._owns_clock else 1.0
        return elapsed * factor

    def _steps_due(self) -> int:
        """Physics steps to take this tick: catch up with wall time, or one tick's worth in lockstep."""
        arm = self.arm
        n = int((self._target_sim_time() - arm.time) / arm.dt + 1e-9)
        if not self.node_config.lockstep:
            return min(max(n, 0), MAX_CATCH_UP_STEPS)
        if self._last_command_sim_t is None:
            return 0  # lockstep: simulated time starts with the controller's first command
        if n < self._steps_per_tick:
            return 0  # ahead of real_time_factor
        if self._awaiting_since is not None:
            waited = time.monotonic() - self._awaiting_since
            if waited < self.node_config.lockstep_timeout:
                return 0  # the controller has not answered the last state yet: simulated time waits
            self.get_logger().warning(
                f"lockstep: no effort command {waited:.2f} s after the last /joint_states; stepping without one",
                throttle_duration_sec=1.0,
            )
        return self._steps_per_tick

    def _on_tick(self) -> None:
        arm = self.arm
        n = self._steps_due()
        if self._last_command_sim_t is None and self.node_config.brake_until_first_command:
            arm.hold(n)  # brakes on until the controller starts
        else:
            for _ in range(n):
                stale = (
                    self._last_command_sim_t is None
                    or arm.time - self._last_command_sim_t > self.node_config.command_timeout
                )
                if stale and not self._timed_out:
                    self._timed_out = True
                    self.get_logger().warning(
                        f"no effort command for {self.node_config.command_timeout:g} s: applying zero torque"
                    )
                arm.step(np.zeros(arm.n_joints) if self._timed_out else self._command)
        if self.node_config.exit_after and n:
            self._count_down(arm.time)
        if n == 0:
            if not (self.node_config.lockstep and self._last_command_sim_t is None):
                return
            # lockstep, no controller yet: repeat the initial state at 10 Hz (same stamp) so one can answer it
            now = time.monotonic()
            if now - self._last_idle_publish < 0.1:
                return
            self._last_idle_publish = now
            if not self._subscribers_ready():
                return
            if self._idle_state_published:
                # the same message again: measuring anew would draw velocity noise, and then the noise of the run
                # (and the motion of an open-loop replay) would depend on how long the controller took to answer
                if self._clock_pub is not None:
                    self._clock_pub.publish(self._clock_msg)
                self._joint_pub.publish(self._msg)
                return
            self._idle_state_published = True
        meas = arm.measure()
        if self._clock_pub is not None:
            stamp_ns = s_to_ns(meas.t)
            clock = self._clock_msg
            clock.clock.sec, clock.clock.nanosec = ns_to_stamp(stamp_ns)
            self._clock_pub.publish(clock)
        else:
            stamp_ns = self._epoch_ns + s_to_ns(meas.t)
        msg = self._msg
        msg.header.stamp.sec, msg.header.stamp.nanosec = ns_to_stamp(stamp_ns)
        msg.position = meas.q.tolist()
        msg.velocity = meas.dq.tolist()
        msg.effort = meas.effort.tolist()
        self._state_sent_ns = time.time_ns()  # before publishing: an answer to this state is received after it
        self._joint_pub.publish(msg)
        if self._truth_pub is not None and self.arm.external is not None:
            self._truth_msg.header.stamp = msg.header.stamp
            self._truth_msg.effort = self.arm.external.true_torque.tolist()
            self._truth_pub.publish(self._truth_msg)
        if self._ref_pub is not None and self._reference is not None:
            self._publish_reference(self._ref_pub, self._reference, meas.t, msg.header.stamp)
        if self.node_config.lockstep and self._last_command_sim_t is not None:
            self._awaiting_since = time.monotonic()

    def _count_down(self, t: float) -> None:
        """exit_after: log each whole simulated second [s] of ``t`` reached, and be done at ``exit_after``."""
        end = self.node_config.exit_after
        if int(t) > self._said_second:
            self._said_second = int(t)
            self.get_logger().info(f"simulated {self._said_second} s of {end:g} s")
        if t >= end - 1e-9 and not self.done:
            self.done = True
            self.get_logger().info(f"simulated time reached exit_after = {end:g} s: stopping")

    def _publish_reference(self, pub: Publisher, ref: Callable[[float], np.ndarray], t: float,
                           stamp: Time) -> None:
        """The operator's reference ``ref`` at simulated time ``t`` [s] on ``pub``, stamped ``stamp`` (the state's):
        positions [rad] and their central difference over one physics step [rad/s] (forward at t = 0)."""
        dt = self.arm.dt
        before = max(t - dt, 0.0)
        point = self._ref_msg.points[0]
        point.positions = np.asarray(ref(t), dtype=float).tolist()
        point.velocities = ((np.asarray(ref(t + dt), dtype=float) - np.asarray(ref(before), dtype=float))
                            / (t + dt - before)).tolist()
        self._ref_msg.header.stamp = stamp
        pub.publish(self._ref_msg)


def main(args=None) -> int:
    """Run the sim_arm node until SIGINT/SIGTERM. Returns 0, or 2 on a configuration error (message, no traceback)."""
    return run_node("sim_arm", SimArmNode, args, until=lambda node: node.done)


if __name__ == "__main__":
    sys.exit(main())
