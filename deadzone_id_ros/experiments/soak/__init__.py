"""The soak test (``deadzone-id soak``): the controller against the simulated arm under random events, every
command checked.

- :mod:`.run`: the soak, its results and its report.
"""

__all__ = ["run"]
