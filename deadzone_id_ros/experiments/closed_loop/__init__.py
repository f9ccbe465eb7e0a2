"""The closed-loop comparison (``deadzone-id closed-loop``): every controller on held-out references, in-process
and live over DDS.

- :mod:`.run`: the experiment; :mod:`.sim`: the controllers and the in-process runs;
- :mod:`.results`: its typed results; :mod:`.report`: its report.
"""

__all__ = ["report", "results", "run", "sim"]
