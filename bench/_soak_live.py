"""The live soak (issue 12): the controller node against the simulated arm node over DDS, in lockstep, with random
reference switches, excursions past the URDF limits, parameter sets, injected state gaps and operator resets; every
command checked. Used by ``bench/bench_soak.py`` (60 s) and, shortened, by ``test/integration/test_soak_live.py``.

Processes: ``sim_arm`` (clock_mode sim, lockstep) and ``feedforward_controller`` (use_sim_time, stamped_command), at
the launch files' real-time priorities (49 and 50; normal scheduling where the kernel refuses), whose /joint_states
input is remapped to ``/soak/joint_states``. This script (at SCHED_FIFO 48 while it runs, :data:`RELAY_PRIORITY`: at
normal priority a busy machine starved it, it passed states on in bursts, and the controller's queue dropped some)
relays the simulator's /joint_states to the controller, except during an injected gap (20-150 ms of simulated time):
no state reaches the controller, its watchdog holds then zeros, and the first state after the gap comes with a stamp
jump. In lockstep the simulator waits ``lockstep_timeout`` (10 ms wall) for an answer before stepping without one,
so a gap costs wall time but simulated time goes on.

Checked on ``~/command_stamped`` (every command with the time it is for, and for a state's answer the desired
position q_d it tracked), independently of the controller's code:

- finite, and |tau| <= the effort limit (the profile's, else the URDF's) x effort_limit_scale;
- |tau_k - tau_{k-1}| <= rate x min(t_k - t_{k-1}, rate_limit_max_period), with the torque-rate limit in force
  (while a parameter set is in flight, the larger of the old and the new), except a command of exactly zero (the
  watchdog's and the safe state's zero torque is never ramped);
- the safe state is entered exactly on the state whose (q, q_d) first crosses a limit (|q_d - q| >
  tracking_error_limit in force, or q beyond the URDF limits by more than position_limit_margin) while no fault is
  latched: the controller logs each fault and each reset with the stamp of its state, and both lists are compared
  with the crossings computed here. A state whose answer did not arrive, or whose tracking limit changed while a
  parameter set was in flight, cannot be judged and is counted as such.
"""

from __future__ import annotations

import os
import re
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _ros import NAMES, REPO, log_tail, realtime_threads, ros_env, start, stop  # noqa: E402

from deadzone_id_ros.launching.progress import DEFAULT_STALL_TIMEOUT, ProgressWatch, process_state  # noqa: E402
from deadzone_id_ros.robot_configs import bundled_excitation_config
from deadzone_id_ros.stamps import NS_PER_S, ns_to_s, s_to_ns, stamp_to_ns  # noqa: E402

#: SCHED_FIFO priority of this process (the relay) while it runs: below sim_arm (49) and the controller (50)
RELAY_PRIORITY = 48

FAULT_RE = re.compile(r"safe state at t = (\d+)\.(\d{9}) s: (tracking error|position)")
RESET_RE = re.compile(r"fault cleared after the state of t = (\d+)\.(\d{9}) s")


@dataclass
class LiveSoakResult:
    """Figures of one live soak.

    Attributes:
        sim_seconds: simulated time from the first answer to the last state [s]; wall_seconds: wall time [s].
        states, forwarded, commands: states published by the simulator, relayed to the controller, commands seen.
        gaps, references, excursions, parameter_sets, refused_sets, resets: events injected / done.
        faults, expected_faults: faults the controller logged / crossings found here (the first of each stretch
            without a latched fault); unjudged_states, unjudged_faults: states that could not be judged (see the
            module docstring), and the logged faults among them (so faults - unjudged_faults must equal
            expected_faults); unjudged_pairs: command pairs not rate-checked because an answer between them was
            lost on the way to this process.
        max_clamp_ratio, max_rate_ratio: max |tau| / clamp and max change / allowed change (<= 1 each).
        nonfinite: commands with a NaN or inf.
        violations: what broke (empty on success; capped at 20).
    """

    sim_seconds: float = 0.0
    wall_seconds: float = 0.0
    states: int = 0
    forwarded: int = 0
    commands: int = 0
    gaps: int = 0
    references: int = 0
    excursions: int = 0
    parameter_sets: int = 0
    refused_sets: int = 0
    resets: int = 0
    faults: int = 0
    expected_faults: int = 0
    unjudged_states: int = 0
    unjudged_faults: int = 0
    unjudged_pairs: int = 0
    max_clamp_ratio: float = 0.0
    max_rate_ratio: float = 0.0
    nonfinite: int = 0
    violations: list[str] = field(default_factory=list)


@dataclass
class _ParamSet:
    """A parameter set sent after the state of stamp ``sent`` was answered and whose response came when this node's
    newest state had stamp ``done`` [ns] (None: no response handled). ``values``: what was asked, then (with the
    response) what the controller accepted."""

    sent: int
    values: dict[str, object]
    done: int | None = None
    done_index: int | None = None  # commands from this index of ``answers`` on were published after it applied


def _config_and_limits():
    """(ControllerConfig of the bundled parameter file, the bundled arm's RobotDescription)."""
    from deadzone_id_ros.control.feedforward_controller_params import load_controller_config
    from deadzone_id_ros.resources import default_urdf
    from deadzone_id_ros.robot.description import load_robot_description

    cfg, _ = load_controller_config(REPO / "config" / "feedforward_controller.yaml")
    return cfg, load_robot_description(default_urdf(), cfg.joint_names)


class _Soak:
    """The soak node's state and the events it injects (one ``rng`` for all of them)."""

    def __init__(self, node, rng: np.random.Generator, cfg, desc) -> None:
        from rclpy.parameter_client import AsyncParameterClient
        from sensor_msgs.msg import JointState
        from std_srvs.srv import Trigger
        from trajectory_msgs.msg import JointTrajectory

        self.node, self.rng, self.cfg, self.desc = node, rng, cfg, desc
        self.res = LiveSoakResult()
        self.states: list[tuple[int, np.ndarray]] = []  # (stamp [ns], q) of every simulator state
        self.forwarded: set[int] = set()
        self.answers: list[tuple[int, np.ndarray, np.ndarray]] = []  # (stamp [ns], tau, q_d (or empty))
        # stamp of the last state whose answer came (one with q_d): the watchdog's commands carry the controller's
        # clock instead, which runs ahead of the relayed states when this relay lags (a busy machine)
        self.answered_state = 0
        self.sets: list[_ParamSet] = []
        self.gap_until = -1
        self.relay = node.create_publisher(JointState, "/soak/joint_states", 100)
        node.create_subscription(JointState, "/joint_states", self._on_state, 1000)
        node.create_subscription(JointState, "/feedforward_controller/command_stamped", self._on_answer, 1000)
        self.ref_pub = node.create_publisher(JointTrajectory, "/feedforward_controller/reference", 10)
        self.params = AsyncParameterClient(node, "/feedforward_controller")
        self.reset = node.create_client(Trigger, "/feedforward_controller/reset")
        self.trigger = Trigger

    def _on_state(self, msg) -> None:
        t = stamp_to_ns(msg.header.stamp)
        self.states.append((t, np.array(msg.position)))
        if t >= self.gap_until:
            self.relay.publish(msg)
            self.forwarded.add(t)

    def _on_answer(self, msg) -> None:
        t = stamp_to_ns(msg.header.stamp)
        self.answers.append((t, np.array(msg.effort), np.array(msg.position)))
        if msg.position:
            self.answered_state = max(self.answered_state, t)

    @property
    def now_ns(self) -> int:
        return self.states[-1][0]

    def send_reference(self, target: np.ndarray | None = None) -> None:
        """A new excitation from where the arm is, or (``target``) a slow ramp to a position past a limit."""
        from deadzone_id_ros.control import generate_excitation
        from deadzone_id_ros.experiments.soak import ramp_points
        from deadzone_id_ros.nodes.excitation import reference_message

        q = self.states[-1][1]
        if target is None:
            start_q = np.clip(q, self.desc.lower + 0.25, self.desc.upper - 0.25)
            pts = generate_excitation(bundled_excitation_config(duration=6.0, seed=int(self.rng.integers(1 << 30)),
                                                       lead_in=0.1), start=start_q)
            rows = range(0, len(pts.t), 10)
        else:
            pts = ramp_points(NAMES, q, target)
            rows = range(len(pts.t))
        self.ref_pub.publish(reference_message(pts, self.now_ns + 200_000_000, rows))

    def send_parameters(self) -> None:
        """A random parameter set; a DOB cutoff above the Nyquist limit in 30% of them (the node must refuse it)."""
        from rclpy.parameter import Parameter

        base = np.asarray(self.cfg.torque_rate_limit)
        values: dict[str, object] = {
            "torque_rate_limit": (base * self.rng.uniform(0.5, 2.0, size=base.shape)).tolist(),
            "kp": [float(self.rng.uniform(200, 600))] * len(NAMES),
            "tracking_error_limit": float(self.rng.choice([0.5, 0.5, 0.2, 0.01, 0.004])),
            "position_limit_margin": float(self.rng.choice([0.05, 0.02])),
        }
        if self.rng.random() < 0.3:
            values["dob_cutoff"] = [150.0, 5000.0, 150.0]
        names = list(values)
        # from the last state the controller is known to have answered: later ones may be queued there already (not
        # from the last answer: a watchdog command's stamp can be ahead of states still on their way, which the
        # controller may take after applying the set; measured under load, 40 ms ahead, and a fault then judged with
        # the old tracking limit)
        entry = _ParamSet(self.answered_state, dict(values))
        self.sets.append(entry)
        future = self.params.set_parameters([Parameter(k, value=v) for k, v in values.items()])

        def done(fut) -> None:
            results = fut.result().results
            entry.values = {k: values[k] for k, r in zip(names, results) if r.successful}
            entry.done = self.now_ns
            self.res.refused_sets += int(not all(r.successful for r in results))

        future.add_done_callback(done)
        self.res.parameter_sets += 1


def _violate(res: LiveSoakResult, text: str) -> None:
    if len(res.violations) < 20:
        res.violations.append(text)


def _in_force(sets: list[_ParamSet], name: str, base, t: int, index: int | None = None
              ) -> tuple[np.ndarray, np.ndarray]:
    """(lowest, highest) value of parameter ``name`` that can be in force for the state of stamp ``t`` [ns] or, with
    ``index``, for the command at that index of the answers (stamped ``t``).

    A set whose stamp ``sent`` is after ``t`` was applied after it. One is applied for a state stamped after its
    ``done`` (relayed after the response came); for a command, from its ``done_index`` on: a watchdog command carries
    the controller's clock, which can be ahead of ``done`` while the relay lags, so its stamp does not tell; the
    commands reach this node in the order they were published. Otherwise the set is in flight, and the range takes
    in its value as well as the value in force before (each set in flight: they can overlap)."""
    value = np.asarray(base, dtype=float)
    flight: list[np.ndarray] = []
    for s in sets:
        if name not in s.values or s.sent > t:
            continue
        new = np.asarray(s.values[name], dtype=float)
        applied = (s.done is not None and s.done < t) if index is None else \
            (s.done_index is not None and index >= s.done_index)
        if applied:  # so is every set before it (the controller answers them in order)
            value, flight = new, []
        else:
            flight.append(new)
    everything = [value, *flight]
    return np.min(everything, axis=0), np.max(everything, axis=0)


def _mark_done_indices(soak: _Soak) -> None:
    """Each set's ``done_index``: the index of the first state answer (one with q_d) stamped after its ``done``, a
    state the controller took after applying the set; every command published after that one comes later in
    ``answers``."""
    stamps = [(k, t) for k, (t, _, q_d) in enumerate(soak.answers) if q_d.size]
    for s in soak.sets:
        if s.done is not None:
            s.done_index = next((k for k, t in stamps if t > s.done), None)


def check_commands(soak: _Soak) -> None:
    """Finite, clamp and rate limit on every command seen (see the module docstring). A command no later than the
    previous one must not move; a pair with a relayed state between them whose answer did not arrive (lost on the
    way here) cannot be judged and is counted in ``unjudged_pairs``."""
    res, cfg = soak.res, soak.cfg
    clamp = cfg.effort_limits(soak.desc)
    forwarded = np.array(sorted(soak.forwarded), dtype=np.int64)
    _mark_done_indices(soak)
    prev: tuple[int, np.ndarray] | None = None
    for k, (t, tau, _) in enumerate(soak.answers):
        res.commands += 1
        if not np.all(np.isfinite(tau)):
            res.nonfinite += 1
            _violate(res, f"t={ns_to_s(t):.3f}: non-finite command {tau.tolist()}")
            continue
        res.max_clamp_ratio = max(res.max_clamp_ratio, float(np.max(np.abs(tau) / clamp)))
        if np.any(np.abs(tau) > clamp + 1e-9):
            _violate(res, f"t={ns_to_s(t):.3f}: command {tau.tolist()} beyond the clamp {clamp.tolist()}")
        if prev is not None and np.any(tau != 0.0):
            lost = np.searchsorted(forwarded, t, "left") - np.searchsorted(forwarded, prev[0], "right") > 0
            if lost:
                res.unjudged_pairs += 1
            else:
                _, rate_hi = _in_force(soak.sets, "torque_rate_limit", cfg.torque_rate_limit, t, k)
                allowed = rate_hi * min(ns_to_s(max(t - prev[0], 0)), cfg.rate_limit_max_period)
                change = np.abs(tau - prev[1])
                ratio = float(np.max(np.divide(change, allowed, out=np.where(change > 0, np.inf, 0.0),
                                               where=allowed > 0)))
                res.max_rate_ratio = max(res.max_rate_ratio, ratio)
                if ratio > 1 + 1e-9:
                    _violate(res, f"t={ns_to_s(t):.3f}: change {(tau - prev[1]).tolist()} beyond the rate limit "
                                  f"{allowed.tolist()} (dt {ns_to_s(t - prev[0]):.4f} s)")
        prev = (max(t, prev[0]) if prev is not None else t, tau)


def _crossing(soak: _Soak, t: int, q: np.ndarray, q_d: np.ndarray) -> bool | None:
    """Whether the state (stamp ``t`` [ns], q, q_d [rad]) crosses a limit: True or False whatever the parameters in
    force, or None when it depends on which value of a parameter set in flight the controller had applied."""
    cfg, desc, sets = soak.cfg, soak.desc, soak.sets
    e = np.abs(q_d - q)
    lim_lo, lim_hi = _in_force(sets, "tracking_error_limit", cfg.tracking_error_limit, t)
    m_lo, m_hi = _in_force(sets, "position_limit_margin", cfg.position_limit_margin, t)
    beyond = np.maximum(desc.lower - q, q - desc.upper)  # > 0 outside the URDF limits [rad]
    if np.any(e > lim_hi) or np.any(beyond > m_hi):
        return True
    if np.all(e <= lim_lo) and np.all(beyond <= m_lo):
        return False
    return None


def check_safe_state(soak: _Soak, log: str) -> None:
    """The safe state is entered exactly on the first state that crosses a limit while none is latched: each state the
    controller received while no fault was latched is judged here (crossing or not) and compared with the faults
    the controller logged; the latch follows the controller's own faults and resets."""
    res = soak.res
    faults = {int(m.group(1)) * NS_PER_S + int(m.group(2)) for m in FAULT_RE.finditer(log)}  # exact "sec.nanosec"
    resets = sorted(int(m.group(1)) * NS_PER_S + int(m.group(2)) for m in RESET_RE.finditer(log))
    res.faults = len(faults)
    q_d_of = {t: q_d for t, _, q_d in soak.answers if q_d.size}
    latched_at: int | None = None
    for t, q in soak.states:
        if latched_at is not None:
            while resets and resets[0] < latched_at:
                resets.pop(0)  # a reset refused or before this fault
            if not (resets and t > resets[0]):
                continue
            resets.pop(0)
            latched_at = None
        if t not in soak.forwarded:
            continue
        q_d = q_d_of.get(t)
        crossing = None if q_d is None or not np.all(np.isfinite(q)) else _crossing(soak, t, q, q_d)
        if crossing is None:
            res.unjudged_states += 1
            res.unjudged_faults += int(t in faults)
        else:
            res.expected_faults += int(crossing)
            if crossing != (t in faults):
                what = "crossing without a fault" if crossing else "fault without a crossing"
                _violate(res, f"t={ns_to_s(t):.3f}: {what} (|q_d - q| {np.abs(q_d - q).round(4).tolist()}, "
                              f"q {q.round(4).tolist()})")
        if t in faults:
            latched_at = t


def live_soak(seconds: float, seed: int = 0, stall_timeout: float = DEFAULT_STALL_TIMEOUT) -> LiveSoakResult:
    """Run the live soak for ``seconds`` of simulated time (see the module docstring); returns its figures.

    Args:
        seconds: simulated time [s] (> 0) from the controller's first answer.
        seed: seeds every injected event.
        stall_timeout: give up when simulated time (the stamps of the states this node receives) has not advanced
            for this many wall seconds [s]; the result then says how much simulated time ran. There is no wall-clock
            deadline: a slow machine only makes the soak take longer.

    Raises:
        RuntimeError: the nodes did not come up (their log tails are in the message).
    """
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.node import Node

    cfg, desc = _config_and_limits()
    exe = Path(sys.prefix) / "bin"
    sim, sim_log = start([str(exe / "sim_arm"), "--ros-args", "--params-file", str(REPO / "config" / "sim_arm.yaml"),
                          "-p", "clock_mode:=sim", "-p", "lockstep:=true", "-p", "lockstep_timeout:=0.01",
                          "-p", "thread_priority:=49"])
    ctl, ctl_log = start([str(exe / "feedforward_controller"), "--ros-args", "--params-file",
                          str(REPO / "config" / "feedforward_controller.yaml"), "-p", "use_sim_time:=true",
                          "-p", "stamped_command:=true", "-p", "thread_priority:=50",
                          "-r", "/joint_states:=/soak/joint_states"])
    try:  # the nodes stop whatever fails here, rclpy's start-up included
        ros_env()
        with realtime_threads(RELAY_PRIORITY) as refused:  # DDS threads started inside inherit it
            if refused:
                print(f"live soak: {refused}", file=sys.stderr)
            ctx = rclpy.Context()
            rclpy.init(context=ctx)
            node = Node("live_soak", context=ctx)
            rng = np.random.default_rng(seed)
            soak = _Soak(node, rng, cfg, desc)
            ex = SingleThreadedExecutor(context=ctx)
            ex.add_node(node)
            wall0 = time.monotonic()
            try:
                _drive(soak, ex, seconds, stall_timeout, sim, ctl, ctl_log, sim_log)
            finally:
                node.destroy_node()
                rclpy.shutdown(context=ctx)
    finally:
        stop(ctl)
        stop(sim)
    soak.res.wall_seconds = time.monotonic() - wall0
    soak.res.states, soak.res.forwarded = len(soak.states), len(soak.forwarded)
    ctl_log.seek(0)
    check_commands(soak)
    check_safe_state(soak, ctl_log.read().decode(errors="replace"))
    return soak.res


def _drive(soak: _Soak, ex, seconds: float, stall_timeout: float, sim, ctl, ctl_log, sim_log) -> None:
    """Spin the soak for ``seconds`` of simulated time, injecting its events (see :func:`live_soak`); ``sim``, ``ctl``:
    the sim_arm and controller processes (named when simulated time stalls), with their log files."""
    rng, desc = soak.rng, soak.desc
    _wait_ready(soak, ex, ctl_log, sim_log)
    t0 = soak.answers[-1][0]
    next_ref = next_set = 0.0
    next_gap, next_excursion = float(rng.uniform(1.0, 3.0)), float(rng.uniform(4.0, 8.0))
    watch = ProgressWatch(stall_timeout)
    while soak.now_ns - t0 < s_to_ns(seconds):
        ex.spin_once(timeout_sec=0.01)
        watch.update(soak.now_ns)
        if watch.stalled():
            print(f"live soak: simulated time stalled at {ns_to_s(soak.now_ns - t0):.3f} s for "
                  f"{watch.stalled_for():.0f} s of wall time (sim_arm pid {sim.pid}: "
                  f"{process_state(sim.pid)}, controller pid {ctl.pid}: {process_state(ctl.pid)}); giving up",
                  file=sys.stderr)
            break
        now = ns_to_s(soak.now_ns - t0)
        if now >= next_ref:
            soak.reset.call_async(soak.trigger.Request())  # an operator reset (a no-op without a fault)
            soak.res.resets += 1
            soak.send_reference()
            soak.res.references += 1
            next_ref = now + 3.0
        if now >= next_set:
            soak.send_parameters()
            next_set = now + float(rng.uniform(1.0, 3.0))
        if now >= next_gap:
            soak.gap_until = soak.now_ns + s_to_ns(float(rng.uniform(0.02, 0.15)))
            soak.res.gaps += 1
            next_gap = now + float(rng.uniform(1.5, 4.0))
        if now >= next_excursion:
            j = int(rng.integers(len(NAMES)))
            target = soak.states[-1][1].copy()
            target[j] = desc.upper[j] + 0.6 if rng.random() < 0.5 else desc.lower[j] - 0.6
            soak.send_reference(target)
            soak.res.excursions += 1
            next_excursion = now + float(rng.uniform(8.0, 15.0))
            next_ref = now + 3.0
    for _ in range(50):  # the last answers and parameter responses
        ex.spin_once(timeout_sec=0.01)
    soak.res.sim_seconds = ns_to_s(soak.now_ns - t0)


def _wait_ready(soak: _Soak, ex, ctl_log, sim_log) -> None:
    """Spin until this node has matched every peer it needs (discovery is pairwise: sim_arm and the controller can
    be stepping before this node sees their topics and services)."""
    missing = {
        "a /joint_states state": lambda: bool(soak.states),
        "an answer on ~/command_stamped": lambda: bool(soak.answers),
        "the controller's ~/reference subscription": lambda: soak.ref_pub.get_subscription_count() > 0,
        "the controller's parameter services": soak.params.services_are_ready,
        "the controller's ~/reset service": soak.reset.service_is_ready,
    }
    watch = ProgressWatch(DEFAULT_STALL_TIMEOUT)  # start-up: each peer matched, or a node logged something
    while not all(ready() for ready in missing.values()) and not watch.stalled():
        ex.spin_once(timeout_sec=0.05)
        watch.update((tuple(ready() for ready in missing.values()), os.fstat(ctl_log.fileno()).st_size,
                      os.fstat(sim_log.fileno()).st_size))
    lacking = [what for what, ready in missing.items() if not ready()]
    if lacking:
        raise RuntimeError(f"live soak: no {', no '.join(lacking)} and no progress for {watch.stall_timeout:g} s:\n"
                           + log_tail(ctl_log) + log_tail(sim_log))
