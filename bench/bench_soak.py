"""Soak of the controller against the simulated arm (issue 12): in process for 10 simulated minutes, then live over
DDS in lockstep for 60 simulated seconds; prints its figures.

1. In process (:func:`deadzone_id_ros.experiments.soak.run.run_soak`): FeedforwardController + SimArm at 1 kHz
   with random reference switches, live parameter sets, measurement gaps, NaNs and runaways; every command checked
   against the clamp and the rate limit, the safe state checked to start exactly on the tick a limit is crossed.
2. Live (:mod:`_soak_live`): sim_arm and feedforward_controller as processes over DDS in lockstep, with reference
   switches, excursions past the URDF limits, parameter sets (some refused), injected state gaps and resets; every
   command checked against the clamp and the rate limit in force, and every fault against the crossings computed
   from the states and the controller's q_d.

Usage: ``python bench/bench_soak.py [--quick]`` (quick: 60 s in process, 15 s live). ``run(quick)`` returns the
bench/results.json keys (``soak_*``).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

EFFORT = np.array([4.0, 10.0, 5.0])  # URDF effort limits of the bundled arm [N m]


def _print_violations(violations: list[str]) -> None:
    for v in violations:
        print("  VIOLATION", v)


def in_process(seconds: float) -> dict[str, float]:
    from deadzone_id_ros.experiments.soak.run import run_soak

    res = run_soak(seconds, seed=0, progress=True)
    print(f"in process: {res.sim_seconds:.0f} s simulated in {res.wall_seconds:.0f} s; {res.commands} commands, "
          f"{res.reference_switches} reference switches, {res.parameter_sets} parameter sets, {res.gaps} gaps, "
          f"{res.nonfinite_injected} NaN states, {res.excursions} excursions; faults {res.faults} (expected "
          f"{res.expected_faults}, {res.fault_reasons}), resets {res.resets}; max |tau|/clamp "
          f"{res.max_clamp_ratio:.4f}, max change/rate limit {res.max_rate_ratio:.6f}; violations "
          f"{len(res.violations)}")
    _print_violations(res.violations)
    return {"soak_sim_seconds": res.sim_seconds, "soak_violations": float(len(res.violations)),
            "soak_faults": float(res.faults), "soak_faults_expected": float(res.expected_faults),
            "soak_fault_mismatch": float(abs(res.faults - res.expected_faults)),
            "soak_max_rate_ratio": res.max_rate_ratio, "soak_max_clamp_ratio": res.max_clamp_ratio}


def live(seconds: float) -> dict[str, float]:
    """The DDS part: ``seconds`` of simulated time in lockstep (:func:`_soak_live.live_soak`)."""
    from _soak_live import live_soak

    res = live_soak(seconds, seed=0)
    print(f"live over DDS (lockstep): {res.sim_seconds:.3f} s simulated in {res.wall_seconds:.0f} s; {res.commands} "
          f"commands, {res.references} references, {res.excursions} excursions, {res.parameter_sets} parameter sets "
          f"({res.refused_sets} with a refused DOB cutoff), {res.gaps} state gaps, {res.resets} resets; faults "
          f"{res.faults} ({res.unjudged_faults} on states not judged; expected {res.expected_faults}; "
          f"{res.unjudged_states} states and {res.unjudged_pairs} command pairs not judged); max |tau|/clamp "
          f"{res.max_clamp_ratio:.4f}, max change/rate limit {res.max_rate_ratio:.6f}; violations "
          f"{len(res.violations)}")
    _print_violations(res.violations)
    return {"soak_live_sim_seconds": res.sim_seconds, "soak_live_violations": float(len(res.violations)),
            "soak_live_faults": float(res.faults - res.unjudged_faults),
            "soak_live_faults_expected": float(res.expected_faults),
            "soak_live_fault_mismatch": float(abs(res.faults - res.unjudged_faults - res.expected_faults)),
            "soak_live_gaps": float(res.gaps), "soak_live_max_rate_ratio": res.max_rate_ratio,
            "soak_live_max_clamp_ratio": res.max_clamp_ratio, "soak_live_nonfinite": float(res.nonfinite)}


def run(quick: bool = False) -> dict[str, float]:
    """Both parts; returns the ``soak_*`` figures."""
    out = in_process(60.0 if quick else 600.0)
    out.update(live(15.0 if quick else 60.0))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    for key, value in run(args.quick).items():
        print(f"{key}: {value:.6g}")


if __name__ == "__main__":
    main()
