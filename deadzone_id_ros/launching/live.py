"""Live runs of the simulated arm over DDS, and the tracking figures of their recordings (used by the demo).

:func:`live_run` starts ``sim_feedforward.launch.yaml`` (sim_arm, excitation, feedforward_controller and recorder as
separate processes) in simulated time with the simulator in lockstep with the controller, waits until the excitation
has been tracked (no wall-clock deadline: it fails only when simulated time stalls, :mod:`.progress`), and returns
the recorded episode. :func:`closed_loop_metrics` measures tracking and effort in a
recording against its recorded reference.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ..errors import DataError
from ..sim.tracking import TrackingMetrics, reversal_mask, tracking_figures
from ..stamps import increasing_rows, ns_to_s, s_to_ns
from .progress import (
    DEFAULT_STALL_TIMEOUT,
    ProgressWatch,
    StallError,
    cpu_ticks,
    domain_processes,
    process_state,
    udp_sockets,
)

if TYPE_CHECKING:
    from .graph import LaunchedGraph, NodeProcess
    from .sim_time_listener import SimTimeListener

__all__ = ["LOCKSTEP_STALL", "MOTION_SLACK_S", "START_LIMIT_SIM_S", "StallError", "TrackingMetrics",
           "closed_loop_metrics", "domains_in_use", "live_run", "next_domain_id",
           "robot_launch_args"]

LOCKSTEP_STALL = "lockstep: no effort command"
MOTION_FINISHED = "excitation: motion finished"
EXCITATION_STARTED = "starting in"  # the excitation's "seed S, D s, centre [...] rad, starting in X s"
#: Simulated seconds the excitation may take to start once simulated time runs (the controller holds meanwhile).
START_LIMIT_SIM_S = 60.0
#: Simulated seconds past the motion's end before a run whose excitation has not reported it fails.
MOTION_SLACK_S = 10.0
_RUN_COUNTER = {"n": 0}


def next_domain_id() -> str:
    """A ROS_DOMAIN_ID of its own for each live run (10..99, offset from the caller's), so that no participant of a
    previous run, still known to DDS discovery, can reach the next one; a domain in which any process on this host
    has a DDS port open (:func:`domains_in_use`) is skipped."""
    base = int(os.environ.get("ROS_DOMAIN_ID", "0") or 0)
    busy = domains_in_use()
    for _ in range(90):
        _RUN_COUNTER["n"] += 1
        domain = (base - 10 + _RUN_COUNTER["n"]) % 90 + 10
        if domain not in busy:
            return str(domain)
    return str(domain)  # every one busy: the next in turn, as before


def domains_in_use() -> set[int]:
    """The ROS domains in which a process on this host has a UDP port open, from /proc/net/udp{,6}.

    RTPS puts every port of domain d in [7400 + 250 d, 7650 + 250 d) (PB 7400, DG 250: the DDS-RTPS port mapping),
    so a bound port there is a participant of that domain, whoever runs it: another user's graph on a shared PC, a
    test run in parallel. Two graphs in one domain talk to each other (states and commands of one reach the other's
    nodes), which made lockstep runs stall on a machine shared by parallel test runs. Empty where /proc is missing.
    """
    ports = {port for port, _ in udp_sockets()}
    return {(port - 7400) // 250 for port in ports if 7400 <= port < 7400 + 250 * 233}


def robot_launch_args(robot: str) -> dict[str, str]:
    """The launch argument ``robot:=`` of the profile ``robot`` for a live run ({} for "": the launch files' default,
    the bundled arm); a profile file is passed as an absolute path (the nodes need not share the caller's folder)."""
    if not robot:
        return {}
    path = Path(robot)
    return {"robot": str(path.resolve()) if path.is_file() else robot}


def live_run(out_dir: Path, args: dict[str, str], seconds: float, log: Path, attempts: int = 2, *,
             stall_timeout: float = DEFAULT_STALL_TIMEOUT) -> Path:
    """Run sim_feedforward.launch.yaml until ``seconds`` [s] of excitation have been tracked; return the episode bag.

    The simulator owns time (``use_sim_time:=true``) and runs in lockstep with the controller, so the result does
    not depend on how busy the machine is; wall time is at least the simulated time, and there is no wall-clock
    deadline: the run ends when the excitation reports, in simulated time, that its motion is over. It fails only
    when simulated time (sim_arm's ``/clock``, followed through the controller's ``/diagnostics`` stamps by
    :class:`~deadzone_id_ros.launching.sim_time_listener.SimTimeListener`), or
    before it starts the nodes' start-up (their INFO lines, the CPU time of nodes still importing), makes no progress
    for ``stall_timeout`` wall seconds, or when the excitation has not started within :data:`START_LIMIT_SIM_S` or
    not finished within its length plus :data:`MOTION_SLACK_S` of simulated time. Each attempt runs in its own ROS
    domain. If the controller stops answering (sim_arm reports lockstep stalls) or the run stalls, the attempt is
    abandoned and run again once, and the log says so.

    Args:
        out_dir: the recorder's output folder.  args: further launch arguments (mode, model, seed, model_path,
        real_time_factor).  log: file that receives every node's output.  attempts: tries (>= 1).
        stall_timeout: wall seconds without progress before an attempt fails [s].

    Raises:
        LaunchError: a node died.  StallError (a DataError): no progress; the message names the stalled process,
            the last simulated time and the log.  DataError: lockstep stalls, or nothing was recorded.
    """
    last_error: DataError | None = None
    for attempt in range(1, attempts + 1):
        run_dir = out_dir if attempt == 1 else out_dir.with_name(f"{out_dir.name}_retry{attempt - 1}")
        run_log = log if attempt == 1 else log.with_name(f"{log.stem}_retry{attempt - 1}{log.suffix}")
        try:
            return _live_run_once(run_dir, args, seconds, run_log, stall_timeout)
        except DataError as err:
            last_error = err
            print(f"  live run failed ({err}); {'retrying' if attempt < attempts else 'giving up'}", flush=True)
    assert last_error is not None
    raise last_error


def _live_run_once(out_dir: Path, args: dict[str, str], seconds: float, log: Path, stall_timeout: float) -> Path:
    from .graph import LaunchedGraph
    from .sim_time_listener import SimTimeListener

    out_dir.mkdir(parents=True, exist_ok=True)
    # The excitation logs "motion finished" once its clock (simulated time, driven by the lockstep simulator) passes
    # the end of the motion: every state inside the reference's span has been published by then, whatever the real
    # time factor. (Waiting a fixed wall time after its last window instead cut runs short under load: measured, a
    # 1.5 s run recorded 0.3 s of it.) The recorder then gets a moment to take the last messages in.
    horizon_wait = 1.0
    launch_args = {"output_dir": str(out_dir), "start_delay": "1.0", "duration": str(seconds),
                   "use_sim_time": "true", "lockstep": "true", "step_on_answer": "true", **args}
    domain = next_domain_id()
    env = {"ROS_DOMAIN_ID": domain}
    with log.open("w") as sink, \
            LaunchedGraph("sim_feedforward.launch.yaml", launch_args, sink=sink, env=env) as graph, \
            SimTimeListener(int(domain)) as clock:
        try:
            _wait_for_motion(graph, clock, float(launch_args["start_delay"]) + seconds, stall_timeout, log)
        except DataError as err:
            raise type(err)(f"{err}{_strangers(graph, int(domain))}") from err
        time.sleep(horizon_wait)
        graph.raise_if_died()
    episodes = sorted(p for p in out_dir.iterdir() if (p / "metadata.yaml").is_file())
    if not episodes:
        raise DataError(f"the live run recorded no episode under {out_dir}; see {log}")
    return episodes[-1]


def _wait_for_motion(graph: LaunchedGraph, clock: SimTimeListener, motion_s: float, stall_timeout: float,
                     log: Path) -> None:
    """Return once the excitation reports the end of its motion (``motion_s`` [s] of simulated time from its start).

    Progress is simulated time once it runs; before that (nodes importing, the controller not yet answering, so
    sim_arm holds time at zero), a new ``[INFO]`` line (a warning repeated while waiting is no progress), or CPU time
    used by a node that has printed nothing yet (one that imports; an idle node that spins uses CPU time too, so it
    does not count once it has spoken).

    Raises:
        LaunchError: a node died.  DataError: lockstep stalls.  StallError: see :func:`live_run`.
    """
    watch = ProgressWatch(stall_timeout)
    started_at: int | None = None  # simulated time when the excitation was seen to start [ns]
    while True:
        excitation = graph.output("excitation")
        if MOTION_FINISHED in excitation:
            return
        graph.raise_if_died()
        if graph.output("sim_arm").count(LOCKSTEP_STALL) >= 5:
            raise DataError(f"the controller stopped answering the simulator (lockstep stalls); see {log}")
        latest = clock.latest_ns
        running = latest is not None and latest > 0
        now = latest or 0
        if running and started_at is None and EXCITATION_STARTED in excitation:
            started_at = now
        where = f"simulated time {ns_to_s(now):.3f} s; see {log}"
        if running and started_at is None and now > s_to_ns(START_LIMIT_SIM_S):
            raise StallError(f"the excitation did not start within {START_LIMIT_SIM_S:g} s of simulated time "
                             f"(excitation: {_describe(graph.node('excitation'))}); {where}")
        if started_at is not None and now - started_at > s_to_ns(motion_s + MOTION_SLACK_S):
            raise StallError(f"the excitation did not finish its {motion_s:g} s motion within {MOTION_SLACK_S:g} s "
                             f"more of simulated time (excitation: {_describe(graph.node('excitation'))}); {where}")
        # start-up progress: INFO lines (a warning repeated every 10 s, "no /clock yet", is none), and the CPU time of
        # nodes still silent (importing: torch, MuJoCo, rclpy)
        watch.update(now if running else ("start-up", latest, sum(n.info_total for n in graph.nodes),
                                          sum(cpu_ticks(n.process.pid) for n in graph.nodes if not n.lines_total)))
        if watch.stalled():
            raise StallError(_stall_message(graph, latest, watch, log))
        time.sleep(0.2)


def _strangers(graph: LaunchedGraph, domain: int) -> str:
    """``; other processes in ROS domain D: ...`` when processes outside this run (and this process) have DDS ports
    in its domain (another graph talks to this one's nodes), else empty."""
    ours = {os.getpid(), *(n.process.pid for n in graph.nodes)}
    others = {pid: cmd for pid, cmd in domain_processes(domain).items() if pid not in ours}
    if not others:
        return ""
    return f"; other processes in ROS domain {domain}: " + "; ".join(f"pid {p}: {c}" for p, c in others.items())


def _describe(node: NodeProcess) -> str:
    """``pid N, <scheduler state>, last output: <line>`` of a node."""
    last = node.lines[-1] if node.lines else "(none)"
    return f"pid {node.process.pid}, {process_state(node.process.pid)}, last output: {last[-160:]}"


def _stall_message(graph: LaunchedGraph, now: int | None, watch: ProgressWatch, log: Path) -> str:
    """Where a lockstep run stalled: the process that holds time, the last simulated time, every node, the log."""
    if now is None:
        where = "simulated time never reached feedforward_controller's /diagnostics (sim_arm owns it)"
    elif now == 0:
        where = ("simulated time never started (sim_arm holds it at 0 until feedforward_controller answers its "
                 "first /joint_states) and no node printed anything or used CPU time")
    else:
        where = (f"simulated time stopped at {ns_to_s(now):.3f} s: sim_arm (it owns simulated time) moved it no "
                 "further (seen in feedforward_controller's /diagnostics stamps)")
    nodes = "; ".join(f"{n.label}: {_describe(n)}" for n in graph.nodes)
    return (f"lockstep run stalled: {where} for {watch.stalled_for():.0f} s of wall time (stall timeout "
            f"{watch.stall_timeout:g} s); processes: {nodes}; see {log}")


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
