"""Resampling (core, no ROS): a clean run of samples -> uniformly sampled, gap-free episodes with dq and ddq by
zero-phase Savitzky–Golay differentiation (:func:`scipy.signal.savgol_filter`; never a raw finite difference of
quantized encoder data). The resampling stage of :data:`~deadzone_id_ros.data.stages.STAGES` calls it per run.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ..errors import DataError
from ..stamps import NS_PER_S, ns_to_s
from .bag import JointStateSeries
from .samples import Samples
from .types import Episode

if TYPE_CHECKING:
    from .dataset_config import DatasetConfig

__all__ = ["Resampled", "edge_reach", "split_and_resample"]


@dataclass(frozen=True)
class Resampled:
    """What :func:`split_and_resample` produced: episodes and the numbers behind them."""

    episodes: list[Episode]
    rate_hz: float
    median_step_s: float
    gaps_split: int
    window: int
    short_segments_dropped: int
    warnings: list[str]


def _segment_episode(s: Samples, a: int, b: int, rate: float, window: int, use_msg_vel: bool, order: int,
                     ) -> tuple[np.ndarray, ...] | None:
    """Resample rows a:b onto a uniform grid; returns (t0-relative grid [ns], q, dq, ddq, tau) or None if short."""
    from scipy.signal import savgol_filter  # here, not at the top: `deadzone-id --help` must not load scipy

    ts = s.t_ns[a:b]
    dt_ns = NS_PER_S / rate
    n_grid = int(np.floor((ts[-1] - ts[0]) / dt_ns + 1e-9)) + 1 if b - a > 1 else 1
    if n_grid < window or b - a < window:  # too short, or too few real samples (mostly interpolation)
        return None
    g = np.arange(n_grid) * dt_ns  # [ns] since the segment start (small floats: no precision loss)
    rel = (ts - ts[0]).astype(np.float64)
    qg = _interp_cols(g, rel, s.q[a:b])
    taug = _interp_cols(g, rel, s.tau[a:b])
    dt = 1.0 / rate
    if use_msg_vel:
        dqg = _interp_cols(g, rel, s.vel[a:b])
    else:
        dqg = savgol_filter(qg, window, order, deriv=1, delta=dt, axis=0, mode="interp")
    ddqg = savgol_filter(dqg, window, order, deriv=1, delta=dt, axis=0, mode="interp")
    return g, qg, dqg, ddqg, taug


def edge_reach(window: int, use_msg_vel: bool) -> int:
    """Samples on each side that dq/ddq at one sample depend on: the Savitzky–Golay half window for ddq (window
    ``window`` samples), twice that when dq is differentiated from q as well, plus one for the linear resampling
    (two neighbouring grid samples can interpolate the same message)."""
    half = window // 2
    return (1 if use_msg_vel else 2) * half + 1


def split_and_resample(s: Samples, series: JointStateSeries, joints: tuple[str, ...], use_msg_vel: bool,
                       config: DatasetConfig, first_episode: int = 0) -> Resampled:
    """Split at gaps longer than ``config.max_gap_s``, resample each segment, differentiate.

    The rate is ``config.rate_hz`` or 1 / (median stamp step). Segments shorter than the Savitzky–Golay window
    (in grid points or in real samples) are dropped and counted. Episode times ``t`` [s] are relative to the first
    kept stamp of ``s``; episodes are numbered from ``first_episode`` (``<bag>#<n>``).

    Raises:
        DataError: no segment is longer than the Savitzky–Golay window.
    """
    where = series.where
    t_ns = s.t_ns
    step = np.diff(t_ns)
    median_dt = ns_to_s(float(np.median(step)))
    rate = float(config.rate_hz) if config.rate_hz is not None else 1.0 / median_dt
    gaps = np.nonzero(ns_to_s(step) > config.max_gap_s)[0]
    warnings = []
    if len(gaps):
        warnings.append(
            f"{where}: {len(gaps)} gap(s) longer than max_gap_s = {config.max_gap_s} s (largest "
            f"{ns_to_s(step.max()):.3f} s, first before message {int(s.msg_index[gaps[0] + 1])}); split, not "
            "interpolated"
        )
    bounds = np.concatenate([[0], gaps + 1, [len(t_ns)]])
    window = config.window_samples(rate)
    t0 = int(t_ns[0])
    episodes: list[Episode] = []
    short, short_samples = 0, 0
    name = Path(series.bag).name
    for a, b in zip(bounds[:-1], bounds[1:], strict=True):
        seg = _segment_episode(s, a, b, rate, window, use_msg_vel, config.savgol_order)
        if seg is None:
            short += 1
            short_samples += int(b - a)
            continue
        g, qg, dqg, ddqg, taug = seg
        episodes.append(Episode(name=f"{name}#{first_episode + len(episodes)}", source=str(series.bag),
                                joint_names=joints,
                                t=ns_to_s(int(t_ns[a]) - t0) + ns_to_s(g), q=qg, dq=dqg, ddq=ddqg, tau=taug,
                                edge_reach=edge_reach(window, use_msg_vel)))
    if short:
        warnings.append(f"{where}: dropped {short} segment(s) ({short_samples} messages) shorter than the "
                        f"Savitzky–Golay window of {window} samples")
    if not episodes:
        raise DataError(f"{where}: no segment is longer than the Savitzky–Golay window ({window} samples at "
                        f"{rate:.1f} Hz); gaps split the data into {len(bounds) - 1} piece(s)")
    return Resampled(episodes, rate, median_dt, int(len(gaps)), window, short, warnings)


def _interp_cols(x: np.ndarray, xp: np.ndarray, fp: np.ndarray) -> np.ndarray:
    """Linear interpolation of every column of fp (n, J) from xp (n,) to x (m,); returns (m, J)."""
    return np.stack([np.interp(x, xp, fp[:, j]) for j in range(fp.shape[1])], axis=1)
