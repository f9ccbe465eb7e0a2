"""``deadzone-id demo`` and ``deadzone-id demo-real``: the main job end to end (argument parsing and printing).

``demo`` runs the stages of :mod:`deadzone_id_ros.experiments.demo.stages` on the simulated 3-DOF arm, or with
``--robot NAME|FILE`` on the arm of a robot profile (every stage, the live ones through ``robot:=``), (offline
simulation, a live ROS 2 recording, compare, closed loop, report) through :func:`deadzone_id_ros.experiments.demo.run.
run_demo`, which never loses work: a failed or interrupted run keeps its folder marked incomplete (INCOMPLETE.json
names the stage, the reason and the logs), ``--resume DIR`` continues it from the last finished stage, and a lock
refuses a second run into the same folder, naming the process that holds it.

``demo-real`` converts the DFKI double-pendulum CSVs and runs the comparison on them and on the KUKA LWR4+ bag
(every default method and ``hybrid_history``, :func:`real_methods`), the rigid-body methods on the bundled URDFs of
those robots.
Every stage calls the library function behind an ordinary command a user could run by hand.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..experiments.demo.stages import DemoConfig
from ._check import add_check_argument, robot_check_first

__all__ = ["DemoConfig", "RealRun", "real_methods", "register", "run", "run_demo_real", "run_real"]

if TYPE_CHECKING:  # the library is imported where it is used, so that `deadzone-id --help` stays fast
    from ..experiments.compare.results import CompareReport


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
    from ..experiments.compare.run import quick_config, run_compare
    from ..robot import parse_joint_map
    from ..training.config import load_train_config
    from ..training.pipeline import load_inputs

    cfg = load_train_config().with_overrides(block_seconds=run.block_seconds)
    if quick:
        cfg = quick_config(cfg)
    inputs = load_inputs(list(run.bags), DatasetConfig(savgol_window_s=run.savgol_window_s), simulator="no",
                         urdf=run.urdf, joint_map=parse_joint_map(run.joint_map), log=_log)
    return run_compare(inputs, out, cfg, methods=real_methods(), log=_log)


def real_methods() -> list[str]:
    """The methods ``demo-real`` compares: every method fitted by default, ``rbd_consistent`` (the rigid body with
    every body physically consistent, which ``export --urdf`` can write for a URDF consumer) and ``hybrid_history``,
    the opt-in residual over the recent joint states (there is no controller to run on a recording, so an
    offline-only method competes like the others)."""
    from ..models.methods import METHODS

    return [name for name, m in METHODS.items() if m.by_default] + ["rbd_consistent", "hybrid_history"]


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
    from ..experiments.demo.report import real_markdown

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
                   help="output directory: new, empty, or an earlier demo output (replaced when the run succeeds; "
                   "a failed or interrupted run keeps it, marked by INCOMPLETE.json)")
    p.add_argument("--resume", type=Path, default=None, metavar="DIR",
                   help="continue the incomplete demo in DIR from its last finished stage (same configuration)")
    p.add_argument("--force", action="store_true",
                   help="replace --out even if it is not an earlier demo output, or holds an incomplete one")
    p.add_argument("--quick", action="store_true",
                   help="smaller data and shorter training (about 3 minutes; under-trained models)")
    p.add_argument("--robot", default="", metavar="NAME|FILE",
                   help="robot profile (`deadzone-id robot show`) every stage runs: simulate, the live recording "
                   "(robot:= of the launch files), compare (rbd and hybrid on its URDF) and the closed loop, in "
                   "process and live (default: the bundled arm)")
    add_check_argument(p)
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
    """Run (or with ``--resume`` continue) the demo; returns 0 (errors propagate as DeadzoneIdError, printed by the
    CLI; an interrupt as KeyboardInterrupt, after the folder was marked and the resume command printed)."""
    import dataclasses

    from ..experiments.demo.run import run_demo

    if args.robot:
        from ..robot_configs import load_robot

        load_robot(args.robot)  # a bad profile fails here, before any output folder is made
        if args.resume is None:
            robot_check_first(args.robot, args.no_check)  # an untrustworthy arm stops here too
    if args.resume is not None:
        given = DemoConfig.quick_run() if args.quick else None
        run_demo(args.resume, dataclasses.replace(given, robot=args.robot, robot_check=not args.no_check)
                 if given else None, resume=True)
    else:
        cfg = DemoConfig.quick_run() if args.quick else DemoConfig()
        run_demo(args.out, dataclasses.replace(cfg, robot=args.robot, robot_check=not args.no_check), force=args.force)
    return 0


def run_real(args: argparse.Namespace) -> int:
    """Run demo-real; returns 0."""
    run_demo_real(args.out, args.real_dir or _default_real_dir(), quick=args.quick, force=args.force)
    return 0
