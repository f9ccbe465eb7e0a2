"""The joint map between a leader and a follower arm (core, no ROS).

Each follower joint is driven by exactly one leader joint. Two arms of the same profile map by name; two different
profiles need an explicit map (follower joint -> leader joint). A bilateral run refuses to start when a follower
joint has no leader joint, when a map names a joint either arm lacks, or when two follower joints share a leader
joint: the follower would then move with nothing commanding it, or the operator would feel one contact twice.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ..errors import SafetyError

__all__ = ["JointMap"]


@dataclass(frozen=True)
class JointMap:
    """Follower joint i is driven by leader joint ``leader_index[i]``.

    Attributes:
        leader_joints: (Jl,) the leader's joint order.  follower_joints: (Jf,) the follower's.
        leader_index: (Jf,) int, index into ``leader_joints`` per follower joint.
        unmapped_leader: leader joints no follower joint uses (held where they are, e.g. a leader's extra wrist).
    """

    leader_joints: tuple[str, ...]
    follower_joints: tuple[str, ...]
    leader_index: np.ndarray
    unmapped_leader: tuple[str, ...]

    @classmethod
    def build(cls, leader_joints: Sequence[str], follower_joints: Sequence[str],
              mapping: Mapping[str, str] | None = None) -> JointMap:
        """Map by name (``mapping`` None), or by ``mapping`` {follower joint: leader joint}.

        Raises:
            SafetyError: a follower joint without a leader joint, a map entry naming a joint the arm lacks, or a
                leader joint used twice (each named, with both arms' joints), "refusing to start".
        """
        lead, foll = tuple(leader_joints), tuple(follower_joints)
        if not foll:
            raise SafetyError("the follower has no joints; refusing to start")
        pairs = dict(mapping) if mapping is not None else {j: j for j in foll if j in lead}
        problems = []
        unknown_f = sorted(j for j in pairs if j not in foll)
        unknown_l = sorted({v for v in pairs.values() if v not in lead})
        missing = [j for j in foll if j not in pairs]
        used: dict[str, list[str]] = {}
        for f, ldr in pairs.items():
            used.setdefault(ldr, []).append(f)
        twice = {ldr: fs for ldr, fs in used.items() if len(fs) > 1}
        if missing:
            problems.append(f"follower joint(s) {missing} have no leader joint")
        if unknown_f:
            problems.append(f"the joint map names follower joint(s) {unknown_f} the follower lacks")
        if unknown_l:
            problems.append(f"the joint map names leader joint(s) {unknown_l} the leader lacks")
        if twice:
            problems.append(f"leader joint(s) drive several follower joints: {twice}")
        if problems:
            raise SafetyError("cannot map the leader's joints onto the follower's: " + "; ".join(problems)
                              + f" (leader joints {list(lead)}, follower joints {list(foll)}); give a joint map "
                              "{follower joint: leader joint} covering every follower joint; refusing to start")
        index = np.array([lead.index(pairs[j]) for j in foll], dtype=int)
        unmapped = tuple(j for j in lead if j not in used)
        return cls(lead, foll, index, unmapped)

    def to_follower(self, leader_values: np.ndarray) -> np.ndarray:
        """(Jl,) leader-ordered values -> (Jf,) follower-ordered."""
        return np.asarray(leader_values, dtype=float)[self.leader_index]

    def to_leader(self, follower_values: np.ndarray, fill: np.ndarray) -> np.ndarray:
        """(Jf,) follower-ordered values -> (Jl,) leader-ordered; unmapped leader joints take ``fill`` (Jl,)."""
        out = np.array(fill, dtype=float, copy=True)
        out[self.leader_index] = follower_values
        return out
