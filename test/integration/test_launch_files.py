"""Every project launch file started through the launcher as real processes over DDS on loopback.

Checks: topics flow at the expected rates, /diagnostics reports healthy, the recorder's bag reopens with the counts
seen live, SIGINT stops everything within a few seconds (exit 0, nothing killed, no process or new
/dev/shm/fastdds_* file left), use_sim_time runs stamp everything from /clock, a recorded bag replays through the
simulator over DDS, and every parameter a launch file sets is one the running node really declares.
"""

from __future__ import annotations

import glob
import os
import time
from pathlib import Path

import numpy as np
import pytest
import yaml
from conftest import held_fastdds_files
from launch_health import check_controller_health

from deadzone_id_ros.launching import LaunchedGraph, load_launch_file

pytestmark = pytest.mark.integration

SHUTDOWN_LIMIT_S = 6.0


# ------------------------------------------------------------------------------------------------------ helpers
def _fastdds_files() -> set[str]:
    return set(glob.glob("/dev/shm/fastdds_*")) - set(glob.glob("/dev/shm/fastdds_port*"))


def declared_parameters(probe, node_name: str) -> set[str]:
    """Names of the parameters ``/node_name`` declares (its list_parameters service)."""
    from rcl_interfaces.srv import ListParameters

    return set(probe.call(ListParameters, f"/{node_name}/list_parameters").result.names)


def trigger(probe, service: str) -> str:
    """Call a std_srvs/Trigger ``service``; assert success and return its message."""
    from std_srvs.srv import Trigger

    response = probe.call(Trigger, service)
    assert response.success, response.message
    return response.message


@pytest.fixture
def probe(ros_probe):
    """The shared test node, waking every 20 ms when idle (these tests wait for seconds, not milliseconds)."""
    ros_probe.step = 0.02
    return ros_probe


def assert_parameters_declared(graph: LaunchedGraph, probe) -> None:  # noqa: ANN001
    """Every ``param name`` and every key of every params file a launch file gives a node is declared by that node."""
    for spec in graph.plan.nodes:
        declared = declared_parameters(probe, spec.name)
        given = {k for k, _ in spec.params}
        for path in spec.param_files:
            doc = yaml.safe_load(Path(path).read_text())
            for section in doc.values():
                given |= set(section["ros__parameters"])
        missing = sorted(given - declared)
        assert not missing, f"{graph.plan.file.name}: node {spec.name} does not declare {missing}"


def stop_cleanly(graphs: list[LaunchedGraph], before_shm: set[str]) -> None:
    """SIGINT every graph (last started first) and check exit 0, nothing killed, within the limit, nothing left."""
    t0 = time.monotonic()
    statuses = [graph.shutdown(timeout=SHUTDOWN_LIMIT_S) for graph in reversed(graphs)]  # stop all, then judge
    for graph, status in zip(reversed(graphs), statuses):
        bad = {k: v for k, v in status.items() if v != 0}
        assert not bad, f"{graph.plan.file.name}: non-zero exit after SIGINT {bad}:\n" + "\n".join(
            f"--- {n.label}\n" + "\n".join(list(n.lines)[-20:]) for n in graph.nodes
        )
        assert not any(n.killed for n in graph.nodes)
    assert time.monotonic() - t0 < SHUTDOWN_LIMIT_S
    for graph in graphs:
        for node in graph.nodes:
            with pytest.raises(ProcessLookupError):
                os.kill(node.process.pid, 0)
    leaked = (_fastdds_files() - before_shm) - held_fastdds_files()
    assert not leaked, f"/dev/shm files left behind: {sorted(leaked)}"


# -------------------------------------------------------------------------------------------------------- tests
def test_sim_feedforward_and_record_launch_files(probe, tmp_path):
    """sim + feedforward + record (each file alone, wall time): rates, diagnostics, bag counts, clean SIGINT."""
    from diagnostic_msgs.msg import DiagnosticArray
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Float64MultiArray

    from deadzone_id_ros.data.bag import read_recording

    before = _fastdds_files()
    probe.listen("/joint_states", JointState)
    probe.listen("/effort_controller/commands", Float64MultiArray)
    probe.listen("/diagnostics", DiagnosticArray)
    rate = 500.0
    graphs = [
        LaunchedGraph("sim.launch.yaml", {"publish_rate": str(rate)}, sink=None),
        LaunchedGraph("feedforward.launch.yaml", {"mode": "pd_dob", "control_rate": str(rate)}, sink=None),
        LaunchedGraph("record.launch.yaml", {"output_dir": str(tmp_path / "rec"), "storage": "mcap"}, sink=None),
    ]
    try:
        for g in graphs:
            g.start()
        assert probe.spin(30, lambda: len(probe.messages["/effort_controller/commands"]) > 50), \
            "no commands: " + "\n".join(g.output(n.label) for g in graphs for n in g.nodes)
        for g in graphs:
            g.raise_if_died()
        assert_parameters_declared(graphs[0], probe)
        assert_parameters_declared(graphs[1], probe)
        assert_parameters_declared(graphs[2], probe)
        # DDS discovery between the recorder and each publisher can end seconds after the controller's (measured on a
        # busy machine: the recorder's /joint_states matched 1.8 s after sim_arm's publisher appeared; an episode
        # started before received commands from its start and states from 0.65 s later; its commands matched 2.6 s
        # after the controller started, 2 s into a 3 s episode, which kept 451 commands): start once the recorder
        # says it hears both
        def recorder_hears(topic: str) -> bool:
            return any("publisher matched on" in line and topic in line.split("(")[0]
                       for line in graphs[2].output("recorder").splitlines())

        assert probe.spin(60, lambda: recorder_hears("/joint_states") and recorder_hears("/effort_controller/commands")
                          ), graphs[2].output("recorder")
        trigger(probe, "/recorder/start")
        # sim_arm stamps a state with its wall time at the step (epoch + elapsed), never later than it publishes it:
        # a state stamped after this was published after the recorder answered start, however late the probe is
        started_ns = time.time_ns()
        # Wall-time run: rates and loop health depend on the machine (the real-time figures are measured by
        # bench/bench_controller.py and bench/bench_sim.py). Here: the data flows, counted, not timed: 1500 states
        # and 1500 commands more after the start (a stall of the flow fails), whatever share of the rate a loaded
        # machine keeps.
        js_n0, cmd_n0 = len(probe.messages["/joint_states"]), len(probe.messages["/effort_controller/commands"])
        probe.spin_for_counts(lambda: (len(probe.messages["/joint_states"]) - js_n0,
                                       len(probe.messages["/effort_controller/commands"]) - cmd_n0), (1500, 1500),
                              log=lambda: "\n".join(g.output(n.label) for g in graphs for n in g.nodes))
        trigger(probe, "/recorder/stop")
        for g in graphs:
            g.raise_if_died()
        js = [m for a, m in probe.messages["/joint_states"]]
        assert list(js[-1].name) == ["joint1", "joint2", "joint3"]
        statuses = [s for _, m in probe.messages["/diagnostics"] for s in m.status if "control loop" in s.name]
        assert statuses, "no /diagnostics from the controller"
        # Healthy: the watchdog says running, nothing is an error, and a warning (if any) is only about late ticks
        # (scheduling on a loaded 2-core machine; the figure is measured by bench/bench_controller.py). One exception,
        # the safety chain doing its job when the loop was cut on a busy machine: no state reached the controller for
        # more than watchdog_timeout (it logs "watchdog: running -> hold" and holds the static torque), or no command
        # reached sim_arm for command_timeout (it logs "no effort command ...: applying zero torque" and the arm
        # falls); the arm, off its position, may then leave the tracking-error limit (measured: joint3 0.50-0.56 rad
        # > 0.5 after the controller was stopped for 300 ms; 2 of about 30 runs at load 7-10): the latched safe state,
        # logged, is the right answer. Judged from the logs, which have every transition: the 5 Hz /diagnostics
        # sample a hold of a few ms (the queued states arrive at once; measured 0.6-1.5 ms, in 5 of 10 runs at load 9)
        # only by chance, so a fault after a hold showed no "stale /joint_states" there; and a stalled controller
        # process has no hold to log (measured at load 9: sim_arm's command timeout, joint3 at 0.503 rad 205 ms later).
        check_controller_health(statuses, lambda: graphs[1].output("feedforward_controller"),
                                lambda: graphs[0].output("sim_arm"))
        probe_stamps = np.array([m.header.stamp.sec * 1_000_000_000 + m.header.stamp.nanosec
                                 for _, m in probe.messages["/joint_states"]], dtype=np.int64)
    finally:
        stop_cleanly(graphs, before)
    bags = sorted((tmp_path / "rec").glob("*/metadata.yaml"))
    assert len(bags) == 1, list((tmp_path / "rec").rglob("*"))
    rec = read_recording(bags[0].parent)
    # Between its first and last recorded message the recorder lost nothing the probe saw (the window itself
    # depends on the service round trips), and it covered most of the time between start and stop.
    span = (probe_stamps >= rec.state_t_ns[0]) & (probe_stamps <= rec.state_t_ns[-1])
    assert len(rec.state_t_ns) >= 0.99 * span.sum(), (len(rec.state_t_ns), int(span.sum()))
    # and it recorded every state published after start answered (stamped after it: the probe itself may lag the
    # publisher on a busy machine, so its arrival times do not say when a state was sent), up to the state it was at
    # when it took the stop request (a recorder that lags on a busy machine takes it late in stamp time; what is
    # still queued then is not recorded, as with ros2 bag record); counted, not timed: at least a third of the
    # >= 1500 states the probe saw after start, however slow the machine
    after_start = probe_stamps[(probe_stamps > started_ns) & (probe_stamps <= rec.state_t_ns[-1])]
    assert len(after_start) >= 500 and np.isin(after_start, rec.state_t_ns).mean() >= 0.99, \
        (len(after_start), float(np.isin(after_start, rec.state_t_ns).mean()))
    # commands too (the controller answers only the newest state when its input comes in bursts on a busy machine,
    # so their count is not the states'): at least a third of the >= 1500 the probe saw after start
    assert rec.command is not None and len(rec.command) >= 500, None if rec.command is None else len(rec.command)
    assert abs(rec.state_t_ns[0] * 1e-9 - time.time()) < 120  # wall-clock stamps in a wall-time run


def test_sim_feedforward_with_sim_time_uses_clock_everywhere(probe, tmp_path):
    """The whole graph with use_sim_time:=true: /clock drives every stamp, the bag is in sim time, clean SIGINT."""
    from rosgraph_msgs.msg import Clock
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Float64MultiArray
    from trajectory_msgs.msg import JointTrajectory

    from deadzone_id_ros.data.bag import read_recording

    before = _fastdds_files()
    probe.listen("/clock", Clock)
    probe.listen("/joint_states", JointState)
    probe.listen("/effort_controller/commands", Float64MultiArray)
    probe.listen("/feedforward_controller/reference", JointTrajectory)
    graph = LaunchedGraph(
        "sim_feedforward.launch.yaml",
        {"use_sim_time": "true", "lockstep": "true", "output_dir": str(tmp_path / "rec"), "duration": "10.0",
         "start_delay": "0.5", "seed": "3"},
        sink=None,
    )
    params = dict(graph.plan.node("sim_arm").params)
    assert params["clock_mode"] == "sim" and params["lockstep"] == "true"
    try:
        t_launch = time.monotonic()
        graph.start()
        assert probe.spin(40, lambda: len(probe.messages["/feedforward_controller/reference"]) > 0), "no reference"
        graph.raise_if_died()
        assert_parameters_declared(graph, probe)
        t0 = time.monotonic()
        n0 = len(probe.messages["/joint_states"])
        # 1000 states more, counted in simulated time's own ticks (a stall of simulated time fails, a slow machine
        # only takes longer)
        probe.spin_for_counts(lambda: (len(probe.messages["/joint_states"]) - n0,), (1000,),
                              log=lambda: "\n".join(graph.output(n.label) for n in graph.nodes))
        t1 = time.monotonic()
        graph.raise_if_died()
        # Lockstep: every state is answered by one command before time moves on, however busy the machine is.
        n_states = sum(1 for a, _ in probe.messages["/joint_states"] if t0 <= a <= t1)
        n_commands = sum(1 for a, _ in probe.messages["/effort_controller/commands"] if t0 <= a <= t1)
        assert n_states >= 1000
        assert abs(n_commands - n_states) <= 0.02 * n_states + 5, (n_commands, n_states)
        clock = np.array([m.clock.sec + m.clock.nanosec * 1e-9 for _, m in probe.messages["/clock"]])
        stamps = np.array(
            [m.header.stamp.sec + m.header.stamp.nanosec * 1e-9 for _, m in probe.messages["/joint_states"]]
        )
        refs = np.array([m.header.stamp.sec + m.header.stamp.nanosec * 1e-9
                         for _, m in probe.messages["/feedforward_controller/reference"]])
        # simulated time starts at zero (repeated until the controller's first command, in lockstep), then only grows
        assert clock.max() < 1e5 and np.all(np.diff(clock) >= 0) and np.all(np.diff(clock[clock > 0]) > 0)
        assert stamps.max() <= clock.max() + 0.01 and stamps.min() < 1e5  # joint states stamped in sim time
        assert refs.min() < 1e5  # the excitation plans in sim time too
    finally:
        stop_cleanly([graph], before)
    bags = sorted((tmp_path / "rec").glob("*/metadata.yaml"))
    assert len(bags) == 1
    rec = read_recording(bags[0].parent)
    assert rec.state_t_ns.max() * 1e-9 < 1e5, "the recorder stamped with system time in a use_sim_time run"
    # the metric bag holds no stamp-0 state (lockstep's states before the first command are dropped and counted)
    from deadzone_id_ros.data.bag import open_bag, read_joint_states

    with open_bag(bags[0].parent) as h:
        assert read_joint_states(h, "/joint_states").stamp_ns.min() > 0
    assert rec.state_time_base == "header" and rec.zero_stamp_states == 0
    episode = yaml.safe_load((bags[0].parent / "episode.yaml").read_text())
    # Lockstep: simulated time starts with the controller's first command, which answers a state stamped 0; sim_arm
    # publishes that state when it starts and again every 100 ms until the command arrives, so the recorder can have
    # seen at most one per 100 ms from the launch to the first state stamped later (its arrival at the probe bounds
    # the first command). Every one it saw is dropped (none in the bag, above) and counted. It sees none when its
    # subscription matched only after the controller answered: measured 1 in each of 6 runs of this test, 0 to 2 in
    # the live closed-loop runs (test_live_closed_loop.py), so there is no lower bound to assert.
    t_first_stamped = min(a for a, m in probe.messages["/joint_states"] if m.header.stamp.sec or m.header.stamp.nanosec)
    zero = episode["zero_stamp_states"]
    assert episode["zero_stamp_states_dropped"] is True
    assert zero <= 10 * (t_first_stamped - t_launch) + 1, (zero, t_first_stamped - t_launch)
    assert episode["messages_skipped"] == ({"/joint_states: zero header stamp": zero} if zero else {}), episode
    assert rec.reference_t_ns is not None and len(rec.reference_t_ns) > 0
    assert len(rec.state_t_ns) >= 1000  # the recorder has the 1000 simulated ticks the probe counted


def test_sim_feedforward_launch_with_robot_so101_records_its_five_joints(probe, tmp_path):
    """robot:=so101 reaches every node of sim_feedforward.launch.yaml from the shipped parameter files (which name no
    joint): sim_arm simulates the SO-101's 5 arm joints (gripper locked), the controller answers every state with 5
    torques, and the recorder's bag holds /joint_states of those 5 joints by name. Counted in simulated ticks."""
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Float64MultiArray

    from deadzone_id_ros.data.bag import read_recording
    from deadzone_id_ros.robot_configs import load_robot

    so101 = list(load_robot("so101").joint_names)
    assert len(so101) == 5 and "gripper" not in so101
    before = _fastdds_files()
    probe.listen("/joint_states", JointState)
    probe.listen("/effort_controller/commands", Float64MultiArray)
    graph = LaunchedGraph(
        "sim_feedforward.launch.yaml",
        {"robot": "so101", "use_sim_time": "true", "lockstep": "true", "output_dir": str(tmp_path / "rec"),
         "duration": "10.0", "start_delay": "0.5", "seed": "4"}, sink=None)
    assert {n.name: dict(n.params).get("robot") for n in graph.plan.nodes} == dict.fromkeys(
        ["sim_arm", "excitation", "feedforward_controller", "recorder"], "so101")
    try:
        graph.start()
        log = lambda: "\n".join(graph.output(n.label) for n in graph.nodes)  # noqa: E731
        # 1000 simulated ticks answered by the controller (a stall of simulated time fails; a slow machine only waits)
        probe.spin_for_counts(lambda: (sum(1 for _, m in probe.messages["/joint_states"] if m.header.stamp.sec
                                           or m.header.stamp.nanosec),), (1000,), log=log)
        graph.raise_if_died()
        assert_parameters_declared(graph, probe)
        states = [m for _, m in probe.messages["/joint_states"]]
        commands = [m for _, m in probe.messages["/effort_controller/commands"]]
        assert all(list(m.name) == so101 and len(m.position) == 5 for m in states), states[-1]
        assert commands and all(len(m.data) == 5 for m in commands), commands[-1]
    finally:
        stop_cleanly([graph], before)
    bags = sorted((tmp_path / "rec").glob("*/metadata.yaml"))
    assert len(bags) == 1
    rec = read_recording(bags[0].parent)
    assert list(rec.joint_names) == so101 and rec.position.shape[1] == 5
    assert len(rec.state_t_ns) >= 1000 and rec.command is not None and rec.command.shape[1] == 5
    assert yaml.safe_load((bags[0].parent / "episode.yaml").read_text())["robot"] == "so101"


def test_replay_launch_plays_a_simulated_bag_over_dds(tmp_path):
    """replay.launch.yaml (lockstep, the default): bag_replay plays a recorded bag into sim_arm, answering each state,
    reports, exits 0, and the launch ends; the live motion is the recorded one, whatever the load of the machine."""
    import json

    from deadzone_id_ros.data.bag import write_recording
    from deadzone_id_ros.sim.offline import simulate

    bag = tmp_path / "bag"
    write_recording(simulate(1.5, seed=2), bag)
    before = _fastdds_files()
    graph = LaunchedGraph("replay.launch.yaml", {"bag": str(bag), "report_dir": str(tmp_path / "report"),
                                                 "seed": "2"}, sink=None)
    try:
        graph.start()
        assert graph.wait(90) == "shutdown", graph.output("bag_replay")  # on_exit: shutdown
        assert graph.node("bag_replay").returncode == 0, graph.output("bag_replay")
    finally:
        stop_cleanly([graph], before)
    report = json.loads((tmp_path / "report" / "report.json").read_text())
    assert report["joints"] == ["joint1", "joint2", "joint3"] and report["valid"] is True, report
    assert report["mode"] == "open_loop_dds_lockstep" and report["commands_skipped"] == 0, report
    assert report["samples"] >= 1499 and report["commands_published"] >= 1499, report
    # every recorded command reached the simulator on its tick, with the bag's seed: the motion is the recorded one
    # to rounding (measured: 0 rad; the recording moves joint3 by 1 rad in 1.5 s, and a wall-clock replay of it
    # drifted by 1 rad RMSE)
    assert all(np.isfinite(v) and v < 1e-6 for v in report["rmse_q_rad"].values()), report


def test_replay_launch_with_robot_so101_replays_its_offline_bag_exactly(tmp_path):
    """replay.launch.yaml robot:=so101: bag_replay (command order from the profile) plays an SO-101 bag of the offline
    simulator (``simulate --robot so101``) into sim_arm (the profile's arm from the shipped sim_arm.yaml), in
    lockstep with the bag's seed: the live arm moves as the offline one did, to rounding (measured: 0 rad), so the
    node's robot parameter and the offline path build the same simulator."""
    import json

    from deadzone_id_ros.robot_configs import load_robot, simulation_configs
    from deadzone_id_ros.sim.record import simulate_bag

    bag = simulate_bag(1.5, 2, tmp_path / "bag", **simulation_configs("so101")).path
    before = _fastdds_files()
    graph = LaunchedGraph("replay.launch.yaml", {"robot": "so101", "bag": str(bag),
                                                 "report_dir": str(tmp_path / "report"), "seed": "2"}, sink=None)
    try:
        graph.start()
        assert graph.wait(90) == "shutdown", graph.output("bag_replay")
        assert graph.node("bag_replay").returncode == 0, graph.output("bag_replay")
    finally:
        stop_cleanly([graph], before)
    report = json.loads((tmp_path / "report" / "report.json").read_text())
    so101 = load_robot("so101")
    assert report["joints"] == list(so101.joint_names) and report["valid"] is True, report
    ticks = 1.5 * so101.profile.control_rate  # the kit's bus rate (500 Hz), not 1 kHz
    assert report["samples"] >= ticks - 1 and report["commands_skipped"] == 0, report
    assert all(np.isfinite(v) and v < 1e-6 for v in report["rmse_q_rad"].values()), report


def test_launch_file_refused_before_anything_starts(tmp_path):
    before = _fastdds_files()
    with pytest.raises(Exception, match=r"required launch argument 'bag' not given"):
        LaunchedGraph("replay.launch.yaml", sink=None)
    assert _fastdds_files() == before


def test_commands_match_the_yaml_for_every_project_launch_file():
    """Names, namespaces, parameter files, parameters and remaps on each command line are the ones the YAML says."""
    from deadzone_id_ros.resources import share_dir

    for path in sorted((share_dir() / "launch").glob("*.launch.yaml")):
        plan = load_launch_file(path, {"bag": "/tmp/x"} if path.name == "replay.launch.yaml" else {})
        raw_nodes = [e["node"] for e in yaml.safe_load(path.read_text())["launch"] if "node" in e]
        includes = [e["include"] for e in yaml.safe_load(path.read_text())["launch"] if "include" in e]
        assert len(plan.nodes) >= len(raw_nodes) + len(includes)
        for raw in raw_nodes:
            spec = plan.node(raw["name"])
            cmd = spec.command()
            assert Path(cmd[0]).name == raw["exec"]
            ros = cmd[cmd.index("--ros-args"):]
            assert ros[1:3] == ["-r", f"__node:={raw['name']}"]
            if "namespace" in raw:
                assert f"__ns:=/{raw['namespace'].lstrip('/')}" in ros
            else:
                assert not any(a.startswith("__ns:=") for a in ros)
            files = [ros[i + 1] for i, a in enumerate(ros) if a == "--params-file"]
            assert len(files) == sum("from" in p for p in raw.get("param", []))
            assert all(os.path.isfile(f) for f in files)
            names = [ros[i + 1].split(":=")[0] for i, a in enumerate(ros) if a == "-p"]
            assert names == [p["name"] for p in raw.get("param", []) if "name" in p]
            remaps = [ros[i + 1] for i, a in enumerate(ros) if a == "-r" and not ros[i + 1].startswith("__")]
            assert len(remaps) == len(raw.get("remap", []))
