"""The shipped robot profiles give a simulated arm whose data the simulator's own inverse dynamics explains.

The Panda profile without armature (link inertia only) and with the bundled arm's DOB cutoff ratio made joints 1
and 3 chatter at 50-500 Hz under the default pd_dob loop (issue 20): the torque-rate limit hit on a quarter of the
ticks, and the simulator's own inverse dynamics, fed the data path's q, dq and Savitzky-Golay ddq, missed the
recorded torque by 0.6 of its standard deviation on joint 1 (the 7.3 N·m "noise floor" of the demo reports).
"""

from __future__ import annotations

import dataclasses
import warnings

import numpy as np
import pytest
from conftest import needs_erd

from deadzone_id_ros.data.dataset import dataset_from_recordings
from deadzone_id_ros.robot_configs import simulation_configs
from deadzone_id_ros.sim import SimArm
from deadzone_id_ros.sim.offline import simulate

#: Simulated time of each run [s]: long enough for the chatter to show (on the old Panda profile, seed 1, it starts
#: between 3 and 5 s, when the excitation brings the axes of joints 1 and 3 near each other).
DURATION = 6.0
#: Largest allowed RMSE of the simulator's inverse dynamics on moving pairs, as a fraction of the recorded torque's
#: standard deviation, per joint [1]. Measured with the fixed profiles: at most 0.08 (Panda, 8 s); the chattering
#: Panda: 0.63 on joint 1.
MAX_FLOOR_FRACTION = 0.2


@pytest.mark.parametrize("robot", [
    "three_dof_arm",
    pytest.param("panda", marks=needs_erd),
])
def test_profile_simulation_is_explained_by_the_simulators_inverse_dynamics(robot):
    cfgs = simulation_configs(robot)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # FrictionSourceWarning: the profile's friction overrides the URDF's
        rec = simulate(DURATION, 1, cfgs["sim_config"], cfgs["controller_config"],
                       excitation_config=cfgs["excitation_config"])
        arm = SimArm(dataclasses.replace(cfgs["sim_config"], seed=1))
    assert sum(rec.metadata["stats"]["rate_limit_events"]) == 0, rec.metadata["stats"]["rate_limit_events"]
    ep = dataset_from_recordings([rec]).episodes[0]
    predicted = arm.inverse_dynamics(ep.q, ep.dq, ep.ddq, friction=True)
    moving = np.abs(ep.dq) > 0.1 * ep.dq.std(axis=0)
    for j, name in enumerate(ep.joint_names):
        rmse = float(np.sqrt(np.mean((predicted[moving[:, j], j] - ep.tau[moving[:, j], j]) ** 2)))
        assert rmse < MAX_FLOOR_FRACTION * float(ep.tau[:, j].std()), (name, rmse, float(ep.tau[:, j].std()))
