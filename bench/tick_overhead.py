"""Per-tick Python overhead of FeedforwardController.step (in process, no ROS): median and p99 [µs] per mode.

The controller follows an excitation reference on states replayed from an offline simulation, so every tick does
the full law (reference sampling, model, DOB, limits).
Usage: ``python bench/tick_overhead.py [--seconds S] [--save F.npz]``.
Prints one line per mode; not a pass/fail check.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from deadzone_id_ros.control import TrajectoryPoints, build_controller
from deadzone_id_ros.robot_configs import bundled_controller_config
from deadzone_id_ros.sim.offline import simulate


def time_mode(mode: str, model: str, rec, repeats: int = 3) -> tuple[float, float]:
    """Median and p99 of one ``step`` [µs], best of ``repeats`` passes over the recording ``rec``."""
    cfg = bundled_controller_config(mode=mode, model=model)
    t = rec.state_t_ns * 1e-9
    best = None
    for _ in range(repeats):
        ctrl = build_controller(cfg)
        ctrl.set_reference(TrajectoryPoints(rec.joint_names, t, rec.reference_position, rec.reference_velocity,
                                            rec.reference_acceleration))
        times = np.empty(len(t))
        pc = time.perf_counter
        for k in range(len(t)):
            q, dq = rec.position[k], rec.velocity[k]
            c0 = pc()
            ctrl.step(t[k], q, dq)
            times[k] = pc() - c0
        med, p99 = np.median(times) * 1e6, np.percentile(times, 99) * 1e6
        if best is None or med < best[0]:
            best = (med, p99)
    return best


def commands(mode: str, model: str, rec) -> np.ndarray:
    """(N, J) commands [N·m] of one pass over the recording (to compare two versions bit for bit)."""
    cfg = bundled_controller_config(mode=mode, model=model)
    t = rec.state_t_ns * 1e-9
    ctrl = build_controller(cfg)
    ctrl.set_reference(TrajectoryPoints(rec.joint_names, t, rec.reference_position, rec.reference_velocity,
                                        rec.reference_acceleration))
    return np.array([ctrl.step(t[k], rec.position[k], rec.velocity[k]) for k in range(len(t))])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--save", default="", help="also write every mode's commands to this .npz (bit-identity check)")
    args = parser.parse_args()
    rec = simulate(args.seconds, seed=1)
    for mode, model in (("pd", "none"), ("pd_dob", "rbd"), ("ctc_dob", "rbd")):
        med, p99 = time_mode(mode, model, rec)
        print(f"{mode:8s} {model:5s} step median {med:6.2f} us  p99 {p99:6.2f} us")
    if args.save:
        np.savez(args.save, **{f"{mode}_{model}": commands(mode, model, rec)
                               for mode, model in (("pd", "none"), ("pd_dob", "rbd"), ("ctc_dob", "rbd"))})


if __name__ == "__main__":
    main()
