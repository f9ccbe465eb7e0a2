"""Experiments: the orchestration of multi-stage runs (the demo's stages, resumable), kept apart from the argument
parsing and printing of :mod:`deadzone_id_ros.cli`.

Modules are imported where they are used (``from deadzone_id_ros.experiments.demo import run_demo``), so that
importing this package stays cheap.
"""

from __future__ import annotations

__all__: list[str] = []
