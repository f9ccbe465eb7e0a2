"""The demo (``deadzone-id demo``): its stages, resumable, with an output lock.

- :mod:`.run`: the stage runner; :mod:`.stages`: the stages; :mod:`.config`: their sizes (``DemoConfig``);
  :mod:`.context`: what a stage sees and the record it returns;
- :mod:`.results`: its typed results; :mod:`.report`: report.md.
"""

__all__ = ["config", "context", "report", "results", "run", "stages"]
