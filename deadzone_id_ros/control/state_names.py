"""Which /joint_states messages a controller takes (core, no ROS): the controlled joints found by name.

A message that carries every controlled joint gives their indices (cached per name list). One that carries none of
them comes from another publisher on the topic (a gripper driver beside the arm driver, motoman PR 59): it is
counted and reported once per name list, never an error. One that carries some but not all of them is refused: the
arm's own driver lost a joint.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

__all__ = ["StateNameMap"]


class StateNameMap:
    """Map the joint names of incoming states to the controlled joints.

    Args:
        joint_names: (J,) the controlled joints.
        on_foreign: called once per name list that carries none of them, with that list.
        on_missing: called for every message that carries some but not all of them, with (missing joints, its list).

    Attributes:
        foreign_states: messages that carried none of the controlled joints.  foreign_names: the latest such list.
    """

    CACHE_SIZE = 16  # name lists remembered (a publisher whose name list changes every message stays bounded)

    def __init__(self, joint_names: Sequence[str], on_foreign: Callable[[tuple[str, ...]], None],
                 on_missing: Callable[[list[str], tuple[str, ...]], None]) -> None:
        self.joint_names = tuple(joint_names)
        self._on_foreign, self._on_missing = on_foreign, on_missing
        self._cache: dict[tuple[str, ...], np.ndarray | None] = {}
        self.foreign_states = 0
        self.foreign_names: tuple[str, ...] = ()

    def indices(self, names: Sequence[str]) -> np.ndarray | None:
        """(J,) indices of the controlled joints in ``names``, or None when the message is not to be used."""
        key = tuple(names)
        if key not in self._cache:
            missing = [j for j in self.joint_names if j not in key]
            if len(missing) == len(self.joint_names):
                self._on_foreign(key)
                self._cache[key] = None
            elif missing:
                self._on_missing(missing, key)
                return None
            else:
                self._cache[key] = np.array([key.index(j) for j in self.joint_names], dtype=int)
            if len(self._cache) > self.CACHE_SIZE:
                self._cache.pop(next(iter(self._cache)))
        idx = self._cache.get(key)
        if idx is None:
            self.foreign_states += 1
            self.foreign_names = key
        return idx
