"""Experiments (core, no ROS): each with its results type and its report.

- ``compare``: every inverse-dynamics method on the same split over several seeds (:mod:`.compare`; results
  :mod:`.compare_results`, report.md :mod:`.compare_report`, the pick :mod:`.pick` / :mod:`.pick_report`, the
  data-efficiency curve :mod:`.efficiency`, plots :mod:`.plots`);
- ``closed loop``: every controller on held-out references, in-process and live over DDS (:mod:`.closed_loop`, the
  controllers and the in-process runs :mod:`.closed_loop_sim`; results :mod:`.closed_loop_results`; report
  :mod:`.closed_loop_report`);
- ``soak``: the controller against the simulated arm under random events, every command checked (:mod:`.soak`);
- ``sweep``: a grid of comparisons (data sets x alpha x data fractions), one coarse cell each (:mod:`.sweep`; its
  file :mod:`.sweep_config`, its table :mod:`.sweep_report`, the cell :mod:`.compare_cell`), run in-process or as Ray
  tasks by :mod:`deadzone_id_ros.engine` (Ray, an optional extra, imported only there);
- ``demo``: the demo's stages, resumable, with an output lock (:mod:`.demo`, :mod:`.demo_stages`); its results
  and report.md (:mod:`.demo_results`, :mod:`.demo_report`).

The names below are imported on first use (PEP 562), so that ``deadzone-id --help`` does not load torch.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["ClosedLoopRun", "CompareReport", "DemoReport", "MethodResult", "SoakResult", "SweepReport", "quick_config",
           "run_cells", "run_closed_loop", "run_compare", "run_soak", "run_sweep"]

_WHERE = {"ClosedLoopRun": "closed_loop_results", "CompareReport": "compare_results", "DemoReport": "demo_results",
          "MethodResult": "compare_results", "SoakResult": "soak", "quick_config": "compare",
          "run_closed_loop": "closed_loop", "run_compare": "compare", "run_soak": "soak", "SweepReport": "sweep_report",
          "run_cells": ".engine", "run_sweep": "sweep"}


def __getattr__(name: str) -> Any:
    """The public name ``name``, imported from its module on first use.

    Raises:
        AttributeError: ``name`` is not a public name of the package.
    """
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f".{_WHERE[name]}", __name__), name)
