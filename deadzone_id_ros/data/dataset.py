"""Bags -> training data (core, no ROS): name-mapped, cleaned, uniformly resampled episodes of q, dq, ddq, tau.

Pipeline per bag (DESIGN.md, "Data pipeline"):

1. open the bag by content (ROS 1, ROS 2 sqlite3/MCAP; damaged ROS 2 bags are recovered, see :mod:`.bags`);
2. select the JointState topic (``DatasetConfig.topic``, or the only one with named joints and usable effort);
3. map joints by name in every message; drop messages that cannot be mapped (empty names, length mismatch) and
   count them;
4. use header stamps (fall back to log time when stamps are zero, and say so); sort out-of-order messages; drop
   exact duplicates (and same-stamp conflicts, keeping the first), counting both; drop samples with NaN;
5. split where the stamp step exceeds ``max_gap_s`` (never interpolate across a gap), resample each segment to a
   uniform grid of ``rate_hz`` by linear interpolation;
6. dq from the message when usable, else zero-phase Savitzky–Golay differentiation of q; ddq by zero-phase
   Savitzky–Golay differentiation of dq (:func:`scipy.signal.savgol_filter`; never a raw finite difference of
   quantized encoder data).

Every problem met on the way is counted in ``Dataset.report``; problems that leave nothing usable raise
:class:`~deadzone_id_ros.errors.DataError` naming the bag, topic, message index and field. Dead-zone masks
(``|dq_ij| > alpha * sigma_j``, Inami, Yamane, Sakaino, arXiv 2402.00393) come from :meth:`Dataset.dead_zone`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from scipy.signal import savgol_filter

from ..errors import DataError
from .bags import JOINT_STATE_TYPE, BagHandle, JointStateSeries, open_bag, read_joint_states
from .deadzone import DeadZone, DeadZoneConfig, fit_dead_zone
from .types import Episode, Recording

__all__ = [
    "Dataset",
    "DatasetConfig",
    "VELOCITY_SOURCES",
    "build_episodes",
    "dataset_from_recordings",
    "field_usability",
    "load_dataset",
    "select_joint_state_topic",
    "series_from_recording",
]

VELOCITY_SOURCES = ("auto", "message", "differentiate")
TIME_SOURCES = ("auto", "header", "log")


@dataclass(frozen=True)
class DatasetConfig:
    """How bags become training episodes.

    Attributes:
        topic: the JointState topic; None selects the only JointState topic with named joints and usable effort
            (several candidates are refused with the list).
        joints: joints to keep, in this order; None keeps every joint with usable position and effort, in the
            order first seen on the topic.
        rate_hz: resampling rate [Hz] > 0; None uses 1 / (median stamp step) of each bag.
        max_gap_s: a stamp step longer than this [s] splits the data into separate episodes (> 0).
        velocity: ``"auto"`` (message velocity when usable, else differentiate q), ``"message"`` (require it) or
            ``"differentiate"`` (always Savitzky–Golay derivative of q).
        time_source: ``"auto"`` (header stamps; log time when stamps are zero), ``"header"`` or ``"log"``.
        savgol_window_s: Savitzky–Golay window [s] for dq (when differentiated) and ddq; turned into an odd number
            of samples, at least ``savgol_order + 2``.
        savgol_order: Savitzky–Golay polynomial order (1..5).

    The dead-zone setting is not part of this: it is :class:`~deadzone_id_ros.data.deadzone.DeadZoneConfig`.
    """

    topic: str | None = None
    joints: tuple[str, ...] | None = None
    rate_hz: float | None = None
    max_gap_s: float = 0.1
    velocity: str = "auto"
    time_source: str = "auto"
    savgol_window_s: float = 0.05
    savgol_order: int = 3

    def __post_init__(self) -> None:
        if self.topic is not None and (not isinstance(self.topic, str) or not self.topic):
            raise ValueError(f"DatasetConfig.topic = {self.topic!r} must be a non-empty string or None")
        if self.joints is not None:
            if isinstance(self.joints, str) or not all(isinstance(j, str) and j for j in self.joints):
                raise ValueError(f"DatasetConfig.joints = {self.joints!r} must be a sequence of joint names or None")
            if not self.joints or len(set(self.joints)) != len(self.joints):
                raise ValueError(f"DatasetConfig.joints = {self.joints!r} must be non-empty without duplicates")
            object.__setattr__(self, "joints", tuple(self.joints))
        if self.rate_hz is not None and not (np.isfinite(self.rate_hz) and self.rate_hz > 0):
            raise ValueError(f"DatasetConfig.rate_hz = {self.rate_hz!r} must be > 0 or None")
        if not (np.isfinite(self.max_gap_s) and self.max_gap_s > 0):
            raise ValueError(f"DatasetConfig.max_gap_s = {self.max_gap_s!r} must be > 0")
        if self.velocity not in VELOCITY_SOURCES:
            raise ValueError(f"DatasetConfig.velocity = {self.velocity!r} must be one of {VELOCITY_SOURCES}")
        if self.time_source not in TIME_SOURCES:
            raise ValueError(f"DatasetConfig.time_source = {self.time_source!r} must be one of {TIME_SOURCES}")
        if not (np.isfinite(self.savgol_window_s) and self.savgol_window_s > 0):
            raise ValueError(f"DatasetConfig.savgol_window_s = {self.savgol_window_s!r} must be > 0")
        if not isinstance(self.savgol_order, int) or not 1 <= self.savgol_order <= 5:
            raise ValueError(f"DatasetConfig.savgol_order = {self.savgol_order!r} must be an integer in 1..5")

    def window_samples(self, rate_hz: float) -> int:
        """The Savitzky–Golay window length in samples at ``rate_hz`` [Hz] (odd, >= savgol_order + 2)."""
        n = int(round(self.savgol_window_s * rate_hz))
        n = max(n, self.savgol_order + 2)
        return n if n % 2 else n + 1


@dataclass
class Dataset:
    """Training data built from one or more bags.

    Attributes:
        episodes: uniformly sampled, gap-free episodes (each q/dq/ddq/tau (N, J) in ``joint_names`` order).
        joint_names: (J,) the joints of every episode.
        report: counts and warnings (``samples``, ``episodes``, ``messages``, ``messages_dropped``,
            ``duplicates_dropped``, ``same_stamp_conflicts_dropped``, ``out_of_order_sorted``, ``gaps_split``,
            ``log_time_fallback`` (bags), ``nan_samples_dropped``, ``short_segments_dropped``,
            ``velocity_source`` (per bag), ``recovered`` (bags), ``bags`` (per-bag details), ``warnings``).
        config: the configuration used.
    """

    episodes: list[Episode]
    joint_names: tuple[str, ...]
    report: dict[str, Any]
    config: DatasetConfig = field(default_factory=DatasetConfig)

    @property
    def num_samples(self) -> int:
        """Total number of samples over all episodes."""
        return sum(len(ep) for ep in self.episodes)

    def dead_zone(self, episodes: Sequence[Episode] | None = None,
                  dead_zone: DeadZoneConfig | None = None) -> DeadZone:
        """Fit dead-zone thresholds (``dead_zone``: alpha or absolute thresholds; default alpha 0.1) on ``episodes``.

        Pass the training split in training; the default (all episodes) is for inspection only.

        Raises:
            ValueError: ``dead_zone.absolute_thresholds`` does not have one value per joint.
        """
        eps = list(self.episodes if episodes is None else episodes)
        return fit_dead_zone(eps, dead_zone)

    def moving_fractions(self, dead_zone: DeadZoneConfig | None = None) -> dict[str, Any]:
        """Per-joint fraction of samples outside the dead zone, and the fraction with every joint moving.

        Returns ``{"per_joint": {name: fraction}, "all_joints": fraction, "pairs": fraction}`` (fractions in 0..1),
        using :meth:`dead_zone` (with ``dead_zone``) fitted on all episodes.
        """
        dz = self.dead_zone(dead_zone=dead_zone)
        r = np.concatenate([dz.mask(ep.dq) for ep in self.episodes], axis=0)
        return {
            "per_joint": {n: float(r[:, j].mean()) for j, n in enumerate(self.joint_names)},
            "all_joints": float(r.all(axis=1).mean()),
            "pairs": float(r.mean()),
        }


# ---------------------------------------------------------------------------------------------------------------
# Field usability and topic selection


def field_usability(series: JointStateSeries, field_name: str) -> dict[str, str | None]:
    """Per joint: None if ``field_name`` (position/velocity/effort) is usable, else the reason it is not.

    Reasons: ``"empty in every message"``, ``"NaN in every message"``, ``"exactly zero in every message"``
    (a joint without that interface, e.g. an effort that is never filled), ``"no messages"``.
    """
    arr = getattr(series, field_name)
    out: dict[str, str | None] = {}
    present = series.report.get("messages_with_field", {}).get(field_name, len(series))
    for j, name in enumerate(series.joint_names):
        col = arr[:, j] if arr.size else np.zeros(0)
        if len(series) == 0:
            out[name] = "no messages"
        elif present == 0:
            out[name] = "empty in every message"
        elif np.all(np.isnan(col)):
            out[name] = "NaN in every message" if present else "empty in every message"
        elif np.all(col[~np.isnan(col)] == 0.0):
            out[name] = "exactly zero in every message"
        else:
            out[name] = None
    return out


def _why_unusable(series: JointStateSeries) -> str | None:
    """None if the topic can give training data (some joint has usable position and effort), else why not."""
    if len(series) == 0:
        reasons = series.report.get("dropped", {})
        if reasons:
            reason, d = next(iter(reasons.items()))
            text = f"no usable message: {reason} (first at message {d['first_message']}, {d['count']} messages)"
            rng = series.report.get("unnamed_position_range")
            if rng is not None:
                text += ("; the unnamed positions never change: nothing moves" if max(rng) == 0.0
                         else "; the unnamed positions do change, but joints cannot be mapped without names")
            return text
        return "no messages"
    pos, eff = field_usability(series, "position"), field_usability(series, "effort")
    usable = [n for n in series.joint_names if pos[n] is None and eff[n] is None]
    if usable:
        return None
    parts = []
    for fname, per in (("effort", eff), ("position", pos)):
        for reason in sorted({r for r in per.values() if r}):
            parts.append(f"field {fname} {reason} ({', '.join(n for n, r in per.items() if r == reason)})")
    return "no joint with usable position and effort: " + "; ".join(parts)


def select_joint_state_topic(handle: BagHandle, topic: str | None = None) -> JointStateSeries:
    """Return the decoded JointState topic to train on.

    With ``topic`` given, that topic (it must exist and be sensor_msgs/msg/JointState). Otherwise the only
    JointState topic; with several, the only one that has named joints with usable position and effort.

    Raises:
        DataError: no JointState topic (lists the topics), the named topic is missing or of another type, none of
            several JointState topics is usable (lists each with its reason), or several are (lists them).
    """
    reader = handle.reader
    if topic is not None:
        return read_joint_states(handle, topic)
    js_topics = sorted({c.topic for c in reader.connections if c.msgtype == JOINT_STATE_TYPE})
    if not js_topics:
        listing = ", ".join(f"{t} ({ty})" for t, ty in sorted({(c.topic, c.msgtype) for c in reader.connections}))
        raise DataError(f"{handle.path}: no {JOINT_STATE_TYPE} topic in bag; topics: {listing or 'none'}")
    if len(js_topics) == 1:
        return read_joint_states(handle, js_topics[0])
    series = {t: read_joint_states(handle, t) for t in js_topics}
    why = {t: _why_unusable(s) for t, s in series.items()}
    good = [t for t, w in why.items() if w is None]
    if len(good) == 1:
        return series[good[0]]
    if not good:
        listing = "; ".join(f"{t}: {w}" for t, w in why.items())
        raise DataError(f"{handle.path}: none of the JointState topics can be trained on: {listing}")
    raise DataError(
        f"{handle.path}: several JointState topics could be trained on: {good}; choose one with topic= "
        "(CLI: --topic)"
    )


# ---------------------------------------------------------------------------------------------------------------
# Building episodes


def series_from_recording(recording: Recording, source: str = "<recording>") -> JointStateSeries:
    """Wrap a :class:`Recording`'s joint states as a :class:`JointStateSeries` (stamps are header = log time)."""
    n = len(recording.state_t_ns)
    t = np.asarray(recording.state_t_ns, dtype=np.int64)
    return JointStateSeries(
        bag=source,
        topic="/joint_states",
        joint_names=tuple(recording.joint_names),
        stamp_ns=t,
        log_ns=t,
        position=np.asarray(recording.position, float),
        velocity=np.asarray(recording.velocity, float),
        effort=np.asarray(recording.effort, float),
        index=np.arange(n, dtype=np.int64),
        report={"messages": n, "messages_used": n, "dropped": {}, "joint_order_changes": 0,
                "messages_with_field": {"position": n, "velocity": n, "effort": n}},
    )


def build_episodes(series: JointStateSeries, config: DatasetConfig) -> tuple[list[Episode], tuple[str, ...], dict]:
    """Clean, split and resample one decoded JointState topic into episodes (steps 4–6 of the module docstring).

    Returns:
        (episodes, joint_names, report) with report holding this bag's counts and warnings.

    Raises:
        DataError: nothing usable (names bag, topic, message index, field and joint).
    """
    where = f"{series.bag}: topic {series.topic}"
    rep: dict[str, Any] = {
        "topic": series.topic,
        "messages": series.report.get("messages", len(series)),
        "messages_dropped": sum(d["count"] for d in series.report.get("dropped", {}).values()),
        "dropped": series.report.get("dropped", {}),
        "joint_order_changes": series.report.get("joint_order_changes", 0),
        "warnings": [],
    }
    if len(series) == 0:
        raise DataError(f"{where}: {_why_unusable(series)}")
    for reason, d in rep["dropped"].items():
        rep["warnings"].append(f"{where}: dropped {d['count']} message(s): {reason} (first: message {d['first_message']})")
    if rep["joint_order_changes"]:
        rep["warnings"].append(f"{where}: joint order changed {rep['joint_order_changes']} time(s); mapped by name")

    # -- joints
    pos_u, eff_u, vel_u = (field_usability(series, f) for f in ("position", "effort", "velocity"))
    if config.joints is not None:
        missing = [j for j in config.joints if j not in series.joint_names]
        if missing:
            raise DataError(f"{where}: joint(s) {missing} not in the messages; joints: {list(series.joint_names)}")
        for j in config.joints:
            for fname, u in (("position", pos_u), ("effort", eff_u)):
                if u[j] is not None:
                    raise DataError(f"{where}: message 0..{len(series) - 1} field {fname} of joint {j}: {u[j]}")
        joints = tuple(config.joints)
    else:
        joints = tuple(n for n in series.joint_names if pos_u[n] is None and eff_u[n] is None)
        if not joints:
            raise DataError(f"{where}: message 0..{len(series) - 1}: {_why_unusable(series)}")
        skipped = {n: eff_u[n] or pos_u[n] for n in series.joint_names if n not in joints}
        if skipped:
            rep["warnings"].append(
                f"{where}: skipped joint(s) without usable position/effort: "
                + ", ".join(f"{n} ({r})" for n, r in skipped.items())
            )
    rep["joints_skipped"] = [n for n in series.joint_names if n not in joints]
    cols = [series.joint_names.index(j) for j in joints]
    q = series.position[:, cols]
    tau = series.effort[:, cols]
    vel = series.velocity[:, cols]
    msg_index = series.index

    # -- velocity source
    vel_ok = all(vel_u[j] is None for j in joints)
    if config.velocity == "message":
        bad = [f"{j} ({vel_u[j]})" for j in joints if vel_u[j] is not None]
        if bad:
            raise DataError(f"{where}: message 0..{len(series) - 1} field velocity unusable for {bad}; "
                            "use velocity='differentiate'")
        use_msg_vel = True
    else:
        use_msg_vel = config.velocity == "auto" and vel_ok
    rep["velocity_source"] = "message" if use_msg_vel else "savgol derivative of position"
    if config.velocity == "auto" and not vel_ok:
        rep["warnings"].append(
            f"{where}: field velocity unusable ("
            + ", ".join(f"{j}: {vel_u[j]}" for j in joints if vel_u[j] is not None)
            + "); dq from zero-phase Savitzky–Golay differentiation of position"
        )

    # -- time
    zero = series.stamp_ns <= 0
    if config.time_source == "log" or (config.time_source == "auto" and zero.any()):
        t_ns = series.log_ns.copy()
        rep["time_source"] = "log"
        if config.time_source == "auto":
            rep["log_time_fallback"] = True
            rep["warnings"].append(
                f"{where}: {int(zero.sum())} message(s) have a zero header stamp (first: message "
                f"{int(msg_index[np.argmax(zero)])}); using log (receive) time for this topic"
            )
    else:
        if zero.any():
            k = int(msg_index[np.argmax(zero)])
            raise DataError(f"{where}: message {k} field header.stamp is zero; use time_source='log'")
        t_ns = series.stamp_ns.copy()
        rep["time_source"] = "header"

    # -- order, duplicates
    back = np.diff(t_ns) < 0
    rep["out_of_order_sorted"] = int(back.sum())
    if back.any():
        rep["warnings"].append(f"{where}: {int(back.sum())} message(s) out of stamp order (first: message "
                               f"{int(msg_index[1:][back][0])}); sorted by stamp")
    order = np.argsort(t_ns, kind="stable")
    t_ns, q, tau, vel, msg_index = t_ns[order], q[order], tau[order], vel[order], msg_index[order]
    same = np.concatenate([[False], np.diff(t_ns) == 0])
    exact = same.copy()
    if same.any():
        rows = np.nonzero(same)[0]
        prev = rows - 1
        for arr in (q, tau, vel):
            eq = (arr[rows] == arr[prev]) | (np.isnan(arr[rows]) & np.isnan(arr[prev]))
            exact[rows] &= eq.all(axis=1)
    rep["duplicates_dropped"] = int(exact.sum())
    rep["same_stamp_conflicts_dropped"] = int((same & ~exact).sum())
    if same.any():
        rep["warnings"].append(
            f"{where}: dropped {int(exact.sum())} exact duplicate(s) and {int((same & ~exact).sum())} message(s) "
            f"repeating a stamp with other values (kept the first; first: message {int(msg_index[same][0])})"
        )
    keep = ~same
    # -- NaN samples
    finite = np.isfinite(q).all(axis=1) & np.isfinite(tau).all(axis=1)
    if use_msg_vel:
        finite &= np.isfinite(vel).all(axis=1)
    nan_rows = keep & ~finite
    rep["nan_samples_dropped"] = int(nan_rows.sum())
    if nan_rows.any():
        rep["warnings"].append(f"{where}: dropped {int(nan_rows.sum())} sample(s) with NaN/inf or a missing value "
                               f"(first: message {int(msg_index[nan_rows][0])})")
    keep &= finite
    t_ns, q, tau, vel, msg_index = t_ns[keep], q[keep], tau[keep], vel[keep], msg_index[keep]
    if len(t_ns) < 2:
        raise DataError(f"{where}: fewer than 2 usable samples after cleaning (see report warnings: {rep['warnings']})")

    # -- rate, gaps
    step = np.diff(t_ns)
    median_dt = float(np.median(step)) * 1e-9
    rate = float(config.rate_hz) if config.rate_hz is not None else 1.0 / median_dt
    rep["rate_hz"] = rate
    rep["median_step_s"] = median_dt
    gaps = np.nonzero(step * 1e-9 > config.max_gap_s)[0]
    rep["gaps_split"] = int(len(gaps))
    if len(gaps):
        rep["warnings"].append(
            f"{where}: {len(gaps)} gap(s) longer than max_gap_s = {config.max_gap_s} s (largest "
            f"{step.max() * 1e-9:.3f} s, first before message {int(msg_index[gaps[0] + 1])}); split, not interpolated"
        )
    bounds = np.concatenate([[0], gaps + 1, [len(t_ns)]])
    window = config.window_samples(rate)
    rep["savgol_window_samples"] = window
    t0 = int(t_ns[0])
    episodes: list[Episode] = []
    short, short_samples = 0, 0
    name = Path(series.bag).name
    dt_ns = 1e9 / rate
    for a, b in zip(bounds[:-1], bounds[1:]):
        ts = t_ns[a:b]
        n_grid = int(np.floor((ts[-1] - ts[0]) / dt_ns + 1e-9)) + 1 if b - a > 1 else 1
        if n_grid < window:
            short += 1
            short_samples += int(b - a)
            continue
        g = np.arange(n_grid) * dt_ns  # [ns] since the segment start (small floats: no precision loss)
        rel = (ts - ts[0]).astype(np.float64)
        qg = _interp_cols(g, rel, q[a:b])
        taug = _interp_cols(g, rel, tau[a:b])
        dt = 1.0 / rate
        if use_msg_vel:
            dqg = _interp_cols(g, rel, vel[a:b])
        else:
            dqg = savgol_filter(qg, window, config.savgol_order, deriv=1, delta=dt, axis=0, mode="interp")
        ddqg = savgol_filter(dqg, window, config.savgol_order, deriv=1, delta=dt, axis=0, mode="interp")
        episodes.append(
            Episode(
                name=f"{name}#{len(episodes)}",
                source=str(series.bag),
                joint_names=joints,
                t=(int(ts[0]) - t0) * 1e-9 + g * 1e-9,
                q=qg,
                dq=dqg,
                ddq=ddqg,
                tau=taug,
            )
        )
    rep["short_segments_dropped"] = short
    if short:
        rep["warnings"].append(f"{where}: dropped {short} segment(s) ({short_samples} messages) shorter than the "
                               f"Savitzky–Golay window of {window} samples")
    if not episodes:
        raise DataError(f"{where}: no segment is longer than the Savitzky–Golay window ({window} samples at "
                        f"{rate:.1f} Hz); gaps split the data into {len(bounds) - 1} piece(s)")
    rep["samples"] = sum(len(e) for e in episodes)
    rep["episodes"] = len(episodes)
    dq_all = np.concatenate([e.dq for e in episodes])
    q_all = np.concatenate([e.q for e in episodes])
    still = [j for k, j in enumerate(joints) if np.ptp(q_all[:, k]) == 0.0 or np.all(dq_all[:, k] == 0.0)]
    rep["joints_never_moving"] = still
    if len(still) == len(joints):
        raise DataError(f"{where}: nothing moves: field position is constant for every joint {list(joints)} over "
                        f"messages {int(msg_index[0])}..{int(msg_index[-1])}; no inverse-dynamics data")
    if still:
        rep["warnings"].append(f"{where}: joint(s) {still} never move (every sample is in the dead zone)")
    return episodes, joints, rep


def _interp_cols(x: np.ndarray, xp: np.ndarray, fp: np.ndarray) -> np.ndarray:
    """Linear interpolation of every column of fp (n, J) from xp (n,) to x (m,); returns (m, J)."""
    return np.stack([np.interp(x, xp, fp[:, j]) for j in range(fp.shape[1])], axis=1)


def _merge_reports(reports: list[dict], extra_warnings: list[str]) -> dict[str, Any]:
    total: dict[str, Any] = {
        "bags": {},
        "episodes": 0,
        "samples": 0,
        "messages": 0,
        "messages_dropped": 0,
        "duplicates_dropped": 0,
        "same_stamp_conflicts_dropped": 0,
        "out_of_order_sorted": 0,
        "gaps_split": 0,
        "nan_samples_dropped": 0,
        "short_segments_dropped": 0,
        "log_time_fallback": [],
        "recovered": [],
        "velocity_source": {},
        "warnings": list(extra_warnings),
    }
    for rep in reports:
        bag = rep["bag"]
        total["bags"][bag] = rep
        for key in ("episodes", "samples", "messages", "messages_dropped", "duplicates_dropped",
                    "same_stamp_conflicts_dropped", "out_of_order_sorted", "gaps_split", "nan_samples_dropped",
                    "short_segments_dropped"):
            total[key] += rep.get(key, 0)
        if rep.get("log_time_fallback"):
            total["log_time_fallback"].append(bag)
        if rep.get("recovered"):
            total["recovered"].append(bag)
        total["velocity_source"][bag] = rep.get("velocity_source")
        total["warnings"].extend(rep["warnings"])
    return total


def _check_joint_names(per_bag: list[tuple[str, tuple[str, ...]]]) -> tuple[str, ...]:
    first_bag, names = per_bag[0]
    for bag, other in per_bag[1:]:
        if other != names:
            raise DataError(f"{bag}: joints {list(other)} differ from {first_bag}: {list(names)}; "
                            "pass DatasetConfig(joints=...) to choose the same joints in every bag")
    return names


def load_dataset(paths: Sequence[str | Path], config: DatasetConfig | None = None) -> Dataset:
    """Build training episodes from bags (ROS 1 ``.bag``, rosbag2 directories with sqlite3 or MCAP storage).

    Args:
        paths: one or more bags; their episodes are combined (joints must agree; see ``DatasetConfig.joints``).
        config: see :class:`DatasetConfig` (default: auto topic, all usable joints, median rate, 0.1 s gaps).

    Returns:
        a :class:`Dataset` whose ``report`` counts every dropped, sorted, split or recovered item.

    Raises:
        FileNotFoundError: a path does not exist.
        DataError: a bag gives no usable data (names bag, topic, message index, field and joint), or bags disagree
            on the joints.
    """
    config = config or DatasetConfig()
    if isinstance(paths, (str, Path)):
        paths = [paths]
    if not paths:
        raise DataError("load_dataset: no bag given")
    episodes: list[Episode] = []
    reports: list[dict] = []
    names: list[tuple[str, tuple[str, ...]]] = []
    for path in paths:
        with open_bag(path) as handle:
            series = select_joint_state_topic(handle, config.topic)
            eps, joints, rep = build_episodes(series, config)
            rep["bag"] = str(path)
            rep["format"] = handle.format
            if handle.recovered:
                rep["recovered"] = True
                rep["warnings"][:0] = [f"{path}: {n}" for n in handle.notes]
        episodes.extend(eps)
        reports.append(rep)
        names.append((str(path), joints))
    joint_names = _check_joint_names(names)
    return Dataset(episodes=episodes, joint_names=joint_names, report=_merge_reports(reports, []), config=config)


def dataset_from_recordings(recordings: Sequence[Recording], config: DatasetConfig | None = None,
                            names: Sequence[str] | None = None) -> Dataset:
    """Build a :class:`Dataset` directly from in-memory recordings (same pipeline as :func:`load_dataset`).

    Args:
        recordings: e.g. from :func:`deadzone_id_ros.sim.offline.simulate`.
        names: a source label per recording (default ``recording0``, ``recording1``, ...).

    Raises:
        DataError: as :func:`load_dataset`.
    """
    config = config or DatasetConfig()
    labels = list(names) if names is not None else [f"recording{i}" for i in range(len(recordings))]
    episodes: list[Episode] = []
    reports, joint_sets = [], []
    for rec, label in zip(recordings, labels):
        eps, joints, rep = build_episodes(series_from_recording(rec, label), config)
        rep["bag"] = label
        episodes.extend(eps)
        reports.append(rep)
        joint_sets.append((label, joints))
    if not joint_sets:
        raise DataError("dataset_from_recordings: no recording given")
    return Dataset(episodes, _check_joint_names(joint_sets), _merge_reports(reports, []), config)
