"""Live runs of the simulated arm over DDS, and the tracking figures of their recordings (used by the demo).

:func:`live_run` starts ``sim_feedforward.launch.yaml`` (sim_arm, excitation, feedforward_controller and recorder as
separate processes) in simulated time with the simulator in lockstep with the controller, waits until the excitation
has been tracked, and returns the recorded episode. :func:`closed_loop_metrics` measures tracking and effort in a
recording against its recorded reference.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import numpy as np

from ..errors import DataError
from ..sim.tracking import TrackingMetrics, reversal_mask, tracking_figures
from ..stamps import increasing_rows, ns_to_s

__all__ = ["LOCKSTEP_STALL", "TrackingMetrics", "closed_loop_metrics", "live_run", "next_domain_id"]

LOCKSTEP_STALL = "lockstep: no effort command"
_RUN_COUNTER = {"n": 0}


def next_domain_id() -> str:
    """A ROS_DOMAIN_ID of its own for each live run (10..99, offset from the caller's), so that no participant of a
    previous run, still known to DDS discovery, can reach the next one."""
    base = int(os.environ.get("ROS_DOMAIN_ID", "0") or 0)
    _RUN_COUNTER["n"] += 1
    return str((base - 10 + _RUN_COUNTER["n"]) % 90 + 10)


def live_run(out_dir: Path, args: dict[str, str], seconds: float, log: Path, attempts: int = 2) -> Path:
    """Run sim_feedforward.launch.yaml until ``seconds`` [s] of excitation have been tracked; return the episode bag.

    The simulator owns time (``use_sim_time:=true``) and runs in lockstep with the controller, so the result does
    not depend on how busy the machine is; wall time is at least the simulated time. Each attempt runs in its own
    ROS domain. If the controller stops answering (sim_arm reports lockstep stalls), the attempt is abandoned and
    run again once, and the log says so.

    Args:
        out_dir: the recorder's output folder.  args: further launch arguments (mode, model, seed, model_path).
        log: file that receives every node's output.

    Raises:
        LaunchError: a node died; DataError: the excitation did not finish in time or nothing was recorded.
    """
    last_error: DataError | None = None
    for attempt in range(1, attempts + 1):
        run_dir = out_dir if attempt == 1 else out_dir.with_name(f"{out_dir.name}_retry{attempt - 1}")
        run_log = log if attempt == 1 else log.with_name(f"{log.stem}_retry{attempt - 1}{log.suffix}")
        try:
            return _live_run_once(run_dir, args, seconds, run_log)
        except DataError as err:
            last_error = err
            print(f"  live run failed ({err}); {'retrying' if attempt < attempts else 'giving up'}", flush=True)
    assert last_error is not None
    raise last_error


def _live_run_once(out_dir: Path, args: dict[str, str], seconds: float, log: Path) -> Path:
    from .graph import LaunchedGraph

    out_dir.mkdir(parents=True, exist_ok=True)
    # The excitation logs "motion finished" once its clock (simulated time, driven by the lockstep simulator) passes
    # the end of the motion: every state inside the reference's span has been published by then, whatever the real
    # time factor. (Waiting a fixed wall time after its last window instead cut runs short under load: measured, a
    # 1.5 s run recorded 0.3 s of it.) The recorder then gets a moment to take the last messages in.
    horizon_wait = 1.0
    launch_args = {"output_dir": str(out_dir), "start_delay": "1.0", "duration": str(seconds),
                   "use_sim_time": "true", "lockstep": "true", **args}
    timeout = 60.0 + 5.0 * seconds
    env = {"ROS_DOMAIN_ID": next_domain_id()}
    with log.open("w") as sink, LaunchedGraph("sim_feedforward.launch.yaml", launch_args, sink=sink, env=env) as graph:
        t0 = time.monotonic()
        while "excitation: motion finished" not in graph.output("excitation"):
            graph.raise_if_died()
            if graph.output("sim_arm").count(LOCKSTEP_STALL) >= 5:
                raise DataError(f"the controller stopped answering the simulator (lockstep stalls); see {log}")
            if time.monotonic() - t0 > timeout:
                raise DataError(f"the excitation did not finish within {timeout:.0f} s of wall time; see {log}")
            time.sleep(0.2)
        time.sleep(horizon_wait)
        graph.raise_if_died()
    episodes = sorted(p for p in out_dir.iterdir() if (p / "metadata.yaml").is_file())
    if not episodes:
        raise DataError(f"the live run recorded no episode under {out_dir}; see {log}")
    return episodes[-1]


def closed_loop_metrics(bag: Path) -> TrackingMetrics:
    """Tracking and effort figures of one closed-loop recording.

    The reference is the recorded reference topic (JointTrajectory windows, de-duplicated by time), interpolated at
    the /joint_states header stamps inside the reference's time span; states stamped zero are not used (counted).

    Raises:
        DataError: the bag has no reference, no /joint_states inside the reference's span, or its states carry no
            header stamps (the reference is stamped in the simulator's time, receive time is another clock).
    """
    import warnings

    from ..data import read_recording

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zero stamps are counted in the result instead
        rec = read_recording(bag)
    if rec.state_time_base != "header":
        raise DataError(f"{bag}: no /joint_states message carries a header stamp; the tracking metric needs the "
                        "state's own stamps (the reference is stamped in the same clock)")
    if rec.reference_t_ns is None or len(rec.reference_t_ns) < 2:
        raise DataError(f"{bag}: no reference trajectory recorded, cannot measure tracking")
    if rec.reference_position is None:
        raise DataError(f"{bag}: no reference positions recorded, cannot measure tracking")
    t_ref, idx = np.unique(rec.reference_t_ns, return_index=True)
    q_ref = rec.reference_position[idx]
    t = rec.state_t_ns
    inside = (t >= t_ref[0]) & (t <= t_ref[-1]) & increasing_rows(t)
    if inside.sum() < 10:
        raise DataError(f"{bag}: only {int(inside.sum())} /joint_states samples inside the reference's time span")
    ts = t[inside]
    ref = np.stack([np.interp(ts, t_ref, q_ref[:, j]) for j in range(q_ref.shape[1])], axis=1)
    err = ref - rec.position[inside]
    rate_hz = (len(ts) - 1) / max(ns_to_s(ts[-1] - ts[0]), 1e-9)
    dq_ref = np.gradient(ref, ns_to_s(ts - ts[0]), axis=0)
    figs = tracking_figures(err, reversal_mask(dq_ref, rate_hz))
    return TrackingMetrics(
        joint_names=list(rec.joint_names),
        tracking_rmse_per_joint=figs.rmse,
        tracking_rmse_mean=float(np.mean(figs.rmse)),
        max_abs_error_per_joint=figs.max_abs,
        reversal_rmse_per_joint=figs.reversal_rmse,
        reversal_rmse_mean=float(np.nanmean(figs.reversal_rmse)) if np.isfinite(figs.reversal_rmse).any()
        else float("nan"),
        effort_rms_per_joint=np.sqrt(np.mean(rec.effort[inside] ** 2, axis=0)).tolist(),
        samples=int(inside.sum()),
        seconds=ns_to_s(ts[-1] - ts[0]),
        time_base=rec.state_time_base,
        zero_stamp_states=rec.zero_stamp_states,
        zero_stamp_states_dropped=int(rec.metadata.get("zero_stamp_states", 0))
        if rec.metadata.get("zero_stamp_states_dropped") else 0,
    )
