"""``deadzone-id demo`` and ``deadzone-id demo-real``: the main job end to end.

``demo`` runs, on the simulated 3-DOF arm:

1. bulk data from the offline simulator (what ``deadzone-id simulate`` does, several simulated minutes, no DDS);
2. a live ROS 2 run through ``sim_feedforward.launch.yaml``: sim_arm, excitation, feedforward_controller (pd_dob)
   and the recorder as separate processes over DDS, the path a user takes on real hardware;
3. the comparison of ``deadzone-id compare`` on all recordings (every method, several seeds) and an ONNX export of
   the best learned model;
4. the closed-loop comparison of ``deadzone-id closed-loop``: pd_dob and ctc_dob with the URDF's nominal rigid body,
   the identified rigid body, the masked, conventional and picked models, each on held-out references (several
   seeds, in-process, default and weak DOB), plus one short live run per controller over DDS as the check that the
   nodes behave like the in-process loop;
5. ``DIR/report.md`` and ``DIR/report.json``.

``demo-real`` converts the DFKI double-pendulum CSVs and runs the comparison on them and on the KUKA LWR4+ bag, with
rbd and hybrid on the bundled URDFs of those robots.
Every stage calls the library function behind an ordinary command a user could run by hand.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

__all__ = ["DemoConfig", "RealRun", "register", "run", "run_demo", "run_demo_real", "run_real"]

if TYPE_CHECKING:  # the library is imported where it is used, so that `deadzone-id --help` stays fast
    from ..experiments.closed_loop_results import ClosedLoopRun
    from ..experiments.compare_results import CompareReport
    from ..experiments.demo_results import DemoReport


@dataclass(frozen=True)
class DemoConfig:
    """Sizes of the demo's stages.

    Attributes:
        sim_seeds: excitation/noise seeds of the offline-simulated episodes (one bag each).
        sim_duration: simulated seconds per offline episode [s].
        live_duration: excitation length of the live recording [s].
        live_seed: excitation seed of the live recording.
        closed_loop_seeds: held-out reference seeds of the closed-loop comparison (in no training data).
        closed_loop_duration: in-process closed-loop run per seed and controller [s].
        closed_loop_live_duration: the live closed-loop run per controller over DDS (first seed) [s].
        weak_dob_fraction: the weak-DOB setting's cutoff as a fraction of the default, in (0, 1).
        compare_seeds: training seeds per method.
        quick: shorter training (``compare --quick``): under-trained models, said so in the report.
    """

    sim_seeds: tuple[int, ...] = (1, 2, 3, 4, 5)
    sim_duration: float = 60.0
    live_duration: float = 20.0
    live_seed: int = 100
    closed_loop_seeds: tuple[int, ...] = (999, 1000, 1001)
    closed_loop_duration: float = 6.0
    closed_loop_live_duration: float = 4.0
    weak_dob_fraction: float = 0.2
    compare_seeds: int = 3
    quick: bool = False

    def __post_init__(self) -> None:
        if not self.sim_seeds:
            raise ValueError("sim_seeds is empty")
        if not self.closed_loop_seeds:
            raise ValueError("closed_loop_seeds is empty")
        for name in ("sim_duration", "live_duration", "closed_loop_duration", "closed_loop_live_duration"):
            if not getattr(self, name) > 0:
                raise ValueError(f"{name} = {getattr(self, name)} must be > 0 s")
        if not 0 < self.weak_dob_fraction < 1:
            raise ValueError(f"weak_dob_fraction = {self.weak_dob_fraction} must be in (0, 1)")
        for seed in self.closed_loop_seeds:
            if seed in self.sim_seeds or seed == self.live_seed:
                raise ValueError(f"closed_loop_seed {seed} must differ from the training seeds")

    @classmethod
    def quick_run(cls) -> DemoConfig:
        """The ``--quick`` sizes (about 2 minutes on 2 cores; the models are under-trained)."""
        return cls(sim_seeds=(1, 2), sim_duration=30.0, live_duration=8.0, closed_loop_duration=3.0,
                   closed_loop_live_duration=3.0, compare_seeds=1, quick=True)


class _Stages:
    """Prints numbered stage headers with elapsed time."""

    def __init__(self, total: int) -> None:
        self.total, self.k, self.t0 = total, 0, time.perf_counter()
        self.times: dict[str, float] = {}  # "<n>_<first words>" -> wall time of each finished stage [s]
        self._open: tuple[str, float] | None = None

    def start(self, text: str) -> None:
        now = time.perf_counter()
        if self._open is not None:
            self.times[self._open[0]] = now - self._open[1]
        self.k += 1
        self._open = (f"{self.k}_{text.split(':')[0].split(' (')[0].replace(' ', '_')}", now)
        print(f"\n[{self.k}/{self.total}] {text}  (t = {time.perf_counter() - self.t0:.0f} s)", flush=True)

    @property
    def elapsed(self) -> float:
        return time.perf_counter() - self.t0


def _log(message: str) -> None:
    print(message, file=sys.stderr)


def _compare(bags: list[Path], out: Path, *, quick: bool, seeds: int | None = None, simulator: str = "auto",
             block_seconds: float | None = None) -> CompareReport:
    """What ``deadzone-id compare --bag BAGS --out OUT [--quick] [--seeds N] [--simulator S] [--block-seconds B]``
    does with the bundled training configuration."""
    from ..experiments.compare import compare_config, run_compare
    from ..training.config import load_train_config
    from ..training.pipeline import load_inputs

    cfg = compare_config(load_train_config().with_overrides(block_seconds=block_seconds), quick=quick, seeds=seeds)
    inputs = load_inputs(bags, simulator=simulator, log=_log)
    return run_compare(inputs, out, cfg, log=_log)


def _simulate_stage(cfg: DemoConfig, data: Path) -> list[Path]:
    from ..sim.record import simulate_bag

    bags = []
    for seed in cfg.sim_seeds:
        result = simulate_bag(cfg.sim_duration, seed, data / f"sim_seed{seed}", progress=True)
        print(f"wrote {result.path}: {len(result.recording.state_t_ns)} samples, {cfg.sim_duration:g} s simulated "
              f"in {result.sim_seconds:.1f} s")
        bags.append(result.path)
    return bags


def _live_stage(cfg: DemoConfig, out: Path) -> Path:
    from ..data.dataset import DatasetConfig
    from ..data.inspect import format_report, inspect_bag
    from ..errors import DataError
    from ..launching.live import live_run
    from ..training.config import load_train_config

    bag = live_run(out / "data" / "live", {"mode": "pd_dob", "model": "rbd", "seed": str(cfg.live_seed)},
                   cfg.live_duration, out / "logs" / "live_recording.log")
    print(f"recorded {bag}")
    info = inspect_bag(bag, DatasetConfig(), load_train_config().dead_zone)
    print(format_report(info))
    if not info["trainable"]:
        raise DataError(f"the live recording {bag} cannot be trained on: {info['why_not']}")
    return bag


def _compare_stage(cfg: DemoConfig, bags: list[Path], compare_dir: Path) -> tuple[CompareReport, str]:
    from ..errors import DataError
    from ..models.export import export_artifact_onnx

    # every bag here comes from the simulated arm (the live one through sim_arm): report the noise floor too
    report = _compare(bags, compare_dir, quick=cfg.quick, seeds=cfg.compare_seeds, simulator="yes")
    best = report.best_learned()
    if best is None:
        raise DataError("compare produced no learned model to export")
    export = export_artifact_onnx(compare_dir / "models" / best)
    print(f"wrote {export.path}; onnxruntime vs numpy: max |diff| = {export.max_abs_diff:.2e} N*m")
    if not export.ok:
        raise DataError(f"ONNX export check failed: onnxruntime differs by {export.max_abs_diff:.3g} N*m")
    print(f"best learned model: {best} -> {compare_dir / 'models' / best}")
    return report, best


def _closed_loop_stage(cfg: DemoConfig, out: Path, compare_dir: Path) -> ClosedLoopRun:
    from ..experiments.closed_loop import run_closed_loop
    from ..experiments.plots import closed_loop_plot

    res = run_closed_loop(compare_dir, out, cfg.closed_loop_seeds, cfg.closed_loop_duration, cfg.weak_dob_fraction,
                          cfg.closed_loop_live_duration, log=print)
    if res.live:
        closed_loop_plot(res.live, out / "plots" / "closed_loop.png")
    return res


def run_demo(out: str | Path, config: DemoConfig | None = None, *, force: bool = False) -> DemoReport:
    """Run the whole demo into ``out`` (new, empty, or an earlier demo output, which is replaced only when the run
    succeeds; ``force`` replaces anything else; see :func:`deadzone_id_ros.outputs.output_dir`).

    Returns:
        the report, also written to ``out``/report.json (:meth:`DemoReport.to_dict`) and ``out``/report.md.

    Raises:
        DeadzoneIdError: a stage failed (the message names the stage and where its log is).
        OutputError: ``out`` holds something that is not a demo output (and not ``force``).
    """
    from ..outputs import output_dir

    with output_dir(out, "demo", force=force, in_place=True) as work:
        return _run_demo(work, config or DemoConfig())


def _run_demo(out: Path, cfg: DemoConfig) -> DemoReport:
    from ..experiments.demo_report import demo_markdown
    from ..experiments.demo_results import DemoReport

    (out / "logs").mkdir(parents=True)
    stages = _Stages(5)
    stages.start(f"offline simulation: {len(cfg.sim_seeds)} episodes x {cfg.sim_duration:g} s (deadzone-id simulate)")
    sim_bags = _simulate_stage(cfg, out / "data")
    stages.start(f"live ROS 2 recording: sim_feedforward.launch.yaml, pd_dob, {cfg.live_duration:g} s excitation "
                 "(sim_arm, excitation, feedforward_controller, recorder as processes over DDS; simulated time, "
                 "lockstep)")
    live_bag = _live_stage(cfg, out)
    stages.start("compare every method on all recordings (deadzone-id compare)")
    compare_dir = out / "compare"
    compare, best = _compare_stage(cfg, [*sim_bags, live_bag], compare_dir)
    stages.start(f"closed loop: seeds {list(cfg.closed_loop_seeds)} x {cfg.closed_loop_duration:g} s in-process, "
                 f"default and weak DOB, one live run of {cfg.closed_loop_live_duration:g} s per controller over DDS "
                 "(deadzone-id closed-loop)")
    closed = _closed_loop_stage(cfg, out, compare_dir)
    stages.start("report")
    report = DemoReport(config=dataclasses.asdict(cfg), simulated_bags=[str(b) for b in sim_bags],
                        live_bag=str(live_bag), compare_dir=str(compare_dir), compare=compare, best_learned=best,
                        closed_loop=closed.summaries, closed_loop_weak_dob=closed.summaries_weak,
                        closed_loop_live=closed.live, closed_loop_settings=closed.settings,
                        stage_seconds=stages.times, seconds=stages.elapsed)
    (out / "report.json").write_text(json.dumps(report.to_dict(), indent=2) + "\n")
    (out / "report.md").write_text(demo_markdown(report, out))
    print("stage times [s]: " + ", ".join(f"{k} {v:.0f}" for k, v in stages.times.items()))
    print(f"\ndone in {stages.elapsed:.0f} s. Read {out / 'report.md'} (plots in {out / 'plots'} and "
          f"{compare_dir / 'plots'}).")
    return report


DFKI_COLUMNS = ("shoulder:pos=pos_meas1,vel=vel_meas1,effort=tau_meas1",
                "elbow:pos=pos_meas2,vel=vel_meas2,effort=tau_meas2")


@dataclass(frozen=True)
class RealRun:
    """How ``demo-real`` runs ``compare`` on one real recording.

    Attributes:
        name: the recording's name (file stem): the folder of its report under the output directory.
        title: one line for report.md.
        bags: the bag(s) to compare on.
        urdf: the robot model for rbd/hybrid (a name from ``deadzone-id robots`` or a file).
        joint_map: ``--joint-map`` items (bag_name:urdf_name), empty where the names agree.
        block_seconds: split block length [s], long enough that the guard at block edges (the Savitzky–Golay
            reach) drops only a few percent.
        savgol_window_s: Savitzky–Golay window of ddq [s].
    """

    name: str
    title: str
    bags: tuple[Path, ...]
    urdf: str
    joint_map: tuple[str, ...] = ()
    block_seconds: float = 2.0
    savgol_window_s: float = 0.1


def _convert_dfki(csvs: list[Path], out: Path) -> list[RealRun]:
    """Convert the DFKI CSVs to rosbag2 (as ``deadzone-id convert``); one :class:`RealRun` per design."""
    from ..data.convert import convert_csv, parse_joint_spec

    runs = []
    for csv in csvs:
        bag = out / "data" / csv.stem
        _, rec = convert_csv(csv, bag, "time", [parse_joint_spec(s) for s in DFKI_COLUMNS],
                             metadata={"robot": "dfki_double_pendulum", "notes": ""})
        print(f"wrote {bag}: {len(rec.state_t_ns)} /joint_states messages for joints {list(rec.joint_names)}")
        design = csv.stem.split("_")[1]
        # the bundled URDF names its joints shoulder/elbow like DFKI_COLUMNS: no joint map needed
        runs.append(RealRun(f"dfki_{csv.stem}", f"DFKI double pendulum, design {design} (2 quasi-direct-drive "
                            f"joints, measured torque): `{csv.name}`", (bag,),
                            f"dfki_double_pendulum_{design.lower()}", block_seconds=1.0))
    return runs


def _compare_real(run: RealRun, out: Path, *, quick: bool) -> CompareReport:
    """What ``deadzone-id compare --bag BAGS --out OUT --simulator no --urdf U [--joint-map ...] --block-seconds B
    --savgol-window W [--quick]`` does with the bundled training configuration."""
    from ..data.dataset import DatasetConfig
    from ..experiments.compare import quick_config, run_compare
    from ..robot import parse_joint_map
    from ..training.config import load_train_config
    from ..training.pipeline import load_inputs

    cfg = load_train_config().with_overrides(block_seconds=run.block_seconds)
    if quick:
        cfg = quick_config(cfg)
    inputs = load_inputs(list(run.bags), DatasetConfig(savgol_window_s=run.savgol_window_s), simulator="no",
                         urdf=run.urdf, joint_map=parse_joint_map(run.joint_map), log=_log)
    return run_compare(inputs, out, cfg, log=_log)


def run_demo_real(out: str | Path, real_dir: str | Path, quick: bool = False, *,
                  force: bool = False) -> dict[str, CompareReport]:
    """Run the comparison on the real recordings in ``real_dir``: the KUKA LWR4+ bag and each DFKI pendulum design,
    with rbd and hybrid on the bundled URDFs of those robots (``kuka_lwr4plus``, ``dfki_double_pendulum_a0``/``_c0``).

    The recordings are short (41 s and 10 s), so the splits use short time blocks (2 s and 1 s); ddq uses a 0.1 s
    Savitzky–Golay window (the KUKA bag is 100 Hz, a 0.05 s window would be 5 samples).

    Returns:
        {recording name: report}, each also in ``out``/<recording name>/report.json (the name is the file stem,
        ``kuka_lwr4_fri`` and ``dfki_design_<X>_...``), plus ``out``/report.md with every table.

    Raises:
        FileNotFoundError: a recording is missing from ``real_dir``.
        DeadzoneIdError: a stage failed.
        OutputError: ``out`` holds something that is not a demo-real output (and not ``force``).
    """
    from ..outputs import check_output_dir, output_dir

    check_output_dir(out, "demo-real", force=force)
    real = Path(real_dir)
    kuka = real / "kuka_lwr4_fri.bag"
    csvs = sorted((real / "dfki_double_pendulum").glob("*.csv"))
    if not kuka.is_file():
        raise FileNotFoundError(f"{kuka} does not exist (expected the shared real recordings in {real})")
    if not csvs:
        raise FileNotFoundError(f"no DFKI CSV files in {real / 'dfki_double_pendulum'}")
    with output_dir(out, "demo-real", force=force, in_place=True) as work:
        return _run_demo_real(work, kuka, csvs, quick)


def _run_demo_real(out: Path, kuka: Path, csvs: list[Path], quick: bool) -> dict[str, CompareReport]:
    from ..experiments.demo_report import real_markdown

    stages = _Stages(3 + len(csvs))
    stages.start(f"convert {len(csvs)} DFKI double-pendulum CSVs to rosbag2 (deadzone-id convert)")
    runs = [RealRun(kuka.stem, f"KUKA LWR4+ (7 joints, link-side joint torque sensors): `{kuka.name}`", (kuka,),
                    "kuka_lwr4plus", block_seconds=2.0), *_convert_dfki(csvs, out)]
    reports: dict[str, CompareReport] = {}
    for run in runs:
        stages.start(f"compare on {run.title} (URDF {run.urdf})")
        reports[run.name] = _compare_real(run, out / run.name, quick=quick)
    stages.start("report")
    (out / "report.md").write_text(real_markdown(reports, {run.name: run.title for run in runs}))
    print(f"\ndone in {stages.elapsed:.0f} s. Read {out / 'report.md'}.")
    return reports


def _default_real_dir() -> Path:
    """../shared/data/real next to the source checkout or the current directory, whichever exists."""
    here = Path(__file__).resolve().parents[2]
    for base in (Path.cwd(), here):
        candidate = base.parent / "shared" / "data" / "real"
        if candidate.is_dir():
            return candidate
    return Path.cwd().parent / "shared" / "data" / "real"


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``demo`` and ``demo-real`` subcommands."""
    p = subparsers.add_parser(
        "demo", help="the main job end to end on the simulated arm (data, live ROS 2 run, compare, closed loop)",
        description="Simulate data, record a live ROS 2 run on the simulated arm, train and compare every method, "
        "run the controllers in closed loop on held-out references, and write DIR/report.md. About 7 minutes on "
        "2 cores (--quick: about 2; its models are under-trained).")
    p.add_argument("--out", type=Path, default=Path("out/demo"),
                   help="output directory: new, empty, or an earlier demo output (replaced when the run succeeds)")
    p.add_argument("--force", action="store_true", help="replace --out even if it is not an earlier demo output")
    p.add_argument("--quick", action="store_true",
                   help="smaller data and shorter training (about 2 minutes; under-trained models)")
    p.set_defaults(func=run)
    r = subparsers.add_parser(
        "demo-real", help="compare every method on the real recordings (KUKA LWR4+ bag, DFKI double pendulum CSVs)",
        description="Convert the DFKI CSVs, run compare on them and on the KUKA LWR4+ bag, write DIR/report.md.")
    r.add_argument("--out", type=Path, default=Path("out/real"),
                   help="output directory: new, empty, or an earlier demo-real output (replaced when the run succeeds)")
    r.add_argument("--force", action="store_true", help="replace --out even if it is not an earlier demo-real output")
    r.add_argument("--real-dir", type=Path, default=None,
                   help="folder with kuka_lwr4_fri.bag and dfki_double_pendulum/ (default: ../shared/data/real)")
    r.add_argument("--quick", action="store_true", help="shorter training")
    r.set_defaults(func=run_real)


def run(args: argparse.Namespace) -> int:
    """Run the demo; returns 0 (errors propagate as DeadzoneIdError, printed by the CLI)."""
    run_demo(args.out, DemoConfig.quick_run() if args.quick else DemoConfig(), force=args.force)
    return 0


def run_real(args: argparse.Namespace) -> int:
    """Run demo-real; returns 0."""
    run_demo_real(args.out, args.real_dir or _default_real_dir(), quick=args.quick, force=args.force)
    return 0
