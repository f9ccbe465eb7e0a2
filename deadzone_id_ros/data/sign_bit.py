"""Effort in a sign-and-magnitude register: Feetech's raw Present_Load (core, no ROS).

A Feetech STS/SMS servo reports ``Present_Load`` as 11 bits of sign and magnitude: the magnitude in bits 0-9
(0..1000, the PWM duty in 0.1 %) and the sign in bit 10, so a raw reading of 1024 + m means -m. A driver that
publishes the register without decoding it (lerobot before huggingface/lerobot PR 1014, which added the decoding)
gives effort in [0, 2047] that jumps by about 1024 whenever the torque crosses zero. Read as a number it is
anti-correlated with the torque almost everywhere, so the URDF check (:mod:`deadzone_id_ros.robot.consistency`)
would call it an opposite sign convention; flipping its sign does not undo the offset.

:func:`sign_bit_evidence` recognizes the encoding in one joint's effort series; :func:`decode_sign_bit` undoes it;
the cleaning stage :func:`decode_effort_sign_bit` decodes the joints of ``DatasetConfig.effort_sign_bit``
(``--effort-sign-bit JOINT:10``) and warns about undecoded joints that look encoded.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np

from ..errors import DataError

if TYPE_CHECKING:
    from .cleaning_log import CleaningLog
    from .dataset_config import DatasetConfig
    from .samples import TopicData

__all__ = ["FEETECH_LOAD_SIGN_BIT", "decode_effort_sign_bit", "decode_sign_bit", "sign_bit_evidence", "sign_bit_fix"]

#: The sign bit of Feetech's Present_Load register (huggingface/lerobot PR 1014).
FEETECH_LOAD_SIGN_BIT = 10
_MIN_SAMPLES = 20
_MAX_STEP_RATIO = 0.25  # decoded step across the sign boundary at most this fraction of the raw one


def decode_sign_bit(values: np.ndarray, bit: int = FEETECH_LOAD_SIGN_BIT) -> np.ndarray:
    """Sign-and-magnitude register readings to signed numbers: ``v >= 2**bit`` -> ``-(v - 2**bit)``; NaN stays NaN.

    Args:
        values: (...) raw readings, whole numbers in [0, 2**(bit + 1)).
        bit: the sign bit (10 for Feetech's Present_Load).

    Raises:
        ValueError: a finite value that is negative, not a whole number or not below 2**(bit + 1).
    """
    v = np.asarray(values, dtype=float)
    finite = v[np.isfinite(v)]
    top = 2.0 ** (bit + 1)
    bad = finite[(finite < 0) | (finite >= top) | (finite != np.round(finite))]
    if bad.size:
        raise ValueError(f"value {bad[0]:g} is not a whole number in [0, {top:g}): not a register with the sign in "
                         f"bit {bit}")
    half = 2.0 ** bit
    return np.where(v >= half, half - v, v)


def sign_bit_evidence(effort: np.ndarray, bit: int = FEETECH_LOAD_SIGN_BIT, *, falls_with_torque: bool = False
                      ) -> str:
    """Why one joint's effort series (N,) (bag order) looks like a sign-and-magnitude register with the sign in
    ``bit``, or "" when it does not.

    It does when every finite value lies in [0, 2**(bit + 1)), and either both halves occur (values below and at or
    above 2**bit) and reading 2**bit + m as -m removes the jumps where the series crosses 2**bit: the median step
    across the boundary is at most a quarter of the raw one once decoded (a torque crossing zero jumps by about 2**bit
    raw, by a few units decoded; a signed number passing 2**bit would do the opposite); or, with ``falls_with_torque``
    (the caller found the effort falling as the expected torque rises), every value is at or above 2**bit: a torque
    that never changes sign, all negative readings. Whole numbers are not required, so resampled readings are
    recognized too.
    """
    v = np.asarray(effort, dtype=float)
    v = v[np.isfinite(v)]
    half, top = 2.0 ** bit, 2.0 ** (bit + 1)
    if v.size < _MIN_SAMPLES or v.min() < 0 or v.max() >= top:
        return ""
    high = v >= half
    if high.all() and falls_with_torque:
        return (f"its effort lies in [{v.min():g}, {v.max():g}], every value at or above {half:g}, and falls as the "
                f"URDF's torque rises: a register with the sign in bit {bit} whose readings are all negative "
                f"({half:g} + m means -m), not a signed number with the opposite sign (Feetech's raw Present_Load; "
                "decoded by huggingface/lerobot PR 1014)")
    cross = np.flatnonzero(high[1:] != high[:-1])
    if not cross.size:
        return ""
    decoded = np.where(high, half - v, v)
    raw_step = float(np.median(np.abs(v[cross + 1] - v[cross])))
    decoded_step = float(np.median(np.abs(decoded[cross + 1] - decoded[cross])))
    if decoded_step > _MAX_STEP_RATIO * raw_step:
        return ""
    return (f"its effort lies in [{v.min():g}, {v.max():g}] with {100.0 * high.mean():.0f}% of it at or above "
            f"{half:g}, and where it crosses {half:g} ({cross.size} times) it jumps by a median {raw_step:.4g}, but "
            f"by {decoded_step:.4g} when {half:g} + m is read as -m: a register with the sign in bit {bit}, not a "
            "signed number (Feetech's raw Present_Load; decoded by huggingface/lerobot PR 1014)")


def sign_bit_fix(joints: list[str] | tuple[str, ...], bit: int = FEETECH_LOAD_SIGN_BIT) -> str:
    """The flag that decodes ``joints``: ``--effort-sign-bit J1:10 J2:10``, with what it gives."""
    items = " ".join(f"{j}:{bit}" for j in joints)
    return (f"pass --effort-sign-bit {items} to decode it (0.1% duty, signed; then --torque-constant JOINT:K for "
            "N·m); do not flip its sign")


def decode_effort_sign_bit(data: TopicData, config: DatasetConfig, log: CleaningLog) -> TopicData:
    """Cleaning stage: decode the effort of the joints of ``config.effort_sign_bit`` (counted as
    ``effort_sign_bit_decoded``); warn, naming the flag, about other joints whose effort looks encoded
    (:func:`sign_bit_evidence`).

    Raises:
        DataError: a joint named for decoding is not on the topic, or a value of it is not a register reading
            (names the bag, topic, message index and joint).
    """
    series = data.series
    wanted = dict(config.effort_sign_bit or {})
    missing = [j for j in wanted if j not in series.joint_names]
    if missing:
        raise DataError(f"{data.where}: --effort-sign-bit names joint(s) {missing} not on the topic; joints: "
                        f"{list(series.joint_names)}")
    effort = series.effort
    if wanted:
        effort = effort.copy()
        for j, bit in wanted.items():
            col = series.joint_names.index(j)
            try:
                effort[:, col] = decode_sign_bit(effort[:, col], bit)
            except ValueError as err:
                finite = np.isfinite(effort[:, col])
                raw = effort[:, col]
                row = int(np.flatnonzero(finite & ((raw < 0) | (raw >= 2.0 ** (bit + 1)) | (raw != np.round(raw))))[0])
                raise DataError(f"{data.where}: message {int(series.index[row])} field effort of joint {j}: {err} "
                                "(--effort-sign-bit)") from err
            log.count("effort_sign_bit_decoded", int(np.count_nonzero(np.isfinite(effort[:, col]))))
        data = replace(data, series=replace(series, effort=effort))
    looks = [j for k, j in enumerate(series.joint_names) if j not in wanted and sign_bit_evidence(series.effort[:, k])]
    if looks:
        log.warn(f"{data.where}: joint(s) {looks}: " + sign_bit_evidence(series.effort[:, series.joint_names.index(
            looks[0])]) + "; " + sign_bit_fix(looks))
    return data
