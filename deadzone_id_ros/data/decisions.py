"""What a topic's data are cleaned into (core, no ROS): which joints, which velocity, which time, one pure function
per decision, each returning what it decided plus its warnings so that it can be tested alone. The stages of
:data:`~deadzone_id_ros.data.stages.STAGES` call them and record the decisions in the cleaning log.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..errors import DataError
from ..stamps import NS_PER_S
from .bag import JointStateSeries, field_usability, why_unusable
from .defects import effort_problems

if TYPE_CHECKING:
    from .dataset_config import DatasetConfig

__all__ = ["choose_time", "choose_velocity", "select_joints"]


def select_joints(series: JointStateSeries, config: DatasetConfig) -> tuple[tuple[str, ...], list[str]]:
    """The joints to train on, and warnings.

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
    """Take dq from the message (True) or differentiate q (False), per ``config.velocity``.

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
    """The time stamps [ns] of every message, per ``config.time_source``.

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
