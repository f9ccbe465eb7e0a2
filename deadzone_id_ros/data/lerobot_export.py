"""Teleoperation demonstrations (rosbag2) -> one LeRobot dataset (format v2.1), written with pyarrow (core, no ROS).

A demonstration bag (``deadzone-id teleop --record``, :func:`~deadzone_id_ros.experiments.teleop.record.trace_to_bag`,
or a live recording of the teleop launch) holds both arms' ``joint_states`` and their external-torque topics. Each
bag becomes one episode, its frames at a fixed rate: every topic is linearly interpolated at the frame times
``t0 + k / fps`` (``t0`` the later of the two arms' first states, up to the earlier of their last states), so the
frames are the recorded values wherever a message falls on a frame time; a topic's edge value is held up to one
frame period outside its span, NaN further out. LeRobot's convention: the follower's
state is the observation and the leader's position the action. Features (one value per follower joint, names
``"<joint>.<suffix>"``; units in info.json ``units``, a key LeRobot ignores):

- required: ``observation.state`` (``.pos``), the follower's q [rad]; ``action`` (``.pos``), the leader's q [rad];
- left out when not recorded: ``observation.velocity`` (``.vel``) [rad/s] and ``observation.effort`` [N·m], the
  follower's; ``observation.external_torque``, ``..._half_width`` and ``..._true`` [N·m], the follower's estimate, its
  dead-zone half width and the true torque (:data:`FEATURES`); ``leader.velocity``, ``leader.effort``,
  ``leader.external_torque[_half_width|_true]``, the leader's.

The topics are :class:`DemoTopics` (defaults: the in-process bag's). A torque topic may be std_msgs/Float64MultiArray
(values in its arm's joint order, stamped by log time) or sensor_msgs/JointState (``effort``, mapped by joint name,
stamped by header), as the live nodes publish. A feature that some bag lacks is left out of every episode, named in
:attr:`LerobotExport.notes`. Units assume revolute joints (a prismatic joint's are m, m/s and N).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Sequence
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ..errors import DataError
from ..stamps import NS_PER_S
from .bag import JOINT_STATE_TYPE, open_bag, read_float_arrays, read_joint_states
from .lerobot_layout import EpisodeFrames, FeatureSpec, write_lerobot

if TYPE_CHECKING:
    from .bag import BagHandle

__all__ = ["DEFAULT_FPS", "DEFAULT_TASK", "FEATURES", "DemoTopics", "ExportedEpisode", "LerobotExport",
           "export_lerobot", "parse_topic_override"]

DEFAULT_FPS = 50.0
DEFAULT_TASK = "teleoperation demonstration"
_FLOAT_ARRAY = "std_msgs/msg/Float64MultiArray"


@dataclass(frozen=True)
class DemoTopics:
    """The topics of a demonstration bag; an optional topic set to "" is not read.

    Attributes:
        follower_state, leader_state: sensor_msgs/JointState of each arm (required).
        follower_torque, follower_half_width, follower_true: the follower's external-torque estimate, its dead-zone
            half width and the true one [N·m] (Float64MultiArray or JointState ``effort``; optional).
        leader_torque, leader_half_width, leader_true: the leader's (optional).
    """

    follower_state: str = "/follower/joint_states"
    leader_state: str = "/leader/joint_states"
    follower_torque: str = "/follower/external_torque/estimated"
    follower_half_width: str = "/follower/external_torque/half_width"
    follower_true: str = "/follower/external_torque/true"
    leader_torque: str = "/leader/external_torque/estimated"
    leader_half_width: str = "/leader/external_torque/half_width"
    leader_true: str = "/leader/external_torque/true"

    @classmethod
    def live(cls) -> DemoTopics:
        """The topics of a live recording of ``launch/teleop.launch.yaml``'s nodes (sensor_msgs/JointState, torque in
        ``effort``, stamped like the states): teleop_bilateral's estimates and bands, each simulator's true torque."""
        return cls(follower_torque="/teleop_bilateral/follower/external_torque",
                   follower_half_width="/teleop_bilateral/follower/external_torque_band",
                   follower_true="/follower/follower_sim/true_external_torque",
                   leader_torque="/teleop_bilateral/leader/external_torque",
                   leader_half_width="/teleop_bilateral/leader/external_torque_band",
                   leader_true="/leader/leader_sim/true_external_torque")

    @classmethod
    def detect(cls, present: set[str] | frozenset[str]) -> DemoTopics:
        """The topics of a bag whose topic names are ``present``: :meth:`live`'s where the bag holds none of the
        in-process bag's torque topics but some of a live recording's, else the defaults (``deadzone-id teleop
        --record``'s)."""
        torque = [f.name for f in fields(cls) if not f.name.endswith("_state")]
        default, live = cls(), cls.live()
        return live if not any(getattr(default, k) in present for k in torque) and any(
            getattr(live, k) in present for k in torque) else default

    def __post_init__(self) -> None:
        for name in ("follower_state", "leader_state"):
            if not getattr(self, name):
                raise DataError(f"DemoTopics.{name} must name a JointState topic (it is required)")


def parse_topic_override(topics: DemoTopics, spec: str) -> DemoTopics:
    """``topics`` with one ``KEY=TOPIC`` override (``--topic``); ``KEY=`` leaves an optional topic out.

    Raises:
        DataError: no ``=``, or KEY is not a field of :class:`DemoTopics` (names the valid keys).
    """
    key, eq, topic = spec.partition("=")
    names = [f.name for f in fields(DemoTopics)]
    if not eq or key not in names:
        raise DataError(f"--topic {spec!r} must be KEY=TOPIC with KEY one of {names}")
    return replace(topics, **{key: topic.strip()})


@dataclass(frozen=True)
class _Source:
    """Where one feature comes from: the arm, and the JointState field or the DemoTopics field of its topic."""

    arm: str
    field: str


#: Every feature the export can write, in column order, with its source, element suffix and unit.
FEATURES: tuple[tuple[FeatureSpec, _Source], ...] = (
    (FeatureSpec("observation.state", "pos", "rad"), _Source("follower", "position")),
    (FeatureSpec("action", "pos", "rad"), _Source("leader", "position")),
    (FeatureSpec("observation.velocity", "vel", "rad/s"), _Source("follower", "velocity")),
    (FeatureSpec("observation.effort", "effort", "N*m"), _Source("follower", "effort")),
    (FeatureSpec("observation.external_torque", "external_torque", "N*m"), _Source("follower", "follower_torque")),
    (FeatureSpec("observation.external_torque_half_width", "external_torque_half_width", "N*m"),
     _Source("follower", "follower_half_width")),
    (FeatureSpec("observation.external_torque_true", "external_torque_true", "N*m"),
     _Source("follower", "follower_true")),
    (FeatureSpec("leader.velocity", "vel", "rad/s"), _Source("leader", "velocity")),
    (FeatureSpec("leader.effort", "effort", "N*m"), _Source("leader", "effort")),
    (FeatureSpec("leader.external_torque", "external_torque", "N*m"), _Source("leader", "leader_torque")),
    (FeatureSpec("leader.external_torque_half_width", "external_torque_half_width", "N*m"),
     _Source("leader", "leader_half_width")),
    (FeatureSpec("leader.external_torque_true", "external_torque_true", "N*m"), _Source("leader", "leader_true")),
)
_REQUIRED = ("observation.state", "action")


@dataclass(frozen=True)
class ExportedEpisode:
    """One episode written: its index, the bag, frames, first frame's stamp [ns] and the topic per feature."""

    index: int
    bag: Path
    frames: int
    start_ns: int
    topics: dict[str, str]


@dataclass(frozen=True)
class LerobotExport:
    """What :func:`export_lerobot` wrote.

    Attributes:
        root: the dataset directory.  fps: frames per second.  joints: (J,) the follower's joints.
        features: the feature keys written (besides timestamp and the indices).  episodes: one per bag.
        notes: features left out and why, gaps interpolated, frames outside a topic's time span (one line each).
    """

    root: Path
    fps: float
    joints: tuple[str, ...]
    features: tuple[str, ...]
    episodes: tuple[ExportedEpisode, ...]
    notes: tuple[str, ...]

    @property
    def frames(self) -> int:
        """Frames over all episodes."""
        return sum(e.frames for e in self.episodes)

    def summary(self) -> str:
        """One sentence: where, how many episodes and frames at which rate, the joints and features."""
        return (f"wrote LeRobot dataset {self.root} (v2.1): {len(self.episodes)} episode(s), {self.frames} frames at "
                f"{self.fps:g} fps; joints {list(self.joints)}; features {list(self.features)}")


@dataclass(frozen=True)
class _Series:
    """A topic's samples: stamps (M,) [ns], sorted, and values (M, J) in the follower's joint order."""

    t_ns: np.ndarray
    values: np.ndarray


@dataclass(frozen=True)
class _Demo:
    """One bag as read: the follower's joints, each present feature's series and the topic it came from."""

    joints: tuple[str, ...]
    series: dict[str, _Series]
    topics: dict[str, str]


def _stamped(stamp_ns: np.ndarray, log_ns: np.ndarray, values: np.ndarray) -> _Series:
    """A JointState topic's series on its header stamps, as :func:`~.bag.recording.read_recording` takes them:
    messages stamped zero are left out (e.g. a simulator's state before its first step), and only when none is
    stamped are the log (receive) times used."""
    stamped = (stamp_ns > 0) | (stamp_ns == log_ns)  # a zero stamp logged at time 0 is a real one
    if not stamped.any():
        return _sorted(log_ns, values)
    return _sorted(stamp_ns[stamped], values[stamped])


def _sorted(t_ns: np.ndarray, values: np.ndarray) -> _Series:
    order = np.argsort(t_ns, kind="stable")
    return _Series(np.asarray(t_ns, dtype=np.int64)[order], np.asarray(values, dtype=float)[order])


def _reorder(where: str, names: Sequence[str], joints: tuple[str, ...]) -> list[int]:
    """Column of each follower joint in ``names``.

    Raises:
        DataError: the sets of joints differ (names both lists).
    """
    if sorted(names) != sorted(joints):
        raise DataError(f"{where}: joints {list(names)} disagree with the follower's {list(joints)} (the export "
                        "needs both arms to have the same joint names, one value per follower joint)")
    return [list(names).index(j) for j in joints]


def _read_topic(h: BagHandle, topic: str, arm_joints: tuple[str, ...], joints: tuple[str, ...]) -> _Series:
    """An external-torque topic as a series in the follower's joint order (module docstring: the two types).

    Raises:
        DataError: another message type, a message of the wrong length, joints that disagree (names the topic).
    """
    conns = [c for c in h.reader.connections if c.topic == topic]
    msgtype = conns[0].msgtype
    where = f"{h.path}: topic {topic}"
    if msgtype == JOINT_STATE_TYPE:
        s = read_joint_states(h, topic)
        cols = _reorder(where, s.joint_names, joints)
        return _stamped(s.stamp_ns, s.log_ns, s.effort[:, cols])
    if msgtype != _FLOAT_ARRAY:
        raise DataError(f"{where} has type {msgtype}, expected {_FLOAT_ARRAY} or {JOINT_STATE_TYPE}")
    cols = _reorder(where, arm_joints, joints)
    t_ns, values = read_float_arrays(h, topic, len(arm_joints), f" (its arm's joints {list(arm_joints)})")
    return _sorted(t_ns, values[:, cols])


def _read_demo(bag: Path, topics: DemoTopics | None, notes: list[str]) -> _Demo:
    """Every feature of :data:`FEATURES` that ``bag`` holds; a missing optional one is noted in ``notes``. ``topics``
    None: :meth:`DemoTopics.detect` on the bag's topics.

    Raises:
        DataError: a required topic missing or empty (named), joints that disagree, a message that cannot be read.
    """
    with open_bag(bag) as h:
        present = {c.topic for c in h.reader.connections}
        topics = topics or DemoTopics.detect(present)
        arms = {}
        for arm in ("follower", "leader"):
            topic = getattr(topics, f"{arm}_state")
            if topic not in present:
                raise DataError(f"{bag}: required topic {topic} ({arm} joint_states) not in bag; topics: "
                                f"{sorted(present)} (name it with --topic {arm}_state=TOPIC)")
            s = read_joint_states(h, topic)
            if not len(s):
                raise DataError(f"{bag}: required topic {topic} ({arm} joint_states) has no usable message")
            arms[arm] = s
        joints = arms["follower"].joint_names
        cols = {"follower": list(range(len(joints))),
                "leader": _reorder(f"{bag}: topic {topics.leader_state}", arms["leader"].joint_names, joints)}
        series: dict[str, _Series] = {}
        used: dict[str, str] = {}
        for spec, src in FEATURES:
            s = arms[src.arm]
            if src.field in ("position", "velocity", "effort"):
                values = getattr(s, src.field)[:, cols[src.arm]]
                topic = getattr(topics, f"{src.arm}_state")
                if not np.isfinite(values).any():
                    if spec.key in _REQUIRED:
                        raise DataError(f"{bag}: required topic {topic} ({src.arm} joint_states) carries no position")
                    notes.append(f"{bag}: {spec.key} left out: topic {topic} carries no {src.field}")
                    continue
                got = _stamped(s.stamp_ns, s.log_ns, values)
            else:
                topic = getattr(topics, src.field)
                if not topic:
                    continue
                if topic not in present:
                    notes.append(f"{bag}: {spec.key} left out: topic {topic} not in bag")
                    continue
                got = _read_topic(h, topic, s.joint_names, joints)
                if not len(got.t_ns):
                    notes.append(f"{bag}: {spec.key} left out: topic {topic} has no usable message")
                    continue
            series[spec.key], used[spec.key] = got, topic
    return _Demo(joints, series, used)


def _frames(demo: _Demo, bag: Path, fps: float, keys: list[str], notes: list[str]) -> tuple[int, dict[str, np.ndarray]]:
    """(first frame's stamp [ns], {key: (N, J) values at the frame times}) of one demonstration.

    Raises:
        DataError: the two arms' states do not overlap in time.
    """
    q_f, q_l = demo.series["observation.state"], demo.series["action"]
    t0, t1 = max(q_f.t_ns[0], q_l.t_ns[0]), min(q_f.t_ns[-1], q_l.t_ns[-1])
    if t1 < t0:
        raise DataError(f"{bag}: the follower's and the leader's joint_states do not overlap in time")
    n = int(np.floor((t1 - t0) * fps / NS_PER_S + 1e-9)) + 1
    grid = np.arange(n) / fps  # [s] since t0
    out = {}
    for key in keys:
        s = demo.series[key]
        rel = (s.t_ns - t0) / NS_PER_S
        gaps = np.diff(rel)
        if len(gaps) and gaps.max() > 5.0 / fps:
            k = int(np.argmax(gaps))
            notes.append(f"{bag}: {key}: a gap of {gaps[k]:.3f} s at {rel[k]:.3f} s, interpolated linearly")
        # np.interp holds the edge values: kept up to one frame period outside the topic's span (a live node's topic
        # may end a sample or two before the states), NaN beyond it
        vals = np.stack([np.interp(grid, rel, s.values[:, j]) for j in range(s.values.shape[1])], axis=1)
        far = (grid < rel[0] - 1.0 / fps) | (grid > rel[-1] + 1.0 / fps)
        vals[far] = np.nan
        if far.any():
            notes.append(f"{bag}: {key}: {int(far.sum())} of {n} frames more than one frame period outside its "
                         "topic's time span, left NaN")
        out[key] = vals
    return int(t0), out


def export_lerobot(bags: Sequence[str | Path], out: str | Path, *, fps: float = DEFAULT_FPS,
                   topics: DemoTopics | None = None, task: str = DEFAULT_TASK,
                   robot_type: str = "") -> LerobotExport:
    """Write the demonstration ``bags`` as one LeRobot v2.1 dataset at ``out``, one episode per bag (module
    docstring: features, units, resampling).

    Args:
        bags: (E,) demonstration bags, in episode order.  out: the dataset directory to create (must not exist).
        fps: frame rate [Hz] (> 0).  topics: the bags' topics (None: per bag, the in-process bag's or a live
            recording's, whichever it holds, :meth:`DemoTopics.detect`).
        task: the task text of every episode (meta/tasks.jsonl).  robot_type: info.json ``robot_type`` (default: the
            first bag's episode.yaml ``robot``, else "").

    Returns:
        what was written (:class:`LerobotExport`; ``notes`` say what was left out).

    Raises:
        FileNotFoundError: a bag does not exist.
        DataError: no bag, ``out`` exists, fps not positive, a bag lacks a required topic (named), the joints of the
            two arms or of two bags disagree, a message that cannot be read.
    """
    out = Path(out)
    if not bags:
        raise DataError("export_lerobot needs at least one demonstration bag")
    if not (np.isfinite(fps) and fps > 0):
        raise DataError(f"fps = {fps!r} must be a positive number of frames per second")
    if out.exists():
        raise DataError(f"cannot write {out}: it exists (choose another --out)")
    notes: list[str] = []
    demos: list[tuple[Path, _Demo]] = []
    for bag in bags:
        bag = Path(bag)
        if not bag.exists():
            raise FileNotFoundError(f"demonstration bag {bag} does not exist")
        demo = _read_demo(bag, topics, notes)
        if demos and demo.joints != demos[0][1].joints:
            raise DataError(f"{bag}: follower joints {list(demo.joints)} disagree with those of {demos[0][0]} "
                            f"({list(demos[0][1].joints)}); one dataset holds one arm")
        demos.append((bag, demo))
    keys = [spec.key for spec, _ in FEATURES if all(spec.key in d.series for _, d in demos)]
    for spec, _ in FEATURES:
        lacking = [str(b) for b, d in demos if spec.key not in d.series]
        if spec.key not in keys and len(lacking) < len(demos):
            notes.append(f"{spec.key} left out of every episode: {lacking} lack it")
    episodes, written = [], []
    for index, (bag, demo) in enumerate(demos):
        start, values = _frames(demo, bag, fps, keys, notes)
        episodes.append(EpisodeFrames(index, task, values))
        written.append(ExportedEpisode(index, bag, len(values["observation.state"]), start,
                                       {k: demo.topics[k] for k in keys}))
    joints = demos[0][1].joints
    if not robot_type:
        robot_type = _robot_of(demos[0][0])
    specs = [spec for spec, _ in FEATURES if spec.key in keys]
    tmp = out.parent / f".{out.name}.partial-{os.getpid()}"
    try:
        write_lerobot(tmp, fps, robot_type, joints, specs, episodes,
                      extra_info={"source_bags": [str(b) for b, _ in demos]})
        tmp.rename(out)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp)
    return LerobotExport(out, float(fps), joints, tuple(keys), tuple(written), tuple(notes))


def _robot_of(bag: Path) -> str:
    """episode.yaml's ``robot`` of ``bag`` ("" when none)."""
    from ..config import load_yaml
    from .bag import EPISODE_FILE

    ep = bag / EPISODE_FILE
    if not ep.is_file():
        return ""
    doc = load_yaml(ep.read_text()) or {}
    return str(doc.get("robot") or "") if isinstance(doc, dict) else ""
