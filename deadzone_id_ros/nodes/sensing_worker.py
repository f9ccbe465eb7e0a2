"""The controller's force sensing in a process of its own (``sensing_worker: true``; thin rclpy adapter).

With ``sensing_worker`` the feedforward_controller does not run its force sensor in the control loop: after each
command is out it writes the sample (stamp, q, dq, the torque of the interval) into a pipe
(:mod:`deadzone_id_ros.sensing.pipe`, a few microseconds) and a child process, started by the controller, runs the
same sensor (:class:`.sensing_publisher.SensingPublisher`, built from the controller's own configuration and model)
and publishes the same topics under the controller's name (``/<controller>/external_torque``, ...) and the same
``<controller>: sensing`` entry on /diagnostics. This is realtime_tools' RealtimePublisher of ros2_control
controllers (non-real-time work handed out of the loop), as a process because a Python thread would hold the
interpreter lock in the loop's time.

- Scheduling: the worker runs with normal scheduling (``sensing_worker_priority`` 0, the default), or SCHED_FIFO at
  that priority (below the controller's ``thread_priority``: it never preempts the loop, and runs before the
  machine's normal processes). Give it a priority only where a core is free for it: a real-time worker that falls
  behind does not yield its core to normal processes until it has caught up.
- A worker that falls behind never slows the loop: a sample that does not fit in the pipe is dropped and counted
  (``/diagnostics``: samples sent / dropped), and the worker restarts its sensor's filters after the gap. Under
  ``use_sim_time`` the controller waits for room instead, so a lockstep simulation loses no sample.
- Model swaps (``~/swap_model``) reach the worker, which loads the same model and takes it from the next sample.
- The worker ends when the controller closes the pipe or exits (even killed: the pipe's end of stream), and ignores
  SIGINT (the controller decides when sensing ends). A worker that exits early is logged as an error and shown on
  /diagnostics; the controller goes on controlling without sensing.

Run by the controller only (:func:`main`, the setup on its standard input).
"""

from __future__ import annotations

import dataclasses
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass

import numpy as np
from builtin_interfaces.msg import Time
from diagnostic_msgs.msg import DiagnosticStatus, KeyValue
from rclpy.impl.rcutils_logger import RcutilsLogger
from rclpy.node import Node

from ..control import ControllerConfig
from ..control.model_swap import MODEL_FIELDS
from ..models.base import InverseDynamicsModel
from ..sensing import SensingConfig
from ..sensing.pipe import SampleFrame, SampleReader, SampleWriter
from .sensing_publisher import SensingPublisher

__all__ = ["SensingWorker", "WorkerSetup", "main"]

_ENTRY = "import sys; from deadzone_id_ros.nodes.sensing_worker import main; sys.exit(main())"


@dataclass(frozen=True)
class WorkerSetup:
    """What the worker builds its sensor and node from (the first frame of the pipe).

    Attributes:
        config: the controller's configuration (joints, URDF, nominal model settings, model fields).
        sensing: the sensing configuration.  node_name, namespace: the worker node's (``<controller>_sensing``).
        prefix: the topics' prefix, the controller's fully qualified name.  diagnostics_name: the /diagnostics
            entry's name.  diagnostics_rate: its rate [Hz].  use_sim_time: the controller's.  priority: SCHED_FIFO
            priority of the worker (0: normal scheduling).
    """

    config: ControllerConfig
    sensing: SensingConfig
    node_name: str
    namespace: str
    prefix: str
    diagnostics_name: str
    diagnostics_rate: float
    use_sim_time: bool
    priority: int


class SensingWorker:
    """The controller's side: starts the worker process and hands it one sample per tick.

    Args:
        node: the controller node (its name, namespace, logger).  config, sensing: as :class:`WorkerSetup`.
        diagnostics_rate: [Hz].  priority: the worker's SCHED_FIFO priority (0: normal scheduling).
        use_sim_time: the controller's; then the pipe blocks instead of dropping (nothing real runs on the clock).
        model: the controller's model now (a later one is sent to the worker as a swap).

    Raises:
        OSError: the process cannot be started.
    """

    def __init__(self, node: Node, config: ControllerConfig, sensing: SensingConfig, diagnostics_rate: float,
                 priority: int, use_sim_time: bool, model: InverseDynamicsModel | None) -> None:
        self._logger = node.get_logger()
        read_end, write_end = os.pipe()
        try:
            # main() of this module by its import name, so that the pickled WorkerSetup is this module's class
            self.process = subprocess.Popen([sys.executable, "-c", _ENTRY], stdin=read_end, close_fds=True)
        finally:
            os.close(read_end)
        self.writer = SampleWriter(write_end, len(config.joint_names), block=use_sim_time)
        self._config = config
        self._model = model
        self._held = np.zeros(len(config.joint_names))  # the command held since the last state [N·m]
        self.failed = ""
        fqn = node.get_fully_qualified_name()
        self.setup = WorkerSetup(config, sensing, f"{node.get_name()}_sensing", node.get_namespace(), fqn,
                                 f"{node.get_name()}: sensing", diagnostics_rate, use_sim_time, priority)
        try:
            self.writer.send_setup(self.setup)
        except BrokenPipeError:
            self._fail("the sensing worker exited before it read its setup")
        self._logger.info(f"sensing in its own process (pid {self.process.pid}, "
                          f"{'SCHED_FIFO ' + str(priority) if priority else 'normal scheduling'}): topics "
                          f"{fqn}/external_torque, ...")

    def on_state(self, stamp: Time, effort: list[float] | None, idx: np.ndarray, t: float, q: np.ndarray,
                 dq: np.ndarray, command: np.ndarray | None, model: InverseDynamicsModel | None = None,
                 config: ControllerConfig | None = None) -> None:
        """Hand over one sample (as :meth:`.sensing_publisher.SensingPublisher.on_state`): the torque of the
        interval is ``effort`` [idx] (the message's, one per name) when given, else the command held since the
        previous state; ``command`` (J,) [N·m] is the one sent now. ``model`` and ``config``: the controller's now (a
        new model is sent as a swap of ``config``'s model fields)."""
        if self.failed:
            return
        is_effort = effort is not None
        torque = np.asarray(effort, dtype=float)[idx] if is_effort else self._held
        if command is not None:
            self._held = np.asarray(command, dtype=float)
        try:
            if model is not None and model is not self._model:
                self._model = model
                cfg = config or self._config
                self.writer.send_model({name: getattr(cfg, name) for name in MODEL_FIELDS})
            self.writer.send(stamp.sec, stamp.nanosec, t, q, dq, torque, is_effort)
        except BrokenPipeError:
            self._fail(f"the sensing worker (pid {self.process.pid}) exited with status {self.process.poll()}; "
                       "no more force sensing")

    def _fail(self, reason: str) -> None:
        self.failed = reason
        self._logger.error(reason)

    def status(self, name: str, hardware_id: str) -> DiagnosticStatus:
        """The worker's entry of /diagnostics: ERROR once it has exited, WARN while samples are dropped."""
        code = self.process.poll()
        if code is not None and not self.failed:
            self._fail(f"the sensing worker (pid {self.process.pid}) exited with status {code}; no more force "
                       "sensing")
        w = self.writer
        values = [KeyValue(key="pid", value=str(self.process.pid)),
                  KeyValue(key="samples sent / dropped (worker behind)", value=f"{w.sent} / {w.dropped}")]
        if self.failed:
            level, message = DiagnosticStatus.ERROR, self.failed
        elif w.dropped:
            level, message = DiagnosticStatus.WARN, "the worker fell behind: samples dropped, filters restarted"
        else:
            level, message = DiagnosticStatus.OK, "sensing in its own process"
        return DiagnosticStatus(level=level, name=name, message=message, hardware_id=hardware_id, values=values)

    def close(self, timeout: float = 3.0) -> None:
        """Close the pipe (the worker ends) and wait up to ``timeout`` [s] for it, then kill it."""
        self.writer.close()
        try:
            self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def _schedule(priority: int) -> None:
    """Normal scheduling for this process (it inherits the controller's SCHED_FIFO), or SCHED_FIFO ``priority``."""
    from ..realtime import RealtimeConfig, apply_realtime

    if priority > 0:
        for warning in apply_realtime(RealtimeConfig(thread_priority=priority)).warnings:
            print(f"sensing_worker: {warning}", file=sys.stderr)
    elif os.sched_getscheduler(0) != os.SCHED_OTHER:
        os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))


def _handle(frame: SampleFrame, publisher: SensingPublisher, logger: RcutilsLogger) -> None:
    """One sample into the sensor (restarted after a gap) and onto its topics; a bad sample is logged."""
    if frame.after_gap:
        publisher.sensor.reset()
    torque = publisher.sensor.effort.to_torque(frame.torque, frame.dq) if frame.is_effort else frame.torque
    try:
        publisher.update(Time(sec=frame.sec, nanosec=frame.nanosec), frame.t, frame.q, frame.dq, torque)
    except ValueError as err:
        logger.error(f"sensing skipped a state: {err}", throttle_duration_sec=1.0)


def main() -> int:
    """Read the setup from standard input, then sense every sample until the end of the stream. Returns 0, or 2
    when the setup is missing or the model cannot be loaded (the message on standard error)."""
    import rclpy
    from diagnostic_msgs.msg import DiagnosticArray
    from rclpy.parameter import Parameter

    from ..models.runtime import load_model
    from ._common import init_ros

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the controller ends sensing by closing the pipe
    reader = SampleReader(sys.stdin.buffer)
    first = reader.read()
    if first is None or first[0] != "C" or not isinstance(first[1], WorkerSetup):
        print("sensing_worker: no setup on standard input (run by feedforward_controller with sensing_worker)",
              file=sys.stderr)
        return 2
    setup: WorkerSetup = first[1]
    _schedule(setup.priority)
    reader.n_joints = len(setup.config.joint_names)
    init_ros([])
    node = Node(setup.node_name, namespace=setup.namespace,
                parameter_overrides=[Parameter("use_sim_time", value=setup.use_sim_time)])
    try:
        config = setup.config
        try:
            publisher = SensingPublisher.build(node, setup.sensing, config, load_model(config),
                                               tuple(config.joint_names), prefix=setup.prefix)
        except Exception as err:  # noqa: BLE001 - any load error ends the worker with its reason
            print(f"sensing_worker: cannot build the sensor: {err}", file=sys.stderr)
            return 2
        diagnostics = node.create_publisher(DiagnosticArray, "/diagnostics", 10)
        period, next_diag = 1.0 / setup.diagnostics_rate, time.monotonic()
        while (frame := reader.read()) is not None:
            kind, value = frame
            if kind == "S":
                _handle(value, publisher, node.get_logger())  # type: ignore[arg-type]
            elif kind == "M":
                config = dataclasses.replace(config, **value)  # type: ignore[arg-type]
                publisher.follow_model(load_model(config))
                node.get_logger().info(f"sensing follows the controller's model swap: {value}")
            if time.monotonic() >= next_diag:
                next_diag = time.monotonic() + period
                arr = DiagnosticArray()
                arr.header.stamp = node.get_clock().now().to_msg()
                arr.status = [publisher.status(setup.diagnostics_name, setup.prefix)]
                diagnostics.publish(arr)
    finally:
        node.destroy_node()
        rclpy.try_shutdown()
    return 0

