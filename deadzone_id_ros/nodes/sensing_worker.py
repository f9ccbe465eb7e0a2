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
  (``/diagnostics``: samples sent / dropped); the estimators take the longer interval after a gap as a missed
  state. Under ``use_sim_time`` the controller waits for room instead, so a lockstep simulation loses no sample.
- The controller starts once the worker has built its sensor: a sensing setting that cannot be built stops the
  controller at start with the worker's reason, as with the sensor in the loop.
- Model swaps (``~/swap_model``) reach the worker, which loads the same model and takes it from the next sample.
- The worker ends when the controller closes the pipe or exits (even killed: the pipe's end of stream), and ignores
  SIGINT (the controller decides when sensing ends). A worker that exits early is logged as an error and shown on
  /diagnostics; the controller goes on controlling without sensing.

Run by the controller only (:func:`main`, the setup on its standard input).
"""

from __future__ import annotations

import dataclasses
import os
import select
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
from ..control.feedforward_controller_params import ControllerNodeConfig
from ..control.model_swap import MODEL_FIELDS
from ..errors import ConfigError
from ..sensing import SensingConfig
from ..sensing.pipe import SampleFrame, SampleReader, SampleWriter
from .sensing_publisher import SensingPublisher

__all__ = ["SensingWorker", "WorkerSetup", "main"]

# The worker's command: normal scheduling before anything is imported (a SCHED_FIFO controller's child inherits its
# policy, and the threads numpy's BLAS starts at import would keep it), then main() of this module by its import
# name, so that the pickled WorkerSetup is this module's class.
_ENTRY = ("import os, sys\n"
          "if os.sched_getscheduler(0) != os.SCHED_OTHER:\n"
          "    os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))\n"
          "from deadzone_id_ros.nodes.sensing_worker import main\n"
          "sys.exit(main())\n")
#: what the worker writes into its ready pipe once its sensor is built
READY = b"R"
#: [s] the controller waits for its worker to build the sensor (imports, URDF, model) before it refuses to start
READY_TIMEOUT = 120.0
#: the longest the worker waits for the subscribers of ``sensing_worker_wait_for_subscribers`` [s]
SUBSCRIBER_TIMEOUT = 10.0
#: the pause after the publisher has its subscribers, before the first estimate [s]
SUBSCRIBER_SETTLE = 0.5


@dataclass(frozen=True)
class WorkerSetup:
    """What the worker builds its sensor and node from (the first frame of the pipe).

    Attributes:
        config: the controller's configuration (joints, URDF, nominal model settings, model fields).
        sensing: the sensing configuration.  node_name, namespace: the worker node's (``<controller>_sensing``).
        prefix: the topics' prefix, the controller's fully qualified name.  diagnostics_name: the /diagnostics
            entry's name.  diagnostics_rate: its rate [Hz].  use_sim_time: the controller's.  priority: SCHED_FIFO
            priority of the worker (0: normal scheduling).  wait_for_subscribers: under ``use_sim_time``, the
            matched subscribers of ~/external_torque the worker waits for before its first sample (0: none).
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
    wait_for_subscribers: int = 0


class SensingWorker:
    """The controller's side: starts the worker process and hands it one sample per tick.

    Args:
        node: the controller node (its name, namespace, logger).  config, sensing: as :class:`WorkerSetup`.
        node_config: the controller node's settings (the /diagnostics rate, ``sensing_worker_priority`` and
            ``sensing_worker_wait_for_subscribers``).
        use_sim_time: the controller's; then the pipe blocks instead of dropping (nothing real runs on the clock).

    The worker builds its sensor before this returns (it says so through a pipe of its own), so a sensing setting
    that cannot be built stops the controller at start, as in the loop.

    Raises:
        OSError: the process cannot be started.
        ConfigError: the worker could not build the sensor (its reason is on standard error), or did not say it
            was ready within :data:`READY_TIMEOUT`.
    """

    def __init__(self, node: Node, config: ControllerConfig, sensing: SensingConfig,
                 node_config: ControllerNodeConfig, use_sim_time: bool) -> None:
        self._logger = node.get_logger()
        read_end, write_end = os.pipe()
        ready_read, ready_write = os.pipe()  # the worker says here that its sensor is built (its stdout is for logs)
        try:
            self.process = subprocess.Popen([sys.executable, "-c", _ENTRY, str(ready_write)], stdin=read_end,
                                            pass_fds=(ready_write,), close_fds=True)
        except BaseException:
            os.close(ready_read)
            raise
        finally:
            os.close(read_end)
            os.close(ready_write)
        self.writer = SampleWriter(write_end, len(config.joint_names), block=use_sim_time)
        self._config = config  # the controller's config last seen (frozen: a swap replaces it)
        self._fields = tuple(getattr(config, name) for name in MODEL_FIELDS)  # the model fields the worker has
        self._held = np.zeros(len(config.joint_names))  # the command held since the last state [N·m]
        self._reported_drops = 0
        self.failed = ""
        fqn = node.get_fully_qualified_name()
        self.setup = WorkerSetup(config, sensing, f"{node.get_name()}_sensing", node.get_namespace(), fqn,
                                 f"{node.get_name()}: sensing", node_config.diagnostics_rate, use_sim_time,
                                 node_config.sensing_worker_priority, node_config.sensing_worker_wait_for_subscribers)
        try:
            self.writer.send_setup(self.setup, timeout=READY_TIMEOUT)
            ready = _wait_ready(ready_read, READY_TIMEOUT)
        except (BrokenPipeError, TimeoutError):
            ready = False
        finally:
            os.close(ready_read)
        if not ready:
            self.close(timeout=1.0)
            raise ConfigError(f"the sensing worker could not build the force sensor (exit status "
                              f"{self.process.poll()}; its reason is printed above): check the sensing_* "
                              "parameters, or set sensing_worker false")
        priority = self.setup.priority
        self._logger.info(f"sensing in its own process (pid {self.process.pid}, "
                          f"{'SCHED_FIFO ' + str(priority) if priority else 'normal scheduling'}): topics "
                          f"{fqn}/external_torque, ...")

    def on_state(self, stamp: Time, effort: list[float] | None, idx: np.ndarray, t: float, q: np.ndarray,
                 dq: np.ndarray, command: np.ndarray | None, config: ControllerConfig | None = None) -> None:
        """Hand over one sample (as :meth:`.sensing_publisher.SensingPublisher.on_state`): the torque of the
        interval is ``effort`` [idx] (the message's, one per name) when given, else the command held since the
        previous state; ``command`` (J,) [N·m] is the one sent now. ``config``: the controller's now (changed model
        fields are sent to the worker as a swap)."""
        if self.failed:
            return
        try:
            is_effort = effort is not None
            torque = np.asarray(effort, dtype=float)[idx] if is_effort else self._held
            if command is not None:
                self._held = np.asarray(command, dtype=float)
            # a swap replaces the controller's config after its model: the fields go when the config has changed
            if config is not None and config is not self._config:
                self._config = config
                fields = tuple(getattr(config, name) for name in MODEL_FIELDS)
                if fields != self._fields:
                    self.writer.send_model(dict(zip(MODEL_FIELDS, fields)))
                    self._fields = fields
            self.writer.send(stamp.sec, stamp.nanosec, t, q, dq, torque, is_effort)
        except BrokenPipeError:
            self._fail(f"the sensing worker (pid {self.process.pid}) exited with status {self.process.poll()}; "
                       "no more force sensing")
        except Exception as err:  # noqa: BLE001 - nothing of the sensing may stop the control loop
            self._fail(f"sensing stopped: {type(err).__name__}: {err}")

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
        new_drops, self._reported_drops = w.dropped - self._reported_drops, w.dropped
        if self.failed:
            level, message = DiagnosticStatus.ERROR, self.failed
        elif new_drops:
            level, message = DiagnosticStatus.WARN, f"the worker fell behind: {new_drops} samples dropped"
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


def _wait_ready(fd: int, timeout: float) -> bool:
    """True once the worker wrote its ready byte into the pipe ``fd``; False when it exited (the end of the pipe)
    or ``timeout`` [s] passed first."""
    ready, _, _ = select.select([fd], [], [], timeout)
    return bool(ready) and os.read(fd, 1) == READY


def _schedule(priority: int) -> None:
    """SCHED_FIFO ``priority`` for every thread of this process when > 0 (:data:`_ENTRY` has already set normal
    scheduling)."""
    from ..realtime import RealtimeConfig, apply_realtime

    if priority > 0:
        for warning in apply_realtime(RealtimeConfig(thread_priority=priority)).warnings:
            print(f"sensing_worker: {warning}", file=sys.stderr)


def _handle(frame: SampleFrame, publisher: SensingPublisher, logger: RcutilsLogger) -> None:
    """One sample into the sensor and onto its topics; a bad sample is logged. After a gap (samples dropped) the
    estimators take the longer interval as they take a missed state (the held torque over it), as in the loop."""
    torque = publisher.sensor.effort.to_torque(frame.torque, frame.dq) if frame.is_effort else frame.torque
    try:
        publisher.update(Time(sec=frame.sec, nanosec=frame.nanosec), frame.t, frame.q, frame.dq, torque)
    except ValueError as err:
        logger.error(f"sensing skipped a state: {err}", throttle_duration_sec=1.0)


def _swap(config: ControllerConfig, fields: dict[str, object], publisher: SensingPublisher,
          logger: RcutilsLogger) -> ControllerConfig:
    """The controller's model swap: load the model of ``fields`` and sense with it; the configuration now in force
    (unchanged, with an error logged, when the model cannot be loaded: the old one goes on)."""
    from ..models.runtime import load_model

    swapped = dataclasses.replace(config, **fields)  # type: ignore[arg-type]
    try:
        publisher.follow_model(load_model(swapped))
    except Exception as err:  # noqa: BLE001 - the worker goes on with the model it has
        logger.error(f"sensing cannot follow the controller's model swap {fields}: {err}; it keeps the model "
                     f"{config.model!r} {config.model_path!r}")
        return config
    logger.info(f"sensing follows the controller's model swap: {fields}")
    return swapped


def _wait_for_subscribers(publisher: SensingPublisher, wanted: int, logger: RcutilsLogger) -> None:
    """Before saying ready: wait until ``publisher``'s external torque has ``wanted`` matched subscribers, at most
    :data:`SUBSCRIBER_TIMEOUT` s (then a warning). The controller's start waits for the ready byte meanwhile, so it
    subscribes to /joint_states, and a lockstep simulator lets time run, only once a recorder hears the estimates."""
    deadline = time.monotonic() + SUBSCRIBER_TIMEOUT
    if publisher.subscribers() < wanted:
        logger.info(f"waiting for {wanted} subscriber(s) of ~/external_torque before the first estimate "
                    "(sensing_worker_wait_for_subscribers)")
    while publisher.subscribers() < wanted:
        if time.monotonic() > deadline:
            logger.warning(f"~/external_torque has {publisher.subscribers()} of the {wanted} subscriber(s) "
                           f"sensing_worker_wait_for_subscribers asks for after {SUBSCRIBER_TIMEOUT:g} s; sensing "
                           "anyway (is the recorder recording the forces?)")
            return
        time.sleep(0.002)
    # matching is two-sided: the subscriber's side may match this publisher a little after this side sees it, and
    # drops what comes before (measured: the first 80 estimates lost without this pause)
    time.sleep(SUBSCRIBER_SETTLE)
    logger.info(f"{publisher.subscribers()} subscriber(s) of ~/external_torque: sensing")


def _say_ready() -> None:
    """Write :data:`READY` into the pipe whose descriptor the controller gave as the first argument, and close it."""
    if len(sys.argv) > 1 and sys.argv[1].isdigit():
        fd = int(sys.argv[1])
        try:
            os.write(fd, READY)
        finally:
            os.close(fd)


def main() -> int:
    """Read the setup from standard input, build the sensor, say so (:data:`READY` into the pipe of the descriptor
    given as the first argument), then sense every sample until the end of the stream. Returns 0, or 2 when the
    setup is missing or the sensor cannot be built (the reason on standard error)."""
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
    logger = node.get_logger()
    try:
        config = setup.config
        try:
            publisher = SensingPublisher.build(node, setup.sensing, config, load_model(config),
                                               tuple(config.joint_names), prefix=setup.prefix)
        except Exception as err:  # noqa: BLE001 - any load error ends the worker with its reason
            print(f"sensing_worker: cannot build the sensor: {type(err).__name__}: {err}", file=sys.stderr)
            return 2
        diagnostics = node.create_publisher(DiagnosticArray, "/diagnostics", 10)
        if setup.use_sim_time and setup.wait_for_subscribers:
            # before "ready": the controller is still starting (no /joint_states subscription yet), so nothing waits
            # on a blocked control loop, and a lockstep simulator holds time until the controller hears it
            _wait_for_subscribers(publisher, setup.wait_for_subscribers, logger)
        _say_ready()
        period, next_diag = 1.0 / setup.diagnostics_rate, time.monotonic()
        gaps, last = 0, Time()
        while (frame := reader.read()) is not None:
            kind, value = frame
            if isinstance(value, SampleFrame):
                gaps += value.after_gap
                last = Time(sec=value.sec, nanosec=value.nanosec)
                _handle(value, publisher, logger)
            elif kind == "M" and isinstance(value, dict):
                config = _swap(config, value, publisher, logger)
            if time.monotonic() >= next_diag:
                next_diag = time.monotonic() + period
                arr = DiagnosticArray()
                arr.header.stamp = last  # the last state's stamp: this node does not spin, so no /clock
                status = publisher.status(setup.diagnostics_name, setup.prefix)
                status.values.append(KeyValue(key="samples after a gap (dropped before them)", value=str(gaps)))
                arr.status = [status]
                diagnostics.publish(arr)
    finally:
        node.destroy_node()
        rclpy.try_shutdown()
    return 0
