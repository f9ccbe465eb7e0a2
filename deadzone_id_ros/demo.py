"""The main job end to end: ``deadzone-id demo`` (simulated arm) and ``deadzone-id demo-real`` (real recordings).

``demo`` runs, on the simulated 3-DOF arm:

1. bulk data from the offline simulator (``deadzone-id simulate``, several simulated minutes, no DDS);
2. a live ROS 2 run through ``sim_feedforward.launch.yaml``: sim_arm, excitation, feedforward_controller (pd_dob)
   and the recorder as separate processes over DDS, the path a user takes on real hardware;
3. ``deadzone-id compare`` on all recordings (every method, several seeds) and an ONNX export of the best learned
   model;
4. a live closed-loop comparison on a held-out excitation reference: pd_dob, ctc_dob with the URDF rigid-body model,
   ctc_dob with the masked-loss model and ctc_dob with the conventional model — tracking RMSE per joint and torque;
5. ``DIR/report.md`` and ``DIR/report.json``.

``demo-real`` converts the DFKI double-pendulum CSVs and runs ``compare`` on them and on the KUKA LWR4+ bag.
Every stage is an ordinary command a user could run by hand; the demo only strings them together.
"""

from __future__ import annotations

import json
import shutil
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from .errors import DataError, DeadzoneIdError
from .stamps import ns_to_s

__all__ = ["DemoConfig", "closed_loop_metrics", "run_demo", "run_demo_real"]


@dataclass(frozen=True)
class DemoConfig:
    """Sizes of the demo's stages.

    Attributes:
        sim_seeds: excitation/noise seeds of the offline-simulated episodes (one bag each).
        sim_duration: simulated seconds per offline episode [s].
        live_duration: excitation length of the live recording [s].
        live_seed: excitation seed of the live recording.
        closed_loop_duration: excitation length of each closed-loop run [s].
        closed_loop_seed: seed of the held-out reference (not used for any training data).
        compare_seeds: training seeds per method.
        quick: pass ``--quick`` to compare (shorter training).
    """

    sim_seeds: tuple[int, ...] = (1, 2, 3, 4, 5)
    sim_duration: float = 60.0
    live_duration: float = 30.0
    live_seed: int = 100
    closed_loop_duration: float = 20.0
    closed_loop_seed: int = 999
    compare_seeds: int = 3
    quick: bool = False

    def __post_init__(self) -> None:
        if not self.sim_seeds:
            raise ValueError("sim_seeds is empty")
        for name in ("sim_duration", "live_duration", "closed_loop_duration"):
            if not getattr(self, name) > 0:
                raise ValueError(f"{name} = {getattr(self, name)} must be > 0 s")
        if self.closed_loop_seed in self.sim_seeds or self.closed_loop_seed == self.live_seed:
            raise ValueError(f"closed_loop_seed {self.closed_loop_seed} must differ from the training seeds")

    @classmethod
    def quick_run(cls) -> "DemoConfig":
        """The ``--quick`` sizes (under two minutes on 2 cores)."""
        return cls(sim_seeds=(1, 2), sim_duration=30.0, live_duration=8.0, closed_loop_duration=6.0,
                   compare_seeds=1, quick=True)


# Closed-loop runs of stage 4: label -> (controller mode, model, method whose artifact is used or None).
CLOSED_LOOP_RUNS: tuple[tuple[str, str, str, str | None], ...] = (
    ("pd_dob", "pd_dob", "none", None),
    ("ctc_dob + rbd (URDF)", "ctc_dob", "rbd", None),
    ("ctc_dob + masked", "ctc_dob", "learned", "masked"),
    ("ctc_dob + conventional", "ctc_dob", "learned", "conventional"),
)


class _Stages:
    """Prints numbered stage headers with elapsed time."""

    def __init__(self, total: int) -> None:
        self.total, self.k, self.t0 = total, 0, time.perf_counter()

    def start(self, text: str) -> None:
        self.k += 1
        print(f"\n[{self.k}/{self.total}] {text}  (t = {time.perf_counter() - self.t0:.0f} s)", flush=True)

    @property
    def elapsed(self) -> float:
        return time.perf_counter() - self.t0


def _cli(argv: Sequence[str]) -> None:
    """Run one ``deadzone-id`` subcommand in-process; raise DeadzoneIdError if it fails."""
    from .cli.main import main

    status = main([str(a) for a in argv])
    if status != 0:
        raise DeadzoneIdError(f"`deadzone-id {' '.join(map(str, argv))}` failed with status {status}")


_RUN_COUNTER = {"n": 0}
LOCKSTEP_STALL = "lockstep: no effort command"


def _next_domain_id() -> str:
    """A ROS_DOMAIN_ID of its own for each live run (10..99, offset from the caller's), so that no participant of a
    previous run, still known to DDS discovery, can reach the next one."""
    import os

    base = int(os.environ.get("ROS_DOMAIN_ID", "0") or 0)
    _RUN_COUNTER["n"] += 1
    return str((base - 10 + _RUN_COUNTER["n"]) % 90 + 10)


def _live_run(out_dir: Path, args: dict[str, str], seconds: float, log: Path, attempts: int = 2) -> Path:
    """Run sim_feedforward.launch.yaml until ``seconds`` [s] of excitation have been tracked; return the episode bag.

    The simulator owns time (``use_sim_time:=true``) and runs in lockstep with the controller, so the result does
    not depend on how busy the machine is; wall time is at least the simulated time. Each attempt runs in its own
    ROS domain. If the controller stops answering (sim_arm reports lockstep stalls), the attempt is abandoned and
    run again once, and the log says so.

    Raises:
        LaunchError: a node died; DataError: the excitation did not finish in time or nothing was recorded.
    """
    last_error: DataError | None = None
    for attempt in range(1, attempts + 1):
        run_dir = out_dir if attempt == 1 else out_dir.with_name(f"{out_dir.name}_retry{attempt - 1}")
        run_log = log if attempt == 1 else log.with_name(f"{log.stem}_retry{attempt - 1}{log.suffix}")
        try:
            return _live_run_once(run_dir, args, seconds, run_log)
        except DataError as err:
            last_error = err
            print(f"  live run failed ({err}); {'retrying' if attempt < attempts else 'giving up'}", flush=True)
    assert last_error is not None
    raise last_error


def _live_run_once(out_dir: Path, args: dict[str, str], seconds: float, log: Path) -> Path:
    from .launching import LaunchedGraph

    out_dir.mkdir(parents=True, exist_ok=True)
    horizon_wait = 4.0  # wall seconds after the excitation's last window (it covers the final 2 s of motion)
    launch_args = {"output_dir": str(out_dir), "start_delay": "1.0", "duration": str(seconds),
                   "use_sim_time": "true", "lockstep": "true", **args}
    timeout = 60.0 + 5.0 * seconds
    env = {"ROS_DOMAIN_ID": _next_domain_id()}
    with log.open("w") as sink, LaunchedGraph("sim_feedforward.launch.yaml", launch_args, sink=sink, env=env) as graph:
        t0 = time.monotonic()
        while "last window published" not in graph.output("excitation"):
            graph.raise_if_died()
            if graph.output("sim_arm").count(LOCKSTEP_STALL) >= 5:
                raise DataError(f"the controller stopped answering the simulator (lockstep stalls); see {log}")
            if time.monotonic() - t0 > timeout:
                raise DataError(f"the excitation did not finish within {timeout:.0f} s of wall time; see {log}")
            time.sleep(0.2)
        time.sleep(horizon_wait)
        graph.raise_if_died()
    episodes = sorted(p for p in out_dir.iterdir() if (p / "metadata.yaml").is_file())
    if not episodes:
        raise DataError(f"the live run recorded no episode under {out_dir}; see {log}")
    return episodes[-1]


def closed_loop_metrics(bag: Path) -> dict[str, Any]:
    """Tracking and effort figures of one closed-loop recording.

    The reference is the recorded reference topic (JointTrajectory windows, de-duplicated by time), interpolated at
    the /joint_states stamps inside the reference's time span.

    Returns:
        dict with ``tracking_rmse_per_joint`` (J,) [rad], ``tracking_rmse_mean`` [rad], ``max_abs_error_per_joint``
        (J,) [rad], ``effort_rms_per_joint`` (J,) [N·m] of the applied torque, ``samples`` and ``seconds``.

    Raises:
        DataError: the bag has no reference, or no /joint_states inside the reference's span.
    """
    from .data.bag import read_recording

    rec = read_recording(bag)
    if rec.reference_t_ns is None or len(rec.reference_t_ns) < 2:
        raise DataError(f"{bag}: no reference trajectory recorded, cannot measure tracking")
    t_ref, idx = np.unique(rec.reference_t_ns, return_index=True)
    q_ref = rec.reference_position[idx]
    t = rec.state_t_ns
    inside = (t >= t_ref[0]) & (t <= t_ref[-1])
    if inside.sum() < 10:
        raise DataError(f"{bag}: only {int(inside.sum())} /joint_states samples inside the reference's time span")
    ts = t[inside]
    err = np.stack([np.interp(ts, t_ref, q_ref[:, j]) for j in range(q_ref.shape[1])], axis=1) - rec.position[inside]
    return {
        "joint_names": list(rec.joint_names),
        "tracking_rmse_per_joint": np.sqrt(np.mean(err**2, axis=0)).tolist(),
        "tracking_rmse_mean": float(np.sqrt(np.mean(err**2))),
        "max_abs_error_per_joint": np.max(np.abs(err), axis=0).tolist(),
        "effort_rms_per_joint": np.sqrt(np.mean(rec.effort[inside] ** 2, axis=0)).tolist(),
        "samples": int(inside.sum()),
        "seconds": float(ns_to_s(ts[-1] - ts[0])),
    }


def _plot_closed_loop(results: dict[str, dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = list(results)
    joints = results[labels[0]]["joint_names"]
    x = np.arange(len(joints))
    width = 0.8 / len(labels)
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    for i, label in enumerate(labels):
        r = results[label]
        axes[0].bar(x + i * width, np.asarray(r["tracking_rmse_per_joint"]) * 1e3, width, label=label)
        axes[1].bar(x + i * width, r["effort_rms_per_joint"], width, label=label)
    for ax, title, unit in ((axes[0], "tracking RMSE (held-out reference)", "mrad"),
                            (axes[1], "applied torque RMS", "N·m")):
        ax.set_xticks(x + 0.4 - width / 2, joints)
        ax.set_title(title)
        ax.set_ylabel(unit)
        ax.grid(axis="y", alpha=0.3)
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _fmt_joints(values: Sequence[float], scale: float = 1.0, digits: int = 3) -> str:
    return " / ".join("n/a" if v is None else f"{v * scale:.{digits}f}" for v in values)


def _num(v: float | None, spec: str) -> str:
    return "n/a" if v is None else format(v, spec)


def _compare_table(report: dict) -> list[str]:
    joints = report["joint_names"]
    lines = [f"| method | torque RMSE per joint [N·m] ({' / '.join(joints)}) | mean ± std over seeds | "
             "normalized RMSE | usable data |", "|---|---|---|---|---|"]
    for name, m in report["methods"].items():
        lines.append(f"| {name} | {_fmt_joints(m['rmse_per_joint'], digits=4)} | {_num(m['rmse_mean'], '.4f')} ± "
                     f"{_num(m['rmse_mean_std'], '.4f')} | {_num(m['nrmse_mean'], '.3f')} | "
                     f"{_num(m['usable_fraction'], '.1%')} |")
    floor = report.get("noise_floor")
    if floor:
        lines.append(f"| *noise floor (simulator's own inverse dynamics)* | "
                     f"{_fmt_joints(floor['rmse_per_joint'], digits=4)} | {np.mean(floor['rmse_per_joint']):.4f} | | |")
    return lines


def _efficiency_table(eff: dict) -> list[str]:
    """Rows of the data-efficiency curve: training share, samples, mean RMSE and usable data of each method."""
    methods = [m for m in ("masked", "conventional") if m in eff]
    head = "| training data | samples | " + " | ".join(f"{m} RMSE [N·m] | {m} usable" for m in methods) + " |"
    lines = [head, "|" + "---|" * (2 + 2 * len(methods))]
    for k, frac in enumerate(eff.get("fractions", [])):
        cells = [f"{frac:.0%}", str(eff["train_samples"][k])]
        for m in methods:
            e = eff[m]
            std = e.get("rmse_mean_std", [None] * len(eff["fractions"]))[k]
            cells += [f"{_num(e['rmse_mean'][k], '.4f')} ± {_num(std, '.4f')}", str(e["usable_samples"][k])]
        lines.append("| " + " | ".join(cells) + " |")
    note = eff.get("usable_samples_note")
    return lines + (["", f"Usable: {note}."] if note else [])


def _best_learned(report: dict) -> str:
    learned = {m: e for m, e in report["methods"].items() if m in ("masked", "conventional", "mse_all", "hybrid")}
    if not learned:
        raise DataError("compare produced no learned model to export")
    return min(learned, key=lambda m: learned[m]["rmse_mean"])


def run_demo(out: str | Path, config: DemoConfig | None = None) -> dict[str, Any]:
    """Run the whole demo into ``out`` (created; an existing demo output there is replaced).

    Returns:
        the report dict also written to ``out``/report.json.

    Raises:
        DeadzoneIdError: a stage failed (the message names the stage and where its log is).
    """
    cfg = config or DemoConfig()
    out = Path(out)
    if out.exists():
        shutil.rmtree(out)
    (out / "logs").mkdir(parents=True)
    stages = _Stages(5)
    data = out / "data"

    stages.start(f"offline simulation: {len(cfg.sim_seeds)} episodes x {cfg.sim_duration:g} s (deadzone-id simulate)")
    sim_bags = []
    for seed in cfg.sim_seeds:
        bag = data / f"sim_seed{seed}"
        _cli(["simulate", "--duration", cfg.sim_duration, "--seed", seed, "--out", bag])
        sim_bags.append(bag)

    stages.start(f"live ROS 2 recording: sim_feedforward.launch.yaml, pd_dob, {cfg.live_duration:g} s excitation "
                 "(sim_arm, excitation, feedforward_controller, recorder as processes over DDS; simulated time, "
                 "lockstep)")
    live_bag = _live_run(data / "live", {"mode": "pd_dob", "model": "rbd", "seed": str(cfg.live_seed)},
                         cfg.live_duration, out / "logs" / "live_recording.log")
    print(f"recorded {live_bag}")
    _cli(["inspect", live_bag])

    stages.start("compare every method on all recordings (deadzone-id compare)")
    compare_dir = out / "compare"
    # every bag here comes from the simulated arm (the live one through sim_arm): report the noise floor too
    argv = ["compare", "--bag", *sim_bags, live_bag, "--out", compare_dir, "--seeds", cfg.compare_seeds,
            "--simulator", "yes"]
    _cli(argv + (["--quick"] if cfg.quick else []))
    compare = json.loads((compare_dir / "report.json").read_text())
    best = _best_learned(compare)
    _cli(["export", "--model", compare_dir / "models" / best, "--onnx"])
    print(f"best learned model: {best} -> {compare_dir / 'models' / best}")

    stages.start(f"live closed-loop comparison on a held-out reference (seed {cfg.closed_loop_seed}, "
                 f"{cfg.closed_loop_duration:g} s each)")
    closed: dict[str, dict] = {}
    for label, mode, model, method in CLOSED_LOOP_RUNS:
        if method is not None and method not in compare["methods"]:
            print(f"  {label}: skipped ({method} was not trained)")
            continue
        args = {"mode": mode, "model": model, "seed": str(cfg.closed_loop_seed)}
        if method is not None:
            args["model_path"] = str(compare_dir / "models" / method)
        slug = "".join(c if c.isalnum() else "_" for c in label.replace(" + ", "_")).strip("_")
        bag = _live_run(out / "closed_loop" / slug, args, cfg.closed_loop_duration, out / "logs" / f"closed_loop_{slug}.log")
        closed[label] = {"mode": mode, "model": model, "artifact": args.get("model_path"), "bag": str(bag),
                         **closed_loop_metrics(bag)}
        r = closed[label]
        print(f"  {label:24s} tracking RMSE [mrad] {_fmt_joints(r['tracking_rmse_per_joint'], 1e3, 2)}   "
              f"torque RMS [N·m] {_fmt_joints(r['effort_rms_per_joint'])}")
    (out / "plots").mkdir(exist_ok=True)
    if closed:
        _plot_closed_loop(closed, out / "plots" / "closed_loop.png")

    stages.start("report")
    report = {
        "config": asdict(cfg),
        "data": {"simulated_bags": [str(b) for b in sim_bags], "live_bag": str(live_bag)},
        "compare": {"dir": str(compare_dir), "best_learned": best, "methods": compare["methods"],
                    "noise_floor": compare.get("noise_floor"), "data_efficiency": compare.get("data_efficiency")},
        "closed_loop": closed,
        "seconds": stages.elapsed,
    }
    (out / "report.json").write_text(json.dumps(report, indent=2) + "\n")
    (out / "report.md").write_text(_demo_markdown(report, compare, out))
    print(f"\ndone in {stages.elapsed:.0f} s. Read {out / 'report.md'} (plots in {out / 'plots'} and "
          f"{compare_dir / 'plots'}).")
    return report


def _closed_loop_lines(closed: dict[str, dict]) -> list[str]:
    if not closed:
        return ["(no closed-loop run)"]
    joints = next(iter(closed.values()))["joint_names"]
    lines = [f"| controller | tracking RMSE [mrad] ({' / '.join(joints)}) | mean [mrad] | max error [mrad] | "
             "torque RMS [N·m] |", "|---|---|---|---|---|"]
    for label, r in closed.items():
        lines.append(f"| {label} | {_fmt_joints(r['tracking_rmse_per_joint'], 1e3, 2)} | "
                     f"{r['tracking_rmse_mean'] * 1e3:.2f} | {_fmt_joints(r['max_abs_error_per_joint'], 1e3, 1)} | "
                     f"{_fmt_joints(r['effort_rms_per_joint'])} |")
    return lines


def _closed_loop_reading(closed: dict[str, dict]) -> list[str]:
    if len(closed) < 2:
        return []
    ranked = sorted(closed, key=lambda k: closed[k]["tracking_rmse_mean"])
    best, worst = ranked[0], ranked[-1]
    lines = [f"Best tracking: **{best}** ({closed[best]['tracking_rmse_mean'] * 1e3:.2f} mrad RMS); worst: {worst} "
             f"({closed[worst]['tracking_rmse_mean'] * 1e3:.2f} mrad)."]
    if "ctc_dob + masked" in closed and "ctc_dob + conventional" in closed:
        m, c = closed["ctc_dob + masked"]["tracking_rmse_mean"], closed["ctc_dob + conventional"]["tracking_rmse_mean"]
        lines.append(f"The masked-loss model tracks {'better' if m < c else 'worse'} than the conventional one "
                     f"({m * 1e3:.2f} vs {c * 1e3:.2f} mrad RMS, {abs(100 * (c - m) / c):.0f}% "
                     f"{'lower' if m < c else 'higher'}).")
    lines.append("The DOB absorbs most model error at low frequency, so differences between feedforward models show "
                 "mainly in fast phases and at velocity reversals, where the dead zone acts. One run per controller: "
                 "treat differences of a few percent as noise.")
    return lines


def _demo_markdown(report: dict, compare: dict, out: Path) -> str:
    cfg = report["config"]
    rel = lambda p: Path(p).resolve().relative_to(out.resolve()).as_posix()  # noqa: E731
    compare_dir = Path(report["compare"]["dir"])
    eff = compare.get("data_efficiency") or {}
    lines = [
        "# deadzone_id_ros demo report",
        "",
        "Inverse dynamics tau = f(q, dq, ddq) of the simulated 3-DOF arm with dead zones (static friction), learned "
        "with the dead-zone loss of Inami, Yamane and Sakaino (arXiv 2402.00393) and compared with the conventional "
        "method (drops every sample with a stuck joint), plain MSE on all samples, an identified Newton–Euler "
        "rigid-body model and a hybrid (rigid body + masked-loss residual).",
        "",
        f"Run {'--quick' if cfg['quick'] else 'full'}, {report['seconds']:.0f} s. Data: {len(cfg['sim_seeds'])} offline "
        f"episodes x {cfg['sim_duration']:g} s (`deadzone-id simulate`) and one live ROS 2 recording of "
        f"{cfg['live_duration']:g} s excitation through `sim_feedforward.launch.yaml`.",
        "",
        "## Torque prediction on held-out data (where the joint moves)",
        "",
        *_compare_table(compare),
        "",
        f"Full comparison: [{rel(compare_dir / 'report.md')}]({rel(compare_dir / 'report.md')}) — dead-zone "
        "behaviour, per-seed numbers and plots.",
        "",
        "Usable data is what each method trains on: the masked loss keeps every (sample, joint) pair whose joint "
        "moves; the conventional method keeps only samples where all joints move.",
        "",
    ]
    if eff:
        lines += ["## Data efficiency (masked vs conventional)", "", *_efficiency_table(eff), "",
                  f"![data efficiency]({rel(compare_dir / 'plots' / 'data_efficiency.png')})", ""]
    lines += [
        f"![per-joint RMSE]({rel(compare_dir / 'plots' / 'rmse_per_joint.png')})",
        "",
        "## Live closed loop on a held-out reference",
        "",
        f"Excitation seed {cfg['closed_loop_seed']} (not in any training data), {cfg['closed_loop_duration']:g} s, "
        "sim_arm + feedforward_controller as separate processes over DDS at 1 kHz, in simulated time with the "
        "simulator in lockstep with the controller (each 1 ms tick waits for the command answering the last state), "
        "so the numbers do not depend on CPU load. Every controller uses the same PD gains and DOB; ctc modes add "
        "the model's torque as feedforward. `rbd (URDF)` is the controller's rigid-body model with the URDF's nominal "
        "parameters (no rotor inertia, no friction: what a user has before identifying anything); the learned "
        "models are the seed-0 artifacts of the comparison above.",
        "",
        *_closed_loop_lines(report["closed_loop"]),
        "",
        *_closed_loop_reading(report["closed_loop"]),
        "",
        "![closed loop](plots/closed_loop.png)",
        "",
        f"Best learned model exported to ONNX: `{rel(compare_dir / 'models' / report['compare']['best_learned'])}`.",
        "",
    ]
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------------------------------
# demo-real

DFKI_COLUMNS = ("shoulder:pos=pos_meas1,vel=vel_meas1,effort=tau_meas1",
                "elbow:pos=pos_meas2,vel=vel_meas2,effort=tau_meas2")


def run_demo_real(out: str | Path, real_dir: str | Path, quick: bool = False) -> dict[str, Any]:
    """Run ``compare`` on the real recordings in ``real_dir``: the KUKA LWR4+ bag and each DFKI pendulum design.

    The recordings are short (41 s and 10 s), so the splits use short time blocks (2 s and 1 s). No URDF of those
    robots ships with this package, so rbd and hybrid are skipped there (the report says so).

    Returns:
        {name: report} for "kuka" and "dfki_<design>" (each also in ``out``/<name>/report.json), plus
        ``out``/report.md with every table.

    Raises:
        FileNotFoundError: a recording is missing from ``real_dir``.
        DeadzoneIdError: a stage failed.
    """
    out, real = Path(out), Path(real_dir)
    kuka = real / "kuka_lwr4_fri.bag"
    csvs = sorted((real / "dfki_double_pendulum").glob("*.csv"))
    if not kuka.is_file():
        raise FileNotFoundError(f"{kuka} does not exist (expected the shared real recordings in {real})")
    if not csvs:
        raise FileNotFoundError(f"no DFKI CSV files in {real / 'dfki_double_pendulum'}")
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    stages = _Stages(3 + len(csvs))
    stages.start(f"convert {len(csvs)} DFKI double-pendulum CSVs to rosbag2 (deadzone-id convert)")
    runs: dict[str, tuple[str, list[Path], str]] = {
        "kuka": (f"KUKA LWR4+ (7 joints, measured joint torque): `{kuka.name}`", [kuka], "2")}
    for csv in csvs:
        bag = out / "data" / csv.stem
        argv = ["convert", csv, "--out", bag, "--time", "time", "--robot", "dfki_double_pendulum"]
        for spec in DFKI_COLUMNS:
            argv += ["--joint", spec]
        _cli(argv)
        design = csv.stem.split("_")[1]
        runs[f"dfki_{design}"] = (f"DFKI double pendulum, design {design} (2 quasi-direct-drive joints, measured "
                                  f"torque): `{csv.name}`", [bag], "1")
    quick_flag = ["--quick"] if quick else []
    for name, (title, bags, block) in runs.items():
        stages.start(f"compare on {title}")
        _cli(["compare", "--bag", *bags, "--out", out / name, "--block-seconds", block, *quick_flag])
    stages.start("report")
    reports = {name: json.loads((out / name / "report.json").read_text()) for name in runs}
    lines = ["# deadzone_id_ros on real robot data", "",
             "Every method of `deadzone-id compare` on recordings made by other people on real robots "
             "(`../shared/data/real`). Torque RMSE on held-out time blocks, counted where each joint moves.", ""]
    for name, rep in reports.items():
        lines += [f"## {runs[name][0]}", "", *_compare_table(rep), "",
                  *_dead_zone_lines(rep), "", f"Details, plots and the written verdict: [{name}/report.md]({name}/report.md)", ""]
    (out / "report.md").write_text("\n".join(lines))
    print(f"\ndone in {stages.elapsed:.0f} s. Read {out / 'report.md'}.")
    return reports


def _dead_zone_lines(report: dict) -> list[str]:
    """One line on how much of the data the dead zone takes, from a compare report."""
    methods = report.get("methods", {})
    masked = methods.get("masked", {}).get("usable_fraction")
    conv = methods.get("conventional", {}).get("usable_fraction")
    if masked is None or conv is None:
        return []
    return [f"Dead zone: the masked loss uses {masked:.1%} of (sample, joint) pairs; the conventional method keeps "
            f"{conv:.1%} of samples (those with every joint moving)."]
