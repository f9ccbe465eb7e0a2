"""Replay of bags through the simulated arm, without DDS: the regression test of simulate -> bag -> replay."""

from __future__ import annotations

import dataclasses
import json
import subprocess

import numpy as np
import pytest
from conftest import executable

from deadzone_id_ros.data.bag import read_recording, write_recording
from deadzone_id_ros.errors import ConfigError, DataError
from deadzone_id_ros.sim.offline import simulate
from deadzone_id_ros.sim.replay import replay, replay_bag, write_report


@pytest.fixture(scope="module")
def sim_bag(tmp_path_factory):
    """A 1 s simulated run written as MCAP and read back (what `deadzone-id simulate` produces)."""
    path = tmp_path_factory.mktemp("replay") / "sim_bag"
    write_recording(simulate(1.0, seed=5), path)
    return path


def test_open_loop_replay_of_a_simulated_bag_is_exact(sim_bag):
    result = replay_bag(sim_bag)
    assert result.mode == "open_loop" and len(result.t) == 1000
    # same seed, same call order: the replayed measurements equal the recorded ones bit for bit
    assert np.array_equal(result.simulated_q, result.recorded_q)
    assert np.array_equal(result.simulated_dq, result.recorded_dq)
    assert np.array_equal(result.simulated_effort, result.recorded_effort)
    assert float(np.ptp(result.recorded_q, axis=0).max()) > 0.01  # the arm really moved


def test_replay_detects_a_perturbed_command_and_a_wrong_seed(sim_bag):
    rec = read_recording(sim_bag)
    cmd = rec.command.copy()
    cmd[200:, 1] += 0.05  # 0.05 N·m more on joint2 from 0.2 s on
    perturbed = replay(dataclasses.replace(rec, command=cmd), source="perturbed")
    assert perturbed.max_abs_q_error[1] > 1e-4
    assert np.array_equal(perturbed.simulated_q[:200], perturbed.recorded_q[:200])
    meta = dict(rec.metadata, sim_config=dict(rec.metadata["sim_config"], seed=6))
    other_seed = replay(dataclasses.replace(rec, metadata=meta), source="seed 6")
    assert other_seed.rmse_dq.min() > 1e-4  # different velocity noise


def test_joints_are_mapped_by_name(sim_bag):
    rec = read_recording(sim_bag)
    order = [2, 0, 1]
    permuted = dataclasses.replace(
        rec, joint_names=tuple(rec.joint_names[i] for i in order), position=rec.position[:, order],
        velocity=rec.velocity[:, order], effort=rec.effort[:, order], command=rec.command[:, order],
        reference_position=rec.reference_position[:, order], reference_velocity=rec.reference_velocity[:, order],
        reference_acceleration=rec.reference_acceleration[:, order],
    )
    result = replay(permuted)
    assert result.joint_names == ("joint1", "joint2", "joint3")
    assert np.array_equal(result.simulated_q, result.recorded_q)


def test_closed_loop_replay_follows_the_recorded_reference(sim_bag):
    result = replay_bag(sim_bag, closed_loop=True)
    assert result.mode == "closed_loop"
    assert any("controller: the bag's controller_config" in n for n in result.notes)
    # the reference is re-interpolated from its samples, so agreement is to rounding, not bit-exact
    assert float(result.max_abs_q_error.max()) < 1e-6


def test_bag_with_other_joints_is_refused_listing_names(sim_bag, tmp_path):
    rec = read_recording(sim_bag)
    renamed = dataclasses.replace(rec, joint_names=("shoulder", "joint2", "joint3"))
    with pytest.raises(DataError, match=r"bag's joints \['shoulder', 'joint2', 'joint3'\] do not match the simulated "
                                        r"arm's URDF joints \['joint1', 'joint2', 'joint3'\] \(missing from the bag: "
                                        r"\['joint1'\]; not in the URDF: \['shoulder'\]\)"):
        replay(renamed, source="renamed")
    two = dataclasses.replace(rec, joint_names=("joint1", "joint2"), position=rec.position[:, :2],
                              velocity=rec.velocity[:, :2], effort=rec.effort[:, :2])
    with pytest.raises(DataError, match=r"missing from the bag: \['joint3'\]"):
        replay(two)
    # the CLI prints it without a traceback and exits 2
    bad = tmp_path / "bad_bag"
    write_recording(dataclasses.replace(renamed, metadata={}), bad)
    proc = subprocess.run([executable("deadzone-id"), "replay", str(bad), "--out", str(tmp_path / "out")],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "['shoulder', 'joint2', 'joint3'] do not match the simulated arm's URDF joints" in proc.stderr


def test_missing_topics_and_bad_stamps_are_refused(sim_bag):
    rec = read_recording(sim_bag)
    with pytest.raises(DataError, match=r"no effort commands in the bag .* open-loop replay needs them"):
        replay(dataclasses.replace(rec, command=None, command_t_ns=None), source="b")
    with pytest.raises(DataError, match=r"b: no reference in the bag; closed-loop replay needs"):
        replay(dataclasses.replace(rec, reference_position=None, reference_t_ns=None), closed_loop=True, source="b")
    t = rec.state_t_ns.copy()
    t[5] = t[4]
    with pytest.raises(DataError, match=r"b: /joint_states message 5 field header.stamp is not after the previous one"):
        replay(dataclasses.replace(rec, state_t_ns=t), source="b")
    one = dataclasses.replace(rec, state_t_ns=rec.state_t_ns[:1], position=rec.position[:1],
                              velocity=rec.velocity[:1], effort=rec.effort[:1])
    with pytest.raises(DataError, match=r"b: /joint_states has 1 message\(s\); at least 2"):
        replay(one, source="b")
    meta = dict(rec.metadata, sim_config=dict(rec.metadata["sim_config"], friction=1.0))
    with pytest.raises(ConfigError, match=r"b: episode.yaml sim_config: unknown key\(s\) \['friction'\]"):
        replay(dataclasses.replace(rec, metadata=meta), source="b")


def test_report_and_cli(sim_bag, tmp_path):
    files = write_report(replay_bag(sim_bag), tmp_path / "r")
    summary = json.loads(files["json"].read_text())
    assert summary["rmse_q_rad"] == {"joint1": 0.0, "joint2": 0.0, "joint3": 0.0} and summary["samples"] == 1000
    assert files["position"].stat().st_size > 10_000 and files["effort"].stat().st_size > 10_000
    assert "| joint2 | 0.000e+00 |" in files["markdown"].read_text()
    out = tmp_path / "cli"
    proc = subprocess.run([executable("deadzone-id"), "replay", str(sim_bag), "--closed-loop", "--out", str(out),
                           "--max-rmse", "1e-6"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert json.loads((out / "report.json").read_text())["mode"] == "closed_loop"
    rec = read_recording(sim_bag)
    cmd = rec.command.copy()
    cmd[100:, 1] += 0.05
    perturbed = tmp_path / "perturbed"
    write_recording(dataclasses.replace(rec, command=cmd), perturbed)
    proc = subprocess.run([executable("deadzone-id"), "replay", str(perturbed), "--out", str(out),
                           "--max-rmse", "1e-9"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1 and "exceeds --max-rmse 1e-09" in proc.stdout, proc.stdout + proc.stderr
