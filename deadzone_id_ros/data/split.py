"""Train/validation/test splits by episode or time block, never by random rows (no leakage between neighbours).

dq and ddq are computed over whole episodes (Savitzky–Golay differentiation) before the episodes are cut into time
blocks, so a sample near a block edge is computed from samples of the neighbouring block. To keep every split free
of the others' data, :func:`time_blocks` drops a guard of ``Episode.edge_reach`` samples on each side of every edge
it cuts: two samples of different blocks are then more than 2 * edge_reach apart and share no recorded data.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .types import Episode

__all__ = ["Split", "split_episodes", "time_blocks"]


@dataclass
class Split:
    """Episodes of each split. Every kept sample belongs to exactly one split.

    Attributes:
        train, val, test: the blocks of each split.
        guard_samples: samples dropped at block edges (the guards of :func:`time_blocks`), over all episodes.
    """

    train: list[Episode]
    val: list[Episode]
    test: list[Episode]
    guard_samples: int = 0


def time_blocks(episode: Episode, block_seconds: float, guard: int | None = None) -> list[Episode]:
    """Cut ``episode`` into consecutive blocks of ``block_seconds`` [s] (the last one may be shorter), dropping
    ``guard`` samples on each side of every cut.

    Args:
        episode: the episode (its dq/ddq computed over the whole of it).
        block_seconds: block length [s] > 0, guards included.
        guard: samples dropped on each side of a cut; None: ``episode.edge_reach``, the reach of its derivatives,
            so no sample of one block is computed from recorded data of another.

    Raises:
        ValueError: block_seconds <= 0, guard < 0, or blocks too short to keep a sample between their guards
            (use longer blocks).
    """
    if not block_seconds > 0:
        raise ValueError(f"block_seconds = {block_seconds} must be > 0")
    guard = episode.edge_reach if guard is None else int(guard)
    if guard < 0:
        raise ValueError(f"guard = {guard} must be >= 0 samples")
    n = len(episode)
    per = max(1, int(round(block_seconds / episode.dt))) if episode.dt > 0 else n
    starts = list(range(0, n, per))
    if len(starts) > 1 and per <= 2 * guard:
        raise ValueError(f"block_seconds = {block_seconds} s is {per} samples of {episode.name}, not more than the "
                         f"2 x {guard} samples of guard its derivatives need at block edges; use longer blocks")
    out = []
    for k, start in enumerate(starts):
        a = start + (guard if k > 0 else 0)
        b = min(n, start + per) - (guard if k < len(starts) - 1 else 0)
        if b <= a:  # a short last block swallowed by its guard
            continue
        sl = slice(a, b)
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
                edge_reach=episode.edge_reach,
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

    Each episode is first cut into time blocks of ``block_seconds`` (None keeps whole episodes) with a guard of
    ``edge_reach`` samples dropped on each side of every cut (:func:`time_blocks`; counted in
    ``Split.guard_samples``); the blocks are shuffled with ``seed`` and assigned to the splits by cumulative sample
    count, so the fractions hold in samples.

    Raises:
        ValueError: fractions not positive or not summing to 1, fewer than 3 blocks to distribute, or blocks too
            short for their guards.
    """
    fr = np.asarray(fractions, dtype=float)
    if fr.shape != (3,) or np.any(fr < 0) or not np.isclose(fr.sum(), 1.0):
        raise ValueError(f"fractions = {fractions} must be three non-negative numbers summing to 1")
    blocks: list[Episode] = []
    for ep in episodes:
        blocks.extend(time_blocks(ep, block_seconds) if block_seconds else [ep])
    guard_samples = sum(len(ep) for ep in episodes) - sum(len(b) for b in blocks)
    if len(blocks) < 3:
        raise ValueError(f"need at least 3 episodes/blocks to split, got {len(blocks)}; use a shorter --block-seconds")
    order = np.random.default_rng(seed).permutation(len(blocks))
    sizes = np.array([len(blocks[i]) for i in order], dtype=float)
    edges = np.cumsum(sizes) / sizes.sum()
    split = Split([], [], [], guard_samples=guard_samples)
    for i, e in zip(order, edges - sizes / sizes.sum() / 2):  # assign each block by its centre
        target = split.train if e < fr[0] else split.val if e < fr[0] + fr[1] else split.test
        target.append(blocks[i])
    for name in ("train", "val", "test"):  # never leave a split empty
        if not getattr(split, name):
            donor = max((split.train, split.val, split.test), key=len)
            getattr(split, name).append(donor.pop())
    return split
