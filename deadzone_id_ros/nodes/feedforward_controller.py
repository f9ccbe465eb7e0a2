"""feedforward_controller: computed-torque control + disturbance observer + inverse-dynamics model, over ros2_control.

Thin rclpy adapter around :class:`deadzone_id_ros.control.FeedforwardController` (the control law, its safety
limits and the watchdog are documented there).

Topics:

- subscribes ``/joint_states`` (sensor_msgs/JointState; joints mapped by name; the header stamps give the period).
  Each message is one control tick unless it comes less than half a period after the last one, so the command
  follows the state with the least latency (:class:`~deadzone_id_ros.control.tick_gate.TickGate`: a tick is due
  one period after the last one was due, so a late state followed by an on-time one costs no tick).
- subscribes ``~/reference`` (trajectory_msgs/JointTrajectory): absolute time of a point = header.stamp (zero:
  now) + time_from_start; sampled with continuous q, dq, ddq; a new message replaces the previous reference
  ``reference_lead`` after it arrives (prepared meanwhile in a worker thread, off the control callback:
  :mod:`deadzone_id_ros.control.reference_pipeline`); an empty one holds the current desired position.
- publishes ``/effort_controller/commands`` (std_msgs/Float64MultiArray, one torque [N·m] per joint in
  ``command_joint_names`` order, the effort controller's joint list).
- publishes ``/diagnostics`` (diagnostic_msgs/DiagnosticArray) at ``diagnostics_rate``: loop period stats, late ticks
  (> 2 ms), compute time, state->command latency, DOB estimate, tracking error, watchdog state, clamp/rate-limit/NaN
  events, scheduling (policy, priority, memory locked, CPUs; :mod:`deadzone_id_ros.realtime`, applied by
  ``thread_priority``, ``lock_memory``, ``cpu_affinity``) (built in :mod:`.feedforward_controller_diagnostics`).
- publishes ``~/torque_parts`` (std_msgs/Float64MultiArray) every ``debug_decimation`` ticks: layout dim[0] "part"
  size 4 (ff, fb, dob, command), dim[1] "joint" size J (``joint_names`` order), row-major, [N·m].
- publishes ``~/external_torque``, ``~/external_torque_band`` (sensor_msgs/JointState, in ``effort``),
  ``~/contact`` (std_msgs/Bool) and ``~/external_wrench`` (geometry_msgs/WrenchStamped) with ``sensing`` (default
  off; ``sensing_*`` parameters, :class:`deadzone_id_ros.sensing.SensingConfig`): the external joint torque estimate,
  its dead-zone interval, the contact flag and the wrench, each stamped with the /joint_states it was computed from,
  after the command is published and its latency taken (:mod:`.sensing_publisher`); /diagnostics shows thresholds,
  the contact state and the sensing compute time, which the latency figure leaves out. ``sensing_worker``: the same
  from a process of its own, fed one sample per tick through a pipe (:mod:`.sensing_worker`).
- publishes ``~/command_stamped`` (sensor_msgs/JointState) with ``stamped_command``: every command again, in
  ``effort`` [N·m] (``command_joint_names`` order), after the command itself (so a latency measured on it is never
  shorter than the command's). Stamped with the time it is for: an answer to /joint_states carries that state's
  header stamp and, in ``position``, the desired position q_d [rad] the control law tracked (same order); a watchdog
  command carries the watchdog's time and an empty ``position``. A soak or a latency benchmark checks the controller
  from outside with it.

A watchdog timer (every watchdog_timeout/5, on the steady clock) holds the static torque, then zero, when
/joint_states stops; when the ROS clock stops too (simulated time with a stalled /clock) the steady-clock backstop
``watchdog_steady_timeout`` starts it anyway. A runaway (tracking error or position beyond its limit) latches the safe
state (hold, then zero torque), logged and reported as ERROR on /diagnostics with the reason, until the std_srvs/Trigger
service ``~/reset`` clears it. On shutdown (SIGINT/SIGTERM) a zero command is published before the node exits.

Parameters that shape what the node built at start (joints, mode, rates, publishers) are read-only; gains,
limits and timeouts (:data:`deadzone_id_ros.control.feedforward_controller_params.LIVE_PARAMETERS`) apply live: a
set-parameters request is validated as a whole (ranges, then the config dataclasses) and refused with the reason, or
applied at once. Model swap without a restart: the ``~/swap_model`` service (rcl_interfaces/SetParametersAtomically
with ``model``, ``model_path``, ``model_friction``, ``friction_velocity`` only) loads and checks the model in a worker
thread while control goes on; setting those parameters does the same in the parameter callback (the control loop
waits for the load). Either way the model runs from the next tick only if
:func:`deadzone_id_ros.control.model_swap.check_swap` accepts it (joints, units, the arm of a model carrying its URDF,
finite and within the effort limits on the recently seen states); a refusal leaves the old model running, fails the
request with the reason and shows it in the log and on /diagnostics (``model_swap``, WARN). The rate limit holds
across the swap.

Parameters: config/feedforward_controller.yaml (:class:`ControllerConfig` + :class:`ControllerNodeConfig`, the latter
and the file loader in :mod:`deadzone_id_ros.control.feedforward_controller_params`).
"""

from __future__ import annotations

import dataclasses
import sys
import time
from array import array
from collections import deque

import numpy as np
from builtin_interfaces.msg import Time
from diagnostic_msgs.msg import DiagnosticArray
from rcl_interfaces.srv import SetParametersAtomically
from rclpy.clock import Clock, ClockType
from rclpy.duration import Duration as RosDuration
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, MultiArrayDimension
from std_srvs.srv import Trigger
from trajectory_msgs.msg import JointTrajectory

from ..control import ControllerConfig, build_controller
from ..control import feedforward_controller_params as ffp
from ..control.model_swap import MODEL_FIELDS
from ..control.reference_pipeline import ReferencePipeline
from ..control.state_names import StateNameMap
from ..control.tick_gate import TickGate
from ..errors import SafetyError
from ..realtime import RealtimeConfig, RealtimeState, current_state
from ..sensing import SensingConfig
from ..sensing.sensor import SENSING_CHOICES, SENSING_RANGES
from ..stamps import EpochSeconds, ns_to_s, ns_to_stamp, stamp_to_ns
from ._common import SimClockWatch, declare_dataclass_parameters, run_node
from .feedforward_controller_diagnostics import control_loop_status
from .feedforward_controller_handlers import ControllerHandlers
from .feedforward_controller_parameters import ModelSwapper
from .feedforward_controller_reference import decode_reference, report_updates, warm_up
from .sensing_publisher import SensingPublisher
from .sensing_worker import SensingWorker

__all__ = ["FeedforwardControllerNode", "main"]


class FeedforwardControllerNode(ControllerHandlers):
    """rclpy adapter of the feedforward controller.

    Raises:
        ConfigError: a parameter value is invalid (names the parameter).
        SafetyError: the model's, URDF's or command joint names do not match ``joint_names`` (names the joints).
        FileNotFoundError, ArtifactError, RobotDescriptionError: the model or URDF cannot be loaded.
    """

    def __init__(self, **kwargs) -> None:
        super().__init__("feedforward_controller", **kwargs)
        fixed = [f.name for f in dataclasses.fields(ControllerConfig) + dataclasses.fields(ffp.ControllerNodeConfig)
                 if f.name not in ffp.LIVE_PARAMETERS + MODEL_FIELDS]
        self.config: ControllerConfig = declare_dataclass_parameters(
            self, ControllerConfig, read_only=fixed, ranges=ffp.PARAMETER_RANGES, choices=ffp.PARAMETER_CHOICES)
        self.node_config: ffp.ControllerNodeConfig = declare_dataclass_parameters(
            self, ffp.ControllerNodeConfig, read_only=fixed, ranges=ffp.PARAMETER_RANGES)
        self.debug_decimation = self.node_config.debug_decimation
        names = tuple(self.config.joint_names)
        cmd_names = tuple(self.node_config.command_joint_names)
        if sorted(cmd_names) != sorted(names):
            raise SafetyError(
                f"command_joint_names {list(cmd_names)} must hold exactly the joints of joint_names {list(names)}: "
                f"missing {[j for j in names if j not in cmd_names]}, extra {[j for j in cmd_names if j not in names]}"
            )
        self.command_joint_names = cmd_names
        self._to_command = np.array([names.index(j) for j in cmd_names], dtype=int)
        self._command_identity = cmd_names == names
        self.controller = build_controller(self.config)
        self.sensing_config: SensingConfig = declare_dataclass_parameters(
            self, SensingConfig, read_only=[f.name for f in dataclasses.fields(SensingConfig)], ranges=SENSING_RANGES,
            choices=SENSING_CHOICES)
        nc = self.node_config  # run_node applies realtime_config in the spin thread, then sets realtime_state
        self.realtime_config = RealtimeConfig(nc.thread_priority, nc.lock_memory, nc.cpu_affinity)
        self.realtime_state: RealtimeState = current_state()
        # name list of a /joint_states message -> indices of the controlled joints in it (None: another publisher's)
        self._names = StateNameMap(self.config.joint_names, self._on_foreign_states, self._on_missing_joints)
        self._time = EpochSeconds()  # the controller's float seconds, precise at wall-clock stamps
        self._gate = TickGate(self.config.control_rate)  # which states are ticks (stamps in ns)
        self._ticks = 0
        self._bad_states = 0
        self._references = 0
        self._watchdog_state = self.controller.status.watchdog
        self._faults_reported = 0
        self._steady = Clock(clock_type=ClockType.STEADY_TIME)
        # steady time [ns] of the last fresh (or repeated) /joint_states: read with time.monotonic_ns(), the clock of
        # rclpy's STEADY_TIME (CLOCK_MONOTONIC) without building a rclpy Time object every tick
        self._steady_last_ns: int | None = None
        # warns when use_sim_time is set and no /clock arrives; polled by the steady watchdog timer, not the spin loop
        self._clock_watch = SimClockWatch(self)
        window = int(self.config.control_rate / self.node_config.diagnostics_rate) + 1
        self._periods: deque[float] = deque(maxlen=window)
        self._compute: deque[float] = deque(maxlen=window)
        self._latency: deque[float] = deque(maxlen=window)
        self._awaiting_subscribers = (self.node_config.wait_for_subscribers > 0
                                      or self.node_config.wait_for_reference_publishers > 0)  # _subscribers_matched

        # deep writer history, as sim_arm's /joint_states: a recorder that falls behind still gets every command
        self._cmd_pub = self.create_publisher(Float64MultiArray, "/effort_controller/commands", 1000)
        self._diag_pub = self.create_publisher(DiagnosticArray, "/diagnostics", 10)
        self._parts_pub = self.create_publisher(Float64MultiArray, "~/torque_parts", 10)
        self._stamped_pub = None
        if self.node_config.stamped_command:
            # deep: a checker that misses one command cannot tell the rate limit from the command stream
            self._stamped_pub = self.create_publisher(JointState, "~/command_stamped", 1000)
            self._stamped_msg = JointState(name=list(cmd_names))
        self._sensing: SensingPublisher | None = None
        self._sensing_worker: SensingWorker | None = None
        if self.sensing_config.sensing and nc.sensing_worker:
            self._sensing_worker = SensingWorker(self, self.config, self.sensing_config, nc,
                                                 bool(self.get_parameter("use_sim_time").value))
        elif self.sensing_config.sensing:
            self._sensing = SensingPublisher.build(self, self.sensing_config, self.config, self.controller.model,
                                                   names)
        self.create_subscription(JointState, "/joint_states", self._on_joint_state, 10)
        # serialized: the worker thread of the pipeline decodes it (nodes.feedforward_controller_reference)
        warm_up(names)
        # A tick waits for a late update only on the simulator's clock (lockstep: the simulator waits too, and the
        # switch time stays deterministic); on a real robot's clock it never blocks (see ReferencePipeline's wait).
        sim_time = bool(self.get_parameter("use_sim_time").value)
        self._pipeline = ReferencePipeline(self.controller, lambda raw, now: decode_reference(raw, now, self._time),
                                           self.node_config.reference_lead, wait=1.0 if sim_time else 0.0)
        self._reference_sub = self.create_subscription(JointTrajectory, "~/reference", self._on_reference, 10,
                                                       raw=True)
        self._watchdog_timer = self.create_timer(self.config.watchdog_timeout / 5.0, self._on_watchdog,
                                                 clock=self._steady)
        self.create_service(Trigger, "~/reset", self._on_reset)
        self.add_on_set_parameters_callback(self._on_set_parameters)
        self._swapper = ModelSwapper(self.controller, self.get_logger())
        self.create_service(SetParametersAtomically, "~/swap_model", self._on_swap_model)
        self.create_timer(1.0 / self.node_config.diagnostics_rate, self._on_diagnostics)
        self._cmd_msg = Float64MultiArray()
        self._parts_msg = Float64MultiArray()
        j = len(names)
        self._parts_msg.layout.dim = [
            MultiArrayDimension(label="part", size=4, stride=4 * j),
            MultiArrayDimension(label="joint", size=j, stride=j),
        ]
        at = f" (at the {self.config.feedforward_velocity} velocity)" * self.config.uses_model
        self.get_logger().info(f"feedforward_controller: mode {self.config.mode}, model {self.config.model}{at}, "
                               f"joints {list(names)}, command order {list(cmd_names)}, effort limits "
                               f"{self.controller.effort_limit.tolist()} N*m")

    # -------------------------------------------------------------------------------------------------------------
    def _now_s(self) -> float:
        return self._time.to_s(self.get_clock().now().nanoseconds)

    def _publish(self, tau: np.ndarray) -> None:
        # An array('d') is what the message's setter would make of a list, without its per-element checks (tau is
        # always a finite float64 array here).
        self._cmd_msg.data = array("d", (tau if self._command_identity else tau[self._to_command]).tolist())
        self._cmd_pub.publish(self._cmd_msg)

    def _publish_stamped(self, stamp: Time, q_d: np.ndarray | None) -> None:
        """~/command_stamped: the command just published, with ``stamp`` and q_d (command order) or none."""
        m = self._stamped_msg
        m.header.stamp = stamp
        m.effort = self._cmd_msg.data
        m.position = array("d", q_d.tolist()) if q_d is not None else array("d")
        self._stamped_pub.publish(m)  # type: ignore[union-attr]

    def publish_zero(self) -> None:
        """Publish a zero torque command (the safe command on shutdown)."""
        self._publish(np.zeros(len(self.config.joint_names)))
        self._cmd_pub.wait_for_all_acked(RosDuration(seconds=0.5))  # deliver it before the node goes away

    def _on_foreign_states(self, names: tuple[str, ...]) -> None:
        self.get_logger().info(f"/joint_states from another publisher (joints {list(names)}, none of this "
                               f"controller's {list(self.config.joint_names)}): ignored")

    def _on_missing_joints(self, missing: list[str], names: tuple[str, ...]) -> None:
        self._bad_states += 1
        self.get_logger().error(f"/joint_states lacks joint(s) {missing} (it has {list(names)}); not controlling",
                                throttle_duration_sec=1.0)

    def _subscribers_matched(self) -> bool:
        """True once /effort_controller/commands has ``wait_for_subscribers`` matched subscribers and ~/reference
        ``wait_for_reference_publishers`` matched publishers (then for good).

        In a lockstep simulation the simulator holds time until the first answer; a recorder whose subscription
        DDS had not yet matched when the first commands went out missed them (measured: up to the first 1.6 s of
        simulated time of a 4 s live run, when the nodes started in an unlucky order), and time ran on while the
        excitation was still starting."""
        nc = self.node_config
        have_subs = self._cmd_pub.get_subscription_count()
        have_pubs = self._reference_sub.get_publisher_count()
        if have_subs < nc.wait_for_subscribers or have_pubs < nc.wait_for_reference_publishers:
            self.get_logger().info(
                f"waiting for {nc.wait_for_subscribers} subscriber(s) of /effort_controller/commands (have "
                f"{have_subs}) and {nc.wait_for_reference_publishers} publisher(s) of ~/reference (have {have_pubs}) "
                "before the first command", once=True)
            return False
        self._awaiting_subscribers = False
        return True

    def _on_joint_state(self, msg: JointState) -> None:
        if self._awaiting_subscribers and not self._subscribers_matched():
            return
        idx = self._names.indices(msg.name)
        if idx is None:
            return
        n = len(msg.name)
        if len(msg.position) != n or len(msg.velocity) != n:
            self._bad_states += 1
            self.get_logger().error(
                f"/joint_states: position ({len(msg.position)}) and velocity ({len(msg.velocity)}) must have one value "
                f"per name ({n}); not controlling", throttle_duration_sec=1.0,
            )
            return
        stamp_ns = stamp_to_ns(msg.header.stamp)
        if not self._gate.is_tick(stamp_ns):
            if stamp_ns == self._gate.last_ns:
                # The same state again: a simulator in lockstep repeats its state until a command reaches it (the
                # first one can be lost while DDS is still matching). Answer with the command already computed.
                self._steady_last_ns = time.monotonic_ns()
                self._cmd_pub.publish(self._cmd_msg)
            return  # faster than the control rate: skip this state
        c0 = time.perf_counter()
        q = np.asarray(msg.position)[idx]
        dq = np.asarray(msg.velocity)[idx]
        t = self._time.to_s(stamp_ns)
        if self._pipeline.pending:
            self._references = report_updates(self.get_logger(), self._pipeline.due(t), self._references)
        tau = self.controller.step(t, q, dq)
        compute = time.perf_counter() - c0
        used = self.controller.last_stamp == t  # not rejected as stale or non-finite
        if used:
            self._steady_last_ns = time.monotonic_ns()
        self._publish(tau)
        if self._stamped_pub is not None:  # q_d only for a state the control law (and its limits) judged
            q_d = self.controller.desired[0] if used else None
            self._publish_stamped(msg.header.stamp, q_d if q_d is None or self._command_identity
                                  else q_d[self._to_command])
        now_ns = self.get_clock().now().nanoseconds  # the command is out: the state->command latency ends here
        if self._sensing is not None and used:  # after the command and its latency: sensing times itself
            self._sensing.on_state(msg, idx, t, q, dq, tau, self.controller.model)
        elif self._sensing_worker is not None and used:  # to the worker process (a pipe write)
            self._sensing_worker.on_state(msg.header.stamp, msg.effort if len(msg.effort) == n else None, idx, t,
                                          q, dq, tau, self.controller.config)
        last_ns = self._gate.last_ns
        if last_ns is not None and stamp_ns > last_ns:  # a stamp going back is no period
            self._periods.append(ns_to_s(stamp_ns - last_ns))
        self._gate.ticked(stamp_ns)
        self._compute.append(compute)
        self._latency.append(ns_to_s(now_ns - stamp_ns))
        self._ticks += 1
        if self.debug_decimation > 0 and self._ticks % self.debug_decimation == 0:
            p = self.controller.parts
            self._parts_msg.data = np.concatenate([p.ff, p.fb, p.dob, p.command]).tolist()
            self._parts_pub.publish(self._parts_msg)
        self._report_watchdog()

    def _on_reference(self, raw: bytes) -> None:
        """~/reference, serialized: to the worker thread; it takes effect ``reference_lead`` after now."""
        self._pipeline.submit(raw, self._now_s())

    def destroy_node(self) -> None:
        """Stop the reference thread and the sensing worker (those started), then destroy the node."""
        for part in (getattr(self, "_pipeline", None), getattr(self, "_sensing_worker", None)):
            if part is not None:
                part.close()
        super().destroy_node()

    def _on_watchdog(self) -> None:
        """Runs on the steady clock. The watchdog's time is the ROS clock's, unless no state came for
        ``watchdog_steady_timeout`` of wall time: then at least the last stamp + watchdog_timeout + the wall time
        beyond the backstop (a stalled /clock, or a clock that jumped back, cannot stop the watchdog). Also warns
        while simulated time has not started (no /clock)."""
        self._clock_watch.poll()  # returns at once once simulated time has started
        now = self._now_s()
        t_last = self.controller.last_stamp
        if t_last is not None and self._steady_last_ns is not None:
            beyond = ns_to_s(time.monotonic_ns() - self._steady_last_ns) \
                - self.node_config.watchdog_steady_timeout
            if beyond > 0:
                now = max(now, t_last + self.config.watchdog_timeout + 1e-6 + beyond)
        tau = self.controller.check_watchdog(now)
        if tau is not None:
            self._publish(tau)
            if self._stamped_pub is not None:
                sec, nanosec = ns_to_stamp(self._time.to_ns(now))
                self._publish_stamped(Time(sec=sec, nanosec=nanosec), None)
        self._report_watchdog()

    def _report_watchdog(self) -> None:
        st = self.controller.status
        state = st.watchdog
        if state != self._watchdog_state:
            # One call site per severity: rclpy's logger refuses a second severity from the same call site.
            if state == "running":
                self.get_logger().info(f"watchdog: {self._watchdog_state} -> {state}")
            else:
                self.get_logger().warning(f"watchdog: {self._watchdog_state} -> {state}")
            self._watchdog_state = state
        safety = self.controller.safety
        if safety.faults != self._faults_reported:  # a new fault (counted: two faults can have the same reason)
            if safety.fault:
                self.get_logger().error(
                    f"safe state at t = {self._time.text(safety.fault_time)} s: {safety.fault}; holding the static "
                    f"torque for {self.config.fault_hold_time:g} s, then zero torque, until "
                    f"{self.get_fully_qualified_name()}/reset is called")
            self._faults_reported = safety.faults

    def _on_diagnostics(self) -> None:
        arr = DiagnosticArray()
        arr.header.stamp = self.get_clock().now().to_msg()
        arr.status = [control_loop_status(
            f"{self.get_name()}: control loop", self.get_fully_qualified_name(), self.config, self.controller,
            list(self._periods), list(self._compute), list(self._latency), self._bad_states, self.realtime_state,
            foreign=(self._names.foreign_states, self._names.foreign_names), model_swap=self._swapper.report)]
        if self._sensing is not None:
            arr.status.append(self._sensing.status(f"{self.get_name()}: sensing", self.get_fully_qualified_name()))
        if self._sensing_worker is not None:  # its sensing entry comes from the worker itself
            arr.status.append(self._sensing_worker.status(f"{self.get_name()}: sensing worker",
                                                          self.get_fully_qualified_name()))
        self._diag_pub.publish(arr)


def _publish_zero(node: FeedforwardControllerNode) -> None:
    try:
        node.publish_zero()
        node.get_logger().info("published a zero torque command; shutting down")
    except Exception as err:  # noqa: BLE001 - rclpy raises RCLError if the context is already gone
        print(f"feedforward_controller: could not publish the zero command: {err}", file=sys.stderr)


def main(args=None) -> int:
    """Run the node until SIGINT/SIGTERM, then publish a zero command. Returns 0, or 2 on a configuration error.

    rclpy's own signal handlers are off (see nodes._common.run_node), so the context is still valid for the zero
    command; the spin loop stops between callbacks on SIGINT/SIGTERM.
    """
    # No clock watch in the spin loop (measured: the demo's lockstep graph stalled once the reference moved whenever
    # this node polled it there; cause not found): the node's steady watchdog timer polls its own watch instead.
    return run_node("feedforward_controller", FeedforwardControllerNode, args, on_exit=_publish_zero,
                    watch_clock=False)


if __name__ == "__main__":
    sys.exit(main())
