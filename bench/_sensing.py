"""The force-sensing settings the benchmarks run the controller with: the bundled arm's, as ``deadzone-id sense`` gave
them.

The values are the output of ``deadzone-id sense --out OUT --seeds 1 2 3 --duration 60 --calibration-duration 90
--free-duration 160`` on the bundled arm (docs/sensing_results.md, section "Bundled arm, 10 simulated minutes of free
motion, confirm 2"): the band estimator's thresholds, band, fade, load gain and friction correction, so the benchmarks
time the full estimate (residual, friction correction, dead-zone band, two-sample contact test, wrench at the tip of
link3), not a reduced one. They are settings of the timed code, not figures of the benchmark: its cost does not
depend on their values. The velocity threshold is the one test/nodes/test_sensing_live.py uses.
"""

from __future__ import annotations

# field -> value of deadzone_id_ros.sensing.SensingConfig (every field is also a node parameter of that name)
BUNDLED_SENSING: dict[str, object] = {
    "sensing": True,
    "sensing_velocity_threshold": (0.02, 0.02, 0.02),
    "sensing_threshold": (0.06, 0.115, 0.032),
    "sensing_band": (0.12, 0.4048, 0.15),
    "sensing_fade_velocity": (0.03, 0.0357, 0.1112),
    "sensing_band_load_gain": (0.2154, 0.2235, 0.2228),
    "sensing_friction": (-0.0136, 0.0078, -0.1422, -0.0731, 0.0325, -0.0335, 0.0257, -0.0764, -0.1471, 0.0745,
                         -0.0138, 0.0113, -0.0705, -0.1523, 0.0267),
    "sensing_friction_stribeck": (1.0, 2.0),
    "sensing_confirm": 2,
    "sensing_frame": "link3",
    "sensing_point": (0.0, 0.0, 0.22),
}


def ros_args(settings: dict[str, object]) -> list[str]:
    """``-p name:=value`` arguments of a node command line for ``settings`` (tuples as float arrays, booleans in
    lower case), e.g. ``["-p", "sensing:=true", "-p", "sensing_threshold:=[0.06, 0.115, 0.032]", ...]``."""
    out: list[str] = []
    for name, value in settings.items():
        if isinstance(value, bool):
            text = "true" if value else "false"
        elif isinstance(value, tuple):
            text = "[" + ", ".join(repr(float(v)) for v in value) + "]"
        else:
            text = str(value)
        out += ["-p", f"{name}:={text}"]
    return out
