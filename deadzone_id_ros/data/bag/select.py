"""Which JointState topic and fields can be trained on (core, no ROS): field usability and topic selection."""

from __future__ import annotations

import numpy as np

from ...errors import DataError
from .format import JOINT_STATE_TYPE
from .joint_states import JointStateSeries, read_joint_states
from .reader import BagHandle

__all__ = ["GARBAGE_MAGNITUDE", "field_usability", "select_joint_state_topic", "why_unusable"]

GARBAGE_MAGNITUDE = 1e-20
"""A field whose largest magnitude stays below this is numerically garbage (denormal or underflow-level values; no
sensor reports rad, rad/s or N·m at that scale)."""


def field_usability(series: JointStateSeries, field_name: str) -> dict[str, str | None]:
    """Per joint: None if ``field_name`` (position/velocity/effort) is usable, else the reason it is not.

    Reasons: ``"empty in every message"``, ``"NaN in every message"``, ``"exactly zero in every message"``
    (a joint without that interface, e.g. an effort that is never filled), ``"numerically garbage: ..."`` (every
    value below :data:`GARBAGE_MAGNITUDE` in magnitude), ``"no messages"``.
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
        elif np.nanmax(np.abs(col)) < GARBAGE_MAGNITUDE:
            out[name] = (f"numerically garbage: largest magnitude {np.nanmax(np.abs(col)):.3g} "
                         "(denormal/underflow level)")
        else:
            out[name] = None
    return out


def why_unusable(series: JointStateSeries) -> str | None:
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
        lost = f"; data was lost while reading, which may have held it: {'; '.join(handle.losses)}" \
            if handle.losses else ""
        raise DataError(f"{handle.path}: no {JOINT_STATE_TYPE} topic in bag; topics: {listing or 'none'}{lost}")
    if len(js_topics) == 1:
        return read_joint_states(handle, js_topics[0])
    series = {t: read_joint_states(handle, t) for t in js_topics}
    why = {t: why_unusable(s) for t, s in series.items()}
    good = [t for t, w in why.items() if w is None]
    if len(good) == 1:
        return series[good[0]]
    if not good:
        listing = "; ".join(f"{t}: {w}" for t, w in why.items())
        raise DataError(f"{handle.path}: none of the JointState topics can be trained on: {listing}")
    raise DataError(
        f"{handle.path}: several JointState topics could be trained on: {good}; choose one with --topic "
        "(DatasetConfig.topic in Python)"
    )
