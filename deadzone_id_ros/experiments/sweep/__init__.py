"""The sweep (``deadzone-id sweep``): a grid of comparisons (data sets x alpha x data fractions), one coarse cell
each, in-process or as Ray tasks (:mod:`deadzone_id_ros.engine`).

- :mod:`.run`: the sweep; :mod:`.config`: its file; :mod:`.report`: its results and table.
"""

__all__ = ["config", "report", "run"]
