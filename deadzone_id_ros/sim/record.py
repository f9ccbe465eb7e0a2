"""An offline simulated run written as a bag, stamped like a live recording (``deadzone-id simulate``; core, no ROS)."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..data.types import Recording
from ..stamps import s_to_ns

__all__ = ["SimulatedBag", "simulate_bag"]


@dataclass(frozen=True)
class SimulatedBag:
    """Result of :func:`simulate_bag`: the bag directory, the recording and the wall time of the simulation [s]."""

    path: Path
    recording: Recording
    sim_seconds: float


def simulate_bag(duration: float, seed: int, out: str | Path, *, storage: str = "mcap", rate_hz: float | None = None,
                 start_time: float | None = None, notes: str = "", progress: bool = False,
                 sim_config: Any = None, controller_config: Any = None, excitation_config: Any = None,
                 robot: str | None = None, **write_kw: Any) -> SimulatedBag:
    """Simulate (:func:`~deadzone_id_ros.sim.offline.simulate`) and write the run as a rosbag2 plus episode.yaml.

    The stamps are shifted so that simulated time 0 is ``start_time`` [s since epoch] (default: now), as a live
    recording would stamp it.

    Args:
        duration [s], seed, rate_hz [Hz] (None: the controller config's control_rate), progress, sim_config,
            controller_config, excitation_config: as for ``simulate``.  robot: the robot's name for episode.yaml
            (default: the bundled arm's description).
        out: bag directory to create.  storage: "mcap" or "sqlite3".  notes: free text for episode.yaml.
        write_kw: further arguments of :func:`~deadzone_id_ros.data.write_recording` (topics).

    Raises:
        ValueError: duration/rate not positive or the rate not a whole number of physics steps.
        FileExistsError: ``out`` exists.
    """
    from ..data import write_recording
    from .offline import simulate

    start = time.time() if start_time is None else start_time
    t0 = time.perf_counter()
    rec = simulate(duration, seed, sim_config=sim_config, controller_config=controller_config,
                   excitation_config=excitation_config, rate_hz=rate_hz, progress=progress)
    sim_s = time.perf_counter() - t0
    offset = s_to_ns(start) - int(rec.state_t_ns[0])  # sim time 0 -> the start wall time
    rec.state_t_ns = np.asarray(rec.state_t_ns, dtype=np.int64) + offset
    if rec.command_t_ns is not None:
        rec.command_t_ns = np.asarray(rec.command_t_ns, dtype=np.int64) + offset
    if rec.reference_t_ns is not None:
        rec.reference_t_ns = np.asarray(rec.reference_t_ns, dtype=np.int64) + offset
    rec.metadata.setdefault("robot", robot or "deadzone_id_ros simulated 3-DOF arm")
    if notes:
        rec.metadata["notes"] = notes
    path = write_recording(rec, out, storage=storage, progress=progress, **write_kw)
    return SimulatedBag(Path(path), rec, sim_s)
