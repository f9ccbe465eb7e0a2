"""In-process closed-loop comparison of controllers on held-out references (core, no ROS).

Each controller runs the same :class:`~deadzone_id_ros.control.FeedforwardController` and
:class:`~deadzone_id_ros.sim.SimArm` code as the nodes, through :func:`deadzone_id_ros.sim.offline.simulate` (no DDS,
many times faster than real time), on several excitation seeds that no training data used. Per seed it measures the
tracking error e = q_ref - q per joint: RMSE, max |e| and the RMSE at velocity reversals of the reference (where the
dead zone acts); over seeds it reports mean and standard deviation. "mean" over joints is always the arithmetic
mean of the per-joint RMSEs (as in the torque tables of the comparison).
"""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ...control.config import ControlMode
from ...models.methods import METHODS, get_method
from ...sim.tracking import TrackingFigures, reversal_mask, tracking_figures
from .results import ClosedLoopSummary

__all__ = ["ControllerSpec", "controller_specs", "run_config", "run_controller"]


@dataclass(frozen=True)
class ControllerSpec:
    """One controller of the comparison.

    Attributes:
        name: report key (``pd_dob``, ``ctc_dob_rbd_nominal``, ...).  label: for tables and plots.
        control: the law's structure (feedforward source, DOB on/off).  model: the inverse-dynamics model, "none",
        "rbd" (the URDF's nominal rigid body) or "learned" (``model_path``, an artifact directory; "" otherwise).
    """

    name: str
    label: str
    control: ControlMode
    model: str
    model_path: str = ""

    @property
    def mode(self) -> str:
        """The controller's mode as its parameter files name it (``pd_dob``, ``ctc_dob``, ...)."""
        return self.control.name


def closed_loop_methods() -> list[str]:
    """The methods whose artifacts drive a controller of the comparison (registry flag
    :attr:`~deadzone_id_ros.models.methods.Method.closed_loop`), the identified rigid bodies first."""
    return sorted((m.name for m in METHODS.values() if m.closed_loop), key=lambda n: not METHODS[n].rigid_body)


def controller_specs(models_dir: Path, pick: str | None, available: Sequence[str]) -> list[ControllerSpec]:
    """The six controllers of issue 15 for the artifacts in ``models_dir`` (``<method>/`` per trained method).

    Args:
        models_dir: the comparison's ``models`` folder.  pick: the comparison's pick (a method name) or None.
        available: methods that have an artifact; controllers whose method is missing are left out.

    Returns:
        pd_dob, ctc_dob_rbd_nominal (URDF parameters), ctc_dob_<method> for each of :func:`closed_loop_methods`
        (ctc_dob_rbd: identified rigid body, ctc_dob_masked, ctc_dob_conventional), ctc_dob_pick (in that order,
        those that can run; a pick that reads the joint-state history cannot drive a controller and is left out).
    """
    pd_dob, ctc_dob = ControlMode("nominal_inertia", dob=True), ControlMode("model", dob=True)
    specs = [ControllerSpec("pd_dob", "pd_dob", pd_dob, "none"),
             ControllerSpec("ctc_dob_rbd_nominal", "ctc_dob + rbd (URDF nominal)", ctc_dob, "rbd")]
    for name, method in [*((f"ctc_dob_{m}", m) for m in closed_loop_methods()), ("ctc_dob_pick", pick)]:
        if method is not None and method in available and not (method in METHODS and METHODS[method].history):
            label = f"ctc_dob + {method}" + (" (pick)" if name == "ctc_dob_pick" else "")
            if name != "ctc_dob_pick" and not get_method(method).learned:
                label = f"ctc_dob + {method} (identified)"
            specs.append(ControllerSpec(name, label, ctc_dob, "learned", str(models_dir / method)))
    return specs


def _reversal_profile(err: np.ndarray, dq_ref: np.ndarray, rate_hz: float,
                      before_s: float = 0.05, after_s: float = 0.15) -> tuple[np.ndarray, np.ndarray]:
    """Mean |e| (T, J) [rad] over every reversal of each joint, at times (T,) [s] relative to the reversal."""
    b, a = int(round(before_s * rate_hz)), int(round(after_s * rate_hz))
    t = np.arange(-b, a + 1) / rate_hz
    prof = np.full((len(t), err.shape[1]), np.nan)
    for k in range(err.shape[1]):
        s = np.sign(dq_ref[:, k])
        idx = np.flatnonzero((s[1:] * s[:-1]) < 0) + 1
        idx = idx[(idx >= b) & (idx + a < len(err))]
        if idx.size:
            prof[:, k] = np.mean([np.abs(err[i - b:i + a + 1, k]) for i in idx], axis=0)
    return t, prof


def run_config(spec: ControllerSpec, base_config, dob_scale: float = 1.0):
    """The :class:`~deadzone_id_ros.control.ControllerConfig` that runs ``spec``: ``base_config`` (gains, limits)
    with the spec's mode and model and the DOB cutoff times ``dob_scale``.

    Raises:
        ValueError: dob_scale not > 0.
    """
    if not dob_scale > 0:
        raise ValueError(f"dob_scale = {dob_scale} must be > 0")
    cutoff = tuple(float(g) * dob_scale for g in base_config.dob_cutoff)
    return dataclasses.replace(base_config, mode=spec.mode, model=spec.model, model_path=spec.model_path,
                               dob_cutoff=cutoff)


def run_controller(spec: ControllerSpec, seeds: Sequence[int], duration: float, sim_config, base_config,
                   dob_scale: float = 1.0, rate_hz: float | None = None) -> ClosedLoopSummary:
    """Run one controller on each seed in-process and summarize.

    Args:
        spec: the controller.  seeds: excitation/noise seeds (held out from training).  duration: per seed [s].
        sim_config: a :class:`~deadzone_id_ros.sim.SimArmConfig`.  base_config: the
            :class:`~deadzone_id_ros.control.ControllerConfig` whose gains and limits every controller shares.
        dob_scale: factor on ``base_config.dob_cutoff`` (< 1: a weak DOB), > 0.  rate_hz: control rate [Hz]
            (None: ``base_config.control_rate``, the robot profile's).

    Raises:
        ValueError: no seeds, or dob_scale not > 0.  FileNotFoundError, ArtifactError: the model cannot be loaded.
    """
    from ...sim.offline import simulate

    if not seeds:
        raise ValueError("run_controller needs at least one seed")
    cfg = run_config(spec, base_config, dob_scale)
    rate_hz = float(cfg.control_rate if rate_hz is None else rate_hz)
    cutoff = cfg.dob_cutoff
    per_seed: list[TrackingFigures] = []
    profile: dict[str, list] = {}
    trace: dict[str, list] = {}
    faults: list[str] = []
    n_j = len(sim_config.joint_names)
    rate_ev, clamp_ev, dob_abs = np.zeros(n_j), np.zeros(n_j), np.zeros(n_j)
    for seed in seeds:
        rec = simulate(duration, int(seed), sim_config, cfg, rate_hz=rate_hz)
        assert rec.reference_position is not None and rec.reference_velocity is not None  # simulate records them
        err = rec.reference_position - rec.position
        per_seed.append(tracking_figures(err, reversal_mask(rec.reference_velocity, rate_hz), int(seed)))
        stats = rec.metadata["stats"]
        rate_ev += np.asarray(stats["rate_limit_events"], float) / len(err)
        clamp_ev += np.asarray(stats["clamp_events"], float) / len(err)
        dob_abs += np.asarray(stats["dob_mean_abs"], float) / len(seeds)
        if stats.get("fault"):
            faults.append(f"seed {int(seed)} at {stats['fault_time_s']:.3f} s: {stats['fault']}")
        if not profile:
            t, prof = _reversal_profile(err, rec.reference_velocity, rate_hz)
            profile = {"t": t.tolist(), "mean_abs_error": prof.tolist()}
            every = max(1, int(round(rate_hz / 100.0)))
            trace = {"t": (np.arange(0, len(err), every) / rate_hz).tolist(),
                     "q": rec.position[::every].tolist(), "q_d": rec.reference_position[::every].tolist()}
    rmse = np.array([s.rmse for s in per_seed])
    rev = np.array([s.reversal_rmse for s in per_seed], dtype=float)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a run without any reversal: NaN, reported as such
        rev_joint, rev_mean = np.nanmean(rev, axis=0), np.nanmean(rev, axis=1)
        rev_all, rev_std = float(np.nanmean(rev_mean)), float(np.nanstd(rev_mean))
    per_seed_mean = rmse.mean(axis=1)
    return ClosedLoopSummary(
        name=spec.name, label=spec.label, mode=spec.mode, model=spec.model, model_path=spec.model_path,
        joint_names=list(sim_config.joint_names), seeds=[int(s) for s in seeds], dob_cutoff=list(cutoff),
        duration=float(duration), tracking_rmse_per_joint=rmse.mean(axis=0).tolist(),
        tracking_rmse_per_joint_std=rmse.std(axis=0).tolist(), tracking_rmse_mean=float(per_seed_mean.mean()),
        tracking_rmse_std=float(per_seed_mean.std()),
        max_abs_error_per_joint=np.max([s.max_abs for s in per_seed], axis=0).tolist(),
        reversal_rmse_per_joint=rev_joint.tolist(), reversal_rmse_mean=rev_all, reversal_rmse_std=rev_std,
        rate_limit_fraction=(rate_ev / len(seeds)).tolist(),
        clamp_fraction=(clamp_ev / len(seeds)).tolist(), per_seed=per_seed, reversal_profile=profile,
        faults=faults, trace=trace, dob_mean_abs_per_joint=dob_abs.tolist())
