"""The task runs of ``deadzone-id improve --live``: each run recorded over DDS in lockstep by the nodes a robot uses.

Each task run of an iteration starts ``sim_feedforward.launch.yaml`` through the live runner
(:func:`deadzone_id_ros.launching.live.live_run`: sim_arm, excitation, feedforward_controller and recorder as separate
processes, the simulator in lockstep with the controller, simulated time) with the iteration's controller (ctc_dob,
the nominal rigid body or the accepted model's artifact as ``model_path``) and the task reference's seed; the
recorder node's episode bag is the run's training data, read by the same training pipeline as the in-process bags.
Every run is a fresh launch with the iteration's model (the controller's run-time ``~/swap_model`` is not used here:
one launch per reference also restarts the excitation and the recorder, which a swap would not).

A DOB cutoff scale other than 1 reaches the node as a copy of the bundled controller parameter file with
``dob_cutoff`` set to the in-process runs' cutoff (:func:`controller_params_file`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import yaml

if TYPE_CHECKING:
    from ..closed_loop.sim import ControllerSpec
    from .results import RunSetup

__all__ = ["controller_params_file", "record_live"]


def controller_params_file(setup: RunSetup, dob_scale: float, out: Path) -> Path | None:
    """A controller parameter file for the live runs whose DOB cutoff is ``setup.base.dob_cutoff`` times
    ``dob_scale`` [rad/s], written as ``out``/controller_params.yaml; None when ``dob_scale`` is 1 (the launch
    file's default parameters and the robot profile give the in-process runs' cutoff).

    Raises:
        FileNotFoundError: the bundled config/feedforward_controller.yaml cannot be found.
    """
    from ...resources import share_file

    if dob_scale == 1.0:
        return None
    doc = yaml.safe_load(share_file("config", "feedforward_controller.yaml").read_text())
    doc["/**"]["ros__parameters"]["dob_cutoff"] = [float(g) * dob_scale for g in setup.base.dob_cutoff]
    out.mkdir(parents=True, exist_ok=True)
    path = out / "controller_params.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


def record_live(spec: ControllerSpec, seeds: Sequence[int], duration: float, robot: str | None,
                params_file: Path | None, folder: Path, log: Callable[[str], None]) -> list[str]:
    """Record one live run per seed of ``seeds`` with the controller ``spec`` under ``folder``/seed{S} (node output
    in ``folder``/seed{S}.log), each ``duration`` [s] of reference in simulated time; returns the episode bags.

    Raises:
        LaunchError, DataError (StallError): a run that fails twice (:func:`~deadzone_id_ros.launching.live.live_run`);
            improve cannot train without its data, so this is fatal.
    """
    from ...launching.live import closed_loop_metrics, live_run, robot_launch_args

    args = {"mode": spec.mode, "model": spec.model, **robot_launch_args(robot or "")}
    if spec.model_path:
        args["model_path"] = str(Path(spec.model_path).resolve())
    if params_file is not None:
        args["controller_params_file"] = str(params_file.resolve())
    bags = []
    for seed in seeds:
        run_dir = folder / f"seed{int(seed)}"
        bag = live_run(run_dir, {**args, "seed": str(int(seed))}, duration, folder / f"seed{int(seed)}.log")
        m = closed_loop_metrics(bag)
        log(f"  live run seed {int(seed)} ({spec.label}): tracking RMSE {m.tracking_rmse_mean * 1e3:.3f} mrad")
        bags.append(str(bag))
    return bags
