"""One teleoperation demonstration as one rosbag2 (core, no ROS): both arms' states, commands, the operator's
reference, and the estimated and true external torques (:func:`~deadzone_id_ros.data.bag.namespaced.write_namespaced`).

Topics: ``/leader/...`` and ``/follower/...`` (joint_states, effort_controller/commands; ``/leader/reference`` the
operator's reference), and per arm ``/<arm>/external_torque/estimated``, ``.../half_width`` (the dead-zone interval)
and ``.../true`` (the simulator's J^T F: the operator's hand on the leader, the contact on the follower), each a
Float64MultiArray in the arm's joint order. Stamps: simulated time shifted so that 0 is the start wall time.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from ...data.bag.namespaced import write_namespaced
from ...data.types import Recording
from ...stamps import s_to_ns
from ...teleop.build import arm_setup
from ...teleop.sim import TeleopTrace
from .run import TeleopSettings, run_case

__all__ = ["record_demonstration", "trace_to_bag"]


def trace_to_bag(tr: TeleopTrace, joints_l: tuple[str, ...], joints_f: tuple[str, ...], out: str | Path,
                 start_time: float | None = None, metadata: dict | None = None, storage: str = "mcap") -> Path:
    """Write a :class:`TeleopTrace` as one bag (module docstring); ``start_time`` [s since epoch] (default now).

    Raises:
        DataError: ``out`` exists, or the trace's arrays disagree in shape.
    """
    t_ns = np.asarray([s_to_ns(x) for x in tr.t], dtype=np.int64) + s_to_ns(time.time() if start_time is None
                                                                              else start_time)
    leader = Recording(joints_l, t_ns, tr.q_l, tr.dq_l, tr.eff_l,
                       command_t_ns=t_ns, command=tr.tau_l, reference_t_ns=t_ns, reference_position=tr.q_ref,
                       reference_velocity=np.gradient(tr.q_ref, tr.t, axis=0),
                       reference_acceleration=np.zeros_like(tr.q_ref))
    follower = Recording(joints_f, t_ns, tr.q_f, tr.dq_f, tr.eff_f,
                         command_t_ns=t_ns, command=tr.tau_f)
    extra = {}
    for ns, est, half, true in (("leader", tr.est_l, tr.half_l, tr.true_l),
                                ("follower", tr.est_f, tr.half_f, tr.true_f)):
        extra[f"/{ns}/external_torque/estimated"] = (t_ns, est, ns)
        extra[f"/{ns}/external_torque/half_width"] = (t_ns, half, ns)
        extra[f"/{ns}/external_torque/true"] = (t_ns, true, ns)
    return write_namespaced({"leader": leader, "follower": follower}, out, storage=storage, extra=extra,
                            metadata={"notes": "teleoperation demonstration (deadzone-id teleop)",
                                      **(metadata or {})})


def record_demonstration(out: str | Path, settings: TeleopSettings, scenario: str = "hold", seed: int | None = None,
                         mode: str = "bilateral") -> Path:
    """Run one scenario with the first model of ``settings`` and write it as a bag at ``out``.

    Raises:
        DataError: ``out`` exists.  SafetyError, ValueError: as :func:`~.run.run_case`.
    """
    arm = arm_setup(settings.robot, settings.models[0])
    s = settings.seeds[0] if seed is None else seed
    tr, _, _ = run_case(arm, arm, mode, scenario, int(s), settings)
    return trace_to_bag(tr, tuple(arm.sim.joint_names), tuple(arm.sim.joint_names), out,
                        metadata={"robot": arm.name, "model": arm.model_label, "mode": mode, "scenario": scenario,
                                  "seed": int(s)})
