"""The feedforward_controller's ~/reference messages: decoded in the reference worker thread, reported when installed.

The node subscribes ~/reference serialized (``raw=True``: taking the bytes costs microseconds in the control
thread) and hands them to :class:`deadzone_id_ros.control.reference_pipeline.ReferencePipeline`;
:func:`decode_reference` turns them into :class:`TrajectoryPoints` in the worker thread with rosbags' CDR
deserializer (pure Python, so the GIL changes hands during it; rclpy's deserializer converts the whole message in one
C call that holds the GIL).
"""

from __future__ import annotations

from itertools import chain
from typing import TYPE_CHECKING, Any

import numpy as np

from ..control import TrajectoryPoints
from ..control.trajectory import build_reference
from ..data.bag.format import typestore
from ..stamps import EpochSeconds, stamp_to_ns

if TYPE_CHECKING:
    from rclpy.impl.rcutils_logger import RcutilsLogger

    from ..control.reference_pipeline import ReferenceUpdate

__all__ = ["decode_reference", "deserialize_trajectory", "report_updates", "warm_up"]

_TYPE = "trajectory_msgs/msg/JointTrajectory"


def _points_array(points: Any, field: str, n: int) -> np.ndarray | None:
    """(K, n) float array of one JointTrajectoryPoint field, or None when a point lacks n values (one pass, no
    per-point array: a 200-point window converts in tens of µs)."""
    if any(len(getattr(p, field)) != n for p in points):
        return None
    return np.fromiter(chain.from_iterable(getattr(p, field) for p in points), float, len(points) * n).reshape(-1, n)


def warm_up(joint_names: tuple[str, ...]) -> None:
    """Decode a two-point reference and build its sampler once, at start: rosbags generates its deserializers and
    scipy loads what the sampler uses on first use (measured: the first reference took 140 ms to prepare)."""
    from builtin_interfaces.msg import Duration
    from rclpy.serialization import serialize_message
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

    zero = [0.0] * len(joint_names)
    msg = JointTrajectory(joint_names=list(joint_names), points=[
        JointTrajectoryPoint(positions=zero, velocities=zero, accelerations=zero, time_from_start=Duration(sec=s))
        for s in (1, 2)])
    points = decode_reference(serialize_message(msg), 0.0, EpochSeconds())
    if points is not None:  # always (two points)
        build_reference(points, joint_names, 0.0, lambda _t: (np.zeros(len(joint_names)),) * 3)


def deserialize_trajectory(raw: bytes) -> Any:
    """A serialized trajectory_msgs/JointTrajectory (CDR, as DDS and ``rclpy.serialization`` carry it) -> rosbags'
    message object. Bytes after the message are ignored, as rclpy's own deserializer does (rclpy's
    ``serialize_message`` pads its buffer).

    Raises:
        ValueError: not a CDR JointTrajectory (the reason).
    """
    store = typestore()
    if len(raw) < 4 or bytes(raw[:2]) not in (b"\x00\x00", b"\x00\x01"):
        raise ValueError(f"not a CDR message (header {bytes(raw[:4])!r})")
    msgdef = store.get_msgdef(_TYPE)
    func = msgdef.deserialize_cdr_le if raw[1] else msgdef.deserialize_cdr_be
    try:
        return func(memoryview(raw)[4:], 0, msgdef.cls, store)[0]
    except Exception as err:  # noqa: BLE001 - struct.error, UnicodeDecodeError, IndexError from a truncated message
        raise ValueError(f"cannot deserialize {_TYPE}: {type(err).__name__}: {err}") from err


def decode_reference(raw: bytes, now: float, clock: EpochSeconds) -> TrajectoryPoints | None:
    """A serialized ~/reference message received at ``now`` [s] -> its points (absolute times [s] on ``clock``),
    or None for a message without points (hold).

    The absolute time of a point is header.stamp (zero: ``now``) + time_from_start.

    Raises:
        ValueError: undecodable bytes, a point without one position per joint name, or bad times or values.
    """
    msg = deserialize_trajectory(raw)
    if not len(msg.points):
        return None
    names = tuple(msg.joint_names)
    n = len(names)
    start_ns = stamp_to_ns(msg.header.stamp) or clock.to_ns(now)
    t = np.array([clock.to_s(start_ns + stamp_to_ns(p.time_from_start)) for p in msg.points])
    pos = _points_array(msg.points, "positions", n)
    vel = _points_array(msg.points, "velocities", n)
    acc = _points_array(msg.points, "accelerations", n) if vel is not None else None
    if pos is None:
        raise ValueError(f"every point needs {n} positions (one per joint name)")
    return TrajectoryPoints(names, t, pos, vel, acc)


def report_updates(logger: RcutilsLogger, updates: list[ReferenceUpdate], count: int) -> int:
    """Log the reference updates just installed (``count``: the references followed so far); returns the new count.

    The first reference followed is logged at info level, later ones at debug level; a refused one at error level.
    """
    for u in updates:
        if u.error:
            logger.error(f"~/reference rejected, keeping the previous one: {u.error}")
        elif u.points is None:
            logger.info("empty reference: holding the current desired position")
        else:
            count += 1
            t = u.points.t
            message = (f"following reference #{count} from t = {u.t_switch:.3f} s: {len(t)} points from "
                       f"{t[0] - u.t_switch:+.3f} s to {t[-1] - u.t_switch:+.3f} s (prepared in "
                       f"{u.prepare_s * 1e3:.1f} ms)")
            if count == 1:  # one call site per severity (rclpy's logger refuses a second severity from one site)
                logger.info(message)
            else:
                logger.debug(message)
    return count
