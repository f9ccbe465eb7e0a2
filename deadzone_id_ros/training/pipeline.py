"""The training pipeline shared by ``deadzone-id train`` and ``compare``: split, fit the dead zone, stack, fit one
method, evaluate it on the test split, save the artifact.

Protocol (Inami, Yamane, Sakaino, arXiv 2402.00393, Sec. IV; nothing is tuned on the test split): the episodes are
cut into time blocks and split train/val/test once (``split_seed``); the dead-zone thresholds
(:class:`~deadzone_id_ros.data.deadzone.DeadZoneConfig`) are fitted on the training split only and used by every
method and by the evaluation; early stopping uses the validation split.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..data.dataset import DatasetConfig
from ..data.deadzone import DeadZone
from ..data.split import Split
from ..data.types import Episode
from ..errors import ConfigError, DataError, RobotDescriptionError
from ..models.artifact import SavedArtifact, save_artifact
from ..models.rbd import RigidBodyModel, RigidBodyRegressor
from .blocks import BlockChoice, choose_split
from .config import TrainConfig
from .evaluate import check_model_joints, evaluate_predictions, json_clean
from .fit import FitResult, Stacked, fit_plans, predict_stacked, stack_episodes
from .planner import SharedFits, fit_method, plan_method
from .records import DataRecord, RunMetrics, SampleCounts, SplitRecord
from .sources import BagSource

if TYPE_CHECKING:
    from ..robot.reduced import ReducedRobot
    from ..sim.config import SimArmConfig

__all__ = ["MethodRun", "PreparedData", "TrainingInputs", "load_inputs", "prepare_data", "rigid_body_regressor",
           "run_method", "save_method", "shared_fits", "train_one"]


@dataclass
class TrainingInputs:
    """What training runs on.

    Attributes:
        episodes: all episodes (split inside).
        joint_names: (J,) joint order.
        sources: one record per bag (:func:`~deadzone_id_ros.training.fingerprint`).
        simulator: the data came from the simulated arm (enables the noise floor and the friction band in compare);
            None: not determined (``train``).
        sim_config: the simulator's physics (a SimArmConfig) when ``simulator``; None uses the default.
        urdf_xml / urdf_source: the URDF for rbd/hybrid (None: no URDF; ``urdf_source`` then says why).
        joint_map: bag joint name -> URDF joint name, for recorded joints the URDF names differently.
        locked: URDF joint -> position [rad or m] for URDF joints the recording lacks (others the data lacks: 0).
        robot_note: which URDF joints were locked where (empty without a URDF).
        dataset_report: the data loader's report (counts, warnings), copied into report.json and model.json.
        effort_units: {joint: unit of its torque label} ("N*m", "mA", "unknown"; see
            :mod:`deadzone_id_ros.data.effort_units`), carried into report.json and model.json.
        torque_constants: {joint: k [N·m per unit of the recorded effort]} applied when loading (``--torque-constant``).
        joint_kinds: {joint: "revolute" | "continuous" | "prismatic"} from the URDF ({} without one).
    """

    episodes: list[Episode]
    joint_names: tuple[str, ...]
    sources: list[BagSource] = field(default_factory=list)
    simulator: bool | None = False
    sim_config: SimArmConfig | None = None
    urdf_xml: str | None = None
    urdf_source: str = ""
    dataset_report: dict[str, Any] = field(default_factory=dict)
    joint_map: dict[str, str] = field(default_factory=dict)
    locked: dict[str, float] = field(default_factory=dict)
    robot_note: str = ""
    effort_units: dict[str, str] = field(default_factory=dict)
    torque_constants: dict[str, float] = field(default_factory=dict)
    joint_kinds: dict[str, str] = field(default_factory=dict)


@dataclass
class PreparedData:
    """The split, the dead zone fitted on its training part, the stacked splits (arrays in joint order), and how the
    block length was set (``blocks``: chosen from the data or configured, and the joints without moving pairs)."""

    split: Split
    dead_zone: DeadZone
    train: Stacked
    val: Stacked
    test: Stacked
    blocks: BlockChoice | None = None

    def fingerprint(self, inputs: TrainingInputs, config: TrainConfig) -> DataRecord:
        """The training-data record of report.json and model.json: sources, sample counts, split, loader report."""
        return DataRecord(
            sources=list(inputs.sources), simulator=inputs.simulator,
            samples=SampleCounts(len(self.train), len(self.val), len(self.test)),
            split=SplitRecord(tuple(config.split_fractions), config.block_seconds, config.split_seed,
                              self.split.guard_samples, self.blocks),
            loader_report={k: v for k, v in inputs.dataset_report.items() if k in (
                "samples", "episodes", "messages", "messages_dropped", "warnings", "velocity_source")},
            effort_units=dict(inputs.effort_units), torque_constants=dict(inputs.torque_constants),
            joint_kinds=dict(inputs.joint_kinds))


@dataclass
class MethodRun:
    """One fitted and evaluated method: the fit and its metrics (:func:`evaluate_on_test`)."""

    fit: FitResult
    metrics: RunMetrics


def prepare_data(inputs: TrainingInputs, config: TrainConfig,
                 log: Callable[[str], None] | None = None) -> PreparedData:
    """Split ``inputs.episodes`` by time blocks, fit the dead zone on the training split, stack the three splits.

    With ``config.block_seconds`` None the block length is chosen from the data so that every split has moving
    pairs of every joint (:func:`~deadzone_id_ros.training.blocks.choose_split`); ``log`` receives what was chosen
    and, per joint and split without enough moving pairs, why.

    Raises:
        DataError: too few blocks to split (the message names --block-seconds).
        ConfigError: ``config.dead_zone.absolute_thresholds`` does not have one value per joint.
    """
    n = sum(len(e) for e in inputs.episodes)
    fractions = (config.split_fractions[0], config.split_fractions[1], config.split_fractions[2])
    try:
        split, dz, blocks = choose_split(inputs.episodes, fractions, config.block_seconds,
                                         config.split_seed, config.dead_zone)
    except ValueError as err:
        raise DataError(f"cannot split {n} samples: {err}") from err
    for line in (blocks.note, *blocks.warnings):
        (log or (lambda _m: None))(line)
    train, val, test = (stack_episodes(s, dz) for s in (split.train, split.val, split.test))
    return PreparedData(split, dz, train, val, test, blocks)


def rigid_body_regressor(inputs: TrainingInputs, dead_zone: DeadZone, config: TrainConfig) -> RigidBodyRegressor:
    """The rigid-body structure of rbd/hybrid from ``inputs.urdf_xml``.

    Raises:
        DataError: no URDF (``inputs.urdf_xml`` is None).
        RobotDescriptionError: the URDF does not fit the data's joints.
    """
    if inputs.urdf_xml is None:
        raise DataError("no URDF matching the data's joints (pass --urdf)")
    return RigidBodyRegressor(inputs.urdf_xml, inputs.joint_names, config.friction_eps_for(dead_zone.threshold),
                              source=inputs.urdf_source, joint_map=inputs.joint_map or None,
                              locked=inputs.locked or None)


def shared_fits(inputs: TrainingInputs, data: PreparedData, config: TrainConfig,
                log: Callable[[str], None] | None = None, unit: str = "N·m") -> SharedFits:
    """What the methods fitted on ``data``'s training split share (:class:`~.planner.SharedFits`): the rigid body,
    built from ``inputs``' URDF on first use and identified once, and the band."""
    no_urdf = (f"no URDF with joints {list(inputs.joint_names)}: {inputs.urdf_source}; pass --urdf"
               if inputs.urdf_xml is None else "")
    factory = (lambda: rigid_body_regressor(inputs, data.dead_zone, config)) if inputs.urdf_xml is not None else None
    return SharedFits(data.train, data.val, data.dead_zone, factory, no_rigid_body=no_urdf, log=log, unit=unit)


def evaluate_on_test(fit: FitResult, data: PreparedData,
                     band: dict[str, Any] | None = None) -> tuple[RunMetrics, np.ndarray]:
    """(metrics, prediction (N_test, J) [N·m]) of a fitted method on the test split: :func:`evaluate_predictions`
    (optionally with ``band_center`` / ``band_halfwidth``) with ``seed``, ``usable_fraction``, ``train`` (the fit's
    training summary) and ``missing`` (:func:`missing_figures`). The one evaluation of train and compare.

    Raises:
        ValueError: the model's joints differ from the data's.
    """
    check_model_joints(fit.model, data.test)
    pred = predict_stacked(fit.model, data.test)
    test = evaluate_predictions(pred, data.test, **(band or {}))
    metrics = RunMetrics(test, fit.info.seed, float(fit.usable_fraction), fit.info,
                         missing_figures(data, test.rmse_per_joint))
    return metrics, pred


def missing_figures(data: PreparedData, rmse_per_joint: Sequence[float]) -> dict[str, str]:
    """{joint: why its test figure is missing} for every joint whose test RMSE is NaN (no moving test pair)."""
    missing = data.blocks.missing if data.blocks else {}
    return {n: missing.get(n, "no test pair where the joint moves")
            for n, v in zip(data.test.joint_names, rmse_per_joint, strict=True) if math.isnan(v)}


def run_method(method: str, data: PreparedData, config: TrainConfig, *,
               regressor: RigidBodyRegressor | None = None, rbd: RigidBodyModel | None = None,
               band: dict[str, object] | None = None, desc: str | None = None,
               shared: SharedFits | None = None) -> MethodRun:
    """Fit ``method`` with ``config`` (its seed) on ``data`` and evaluate it on the test split.

    Args:
        regressor / rbd: see :func:`~deadzone_id_ros.training.planner.fit_method` (ignored with ``shared``).
        band: ``band_center`` / ``band_halfwidth`` for :func:`evaluate_on_test` (friction band, simulator data).
        shared: the split's shared fits (:func:`shared_fits`); None: built from ``regressor`` / ``rbd``.

    Raises:
        DataError, ValueError: from :func:`~deadzone_id_ros.training.planner.plan_method`.
    """
    if shared is None:
        fit = fit_method(method, data.train, data.val, data.dead_zone, config, regressor=regressor, rbd=rbd,
                         desc=desc)
    else:
        fit = fit_plans(plan_method(method, [config.seed], shared, desc=desc), config)[0]
    return MethodRun(fit, evaluate_on_test(fit, data, band)[0])


def save_method(run: MethodRun, out_dir: str | Path, inputs: TrainingInputs, data: PreparedData,
                config: TrainConfig, *, onnx: bool) -> SavedArtifact:
    """Write the artifact of ``run`` (metrics, training-data record, training configuration) to ``out_dir``; returns
    what was written."""
    return save_artifact(run.fit.model, out_dir, metrics=json_clean(run.metrics.to_dict(with_train=False)),
                         training_data=json_clean(data.fingerprint(inputs, config).to_dict()),
                         extra={"train_config": config_dict(config), "train_info": json_clean(run.fit.info.to_dict())},
                         onnx=onnx)


def config_dict(config: TrainConfig) -> dict[str, Any]:
    """``config`` as JSON-ready nested dicts (tuples as lists)."""
    return json_clean(dataclasses.asdict(config))


def train_one(inputs: TrainingInputs, method: str, config: TrainConfig, out_dir: str | Path, *, onnx: bool = True,
              log: Callable[[str], None] = print) -> tuple[MethodRun, PreparedData]:
    """The ``train`` job: prepare the data, fit ``method``, evaluate it, save the artifact in ``out_dir``.

    Raises:
        DataError: too few blocks, rbd/hybrid without a URDF, data the method cannot learn from.
        ConfigError: dead-zone thresholds that do not fit the joints.
        RobotDescriptionError: the URDF does not fit the data's joints.
    """
    data = prepare_data(inputs, config, log)
    log(f"train {method}: {len(data.train)} train / {len(data.val)} val / {len(data.test)} test samples, joints "
        f"{list(inputs.joint_names)}")
    run = run_method(method, data, config, shared=shared_fits(inputs, data, config, log))
    info = run.fit.info
    if info.steps is not None:
        log(f"{method}: {info.steps} training steps ("
            + ("validation loss stopped improving" if info.stopped_early else f"the maximum, {config.max_steps}")
            + f"; best weights at step {info.best_step})")
    save_method(run, out_dir, inputs, data, config, onnx=onnx)
    return run, data


def load_inputs(bags: Sequence[str | Path], dataset: DatasetConfig | None = None, *,
                urdf: str | Path | None = None, simulator: str | None = None,
                joint_map: Mapping[str, str] | None = None, locked: Mapping[str, float] | None = None,
                urdf_check: str = "refuse", engine: str = "local", address: str | None = None,
                num_cpus: int | None = None, log: Callable[[str], None] = print) -> TrainingInputs:
    """Fingerprint and load ``bags``, resolve the URDF for rbd/hybrid, and decide whether the data is simulated.

    Args:
        dataset: how to read the bags (topic, joints, Savitzky–Golay window, velocity and time source, torque
            constants and effort unit; see :class:`~deadzone_id_ros.data.DatasetConfig`); None: the defaults.
        urdf: URDF file or robot model name for rbd/hybrid (None: the bundled arm, only for simulator data whose
            joints match).
        simulator: "auto" (read each bag's episode.yaml), "yes", "no", or None (not determined; ``train``).
        joint_map: bag joint name -> URDF joint name (``--joint-map``, see
            :func:`~deadzone_id_ros.robot.parse_joint_map`).
        locked: URDF joint -> lock position [rad or m] (``--lock``) for URDF joints the data lacks (default 0).
        urdf_check: what a recording that contradicts its URDF gets (:func:`~deadzone_id_ros.robot.check_recording`:
            torque sign and scale against the nominal rigid body, positions against the limits): "refuse" (a sign
            convention opposite to the URDF's raises, the rest is logged), "warn" (everything logged) or "off".
        engine / address / num_cpus: "ray": one Ray task per bag (:func:`~deadzone_id_ros.data.load_dataset`);
            "local" (default): the bags one after the other here.
        log: receives the simulator decision and its reason, which URDF joints were locked where, the effort unit
            when it is not N·m, and what the URDF check found.

    Raises:
        FileNotFoundError / DataError: from the loader, naming the bag, topic, message index and field.
        ConfigError: a torque constant for a joint the data lacks, or a malformed episode.yaml.
        RobotDescriptionError: ``joint_map`` / ``locked`` given without ``urdf``; the URDF cannot be matched to the
            data's joints (the message lists the data's and the URDF's joints) or ``locked`` names a joint that is
            not a URDF joint the data lacks.
        DataError: with ``urdf_check="refuse"``, a joint whose effort has the opposite sign convention to the URDF
            (the joint, the evidence and the flag that fixes it).
    """
    from ..data.dataset import load_dataset
    from ..data.effort_units import FIX_HINT, not_si, unit_label, with_joint_kinds
    from .sources import detect_simulator, fingerprint, resolve_urdf

    dcfg = dataset or DatasetConfig()
    torque_constants = dict(dcfg.torque_constants or {})
    sources = fingerprint(bags)
    ds = load_dataset(list(bags), dcfg, engine=engine, address=address, num_cpus=num_cpus, log=log)
    unknown = sorted(set(torque_constants) - set(ds.joint_names))
    if unknown:
        raise ConfigError(f"--torque-constant names joint(s) {unknown} that are not in the data {list(ds.joint_names)}")
    simulated: bool | None = None
    sim_cfg = None
    if simulator == "auto":
        simulated, sim_cfg, why = detect_simulator(bags)
    elif simulator is not None:
        simulated, why = simulator == "yes", f"--simulator {simulator}"
        if simulated:
            _, sim_cfg, _ = detect_simulator(bags)
    if simulator is not None:
        log(f"simulator data: {'yes' if simulated else 'no'} ({why})")
    from_sim = simulated if simulated is not None else detect_simulator(bags)[0]
    urdf_xml, urdf_source = resolve_urdf(urdf, ds.joint_names, simulated=from_sim)
    joint_map, locked = dict(joint_map or {}), dict(locked or {})
    note = ""
    units, unit_reason, kinds, reduced = dict(ds.effort_units), ds.effort_unit_reason, {}, None
    if urdf_xml is None and (joint_map or locked):
        raise RobotDescriptionError(f"--joint-map / --lock need a URDF: {urdf_source}")
    if urdf_xml is not None:
        from ..robot import build_reduced_model

        # checked here, before any training: a URDF that cannot be matched is refused with both name lists
        reduced = build_reduced_model(urdf_xml, ds.joint_names, joint_map, locked, urdf_source)
        note = reduced.describe()
        log(f"URDF {urdf_source}: {note}")
        kinds = dict(zip(ds.joint_names, reduced.kinds))
        limits = dict(zip(ds.joint_names, (float(v) for v in reduced.model.effortLimit[reduced.idx_v])))
        units, unit_reason = with_joint_kinds(units, kinds, _peak_effort(ds.episodes, ds.joint_names), unit_reason,
                                              limits)
    not_si_units = not_si(units, kinds)
    if not_si_units:
        log(f"effort unit {unit_label(not_si_units)} for joint(s) {list(not_si_units)} ({unit_reason}): errors are "
            f"in that unit and the controller refuses a model that does not predict N·m (N for a prismatic joint); "
            f"{FIX_HINT}")
    report = ds.report.to_dict()
    if reduced is not None:  # what the check found goes into the reports too, not only to the terminal
        found = _check_against_urdf(reduced, ds.episodes, units, kinds, urdf_source, urdf_check, log)
        report["warnings"] = [*report.get("warnings", []), *found]
    return TrainingInputs(ds.episodes, tuple(ds.joint_names), sources=sources, simulator=simulated,
                          sim_config=sim_cfg, urdf_xml=urdf_xml, urdf_source=urdf_source,
                          dataset_report=report, joint_map=joint_map, locked=locked, robot_note=note,
                          effort_units=units, torque_constants=torque_constants, joint_kinds=kinds)


def _peak_effort(episodes: Sequence[Episode], joints: Sequence[str]) -> dict[str, float]:
    """{joint: largest finite |tau|} over the episodes (0 where none)."""
    tau = np.abs(np.concatenate([e.tau for e in episodes])) if episodes else np.zeros((0, len(joints)))
    tau = np.where(np.isfinite(tau), tau, 0.0)
    return {j: float(tau[:, i].max(initial=0.0)) for i, j in enumerate(joints)}


def _check_against_urdf(reduced: ReducedRobot, episodes: Sequence[Episode], effort_units: Mapping[str, str],
                        kinds: Mapping[str, str], source: str,
                        mode: str, log: Callable[[str], None]) -> list[str]:
    """Run :func:`~deadzone_id_ros.robot.check_recording` on every episode together; log and return each finding
    that does not refuse the recording (one line each), or raise on a refusal."""
    from ..data.consistency import check_recording
    from ..data.effort_units import si_effort_unit

    if mode not in ("refuse", "warn", "off"):
        raise ConfigError(f"urdf_check = {mode!r} must be 'refuse', 'warn' or 'off'")
    if mode == "off" or not episodes:
        return []
    q, dq, ddq, tau = (np.concatenate([getattr(e, k) for e in episodes]) for k in ("q", "dq", "ddq", "tau"))
    findings = check_recording(reduced, q, dq, ddq, tau,
                               effort_in_nm={j: u == si_effort_unit(kinds.get(j, "revolute"))
                                             for j, u in effort_units.items()})
    refused = [f for f in findings if f.refuse and mode == "refuse"]
    found = [f"the recording contradicts URDF {source}: {f.message()}" for f in findings if f not in refused]
    for line in found:
        log(line)
    if refused:
        raise DataError(f"the recording contradicts URDF {source}; not training on it: "
                        + " | ".join(f.message() for f in refused))
    return found
