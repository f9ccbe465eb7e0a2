"""Feetech's raw Present_Load register (sign in bit 10; huggingface/lerobot PR 1014) is recognized and named, not
called an opposite sign convention, and the fix it names trains the same model as the torque itself (issue 40 item 7).

The recordings are the simulated arm's, with each joint's torque written as the register would hold it: the load
L = round(tau / k) (k per joint: 900 units at the joint's peak torque) as L for L >= 0 and 1024 + |L| for L < 0.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from deadzone_id_ros.cli.main import main
from deadzone_id_ros.data.bag import write_recording
from deadzone_id_ros.data.sign_bit import decode_sign_bit, sign_bit_evidence
from deadzone_id_ros.sim.offline import simulate

SECONDS = 3.0


def _register(load: np.ndarray) -> np.ndarray:
    """Signed loads -> Feetech raw Present_Load readings (sign in bit 10)."""
    return np.where(load < 0, 1024 - load, load)


def test_the_register_is_recognized_and_decoded_and_a_signed_number_is_not():
    t = np.linspace(0.0, 4.0, 400)
    load = np.round(600 * np.sin(2 * np.pi * t) + 200 * np.sin(7 * t))
    raw = _register(load)
    assert np.array_equal(decode_sign_bit(raw), load)
    said = sign_bit_evidence(raw)
    assert "sign in bit 10" in said and "PR 1014" in said, said
    assert sign_bit_evidence(load + 1024) == ""  # a signed number passing 1024 smoothly: not the register
    assert sign_bit_evidence(load) == ""  # negative values: a signed number
    always_negative = _register(-np.abs(load) - 5)
    assert sign_bit_evidence(always_negative) == ""  # one half only: undecidable from the values alone ...
    assert "readings are all negative" in sign_bit_evidence(always_negative, falls_with_torque=True)  # ... not here
    with pytest.raises(ValueError, match="not a whole number in"):
        decode_sign_bit(np.array([3.0, 2048.0]))


@pytest.fixture(scope="module")
def bags(tmp_path_factory):
    """(the simulated run's bag [N·m], the same run as raw Present_Load readings, k per joint [N·m per unit])."""
    root = tmp_path_factory.mktemp("sign_bit")
    rec = simulate(SECONDS, seed=7)
    torque = write_recording(rec, root / "torque")
    k = np.abs(rec.effort).max(axis=0) / 900.0
    rec.effort = _register(np.round(rec.effort / k))
    return torque, write_recording(rec, root / "register"), k


def test_training_names_the_register_and_its_fix_trains_the_model_of_the_torque(bags, tmp_path, capsys):
    torque, register, k = bags
    names = ("joint1", "joint2", "joint3")
    assert main(["train", "--bag", str(register), "--out", str(tmp_path / "refused"), "--method", "rbd"]) == 2
    err = capsys.readouterr().err
    for joint in names:
        assert f"pass --effort-sign-bit {joint}:10 to decode it" in err, err
        assert f"--torque-constant {joint}:-1" not in err, err  # the old advice, which trains nonsense
    assert "a register with the sign in bit 10" in err
    flags = ["--effort-sign-bit", *(f"{j}:10" for j in names),
             "--torque-constant", *(f"{j}:{float(kj)!r}" for j, kj in zip(names, k))]
    assert main(["train", "--bag", str(register), "--out", str(tmp_path / "decoded"), "--method", "rbd",
                 *flags]) == 0
    assert main(["train", "--bag", str(torque), "--out", str(tmp_path / "torque"), "--method", "rbd"]) == 0
    capsys.readouterr()
    decoded, truth = (json.loads((tmp_path / d / "model.json").read_text()) for d in ("decoded", "torque"))
    assert decoded["units"]["tau"] == "N*m"
    # the labels differ only by the register's rounding (at most k/2 per sample): so may the errors
    np.testing.assert_allclose(decoded["metrics"]["rmse_per_joint"], truth["metrics"]["rmse_per_joint"], rtol=0,
                               atol=float(np.max(k)))
