"""The demo (``deadzone-id demo``): its stages, resumable, with an output lock.

- :mod:`.run`: the stage runner; :mod:`.stages`: the stages;
- :mod:`.results`: its typed results; :mod:`.report`: report.md.
"""

__all__ = ["report", "results", "run", "stages"]
