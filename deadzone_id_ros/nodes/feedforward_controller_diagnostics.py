"""The /diagnostics status of the feedforward_controller node: loop timing statistics and the controller's state.

Built from the node's windows of recent periods, compute times and latencies and from the
:class:`~deadzone_id_ros.control.FeedforwardController`'s status; published by
:mod:`deadzone_id_ros.nodes.feedforward_controller` at ``diagnostics_rate``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from diagnostic_msgs.msg import DiagnosticStatus, KeyValue

from ..control import ControllerConfig, ControllerStatus, FeedforwardController
from ..realtime import RealtimeState

__all__ = ["LATE_TICK_S", "control_loop_status"]

LATE_TICK_S = 0.002  # a tick later than this after the previous one counts as late


def _percentile(values: Sequence[float], q: float) -> float:
    return float(np.percentile(values, q)) if len(values) else float("nan")


def _level(st: ControllerStatus, config: ControllerConfig, late_fraction: float, late: int,
           realtime: RealtimeState | None, foreign: tuple[int, Sequence[str]], model_swap: str) -> tuple[int, str]:
    """(level, message) of the control loop's status, the first that applies (see :func:`control_loop_status`)."""
    level, message = DiagnosticStatus.OK, "running"
    if st.safe_state != "ok":
        level = DiagnosticStatus.ERROR
        message = f"safe state ({st.safe_state} torque): {st.fault}; call ~/reset to resume"
    elif st.watchdog == "waiting" and foreign[0]:
        level = DiagnosticStatus.WARN
        message = (f"waiting for /joint_states with this controller's joints {list(config.joint_names)}: "
                   f"{foreign[0]} received only carry another publisher's joints {list(foreign[1])}")
    elif st.watchdog == "waiting":
        level, message = DiagnosticStatus.WARN, "waiting for /joint_states"
    elif st.watchdog == "hold":
        level, message = DiagnosticStatus.WARN, "stale /joint_states: holding the static torque"
    elif st.watchdog == "zero":
        level, message = DiagnosticStatus.ERROR, "stale /joint_states: zero torque"
    elif late_fraction > 0.005:
        level, message = DiagnosticStatus.WARN, f"{late} late ticks (> {LATE_TICK_S * 1e3:g} ms) in the window"
    elif realtime is not None and realtime.warnings:
        level, message = DiagnosticStatus.WARN, "real-time scheduling refused: " + realtime.warnings[0]
    elif model_swap.startswith("refused"):
        level, message = DiagnosticStatus.WARN, "model swap " + model_swap
    return level, message


def control_loop_status(name: str, hardware_id: str, config: ControllerConfig, controller: FeedforwardController,
                        periods: Sequence[float], compute: Sequence[float], latency: Sequence[float],
                        bad_states: int, realtime: RealtimeState | None = None,
                        foreign: tuple[int, Sequence[str]] = (0, ()), model_swap: str = "") -> DiagnosticStatus:
    """The control loop's DiagnosticStatus: level, message and one key/value per figure.

    Args:
        name, hardware_id: the status's name and hardware id (the node's).
        config: the controller's current config (mode and model are reported).
        controller: the running controller (status counters, tracking error, DOB estimate per joint).
        periods: recent periods between the /joint_states stamps used [s].
        compute: recent compute times of a tick [s].
        latency: recent state -> command latencies [s].
        bad_states: /joint_states messages refused (joints missing, lengths wrong).
        realtime: the scheduling the process has (reported as scheduling_policy, thread_priority, memory_locked,
            cpu_affinity and, when something asked was refused, realtime_warning); None: not reported.
        foreign: (count, joint names of the latest) /joint_states messages that carried none of the controlled joints
            (another publisher's, e.g. a gripper driver): ignored, and named while the controller waits.
        model_swap: the outcome of the last model swap ("swapped to ..." or "refused ..."; "" before any).

    ``watchdog_trips`` counts every time the watchdog left "running" since start (a hold of a few ms between two
    samples of this status leaves no other trace here).

    Returns:
        the status: ERROR in the safe state (names the fault) and when the watchdog commands zero; WARN while waiting
        for /joint_states (naming another publisher's joints when only those arrive), while the watchdog holds, with
        more than 0.5 % late ticks (> :data:`LATE_TICK_S`) in the window, when real-time scheduling was asked and
        refused, or after a refused model swap (until the next swap); else OK.
    """
    st = controller.status
    late = sum(1 for p in periods if p > LATE_TICK_S)
    values = {
        "mode": config.mode,
        "model": config.model,
        "model_path": config.model_path,
        "feedforward_velocity": config.feedforward_velocity,
        "model_swap": model_swap,
        "watchdog": st.watchdog,
        "watchdog_trips": str(st.watchdog_trips),
        "ticks": str(st.ticks),
        "period_mean_ms": f"{1e3 * np.mean(periods):.4f}" if periods else "nan",
        "period_p99_ms": f"{1e3 * _percentile(periods, 99):.4f}",
        "period_max_ms": f"{1e3 * max(periods):.4f}" if periods else "nan",
        "late_ticks": str(late),
        "late_tick_fraction": f"{late / len(periods):.5f}" if periods else "nan",
        "compute_median_us": f"{1e6 * _percentile(compute, 50):.1f}",
        "compute_p99_us": f"{1e6 * _percentile(compute, 99):.1f}",
        "latency_median_us": f"{1e6 * _percentile(latency, 50):.1f}",
        "latency_p99_us": f"{1e6 * _percentile(latency, 99):.1f}",
        "nonfinite_events": str(st.nonfinite_events),
        "rejected_measurements": str(st.rejected_measurements),
        "bad_joint_states": str(bad_states),
        "foreign_joint_states": str(foreign[0]),
    }
    for i, j in enumerate(config.joint_names):
        values[f"dob_estimate.{j}"] = f"{controller.parts.dob[i]:.5f}"
        values[f"tracking_error.{j}"] = f"{st.tracking_error[i]:.6f}"
        values[f"clamp_events.{j}"] = str(int(st.clamp_events[i]))
        values[f"rate_limit_events.{j}"] = str(int(st.rate_limit_events[i]))
    if realtime is not None:
        values.update(scheduling_policy=realtime.policy, thread_priority=str(realtime.priority),
                      memory_locked=str(realtime.memory_locked).lower(),
                      cpu_affinity=",".join(map(str, realtime.cpu_affinity)))
        if realtime.warnings:
            values["realtime_warning"] = " ".join(realtime.warnings)
    values["safe_state"] = st.safe_state
    values["fault"] = st.fault
    values["faults"] = str(st.faults)
    level, message = _level(st, config, late / len(periods) if periods else 0.0, late, realtime, foreign, model_swap)
    return DiagnosticStatus(level=level, name=name, message=message, hardware_id=hardware_id,
                            values=[KeyValue(key=k, value=v) for k, v in values.items()])
