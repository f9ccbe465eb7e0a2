"""recorder: EpisodeWriter unit tests, and the live node with sim_arm over DDS (services, clean close, kill -9)."""

from __future__ import annotations

import signal
import sqlite3
import time
import uuid
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest
import yaml
from conftest import REPO, STALL_TIMEOUT, executable, wait_until
from std_msgs.msg import Float64MultiArray
from std_srvs.srv import Trigger

from deadzone_id_ros.config import dataclass_from_dict, load_ros_parameters
from deadzone_id_ros.data.bag import MessageEncoders, open_bag, read_joint_states, read_recording
from deadzone_id_ros.data.recorder import EpisodeWriter, RecorderConfig, header_stamp_ns
from deadzone_id_ros.errors import ConfigError, DataError

T0 = 1_700_000_000_000_000_000


# --- core (no ROS graph)


def test_bundled_config_loads():
    cfg = dataclass_from_dict(RecorderConfig, load_ros_parameters(REPO / "config" / "recorder.yaml", "recorder"),
                              "config/recorder.yaml")
    assert cfg == RecorderConfig()


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [({"storage": "bag"}, "RecorderConfig.storage = 'bag'"), ({"flush_period": 0.0}, "flush_period = 0.0"),
     ({"command_topic": "bad topic"}, "command_topic = 'bad topic'"), ({"episode_prefix": "a/b"}, "episode_prefix"),
     ({"queue_depth": 0}, "queue_depth = 0"), ({"output_dir": ""}, "output_dir must not be empty")],
)
def test_config_validation(kwargs, match):
    with pytest.raises(ValueError, match=match):
        RecorderConfig(**kwargs)
    with pytest.raises(ConfigError, match="unknown key"):
        dataclass_from_dict(RecorderConfig, {"outputdir": "x"})


@pytest.mark.parametrize("storage", ["mcap", "sqlite3"])
def test_episode_writer_start_split_stop(tmp_path, storage):
    cfg = RecorderConfig(output_dir=str(tmp_path / "rec"), storage=storage, robot="arm", notes="unit")
    w = EpisodeWriter(cfg)
    enc = MessageEncoders(["j1", "j2"])
    first = w.start(T0)
    with pytest.raises(DataError, match="already recording"):
        w.start(T0)
    w.set_joint_names(["j1", "j2"])
    for k in range(100):
        t = T0 + k * 1_000_000
        w.write("/joint_states", t, enc.joint_state(t, [k, -k], [1.0, 1.0], [0.1, 0.2]))
        w.write("/effort_controller/commands", t, enc.command([0.1, 0.2]))
    path, counts = w.stop(T0 + 100_000_000)
    assert path == first and counts["/joint_states"] == 100 and counts["/effort_controller/commands"] == 100
    with pytest.raises(DataError, match="not recording"):
        w.stop(T0)
    w.write("/joint_states", T0, b"ignored while idle")
    second = w.start(T0 + 200_000_000)
    assert second != first
    w.stop(T0 + 300_000_000)
    ep = yaml.safe_load((first / "episode.yaml").read_text())
    assert ep["robot"] == "arm" and ep["joints"] == ["j1", "j2"] and ep["complete"] is True
    assert ep["stop_time_ns"] == T0 + 100_000_000 and ep["message_counts"]["/joint_states"] == 100
    rec = read_recording(first)
    np.testing.assert_array_equal(rec.position[:, 0], np.arange(100))
    assert rec.command.shape == (100, 2)
    if storage == "mcap":  # the episode also opens with the mcap library (standard summary and schemas)
        from mcap.reader import make_reader

        (f,) = first.glob("*.mcap")
        with f.open("rb") as fh:
            reader = make_reader(fh)
            stats = reader.get_summary().statistics
            topics = {ch.topic for ch in reader.get_summary().channels.values()}
        assert stats.message_count == 200
        assert topics == {"/joint_states", "/effort_controller/commands", "/feedforward_controller/reference",
                          "/feedforward_controller/external_torque", "/feedforward_controller/contact",
                          "/feedforward_controller/external_wrench",
                          "/feedforward_controller/external_torque_band"}  # force sensing: demonstrations carry forces


def test_sim_time_episodes_are_named_from_the_wall_clock(tmp_path):
    """Under use_sim_time the node clock starts near 0: the name and wall_start_time come from the wall clock."""
    import time
    from datetime import datetime, timezone

    w = EpisodeWriter(RecorderConfig(output_dir=str(tmp_path)))
    before = datetime.now(timezone.utc).strftime("%Y%m%d")
    path = w.start(3_000_000_000)  # 3 s of simulated time
    w.stop(4_000_000_000)
    assert path.name.startswith(f"episode_{before}") and "19700101" not in path.name
    ep = yaml.safe_load((path / "episode.yaml").read_text())
    assert ep["start_time_ns"] == 3_000_000_000  # the data's clock is kept as it is
    assert abs(datetime.fromisoformat(ep["wall_start_time"]).timestamp() - time.time()) < 60
    named = EpisodeWriter(RecorderConfig(output_dir=str(tmp_path / "b"))).start(0, wall_ns=T0)
    want = datetime.fromtimestamp(T0 / 1e9, tz=timezone.utc).strftime("%Y%m%d_%H%M%S")
    assert named.name == f"episode_{want}_000"


def test_episode_writer_skips_zero_and_repeated_joint_state_stamps(tmp_path):
    """The recorder never writes a JointState with a zero stamp or one not after the previous (live demo bags had
    both); commands are written whatever their stamps."""
    w = EpisodeWriter(RecorderConfig(output_dir=str(tmp_path)))
    enc = MessageEncoders(["j1"])
    path = w.start(T0)
    stamps = [0, T0, T0 + 1_000_000, T0 + 1_000_000, T0 + 500_000, T0 + 2_000_000]
    for k, t in enumerate(stamps):
        data = enc.joint_state(t, [float(k)], [0.0], [0.0])
        assert header_stamp_ns(data) == t
        w.write("/joint_states", T0 + k, data)
        w.write("/effort_controller/commands", T0 + k, enc.command([0.0]))
    _, counts = w.stop(T0 + 10_000_000)
    assert counts["/joint_states"] == 3 and counts["/effort_controller/commands"] == 6
    ep = yaml.safe_load((path / "episode.yaml").read_text())
    assert ep["messages_skipped"] == {"/joint_states: zero header stamp": 1,
                                      "/joint_states: header stamp not after the previous one": 2}
    rec = read_recording(path)
    np.testing.assert_array_equal(rec.state_t_ns, [T0, T0 + 1_000_000, T0 + 2_000_000])
    np.testing.assert_array_equal(rec.position[:, 0], [1.0, 2.0, 5.0])


@pytest.mark.parametrize("drop", [True, False])
def test_zero_stamped_joint_states_are_dropped_when_asked_and_always_counted(tmp_path, drop):
    """Lockstep publishes the state before the first command with stamp 0: with drop_zero_stamp_states it never
    reaches the bag; either way episode.yaml counts it."""
    cfg = RecorderConfig(output_dir=str(tmp_path / "rec"), drop_zero_stamp_states=drop)
    w = EpisodeWriter(cfg)
    enc = MessageEncoders(["j1"])
    path = w.start(T0)
    for t in (0, 0, T0, T0 + 1_000_000):  # header stamps; log time is the receive time
        data = enc.joint_state(t, [0.0], [0.0], [0.0])
        assert (header_stamp_ns(data) == 0) == (t == 0)
        w.write_joint_state("/joint_states", T0 + 5, data)
    w.stop(T0 + 10)
    ep = yaml.safe_load((path / "episode.yaml").read_text())
    assert ep["zero_stamp_states"] == 2 and ep["zero_stamp_states_dropped"] is drop
    with open_bag(path) as h:
        stamps = read_joint_states(h, "/joint_states").stamp_ns
    assert len(stamps) == (2 if drop else 4) and (stamps.min() > 0) == drop
    with pytest.raises(DataError, match="too short"):
        header_stamp_ns(b"\x00\x01")


def test_episode_writer_flush_bounds_loss_on_kill(tmp_path):
    """After flush(), everything written so far survives a process that never closes the bag."""
    cfg = RecorderConfig(output_dir=str(tmp_path), storage="mcap")
    w = EpisodeWriter(cfg)
    enc = MessageEncoders(["j1"])
    path = w.start(T0)
    for k in range(500):
        t = T0 + k * 1_000_000
        w.write("/joint_states", t, enc.joint_state(t, [k * 1e-3], [1.0], [0.0 + k]))
        if k == 299:
            w.flush()
    w._writer.storage.bio.close()  # "killed": no summary, no footer, no metadata.yaml; unflushed chunk lost
    with open_bag(path) as h:
        assert h.recovered
        s = read_joint_states(h, "/joint_states")
    assert len(s) == 300


# --- live: sim_arm + recorder as real processes over DDS


class ServiceCaller:
    """Calls the recorder's Trigger services and publishes commands through the shared test node.

    Every test names its recorder uniquely: a recorder killed by an earlier test stays visible in DDS discovery for a
    while, and a request sent to its service name could be matched to that ghost only.
    """

    def __init__(self, probe) -> None:
        self.recorder = f"recorder_{uuid.uuid4().hex[:8]}"
        self.probe = probe
        for n in ("start", "stop", "split"):  # discovery of the services starts now
            probe.client(Trigger, f"/{self.recorder}/{n}")
        self.pub = probe.publisher(Float64MultiArray, "/effort_controller/commands", 1000)

    def publish_commands(self, count: int, rate: float = 1000.0) -> int:
        """Publish ``count`` zero torques, at most ``rate`` [Hz] (a loaded machine publishes them more slowly, never
        fewer); returns how many were published."""
        n, period = 0, 1.0 / rate
        start = time.monotonic()
        while n < count:
            if time.monotonic() >= start + n * period:
                self.pub.publish(Float64MultiArray(data=[0.0, 0.0, 0.0]))
                n += 1
            self.probe.executor.spin_once(timeout_sec=0.0002)
        return n

    def call(self, name: str, timeout: float = 30.0, attempts: int = 3, log=lambda: "") -> Trigger.Response:
        """Call ~/``name`` of the recorder (retried as :meth:`conftest.RosProbe.call` explains)."""
        return self.probe.call(Trigger, f"/{self.recorder}/{name}", timeout=timeout, attempts=attempts, log=log)


@pytest.fixture
def caller(ros_probe):
    return ServiceCaller(ros_probe)


def _start_graph(processes, out: Path, storage: str = "mcap", *extra: str, name: str | None = None,
                 env: dict | None = None):
    # the launch files' real-time priorities (sim.launch.yaml 49, record.launch.yaml 48): at normal priority under
    # 4 busy processes the recorder fell more than its queue depth behind and lost 274 of 1500 commands
    sim = processes.start([executable("sim_arm"), "--ros-args", "--params-file", str(REPO / "config" / "sim_arm.yaml"),
                           "-p", "thread_priority:=49"], "sim_arm")
    rec = processes.start(
        [executable("recorder"), "--ros-args", "--params-file", str(REPO / "config" / "recorder.yaml"),
         "-p", f"output_dir:={out}", "-p", f"storage:={storage}", "-p", "robot:=sim_arm", "-p", "thread_priority:=48",
         *extra,
         "-r", f"__node:={name or 'recorder_' + uuid.uuid4().hex[:8]}"],
        "recorder",
        env=env,
    )
    return sim, rec


def _episodes(out: Path) -> list[Path]:
    return sorted(p for p in out.iterdir() if p.is_dir()) if out.is_dir() else []


@pytest.mark.integration
def test_live_start_split_stop_and_clean_sigint(processes, caller, tmp_path):
    out = tmp_path / "rec"
    from sensor_msgs.msg import JointState

    seen = caller.probe.listen("/joint_states", JointState)
    sim, rec = _start_graph(processes, out, name=caller.recorder)
    assert caller.call("stop", log=lambda: processes.log(rec)).success is False  # nothing open yet
    resp = caller.call("start", log=lambda: processes.log(rec))
    assert resp.success, resp.message
    # wait until the recorder sees /joint_states (discovery), then 1500 commands (counted, at most 1 kHz, on top of
    # sim_arm's /joint_states at up to 1 kHz: a loaded machine takes longer, it does not send fewer)
    assert wait_until(lambda: _partial_count(out) > 0, 90.0), processes.log(rec)
    sent = caller.publish_commands(1500)
    time.sleep(0.3)  # let the last ones arrive (a late one lands in the next episode, counted below)
    resp = caller.call("split", log=lambda: processes.log(rec))
    assert resp.success and "closed episode" in resp.message and "now recording" in resp.message
    time.sleep(1.0)
    assert caller.call("start", log=lambda: processes.log(rec)).success is False  # already recording
    assert processes.stop(rec, signal.SIGINT) == 0, processes.log(rec)  # SIGINT closes the open episode cleanly
    first, second = _episodes(out)
    for ep in (first, second):
        assert (ep / "metadata.yaml").is_file()
        doc = yaml.safe_load((ep / "episode.yaml").read_text())
        assert doc["complete"] and doc["robot"] == "sim_arm"
        assert doc["joints"] == ["joint1", "joint2", "joint3"]
    n_cmd = []
    for ep in (first, second):
        with open_bag(ep) as h:
            assert not h.recovered
            n_cmd.append(sum(1 for _ in h.reader.messages([c for c in h.reader.connections
                                                          if c.topic == "/effort_controller/commands"])))
    s1, s2 = (read_recording_states(ep) for ep in (first, second))
    assert sent == 1500 and sum(n_cmd) == sent, (sent, n_cmd)  # the recorder kept up: no command lost
    rate = (len(s1) - 1) / ((s1.stamp_ns[-1] - s1.stamp_ns[0]) * 1e-9)
    print(f"recorded /joint_states at {rate:.0f} Hz and {n_cmd}/{sent} commands")
    assert s1.joint_names == ("joint1", "joint2", "joint3")
    for s in (s1, s2):
        dt = np.diff(s.stamp_ns) * 1e-9
        assert len(s) > 0 and np.all(dt > 0)
    # counted, not timed: every state the probe received whose stamp lies within the two episodes' span is recorded
    # (in the first, or in the second if the recorder lagged behind the split). Stamps, not the probe's callback
    # times: its callbacks run only while it spins, which on an idle machine can be after the split
    caller.probe.spin(0.5)
    stamps = np.array([m.header.stamp.sec * 1_000_000_000 + m.header.stamp.nanosec for _, m in seen], dtype=np.int64)
    during = stamps[(stamps >= s1.stamp_ns[0]) & (stamps <= s2.stamp_ns[-1])]
    kept = np.isin(during, np.concatenate([s1.stamp_ns, s2.stamp_ns])).mean()
    assert len(during) > 0 and kept >= 0.99, (len(during), float(kept))
    assert s2.stamp_ns[0] > s1.stamp_ns[-1]  # split: consecutive, no overlap
    # split loses (almost) nothing: the gap across the switch is at most a few 1 ms samples, or no larger than the
    # simulator's own largest gap inside the episodes (in wall-clock mode a starved sim_arm catches up with up to 50
    # physics steps between two states: measured 50 ms under load)
    gap = (s2.stamp_ns[0] - s1.stamp_ns[-1]) * 1e-9
    own = max(np.diff(s1.stamp_ns).max(initial=0), np.diff(s2.stamp_ns).max(initial=0)) * 1e-9
    assert gap < 0.05 or gap <= own, (gap, own)


def read_recording_states(ep: Path):
    """The /joint_states series of a closed episode."""
    with open_bag(ep) as h:
        assert not h.recovered
        return read_joint_states(h, "/joint_states")


def _partial_count(out: Path) -> int:
    """Messages already on disk in the newest episode (sqlite3: committed rows; MCAP: flushed bytes past the
    header and schemas, as a proxy)."""
    eps = _episodes(out)
    if not eps:
        return 0
    for f in eps[-1].glob("*.db3"):
        try:
            with sqlite3.connect(f"file:{f}?mode=ro", uri=True, timeout=0.1) as db:
                return int(db.execute("SELECT count(*) FROM messages").fetchone()[0])
        except sqlite3.Error:
            return 0
    return int(sum(f.stat().st_size for f in eps[-1].glob("*.mcap")) > 20_000)


def _on_disk(ep: Path) -> int:
    """Size of the episode's storage files [bytes]: grows at each flush of the recorder."""
    return sum(f.stat().st_size for f in ep.iterdir() if f.suffix in (".mcap", ".db3", ".db3-wal"))


@pytest.mark.integration
@pytest.mark.parametrize("storage", ["mcap", "sqlite3"])
def test_live_kill_9_loses_nothing_that_was_flushed(processes, tmp_path, storage):
    """kill -9 right after a flush: every /joint_states message that the flush put on disk is recovered, and the
    recorder flushed while it ran. Counted at the flushes it makes, not in a wall-clock window: how many messages a
    flush period holds, and when the flush timer fires, depend on the machine's load."""
    out = tmp_path / "rec"
    # autostart (services are tested above); the process to be killed talks UDP only: a SIGKILLed FastDDS
    # participant leaves shared-memory ports behind that can stall the next graph on this host for a while
    sim, rec = _start_graph(processes, out, storage, "-p", "autostart:=true",
                            env={"FASTDDS_BUILTIN_TRANSPORTS": "UDPv4"})
    assert wait_until(lambda: _partial_count(out) > 0, 90.0), processes.log(rec)
    (ep,) = _episodes(out)
    # two flushes after the first data (progress-based: fails only if the file stops growing for 30 s)
    flushes, size, changed = 0, _on_disk(ep), time.monotonic()
    while flushes < 2:
        time.sleep(0.005)
        now = _on_disk(ep)
        if now != size:
            flushes, size, changed = flushes + 1, now, time.monotonic()
        assert time.monotonic() - changed < STALL_TIMEOUT, f"no flush for {STALL_TIMEOUT} s\n{processes.log(rec)}"
    with open_bag(ep) as h:  # what the last flush put on disk, read as recovery reads it
        flushed = read_joint_states(h, "/joint_states")
    rec.send_signal(signal.SIGKILL)
    rec.wait(5)
    assert not (ep / "metadata.yaml").exists()  # killed: rosbags never closed it
    with open_bag(ep) as h:
        assert h.recovered
        s = read_joint_states(h, "/joint_states")
    print(f"{storage}: {len(flushed)} /joint_states messages on disk after 2 flushes, {len(s)} recovered")
    assert len(flushed) > 0 and len(s) >= len(flushed), (len(flushed), len(s))
    assert np.isin(flushed.stamp_ns, s.stamp_ns).all()  # none of the flushed messages was lost


@pytest.mark.integration
def test_live_autostart_and_sigterm_close_cleanly(processes, tmp_path):
    out = tmp_path / "rec"
    sim, rec = _start_graph(processes, out, "mcap", "-p", "autostart:=true", "-p", "flush_period:=0.5")
    assert wait_until(lambda: _partial_count(out) > 0, 90.0), processes.log(rec)
    time.sleep(0.5)
    rc = processes.stop(rec, signal.SIGTERM)
    assert rc == 0, f"exit status {rc}; log:\n{processes.log(rec)}"
    (ep,) = _episodes(out)
    assert (ep / "metadata.yaml").is_file()
    assert yaml.safe_load((ep / "episode.yaml").read_text())["complete"] is True
    with open_bag(ep) as h:
        assert not h.recovered and h.format == "mcap"
        assert len(read_joint_states(h, "/joint_states")) > 100



@contextmanager
def _unspun_recorder(out: Path, prefix: str, sim_time: bool = False):
    """An in-process RecorderNode (autostart, topics under ``prefix``) that is never spun, and a probe node in the same
    context: yields (recorder, probe); on exit the recorder's close() runs (its drain takes what arrived), then both
    nodes and the context go."""
    import rclpy
    from rclpy.parameter import Parameter

    from deadzone_id_ros.nodes.recorder import RecorderNode

    ctx = rclpy.Context()
    rclpy.init(context=ctx)
    try:
        rec = RecorderNode(context=ctx, parameter_overrides=[
            Parameter("output_dir", value=str(out)), Parameter("autostart", value=True),
            Parameter("use_sim_time", value=sim_time),
            Parameter("joint_state_topic", value=f"{prefix}/joint_states"),
            Parameter("command_topic", value=f"{prefix}/commands"),
            Parameter("reference_topic", value=f"{prefix}/reference")])
        probe = rclpy.create_node(f"{prefix.strip('/')}_probe", context=ctx)
        yield rec, probe
        rec.close()
        probe.destroy_node()
        rec.destroy_node()
    finally:
        rclpy.shutdown(context=ctx)


@pytest.mark.integration
def test_close_takes_in_the_messages_that_arrived_before_it(tmp_path):
    """A recorder that runs behind (here: never spun) closes its episode with every state that had reached it: 500
    states wait in its queue (delivered: acknowledged to the reliable publisher) when close() runs; without the drain
    the episode has none of them."""
    from rclpy.duration import Duration
    from rclpy.qos import QoSProfile, ReliabilityPolicy
    from sensor_msgs.msg import JointState

    out = tmp_path / "rec"
    with _unspun_recorder(out, "/drain_test") as (_rec, probe):
        pub = probe.create_publisher(JointState, "/drain_test/joint_states",
                                     QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE))
        assert wait_until(lambda: pub.get_subscription_count() > 0, 30.0)
        for k in range(1, 501):
            msg = JointState(name=["joint1", "joint2", "joint3"], position=[0.0] * 3, velocity=[0.0] * 3,
                             effort=[0.0] * 3)
            msg.header.stamp.nanosec = k * 1_000_000
            pub.publish(msg)
        assert pub.wait_for_all_acked(Duration(seconds=30))
    (ep,) = _episodes(out)
    with open_bag(ep) as h:
        assert len(read_joint_states(h, "/drain_test/joint_states")) == 500


@pytest.mark.integration
def test_log_time_is_the_clock_at_arrival_however_late_the_recorder_takes_it(tmp_path):
    """Under simulated time a command's log time is the last /clock that reached the recorder before it, even when the
    recorder takes its messages long after (a busy machine; here it is not spun until close()). 300 ticks of /clock k
    ms then a command go out back to back: each command is logged at k ms. Taken one by one at the node clock of the
    moment (rclpy's time source keeps only the newest /clock), every command got the last tick's time."""
    from builtin_interfaces.msg import Time
    from rclpy.duration import Duration
    from rclpy.qos import QoSProfile, ReliabilityPolicy
    from rosgraph_msgs.msg import Clock

    out = tmp_path / "rec"
    ticks = 300
    with _unspun_recorder(out, "/logtime_test", sim_time=True) as (_rec, probe):
        qos = QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE)
        clock_pub = probe.create_publisher(Clock, "/clock", qos)
        cmd_pub = probe.create_publisher(Float64MultiArray, "/logtime_test/commands", qos)
        assert wait_until(lambda: clock_pub.get_subscription_count() >= 2 and cmd_pub.get_subscription_count() > 0,
                          30.0)  # the recorder's own /clock subscription and rclpy's time source
        for k in range(1, ticks + 1):
            clock_pub.publish(Clock(clock=Time(sec=0, nanosec=k * 1_000_000)))
            time.sleep(0.0005)  # the command arrives after its tick, as a controller's answer does
            cmd_pub.publish(Float64MultiArray(data=[float(k)] * 3))
            time.sleep(0.0005)
        assert cmd_pub.wait_for_all_acked(Duration(seconds=30))
        assert clock_pub.wait_for_all_acked(Duration(seconds=30))
    (ep,) = _episodes(out)
    from rosbags.highlevel import AnyReader

    with AnyReader([ep]) as reader:
        logged = {int(reader.deserialize(raw, c.msgtype).data[0]): t
                  for c, t, raw in reader.messages() if c.topic == "/logtime_test/commands"}
    assert len(logged) == ticks
    assert {k: t for k, t in logged.items() if t != k * 1_000_000} == {}  # command k logged at tick k [ns]
