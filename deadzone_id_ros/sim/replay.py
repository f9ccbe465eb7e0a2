"""Replay a recorded bag through the simulated arm and compare trajectories (core, no ROS).

- **Open loop** (:func:`replay`, ``closed_loop=False``): the recorded effort commands are applied to
  :class:`~deadzone_id_ros.sim.SimArm` at their recorded times (zero-order hold on the physics grid, as the sim_arm
  node holds the last command), starting from the recorded initial state; the simulated measurements at the
  recorded /joint_states stamps are compared with the recorded ones.
- **Closed loop** (``closed_loop=True``): the recorded reference is followed by the control law
  (:class:`~deadzone_id_ros.control.FeedforwardController`) against the simulated arm, one control tick per recorded
  /joint_states sample; the simulated trajectory is compared with the recorded one.

Exactness. A bag written by :func:`deadzone_id_ros.sim.offline.simulate` (``deadzone-id simulate``) carries its
physics configuration, noise seed included, in ``episode.yaml`` (``sim_config``). Replaying it open loop with that
configuration draws the same torque-ripple and velocity-noise sequence in the same order (measure, then step, per
tick), so the replayed measurements equal the recorded ones bit for bit (RMSE 0, up to the float64 round trip of the
bag, which is exact). The initial position is the recorded first reference point when it lies within half an encoder
step of the recorded (quantized) first position — the run then started at rest on its reference, as ``simulate`` and
the excitation node do — else the recorded position itself. Bags without ``sim_config`` (real robots, live recordings)
replay with the package's sim configuration and show the model mismatch. Joints are mapped by name; a bag whose joints
are not the simulated arm's URDF joints is refused with both lists.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..data.types import Recording
from ..errors import DataError
from ..stamps import NS_PER_S, increasing_rows, ns_to_s
from .arm import SimArm
from .config import SimArmConfig
from .replay_report import ReplaySummary, replay_meaning

__all__ = ["ReplayResult", "check_joints", "replay", "replay_bag", "write_report"]


@dataclass
class ReplayResult:
    """Recorded vs simulated trajectories at the recorded /joint_states stamps. Arrays follow ``joint_names``.

    Attributes:
        mode: ``"open_loop"`` or ``"closed_loop"``.
        source: the bag (or a label).
        joint_names: (J,) joint names (the simulator's order).
        t: (N,) time since the first sample [s].
        recorded_q / simulated_q: (N, J) measured position [rad].
        recorded_dq / simulated_dq: (N, J) measured velocity [rad/s].
        recorded_effort / simulated_effort: (N, J) applied torque [N·m].
        notes: how the replay was set up (configuration source, initial state, command count).
    """

    mode: str
    source: str
    joint_names: tuple[str, ...]
    t: np.ndarray
    recorded_q: np.ndarray
    simulated_q: np.ndarray
    recorded_dq: np.ndarray
    simulated_dq: np.ndarray
    recorded_effort: np.ndarray
    simulated_effort: np.ndarray
    notes: list[str] = field(default_factory=list)

    @staticmethod
    def _rmse(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return np.sqrt(np.mean((a - b) ** 2, axis=0))

    @property
    def rmse_q(self) -> np.ndarray:
        """(J,) position RMSE [rad]."""
        return self._rmse(self.simulated_q, self.recorded_q)

    @property
    def rmse_dq(self) -> np.ndarray:
        """(J,) velocity RMSE [rad/s]."""
        return self._rmse(self.simulated_dq, self.recorded_dq)

    @property
    def rmse_effort(self) -> np.ndarray:
        """(J,) applied-torque RMSE [N·m]."""
        return self._rmse(self.simulated_effort, self.recorded_effort)

    @property
    def max_abs_q_error(self) -> np.ndarray:
        """(J,) largest absolute position difference [rad]."""
        return np.max(np.abs(self.simulated_q - self.recorded_q), axis=0)

    def summary(self) -> ReplaySummary:
        """JSON-ready summary: mode, source, samples, duration and per-joint errors keyed by joint name."""
        per_joint = lambda arr: {n: float(v) for n, v in zip(self.joint_names, arr)}  # noqa: E731
        return ReplaySummary(
            mode=self.mode, source=self.source, joints=list(self.joint_names), samples=int(len(self.t)),
            duration_s=float(self.t[-1] - self.t[0]) if len(self.t) else 0.0,
            rmse_q_rad=per_joint(self.rmse_q), rmse_dq_rad_s=per_joint(self.rmse_dq),
            rmse_effort_nm=per_joint(self.rmse_effort), max_abs_q_error_rad=per_joint(self.max_abs_q_error),
            notes=list(self.notes))


def check_joints(
    bag_joints: tuple[str, ...] | list[str], urdf_joints: tuple[str, ...] | list[str], source: str
) -> None:
    """Refuse a bag whose joints are not exactly the simulated arm's (any order is fine; mapping is by name).

    Raises:
        DataError: names the bag, both joint lists, and what is missing or extra.
    """
    missing = [j for j in urdf_joints if j not in bag_joints]
    extra = [j for j in bag_joints if j not in urdf_joints]
    if missing or extra or len(bag_joints) != len(urdf_joints):
        raise DataError(
            f"{source}: the bag's joints {list(bag_joints)} do not match the simulated arm's URDF joints "
            f"{list(urdf_joints)} (missing from the bag: {missing}; not in the URDF: {extra}); refusing to replay"
        )


def sim_config_for_urdf(urdf_path: str | Path, joint_names: tuple[str, ...] | list[str]) -> SimArmConfig:
    """Physics for replaying a bag on another robot's URDF: the plain rigid arm ("ideal" profile) with the URDF's
    inertias and its ``<dynamics friction damping>``, no rotor inertia, no torque ripple, no measurement noise or
    quantization, so the replay shows what the URDF's dynamics explain of the recording and nothing invented.

    Args:
        urdf_path: the URDF (see :func:`deadzone_id_ros.robot.catalog.resolve_robot_model` for names).
        joint_names: (J,) the actuated joints (the bag's), by name; every other URDF joint is locked at 0 (as the
            rigid-body model locks it).

    Raises:
        ValueError: no joints.
    """
    n = len(joint_names)
    zeros = (0.0,) * n
    return SimArmConfig(profile="ideal", urdf_path=str(urdf_path), joint_names=tuple(joint_names), armature=zeros,
                        torque_noise_std=zeros, velocity_noise_std=zeros, encoder_resolution=0.0,
                        initial_position=zeros)


def _sim_config_from(recording: Recording, source: str, override: SimArmConfig | None) -> tuple[SimArmConfig, str]:
    if override is not None:
        return override, "the caller (--urdf: the URDF's own dynamics, ideal profile; --robot: its profile)"
    meta = recording.metadata.get("sim_config") if isinstance(recording.metadata, dict) else None
    if isinstance(meta, dict):
        from .config import sim_config_from_metadata

        return sim_config_from_metadata(meta, f"{source}: episode.yaml sim_config"), "the bag's episode.yaml"
    from .sim_arm_params import load_sim_config

    return load_sim_config()[0], "the package's config/sim_arm.yaml (the bag has no sim_config)"


def replay(
    recording: Recording,
    *,
    closed_loop: bool = False,
    sim_config: SimArmConfig | None = None,
    controller_config: object = None,
    controller_settings: dict[str, object] | None = None,
    source: str = "<recording>",
) -> ReplayResult:
    """Replay ``recording`` through the simulated arm (see the module docstring for both modes).

    Args:
        recording: the bag's data (:func:`deadzone_id_ros.data.bag.read_recording`). Open loop needs commands,
            closed loop needs the reference.
        closed_loop: follow the recorded reference with the controller instead of applying recorded commands.
        sim_config: physics; default: the bag's ``sim_config`` metadata, else config/sim_arm.yaml.
        controller_config: closed loop: a :class:`~deadzone_id_ros.control.ControllerConfig`; default: the bag's
            ``controller_config`` metadata, else the default configuration.
        controller_settings: closed loop: ``ControllerConfig`` field -> value on top of that
            (:func:`~deadzone_id_ros.sim.replay_controller.replay_controller_config`).
        source: label for messages and the report (the bag path).

    Returns:
        the :class:`ReplayResult`.

    Raises:
        DataError: joints differ from the URDF's, the needed topic (commands or reference) is missing, or fewer
            than two samples with increasing stamps. Zero, repeated or older stamps are skipped (said in ``notes``).
        ConfigError: the bag's sim_config/controller_config is invalid, or a controller setting is.
    """
    cfg, cfg_source = _sim_config_from(recording, source, sim_config)
    arm = SimArm(cfg)
    names = tuple(arm.joint_names)
    check_joints(tuple(recording.joint_names), names, source)
    cols = [list(recording.joint_names).index(n) for n in names]  # recording column of each sim joint
    notes = [f"physics configuration from {cfg_source} (seed {cfg.seed}, timestep {cfg.timestep} s)"]
    rows = _replayable_rows(np.asarray(recording.state_t_ns, dtype=np.int64), cfg.timestep, notes)
    t_ns = np.asarray(recording.state_t_ns, dtype=np.int64)[rows]
    if len(t_ns) < 2:
        raise DataError(f"{source}: /joint_states has {len(t_ns)} message(s) with increasing stamps; at least 2 are "
                        "needed to replay")
    rec_q = np.asarray(recording.position, float)[rows][:, cols]
    rec_dq = np.asarray(recording.velocity, float)[rows][:, cols]
    rec_eff = np.asarray(recording.effort, float)[rows][:, cols]
    t0 = int(t_ns[0])
    state_step = np.rint((t_ns - t0) / (cfg.timestep * NS_PER_S)).astype(np.int64)
    arm.reset(*_initial_state(recording, rec_q[0], rec_dq[0], t0, cols, cfg, notes))

    sim = np.empty((3, len(t_ns), arm.n_joints))  # simulated q, dq, effort
    if closed_loop:
        controller, t_rel = _closed_loop_controller(recording, t_ns, cols, names, arm, controller_config,
                                                    controller_settings, source, notes)
        for k in range(len(t_ns)):  # one control tick per recorded sample, held until the next sample's step
            meas = arm.measure()
            sim[0, k], sim[1, k], sim[2, k] = meas.q, meas.dq, meas.effort
            tau = controller.step(float(t_rel[k]), meas.q, meas.dq)
            if k + 1 < len(t_ns):
                arm.step(tau, int(state_step[k + 1] - state_step[k]))
    else:
        _replay_open_loop(recording, arm, cols, t0, state_step, source, notes, sim)
    return ReplayResult(
        mode="closed_loop" if closed_loop else "open_loop", source=source, joint_names=names,
        t=ns_to_s(t_ns - t0), recorded_q=rec_q, simulated_q=sim[0], recorded_dq=rec_dq, simulated_dq=sim[1],
        recorded_effort=rec_eff, simulated_effort=sim[2], notes=notes,
    )


def _initial_state(recording: Recording, q_first: np.ndarray, dq_first: np.ndarray, t0: int, cols: list[int],
                   cfg: SimArmConfig, notes: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """(q0 [rad], dq0 [rad/s]), (J,) each: the first reference point if stamped ``t0`` [ns] and within half an
    encoder step of the recorded first position ``q_first``, else ``q_first``; ``dq_first`` on joints moving beyond 3
    sigma of the velocity noise, else 0. The choice goes to ``notes``."""
    q0 = q_first.copy()
    q0_note = "initial position: the recorded (quantized) first position"
    ref_t_ns = recording.reference_t_ns
    if recording.reference_position is not None and ref_t_ns is not None and len(ref_t_ns) and int(ref_t_ns[0]) == t0:
        ref_q0 = np.asarray(recording.reference_position, float)[0, cols]
        if np.all(np.abs(ref_q0 - q0) <= np.asarray(cfg.encoder_resolution) / 2 + 1e-12):
            q0 = ref_q0
            q0_note = "initial position: the first reference point (within half an encoder step of the record)"
    notes.append(q0_note)
    moving = np.abs(dq_first) > 3 * np.asarray(cfg.velocity_noise_std) + 1e-12
    dq0 = np.where(moving, dq_first, 0.0)
    notes.append(
        "initial velocity: " + ("recorded" if moving.any() else "rest (recorded velocity within 3 sigma noise)")
    )
    return q0, dq0


def _replay_open_loop(recording: Recording, arm: SimArm, cols: list[int], t0: int, state_step: np.ndarray,
                      source: str, notes: list[str], sim: np.ndarray) -> None:
    """Apply the recorded commands (zero-order hold on the physics grid, zero before the first), measuring at each
    recorded sample's physics step (``state_step``, (N,)) into ``sim`` (3, N, J) = (q, dq, effort).

    Raises:
        DataError: no commands in the recording, or a command older than the previous one.
    """
    if recording.command is None or recording.command_t_ns is None or len(recording.command_t_ns) == 0:
        raise DataError(f"{source}: no effort commands in the bag (topic /effort_controller/commands); "
                        "open-loop replay needs them (try closed loop)")
    timestep = arm.config.timestep
    cmd = np.asarray(recording.command, float)[:, cols]
    cmd_step = np.rint((np.asarray(recording.command_t_ns, np.int64) - t0) / (timestep * NS_PER_S)).astype(np.int64)
    if np.any(np.diff(cmd_step) < 0):
        k = int(np.argmax(np.diff(cmd_step) < 0)) + 1
        raise DataError(f"{source}: /effort_controller/commands message {k} is older than the previous one")
    notes.append(f"{len(cmd)} recorded commands applied with zero-order hold on the {timestep} s physics grid")
    zero = np.zeros(arm.n_joints)
    n = len(state_step)
    for k in range(n):
        meas = arm.measure()
        sim[0, k], sim[1, k], sim[2, k] = meas.q, meas.dq, meas.effort
        if k + 1 == n:
            break
        s, end = int(state_step[k]), int(state_step[k + 1])
        while s < end:
            # latest command at or before physics step s; it holds until the next command's step
            i = int(np.searchsorted(cmd_step, s, side="right")) - 1
            nxt = int(cmd_step[i + 1]) if i + 1 < len(cmd_step) else end
            run = max(1, min(end, nxt) - s)
            arm.step(cmd[i] if i >= 0 else zero, run)
            s += run


def _replayable_rows(t_ns: np.ndarray, timestep: float, notes: list[str]) -> np.ndarray:
    """Indices of the /joint_states rows to replay: increasing stamps, at most one per physics step of
    ``timestep`` [s]. Skipped rows (zero, repeated or older stamps; two stamps within one step) go to ``notes``."""
    keep = increasing_rows(t_ns)
    if not keep.all():
        k = int(np.argmax(~keep))
        notes.append(f"/joint_states: skipped {int((~keep).sum())} message(s) with a zero, repeated or older "
                     f"header stamp (first: message {k})")
    rows = np.nonzero(keep)[0]
    if len(rows):
        step = np.rint((t_ns[rows] - t_ns[rows[0]]) / (timestep * NS_PER_S)).astype(np.int64)
        first = np.concatenate([[True], np.diff(step) > 0])
        if not first.all():
            notes.append(f"/joint_states: skipped {int((~first).sum())} message(s) stamped within the same physics "
                         f"step of {timestep} s as the previous one (first: message {int(rows[~first][0])})")
        rows = rows[first]
    return rows


def _closed_loop_controller(recording, t_ns, cols, names, arm, controller_config, settings, source,  # noqa: ANN001, ANN202
                            notes):
    """Build the controller for a closed-loop replay and give it the recorded reference (times relative to t0)."""
    from ..control import TrajectoryPoints, build_controller
    from .replay_controller import replay_controller_config

    if recording.reference_position is None or recording.reference_t_ns is None or not len(recording.reference_t_ns):
        raise DataError(f"{source}: no reference in the bag; closed-loop replay needs the recorded reference topic")
    t0 = int(t_ns[0])
    controller_config = replay_controller_config(recording, names, arm, controller_config, settings, source, notes)
    controller = build_controller(controller_config, arm.description)
    notes.append(f"controller: effort limits {controller.effort_limit.tolist()} (arm: {arm.effort_limit.tolist()})")
    ref_t = ns_to_s(np.asarray(recording.reference_t_ns, np.int64) - t0)
    keep = increasing_rows(np.asarray(recording.reference_t_ns, np.int64))  # zero, repeated or older stamps
    pos = np.asarray(recording.reference_position, float)[:, cols][keep]
    vel, acc = recording.reference_velocity, recording.reference_acceleration
    vel = None if vel is None or not np.all(np.isfinite(vel)) else np.asarray(vel, float)[:, cols][keep]
    acc = None if vel is None or acc is None or not np.all(np.isfinite(acc)) else np.asarray(acc, float)[:, cols][keep]
    controller.set_reference(TrajectoryPoints(names, ref_t[keep], pos, vel, acc))
    notes.append(f"reference: {int(keep.sum())} recorded points (velocity {'yes' if vel is not None else 'no'}, "
                 f"acceleration {'yes' if acc is not None else 'no'})")
    return controller, ns_to_s(t_ns - t0)


def replay_bag(path: str | Path, *, closed_loop: bool = False, **kwargs: Any) -> ReplayResult:
    """Read a bag with :func:`deadzone_id_ros.data.bag.read_recording` and :func:`replay` it.

    Raises:
        FileNotFoundError: no such bag.
        DataError: unreadable bag, joints not the URDF's, or missing topics (see :func:`replay`).
    """
    from ..data.bag import read_recording

    return replay(read_recording(path), closed_loop=closed_loop, source=str(path), **kwargs)


def write_report(result: ReplayResult, out_dir: str | Path) -> dict[str, Path]:
    """Write ``report.json`` (summary), ``report.md`` (a table) and plots (matplotlib, Agg) into ``out_dir``.

    Plots: ``position.png`` (recorded and simulated q per joint, and their difference) and ``effort.png``.

    Returns:
        name -> path of every file written.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    summary = result.summary()
    files = {"json": out / "report.json", "markdown": out / "report.md"}
    files["json"].write_text(json.dumps(summary, indent=2) + "\n")
    lines = [
        f"# Replay of {result.source} ({result.mode.replace('_', ' ')})", "",
        f"{summary['samples']} samples, {summary['duration_s']:.3f} s.", "",
        "| joint | RMSE q [rad] | max abs q error [rad] | RMSE dq [rad/s] | RMSE effort [N·m] |",
        "|---|---|---|---|---|",
    ]
    for i, name in enumerate(result.joint_names):
        lines.append(f"| {name} | {result.rmse_q[i]:.3e} | {result.max_abs_q_error[i]:.3e} | "
                     f"{result.rmse_dq[i]:.3e} | {result.rmse_effort[i]:.3e} |")
    meaning = replay_meaning(result.mode, result.joint_names, result.max_abs_q_error, float(result.t[-1] - result.t[0]))
    lines += ["", meaning, "", "Notes:", *[f"- {n}" for n in result.notes], ""]
    files["markdown"].write_text("\n".join(lines))

    j = len(result.joint_names)
    for key, rec, sim, unit in (
        ("position", result.recorded_q, result.simulated_q, "rad"),
        ("effort", result.recorded_effort, result.simulated_effort, "N·m"),
    ):
        fig, axes = plt.subplots(j, 2, figsize=(11, 2.4 * j), sharex=True, squeeze=False)
        for i, name in enumerate(result.joint_names):
            axes[i, 0].plot(result.t, rec[:, i], label="recorded", lw=1.2)
            axes[i, 0].plot(result.t, sim[:, i], label="simulated", lw=0.9, ls="--")
            axes[i, 0].set_ylabel(f"{name} [{unit}]")
            axes[i, 1].plot(result.t, sim[:, i] - rec[:, i], lw=0.9, color="tab:red")
            axes[i, 1].set_ylabel(f"difference [{unit}]")
        axes[0, 0].legend(loc="best", fontsize=8)
        axes[-1, 0].set_xlabel("time [s]")
        axes[-1, 1].set_xlabel("time [s]")
        fig.suptitle(f"{result.mode.replace('_', ' ')} replay: {key}")
        fig.tight_layout()
        files[key] = out / f"{key}.png"
        fig.savefig(files[key], dpi=90)
        plt.close(fig)
    return files

