"""``deadzone-id sweep``: a grid of comparisons (data sets x alpha x data fractions), one coarse cell each, run
in-process or as Ray tasks (:mod:`.engine`).

Each cell is one :func:`~.compare.cell.compare_cell`: every method x seed trained batched on that data set, with the
dead-zone alpha and the first ``fraction`` of each episode (:mod:`.sweep.config`). Its full comparison (report.md,
report.json, plots, models, pick) lands in ``OUT/cells/<key>/`` with its :data:`~.sweep.report.CELL_FILE`, written
as each cell finishes; the sweep's table is ``OUT/report.md`` / ``report.json`` / ``plots/rmse_vs_alpha.png``.

- a cell that fails (bad data, too little data for a split, a worker killed more often than Ray retries it) is
  recorded as failed with its error (``cells/<key>/cell.json``, error.txt) and the others go on;
- re-running the same sweep into the same ``OUT`` skips the cells whose cell.json says "done" and runs the others
  (failed ones included); the table covers every cell.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ...engine import CellOutcome, engine_session, run_cells, unpack_dir
from ...errors import DataError
from ...jsonrecord import read_record
from ...training.config import TrainConfig
from ...training.pipeline import TrainingInputs
from ..compare.cell import CompareJob, CompareOutput, compare_cell
from .config import DataSpec, SweepConfig, cell_key
from .report import CELL_FILE, CellMethod, SweepCell, SweepReport, write_sweep_report

__all__ = ["load_data_set", "run_sweep", "truncate_inputs"]


def truncate_inputs(inputs: TrainingInputs, fraction: float) -> TrainingInputs:
    """``inputs`` with the first ``fraction`` (0 < f <= 1) of every episode's samples (the same object at 1)."""
    if fraction >= 1.0:
        return inputs
    eps = []
    for ep in inputs.episodes:
        n = max(int(round(len(ep) * fraction)), 1)
        eps.append(dataclasses.replace(ep, t=ep.t[:n], q=ep.q[:n], dq=ep.dq[:n], ddq=ep.ddq[:n], tau=ep.tau[:n],
                                       tau_true=None if ep.tau_true is None else ep.tau_true[:n]))
    return dataclasses.replace(inputs, episodes=eps)


def load_data_set(spec: DataSpec, out: Path, log: Callable[[str], None], *, engine: str = "local",
                  address: str | None = None, num_cpus: int | None = None) -> TrainingInputs:
    """Load a data set's bags; for ``simulate``, record the simulated arm into ``out``/data/<name> first (once: a
    re-run reuses the bag). ``engine="ray"``: one Ray task per bag (``address``, ``num_cpus``: :mod:`.engine`).

    Raises:
        FileNotFoundError / DataError / ConfigError: from the loader, naming the bag.
    """
    from ...training.pipeline import load_inputs

    bags: list[str | Path] = list(spec.bags)
    robot_kw: dict[str, Any] = {}
    if spec.simulate is not None:
        from ...robot_configs import load_robot, simulation_configs

        robot = str(spec.simulate.get("robot") or "")
        bag = out / "data" / spec.name
        if not (bag / "episode.yaml").is_file():
            from ...sim.record import simulate_bag

            shutil.rmtree(bag, ignore_errors=True)  # a recording cut short by an earlier run
            bag.parent.mkdir(parents=True, exist_ok=True)
            simulate_bag(float(spec.simulate["seconds"]), int(spec.simulate.get("seed", 0)), bag,
                         **simulation_configs(robot))
            log(f"{spec.name}: simulated {spec.simulate['seconds']} s of {robot or 'the bundled arm'} into {bag}")
        bags = [bag]
        if robot:  # rbd and hybrid on the profile's URDF with its locked joints
            derived = load_robot(robot)
            robot_kw = {"urdf": str(derived.urdf_path), "locked": dict(derived.profile.locked)}
    return load_inputs(bags, simulator="auto", engine=engine, address=address, num_cpus=num_cpus,
                       log=lambda m: log(f"{spec.name}: {m}"), **robot_kw)


def _settings(config: TrainConfig, methods: tuple[str, ...], spec: DataSpec) -> str:
    """Fingerprint of what decides a cell: its training configuration, methods and data set (sha256, 16 hex)."""
    # workers and progress change how a cell runs, not its results (networks are bit-identical over any worker count)
    kept = {k: v for k, v in dataclasses.asdict(config).items() if k not in ("workers", "progress")}
    doc = {"config": kept, "methods": list(methods), "data": dataclasses.asdict(spec)}
    return hashlib.sha256(json.dumps(doc, sort_keys=True, default=str).encode()).hexdigest()[:16]


def _finished(cell_dir: Path, settings: str) -> SweepCell | None:
    """The cell's record when it finished in an earlier run with the same ``settings``, else None."""
    try:
        cell = read_record(cell_dir / CELL_FILE, SweepCell.from_dict)
    except (FileNotFoundError, DataError):
        return None
    ok = cell.status == "done" and cell.settings == settings and (cell_dir / "report.json").is_file()
    return cell if ok else None


def _record(outcome: CellOutcome[CompareOutput], where: tuple[str, float, float], cell_dir: Path,
            settings: str) -> SweepCell:
    """Write a finished or failed cell's folder and cell.json; return its record."""
    data, alpha, fraction = where
    shutil.rmtree(cell_dir, ignore_errors=True)
    if outcome.result is None:
        err = outcome.error
        cell = SweepCell(outcome.key, data, alpha, fraction, "failed", outcome.seconds,
                         error=f"{type(err).__name__}: {err}", settings=settings)
        cell_dir.mkdir(parents=True)
        (cell_dir / "error.txt").write_text(outcome.detail or cell.error)
    else:
        rep = outcome.result.report
        methods = {m: CellMethod(e.rmse_mean, e.rmse_mean_std, e.usable_fraction) for m, e in rep.methods.items()}
        cell = SweepCell(outcome.key, data, alpha, fraction, "done", outcome.seconds, unit=rep.torque_unit,
                         pick=rep.pick.method if rep.pick else "", methods=methods, settings=settings)
        tmp = cell_dir.with_name(cell_dir.name + ".partial")
        shutil.rmtree(tmp, ignore_errors=True)
        unpack_dir(outcome.result.files, tmp)
        tmp.rename(cell_dir)  # a cell folder with report.json is complete
    (cell_dir / CELL_FILE).write_text(json.dumps(cell.to_dict(), indent=2) + "\n")
    return cell


def run_sweep(sweep: SweepConfig, out_dir: str | Path, *, engine: str = "local", address: str | None = None,
              num_cpus: int | None = None, log: Callable[[str], None] = print) -> SweepReport:
    """Run every unfinished cell of ``sweep`` and write the sweep's table into ``out_dir``.

    Args:
        sweep: the grid and training settings.  out_dir: the sweep's folder (created; an earlier run's is resumed).
        engine / address / num_cpus: where the cells run (:func:`~.engine.run_cells`).
        log: progress messages.

    Returns:
        the report, as written to report.json.

    Raises:
        ConfigError: a bad training configuration, an unknown method, Ray missing for ``engine="ray"``.
        FileNotFoundError / DataError: a data set that cannot be loaded (before any cell runs).
    """
    from ...errors import ConfigError
    from ...models.methods import resolve_methods
    from ...training.config import load_train_config

    try:
        resolve_methods(sweep.methods)
    except ValueError as err:
        raise ConfigError(f"sweep: {err}") from err
    t0 = time.perf_counter()
    out = Path(out_dir)
    (out / "cells").mkdir(parents=True, exist_ok=True)
    cfg = load_train_config(sweep.config, dict(sweep.train)).with_overrides(seeds=sweep.seeds, progress=False)
    if cfg.dead_zone.absolute_thresholds is not None:
        raise ConfigError("sweep: dead_zone.absolute_thresholds is set in the training configuration; a sweep over "
                          "alpha needs it unset")
    grid = {cell_key(d.name, a, f): (d, a, f) for d, a, f in sweep.cells()}
    configs = {k: cfg.with_overrides(dead_zone=dataclasses.replace(cfg.dead_zone, alpha=a)) for k, (_, a, _) in
               grid.items()}
    settings = {k: _settings(configs[k], sweep.methods, grid[k][0]) for k in grid}
    earlier = {k: c for k in grid if (c := _finished(out / "cells" / k, settings[k])) is not None}
    todo = [k for k in grid if k not in earlier]
    log(f"sweep: {len(grid)} cells, {len(earlier)} finished earlier with these settings (skipped), {len(todo)} to "
        f"run on {engine}")
    cells: dict[str, SweepCell] = dict(earlier)

    def done(o: CellOutcome[CompareOutput]) -> None:
        d, a, f = grid[o.key]
        cells[o.key] = _record(o, (d.name, a, f), out / "cells" / o.key, settings[o.key])
        log(f"cell {o.key}: {cells[o.key].status} in {o.seconds:.1f} s"
            + (f" ({cells[o.key].error})" if cells[o.key].error else ""))

    with engine_session(engine, address, num_cpus, log):  # one cluster for the bags' tasks and the cells'
        inputs = {d.name: load_data_set(d, out, log, engine=engine) for d in sweep.data
                  if any(grid[k][0] is d for k in todo)}
        # on Ray the cells are the parallel unit: one training process per cell (a 1-CPU node runs one at a time)
        per_cell = {"workers": 1} if engine == "ray" else {}
        jobs = {k: CompareJob(truncate_inputs(inputs[grid[k][0].name], grid[k][2]),
                              configs[k].with_overrides(**per_cell), sweep.methods or None) for k in todo}
        run_cells(compare_cell, jobs, engine=engine, on_done=done, log=log)
    report = SweepReport([cells[k] for k in grid], engine, time.perf_counter() - t0, ran=todo,
                         skipped=list(earlier), failed=[k for k in todo if cells[k].status != "done"])
    write_sweep_report(out, report)
    log(f"sweep: wrote {out / 'report.md'} ({len(report.failed)} failed) in {report.seconds:.1f} s")
    return report
