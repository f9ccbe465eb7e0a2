"""CDR encoding of the three recorded message types with the rosbags typestore (core, no ROS).

Shared by :func:`~deadzone_id_ros.data.bag.recording.write_recording` and the recorder.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ...stamps import ns_to_stamp
from .format import COMMAND_TYPE, JOINT_STATE_TYPE, REFERENCE_TYPE, typestore

__all__ = ["MessageEncoders"]


def _field(values: np.ndarray) -> np.ndarray:
    arr = np.asarray(values, dtype=np.float64)
    return np.zeros(0) if arr.size == 0 or np.all(np.isnan(arr)) else arr


class MessageEncoders:
    """Serialize the three recorded message types to CDR with the rosbags typestore (shared by writer and recorder).

    Args:
        joint_names: (J,) joint names written into JointState.name and JointTrajectory.joint_names.
    """

    def __init__(self, joint_names: Sequence[str]) -> None:
        ts = typestore()
        self.ts = ts
        self.names = list(joint_names)
        self.Time = ts.types["builtin_interfaces/msg/Time"]
        self.Duration = ts.types["builtin_interfaces/msg/Duration"]
        self.Header = ts.types["std_msgs/msg/Header"]
        self.JointState = ts.types[JOINT_STATE_TYPE]
        self.F64 = ts.types[COMMAND_TYPE]
        self.Layout = ts.types["std_msgs/msg/MultiArrayLayout"]
        self.Traj = ts.types[REFERENCE_TYPE]
        self.Point = ts.types["trajectory_msgs/msg/JointTrajectoryPoint"]

    def header(self, t_ns: int) -> Any:
        """std_msgs/Header with stamp ``t_ns`` [ns] and an empty frame_id."""
        sec, nanosec = ns_to_stamp(t_ns)
        return self.Header(stamp=self.Time(sec=sec, nanosec=nanosec), frame_id="")

    def joint_state(self, t_ns: int, q: np.ndarray, dq: np.ndarray, tau: np.ndarray) -> bytes:
        """CDR bytes of a JointState: q (J,) [rad], dq (J,) [rad/s], tau (J,) [N·m].

        A field that is empty or NaN for every joint is written empty (JointState's "not available").
        """
        msg = self.JointState(
            header=self.header(t_ns),
            name=self.names,
            position=_field(q),
            velocity=_field(dq),
            effort=_field(tau),
        )
        return bytes(self.ts.serialize_cdr(msg, JOINT_STATE_TYPE))

    def command(self, tau: np.ndarray) -> bytes:
        """CDR bytes of a Float64MultiArray carrying tau (J,) [N·m] (empty layout, as ros2_control expects)."""
        msg = self.F64(layout=self.Layout(dim=[], data_offset=0), data=np.asarray(tau, dtype=np.float64))
        return bytes(self.ts.serialize_cdr(msg, COMMAND_TYPE))

    def reference(self, t_ns: int, q: np.ndarray, dq: np.ndarray, ddq: np.ndarray) -> bytes:
        """CDR bytes of a one-point JointTrajectory (time_from_start 0) with q/dq/ddq (J,) [rad, rad/s, rad/s²]."""
        point = self.Point(
            positions=np.asarray(q, dtype=np.float64),
            velocities=np.asarray(dq, dtype=np.float64),
            accelerations=np.asarray(ddq, dtype=np.float64),
            effort=np.zeros(0),
            time_from_start=self.Duration(sec=0, nanosec=0),
        )
        msg = self.Traj(header=self.header(t_ns), joint_names=self.names, points=[point])
        return bytes(self.ts.serialize_cdr(msg, REFERENCE_TYPE))

    def encode(self, kind: str, t_ns: int, rows: tuple[np.ndarray, ...], i: int) -> bytes:
        """Encode row ``i`` of a stream ``kind`` (``state``, ``command`` or ``reference``)."""
        if kind == "state":
            return self.joint_state(t_ns, rows[0][i], rows[1][i], rows[2][i])
        if kind == "command":
            return self.command(rows[0][i])
        return self.reference(t_ns, rows[0][i], rows[1][i], rows[2][i])
