"""Train/validation/test splits by episode or time block, never by random rows (no leakage between neighbours)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .types import Episode

__all__ = ["Split", "split_episodes", "time_blocks"]


@dataclass
class Split:
    """Episodes of each split. Every sample belongs to exactly one split."""

    train: list[Episode]
    val: list[Episode]
    test: list[Episode]


def time_blocks(episode: Episode, block_seconds: float) -> list[Episode]:
    """Cut ``episode`` into consecutive blocks of ``block_seconds`` [s] (the last one may be shorter).

    Raises:
        ValueError: block_seconds <= 0.
    """
    if not block_seconds > 0:
        raise ValueError(f"block_seconds = {block_seconds} must be > 0")
    n = len(episode)
    per = max(1, int(round(block_seconds / episode.dt))) if episode.dt > 0 else n
    out = []
    for k, start in enumerate(range(0, n, per)):
        sl = slice(start, min(n, start + per))
        out.append(
            Episode(
                name=f"{episode.name}/block{k}",
                source=episode.source,
                joint_names=episode.joint_names,
                t=episode.t[sl],
                q=episode.q[sl],
                dq=episode.dq[sl],
                ddq=episode.ddq[sl],
                tau=episode.tau[sl],
                tau_true=None if episode.tau_true is None else episode.tau_true[sl],
            )
        )
    return out


def split_episodes(
    episodes: Sequence[Episode],
    fractions: tuple[float, float, float] = (0.7, 0.15, 0.15),
    block_seconds: float | None = 5.0,
    seed: int = 0,
) -> Split:
    """Split episodes into train/val/test by whole blocks.

    Each episode is first cut into time blocks of ``block_seconds`` (None keeps whole episodes); the blocks are
    shuffled with ``seed`` and assigned to the splits by cumulative sample count, so the fractions hold in samples.

    Raises:
        ValueError: fractions not positive or not summing to 1, or fewer than 3 blocks to distribute.
    """
    fr = np.asarray(fractions, dtype=float)
    if fr.shape != (3,) or np.any(fr < 0) or not np.isclose(fr.sum(), 1.0):
        raise ValueError(f"fractions = {fractions} must be three non-negative numbers summing to 1")
    blocks: list[Episode] = []
    for ep in episodes:
        blocks.extend(time_blocks(ep, block_seconds) if block_seconds else [ep])
    if len(blocks) < 3:
        raise ValueError(f"need at least 3 episodes/blocks to split, got {len(blocks)}; use shorter block_seconds")
    order = np.random.default_rng(seed).permutation(len(blocks))
    sizes = np.array([len(blocks[i]) for i in order], dtype=float)
    edges = np.cumsum(sizes) / sizes.sum()
    split = Split([], [], [])
    for i, e in zip(order, edges - sizes / sizes.sum() / 2):  # assign each block by its centre
        target = split.train if e < fr[0] else split.val if e < fr[0] + fr[1] else split.test
        target.append(blocks[i])
    for name in ("train", "val", "test"):  # never leave a split empty
        if not getattr(split, name):
            donor = max((split.train, split.val, split.test), key=len)
            getattr(split, name).append(donor.pop())
    return split
