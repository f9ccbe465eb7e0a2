"""What is in a bag, and can it be trained on? (core of ``deadzone-id inspect``; no ROS).

For every topic: type, message count and rate. For every sensor_msgs/JointState topic: joints, which of
position/velocity/effort are present and usable per joint, whether anything moves. For the topic a data set would
be built from (:func:`~deadzone_id_ros.data.bag.select_joint_state_topic`): samples, episodes, the dead-zone
fraction per joint (``|dq_j| <= alpha * sigma_j``, Inami, Yamane, Sakaino, arXiv 2402.00393), the fraction of
samples with every joint moving, the data-set report, and a note on effort units (JointState does not declare them).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TypedDict

import numpy as np

from ..errors import ConfigError, DataError
from ..stamps import ns_to_s
from .bag import JOINT_STATE_TYPE, field_usability, open_bag, read_joint_states, select_joint_state_topic
from .bag.reader import BagHandle
from .cleaning_report import BagReport
from .dataset import bag_effort_units
from .dataset_config import DatasetConfig
from .deadzone import DeadZoneConfig, fit_dead_zone
from .effort_units import FIX_HINT, NEWTON_METRE, effort_units
from .episodes import build_episodes

__all__ = ["DatasetSummary", "TopicRate", "effort_unit_note", "format_report", "inspect_bag"]


class TopicRate(TypedDict):
    """One topic of a bag: its message type(s), message count and mean rate [Hz] from the log times (None: fewer
    than two messages)."""

    type: str
    messages: int
    rate_hz: float | None


class DatasetSummary(TypedDict):
    """inspect's ``dataset`` entry: the data's joints, samples, episodes and rates, how velocity and time were
    taken, the dead zone fitted (alpha or absolute thresholds; threshold [rad/s] and stuck fraction per joint; the
    fractions of samples with every joint moving and of moving pairs), the loader's counts, skipped joints and
    warnings."""

    joints: list[str]
    samples: int
    episodes: int
    rate_hz: float
    velocity_source: str
    time_source: str
    alpha: float | None
    absolute_thresholds: bool
    velocity_threshold: dict[str, float]
    dead_zone_fraction: dict[str, float]
    all_joints_moving_fraction: float
    pairs_moving_fraction: float
    counts: dict[str, int]
    joints_skipped: list[str]
    warnings: list[str]


def effort_unit_note(guessed: Mapping[str, str], why: str, config: DatasetConfig | None = None,
                     joints: Sequence[str] = ()) -> str:
    """A sentence about the effort units of a bag and what to do about them: from ``config.torque_constants`` and
    ``config.effort_unit`` where the user gave them (``--torque-constant``, ``--effort-unit``; as training will use
    them), else the units as recorded, by the loader's own rule
    (:func:`~deadzone_id_ros.data.dataset.bag_effort_units`: per joint, whole numbers told apart as a servo's load).

    Args:
        guessed: {joint: unit} as recorded (:func:`~deadzone_id_ros.data.dataset.bag_effort_units`).
        why: the reason of ``guessed``.
        config: the loader settings, or None for the recorded units alone.
        joints: (J,) the selected joints, for the units per joint.
    """
    constants = dict(config.torque_constants or {}) if config is not None else {}
    stated = config.effort_unit if config is not None else None
    units = effort_units(joints or list(guessed), guessed, effort_unit=stated, torque_constants=constants)
    if constants or stated:
        converted = [j for j in joints if j in constants]
        text = f"effort units {units}"
        text += f" (converted to N·m with --torque-constant for {converted})" if converted else ""
        text += f" (stated with --effort-unit {stated})" if stated else ""
        if any(u != NEWTON_METRE for u in units.values()):
            text += f"; the controller refuses a model that does not predict N·m - {FIX_HINT}"
        return text
    kinds = sorted(set(units.values()))
    if kinds == [NEWTON_METRE]:
        return f"effort is used as the torque label as recorded ({why})"
    unit = kinds[0] if len(kinds) == 1 else str(units)
    return (f"effort unit {unit}: {why}; a model trained on it predicts {unit} and the controller refuses it - "
            f"{FIX_HINT}")


def _rates(handle: BagHandle) -> dict[str, TopicRate]:
    """{topic: {type, messages, rate_hz}} from the log times (read through the handle: a read error is a DataError)."""
    reader = handle.reader
    out: dict[str, TopicRate] = {}
    for topic in sorted({c.topic for c in reader.connections}):
        conns = [c for c in reader.connections if c.topic == topic]
        types = sorted({c.msgtype for c in conns})
        t = np.sort(np.asarray([t_ns for _, t_ns, _ in handle.read_topic(topic)], dtype=np.int64))
        rate = float((len(t) - 1) / ns_to_s(t[-1] - t[0])) if len(t) > 1 and t[-1] > t[0] else None
        out[topic] = TopicRate(type=types[0] if len(types) == 1 else " | ".join(types), messages=int(len(t)),
                               rate_hz=rate)
    return out


def _dataset_summary(path: str | Path, episodes: list, joints: tuple[str, ...], rep: BagReport,
                     dead_zone: DeadZoneConfig | None) -> DatasetSummary:
    """inspect's ``dataset`` entry: sizes, sources, the dead zone fitted with ``dead_zone`` and the loader counts."""
    try:
        dz = fit_dead_zone(episodes, dead_zone)
    except ValueError as err:
        raise ConfigError(f"{path}: {err}") from err
    r = np.concatenate([dz.mask(ep.dq) for ep in episodes], axis=0)
    return DatasetSummary(
        joints=list(joints), samples=int(r.shape[0]), episodes=len(episodes), rate_hz=rep.rate_hz,
        velocity_source=rep.velocity_source, time_source=rep.time_source, alpha=dz.alpha,
        absolute_thresholds=dz.alpha is None, velocity_threshold={j: float(x) for j, x in zip(joints, dz.threshold)},
        dead_zone_fraction={j: float(1.0 - r[:, k].mean()) for k, j in enumerate(joints)},
        all_joints_moving_fraction=float(r.all(axis=1).mean()), pairs_moving_fraction=float(r.mean()),
        counts=rep.counts(), joints_skipped=list(rep.joints_skipped), warnings=list(rep.warnings))


def inspect_bag(path: str | Path, config: DatasetConfig | None = None,
                dead_zone: DeadZoneConfig | None = None) -> dict[str, Any]:
    """Inspect one bag; returns a JSON-ready dict.

    ``config`` decides how the bag becomes episodes, ``dead_zone`` the dead-zone thresholds (default alpha 0.1; pass
    the training configuration's so that inspect shows what training will use).

    Keys: ``bag``, ``format``, ``recovered`` (read from a rebuilt copy), ``damaged``, ``losses`` (what was lost, one
    line each), ``notes``, ``topics`` ({topic: {type, messages, rate_hz}}),
    ``joint_state_topics`` ({topic: {joints, fields: {position|velocity|effort: {joint: "usable" or reason}},
    moving_joints, dropped, trainable, why_not}}), ``selected_topic``, ``trainable`` (bool), ``why_not`` (str or
    None), and when trainable: ``dataset`` (samples, episodes, rate_hz, velocity_source, dead_zone_fraction per
    joint, all_joints_moving_fraction, pairs_moving_fraction, thresholds, warnings, counts) and ``effort_note``.

    Raises:
        FileNotFoundError: no such bag.
        DataError: the file is not a readable bag at all.
        ConfigError: ``dead_zone.absolute_thresholds`` does not have one value per joint of the data.
    """
    config = config or DatasetConfig()
    out: dict[str, Any] = {"bag": str(path)}
    with open_bag(path) as h:
        out["format"] = h.format
        out["recovered"] = h.recovered
        out["damaged"] = h.damaged
        out["losses"] = h.losses  # the list itself: losses found while reading the topics show too
        out["notes"] = h.notes  # the list itself: notes added while reading (count checks) show too
        out["topics"] = _rates(h)
        msgtypes = {c.msgtype for c in h.reader.connections}
        js: dict[str, Any] = {}
        series_by_topic = {}
        for topic in sorted({c.topic for c in h.reader.connections if c.msgtype == JOINT_STATE_TYPE}):
            s = read_joint_states(h, topic)
            series_by_topic[topic] = s
            fields = {
                f: {j: (r or "usable") for j, r in field_usability(s, f).items()}
                for f in ("position", "velocity", "effort")
            }
            moving = [
                j
                for k, j in enumerate(s.joint_names)
                if len(s) and np.nanmax(s.position[:, k], initial=-np.inf) > np.nanmin(s.position[:, k], initial=np.inf)
            ]
            entry: dict[str, Any] = {"joints": list(s.joint_names), "messages": s.report["messages"],
                     "messages_used": s.report["messages_used"], "fields": fields, "moving_joints": moving,
                     "dropped": s.report["dropped"], "joint_order_changes": s.report["joint_order_changes"]}
            try:
                build_episodes(s, config)
                entry["trainable"], entry["why_not"] = True, None
            except DataError as err:
                entry["trainable"], entry["why_not"] = False, str(err)
            if len(s) and not moving:
                entry["why_not"] = (entry["why_not"] or "") + " (nothing moves: position constant on every joint)"
            js[topic] = entry
        out["joint_state_topics"] = js
        out["selected_topic"] = None
        out["trainable"] = False
        out["why_not"] = None
        try:
            series = select_joint_state_topic(h, config.topic)
            out["selected_topic"] = series.topic
            episodes, joints, rep = build_episodes(series, config)
        except DataError as err:
            out["why_not"] = str(err)
            return out
    out["trainable"] = True
    out["dataset"] = _dataset_summary(path, episodes, joints, rep, dead_zone)
    out["effort_note"] = effort_unit_note(*bag_effort_units(path, msgtypes, series, joints, config), config, joints)
    return out


def format_report(info: dict[str, Any]) -> str:
    """Human-readable text of an :func:`inspect_bag` result."""
    how = (", RECOVERED from a damaged bag" if info.get("damaged") else
           ", rebuilt to be read: a valid layout rosbags' reader cannot read as it is" if info["recovered"] else "")
    lines = [f"bag: {info['bag']}  (format: {info['format']}{how})"]
    lines += [f"  note: {n}" for n in info["notes"]]
    lines.append("topics:")
    for topic, t in sorted(info["topics"].items()):
        rate = f"{t['rate_hz']:.1f} Hz" if t["rate_hz"] else "-"
        lines.append(f"  {topic:45s} {t['type']:45s} {t['messages']:7d} msgs  {rate}")
    for topic, e in info["joint_state_topics"].items():
        lines.append(f"JointState {topic}: joints {e['joints'] or '(none: empty name lists)'}; "
                     f"{e['messages_used']}/{e['messages']} messages usable")
        for reason, d in e["dropped"].items():
            lines.append(f"    dropped {d['count']} message(s): {reason} (first: message {d['first_message']})")
        for f, per in e["fields"].items():
            usable = [j for j, r in per.items() if r == "usable"]
            other = {r: [j for j, rr in per.items() if rr == r] for r in set(per.values()) if r != "usable"}
            text = f"usable for {usable}" if usable else "not usable"
            text += "".join(f"; {r}: {js}" for r, js in other.items())
            lines.append(f"    {f:8s}: {text}")
        lines.append(f"    moving joints: {e['moving_joints'] or 'none (nothing moves)'}")
        lines.append(f"    trainable: {'yes' if e['trainable'] else 'no - ' + str(e['why_not'])}")
    if info["trainable"]:
        d = info["dataset"]
        lines.append(f"data set from {info['selected_topic']}: {d['samples']} samples in {d['episodes']} episode(s) at "
                     f"{d['rate_hz']:.1f} Hz; dq: {d['velocity_source']}; time: {d['time_source']} stamps")
        rule = "absolute thresholds" if d.get("absolute_thresholds") else f"{d['alpha']} sigma"
        lines.append(f"  dead-zone fraction per joint (|dq| <= {rule}):")
        for j, frac in d["dead_zone_fraction"].items():
            lines.append(f"    {j:24s} {100 * frac:5.1f} %  (threshold {d['velocity_threshold'][j]:.4g} rad/s)")
        lines.append(f"  samples with all joints moving: {100 * d['all_joints_moving_fraction']:.1f} % "
                     f"(conventional method keeps these); (sample, joint) pairs moving: "
                     f"{100 * d['pairs_moving_fraction']:.1f} % (masked loss uses these)")
        counts = ", ".join(f"{k}={v}" for k, v in d["counts"].items() if v)
        lines.append(f"  counts: {counts or 'nothing dropped, sorted or split'}")
        lines += [f"  warning: {w}" for w in d["warnings"]]
        lines.append(f"  effort units: {info['effort_note']}")
        lost = info.get("losses") or []
        lines.append("TRAINABLE: yes" + (f", but data was lost: {'; '.join(lost)}" if lost else ""))
    elif sum(bool(e["trainable"]) for e in info.get("joint_state_topics", {}).values()) > 1:
        # several candidates: trainable once one is chosen, not "no"
        good = [t for t, e in info["joint_state_topics"].items() if e["trainable"]]
        lines.append(f"TRAINABLE: not as given (exit 1), yes with --topic, one of {good}: {info['why_not']}")
    else:
        lines.append(f"TRAINABLE: no - {info['why_not']}")
    return "\n".join(lines)
