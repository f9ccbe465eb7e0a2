"""The cell engine (engine.py): in-process by default, Ray core tasks with ``engine="ray"``.

The Ray tests start real local clusters (``address="local"``, ``num_cpus=2``: 11-20 s each on 2 cores) and check
that none of their processes outlives the run. They are skipped only when Ray is not installed (`make install-ray`;
`make test` installs it).
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import sys
import time
from pathlib import Path

import pytest

from deadzone_id_ros.cli.main import main
from deadzone_id_ros.engine import RAY_MISSING, pack_dir, run_cells, unpack_dir
from deadzone_id_ros.errors import ConfigError, DataError

HAVE_RAY = importlib.util.find_spec("ray") is not None
needs_ray = pytest.mark.skipif(not HAVE_RAY, reason="Ray is not installed (`make install-ray`)")


def _square(x: int) -> int:
    if x < 0:
        raise DataError(f"negative cell {x}")
    return x * x


def _die_once(marker: str) -> int:
    """Kill its own worker process the first time (as an out-of-memory kill would), then succeed."""
    path = Path(marker)
    if not path.exists():
        path.write_text("died once")
        os._exit(9)
    return os.getpid()


def _readlink(path: Path) -> str:
    try:
        return os.readlink(path)
    except OSError:  # the file was closed meanwhile
        return ""


def _processes_of(session: str) -> list[str]:
    """'pid cmdline' of every process whose command line or one of whose open files names the Ray ``session``: its
    gcs_server and raylet (command line), its agents and workers (renamed ``ray::...``, their logs open)."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit() or str(os.getpid()) == proc.name:
            continue
        try:
            cmd = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            files = [_readlink(fd) for fd in (proc / "fd").iterdir()]
        except OSError:  # the process ended, or is not ours to read
            continue
        if session in cmd or any(session in f for f in files):
            found.append(f"{proc.name} {cmd[:120]}")
    return found


def _session_of(lines: list[str]) -> str:
    [match] = [m for line in lines if (m := re.search(r"session \S*?(session_[\w-]+)", line))]
    return match.group(1)


def _assert_no_processes_left(session: str) -> None:
    """Ray's processes end shortly after ray.shutdown(): wait up to 10 s for the last of them."""
    deadline = time.monotonic() + 10.0
    while (left := _processes_of(session)) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert left == []


def test_local_engine_reports_a_failed_cell_and_runs_the_others():
    done = []
    outcomes = run_cells(_square, {"a": 2, "bad": -1, "c": 3}, on_done=lambda o: done.append(o.key))
    assert [o.key for o in outcomes] == ["a", "bad", "c"] == done
    assert [o.result for o in outcomes] == [4, None, 9]
    assert isinstance(outcomes[1].error, DataError) and "negative cell -1" in outcomes[1].detail
    assert outcomes[0].ok and not outcomes[1].ok


def test_unknown_engine_is_refused():
    with pytest.raises(ConfigError, match="engine = 'spark' must be one of"):
        run_cells(_square, {"a": 1}, engine="spark")


def test_pack_round_trip(tmp_path):
    (tmp_path / "src" / "plots").mkdir(parents=True)
    (tmp_path / "src" / "report.json").write_text("{}\n")
    (tmp_path / "src" / "plots" / "a.png").write_bytes(b"\x89PNG")
    unpack_dir(pack_dir(tmp_path / "src"), tmp_path / "dst")
    assert (tmp_path / "dst" / "report.json").read_text() == "{}\n"
    assert (tmp_path / "dst" / "plots" / "a.png").read_bytes() == b"\x89PNG"


def test_ray_missing_says_what_to_install(monkeypatch, tmp_path, capsys):
    monkeypatch.setitem(sys.modules, "ray", None)  # as without the extra: `import ray` raises ModuleNotFoundError
    with pytest.raises(ConfigError, match="make install-ray") as err:
        run_cells(_square, {"a": 1}, engine="ray")
    assert str(err.value) == RAY_MISSING and "pip install 'deadzone_id_ros[ray]'" in RAY_MISSING
    assert main(["compare", "--bag", str(tmp_path), "--out", str(tmp_path / "out"), "--engine", "ray"]) == 2
    assert capsys.readouterr().err.strip() == f"deadzone-id compare: error: {RAY_MISSING}"


CONFIG = """\
/**:
  ros__parameters:
    hidden_sizes: [16, 16]
    max_steps: 60
    eval_interval: 20
    patience: 3
    batch_size: 256
    seeds: 2
    block_seconds: 3.0
    progress: false
    efficiency_fractions: [1.0]
"""


@pytest.fixture(scope="module")
def two_bags(tmp_path_factory):
    """Two 8 s recordings of the simulated arm (offline, no ROS) as rosbag2 folders with episode.yaml."""
    from deadzone_id_ros.sim.record import simulate_bag

    root = tmp_path_factory.mktemp("bags")
    return [str(simulate_bag(8.0, s, root / f"run{s}").path) for s in (1, 2)]


@needs_ray
def test_compare_on_ray_equals_in_process_and_leaves_no_ray_process(two_bags, tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    (tmp_path / "training.yaml").write_text(CONFIG)
    args = ["compare", "--bag", *two_bags, "--config", str(tmp_path / "training.yaml"), "--methods", "masked",
            "conventional", "rbd"]
    assert main([*args, "--out", str(tmp_path / "here")]) == 0
    capsys.readouterr()
    assert main([*args, "--out", str(tmp_path / "ray"), "--engine", "ray", "--address", "local", "--num-cpus",
                 "2"]) == 0
    err = capsys.readouterr().err
    assert "ray: started a local cluster" in err and "2 CPUs" in err
    for bag in two_bags:  # the bags were loaded as tasks of the same (one) cluster, each with its report
        assert re.search(rf"ingest {re.escape(bag)}: \d+ episode\(s\), \d+ samples", err), bag
    _assert_no_processes_left(_session_of(err.splitlines()))
    here, there = (json.loads((tmp_path / d / "report.json").read_text()) for d in ("here", "ray"))
    assert set(here["methods"]) == set(there["methods"]) == {"masked", "conventional", "rbd"}
    for m, a in here["methods"].items():
        b = there["methods"][m]
        for key in ("rmse_per_joint", "rmse_mean", "validation_rmse_per_seed", "steps_per_seed", "usable_fraction"):
            assert a[key] == b[key], (m, key)
        assert [s["rmse_per_joint"] for s in a["per_seed"]] == [s["rmse_per_joint"]
                                                                        for s in b["per_seed"]]
    assert here["pick"]["method"] == there["pick"]["method"]
    for name in ("report.md", "models/masked/model.json", "pick/model.json"):
        assert (tmp_path / "ray" / name).is_file(), name
    assert f"wrote {tmp_path / 'ray' / 'report.md'}" in err  # the log names the final folder, not the task's


@needs_ray
def test_address_auto_without_a_cluster_is_a_clear_error(monkeypatch, tmp_path):
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    monkeypatch.setenv("RAY_TMPDIR", str(tmp_path))  # where Ray looks for the cluster last started on this machine
    with pytest.raises(ConfigError, match=r"--address auto: no running Ray cluster found .*ray start --head"):
        run_cells(_square, {"a": 1}, engine="ray", address="auto")
    with pytest.raises(ConfigError, match="num_cpus = 2: the CPUs of an existing cluster"):
        run_cells(_square, {"a": 1}, engine="ray", address="auto", num_cpus=2)


@needs_ray
def test_ray_retries_a_killed_cell_and_reports_a_failing_one(tmp_path):
    import ray.cloudpickle

    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])  # the workers cannot import this test module
    lines: list[str] = []
    cells = {"killed once": str(tmp_path / "marker"), "raises": str(tmp_path / "missing" / "marker")}
    outcomes = run_cells(_die_once, cells, engine="ray", address="local", num_cpus=2, max_retries=1,
                         log=lines.append)
    assert outcomes[0].ok and (tmp_path / "marker").read_text() == "died once"
    assert outcomes[0].result != os.getpid()  # it ran in a Ray worker
    assert isinstance(outcomes[1].error, FileNotFoundError) and not outcomes[1].ok
    _assert_no_processes_left(_session_of(lines))



@needs_ray
def test_ingest_as_ray_tasks_equals_in_process(two_bags, tmp_path, monkeypatch):
    """One Ray task per bag (both loads in one engine_session, so one cluster): the same episodes and cleaning
    report as the in-process loader, each bag's report logged as it arrives; a bad bag's own error is raised; no
    Ray process left."""
    import numpy as np

    from deadzone_id_ros.data import DatasetConfig, load_dataset
    from deadzone_id_ros.engine import engine_session

    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    config = DatasetConfig(max_gap_s=0.05)
    here = load_dataset(two_bags, config)
    bad = tmp_path / "bad.bag"
    bad.write_bytes(b"not a bag at all")
    lines: list[str] = []
    with engine_session("ray", "local", 2, log=lines.append):
        there = load_dataset(two_bags, config, engine="ray", log=lines.append)
        with pytest.raises(DataError, match="bad.bag"):
            load_dataset([two_bags[0], str(bad)], config, engine="ray", log=lines.append)
    ingested = sorted(ln.split(":")[0] for ln in lines if ln.startswith("ingest "))
    assert ingested == sorted([f"ingest {b}" for b in two_bags] + [f"ingest {two_bags[0]}"])
    assert there.joint_names == here.joint_names and there.effort_units == here.effort_units
    assert there.report.to_dict() == here.report.to_dict()
    assert len(there.episodes) == len(here.episodes) == 2
    for a, b in zip(here.episodes, there.episodes):
        for name in ("t", "q", "dq", "ddq", "tau"):
            np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
    _assert_no_processes_left(_session_of(lines))


@needs_ray
def test_sweep_on_ray_loads_bags_as_tasks_on_its_one_cluster(two_bags, tmp_path, monkeypatch):
    """``run_sweep`` with ``engine="ray"``: one cluster for the bags' tasks (one per bag, each logged with its report)
    and the cells' tasks; the same RMSE as in-process; no Ray process left."""
    from deadzone_id_ros.experiments.sweep.config import load_sweep
    from deadzone_id_ros.experiments.sweep.run import run_sweep

    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    (tmp_path / "sweep.yaml").write_text(f"""\
data:
  - {{name: two, bags: [{two_bags[0]}, {two_bags[1]}]}}
alpha: [0.1, 0.3]
fractions: [1.0]
seeds: 1
methods: [masked, conventional]
train: {{hidden_sizes: [16, 16], max_steps: 40, eval_interval: 20, batch_size: 256, block_seconds: 3.0,
        efficiency_fractions: [1.0]}}
""")
    sweep = load_sweep(tmp_path / "sweep.yaml")
    here = run_sweep(sweep, tmp_path / "here", log=lambda m: None)
    lines: list[str] = []
    there = run_sweep(sweep, tmp_path / "ray", engine="ray", address="local", num_cpus=2, log=lines.append)
    assert sum("ray: started a local cluster" in ln for ln in lines) == 1
    assert sorted(ln.split(":")[1].strip() for ln in lines if ln.startswith("two: ingest ")) == sorted(
        f"ingest {b}" for b in two_bags)
    assert not here.failed and not there.failed
    assert [{m: e.rmse_mean for m, e in c.methods.items()} for c in here.cells] == \
        [{m: e.rmse_mean for m, e in c.methods.items()} for c in there.cells]
    _assert_no_processes_left(_session_of(lines))
