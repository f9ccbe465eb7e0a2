"""Benchmark: the teleoperation simulator's speed (two arms) beside raw MuJoCo on the same two models, in one run.

- ``teleop_sim_realtime_factor``: simulated seconds per wall second of the two simulated arms of ``deadzone-id
  teleop`` alone (:class:`~deadzone_id_ros.sim.SimArm` step + measure per 1 ms for each: the leader with the
  operator's hand, the follower with the box; geared_desktop_arm profile), under a sinusoidal torque.
- ``teleop_raw_mujoco_realtime_factor``: a bare ``mujoco.mj_step`` loop on the same two compiled models (hand and
  box included, ``qfrc_applied`` from the same torque), timed in blocks alternating with the simulator's
  (``_timing.paired_factors``) so both see the same load; ``teleop_sim_ratio_raw_mujoco`` = the two, the median over
  the blocks (target >= 0.5, the issue's).
- ``teleop_realtime_factor``: the whole in-process rig (:class:`~deadzone_id_ros.teleop.sim.TeleopRig`: both arms,
  both force sensors and the bilateral controller, one tick per physics step), the hold scenario of ``deadzone-id
  teleop`` with the identified model, simulated seconds per wall second of its run loop.

Run: ``python bench/bench_teleop.py [--quick]``.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _timing import paired_factors  # noqa: E402


def _arms():
    """The leader (operator's hand holding it at home) and follower (the box of the hold scenario) SimArms."""
    from deadzone_id_ros.experiments.teleop.run import TeleopSettings, _box
    from deadzone_id_ros.experiments.teleop.sizing import joint_move
    from deadzone_id_ros.sim.arm import SimArm
    from deadzone_id_ros.sim.external_forces import ExternalForces
    from deadzone_id_ros.teleop.build import arm_setup
    from deadzone_id_ros.teleop.sim import OperatorHand

    setup = arm_setup("", "identified")
    home = np.asarray(setup.sim.initial_position, float)
    n = len(home)
    hand = OperatorHand(reference=lambda t: home, stiffness=[10.0] * n, damping=[0.5] * n)
    box = _box(setup, home, joint_move(setup, TeleopSettings()))
    leader = SimArm(dataclasses.replace(setup.sim, seed=1), external=hand)
    follower = SimArm(dataclasses.replace(setup.sim, seed=2), external=ExternalForces(obstacle=box))
    for arm in (leader, follower):
        arm.reset(home)
    return leader, follower


def rig_factor(duration: float) -> float:
    """Simulated seconds per wall second of the in-process rig's run loop (hold scenario, identified model)."""
    from deadzone_id_ros.experiments.teleop.run import TeleopSettings, run_case
    from deadzone_id_ros.teleop.build import arm_setup

    setup = arm_setup("", "identified")
    tr, _, _ = run_case(setup, setup, "bilateral", "hold", 1, TeleopSettings(duration=duration))
    return len(tr.t) * float(np.median(np.diff(tr.t))) / tr.wall_s


def run(quick: bool = False) -> dict[str, float]:
    """Return teleop_sim_realtime_factor, teleop_raw_mujoco_realtime_factor, teleop_sim_ratio_raw_mujoco and
    teleop_realtime_factor."""
    seconds = 3.0 if quick else 10.0
    sim, raw, ratio = paired_factors(_arms(), _arms(), seconds)
    rig = rig_factor(4.0 if quick else 8.0)
    print(f"teleop, two arms at a 1 ms step: SimArms {sim:.1f}x real time, bare mj_step on the same models {raw:.1f}x "
          f"(alternating blocks; median ratio {ratio:.2f}, target >= 0.5); whole rig with the bilateral controller "
          f"{rig:.1f}x real time")
    return {"teleop_sim_realtime_factor": sim, "teleop_raw_mujoco_realtime_factor": raw,
            "teleop_sim_ratio_raw_mujoco": ratio, "teleop_realtime_factor": rig}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="shorter runs")
    print(run(parser.parse_args().quick))
