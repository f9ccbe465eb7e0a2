"""A demo never loses work (issue 21 item 3): an interrupt mid-stage keeps the folder, marked incomplete, with its
logs; ``--resume`` finishes it; a second run into a locked folder is refused, naming the process that holds it.

The demo here is the real one cut short: its own ``simulate`` stage (one 1 s episode) and ``live`` stage (the four
nodes as real processes over DDS, 2 s of excitation in lockstep), then a small last stage that reads what the first
two recorded (instead of compare and closed loop, minutes of training that this test does not need). It runs in a
child process that gets a real SIGINT in the middle of the live stage.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from deadzone_id_ros.experiments.demo.run import STATE_FILE, DemoConfig, DemoInterrupted, Stage, run_demo
from deadzone_id_ros.outputs import INCOMPLETE, OutputError, incomplete, output_lock

pytestmark = pytest.mark.integration

# the live stage runs 10 simulated seconds: long enough that the interrupt, sent once its excitation is seen in the log,
# lands inside it however fast lockstep runs (with 2 s it had ended, and the demo with it, on a busy machine)
TINY = "DemoConfig(sim_seeds=(1,), sim_duration=1.0, live_duration=10.0, compare_seeds=1, quick=True)"

# The script restores Python's Ctrl-C handler first: a test runner started in the background by a non-interactive
# shell (`make test-under-load &` in a script) inherits SIGINT ignored, Python then installs no KeyboardInterrupt
# handler, and the interrupt this test sends would be lost (measured: the demo ran to its end and exited 0).
SCRIPT = textwrap.dedent(f"""
    import json, signal, sys
    signal.signal(signal.SIGINT, signal.default_int_handler)
    from pathlib import Path
    from deadzone_id_ros.experiments.demo.run import DEMO_STAGES, DemoConfig, Stage, run_demo
    from deadzone_id_ros.launching.graph import signals_as_interrupt

    def summary(ctx):
        from deadzone_id_ros.data import read_recording
        rec = read_recording(ctx.out / ctx.results["live"]["bag"])
        doc = {{"sim_bags": ctx.results["simulate"]["bags"], "live_states": len(rec.state_t_ns)}}
        (ctx.out / "summary.json").write_text(json.dumps(doc))
        return doc

    stages = (*DEMO_STAGES[:2], Stage("summary", lambda c: "summary", summary, ("summary.json",)))
    out, resume = Path(sys.argv[1]), sys.argv[2] == "resume"
    try:
        with signals_as_interrupt():
            run_demo(out, None if resume else {TINY}, resume=resume, stages=stages)
    except KeyboardInterrupt:
        sys.exit(130)
""")


def _demo(tmp_path: Path, out: Path, mode: str) -> subprocess.Popen:
    script = tmp_path / "tiny_demo.py"
    script.write_text(SCRIPT)
    log = (tmp_path / f"demo_{mode}.out").open("w")
    return subprocess.Popen([sys.executable, str(script), str(out), mode], stdout=log, stderr=subprocess.STDOUT,
                            start_new_session=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_sigint_mid_stage_keeps_the_folder_marked_and_resume_finishes_it(tmp_path):
    out = tmp_path / "demo"
    proc = _demo(tmp_path, out, "new")
    def running_log() -> Path | None:  # the live attempt whose excitation runs (a retry has its own log)
        for log in sorted((out / "logs").glob("live_recording*.log")) if (out / "logs").is_dir() else ():
            if "excitation: seed" in log.read_text():
                return log
        return None

    try:
        # the middle of the live stage: its nodes are up and the excitation runs in simulated time (an event, no
        # count in a window: the bound only ends a hung test)
        deadline = time.monotonic() + 600
        while (live_log := running_log()) is None:
            assert proc.poll() is None, (tmp_path / "demo_new.out").read_text()
            assert time.monotonic() < deadline, "the live stage never started"
            time.sleep(0.2)
        proc.send_signal(signal.SIGINT)
        assert proc.wait(120) == 130, (tmp_path / "demo_new.out").read_text()
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    printed = (tmp_path / "demo_new.out").read_text()
    marker = incomplete(out)
    assert marker is not None and marker["stage"] == "live" and "interrupted" in marker["reason"], printed
    assert str(live_log.relative_to(out)) in marker["logs"] and marker["resume"] == f"deadzone-id demo --resume {out}"
    for name in marker["logs"]:
        assert (out / name).is_file() and (out / name).stat().st_size > 0, name
    assert f"Kept {out}" in printed and f"deadzone-id demo --resume {out}" in printed
    state = json.loads((out / STATE_FILE).read_text())
    assert list(state["done"]) == ["simulate"], state
    sim_bag = out / state["done"]["simulate"]["result"]["bags"][0]
    sim_mtime = sim_bag.stat().st_mtime_ns
    # every node of the interrupted stage has ended
    pids = [int(p) for p in __import__("re").findall(r"\[launch\] started \S+ \(pid (\d+)\)", live_log.read_text())]
    assert len(pids) == 4 and not any(_alive(p) for p in pids), pids

    resumed = _demo(tmp_path, out, "resume")
    try:
        assert resumed.wait(600) == 0, (tmp_path / "demo_resume.out").read_text()
    finally:
        if resumed.poll() is None:
            os.killpg(resumed.pid, signal.SIGKILL)
    printed = (tmp_path / "demo_resume.out").read_text()
    assert "done in an earlier run" in printed and not (out / INCOMPLETE).exists(), printed
    assert sim_bag.stat().st_mtime_ns == sim_mtime  # the finished stage was not run again
    summary = json.loads((out / "summary.json").read_text())
    assert summary["live_states"] > 10000, summary  # 10 s of 1 kHz states in simulated time, recorded
    kept = out / ".partial" / "live-1" / live_log.relative_to(out)
    assert kept.is_file() and "excitation: seed" in kept.read_text()  # the interrupted attempt's log is kept


def test_resume_refuses_another_configuration_and_a_complete_run(tmp_path):
    out = tmp_path / "demo"
    stages = (Stage("one", lambda c: "one", lambda ctx: {"n": 1}),)
    run_demo(out, DemoConfig.quick_run(), stages=stages, log=lambda line: None)
    with pytest.raises(OutputError, match=r"the run there is complete; nothing to resume"):
        run_demo(out, resume=True, stages=stages, log=lambda line: None)
    (out / INCOMPLETE).write_text("{}")
    with pytest.raises(OutputError, match=r"configuration differs from the recorded one in \['closed_loop_dur"):
        run_demo(out, DemoConfig(), resume=True, stages=stages, log=lambda line: None)


def test_a_failed_stage_keeps_the_folder_and_a_new_run_into_it_is_refused(tmp_path):
    out = tmp_path / "demo"

    def broken(ctx):
        (ctx.out / "logs" / "broken.log").write_text("what the stage said before it failed\n")
        raise RuntimeError("the simulator diverged")

    stages = (Stage("one", lambda c: "one", lambda ctx: {"n": 1}), Stage("two", lambda c: "two", broken))
    with pytest.raises(DemoInterrupted, match=r"stage 'two' failed: RuntimeError: the simulator diverged\. Kept"):
        run_demo(out, DemoConfig.quick_run(), stages=stages, log=lambda line: None)
    marker = incomplete(out)
    assert marker is not None and marker["stage"] == "two" and marker["logs"] == ["logs/broken.log"]
    with pytest.raises(OutputError, match=r"holds an incomplete run .* continue it with `deadzone-id demo --resume"):
        run_demo(out, DemoConfig.quick_run(), stages=stages, log=lambda line: None)


def test_a_second_run_into_a_locked_folder_is_refused_naming_the_pid(tmp_path, capsys):
    from deadzone_id_ros.cli.main import main

    out = tmp_path / "demo"
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time\nfrom deadzone_id_ros.outputs import output_lock\n"
         f"with output_lock({str(out)!r}):\n    print('locked', flush=True)\n    time.sleep(300)"],
        stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        assert main(["demo", "--out", str(out), "--quick"]) == 2
        err = capsys.readouterr().err
        assert f"--out {out}: in use by process {holder.pid}" in err, err
        assert main(["demo", "--resume", str(out)]) == 2
        assert f"in use by process {holder.pid}" in capsys.readouterr().err
        assert not out.exists()  # nothing was moved or written
    finally:
        holder.kill()
        holder.wait()
    with output_lock(out):  # the kernel released the dead holder's lock
        pass


def test_resume_after_the_closed_loop_stage_writes_the_report_the_run_would_have(tmp_path):
    """A run interrupted in its report stage, after compare and closed loop had finished (simulated by taking the
    report's record out of demo_state.json, as an interrupt leaves it): ``--resume`` runs only the report, which reads
    the comparison and the closed-loop run back from compare/report.json and closed_loop.json (no typed object of
    the first run is left), and writes report.md and report.json byte for byte as the uninterrupted run did.

    The demo's own simulate, closed_loop, improve, sense, teleop and report stages run (the improve, sense and teleop
    stages' runs read back from improve/improve.json, sense/sense.json and teleop/teleop.json); live and compare are
    cut short (no DDS, a tiny training configuration; the live stage's interrupt is the test above): "live" records
    the second simulated bag as the live one, "compare" is the real stage's run_compare on the recordings with a
    32-32 net and 100 steps, handing its typed report on in process as the real stage does.
    """
    from deadzone_id_ros.experiments.compare.run import run_compare
    from deadzone_id_ros.experiments.demo.run import DEMO_STAGES
    from deadzone_id_ros.training.config import TrainConfig
    from deadzone_id_ros.training.pipeline import load_inputs

    def compare(ctx):
        bags = [ctx.out / b for b in ctx.results["simulate"]["bags"]]
        cfg = TrainConfig(hidden_sizes=(32, 32), max_steps=100, eval_interval=50, batch_size=256, num_threads=1,
                          seeds=1, progress=False, block_seconds=3.0, efficiency_fractions=(1.0,))
        report = run_compare(load_inputs(bags, simulator="yes", log=lambda m: None), ctx.out / "compare", cfg,
                             log=lambda m: None)
        ctx.objects.compare = report
        return {"compare_dir": "compare", "best": report.best_learned()}

    real = {s.name: s for s in DEMO_STAGES}
    live = Stage("live", lambda c: "live", lambda ctx: {"bag": ctx.results["simulate"]["bags"][1]})
    stages = (real["simulate"], live, Stage("compare", lambda c: "compare", compare, ("compare",)),
              real["closed_loop"], real["improve"], real["sense"], real["teleop"], real["report"])
    cfg = DemoConfig(sim_seeds=(1, 2), sim_duration=12.0, live_duration=1.0, closed_loop_seeds=(999,),
                     closed_loop_duration=0.6, closed_loop_live_duration=0.0, compare_seeds=1, quick=True,
                     improve_task_seeds=(11,), improve_duration=1.5, sense_seeds=(1,), sense_duration=4.0,
                     sense_calibration_duration=3.0, teleop_seeds=(1,), teleop_duration=3.2)
    out = tmp_path / "demo"
    run_demo(out, cfg, stages=stages, log=lambda line: None)
    first = {name: (out / name).read_bytes() for name in ("report.md", "report.json")}
    assert (out / "closed_loop.json").is_file() and b"ctc_dob_masked" in first["report.json"]
    doc = json.loads(first["report.json"])
    assert [e["iteration"] for e in doc["improve"]["iterations"]] == [0, 1]
    assert doc["improve"]["compare_model"] is not None  # the comparison's pick, scored beside the iterations
    assert b"## Learning from its own runs" in first["report.md"]
    # the force-sensing stage: its run in sense/, its figures in report.json and a section of report.md
    assert doc["sense"]["dir"] == "sense" and doc["sense"]["seeds"] == [1]
    assert (out / "sense" / "sensing.yaml").is_file()
    assert doc["sense"]["estimators"][0]["name"] == "residual_band"
    assert b"## Sensing force without a force sensor" in first["report.md"]
    assert b"sensing_params_file:=sense/sensing.yaml" in first["report.md"]
    # the teleoperation stage: the comparison's pick beside the two rigid bodies, named by its path in the folder
    assert doc["teleop"]["dir"] == "teleop" and doc["teleop"]["seeds"] == [1]
    assert {c["model"] for c in doc["teleop"]["cases"]} == {"compare/pick", "nominal", "identified"}
    assert not [c["model_label"] for c in doc["teleop"]["cases"] if str(out) in c["model_label"]]
    assert (out / "teleop" / "plots" / "teleop_compare_pick_bilateral_hold.png").is_file()
    assert b"## Teleoperation with force feedback" in first["report.md"]
    assert b"teleop.launch.yaml scenario:=hold model:=compare/pick" in first["report.md"]

    state = json.loads((out / STATE_FILE).read_text())
    del state["done"]["report"]  # what an interrupt in the report stage leaves
    (out / STATE_FILE).write_text(json.dumps(state))
    printed: list[str] = []
    run_demo(out, resume=True, stages=stages, log=printed.append)
    assert sum("done in an earlier run" in line for line in printed) == 7, printed
    for name, text in first.items():
        assert (out / name).read_bytes() == text, name
        assert (out / ".partial" / "report-1" / name).read_bytes() == text  # the interrupted attempt's, set aside
