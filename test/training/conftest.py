"""Small simulator data for the training tests: the MuJoCo arm tracking an excitation (offline, no ROS)."""

from __future__ import annotations

import pytest

from deadzone_id_ros.training.config import TrainConfig


@pytest.fixture(scope="session")
def make_config_file(tmp_path_factory):
    """Factory: a small training.yaml for the CLI tests (16-16 MLP, one seed, 3 s blocks) with ``max_steps``."""

    def make(max_steps: int = 40):
        lines = ["hidden_sizes: [16, 16]", f"max_steps: {max_steps}", "eval_interval: 20", "batch_size: 256",
                 "seeds: 1", "block_seconds: 3.0", "progress: false", "efficiency_fractions: [1.0]"]
        path = tmp_path_factory.mktemp("cfg") / "training.yaml"
        path.write_text("/**:\n  ros__parameters:\n" + "".join(f"    {line}\n" for line in lines))
        return path

    return make


@pytest.fixture(scope="module")
def config_file(make_config_file):
    """The small training.yaml with 40 steps."""
    return make_config_file(40)


@pytest.fixture(scope="session")
def sim_recordings():
    """Two 12 s runs of the simulated arm at 1 kHz (different seeds)."""
    from deadzone_id_ros.sim.offline import simulate

    return [simulate(12.0, seed=s) for s in (1, 2)]


@pytest.fixture(scope="session")
def sim_dataset(sim_recordings):
    """The runs through the data pipeline (Savitzky–Golay ddq, episodes)."""
    from deadzone_id_ros.data.dataset import dataset_from_recordings

    return dataset_from_recordings(sim_recordings)


@pytest.fixture
def tiny_config():
    """A fast configuration: small network, few steps, one thread, no progress bar."""
    return TrainConfig(hidden_sizes=(32, 32), max_steps=120, eval_interval=30, patience=3, batch_size=256,
                       num_threads=1, seeds=1, progress=False, block_seconds=3.0, efficiency_fractions=(0.5, 1.0))


@pytest.fixture(scope="session")
def compared(sim_dataset, tmp_path_factory):
    """One comparison on the simulator data, every method, 2 seeds: (output folder, report.json, config, the typed
    report run_compare returned)."""
    from deadzone_id_ros.experiments.compare.run import run_compare
    from deadzone_id_ros.resources import default_urdf
    from deadzone_id_ros.training.pipeline import TrainingInputs

    cfg = TrainConfig(hidden_sizes=(32, 32), max_steps=150, eval_interval=50, patience=3, batch_size=256,
                      num_threads=1, seeds=2, progress=False, block_seconds=3.0, efficiency_fractions=(0.5, 1.0))
    out = tmp_path_factory.mktemp("compare")
    inputs = TrainingInputs(sim_dataset.episodes, sim_dataset.joint_names, simulator=True,
                           urdf_xml=default_urdf().read_text(), urdf_source="three_dof_arm.urdf")
    typed = run_compare(inputs, out, cfg, log=lambda m: None)
    return out, typed.to_dict(), cfg, typed


@pytest.fixture(scope="session")
def compared_report(compared):
    """(output folder, report.json, the typed report) of the shared comparison."""
    return compared[0], compared[1], compared[3]


@pytest.fixture(scope="module")
def bag(sim_recordings, tmp_path_factory):
    """The first simulated recording written as a rosbag2 (MCAP) directory, once per test module."""
    from deadzone_id_ros.data.bag import write_recording

    return write_recording(sim_recordings[0], tmp_path_factory.mktemp("bags") / "sim_run")
