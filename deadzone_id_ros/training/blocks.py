"""Split block length chosen from the data, and which (split, joint) cells have no moving pairs and why.

A joint's error is measured only on pairs where it moves (r_ij = 1). On a short recording a time block can hold no
moving pair of some joint: with fixed 5 s blocks on a 41 s recording a validation or test block may contain none, so
early stopping silently falls back to the training loss and the test RMSE is NaN. :func:`choose_split` therefore
tries block lengths from :data:`BLOCK_CANDIDATES` (longest first: longer blocks leak less between neighbours) and
keeps the first one whose three splits each hold at least :data:`MIN_MOVING_PAIRS` moving pairs of every joint,
with the dead zone fitted on that candidate's training split exactly as training does. When none does, it keeps the
candidate that covers the most (split, joint) cells and says, per uncovered cell, why the figure is missing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..data.deadzone import DeadZone, DeadZoneConfig, fit_dead_zone
from ..data.split import Split, split_episodes
from ..data.types import Episode
from ..errors import ConfigError, DataError
from ..jsonrecord import decode, record_from_dict, sub_key

__all__ = ["BLOCK_CANDIDATES", "MIN_MOVING_PAIRS", "MISSING", "SPLITS", "BlockChoice", "choose_split", "fmt_values",
           "moving_pairs"]

BLOCK_CANDIDATES: tuple[float, ...] = (5.0, 4.0, 3.0, 2.0, 1.5, 1.0, 0.75, 0.5)  # [s], longest first
MIN_MOVING_PAIRS = 20  # moving pairs per joint and split for a block length to count as covering that cell
SPLITS = ("train", "val", "test")
MISSING = "—"  # how a figure that cannot be measured is shown (never a bare nan); its reason is printed with it
_SPLIT_WORD = {"train": "training", "val": "validation", "test": "test"}


@dataclass
class BlockChoice:
    """How the split's block length was set, and the (split, joint) cells without moving pairs.

    Attributes:
        block_seconds: the block length used [s]; None keeps whole episodes.
        source: ``"data"`` (chosen here because the user set none) or ``"config"`` (--block-seconds / the file).
        note: one sentence saying what was chosen and why (printed and written to report.json).
        moving_pairs: {split: [moving pairs per joint]} with the dead zone of the training split.
        missing: {joint: reason} for joints without any moving pair in the test split (their RMSE is missing).
        warnings: one line per (split, joint) cell with fewer than MIN_MOVING_PAIRS moving pairs.
    """

    block_seconds: float | None
    source: str
    note: str
    moving_pairs: dict[str, list[int]] = field(default_factory=dict)
    missing: dict[str, str] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """The JSON record (report.json / model.json ``training_data.split``)."""
        return {"block_seconds": self.block_seconds, "block_seconds_source": self.source, "note": self.note,
                "moving_pairs": self.moving_pairs, "missing": self.missing, "warnings": self.warnings}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], key: str = "") -> BlockChoice:
        """The inverse of :meth:`to_dict` (``block_seconds_source`` is :attr:`source`).

        Raises:
            DataError: a missing, unknown or malformed key (named).
        """
        name = "block_seconds_source"
        if name not in d:
            raise DataError(f"key {sub_key(key, name)!r} is missing")
        return record_from_dict(cls, {k: v for k, v in d.items() if k != name}, key,
                                source=decode(str, d[name], sub_key(key, name)))


def _fit(train: list[Episode], config: DeadZoneConfig) -> DeadZone:
    try:
        return fit_dead_zone(train, config)
    except ValueError as err:
        raise ConfigError(f"dead zone: {err}") from err


def moving_pairs(split: Split, dead_zone: DeadZone) -> dict[str, np.ndarray]:
    """{split name: (J,) number of moving (sample, joint) pairs} with ``dead_zone``."""
    out = {}
    for name in SPLITS:
        eps = getattr(split, name)
        out[name] = sum((dead_zone.mask(ep.dq).sum(axis=0) for ep in eps), np.zeros(len(dead_zone.threshold), int))
    return out


def _describe(split: Split, counts: dict[str, np.ndarray], dz: DeadZone, joints: Sequence[str],
              block: float | None) -> tuple[dict[str, str], list[str]]:
    """(missing test figures {joint: why}, warnings) for the cells below MIN_MOVING_PAIRS."""
    missing: dict[str, str] = {}
    warnings: list[str] = []
    blocks = "whole episode(s)" if block is None else f"block(s) of {block:g} s"
    for name in SPLITS:
        eps = getattr(split, name)
        n_samples = sum(len(e) for e in eps)
        for j, joint in enumerate(joints):
            n = int(counts[name][j])
            if n >= MIN_MOVING_PAIRS:
                continue
            peak = max((float(np.abs(e.dq[:, j]).max()) for e in eps if len(e)), default=0.0)
            why = (f"joint {joint} has {n} moving pair(s) in the {_SPLIT_WORD[name]} split ({n_samples} samples in "
                   f"{len(eps)} {blocks}): its |dq| there peaks at {peak:.3g} rad/s against its dead-zone threshold "
                   f"{float(dz.threshold[j]):.3g} rad/s")
            if name == "val":
                why += "; early stopping judges this joint on other joints' validation error only"
                if not counts["val"].any():
                    why += " (no joint moves in validation: the masked loss stops on the training loss)"
            warnings.append(why)
            if name == "test" and n == 0:
                missing[joint] = (f"no test pair where {joint} moves ({n_samples} test samples in {len(eps)} "
                                  f"{blocks}; |dq| peaks at {peak:.3g} rad/s, threshold {float(dz.threshold[j]):.3g} "
                                  "rad/s), so its RMSE cannot be measured")
    return missing, warnings


def _degenerate(split: Split) -> bool:
    """Whether the blocks fell so that training holds fewer samples than validation or test: the last block of an
    episode takes the remainder, and a short one can be a whole split (measured: two live bags of 3.4 and 4.1 s in
    blocks of 4 s trained on a 0.14 s tail, 115 samples against 3974 to validate, and the fit was refused)."""
    n_train, n_val, n_test = (sum(len(e) for e in eps) for eps in (split.train, split.val, split.test))
    return n_train < max(n_val, n_test)


def choose_split(episodes: Sequence[Episode], fractions: tuple[float, float, float], block_seconds: float | None,
                 seed: int, dead_zone: DeadZoneConfig) -> tuple[Split, DeadZone, BlockChoice]:
    """Split ``episodes``, choosing the block length from the data when ``block_seconds`` is None.

    Args:
        block_seconds: None: choose from :data:`BLOCK_CANDIDATES`; 0: whole episodes; > 0: that length [s].

    A length whose blocks give training fewer samples than validation or test is passed over (:func:`_degenerate`).

    Returns:
        (the split, the dead zone fitted on its training split, the choice with its note and missing cells).

    Raises:
        ValueError: too few blocks for a set length, or a recording too short for three blocks of the shortest
            candidate (the message names ``--block-seconds`` and the durations).
        ConfigError: a dead-zone configuration that does not fit the joints.
    """
    joints = episodes[0].joint_names if episodes else ()
    if block_seconds is not None:
        block = block_seconds or None
        split = split_episodes(episodes, fractions, block, seed=seed)
        dz = _fit(split.train, dead_zone)
        counts = moving_pairs(split, dz)
        missing, warnings = _describe(split, counts, dz, joints, block)
        how = "whole episodes" if block is None else f"blocks of {block:g} s"
        return split, dz, BlockChoice(block, "config", f"split by {how} (set by --block-seconds or the config)",
                                      {k: v.tolist() for k, v in counts.items()}, missing, warnings)
    best: tuple[int, float, Split, DeadZone, dict[str, np.ndarray]] | None = None
    for cand in BLOCK_CANDIDATES:
        try:
            split = split_episodes(episodes, fractions, cand, seed=seed)
        except ValueError:
            continue  # fewer than 3 blocks of this length
        if _degenerate(split):
            continue
        dz = _fit(split.train, dead_zone)
        counts = moving_pairs(split, dz)
        covered = int(sum((c >= MIN_MOVING_PAIRS).sum() for c in counts.values()))
        if best is None or covered > best[0]:
            best = (covered, cand, split, dz, counts)
        if covered == len(SPLITS) * len(joints):
            break
    if best is None:
        seconds = [float(e.t[-1] - e.t[0]) if len(e) > 1 else 0.0 for e in episodes]
        raise ValueError(f"the recordings ({', '.join(f'{s:.2f} s' for s in seconds)}) are too short to cut into 3 "
                         f"blocks of {BLOCK_CANDIDATES[-1]:g} s; record longer, or set the block length "
                         "(--block-seconds of train and compare)")
    covered, cand, split, dz, counts = best
    missing, warnings = _describe(split, counts, dz, joints, cand)
    tried = ", ".join(f"{c:g}" for c in BLOCK_CANDIDATES)
    if not warnings:
        note = (f"split by blocks of {cand:g} s, chosen from the data: the longest of {tried} s that gives every "
                f"split at least {MIN_MOVING_PAIRS} moving pairs of every joint (train and compare take "
                "--block-seconds)")
    else:
        note = (f"split by blocks of {cand:g} s, chosen from the data: no length of {tried} s gives every split "
                f"{MIN_MOVING_PAIRS} moving pairs of every joint; this one covers the most "
                f"({covered} of {len(SPLITS) * len(joints)} split/joint cells; train and compare take --block-seconds)")
    return split, dz, BlockChoice(cand, "data", note, {k: v.tolist() for k, v in counts.items()}, missing, warnings)


def fmt_values(values: Sequence[float | None], digits: int = 4) -> str:
    """Per-joint figures joined by " / ", with :data:`MISSING` for None or NaN (a joint without moving pairs)."""
    return " / ".join(MISSING if v is None or not np.isfinite(v) else f"{v:.{digits}f}" for v in values)
