"""``inspect`` says the effort unit the loader will use (review of issue 40 item 5): a serial-bus servo's Present_Load
(whole numbers up to 1000) is named as such per joint, by the loader's own rule
(:func:`deadzone_id_ros.data.dataset.bag_effort_units`). Before, inspect guessed one unit from the largest |effort|
alone and called it "unknown ... motor current in mA" while training labelled the same bag 0.1%duty.
"""

from __future__ import annotations

import numpy as np

from deadzone_id_ros.data.bag import write_recording
from deadzone_id_ros.data.dataset import load_dataset
from deadzone_id_ros.data.effort_units import PRESENT_LOAD
from deadzone_id_ros.data.inspect import inspect_bag
from deadzone_id_ros.sim.offline import simulate


def test_inspect_names_the_unit_the_loader_uses(tmp_path):
    rec = simulate(2.0, seed=3)
    torque = write_recording(rec, tmp_path / "torque")
    load = rec.effort / np.abs(rec.effort).max(axis=0) * 900.0  # whole numbers up to 900: the servo's readout
    rec.effort = np.round(load)
    servo = write_recording(rec, tmp_path / "servo")
    assert set(load_dataset(servo).effort_units.values()) == {PRESENT_LOAD}
    note = inspect_bag(servo)["effort_note"]
    assert note.startswith(f"effort unit {PRESENT_LOAD}: ") and "Present_Load" in note, note
    assert "controller refuses it" in note and "--torque-constant" in note, note
    assert inspect_bag(torque)["effort_note"].startswith("effort is used as the torque label as recorded"), note
