"""Process handling of the launcher with stand-in node executables (no DDS): output prefixes, shutdown order,
escalation to SIGKILL, a dying node, and the ``deadzone-id launch`` command's signal forwarding and exit status."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from conftest import executable, wait_until

from deadzone_id_ros.errors import LaunchError
from deadzone_id_ros.launching import LaunchedGraph

FAKE_NODE = textwrap.dedent(f"""\
    #!{sys.executable}
    # Stand-in node: prints its argv, then runs until SIGINT/SIGTERM (or exits as told), logging the order of stops.
    import os, signal, sys, time
    argv = sys.argv[1:]
    name = argv[argv.index("-r") + 1].split(":=")[1] if "-r" in argv else "anon"
    mode = os.environ.get("FAKE_MODE_" + name, "normal")
    log = os.environ["FAKE_LOG"]
    print("args", " ".join(argv), flush=True)
    print("second line", flush=True)
    def stop(signum, frame):
        if mode == "stubborn":
            return
        with open(log, "a") as f:
            f.write(name + "\\n")
        sys.exit(0)
    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)
    if mode == "die":
        time.sleep(0.3)
        print("dying", flush=True)
        sys.exit(3)
    if mode == "finish":
        sys.exit(0)
    while True:
        time.sleep(0.02)
    """)


@pytest.fixture
def fake_env(tmp_path, monkeypatch):
    bindir = tmp_path / "bin"
    bindir.mkdir()
    exe = bindir / "fake_node"
    exe.write_text(FAKE_NODE)
    exe.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_LOG", str(tmp_path / "stops.log"))
    launch = tmp_path / "fake.launch.yaml"
    launch.write_text(textwrap.dedent("""\
        launch:
        - arg: {name: n, default: "3", description: a number}
        - node: {pkg: fakepkg, exec: fake_node, name: first, param: [{name: k, value: $(var n)}]}
        - node: {pkg: fakepkg, exec: fake_node, name: second, remap: [{from: /a, to: /b}]}
        - node: {pkg: fakepkg, exec: fake_node, name: third}
        """))
    return launch, tmp_path / "stops.log"


def test_graph_prefixes_output_and_stops_in_reverse_order(fake_env):
    launch, stops = fake_env
    lines: list[str] = []
    with LaunchedGraph(launch, {"n": "5"}, sink=lines.append) as graph:
        assert wait_until(lambda: all("second line" in graph.output(x) for x in ("first", "second", "third")), 90.0)
        assert graph.output("first").splitlines()[0] == "args --ros-args -r __node:=first -p k:=5"
        assert "-r /a:=/b" in graph.output("second")
        assert graph.died() == []
    assert stops.read_text().split() == ["third", "second", "first"]
    assert "[first] second line" in lines and "[third] second line" in lines
    assert all(n.returncode == 0 and not n.killed for n in graph.nodes)
    with pytest.raises(KeyError, match=r"no node 'x' in this graph \(nodes: \['first', 'second', 'third'\]\)"):
        graph.node("x")


def test_stubborn_node_is_killed_after_the_timeouts(fake_env, monkeypatch):
    launch, _ = fake_env
    monkeypatch.setenv("FAKE_MODE_second", "stubborn")
    graph = LaunchedGraph(launch, sink=None).start()
    assert wait_until(lambda: all("second line" in graph.output(x) for x in ("first", "second", "third")), 90.0)
    time.sleep(0.3)  # the fake nodes install their signal handlers after printing
    t0 = time.monotonic()
    status = graph.shutdown(timeout=0.3, sigterm_timeout=0.3)
    assert time.monotonic() - t0 < 3.0
    assert status["second"] == -signal.SIGKILL and graph.node("second").killed
    assert status["first"] == 0 and status["third"] == 0


def test_dying_node_is_reported_with_its_output(fake_env, monkeypatch):
    launch, _ = fake_env
    monkeypatch.setenv("FAKE_MODE_second", "die")
    with LaunchedGraph(launch, sink=None) as graph:
        assert graph.wait(timeout=10) == "died"
        assert [n.label for n in graph.died()] == ["second"]
        with pytest.raises(
            LaunchError, match=r"node\(s\) died: second exited with status 3; last output:\n(?s:.*)dying"
        ):
            graph.raise_if_died()


def test_dying_node_is_reported_with_output_its_reader_had_not_taken_yet(fake_env, monkeypatch):
    """The reader of the node's pipe starts 1 s late (a busy machine): the exit is seen first, and the message still
    has the node's last line."""
    launch, _ = fake_env
    monkeypatch.setenv("FAKE_MODE_second", "die")
    pump = LaunchedGraph._pump
    monkeypatch.setattr(LaunchedGraph, "_pump", lambda self, node: (time.sleep(1.0), pump(self, node)))
    with LaunchedGraph(launch, sink=None) as graph:
        assert graph.wait(timeout=30) == "died"
        with pytest.raises(LaunchError, match=r"second exited with status 3; last output:\n(?s:.*)dying"):
            graph.raise_if_died()


def test_missing_executable_stops_the_nodes_already_started(fake_env, tmp_path):
    launch, stops = fake_env
    bad = tmp_path / "bad.launch.yaml"
    bad.write_text(launch.read_text() + "- node: {pkg: fakepkg, exec: no_such_node_exe, name: fourth}\n")
    graph = LaunchedGraph(bad, sink=None)
    with pytest.raises(
        LaunchError, match=r"node fourth\): executable 'no_such_node_exe' of package 'fakepkg' not found"
    ):
        graph.start()
    assert len(graph.nodes) == 3 and all(n.returncode is not None for n in graph.nodes)


def _cli(launch: Path, *extra: str) -> subprocess.Popen:
    return subprocess.Popen(
        [executable("deadzone-id"), "launch", str(launch), *extra], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        text=True, start_new_session=True,
    )


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_cli_forwards_signals_and_exits_zero(fake_env, sig):
    launch, stops = fake_env
    proc = _cli(launch, "n:=9")
    try:
        lines: list[str] = []
        assert proc.stdout is not None
        while sum("second line" in line for line in lines) < 3:  # all three stand-ins are up
            line = proc.stdout.readline()
            assert line, "".join(lines)
            lines.append(line)
        proc.send_signal(sig)
        out, _ = proc.communicate(timeout=15)
        out = "".join(lines) + out
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 0, out
    assert "[first] args --ros-args -r __node:=first -p k:=9" in out
    assert stops.read_text().split() == ["third", "second", "first"]


def test_cli_exits_nonzero_when_a_node_dies(fake_env, monkeypatch):
    launch, stops = fake_env
    monkeypatch.setenv("FAKE_MODE_first", "die")
    proc = _cli(launch)
    out, _ = proc.communicate(timeout=30)
    assert proc.returncode == 1, out
    assert "first died with status 3; stopping the others" in out
    assert stops.read_text().split() == ["third", "second"]


def test_cli_user_errors_exit_2_without_traceback(fake_env, tmp_path):
    launch, _ = fake_env
    for extra, match in (
        (("bogus:=1",), "launch argument(s) ['bogus'] not declared"),
        (("n=1",), "launch argument 'n=1' must have the form name:=value"),
    ):
        proc = _cli(launch, *extra)
        out, _ = proc.communicate(timeout=30)
        assert proc.returncode == 2 and match in out and "Traceback" not in out, out
    proc = _cli(tmp_path / "missing.launch.yaml")
    out, _ = proc.communicate(timeout=30)
    assert proc.returncode == 2 and "not found as a path" in out and "Traceback" not in out


def test_cli_print_and_show_args(fake_env):
    launch, _ = fake_env
    out = subprocess.run([executable("deadzone-id"), "launch", str(launch), "--print"], capture_output=True,
                         text=True, timeout=30, check=True).stdout
    assert "# first\n" in out and "fake_node --ros-args -r __node:=first -p k:=3" in out
    out = subprocess.run([executable("deadzone-id"), "launch", str(launch), "--show-args"], capture_output=True,
                         text=True, timeout=30, check=True).stdout
    assert out.splitlines()[:3] == [f"# {launch.name}", "n (default: '3')", "    a number"]
