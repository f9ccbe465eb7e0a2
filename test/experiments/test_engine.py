"""The cell engine (experiments/engine.py): in-process by default, Ray core tasks with ``engine="ray"``.

The Ray tests start real local clusters (``address="local"``, ``num_cpus=2``: 11-20 s each on 2 cores) and check
that none of their processes outlives the run. They are skipped only when Ray is not installed (`make install-ray`;
`make test` installs it).
"""

from __future__ import annotations

import importlib.util
import os
import re
import sys
import time
from pathlib import Path

import pytest

from deadzone_id_ros.cli.main import main
from deadzone_id_ros.errors import ConfigError, DataError
from deadzone_id_ros.experiments.engine import RAY_MISSING, pack_dir, run_cells, unpack_dir

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


def _processes_of(session: str) -> list[str]:
    """'pid cmdline' of every process whose command line names the Ray ``session`` (its raylet, gcs_server,
    workers)."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmd = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if session in cmd and str(os.getpid()) != proc.name:
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


@pytest.fixture(scope="module")
def tiny_inputs():
    """Two 10 s runs of the simulated arm (offline, no ROS) as training inputs with the bundled URDF."""
    from deadzone_id_ros.data.dataset import dataset_from_recordings
    from deadzone_id_ros.resources import default_urdf
    from deadzone_id_ros.sim.offline import simulate
    from deadzone_id_ros.training.pipeline import TrainingInputs

    ds = dataset_from_recordings([simulate(10.0, seed=s) for s in (1, 2)])
    return TrainingInputs(ds.episodes, ds.joint_names, simulator=True, urdf_xml=default_urdf().read_text(),
                          urdf_source="three_dof_arm.urdf")


@needs_ray
def test_compare_on_ray_equals_in_process_and_leaves_no_ray_process(tiny_inputs, tmp_path):
    from deadzone_id_ros.experiments.compare_cell import run_compare_on
    from deadzone_id_ros.training.config import TrainConfig

    cfg = TrainConfig(hidden_sizes=(16, 16), max_steps=60, eval_interval=20, patience=3, batch_size=256,
                      num_threads=1, seeds=2, progress=False, block_seconds=3.0, efficiency_fractions=(1.0,))
    methods = ["masked", "conventional", "rbd"]
    here = run_compare_on("local", tiny_inputs, tmp_path / "here", cfg, methods=methods, log=lambda m: None)
    lines: list[str] = []
    there = run_compare_on("ray", tiny_inputs, tmp_path / "ray", cfg, methods=methods, address="local", num_cpus=2,
                           log=lines.append)
    session = _session_of(lines)
    _assert_no_processes_left(session)
    assert set(here.methods) == set(there.methods) == set(methods)
    for m in methods:
        a, b = here.methods[m], there.methods[m]
        assert [s.test.rmse_per_joint for s in a.per_seed] == [s.test.rmse_per_joint for s in b.per_seed], m
        assert a.validation_rmse_per_seed == b.validation_rmse_per_seed, m
        assert a.steps_per_seed == b.steps_per_seed, m
    assert here.pick is not None and there.pick is not None and here.pick.method == there.pick.method
    for name in ("report.md", "report.json", "models/masked/model.json"):
        assert (tmp_path / "ray" / name).is_file(), name
    assert any(line.startswith("wrote ") and str(tmp_path / "ray") in line for line in lines)


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
