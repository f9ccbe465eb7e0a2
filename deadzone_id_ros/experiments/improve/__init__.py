"""Learning from its own runs (``deadzone-id improve``): record, train on everything recorded, pick, check, run again.

- :mod:`.run`: the loop (in-process); :mod:`.live`: the same loop over DDS;
- :mod:`.results`: its typed results (improve.json); :mod:`.report`: its report.
"""

__all__ = ["live", "report", "results", "run"]
