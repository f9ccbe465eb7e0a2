"""The topics of force sensing on a node (thin rclpy adapter of :class:`deadzone_id_ros.sensing.ForceSensor`).

Topics (``~`` is the owning node's name; franka_ros2 publishes its arm's estimate the same way):

- ``~/external_torque`` (sensor_msgs/JointState): ``effort`` = the external joint torque estimate [N·m] (the torque
  the environment applies on each joint, :mod:`deadzone_id_ros.sensing.estimators`), ``name`` the joints, stamped
  with the /joint_states message it was computed from.
- ``~/external_torque_band`` (sensor_msgs/JointState): ``effort`` = the interval half width [N·m] (0: exact, the
  joint moves; tau_s: the joint is stuck and the external torque is known only within effort +- this); same stamp.
- ``~/contact`` (std_msgs/Bool): the contact flag, on every sample when contact detection is on (thresholds set).
- ``~/contact_state`` (sensor_msgs/JointState): the same test per joint, stamped with the state: ``effort`` = the
  excess over the threshold, |estimate| - half width - threshold [N·m] (> 0: the joint fires), so a listener can
  tell when the contact started in the state's time.
- ``~/external_wrench`` (geometry_msgs/WrenchStamped): with ``sensing_frame``, the wrench at that frame, world-
  aligned axes, ``header.frame_id`` = the URDF's root link; same stamp.

With ``sensing_publish_every`` N > 1 the JointState topics and the wrench go out on every N-th sample only (the
wrench is computed only then) and ``~/contact`` on every N-th sample and whenever the flag changes; the estimate and
the contact test still run on every sample.

Diagnostics (:meth:`SensingPublisher.status`): estimator, thresholds, band, contact and its onset, the wrench note,
and the sensor's own compute time per sample (median and largest of the last :data:`COST_WINDOW`): the controller
senses after its command is out and its latency taken, so this is the cost the latency figure does not show.
"""

from __future__ import annotations

import time
from array import array
from collections import deque

import numpy as np
from builtin_interfaces.msg import Time
from diagnostic_msgs.msg import DiagnosticStatus, KeyValue
from geometry_msgs.msg import WrenchStamped
from rclpy.node import Node
from sensor_msgs.msg import JointState
from std_msgs.msg import Bool

from ..control import ControllerConfig
from ..models.base import InverseDynamicsModel
from ..sensing import ForceSensor, ResidualEstimator, SensingConfig, SensingSample, build_sensor
from ..sensing.node_config import ForceEstimatorConfig

__all__ = ["COST_WINDOW", "SensingPublisher"]

#: samples of the sensor's compute time kept for the diagnostics
COST_WINDOW = 1000


class SensingPublisher:
    """Runs a :class:`ForceSensor` on each sample and publishes what it says on ``node``'s topics.

    Args:
        node: the owning node (its name is the topics' ``~``).  sensor: the sensor.
        publish_every: publish on every N-th sample (``sensing_publish_every``; module docstring).
        prefix: the topics' prefix: "~" (the node's own name), or another node's fully qualified name (the
            controller's, for its sensing worker, :mod:`.sensing_worker`).

    Raises:
        ValueError: publish_every not a whole number >= 1.
    """

    def __init__(self, node: Node, sensor: ForceSensor, publish_every: int = 1, prefix: str = "~") -> None:
        if isinstance(publish_every, bool) or not isinstance(publish_every, int) or publish_every < 1:
            raise ValueError(f"publish_every = {publish_every!r} must be a whole number of samples >= 1")
        self.sensor = sensor
        self.publish_every = publish_every
        self._samples = 0  # samples taken: every publish_every-th one (from the first) is published
        self._logger = node.get_logger()
        self.last: SensingSample | None = None
        self._contacts = 0
        self._in_contact = False  # the flag at the previous sample: a contact is counted where it rises
        self._torque_pub = node.create_publisher(JointState, f"{prefix}/external_torque", 100)
        self._band_pub = node.create_publisher(JointState, f"{prefix}/external_torque_band", 100)
        self._contact_pub = (node.create_publisher(Bool, f"{prefix}/contact", 100) if sensor.detector is not None
                             else None)
        self._contact_state_pub = (node.create_publisher(JointState, f"{prefix}/contact_state", 100)
                                   if sensor.detector is not None else None)
        self._wrench_pub = (node.create_publisher(WrenchStamped, f"{prefix}/external_wrench", 100)
                            if sensor.wrench is not None else None)
        names = list(sensor.joint_names)
        self._torque_msg, self._band_msg = JointState(name=names), JointState(name=names)
        self._contact_msg = JointState(name=names)
        self._wrench_msg = WrenchStamped()
        if sensor.wrench is not None:
            self._wrench_msg.header.frame_id = sensor.wrench.base_frame
        self._bool = Bool()
        self._held = np.zeros(len(names))  # the command held since the last state [N·m]
        self.cost: deque[float] = deque(maxlen=COST_WINDOW)  # [s] per sample: sensing, publishing included

    @classmethod
    def build(cls, node: Node, config: SensingConfig, settings: ControllerConfig | ForceEstimatorConfig,
              model: InverseDynamicsModel,
              names: tuple[str, ...], prefix: str = "~") -> SensingPublisher:
        """The sensing of ``config`` on ``model`` for a node whose controller or model settings are ``settings``
        (URDF, nominal inertia), its topics under ``prefix``; a missing stuck threshold (band off) is logged at info
        level.

        Raises:
            ValueError, FileNotFoundError, RobotDescriptionError: from :func:`~deadzone_id_ros.sensing.build_sensor`.
        """
        from ..resources import default_urdf
        from ..robot.reduced import locked_positions

        urdf = settings.urdf_path or str(default_urdf())
        sensor = build_sensor(config, model, urdf, names, settings.nominal_inertia, nominal=settings,
                              warn=node.get_logger().info, locked=locked_positions(settings.locked_joints))
        return cls(node, sensor, config.sensing_publish_every, prefix)

    def on_state(self, msg: JointState, idx: np.ndarray, t: float, q: np.ndarray, dq: np.ndarray,
                 command: np.ndarray | None, model: InverseDynamicsModel | None = None) -> None:
        """Sense one /joint_states message ``msg`` (``idx``: the sensor's joints in it; t [s], q, dq (J,) taken from
        it): the torque of the interval is the measured effort when the message has one per name (in the unit of
        ``sensing_effort_unit``, converted to N·m), else the command held since the previous state; ``command``
        (J,) [N·m] is the one sent now (held until the next state). ``model``: the controller's model now (a residual
        estimator follows a model swap). A bad sample is logged.
        """
        held = (self.sensor.effort.to_torque(np.asarray(msg.effort)[idx], dq) if len(msg.effort) == len(msg.name)
                else self._held)
        if command is not None:
            self._held = np.asarray(command, dtype=float)
        if model is not None:
            self.follow_model(model)
        try:
            self.update(msg.header.stamp, t, q, dq, held)
        except ValueError as err:
            self._logger.error(f"sensing skipped a state: {err}", throttle_duration_sec=1.0)

    def update(self, stamp: Time, t: float, q: np.ndarray, dq: np.ndarray, tau: np.ndarray) -> SensingSample:
        """One sample: q, dq (J,) [rad, rad/s] of the state stamped ``stamp`` (``t`` [s] on the sensor's clock) and
        the torque tau (J,) [N·m] that acted since the previous one; publishes and returns what the sensor says.

        Raises:
            ValueError: shapes or non-finite values (from the sensor).
        """
        c0 = time.perf_counter()
        publish = self._samples % self.publish_every == 0
        self._samples += 1
        s = self.sensor.update(t, q, dq, tau, with_wrench=publish)
        self.last = s
        if s.contact is not None and s.contact.in_contact and not self._in_contact:
            self._contacts += 1  # counted on the flag's rise: with sensing_confirm > 1 the onset is an earlier sample
        changed = s.contact is not None and bool(s.contact.in_contact) != self._in_contact
        if s.contact is not None:
            self._in_contact = bool(s.contact.in_contact)
        if publish:
            self._publish(stamp, s)
        elif changed and self._contact_pub is not None:
            self._bool.data = self._in_contact
            self._contact_pub.publish(self._bool)
        self.cost.append(time.perf_counter() - c0)
        return s

    def _publish(self, stamp: Time, s: SensingSample) -> None:
        """Every topic of the sample ``s``, stamped ``stamp``."""
        m = self._torque_msg
        m.header.stamp = stamp
        m.effort = array("d", s.tau_ext.tolist())
        self._torque_pub.publish(m)
        b = self._band_msg
        b.header.stamp = stamp
        b.effort = array("d", s.half_width.tolist())
        self._band_pub.publish(b)
        if self._contact_pub is not None and s.contact is not None:
            self._bool.data = bool(s.contact.in_contact)
            self._contact_pub.publish(self._bool)
            c = self._contact_msg
            c.header.stamp = stamp
            c.effort = array("d", (s.contact.excess - self.sensor.detector.threshold).tolist())  # type: ignore[union-attr]
            self._contact_state_pub.publish(c)  # type: ignore[union-attr]
        if self._wrench_pub is not None and s.wrench is not None:
            w = self._wrench_msg
            w.header.stamp = stamp
            f = s.wrench.wrench
            w.wrench.force.x, w.wrench.force.y, w.wrench.force.z = (float(v) for v in f[:3])
            w.wrench.torque.x, w.wrench.torque.y, w.wrench.torque.z = (float(v) for v in f[3:])
            self._wrench_pub.publish(w)

    def subscribers(self) -> int:
        """Matched subscribers of the external torque topic now (DDS matching; no spinning needed)."""
        return int(self._torque_pub.get_subscription_count())

    def follow_model(self, model: InverseDynamicsModel) -> None:
        """A residual estimator takes ``model`` (the controller's, after a model swap) from the next sample on."""
        est = self.sensor.estimator
        if isinstance(est, ResidualEstimator) and est.model is not model:
            est.set_model(model)

    def status(self, name: str, hardware_id: str) -> DiagnosticStatus:
        """The sensing entry of /diagnostics: OK, or WARN near a singular pose / without contact detection."""
        sensor, s = self.sensor, self.last
        det = sensor.detector
        values = [
            KeyValue(key="estimator", value=f"{sensor.estimator.kind} ({type(sensor.estimator).__name__})"),
            KeyValue(key="contact threshold [N*m]",
                     value=str([round(v, 4) for v in det.threshold.tolist()]) if det is not None else "off"),
            KeyValue(key="static friction band [N*m]",
                     value=str([round(v, 4) for v in np.asarray(sensor.band.half_width, float).tolist()])),
            KeyValue(key="contact", value=str(bool(det.in_contact)) if det is not None else "detection off"),
            KeyValue(key="contact onset [s]", value="" if det is None or det.onset_t is None else f"{det.onset_t:.4f}"),
            KeyValue(key="contacts", value=str(self._contacts)),
        ]
        if self.cost:
            cost = np.asarray(self.cost) * 1e6
            values.append(KeyValue(key="sensing compute time median / max [us]",
                                   value=f"{np.median(cost):.1f} / {cost.max():.1f}"))
        level, message = DiagnosticStatus.OK, "sensing"
        if s is not None:
            values.append(KeyValue(key="external torque [N*m]", value=str([round(v, 4) for v in s.tau_ext.tolist()])))
            values.append(KeyValue(key="stuck joints", value=str([j for j, st in zip(sensor.joint_names, s.stuck)
                                                                  if st])))
            if s.wrench is not None:
                values.append(KeyValue(key="wrench note", value=s.wrench.note))
                if s.wrench.near_singular:
                    level, message = DiagnosticStatus.WARN, "near a singular pose: the wrench is partial"
        if det is None:
            message = "contact detection off (set sensing_threshold)"
        elif det.in_contact:
            message = "contact"
        return DiagnosticStatus(level=level, name=name, message=message, hardware_id=hardware_id, values=values)
