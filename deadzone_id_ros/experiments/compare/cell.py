"""One comparison as a coarse cell of :mod:`.engine`: the whole ``compare`` (its methods x seeds trained batched, the
pick, the data-efficiency curve) run in a task, its output folder returned as an archive so that it may run on
another node.

Why the whole compare and not one task per seed: the pick, the cross-validation and the seed spread need every seed
of every method, and the batched run trains them together faster than apart (issue 24's measurement: per-network
tasks cost more than they give on a few cores). The in-process and the Ray path run the same :func:`run_compare`
with the same configuration (one torch thread), so they give the same metrics (test/experiments/test_engine.py).
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ...engine import pack_dir, run_cells, unpack_dir
from ...training.config import TrainConfig
from ...training.pipeline import TrainingInputs
from .results import CompareReport
from .run import run_compare

__all__ = ["CompareJob", "CompareOutput", "compare_cell", "run_compare_on"]


@dataclass(frozen=True)
class CompareJob:
    """What one comparison cell needs: the loaded data, the configuration, the methods (None: all)."""

    inputs: TrainingInputs
    config: TrainConfig
    methods: tuple[str, ...] | None = None


@dataclass
class CompareOutput:
    """What a comparison cell hands back.

    Attributes:
        report: the typed report (as in report.json).
        files: the output folder (report.md, report.json, plots/, models/, pick/) as :func:`~.engine.pack_dir`'s
            archive.
        log: the progress messages, the task's temporary folder written as ``{out}``.
    """

    report: CompareReport
    files: bytes
    log: list[str] = field(default_factory=list)


def compare_cell(job: CompareJob) -> CompareOutput:
    """Run :func:`~.compare.run.run_compare` on ``job`` in a temporary folder and return it packed (a task body).

    Raises:
        as :func:`~.compare.run.run_compare` (DataError, ConfigError, ValueError).
    """
    lines: list[str] = []
    with tempfile.TemporaryDirectory(prefix="deadzone-compare-") as tmp:
        report = run_compare(job.inputs, tmp, job.config, methods=job.methods,
                             log=lambda m: lines.append(m.replace(tmp, "{out}")))
        return CompareOutput(report, pack_dir(tmp), lines)


def run_compare_on(engine: str, inputs: TrainingInputs, out_dir: str | Path, config: TrainConfig, *,
                   methods: Sequence[str] | None = None, address: str | None = None, num_cpus: int | None = None,
                   log: Callable[[str], None] = print) -> CompareReport:
    """``compare`` on ``engine``: "local" calls :func:`~.compare.run.run_compare` here; "ray" runs it as one Ray task
    (:func:`~.engine.run_cells`, ``address`` and ``num_cpus`` as there) and unpacks its folder into ``out_dir``.

    Returns:
        the report, as written to ``out_dir``/report.json.

    Raises:
        as :func:`~.compare.run.run_compare`; the task's own exception when it failed on every try (a worker death:
        Ray's error); ConfigError: Ray missing or a bad engine (:func:`~.engine.run_cells`).
    """
    if engine == "local":
        return run_compare(inputs, out_dir, config, methods=methods, log=log)
    # one training process in the task (the Ray task holds one CPU); the networks are the same over any worker count
    job = CompareJob(inputs, config.with_overrides(workers=1), tuple(methods) if methods else None)
    [outcome] = run_cells(compare_cell, {"compare": job}, engine=engine, address=address, num_cpus=num_cpus,
                          log=log)
    if outcome.error is not None or outcome.result is None:
        raise outcome.error or RuntimeError("compare task returned nothing")
    for line in outcome.result.log:
        log(line.replace("{out}", str(out_dir)))
    unpack_dir(outcome.result.files, out_dir)
    return outcome.result.report
