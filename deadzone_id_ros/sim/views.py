"""Views of a MuJoCo array's entries for the simulator's hot path (core, no ROS): a numpy view where the entries are
contiguous, else :class:`Indexed`."""

from __future__ import annotations

import numpy as np

__all__ = ["Indexed", "as_slice", "view"]


def as_slice(index: np.ndarray) -> slice | np.ndarray:
    """``index`` (an index array) as a slice when it is a contiguous increasing run, else unchanged."""
    if len(index) and np.array_equal(index, np.arange(index[0], index[0] + len(index))):
        return slice(int(index[0]), int(index[0]) + len(index))
    return index


def view(array: np.ndarray, index: slice | np.ndarray) -> np.ndarray | Indexed:
    """The entries ``index`` of a MuJoCo array: a view for a slice, else an :class:`Indexed` that indexes on each
    access."""
    return array[index] if isinstance(index, slice) else Indexed(array, index)


class Indexed:
    """The entries ``index`` (an index array) of a MuJoCo array, with the part of an array view's interface that
    :class:`~deadzone_id_ros.sim.arm.SimArm` uses: ``np.asarray``/``np.array``, ``tolist`` and ``x[:] = values``."""

    __slots__ = ("_array", "_index")

    def __init__(self, array: np.ndarray, index: np.ndarray) -> None:
        self._array, self._index = array, index

    def __array__(self, dtype: object = None, copy: object = None) -> np.ndarray:
        """The entries as a new array."""
        return self._array[self._index]

    def tolist(self) -> list[float]:
        """The entries as floats."""
        return self._array[self._index].tolist()

    def __setitem__(self, key: slice, values: object) -> None:
        """Write ``values`` (one per entry) into the entries; ``key`` must be ``slice(None)`` (``x[:] = values``)."""
        self._array[self._index] = values
