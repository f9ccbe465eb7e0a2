"""The node parameters of a ``deadzone-id sense`` calibration (core, no ROS): OUT/sensing.yaml, a ROS 2 parameter file
that the controller's and the force_estimator's launch files take as ``sensing_params_file:=``.

It holds the settings of the estimator the product recommends, the model's residual with its friction correction and
the dead-zone band (``residual_band`` of the report), as calibrated on the run's own free-motion seed: thresholds,
band, fade, load gain, friction correction, stuck velocity, cutoff, confirm count and the frame and point of the
wrench. It does not set ``sensing`` itself: the controller's launch files pass ``sensing:=`` on the command line, which
wins over any parameter file, so sensing is switched on there (``sensing:=true``). The thresholds hold for the model
the calibration used; the file says which, and for the URDF's rigid body it sets ``model_friction: true`` (that
calibration's model includes the friction).
"""

from __future__ import annotations

from pathlib import Path

import yaml

from .results import SenseResults

__all__ = ["RECOMMENDED", "ParameterValue", "sensing_parameters", "write_sensing_params"]

#: the value of one node parameter as the file holds it
ParameterValue = bool | int | float | str | list[float]

#: the estimator whose settings go to the nodes
RECOMMENDED = "residual_band"


def _floats(values: list[float]) -> list[float]:
    """``values`` as floats rounded to 6 decimals (readable in the file, far below any threshold's precision)."""
    return [round(float(x), 6) for x in values]


def sensing_parameters(res: SenseResults) -> dict[str, ParameterValue]:
    """{node parameter: value} of ``res``'s :data:`RECOMMENDED` estimator (lists of floats, JSON/YAML-ready).

    Raises:
        ValueError: ``res`` has no such estimator, or no velocity threshold (results written before it was recorded).
    """
    est = next((e for e in res.estimators if e.name == RECOMMENDED), None)
    if est is None or not res.velocity_threshold:
        raise ValueError(f"these sense results lack the {RECOMMENDED!r} estimator or its velocity threshold: run "
                         "deadzone-id sense again")
    floats = _floats
    params: dict[str, ParameterValue] = {
        "sensing_estimator": "residual", "sensing_dead_zone": True,
        "sensing_cutoff": float(res.cutoff), "sensing_velocity_threshold": floats(res.velocity_threshold),
        "sensing_threshold": floats(est.threshold), "sensing_band": floats(est.band),
        "sensing_fade_velocity": floats(est.fade_velocity), "sensing_band_load_gain": floats(est.load_gain),
        "sensing_friction": floats(res.friction), "sensing_friction_stribeck": floats(res.friction_stribeck),
        "sensing_confirm": int(res.confirm), "sensing_frame": res.frame, "sensing_point": floats(res.point)}
    if not res.model.startswith("learned"):
        params["model_friction"] = True
    return params


def write_sensing_params(path: Path, res: SenseResults) -> Path:
    """Write :func:`sensing_parameters` as a ROS 2 parameter file (``/**: ros__parameters:``) at ``path``, with a
    header naming the robot, the model and how to use it; returns ``path``.

    Raises:
        ValueError: as :func:`sensing_parameters`.
    """
    params = sensing_parameters(res)
    learned = res.model.startswith("learned")
    model = (f"model:=learned model_path:={res.model.split(':', 1)[1].strip()}" if learned else "model:=rbd")
    why = "" if learned else " (this file sets model_friction: true: the calibration's rigid body has the friction)"
    header = [
        f"# Force sensing of robot {res.robot} as `deadzone-id sense` calibrated it (estimator {RECOMMENDED}: the",
        "# model's residual with its friction correction and the dead-zone band; docs/sensing.md).",
        f"# Calibrated on the residual of: {res.model}.",
        f"# The thresholds hold for that model only: run the node with {model}{why}.",
        f"#   deadzone-id launch sim_feedforward.launch.yaml robot:={res.robot} mode:=ctc_dob {model} \\",
        f"#       sensing:=true sensing_params_file:={path}",
        f"#   deadzone-id launch force_estimator.launch.yaml robot:={res.robot} {model} \\",
        f"#       sensing_params_file:={path}",
    ]
    body = yaml.safe_dump({"/**": {"ros__parameters": params}}, default_flow_style=None, sort_keys=False, width=100)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(header) + "\n" + body)
    return path
