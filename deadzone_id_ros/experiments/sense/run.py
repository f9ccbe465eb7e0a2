"""``deadzone-id sense``: every force estimator against the simulator's true external torque (core, no ROS).

The controller (ctc_dob with the model under test, as the nodes run it) tracks held-out excitation references on
the simulated arm of a robot profile, in process (:class:`~deadzone_id_ros.sim.SimArm`, 1 kHz). Estimators, fed the
same samples (q, dq, effort):

- ``residual_band``: the direct residual with the model, dead-zone aware (interval per stuck joint).
- ``residual``: the same estimate without the band (every estimate taken as exact).
- ``momentum``: the momentum observer on the URDF's nominal rigid body with its friction (the textbook baseline).
- ``dob``: the disturbance observer (the controller's Jn and cutoff, h = URDF rigid body).

Calibration: one free-motion run on its own seed gives each estimator's thresholds (:func:`calibrate_thresholds`:
``margin`` times the ``quantile`` of |estimate| - half width) and the band of ``residual_band``
(:func:`calibrate_band`, at least the URDF's static friction). Evaluation, per seed: free motion with a push every
``push_period`` s at the end-effector point (a step of ``push_duration``, magnitudes cycling through the list, a
random direction perpendicular to the last link's z axis); contact onsets outside the push windows (and ``settle`` s
after) are false contacts. With ``free_duration`` > 0, a free-motion run without pushes follows (its own seed,
``FREE_SEED_OFFSET`` + the seed, a reference the push run did not follow): every contact onset there is a false
contact too, which gives long stretches of free motion (stops and reversals included) for the false-alarm count
without running the push, hold and collision scenarios longer. Then a hold: the reference stays at home; contact
onsets during its first half are false alarms during a hold; its second half is a quasi-static ramp push (0 -> 1 N
over the half).
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from ...data.effort_units import PRESENT_LOAD
from ...models.base import InverseDynamicsModel
from ...sensing import (
    DobEstimator,
    ExternalTorqueEstimator,
    ForceSensor,
    MomentumObserver,
    ResidualEstimator,
    StaticFrictionBand,
    ZohLowPass,
)
from ...sensing.contact import ContactDetector
from ...sensing.effort import EffortReading
from ...sensing.sensor import nominal_rigid_body
from ...sim.external_forces import ExternalForces, ObstacleConfig, PushConfig
from .calibration import calibrate
from .collision import collision_onset, place_obstacle
from .metrics import flagged_force, onsets, peak_speed, rmse_where, smallest_detected
from .results import EstimatorFigures, FalseContact, PushFigure, SenseResults
from .settings import ESTIMATORS, FREE_SEED_OFFSET, SenseSettings

if TYPE_CHECKING:
    from ...control import ControllerConfig, ExcitationConfig
    from ...sim.config import SimArmConfig

__all__ = ["ESTIMATORS", "FREE_SEED_OFFSET", "SenseSettings", "effort_reading", "run_sense"]

@dataclass
class _Setup:
    """The configs and models of one robot."""

    name: str
    sim: SimArmConfig
    ctrl: ControllerConfig
    exc: ExcitationConfig
    model: InverseDynamicsModel
    model_label: str
    urdf: str
    link: str
    point: tuple[float, ...]
    progress: bool = True


@dataclass
class _Trace:
    """Per-tick logs of one run: t (N,), dq, truth, motor torque tau (N, J), and per estimator estimate, half width
    (N, J), contact (N,)."""

    t: np.ndarray
    dq: np.ndarray
    truth: np.ndarray
    tau: np.ndarray
    est: dict[str, np.ndarray] = field(default_factory=dict)
    half: dict[str, np.ndarray] = field(default_factory=dict)
    contact: dict[str, np.ndarray] = field(default_factory=dict)


def _setup(settings: SenseSettings) -> _Setup:
    from ...models.runtime import load_model
    from ...resources import default_urdf
    from ...robot_configs import bundled_robot, controller_config, excitation_config, load_robot, sim_config

    robot = load_robot(settings.robot) if settings.robot else bundled_robot()
    sim = sim_config(robot)
    urdf = sim.urdf_path or str(default_urdf())
    kind = "learned" if settings.model_path else "rbd"
    ctrl = controller_config(robot, mode="ctc_dob", model=kind, model_path=settings.model_path)
    exc = excitation_config(robot)
    if not settings.model_path:
        ctrl = dataclasses.replace(ctrl, model_friction=True)
    model = load_model(ctrl)  # the nominal rigid body: the URDF's plus the profile's armature and friction
    label = (f"learned: {settings.model_path}" if settings.model_path
             else "URDF rigid body + profile armature + friction")
    link = _last_link(urdf, sim.joint_names[-1])
    point = tuple(settings.point) if settings.point is not None else tuple(sim.payload_position)
    return _Setup(robot.profile.name, sim, ctrl, exc, model, label, urdf, link, point)


def _last_link(urdf: str, joint: str) -> str:
    """The child link of ``joint`` in ``urdf``."""
    import xml.etree.ElementTree as ET

    from ...robot.urdf_text import read_urdf

    for j in ET.fromstring(read_urdf(urdf)).iter("joint"):
        if j.get("name") == joint:
            child = j.find("child")
            if child is not None and child.get("link"):
                return str(child.get("link"))
    raise ValueError(f"{urdf}: joint {joint!r} has no child link")


def _estimators(s: _Setup, cutoff: float) -> dict[str, Callable[[], ExternalTorqueEstimator]]:
    """The baselines on the controller's nominal rigid body (the URDF's plus the profile's armature and friction)."""
    n = len(s.sim.joint_names)
    g = np.full(n, cutoff)
    return {
        "residual": lambda: ResidualEstimator(s.model, g),
        "momentum": lambda: MomentumObserver(nominal_rigid_body(s.urdf, s.sim.joint_names, s.ctrl,
                                                                s.sim.locked_positions), g),
        "dob": lambda: DobEstimator(nominal_rigid_body(s.urdf, s.sim.joint_names, s.ctrl, s.sim.locked_positions),
                                    s.ctrl.nominal_inertia, s.ctrl.dob_cutoff),
    }


def _run(s: _Setup, seed: int, duration: float, sensors: dict[str, ForceSensor], pushes: Sequence[PushConfig],
         hold: bool, desc: str, obstacle: ObstacleConfig | None = None) -> _Trace:
    """One in-process closed-loop run; every sensor sees every sample."""
    from tqdm import tqdm

    from ...control import TrajectoryPoints, build_controller, generate_excitation
    from ...sim.arm import SimArm

    sim = dataclasses.replace(s.sim, seed=int(seed))
    ext = ExternalForces(pushes=list(pushes), obstacle=obstacle)
    arm = SimArm(sim, external=ext)
    controller = build_controller(s.ctrl, arm.description)
    names = tuple(sim.joint_names)
    home = np.asarray(sim.initial_position, float)
    if hold:
        controller.set_reference(TrajectoryPoints(names, np.array([0.0, duration + 1.0]), np.stack([home, home])))
    else:
        exc = dataclasses.replace(s.exc, duration=float(duration) + 1.0, seed=int(seed))
        controller.set_reference(generate_excitation(exc, start=sim.initial_position))
    arm.reset(controller.reference.sample(0.0)[0])  # type: ignore[union-attr]
    n, j = int(round(duration * 1000.0)), len(names)
    tr = _Trace(np.arange(n) / 1000.0, np.zeros((n, j)), np.zeros((n, j)), np.zeros((n, j)))
    effort = next(iter(sensors.values())).effort if sensors else None
    for name in sensors:
        sensors[name].reset()
        tr.est[name], tr.half[name], tr.contact[name] = np.zeros((n, j)), np.zeros((n, j)), np.zeros(n, bool)
    prev = np.zeros(j)
    for k in tqdm(range(n), desc=desc, unit="tick", unit_scale=True, mininterval=1.0, leave=False,
                  disable=not s.progress):
        m = arm.measure()
        tau = controller.step(k / 1000.0, m.q, m.dq)
        tr.dq[k], tr.truth[k] = m.dq, prev
        tr.tau[k] = effort.to_torque(m.effort, m.dq) if effort is not None else m.effort
        for name, sensor in sensors.items():
            smp = sensor.update_effort(m.t, m.q, m.dq, m.effort)
            tr.est[name][k], tr.half[name][k] = smp.tau_ext, smp.half_width
            tr.contact[name][k] = smp.contact.in_contact if smp.contact is not None else False
        arm.step(tau)
        prev = ext.true_torque
    return tr


class _Echo(ExternalTorqueEstimator):
    """Another estimator's latest estimate, unchanged (that estimator is updated first, on the same sample)."""

    def __init__(self, source: ExternalTorqueEstimator) -> None:
        super().__init__(source.joint_names, np.full(len(source.joint_names), math.inf))
        self.source = source
        self.kind = source.kind

    def reset(self) -> None:
        """Nothing of its own to forget."""

    def update(self, t: float, q: np.ndarray, dq: np.ndarray, tau: np.ndarray) -> np.ndarray:
        """The source's estimate (J,) [N·m]."""
        return self.source.estimate

    def _raw(self, dt: float, q0: np.ndarray, dq0: np.ndarray, q1: np.ndarray, dq1: np.ndarray,
             tau: np.ndarray) -> np.ndarray:
        return self.source.estimate


def effort_reading(sim: SimArmConfig, ctrl: ControllerConfig) -> EffortReading:
    """What the simulated arm's effort is (its ``effort_readout``): torque, or a servo's Present_Load with the
    profile's effort limit as stall torque and the simulator's no-load speed."""
    if sim.effort_readout != "present_load":
        return EffortReading()
    return EffortReading(PRESENT_LOAD, tuple(sim.effort_limit or ctrl.effort_limit), tuple(sim.no_load_speed))


def _push_schedule(s: _Setup, settings: SenseSettings, seed: int) -> list[PushConfig]:
    rng = np.random.default_rng([seed, 34])
    out = []
    starts = np.arange(1.0, settings.duration - settings.push_period + 1e-9, settings.push_period)
    for i, start in enumerate(starts):
        a = rng.uniform(0, 2 * np.pi)
        out.append(PushConfig(link=s.link, point=s.point, direction=(math.cos(a), math.sin(a), 0.0), local=True,
                              magnitude=settings.push_magnitudes[i % len(settings.push_magnitudes)],
                              start=float(start), duration=settings.push_duration))
    return out


def _false_contacts(tr: _Trace, name: str, threshold: np.ndarray, counted: np.ndarray, seed: int, scenario: str,
                    joint_names: Sequence[str]) -> list[FalseContact]:
    """The contact onsets of estimator ``name`` in ``tr`` where ``counted`` (N,) is True, with the joints above their
    ``threshold`` (J,) [N·m], the velocity and excess / threshold at each."""
    out = []
    for k in onsets(tr.contact[name]):
        if not counted[k]:
            continue
        ratio = (np.abs(tr.est[name][k]) - tr.half[name][k]) / threshold
        out.append(FalseContact(int(seed), scenario, float(tr.t[k]), [n for n, r in zip(joint_names, ratio) if r > 1],
                                [round(float(v), 4) for v in tr.dq[k]], [round(float(v), 3) for v in ratio]))
    return out


def run_sense(settings: SenseSettings, progress: bool = True) -> tuple[SenseResults, dict[str, _Trace]]:
    """Run every scenario for every estimator; return the results and, for the plot, the first seed's traces.
    ``progress``: a progress bar per simulated run (on stderr).

    Raises:
        ValueError: bad settings.  FileNotFoundError, ConfigError, ArtifactError: the robot or model cannot be loaded.
    """
    wall0 = time.perf_counter()
    s = dataclasses.replace(_setup(settings), progress=progress)
    names = tuple(s.sim.joint_names)
    j = len(names)
    make = _estimators(s, settings.cutoff)
    # calibration: free motion on its own seed, no detection; the model's raw residual for the friction fit
    effort = effort_reading(s.sim, s.ctrl)
    base = {"model": make["residual"](), "raw": ResidualEstimator(s.model, np.full(j, math.inf)),
            "momentum": make["momentum"](), "dob": make["dob"]()}
    calib_sensors = {k: ForceSensor(e, StaticFrictionBand.none(names), effort=effort) for k, e in base.items()}
    cal = _run(s, settings.calibration_seed, settings.calibration_duration, calib_sensors, (), False, "calibrate")
    from ...robot import load_robot_description

    urdf_fs = load_robot_description(s.urdf, names).friction
    vthr = np.asarray(getattr(getattr(s.model, "dead_zone", None), "threshold", 0.1 * cal.dq.std(axis=0)), float)
    calib = calibrate({k: cal.est[k] for k in ("model", "momentum", "dob")}, cal.est["raw"], cal.dq, cal.tau, vthr,
                      names, urdf_fs, settings.cutoff, 1e-3, settings.quantile, settings.margin)
    bands, thresholds = calib.bands, calib.thresholds
    acc: dict[str, dict[str, list]] = {k: {"pushes": [], "err": [], "push_err": [], "moving": [], "cover": [],
                                           "fc": [], "fc_events": [], "hold": [], "hold_force": [], "hold_cover": [],
                                           "collision": []}
                                       for k in ESTIMATORS}
    free_s = 0.0
    peak = np.zeros(j)  # the evaluation runs' largest |dq| per joint [rad/s]
    lag_err: list[np.ndarray] = []
    lag_moving: list[np.ndarray] = []
    first: dict[str, _Trace] = {}
    for seed in settings.seeds:
        def sensors() -> dict[str, ForceSensor]:
            # one estimate, read with and without the band (sensors run in this order)
            shared = ResidualEstimator(s.model, np.full(j, settings.cutoff), friction=calib.friction)
            est = {"residual_band": shared, "residual": _Echo(shared), "model": make["residual"](),
                   "momentum": make["momentum"](), "dob": make["dob"]()}
            return {k: ForceSensor(est[k], bands[k], ContactDetector(thresholds[k], confirm=settings.confirm),
                                   effort=effort)
                    for k in ESTIMATORS}

        pushes = _push_schedule(s, settings, seed)
        tr = _run(s, seed, settings.duration, sensors(), pushes, False, f"pushes seed {seed}")
        peak = peak_speed(tr.dq, peak)
        in_push = np.zeros(len(tr.t), bool)
        window = np.zeros(len(tr.t), bool)
        for p in pushes:
            a, b = int(round(p.start * 1000)), int(round((p.start + p.duration) * 1000))
            in_push[a:b] = True
            window[a:b + int(settings.settle * 1000)] = True
        free_s += float((~window).sum()) / 1000.0
        for k in ESTIMATORS:
            flag = tr.contact[k]
            acc[k]["fc"].append(int(np.count_nonzero(~window[onsets(flag)])))
            acc[k]["fc_events"] += _false_contacts(tr, k, thresholds[k], ~window, seed, "pushes", names)
            for p in pushes:
                a, b = int(round(p.start * 1000)), int(round((p.start + p.duration) * 1000))
                hit = np.flatnonzero(flag[a:b])
                acc[k]["pushes"].append(PushFigure(int(seed), p.start, p.magnitude, bool(hit.size),
                                                   float(hit[0]) if hit.size else math.nan))
            acc[k]["err"].append(tr.est[k][in_push] - tr.truth[in_push])
            acc[k]["push_err"].append(acc[k]["err"][-1])
            acc[k]["moving"].append(np.abs(tr.dq[in_push]) > calib.velocity_threshold)
            stuck = tr.half[k][in_push] > 0
            inside = np.abs(tr.est[k][in_push] - tr.truth[in_push]) <= tr.half[k][in_push]
            acc[k]["cover"].append((int(np.count_nonzero(inside & stuck)), int(np.count_nonzero(stuck))))
        lpf = ZohLowPass(np.full(j, settings.cutoff))
        lagged = np.array([lpf.update(1e-3, x).copy() for x in tr.truth])
        lag_err.append(lagged[in_push] - tr.truth[in_push])
        lag_moving.append(np.abs(tr.dq[in_push]) > calib.velocity_threshold)
        if settings.free_duration > 0:
            free = _run(s, FREE_SEED_OFFSET + seed, settings.free_duration, sensors(), (), False,
                        f"free motion seed {FREE_SEED_OFFSET + seed}")
            free_s += settings.free_duration
            peak = peak_speed(free.dq, peak)
            everywhere = np.ones(len(free.t), bool)
            for k in ESTIMATORS:
                acc[k]["fc"].append(len(onsets(free.contact[k])))
                acc[k]["fc_events"] += _false_contacts(free, k, thresholds[k], everywhere, FREE_SEED_OFFSET + seed,
                                                       "free", names)
        hold_pushes = [PushConfig(link=s.link, point=s.point, direction=(1.0, 0.0, 0.0), local=True, magnitude=1.0,
                                  shape="ramp", start=settings.hold_duration / 2, duration=settings.hold_duration,
                                  rise_time=settings.hold_duration / 2)]
        hold = _run(s, seed, settings.hold_duration, sensors(), hold_pushes, True, f"hold seed {seed}")
        half = len(hold.t) // 2
        peak = peak_speed(hold.dq, peak)
        for k in ESTIMATORS:
            acc[k]["hold"].append(len(onsets(hold.contact[k][:half])))
            # the ramp push of the second half, the arm held by its controller (inside the dead zone): the force
            # applied when a contact is first flagged, and whether the stuck joints' interval holds the truth
            ramp = hold_pushes[0]
            acc[k]["hold_force"].append(flagged_force(hold.contact[k], hold.t, ramp.start, ramp.force))
            stuck = hold.half[k][half:] > 0
            inside = np.abs(hold.est[k][half:] - hold.truth[half:]) <= hold.half[k][half:]
            acc[k]["hold_cover"].append((int(np.count_nonzero(inside & stuck)), int(np.count_nonzero(stuck))))
        crash = _run(s, seed, settings.collision_at + 1.0, sensors(), (), False, f"collision seed {seed}",
                     place_obstacle(s.sim, s.ctrl, s.exc, s.link, s.point, seed,
                                                settings.collision_at))
        onset = collision_onset(crash.truth)
        peak = peak_speed(crash.dq, peak)
        for k in ESTIMATORS:
            flagged = np.flatnonzero(crash.contact[k][onset:]) if onset is not None else np.zeros(0, int)
            acc[k]["collision"].append(float(flagged[0]) if flagged.size else math.nan)
            if onset is not None:
                acc[k]["err"].append(crash.est[k][onset:] - crash.truth[onset:])
        if not first:
            first = {"pushes": tr, "hold": hold, "collision": crash}
    noise = np.asarray(s.sim.torque_noise_std, float)
    figures = []
    for k, label in ESTIMATORS.items():
        err = np.concatenate(acc[k]["err"]) if acc[k]["err"] else np.zeros((0, j))
        rmse = np.sqrt((err ** 2).mean(axis=0)) if len(err) else np.full(j, math.nan)
        rmse_moving = rmse_where(acc[k]["push_err"], acc[k]["moving"], j)
        pushes_k: list[PushFigure] = acc[k]["pushes"]
        smallest = smallest_detected([(p.magnitude, p.detected) for p in pushes_k])
        big = [p for p in pushes_k if p.magnitude >= 1.0]
        max_delay = max((p.delay_ms for p in big), default=math.nan) if all(p.detected for p in big) else math.nan
        inside, stuck = (sum(c[i] for c in acc[k]["cover"]) for i in (0, 1))
        hold_in, hold_stuck = (sum(c[i] for c in acc[k]["hold_cover"]) for i in (0, 1))
        fc = int(sum(acc[k]["fc"]))
        figures.append(EstimatorFigures(
            name=k, label=label, threshold=thresholds[k].tolist(), band=bands[k].half_width.tolist(),
            fade_velocity=np.asarray(bands[k].fade_velocity).tolist(),
            load_gain=np.asarray(bands[k].load_gain).tolist(),
            free_minutes=free_s / 60.0, false_contacts=fc, false_contacts_per_min=fc / (free_s / 60.0),
            hold_false_contacts=int(sum(acc[k]["hold"])), rmse_contact=rmse.tolist(),
            rmse_contact_mean=float(rmse.mean()), rmse_over_noise=float(rmse.mean() / noise.mean()),
            rmse_moving=rmse_moving.tolist(), rmse_moving_over_noise=float(rmse_moving.mean() / noise.mean()),
            smallest_detected_force=smallest, max_delay_ms_at_1n=float(max_delay),
            interval_coverage=inside / stuck if stuck else math.nan, pushes=pushes_k,
            collision_delay_ms=[float(x) for x in acc[k]["collision"]], false_contact_events=acc[k]["fc_events"],
            hold_push_force=[float(x) for x in acc[k]["hold_force"]],
            hold_push_coverage=hold_in / hold_stuck if hold_stuck else math.nan))
    results = SenseResults(
        robot=s.name, model=s.model_label, joint_names=list(names), seeds=[int(x) for x in settings.seeds],
        calibration_seed=settings.calibration_seed, noise_floor=noise.tolist(), noise_floor_mean=float(noise.mean()),
        frame=s.link, point=list(s.point), cutoff=settings.cutoff,
        lag_rmse_moving=rmse_where(lag_err, lag_moving, j).tolist(), quantile=settings.quantile,
        margin=settings.margin, confirm=settings.confirm, friction=calib.friction.theta.ravel().tolist(),
        friction_stribeck=[calib.friction.stribeck_velocity, calib.friction.exponent], estimators=figures,
        wall_s=time.perf_counter() - wall0, calibration_speed=peak_speed(cal.dq).tolist(),
        evaluation_speed=peak.tolist(), velocity_threshold=calib.velocity_threshold.tolist())
    return results, first
