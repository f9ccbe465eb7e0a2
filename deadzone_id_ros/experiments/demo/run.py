"""The demo's stages, run so that no work is ever lost: resumable, locked, and kept when a stage fails.

``deadzone-id demo`` (:mod:`deadzone_id_ros.cli.demo` parses and prints; this module runs) goes through
:data:`DEMO_STAGES` on the simulated 3-DOF arm: offline simulation, a live ROS 2 recording, compare, closed loop,
report. Each finished stage is recorded in ``DIR/demo_state.json`` with what later stages need (paths relative to
DIR), so that:

- a stage that fails, or an interrupt (Ctrl-C, SIGTERM, SIGHUP), leaves DIR in place with ``DIR/INCOMPLETE.json``
  naming the stage, the reason and every log, and the message says what was kept and how to continue;
- ``deadzone-id demo --resume DIR`` runs the remaining stages (it refuses a configuration that differs from the
  recorded one); what an unfinished stage had written is moved to ``DIR/.partial/<stage>-<n>/`` first, not deleted;
- one run at a time writes DIR (:func:`deadzone_id_ros.outputs.output_lock`).
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypedDict

from ...errors import DeadzoneIdError
from ...outputs import INCOMPLETE, OutputError, incomplete, mark_incomplete, output_dir, output_lock
from .stages import DEMO_STAGES, DemoConfig, Stage, StageContext, StageRecord

__all__ = ["DEMO_STAGES", "STATE_FILE", "DemoConfig", "DemoInterrupted", "Stage", "StageContext", "run_demo"]

STATE_FILE = "demo_state.json"


class DemoInterrupted(DeadzoneIdError):
    """A demo stage failed or was interrupted; the output folder was kept, marked incomplete.

    Attributes:
        out: the kept folder.  stage: the stage's name.  cause: the exception that stopped it.
    """

    def __init__(self, message: str, out: Path, stage: str, cause: BaseException) -> None:
        super().__init__(message)
        self.out, self.stage, self.cause = out, stage, cause


class _Done(TypedDict):
    """demo_state.json's entry of a finished stage: its wall time [s] and the record it returned."""

    seconds: float
    result: StageRecord


@dataclass
class _State:
    """demo_state.json: the configuration (as JSON gives it back) and, per finished stage, its wall time and record."""

    config: dict[str, object]
    done: dict[str, _Done] = dataclasses.field(default_factory=dict)

    @classmethod
    def load(cls, out: Path) -> _State:
        path = out / STATE_FILE
        try:
            doc = json.loads(path.read_text())
            return cls(config=dict(doc["config"]), done=dict(doc["done"]))
        except FileNotFoundError:
            raise FileNotFoundError(f"{path} does not exist: {out} is not a demo output that can be resumed") from None
        except (ValueError, KeyError, TypeError) as err:
            raise OutputError(f"{path} is not a demo state file ({type(err).__name__}: {err})") from err

    def save(self, out: Path) -> None:
        tmp = out / f".{STATE_FILE}.tmp"
        tmp.write_text(json.dumps({"config": self.config, "done": self.done}, indent=2) + "\n")
        tmp.replace(out / STATE_FILE)


def _config_dict(cfg: DemoConfig) -> dict[str, object]:
    """The configuration as JSON would give it back (tuples as lists), for the resume check."""
    doc: dict[str, object] = json.loads(json.dumps(dataclasses.asdict(cfg)))
    return doc


def run_demo(out: str | Path, config: DemoConfig | None = None, *, force: bool = False, resume: bool = False,
             stages: Sequence[Stage] = DEMO_STAGES, log: Callable[[str], None] = print) -> dict[str, StageRecord]:
    """Run the demo's ``stages`` into ``out``, or with ``resume`` continue an incomplete run there.

    A new run takes ``out`` new, empty, or an earlier complete demo output (kept as ``out.previous`` if this run
    fails, deleted when it succeeds); ``force`` replaces anything else, also an incomplete run.

    Args:
        config: the sizes (default :class:`DemoConfig`); with ``resume``, None takes the recorded one, and a given
            one must equal it.
        stages: the stages to run, in order (tests pass shorter lists; the demo's are :data:`DEMO_STAGES`).
        log: where the stage headers and the kept/resume message go.

    Returns:
        stage name -> the JSON record the stage returned (the last stage's report is in ``out``).

    Raises:
        DemoInterrupted: a stage failed (the cause is chained) or an interrupt arrived; ``out`` is kept and marked.
        OutputError: ``out`` is locked by another process (names its PID), holds something that is not a demo output
            (and not ``force``), or, with ``resume``, is not an incomplete demo or its configuration differs.
        FileNotFoundError: ``resume`` and no demo_state.json in ``out``.
    """
    target = Path(out)
    with output_lock(target):
        if resume:
            state = _State.load(target)
            if config is not None and _config_dict(config) != state.config:
                diff = sorted(k for k, v in _config_dict(config).items() if state.config.get(k) != v)
                raise OutputError(f"--resume {target}: the configuration differs from the recorded one in {diff} "
                                  f"(recorded in {target / STATE_FILE}); resume without changing it")
            if incomplete(target) is None and all(s.name in state.done for s in stages):
                raise OutputError(f"--resume {target}: the run there is complete; nothing to resume")
            recorded: dict[str, Any] = {k: tuple(v) if isinstance(v, list) else v for k, v in state.config.items()}
            cfg = DemoConfig(**recorded)
            return _run_stages(target, cfg, state, stages, log)
        cfg = config or DemoConfig()
        with output_dir(target, "demo", force=force, in_place=True, keep_on_failure=True) as work:
            (work / "logs").mkdir()
            state = _State(config=_config_dict(cfg))
            state.save(work)
            return _run_stages(work, cfg, state, stages, log)


def _run_stages(out: Path, cfg: DemoConfig, state: _State, stages: Sequence[Stage],
                log: Callable[[str], None]) -> dict[str, StageRecord]:
    t0 = time.perf_counter()
    ctx = StageContext(out, cfg, {name: entry["result"] for name, entry in state.done.items()}, log)
    for k, stage in enumerate(stages, 1):
        if stage.name in state.done:
            log(f"\n[{k}/{len(stages)}] {stage.title(cfg)}: done in an earlier run "
                f"({state.done[stage.name]['seconds']:.0f} s), kept")
            continue
        _set_aside_partial(out, stage)
        log(f"\n[{k}/{len(stages)}] {stage.title(cfg)}  (t = {time.perf_counter() - t0:.0f} s)")
        started = time.perf_counter()
        ctx.stage_seconds = {f"{i}_{s.name}": state.done[s.name]["seconds"]
                             for i, s in enumerate(stages, 1) if s.name in state.done}
        try:
            result = stage.run(ctx)
        except BaseException as err:
            kept = _kept(out, stage, err, log)
            if isinstance(err, KeyboardInterrupt):
                raise  # Ctrl-C, SIGTERM, SIGHUP: the CLI's exit status says which
            raise kept from err
        state.done[stage.name] = {"seconds": time.perf_counter() - started, "result": result}
        state.save(out)
        ctx.results[stage.name] = result
    (out / INCOMPLETE).unlink(missing_ok=True)
    log(f"\ndone in {time.perf_counter() - t0:.0f} s (this run).")
    return ctx.results


def _set_aside_partial(out: Path, stage: Stage) -> None:
    """Move what an earlier, unfinished attempt of ``stage`` wrote to ``out``/.partial/<stage>-<n>/ (kept)."""
    found = sorted({p for pattern in stage.owns for p in out.glob(pattern)})
    if not found:
        return
    n = 1
    while (out / ".partial" / f"{stage.name}-{n}").exists():
        n += 1
    dest = out / ".partial" / f"{stage.name}-{n}"
    for path in found:
        target = dest / path.relative_to(out)
        target.parent.mkdir(parents=True, exist_ok=True)
        path.rename(target)


def _kept(out: Path, stage: Stage, err: BaseException, log: Callable[[str], None]) -> DemoInterrupted:
    """Mark ``out`` incomplete after ``stage`` stopped with ``err``; print what was kept and how to resume."""
    if isinstance(err, KeyboardInterrupt):
        signame = getattr(err, "signum", None)
        reason = f"interrupted by {err}" if signame is not None else "interrupted (Ctrl-C, SIGINT)"
    else:
        reason = f"failed: {type(err).__name__}: {err}"
    logs = sorted(str(p.relative_to(out)) for p in out.rglob("*.log") if ".partial" not in p.parts)
    resume = f"deadzone-id demo --resume {out}"
    marker = mark_incomplete(out, stage.name, reason, logs, resume)
    message = (f"stage {stage.name!r} {reason}. Kept {out} (marked by {marker.name}; finished stages are not run "
               f"again); logs: {', '.join(logs) or 'none'}. Continue with: {resume}")
    log(f"\ndeadzone-id demo: {message}")
    return DemoInterrupted(message, out, stage.name, err)
