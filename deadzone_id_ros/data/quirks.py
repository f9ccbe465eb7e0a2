"""Cleaning stages for quirks of real recordings (core, no ROS), listed in
:data:`deadzone_id_ros.data.stages.STAGES` with the others:

- :func:`rename_joints`: a bag-side joint map (``DatasetConfig.joint_renames``) joins the runs of a recording whose
  joint names changed part-way (a driver restarted with a prefix);
- :func:`drop_zero_publisher`: a second publisher on /joint_states that fills every field with zeros;
- :func:`unwrap_angles`: a continuous joint whose angle wraps at ±pi.

Each takes the topic's data, the config and the cleaning log, records what it did and returns the data, like every
stage.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..errors import DataError
from .cleaning_log import CleaningLog
from .dataset_config import DatasetConfig
from .samples import Samples, TopicData

__all__ = ["WRAP_TOLERANCE", "drop_zero_publisher", "rename_joints", "unwrap_angles"]


def rename_joints(data: TopicData, config: DatasetConfig, log: CleaningLog) -> TopicData:
    """Apply ``config.joint_renames`` (bag name -> name to use): columns of renamed joints are joined by name, so
    a run recorded as ``arm_joint1`` continues a run recorded as ``joint1``; counted as ``messages_renamed``.

    Raises:
        DataError: a message carries both a joint and the name it is renamed to (names the message and both).
    """
    renames = dict(config.joint_renames or {})
    series = data.series
    present = {old: new for old, new in renames.items() if old in series.joint_names}
    if not present:
        return data
    names = list(dict.fromkeys(present.get(n, n) for n in series.joint_names))
    cols = {n: [i for i, old in enumerate(series.joint_names) if present.get(old, old) == n] for n in names}
    fields = {}
    for fname in ("position", "velocity", "effort"):
        src = getattr(series, fname)
        out = np.full((len(series), len(names)), np.nan)
        for k, n in enumerate(names):
            for i in cols[n]:
                out[:, k] = np.where(np.isnan(out[:, k]), src[:, i], out[:, k])
        fields[fname] = out
    carried = ~np.isnan(series.position)
    for n in names:
        both = carried[:, cols[n]].sum(axis=1) > 1
        if both.any():
            row = int(np.argmax(both))
            given = [series.joint_names[i] for i in cols[n] if carried[row, i]]
            raise DataError(f"{data.where}: message {int(series.index[row])} carries {given}, which the joint map "
                            f"renames to one joint {n!r}; rename only joints that never appear together")
    renamed = int(carried[:, [i for i, old in enumerate(series.joint_names) if old in present]].any(axis=1).sum())
    log.count("messages_renamed", renamed)
    log.warn(f"{data.where}: joint(s) renamed by the joint map in {renamed} message(s): "
             + ", ".join(f"{old} -> {new}" for old, new in present.items()))
    return replace(data, series=replace(series, joint_names=tuple(names), position=fields["position"],
                                        velocity=fields["velocity"], effort=fields["effort"]))


def drop_zero_publisher(data: TopicData, config: DatasetConfig, log: CleaningLog) -> TopicData:
    """Drop messages that carry 0.0 in every position, velocity and effort field, when other messages do not.

    A second publisher on the same topic that fills every field with zeros (a simulated or stub driver left running,
    yahboom_rosmaster issue 4, xarm_ros issue 185) interleaves messages that read as the arm jumping to the zero pose
    and back: radian-sized position errors and huge ddq, at a message rate that looks plausible. A real arm never
    reports exactly 0.0 for every joint's position, velocity and effort at once while other messages say it moves, so
    those messages are another publisher's: dropped, counted (``zero_filled_dropped``) and warned about with the
    first message index and how often they came. A recording that is all zeros is left to the later stages (nothing
    moves: an error there).
    """
    series = data.series
    fields = [np.nan_to_num(getattr(series, f), nan=0.0) for f in ("position", "velocity", "effort")]
    carried = ~np.isnan(series.position)
    zero = np.all(fields[0] == 0.0, axis=1) & np.all(fields[1] == 0.0, axis=1) & np.all(fields[2] == 0.0, axis=1)
    zero &= carried.any(axis=1)
    n = int(zero.sum())
    if n == 0 or n == len(zero):
        return data
    first = int(series.index[np.argmax(zero)])
    every = len(zero) / n
    log.count("zero_filled_dropped", n)
    log.warn(f"{data.where}: {n} of {len(zero)} message(s) carry 0.0 in every position, velocity and effort field "
             f"(about every {every:.3g}th message, first: message {first}) among messages that do not: a second "
             "publisher filling zeros on this topic; dropped (stop that publisher, or record only the arm driver's "
             "topic)")
    return data.take_messages(~zero)


WRAP_TOLERANCE = 0.5  # [rad] a jump is a wrap when it is this close to a multiple of 2 pi (the rest is motion)


def unwrap_angles(data: TopicData, config: DatasetConfig, log: CleaningLog) -> TopicData:
    """Unwrap joints whose angle wraps at ±pi (continuous joints reported in [-pi, pi), ros2_kortex PR 32).

    A jump larger than pi between neighbouring samples, within :data:`WRAP_TOLERANCE` of a multiple of 2 pi, of a
    joint whose positions all lie in [-pi, pi] is a wrap, not motion: left in, it made the velocity check call the
    correct velocity field wrong and replace it (dq spiking to hundreds of rad/s). The joint is unwrapped
    (:func:`numpy.unwrap`) on each run and the wraps are counted (``angle_wraps_unwrapped``) and named.
    """
    runs: list[Samples] = []
    wrapped: dict[str, int] = {}
    for run in data.runs:
        q = run.q.copy()
        for j, name in enumerate(data.joints):
            col = q[:, j]
            ok = np.isfinite(col)
            if ok.sum() < 2 or np.nanmax(np.abs(col)) > np.pi + 1e-6:
                continue
            d = np.diff(col[ok])
            wraps = (np.abs(d) > np.pi) & (np.abs(d - 2 * np.pi * np.round(d / (2 * np.pi))) < WRAP_TOLERANCE)
            if wraps.any():
                col[ok] = np.unwrap(col[ok])
                wrapped[name] = wrapped.get(name, 0) + int(wraps.sum())
        runs.append(replace(run, q=q))
    if wrapped:
        log.count("angle_wraps_unwrapped", sum(wrapped.values()))
        log.warn(f"{data.where}: position of joint(s) {sorted(wrapped)} wraps at ±pi ("
                 + ", ".join(f"{j}: {n} time(s)" for j, n in sorted(wrapped.items()))
                 + "): a continuous joint; unwrapped")
    return replace(data, runs=tuple(runs))
