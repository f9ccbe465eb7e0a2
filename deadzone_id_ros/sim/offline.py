"""Offline closed-loop simulation (core, no ROS): the simulated arm tracking an excitation with the controller.

The same objects the nodes use (:class:`~deadzone_id_ros.sim.SimArm`,
:class:`~deadzone_id_ros.control.FeedforwardController`, :func:`~deadzone_id_ros.control.generate_excitation`)
run in one loop without DDS, many times faster than real time. The result is what a recorder would have written:
/joint_states samples (quantized q, noisy dq, effort = applied torque), the commands and the reference samples,
with integer-nanosecond stamps.
"""

from __future__ import annotations

import dataclasses
import math
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypedDict

import numpy as np

from .. import __version__
from ..config import check_positive
from ..data.types import Recording
from ..stamps import NS_PER_S, ns_to_s
from .arm import SimArm
from .config import SimArmConfig

if TYPE_CHECKING:
    from collections.abc import Iterable

    from ..control import ControllerConfig, ExcitationConfig, FeedforwardController

__all__ = ["simulate"]


def simulate(
    duration: float,
    seed: int,
    sim_config: SimArmConfig | None = None,
    controller_config=None,
    rate_hz: float | None = None,
    progress: bool = False,
    *,
    excitation_config=None,
) -> Recording:
    """Simulate the arm tracking a seeded excitation trajectory with the feedforward controller.

    Per control tick (period ``1/rate_hz``, an integer number of physics steps): measure (quantized q, noisy dq,
    applied torque), compute the command from the measurement, apply it for the tick (zero-order hold). The arm
    starts at rest at the excitation's start (``sim_config.initial_position``).

    Args:
        duration: simulated time [s] (> 0).
        seed: seeds the excitation trajectory and the simulator noise (it replaces ``sim_config.seed`` and
            ``excitation_config.seed``), so one integer reproduces the run.
        sim_config: physics (default: the bundled arm's profile,
            :func:`deadzone_id_ros.sim.robot_configs.bundled_sim_config`).
        controller_config: a :class:`~deadzone_id_ros.control.ControllerConfig` (default: mode pd_dob with the rbd
            model for the static torque); its joint names must be the arm's.
        rate_hz: control and /joint_states rate [Hz]; ``1/rate_hz`` must be a whole number of physics steps. None
            (the default): the controller config's ``control_rate`` (a robot profile's: the rate its hardware
            delivers states).
        progress: show a tqdm progress bar.
        excitation_config: an :class:`~deadzone_id_ros.control.ExcitationConfig` (default: its defaults); its
            ``duration`` is replaced by ``duration`` and its joint names must be the arm's.

    Returns:
        a Recording: N = duration * rate_hz samples of /joint_states, commands and reference (same stamps, in ns
        from 0), metadata with robot, seed, configs and the true (noise-free) position/velocity statistics.

    Raises:
        ValueError: duration or rate_hz not a finite number > 0 (``"duration = 0 must be a positive number"``), or
            the control period not a whole number of physics steps.
        SafetyError: the controller's joints differ from the arm's.
        ConfigError: invalid configuration values.
    """
    from ..control import TrajectorySampler, build_controller, generate_excitation

    check_positive("duration", duration)
    if rate_hz is not None and not (isinstance(rate_hz, (int, float)) and math.isfinite(rate_hz) and rate_hz > 0):
        raise ValueError(f"rate_hz = {rate_hz!r} must be a finite number > 0 Hz")
    from .robot_configs import bundled_sim_config

    sim_config = dataclasses.replace(sim_config or bundled_sim_config(), seed=int(seed))
    ctrl_config, exc_config = _run_configs(sim_config, duration, seed, controller_config, excitation_config)
    rate_hz = ctrl_config.control_rate if rate_hz is None else rate_hz
    substeps = _substeps(rate_hz, sim_config.timestep)

    arm = SimArm(sim_config)
    controller = build_controller(ctrl_config, arm.description)
    points = generate_excitation(exc_config, start=sim_config.initial_position)
    controller.set_reference(points)
    sampler: TrajectorySampler = controller.reference  # type: ignore[assignment]
    q0, _, _ = sampler.sample(0.0)
    arm.reset(q0)

    n = int(round(duration * rate_hz))
    period_ns = int(round(NS_PER_S / rate_hz))
    t_ns = np.arange(n, dtype=np.int64) * period_ns
    trace = _Trace.empty(n, arm.n_joints)
    wall = _run_ticks(arm, controller, trace, period_ns, substeps, progress)
    metadata = {
        "robot": arm.description.urdf_path.stem,
        "urdf": str(arm.description.urdf_path),
        "generator": "deadzone_id_ros.sim.offline.simulate",
        "package_version": __version__,
        "seed": int(seed),
        "duration_s": float(duration),
        "rate_hz": float(rate_hz),
        "sim_config": dataclasses.asdict(sim_config),
        "controller_config": dataclasses.asdict(ctrl_config),
        "excitation_config": dataclasses.asdict(exc_config),
        "stats": _run_stats(trace, controller, arm, duration, wall),
    }
    return trace.recording(tuple(arm.joint_names), t_ns, metadata)


def _substeps(rate_hz: float, timestep: float) -> int:
    """Physics steps of ``timestep`` [s] per control period ``1/rate_hz``.

    Raises:
        ValueError: the control period is not a whole number >= 1 of physics steps.
    """
    substeps_f = 1.0 / (rate_hz * timestep)
    substeps = int(round(substeps_f))
    if substeps < 1 or abs(substeps - substeps_f) > 1e-6:
        raise ValueError(
            f"rate_hz = {rate_hz} gives a control period of {substeps_f:g} physics steps of {timestep} s; "
            "it must be a whole number >= 1"
        )
    return substeps


def _run_configs(
    sim_config: SimArmConfig,
    duration: float,
    seed: int,
    controller_config: ControllerConfig | None,
    excitation_config: ExcitationConfig | None,
) -> tuple[ControllerConfig, ExcitationConfig]:
    """(controller config, excitation config) of a run: the defaults for the arm where None (with the arm's URDF,
    locked joints and effort limit, :func:`.robot_configs.arm_values`); the excitation gets ``duration`` [s] and
    ``seed``.

    Raises:
        SafetyError: the controller's or the excitation's joints differ from the arm's.
    """
    from ..control.robot_configs import controller_config as profile_controller_config
    from ..control.robot_configs import excitation_config as profile_excitation_config
    from ..errors import SafetyError
    from ..robot.defaults import robot_for
    from .robot_configs import arm_values

    if controller_config is None or excitation_config is None:  # the sim's robot: its profile, or URDF-derived
        robot = robot_for(sim_config.urdf_path, sim_config.joint_names, sim_config.initial_position)
    ctrl_config = controller_config or profile_controller_config(robot, **arm_values(sim_config))
    if tuple(ctrl_config.joint_names) != tuple(sim_config.joint_names):
        raise SafetyError(
            f"controller joints {list(ctrl_config.joint_names)} differ from the simulated arm's "
            f"{list(sim_config.joint_names)}"
        )
    exc_config = excitation_config or profile_excitation_config(robot, **arm_values(sim_config))
    exc_config = dataclasses.replace(exc_config, duration=float(duration), seed=int(seed))
    if tuple(exc_config.joint_names) != tuple(sim_config.joint_names):
        raise SafetyError(
            f"excitation joints {list(exc_config.joint_names)} differ from the simulated arm's "
            f"{list(sim_config.joint_names)}"
        )
    return ctrl_config, exc_config


class RunStats(TypedDict):
    """The ``stats`` of a simulated run's metadata (:func:`_run_stats`): per joint the stuck fraction, tracking RMSE
    [rad], DOB mean |estimate| [N·m], clamp and rate-limit events; the share of samples with any joint stuck, the
    real-time factor, the payload [kg], the latched fault ("" when none) and its control time [s] (None)."""

    stuck_fraction_per_joint: list[float]
    any_joint_stuck_fraction: float
    tracking_rmse_rad: list[float]
    dob_mean_abs: list[float]
    clamp_events: list[int]
    rate_limit_events: list[int]
    real_time_factor: float
    payload_mass_kg: float
    fault: str
    fault_time_s: float | None


@dataclass
class _Trace:
    """Per-tick logs of one run, (N, J) each: measured q [rad], dq [rad/s], applied effort [N·m], command [N·m],
    reference q, dq, ddq, the true (noise-free) velocity [rad/s] and the DOB's estimate in the command [N·m]."""

    pos: np.ndarray
    vel: np.ndarray
    eff: np.ndarray
    cmd: np.ndarray
    ref_q: np.ndarray
    ref_dq: np.ndarray
    ref_ddq: np.ndarray
    true_dq: np.ndarray
    dob: np.ndarray

    @classmethod
    def empty(cls, n: int, j: int) -> _Trace:
        """Uninitialized (n, j) arrays, filled by :func:`_run_ticks`."""
        return cls(*(np.empty((n, j)) for _ in range(9)))

    def recording(self, joint_names: tuple[str, ...], t_ns: np.ndarray, metadata: dict[str, object]) -> Recording:
        """The logs as a Recording: states, commands and reference all stamped ``t_ns`` (N,) [ns]."""
        return Recording(
            joint_names=joint_names,
            state_t_ns=t_ns,
            position=self.pos,
            velocity=self.vel,
            effort=self.eff,
            command_t_ns=t_ns.copy(),
            command=self.cmd,
            reference_t_ns=t_ns.copy(),
            reference_position=self.ref_q,
            reference_velocity=self.ref_dq,
            reference_acceleration=self.ref_ddq,
            metadata=metadata,
        )


def _run_ticks(
    arm: SimArm, controller: FeedforwardController, trace: _Trace, period_ns: int, substeps: int, progress: bool
) -> float:
    """The control loop: per tick measure, command, log into ``trace``, apply for ``substeps`` physics steps.

    Returns:
        the loop's wall time [s].
    """
    iterator: Iterable[int] = range(len(trace.pos))
    if progress:  # a bar on a terminal, a line per tenth in a log file
        from ..progress_lines import progress_iter

        iterator = progress_iter(iterator, "simulate", "tick")
    wall0 = time.perf_counter()
    for k in iterator:
        meas = arm.measure()
        t = ns_to_s(k * period_ns)
        tau = controller.step(t, meas.q, meas.dq)
        trace.pos[k], trace.vel[k], trace.eff[k], trace.cmd[k] = meas.q, meas.dq, meas.effort, tau
        trace.ref_q[k], trace.ref_dq[k], trace.ref_ddq[k] = controller.desired
        trace.true_dq[k] = arm.dq
        trace.dob[k] = controller.parts.dob
        arm.step(tau, substeps)
    return time.perf_counter() - wall0


def _run_stats(
    trace: _Trace, controller: FeedforwardController, arm: SimArm, duration: float, wall: float
) -> RunStats:
    """The ``stats`` of the metadata: stuck fractions (true |dq| < 1e-3 rad/s), tracking RMSE [rad], limit events,
    the DOB's mean |estimate| per joint [N·m] (``dob_mean_abs``: how much the observer corrects the feedforward; 0
    without DOB), real-time factor, payload [kg], and the controller's latched fault: ``fault`` (its reason, "" when
    none) and ``fault_time_s`` (its control time [s], None when none)."""
    stuck = np.abs(trace.true_dq) < 1e-3
    err = trace.ref_q - trace.pos
    return RunStats(
        stuck_fraction_per_joint=stuck.mean(axis=0).tolist(),
        any_joint_stuck_fraction=float(stuck.any(axis=1).mean()),
        tracking_rmse_rad=np.sqrt((err**2).mean(axis=0)).tolist(),
        dob_mean_abs=np.abs(trace.dob).mean(axis=0).tolist(),
        clamp_events=controller.status.clamp_events.tolist(),
        rate_limit_events=controller.status.rate_limit_events.tolist(),
        real_time_factor=float(duration / wall) if wall > 0 else math.inf,
        payload_mass_kg=arm.payload_mass,
        fault=controller.safety.fault,
        fault_time_s=float(controller.safety.fault_time) if controller.safety.tripped else None)
