"""Experiments (core, no ROS): one subpackage per experiment, each with its run, its results type and its report.

- :mod:`.compare`: every inverse-dynamics method on the same split over several seeds, the pick, the data-efficiency
  curve and the plots (``deadzone-id compare``);
- :mod:`.closed_loop`: every controller on held-out references, in-process and live over DDS;
- :mod:`.improve`: the controller learning from its own runs (``deadzone-id improve``);
- :mod:`.soak`: the controller against the simulated arm under random events, every command checked;
- :mod:`.sweep`: a grid of comparisons (data sets x alpha x data fractions), one coarse cell each, in-process or as
  Ray tasks (:mod:`deadzone_id_ros.engine`);
- :mod:`.demo`: the demo's stages, resumable, with an output lock, and its report.

The names below are imported on first use (PEP 562), so that ``deadzone-id --help`` does not load torch.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["ClosedLoopRun", "CompareReport", "DemoReport", "MethodResult", "SoakResult", "SweepReport", "quick_config",
           "run_cells", "run_closed_loop", "run_compare", "run_soak", "run_sweep"]

_WHERE = {"ClosedLoopRun": "closed_loop.results", "CompareReport": "compare.results", "DemoReport": "demo.results",
          "MethodResult": "compare.results", "SoakResult": "soak.run", "quick_config": "compare.run",
          "run_closed_loop": "closed_loop.run", "run_compare": "compare.run", "run_soak": "soak.run",
          "SweepReport": "sweep.report", "run_cells": ".engine", "run_sweep": "sweep.run"}


def __getattr__(name: str) -> Any:
    """The public name ``name``, imported from its module on first use.

    Raises:
        AttributeError: ``name`` is not a public name of the package.
    """
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f".{_WHERE[name]}", __name__), name)
