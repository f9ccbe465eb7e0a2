"""Small builders for synthetic recordings and hand-made bags (written with rosbags' own Writer in tmp_path)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from deadzone_id_ros.data.bag import typestore
from deadzone_id_ros.data.types import Recording

T0 = 1_700_000_000_000_000_000  # an arbitrary epoch stamp [ns]


def make_recording(n: int = 2000, rate: float = 1000.0, joints=("joint1", "joint2", "joint3"), seed: int = 0,
                   with_command: bool = True, with_reference: bool = True) -> Recording:
    """A smooth multi-sine recording: q (n, J) [rad], dq analytic [rad/s], effort (n, J) [N·m]."""
    rng = np.random.default_rng(seed)
    j = len(joints)
    t = np.arange(n) / rate
    f = 0.5 + rng.random(j)
    a = 0.5 + rng.random(j)
    q = a * np.sin(2 * np.pi * f * t[:, None])
    dq = a * 2 * np.pi * f * np.cos(2 * np.pi * f * t[:, None])
    ddq = -a * (2 * np.pi * f) ** 2 * np.sin(2 * np.pi * f * t[:, None])
    tau = 0.1 * ddq + 0.3 * np.sign(dq)
    t_ns = T0 + np.round(t * 1e9).astype(np.int64)
    kw: dict[str, Any] = {}
    if with_command:
        kw.update(command_t_ns=t_ns + 100_000, command=tau.copy())
    if with_reference:
        kw.update(reference_t_ns=t_ns, reference_position=q, reference_velocity=dq, reference_acceleration=ddq)
    return Recording(tuple(joints), t_ns, q, dq, tau, metadata={"robot": "test_arm", "notes": "synthetic"}, **kw)


def write_joint_state_bag(path: Path, messages: list[dict], topic: str = "/joint_states", storage: str = "mcap",
                          extra: Callable[[Any, Any], None] | None = None) -> Path:
    """Write hand-made JointState messages (dicts: t, name, position, velocity, effort, optional log) as rosbag2."""
    from rosbags.rosbag2 import StoragePlugin, Writer

    ts = typestore()
    JS = ts.types["sensor_msgs/msg/JointState"]
    Header = ts.types["std_msgs/msg/Header"]
    Time = ts.types["builtin_interfaces/msg/Time"]
    with Writer(path, version=9, storage_plugin=StoragePlugin[storage.upper()]) as w:
        conn = w.add_connection(topic, "sensor_msgs/msg/JointState", typestore=ts)
        for m in messages:
            t = int(m["t"])
            msg = JS(
                header=Header(stamp=Time(sec=t // 10**9, nanosec=t % 10**9), frame_id=""),
                name=list(m["name"]),
                position=np.ascontiguousarray(m.get("position", []), float),
                velocity=np.ascontiguousarray(m.get("velocity", []), float),
                effort=np.ascontiguousarray(m.get("effort", []), float),
            )
            w.write(
                conn, int(m.get("log", t if t > 0 else T0)), bytes(ts.serialize_cdr(msg, "sensor_msgs/msg/JointState"))
            )
        if extra is not None:
            extra(w, ts)
    return path


def sine_messages(n: int = 400, rate: float = 200.0, names=("a", "b"), t0: int = T0) -> list[dict]:
    """n JointState message dicts of a moving 2-joint arm at ``rate`` [Hz] (effort = 2*q + 1)."""
    out = []
    for k in range(n):
        t = k / rate
        q = np.array([np.sin(2 * np.pi * 1.0 * t + i) for i in range(len(names))])
        dq = np.array([2 * np.pi * np.cos(2 * np.pi * 1.0 * t + i) for i in range(len(names))])
        out.append({"t": t0 + int(round(t * 1e9)), "name": list(names), "position": q, "velocity": dq,
                    "effort": 2 * q + 1})
    return out
