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

import numpy as np

from .. import __version__
from ..data.types import Recording
from ..stamps import NS_PER_S, ns_to_s
from .arm import SimArm
from .config import SimArmConfig

__all__ = ["simulate"]


def simulate(
    duration: float,
    seed: int,
    sim_config: SimArmConfig | None = None,
    controller_config=None,
    rate_hz: float = 1000.0,
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
        sim_config: physics (default: ``SimArmConfig()``, the values of config/sim_arm.yaml).
        controller_config: a :class:`~deadzone_id_ros.control.ControllerConfig` (default: mode pd_dob with the rbd
            model for the static torque); its joint names must be the arm's.
        rate_hz: control rate [Hz]; ``1/rate_hz`` must be a whole number of physics steps.
        progress: show a tqdm progress bar.
        excitation_config: an :class:`~deadzone_id_ros.control.ExcitationConfig` (default: its defaults); its
            ``duration`` is replaced by ``duration`` and its joint names must be the arm's.

    Returns:
        a Recording: N = duration * rate_hz samples of /joint_states, commands and reference (same stamps, in ns
        from 0), metadata with robot, seed, configs and the true (noise-free) position/velocity statistics.

    Raises:
        ValueError: duration or rate_hz not positive, or the control period not a whole number of physics steps.
        SafetyError: the controller's joints differ from the arm's.
        ConfigError: invalid configuration values.
    """
    from ..control import (
        ControllerConfig,
        ExcitationConfig,
        FeedforwardController,
        TrajectorySampler,
        generate_excitation,
    )
    from ..errors import SafetyError
    from ..models.runtime import load_model

    if not (isinstance(duration, (int, float)) and math.isfinite(duration) and duration > 0):
        raise ValueError(f"duration = {duration!r} must be a finite number > 0 s")
    if not (isinstance(rate_hz, (int, float)) and math.isfinite(rate_hz) and rate_hz > 0):
        raise ValueError(f"rate_hz = {rate_hz!r} must be a finite number > 0 Hz")
    sim_config = dataclasses.replace(sim_config or SimArmConfig(), seed=int(seed))
    substeps_f = 1.0 / (rate_hz * sim_config.timestep)
    substeps = int(round(substeps_f))
    if substeps < 1 or abs(substeps - substeps_f) > 1e-6:
        raise ValueError(
            f"rate_hz = {rate_hz} gives a control period of {substeps_f:g} physics steps of {sim_config.timestep} s; "
            "it must be a whole number >= 1"
        )
    ctrl_config = controller_config or ControllerConfig(
        joint_names=sim_config.joint_names, urdf_path=sim_config.urdf_path
    )
    if tuple(ctrl_config.joint_names) != tuple(sim_config.joint_names):
        raise SafetyError(
            f"controller joints {list(ctrl_config.joint_names)} differ from the simulated arm's "
            f"{list(sim_config.joint_names)}"
        )
    exc_config = excitation_config or ExcitationConfig(
        joint_names=sim_config.joint_names, urdf_path=sim_config.urdf_path
    )
    exc_config = dataclasses.replace(exc_config, duration=float(duration), seed=int(seed))
    if tuple(exc_config.joint_names) != tuple(sim_config.joint_names):
        raise SafetyError(
            f"excitation joints {list(exc_config.joint_names)} differ from the simulated arm's "
            f"{list(sim_config.joint_names)}"
        )

    arm = SimArm(sim_config)
    controller = FeedforwardController(ctrl_config, load_model(ctrl_config), arm.description)
    points = generate_excitation(exc_config, start=sim_config.initial_position)
    controller.set_reference(points)
    sampler: TrajectorySampler = controller.reference  # type: ignore[assignment]
    q0, _, _ = sampler.sample(0.0)
    arm.reset(q0)

    n = int(round(duration * rate_hz))
    j = arm.n_joints
    period_ns = int(round(NS_PER_S / rate_hz))
    t_ns = np.arange(n, dtype=np.int64) * period_ns
    pos, vel, eff, cmd = (np.empty((n, j)) for _ in range(4))
    ref_q, ref_dq, ref_ddq = (np.empty((n, j)) for _ in range(3))
    true_dq = np.empty((n, j))
    iterator = range(n)
    if progress:
        from tqdm import tqdm

        iterator = tqdm(iterator, desc="simulate", unit="tick", unit_scale=True, mininterval=0.5)
    wall0 = time.perf_counter()
    for k in iterator:
        meas = arm.measure()
        t = ns_to_s(k * period_ns)
        tau = controller.step(t, meas.q, meas.dq)
        pos[k], vel[k], eff[k], cmd[k] = meas.q, meas.dq, meas.effort, tau
        ref_q[k], ref_dq[k], ref_ddq[k] = controller.desired
        true_dq[k] = arm.dq
        arm.step(tau, substeps)
    wall = time.perf_counter() - wall0

    stuck = np.abs(true_dq) < 1e-3
    err = ref_q - pos
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
        "stats": {
            "stuck_fraction_per_joint": stuck.mean(axis=0).tolist(),
            "any_joint_stuck_fraction": float(stuck.any(axis=1).mean()),
            "tracking_rmse_rad": np.sqrt((err**2).mean(axis=0)).tolist(),
            "clamp_events": controller.status.clamp_events.tolist(),
            "rate_limit_events": controller.status.rate_limit_events.tolist(),
            "real_time_factor": float(duration / wall) if wall > 0 else math.inf,
            "payload_mass_kg": arm.payload_mass,
        },
    }
    return Recording(
        joint_names=tuple(arm.joint_names),
        state_t_ns=t_ns,
        position=pos,
        velocity=vel,
        effort=eff,
        command_t_ns=t_ns.copy(),
        command=cmd,
        reference_t_ns=t_ns.copy(),
        reference_position=ref_q,
        reference_velocity=ref_dq,
        reference_acceleration=ref_ddq,
        metadata=metadata,
    )
