"""``deadzone-id teleop``: leader–follower teleoperation scenarios in process, unilateral vs bilateral, per model.

The bundled arm (or a profile) as leader and follower, each a :class:`~deadzone_id_ros.sim.SimArm` at the
simulator's rate (:mod:`deadzone_id_ros.teleop.sim`). A scripted operator holds the leader with a joint impedance
(stiffness ``hand_stiffness``, damping ``hand_damping``) to a reference (by default sized to the arm,
:func:`.sizing.hand_impedance`); scenarios, per seed:

- ``free``: the reference moves every joint (sum of two sines, random phases from the seed); no obstacle.
- ``push``: the reference moves toward a box in the follower's workspace, past the point where the follower's tip
  touches it by ``overshoot`` of the move, holds, and comes back out.
- ``hold``: the same move into the box, then held to the end (a held contact against the stiff box).
- ``stuck``: the operator holds still at home while a gentle push, below the follower's static friction, acts on the
  follower's tip (the joint stays stuck): the honest answer is an interval holding the push, and no force felt.

Models: those of :func:`~deadzone_id_ros.teleop.build.arm_setup`, and ``ideal``: the identified model's control with
ideal force sensors (:class:`~deadzone_id_ros.teleop.sim.TrueTorqueSensor`, the simulator's true external torques),
the floor of the control law itself.

Figures (:mod:`.results`): the follower's tracking RMSE |x_l - q_f| in free motion; the felt-force error in contact,
the hand's torque on the leader against the follower's true contact torque mapped and scaled (-s_f tau_c), RMS over
the contact ticks relative to the RMS contact torque (all joints, and on the joint of the largest contact torque
alone); in free motion the RMS follower torque reflected to the operator although nothing touches it (phantom); the
oscillation against the box (std of the contact torque's
magnitude over the last ``window`` s of the hold over that of the first ``window`` s after the onset: < 1 decays);
in ``stuck``, the largest reflected follower torque (phantom) and the share of ticks whose interval holds the true
push (not lost). Why the felt force misses (:class:`FeltErrorParts`, each RMS over the contact ticks relative to
the RMS contact torque): the force law's own residual, the dead-zone shrink, each arm's estimation error; the share
of contact ticks with a stuck joint on either arm; the felt error once the first ``window`` s of contact (the impact)
are over, and its part beyond the two arms' intervals (what the dead-zone-aware sensors cannot account for).
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ...config import check_positive
from ...sim.external_forces import ExternalForces, ObstacleConfig, PushConfig
from ...teleop.bilateral import BilateralConfig
from ...teleop.build import ArmSetup, arm_setup, build_teleop_pair
from ...teleop.sim import OperatorHand, TeleopRig, TeleopTrace
from .results import SCENARIOS, CaseFigures, TeleopResults
from .sizing import _probe, hand_impedance, joint_move, stuck_push

__all__ = ["IDEAL", "SCENARIOS", "FeltErrorParts", "TeleopSettings", "case_world", "felt_error_parts", "min_jerk",
           "run_case", "run_teleop"]

#: the model name of ideal force sensing (the identified model's control, the true external torques as sensors)
IDEAL = "ideal"

#: scenario name -> what it is, in report order
#: [N·m] the true contact torque (any joint) that counts as contact
CONTACT_ONSET = 0.02
HALF = 0.05  # [m] box half size
RADIUS = 0.01  # [m] probe sphere


@dataclass(frozen=True)
class TeleopSettings:
    """Settings of ``deadzone-id teleop``.

    Attributes:
        robot: the profile of both arms ("" = bundled).  models: models under test ("nominal", "identified", paths).
        modes: "unilateral" and/or "bilateral".  scenarios: of :data:`SCENARIOS`.  seeds: one run per seed.
        duration: per scenario [s].  move: the joint-space move into the box [rad] per joint (None: 0.5 rad on the
            first joint).  overshoot: share of the move the reference goes past the contact (> 0).
        amplitude: free-motion amplitude [rad].  hand_stiffness [N·m/rad], hand_damping [N·m·s/rad]: the operator
            (> 0, >= 0); None: sized to the arm (:func:`.sizing.hand_impedance`).
        force_gain, force_damping, position_scale, force_scale: the bilateral law (:class:`BilateralConfig`).
        stuck_push: the gentle push as a share of the smallest static friction of the follower (in (0, 1)).
        window: oscillation window [s].  cutoff: estimator cutoff [rad/s].

    Raises:
        ValueError: a bad value (named).
    """

    robot: str = ""
    models: tuple[str, ...] = field(default_factory=lambda: ("nominal", "identified"))
    modes: tuple[str, ...] = field(default_factory=lambda: ("unilateral", "bilateral"))
    scenarios: tuple[str, ...] = tuple(SCENARIOS)
    seeds: tuple[int, ...] = (1, 2, 3)
    duration: float = 4.0
    move: tuple[float, ...] | None = None
    overshoot: float = 0.3
    amplitude: float = 0.2
    hand_stiffness: float | None = None
    hand_damping: float | None = None
    force_gain: float = 1.0
    force_damping: float = 0.0
    position_scale: float = 1.0
    force_scale: float = 1.0
    stuck_push: float = 0.5
    window: float = 0.3
    cutoff: float = 100.0

    def __post_init__(self) -> None:
        bad = [s for s in self.scenarios if s not in SCENARIOS]
        if bad or not self.scenarios:
            raise ValueError(f"scenarios {list(self.scenarios)} must be among {list(SCENARIOS)}")
        if not self.seeds or not self.models or not self.modes:
            raise ValueError("seeds, models and modes must each name at least one")
        for name in ("duration", "overshoot", "amplitude", "window", "cutoff"):
            check_positive(name, getattr(self, name))
        if self.hand_stiffness is not None:
            check_positive("hand_stiffness", self.hand_stiffness)
        if self.hand_damping is not None:
            check_positive("hand_damping", self.hand_damping, allow_zero=True)
        if self.move is not None and not any(abs(float(x)) > 0 for x in self.move):
            raise ValueError(f"move = {list(self.move)} must move some joint (the push into the box) [rad]")
        if not 0 < self.stuck_push < 1:
            raise ValueError(f"stuck_push = {self.stuck_push!r} must be in (0, 1) (a share of the static friction)")
        if self.duration < 4 * self.window + 2.0:
            raise ValueError(f"duration = {self.duration} s is too short: the contact scenarios need at least "
                             f"{4 * self.window + 2.0:g} s (four {self.window:g} s measurement windows and 2 s to "
                             "reach the contact)")


def min_jerk(t: float, t0: float, t1: float) -> float:
    """Minimum-jerk blend 0 -> 1 between ``t0`` and ``t1`` [s] (Flash & Hogan 1985): 10 s^3 - 15 s^4 + 6 s^5."""
    if t <= t0:
        return 0.0
    if t >= t1:
        return 1.0
    s = (t - t0) / (t1 - t0)
    return s * s * s * (10.0 - 15.0 * s + 6.0 * s * s)


def _tip(s: ArmSetup, q: np.ndarray) -> np.ndarray:
    """(3,) world position of the probe point at q (J,) [rad] (MuJoCo forward kinematics)."""
    from ...sim.arm import SimArm

    arm = SimArm(s.sim)
    link, point = _probe(s)
    arm.reset(q)
    body = arm.model.body(link).id
    return arm.data.xpos[body] + arm.data.xmat[body].reshape(3, 3) @ np.asarray(point)


def _box(s: ArmSetup, home: np.ndarray, move: np.ndarray) -> ObstacleConfig:
    """The box the probe reaches at ``home + move`` [rad]: its face there, normal along the tip's motion."""
    link, point = _probe(s)
    p0, p1 = _tip(s, home + move), _tip(s, home + move * 1.001)
    v = p1 - p0
    n = v / np.linalg.norm(v)
    return ObstacleConfig(position=tuple(p0 + n * (HALF + RADIUS)), probe_link=link, half_size=(HALF,) * 3,
                          probe_point=point, probe_radius=RADIUS)


def _reference(scenario: str, home: np.ndarray, move: np.ndarray, settings: TeleopSettings,
               seed: int) -> Callable[[float], np.ndarray]:
    """The operator's reference t [s] -> q_ref (J,) [rad] of a scenario."""
    over = move * (1.0 + settings.overshoot)
    d = settings.duration
    if scenario == "free":
        rng = np.random.default_rng([seed, 38])
        ph = rng.uniform(0, 2 * np.pi, (2, len(home)))
        a = settings.amplitude

        def free(t: float) -> np.ndarray:
            ramp = min_jerk(t, 0.0, 0.5)
            return home + ramp * a * 0.5 * (np.sin(2 * np.pi * 0.4 * t + ph[0]) - np.sin(ph[0])
                                            + np.sin(2 * np.pi * 0.25 * t + ph[1]) - np.sin(ph[1]))
        return free
    if scenario == "push":
        return lambda t: home + over * (min_jerk(t, 0.3, 0.3 + d / 4) - min_jerk(t, d / 2 + 0.3, 3 * d / 4 + 0.3))
    if scenario == "hold":
        return lambda t: home + over * min_jerk(t, 0.3, 0.3 + d / 4)
    return lambda t: home


def case_world(leader: ArmSetup, follower: ArmSetup, scenario: str, seed: int, settings: TeleopSettings
               ) -> tuple[OperatorHand, ExternalForces, ObstacleConfig | None, PushConfig | None]:
    """The world of one run: the operator's hand on the leader (unbound), the follower's external forces (the box
    of ``push``/``hold``, the gentle push of ``stuck``), and that obstacle and push (None where the scenario has
    none). The live run's sim_arm nodes build the same (:mod:`.world`).

    Raises:
        ValueError: a bad scenario, or a ``move`` of the wrong length.
    """
    if scenario not in SCENARIOS:
        raise ValueError(f"scenario {scenario!r} must be one of {list(SCENARIOS)}")
    home_l = np.asarray(leader.sim.initial_position, float)
    home_f = np.asarray(follower.sim.initial_position, float)
    move = joint_move(leader, settings)
    obstacle = _box(follower, home_f, move * settings.position_scale) if scenario in ("push", "hold") else None
    push = stuck_push(follower, home_f, settings) if scenario == "stuck" else None
    n_l = len(home_l)
    k, d = hand_impedance(leader, settings)
    hand = OperatorHand(reference=_reference(scenario, home_l, move, settings, seed), stiffness=[k] * n_l,
                        damping=[d] * n_l)
    return hand, ExternalForces(pushes=[push] if push else [], obstacle=obstacle), obstacle, push


def run_case(leader: ArmSetup, follower: ArmSetup, mode: str, scenario: str, seed: int,
             settings: TeleopSettings, ideal: bool = False, duration: float | None = None
             ) -> tuple[TeleopTrace, ObstacleConfig | None, PushConfig | None]:
    """One run: build the pair and the world of ``scenario`` (:func:`case_world`), run ``duration`` s (default
    ``settings.duration``, the scenario's timing either way); return the trace. With ``ideal`` both arms sense their
    true external torques (:meth:`TeleopRig.use_true_torque`). The leader's arm is seeded ``seed``, the follower's
    ``seed + 1000``.

    Raises:
        SafetyError: the arms' joints cannot be mapped.  ValueError: a bad mode or scenario.
    """
    from ...sim.arm import SimArm

    hand, world, obstacle, push = case_world(leader, follower, scenario, seed, settings)
    la = SimArm(dataclasses.replace(leader.sim, seed=int(seed)), external=hand)
    fa = SimArm(dataclasses.replace(follower.sim, seed=int(seed) + 1000), external=world)
    cfg = BilateralConfig(mode=mode, position_scale=settings.position_scale, force_scale=settings.force_scale,
                          force_gain=settings.force_gain, force_damping=settings.force_damping)
    ctl = build_teleop_pair(leader, follower, cfg, cutoff=settings.cutoff)
    la.reset(np.asarray(leader.sim.initial_position, float))
    fa.reset(np.asarray(follower.sim.initial_position, float))
    rig = TeleopRig(la, fa, ctl)
    if ideal:
        rig.use_true_torque()
    return rig.run(settings.duration if duration is None else duration), obstacle, push


@dataclass(frozen=True)
class FeltErrorParts:
    """The felt-force error of a trace split into its causes, each (N, Jf) [N·m] on the follower's joints; exactly
    ``total = law - dead_zone - leader_estimate - follower_estimate``.

    Attributes:
        total: felt + s_f contact = true_l + s_f true_f (the hand's torque against the scaled contact torque).
        law: r_l + s_f r_f, what the bilateral law left unbalanced of what it was told (its gain, lag, transients).
        dead_zone: (r_l - est_l) + s_f (r_f - est_f), the shrink of the stuck joints' estimates toward zero.
        leader_estimate: est_l - true_l, the leader's estimation error (static friction of a stuck joint included).
        follower_estimate: s_f (est_f - true_f), the follower's.
    """

    total: np.ndarray
    law: np.ndarray
    dead_zone: np.ndarray
    leader_estimate: np.ndarray
    follower_estimate: np.ndarray


def felt_error_parts(tr: TeleopTrace, idx: np.ndarray, force_scale: float) -> FeltErrorParts:
    """Split the felt-force error of ``tr`` (:class:`FeltErrorParts`); ``idx`` (Jf,) maps the leader's joints onto the
    follower's (:attr:`~deadzone_id_ros.teleop.joint_map.JointMap.leader_index`), ``force_scale`` is s_f."""
    s = float(force_scale)
    est_l, true_l = tr.est_l[:, idx], tr.true_l[:, idx]
    return FeltErrorParts(total=true_l + s * tr.true_f, law=tr.reflected_l + s * tr.reflected_f,
                          dead_zone=(tr.reflected_l - est_l) + s * (tr.reflected_f - tr.est_f),
                          leader_estimate=est_l - true_l, follower_estimate=s * (tr.est_f - tr.true_f))


#: figure names of the felt-error split (:func:`felt_error_parts`), in :data:`.results.FIGURES`
_PARTS = {"felt_law": "law", "felt_dead_zone": "dead_zone", "felt_est_leader": "leader_estimate",
          "felt_est_follower": "follower_estimate"}


def _figures(tr: TeleopTrace, scenario: str, settings: TeleopSettings, idx: np.ndarray) -> dict[str, float]:
    """The figures of one trace (module docstring); NaN where a figure does not apply."""
    out = {k: math.nan for k in ("tracking_rmse", "felt_error", "felt_error_main", "contact_rms", "oscillation_ratio",
                                 "oscillation_final", "phantom", "free_phantom", "coverage", "contact_s", "push_peak",
                                 *_PARTS, "stuck_share", "felt_beyond_band", "felt_error_settled")}
    dt = float(np.median(np.diff(tr.t)))
    settle = tr.t >= 0.5
    out["tracking_rmse"] = float(np.sqrt(np.mean(tr.error[settle] ** 2)))
    contact = np.abs(tr.true_f).max(axis=1) > CONTACT_ONSET
    if scenario in ("push", "hold") and contact.any():
        felt = tr.true_l[:, idx]  # the hand's torque on the leader, on the follower's joints
        target = -settings.force_scale * tr.true_f
        err = felt[contact] - target[contact]
        out["contact_rms"] = float(np.sqrt(np.mean(np.sum(tr.true_f[contact] ** 2, axis=1))))
        out["felt_error"] = float(np.sqrt(np.mean(np.sum(err ** 2, axis=1)))) / out["contact_rms"]
        out["contact_s"] = float(contact.sum() * dt)
        j = int(np.argmax(np.sqrt(np.mean(tr.true_f[contact] ** 2, axis=0))))
        out["felt_error_main"] = float(np.sqrt(np.mean(err[:, j] ** 2)) / np.sqrt(np.mean(tr.true_f[contact, j] ** 2)))
        parts = felt_error_parts(tr, idx, settings.force_scale)
        for name, attr in _PARTS.items():
            part = getattr(parts, attr)[contact]
            out[name] = float(np.sqrt(np.mean(np.sum(part ** 2, axis=1)))) / out["contact_rms"]
        stuck = np.any(tr.half_l[:, idx] > 0, axis=1) | np.any(tr.half_f > 0, axis=1)  # as the sensors report it
        out["stuck_share"] = float(stuck[contact].mean())
        settled = contact & (tr.t >= tr.t[contact][0] + settings.window)  # after the impact of the first touch
        if settled.any():
            ref = np.sum(tr.true_f[settled] ** 2)
            out["felt_error_settled"] = float(np.sqrt(np.sum(parts.total[settled] ** 2) / ref))
            # what the two arms' intervals cannot account for: beyond +-(half_l + s_f half_f) per joint
            band = tr.half_l[:, idx] + settings.force_scale * tr.half_f
            beyond = np.maximum(np.abs(parts.total) - band, 0.0)[settled]
            out["felt_beyond_band"] = float(np.sqrt(np.sum(beyond ** 2) / ref))
        if scenario == "hold":
            onset = int(np.flatnonzero(contact)[0])
            w = int(round(settings.window / dt))
            mag = np.linalg.norm(tr.true_f, axis=1)
            first, last = mag[onset:onset + w], mag[-w:]
            out["oscillation_ratio"] = float(last.std() / first.std()) if first.std() > 0 else math.nan
            out["oscillation_final"] = float(last.std())
    if scenario == "free":
        out["free_phantom"] = float(np.sqrt(np.mean(np.sum(tr.reflected_f[settle] ** 2, axis=1))))
    if scenario == "stuck":
        pushed = np.abs(tr.true_f).max(axis=1) > 0
        out["phantom"] = float(np.abs(tr.reflected_f[settle]).max())
        out["push_peak"] = float(np.abs(tr.true_f).max())
        lo, hi = tr.est_f - tr.half_f - 1e-12, tr.est_f + tr.half_f + 1e-12
        inside = np.all((tr.true_f >= lo) & (tr.true_f <= hi), axis=1)
        out["coverage"] = float(inside[pushed].mean()) if pushed.any() else math.nan
    return out


def run_teleop(settings: TeleopSettings, progress: bool = True
               ) -> tuple[TeleopResults, dict[tuple[str, str, str], TeleopTrace]]:
    """Run every (model, mode, scenario, seed); return the results and, for the plots, the first seed's traces keyed
    ``(model, mode, scenario)`` (a model may be a path, so the key is not joined into one string).

    Raises:
        ValueError: bad settings.  SafetyError: unmappable joints.  FileNotFoundError, ConfigError, ArtifactError: a
            profile or model cannot be loaded.
    """
    from tqdm import tqdm

    from ...teleop.joint_map import JointMap

    wall0 = time.perf_counter()
    cases: list[CaseFigures] = []
    traces: dict[tuple[str, str, str], TeleopTrace] = {}
    total = len(settings.models) * len(settings.modes) * len(settings.scenarios) * len(settings.seeds)
    bar = tqdm(total=total, desc="teleop runs", unit="run", disable=not progress)
    robot_name = ""
    for model in settings.models:
        arm = arm_setup(settings.robot, "identified" if model == IDEAL else model)
        if model == IDEAL:
            arm = dataclasses.replace(arm, model_label=arm.model_label + "; ideal force sensors (true torques)")
        robot_name = arm.name
        idx = JointMap.build(arm.sim.joint_names, arm.sim.joint_names).leader_index
        for mode in settings.modes:
            for scenario in settings.scenarios:
                per_seed, faults = [], []
                for seed in settings.seeds:
                    tr, _, _ = run_case(arm, arm, mode, scenario, int(seed), settings, ideal=model == IDEAL)
                    per_seed.append(_figures(tr, scenario, settings, idx))
                    faults.append(tr.fault)
                    if seed == settings.seeds[0]:
                        traces[(model, mode, scenario)] = tr
                    bar.update(1)
                cases.append(CaseFigures.from_seeds(model, arm.model_label, mode, scenario, per_seed,
                                                    faults))
    bar.close()
    hand = hand_impedance(arm, settings)
    res = TeleopResults(robot=robot_name, joint_names=list(arm.sim.joint_names), seeds=[int(s) for s in settings.seeds],
                        duration=settings.duration, hand_stiffness=hand[0], hand_damping=hand[1],
                        hand_auto=settings.hand_stiffness is None, force_gain=settings.force_gain,
                        force_damping=settings.force_damping, position_scale=settings.position_scale,
                        force_scale=settings.force_scale, cases=cases, wall_s=time.perf_counter() - wall0)
    return res, traces
