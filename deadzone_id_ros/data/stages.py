"""The cleaning stages of :func:`~deadzone_id_ros.data.episodes.build_episodes` (core, no ROS), one pure function
per stage (see that module's docstring for the order); each returns what it decided plus its warnings."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ..errors import DataError
from ..stamps import NS_PER_S, ns_to_s
from .bag import JointStateSeries, field_usability, why_unusable
from .defects import effort_problems
from .types import Episode

if TYPE_CHECKING:
    from .dataset import DatasetConfig

__all__ = [
    "Resampled",
    "Samples",
    "choose_time",
    "choose_velocity",
    "drop_nan",
    "edge_reach",
    "select_joints",
    "sort_and_dedup",
    "split_and_resample",
]


@dataclass(frozen=True)
class Samples:
    """Raw samples of the chosen joints, in a common row order.

    Attributes:
        t_ns: (M,) time stamps [ns].  msg_index: (M,) message index on the topic of each row.
        q: (M, J) [rad].  tau: (M, J) [N·m].  vel: (M, J) message velocity [rad/s] (NaN where missing).
    """

    t_ns: np.ndarray
    q: np.ndarray
    tau: np.ndarray
    vel: np.ndarray
    msg_index: np.ndarray

    def take(self, rows: np.ndarray) -> Samples:
        """The samples at ``rows`` (an index array or a boolean mask of length M)."""
        return Samples(self.t_ns[rows], self.q[rows], self.tau[rows], self.vel[rows], self.msg_index[rows])


def select_joints(series: JointStateSeries, config: DatasetConfig) -> tuple[tuple[str, ...], list[str]]:
    """Stage 1: the joints to train on, and warnings.

    ``config.joints`` when given (each must be on the topic with usable position and effort); otherwise every joint
    with usable position and effort, in topic order (skipped joints are warned about with the reason).

    Returns:
        (joints (J,), warnings).

    Raises:
        DataError: a requested joint is missing or unusable, or no joint is usable (names the field and joint).
    """
    where = series.where
    pos_u, eff_u = field_usability(series, "position"), field_usability(series, "effort")
    implausible = effort_problems(series, tuple(config.joints or series.joint_names), config.effort_limits,
                                  config.torque_constants)
    eff_u = {n: eff_u[n] or implausible.get(n) for n in eff_u}
    if config.joints is not None:
        missing = [j for j in config.joints if j not in series.joint_names]
        if missing:
            raise DataError(f"{where}: joint(s) {missing} not in the messages; joints: {list(series.joint_names)}")
        for j in config.joints:
            for fname, u in (("position", pos_u), ("effort", eff_u)):
                if u[j] is not None:
                    raise DataError(f"{where}: message 0..{len(series) - 1} field {fname} of joint {j}: {u[j]}")
        return tuple(config.joints), []
    joints = tuple(n for n in series.joint_names if pos_u[n] is None and eff_u[n] is None)
    if not joints:
        why = why_unusable(series) or "no joint with usable position and effort: field effort " + "; ".join(
            f"of {n} {r}" for n, r in implausible.items())
        raise DataError(f"{where}: message 0..{len(series) - 1}: {why}")
    skipped = {n: eff_u[n] or pos_u[n] for n in series.joint_names if n not in joints}
    warnings = []
    if skipped:
        warnings.append(f"{where}: skipped joint(s) without usable position/effort: "
                        + ", ".join(f"{n} ({r})" for n, r in skipped.items()))
    return joints, warnings


def choose_velocity(series: JointStateSeries, joints: tuple[str, ...], config: DatasetConfig) -> tuple[bool, list[str]]:
    """Stage 2: take dq from the message (True) or differentiate q (False), per ``config.velocity``.

    Returns:
        (use the message velocity, warnings).

    Raises:
        DataError: ``velocity="message"`` but the field is unusable for a joint (names the joints and reasons).
    """
    where = series.where
    vel_u = field_usability(series, "velocity")
    vel_ok = all(vel_u[j] is None for j in joints)
    if config.velocity == "message":
        bad = [f"{j} ({vel_u[j]})" for j in joints if vel_u[j] is not None]
        if bad:
            raise DataError(f"{where}: message 0..{len(series) - 1} field velocity unusable for {bad}; "
                            "use --velocity differentiate (DatasetConfig.velocity)")
        return True, []
    if config.velocity == "auto" and not vel_ok:
        return False, [f"{where}: field velocity unusable ("
                       + ", ".join(f"{j}: {vel_u[j]}" for j in joints if vel_u[j] is not None)
                       + "); dq from zero-phase Savitzky–Golay differentiation of position"]
    return config.velocity == "auto" and vel_ok, []


def choose_time(series: JointStateSeries, config: DatasetConfig) -> tuple[np.ndarray, str, bool, list[str]]:
    """Stage 3: the time stamps [ns] of every message, per ``config.time_source``.

    A zero header stamp is a stamp left unset, except a first stamp of zero followed within 1 s by the next one
    (simulated time starting at 0; :func:`~deadzone_id_ros.stamps.increasing_rows`). With ``"auto"``, when at most
    half of the messages have an unset stamp the header stamps are used and those messages get t = -1 (the caller
    drops them, counted); when more have one, log (receive) time replaces the header stamps for the whole topic.

    Returns:
        (t_ns (M,) [ns] (-1 where a header stamp is unset), ``"header"`` or ``"log"``, whether log time replaced zero
        header stamps, warnings).

    Raises:
        DataError: ``time_source="header"`` and a header stamp is zero (names the message).
    """
    where = series.where
    zero = series.stamp_ns <= 0
    if len(zero) > 1 and series.stamp_ns[0] == 0 and 0 < series.stamp_ns[1] < NS_PER_S:
        zero[0] = False  # simulated time starting at 0
    if config.time_source == "log" or (config.time_source == "auto" and zero.sum() > len(zero) / 2):
        if config.time_source != "auto":
            return series.log_ns.copy(), "log", False, []
        return series.log_ns.copy(), "log", True, [
            f"{where}: {int(zero.sum())} message(s) have a zero header stamp (first: message "
            f"{int(series.index[np.argmax(zero)])}); using log (receive) time for this topic"
        ]
    if zero.any() and config.time_source == "header":
        k = int(series.index[np.argmax(zero)])
        raise DataError(f"{where}: message {k} field header.stamp is zero; use --time-source log "
                        "(DatasetConfig.time_source)")
    t = series.stamp_ns.copy()
    t[zero] = -1
    warnings = [] if not zero.any() else [
        f"{where}: dropped {int(zero.sum())} message(s) with a zero header stamp (first: message "
        f"{int(series.index[np.argmax(zero)])}); the other messages' header stamps are used"]
    return t, "header", False, warnings


def sort_and_dedup(samples: Samples, where: str) -> tuple[Samples, np.ndarray, dict[str, int], list[str]]:
    """Stage 4: sort by stamp (stable) and mark repeated stamps.

    A row repeating the previous row's stamp is dropped: an exact duplicate when every value matches (NaN equal
    to NaN), else a same-stamp conflict (the first is kept).

    Returns:
        (sorted samples, keep (M,) bool mask of rows to keep, counts ``out_of_order_sorted``,
        ``duplicates_dropped``, ``same_stamp_conflicts_dropped``, warnings).
    """
    t_ns, msg_index = samples.t_ns, samples.msg_index
    warnings = []
    back = np.diff(t_ns) < 0
    if back.any():
        warnings.append(f"{where}: {int(back.sum())} message(s) out of stamp order (first: message "
                        f"{int(msg_index[1:][back][0])}); sorted by stamp")
    s = samples.take(np.argsort(t_ns, kind="stable"))
    same = np.concatenate([[False], np.diff(s.t_ns) == 0])
    exact = same.copy()
    if same.any():
        rows = np.nonzero(same)[0]
        prev = rows - 1
        for arr in (s.q, s.tau, s.vel):
            eq = (arr[rows] == arr[prev]) | (np.isnan(arr[rows]) & np.isnan(arr[prev]))
            exact[rows] &= eq.all(axis=1)
        warnings.append(
            f"{where}: dropped {int(exact.sum())} exact duplicate(s) and {int((same & ~exact).sum())} message(s) "
            f"repeating a stamp with other values (kept the first; first: message {int(s.msg_index[same][0])})"
        )
    counts = {"out_of_order_sorted": int(back.sum()), "duplicates_dropped": int(exact.sum()),
              "same_stamp_conflicts_dropped": int((same & ~exact).sum())}
    return s, ~same, counts, warnings


def drop_nan(samples: Samples, keep: np.ndarray, use_msg_vel: bool, where: str) -> tuple[Samples, int, list[str]]:
    """Stage 5: keep the rows in ``keep`` whose q and tau (and the message velocity when used) are all finite.

    Returns:
        (kept samples, number of rows in ``keep`` dropped for NaN/inf, warnings).
    """
    finite = np.isfinite(samples.q).all(axis=1) & np.isfinite(samples.tau).all(axis=1)
    if use_msg_vel:
        finite &= np.isfinite(samples.vel).all(axis=1)
    nan_rows = keep & ~finite
    warnings = []
    if nan_rows.any():
        warnings.append(f"{where}: dropped {int(nan_rows.sum())} sample(s) with NaN/inf or a missing value "
                        f"(first: message {int(samples.msg_index[nan_rows][0])})")
    return samples.take(keep & finite), int(nan_rows.sum()), warnings


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
    from scipy.signal import savgol_filter  # here, not at the top: `deadzone-id --help` must not load scipy

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
    """Stage 6: split at gaps longer than ``config.max_gap_s``, resample each segment, differentiate.

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
