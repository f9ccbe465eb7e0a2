"""The bulk JointState decoder (core, no ROS): equally laid out serialized messages decoded at once with numpy.

Handles ROS 2 CDR (little endian) and ROS 1 serialization. Anything unexpected returns None, and the caller falls
back to rosbags' deserializer; the layout of each decoded block is verified against rosbags on its first message.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...stamps import NS_PER_S, stamp_to_ns

__all__ = ["FIELDS", "decode_block", "layout_matches_rosbags"]

FIELDS = ("position", "velocity", "effort")
"""The JointState float fields, in message order."""


def _joint_state_layout(raw: bytes | memoryview, cdr: bool) -> tuple[list[str], dict[str, tuple[int, int]], int] | None:
    """Byte layout of one serialized JointState: (names, {field: (offset, count)}, end of the name block).

    ``cdr`` True: ROS 2 CDR (little endian, 4-byte encapsulation header, offsets aligned to the element size);
    False: ROS 1 serialization (no alignment). Returns None for anything unexpected (the caller then falls back to
    rosbags' deserializer).
    """
    b = bytes(raw)
    try:
        if cdr:
            if b[:2] != b"\x00\x01":  # CDR_LE only; anything else goes the slow path
                return None
            base, pos = 4, 12
        else:
            base, pos = 0, 12

        def align(p: int, n: int) -> int:
            if not cdr:
                return p
            r = (p - base) % n
            return p + (n - r if r else 0)

        def u32(p: int) -> int:
            return int.from_bytes(b[p : p + 4], "little")

        pos = align(pos, 4)
        flen = u32(pos)
        pos += 4 + flen
        pos = align(pos, 4)
        n = u32(pos)
        pos += 4
        names = []
        for _ in range(n):
            pos = align(pos, 4)
            slen = u32(pos)
            pos += 4
            s = b[pos : pos + slen]
            names.append((s[:-1] if cdr else s).decode())
            pos += slen
        names_end = pos
        fields: dict[str, tuple[int, int]] = {}
        for name in FIELDS:
            pos = align(pos, 4)
            cnt = u32(pos)
            pos += 4
            if cnt:
                pos = align(pos, 8)
            fields[name] = (pos, cnt)
            pos += 8 * cnt
        if pos != len(b) and not (cdr and len(b) - pos < 4):  # CDR may pad the end to 4 bytes
            return None
        return names, fields, names_end
    except (IndexError, UnicodeDecodeError):
        return None


def decode_block(
    raws: list[bytes], cdr: bool
) -> tuple[list[str], np.ndarray, dict[str, np.ndarray], np.ndarray] | None:
    """Vectorized decode of equally long serialized JointState messages.

    Returns (names, stamp_ns (n,), {field: (n, k) values}, ok (n,) bool) where ``ok`` marks the messages whose
    structural bytes (frame_id, names, counts, padding: everything except seq, stamp and float data) equal the first
    message's, i.e. that share its layout; None if the first message is not understood.
    """
    layout = _joint_state_layout(raws[0], cdr)
    if layout is None:
        return None
    names, fields, _ = layout
    length = len(raws[0])
    arr = np.frombuffer(b"".join(raws), dtype=np.uint8).reshape(len(raws), length)
    structural = np.ones(length, dtype=bool)
    structural[4:12] = False  # header stamp (sec, nanosec) after the CDR encapsulation header / the ROS 1 seq
    if not cdr:
        structural[0:4] = False  # ROS 1 header seq
    for off, cnt in fields.values():
        structural[off : off + 8 * cnt] = False
    cols = np.nonzero(structural)[0]
    sub = arr[:, cols]
    ok = np.all(sub == sub[0], axis=1)
    sec = arr[:, 4:8].copy().view("<i4" if cdr else "<u4")[:, 0].astype(np.int64)
    nsec = arr[:, 8:12].copy().view("<u4")[:, 0].astype(np.int64)
    values = {name: arr[:, off : off + 8 * cnt].copy().view("<f8") for name, (off, cnt) in fields.items()}
    return names, sec * NS_PER_S + nsec, values, ok


def layout_matches_rosbags(reader: Any, raw: bytes, block: tuple, msgtype: str) -> bool:
    """True if rosbags' deserializer reads ``raw`` (the first message of ``block``) exactly as the bulk decoder did."""
    names, st, fv, _ = block
    try:
        msg = reader.deserialize(raw, msgtype)
    except Exception:  # noqa: BLE001 - a message rosbags cannot read is handled (and reported) by the slow path
        return False
    if list(msg.name) != names:
        return False
    if stamp_to_ns(msg.header.stamp) != int(st[0]):
        return False
    for f in FIELDS:
        ref = np.asarray(getattr(msg, f), dtype=np.float64)
        got = fv[f][0]
        if ref.shape != got.shape or not np.array_equal(ref, got, equal_nan=True):
            return False
    return True
