"""Unit tests of the launch-file parser: supported subset, substitutions, command lines, and every refusal."""

from __future__ import annotations

import os
import shlex
import sys
import textwrap
from pathlib import Path

import pytest
import yaml

from deadzone_id_ros.errors import LaunchError
from deadzone_id_ros.launching import (
    evaluate,
    load_launch_file,
    parse_launch_arguments,
    render_parameter,
    resolve_executable,
    resolve_launch_file,
)
from deadzone_id_ros.resources import share_dir


def write(tmp_path: Path, text: str, name: str = "t.launch.yaml") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


# ------------------------------------------------------------------------------------------------ substitutions
def test_substitutions_var_env_pkg_share_and_nesting(monkeypatch):
    monkeypatch.setenv("DZ_TEST_ENV", "x")
    monkeypatch.delenv("DZ_TEST_UNSET", raising=False)
    variables = {"a": "1", "x": "chosen"}
    assert evaluate("p$(var a)q", variables, "w") == "p1q"
    assert evaluate("$(env DZ_TEST_ENV)", variables, "w") == "x"
    assert evaluate("$(env DZ_TEST_UNSET fallback)", variables, "w") == "fallback"
    assert evaluate("$(env DZ_TEST_UNSET 'two words')", variables, "w") == "two words"
    assert evaluate("$(var $(env DZ_TEST_ENV))", variables, "w") == "chosen"
    assert evaluate("$(find-pkg-share deadzone_id_ros)/config", variables, "w") == f"{share_dir()}/config"
    assert evaluate("no substitution (parens) here", variables, "w") == "no substitution (parens) here"


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("$(eval 1+1)", r"where: unsupported substitution \$\(eval"),
        ("$(command ls)", r"unsupported substitution \$\(command"),
        ("$(var missing)", r"where: \$\(var missing\) is not a declared launch argument or let; known: \['a'\]"),
        ("$(var)", r"\$\(var\) takes 1 argument\(s\), got 0"),
        ("$(var a b)", r"\$\(var\) takes 1 argument\(s\), got 2"),
        ("$(env DZ_TEST_UNSET)", r"environment variable DZ_TEST_UNSET is not set and \$\(env\) has no default"),
        ("$(env A B C)", r"\$\(env\) takes 1 to 2 argument\(s\), got 3"),
        ("$(var a", r"unbalanced '\$\('"),
        ("$()", r"empty substitution"),
        ("$(env 'open)", r"unterminated quote"),
        ("$(find-pkg-share no_such_package_xyz)", r"package 'no_such_package_xyz' not found in the ament index"),
    ],
)
def test_substitution_errors(text, match, monkeypatch):
    monkeypatch.delenv("DZ_TEST_UNSET", raising=False)
    with pytest.raises(LaunchError, match=match):
        evaluate(text, {"a": "1"}, "where")


# ----------------------------------------------------------------------------------------------------- parsing
def test_full_subset_builds_the_ros2_launch_command_line(tmp_path, monkeypatch):
    monkeypatch.setenv("DZ_NS", "robot")
    params = tmp_path / "p.yaml"
    params.write_text("/**:\n  ros__parameters:\n    a: 1\n")
    write(tmp_path, """
        launch:
        - arg: {name: rate, default: "10.0", description: rate}
        - arg: {name: inner_only, default: "in", description: only here}
        - let: {name: leaked, value: "no"}
        - node:
            pkg: deadzone_id_ros
            exec: recorder
            name: rec_$(var rate)
        """, "inc.launch.yaml")
    top = write(tmp_path, f"""
        launch:
        - arg: {{name: params_file, default: {params}, description: the file}}
        - arg: {{name: use_sim_time, default: "false", description: sim time}}
        - let: {{name: topic, value: /joint_states}}
        - node:
            pkg: deadzone_id_ros
            exec: sim_arm
            name: my_sim
            namespace: $(env DZ_NS)
            output: screen
            args: "--flag 'two words'"
            param:
            - {{name: use_sim_time, value: $(var use_sim_time)}}
            - from: $(var params_file)
            - {{name: joint_names, value: [j1, j2]}}
            - {{name: publish_rate, value: 500.0}}
            - {{name: empty, value: ""}}
            remap:
            - {{from: /joint_states, to: $(var topic)_sim}}
        - include:
            file: inc.launch.yaml
            arg:
            - {{name: rate, value: "20.0"}}
        """)
    plan = load_launch_file(top, {"use_sim_time": "true"})
    assert [n.label for n in plan.nodes] == ["my_sim", "rec_20.0"]
    assert [a.name for a in plan.arguments] == ["params_file", "use_sim_time", "rate", "inner_only"]
    assert "leaked" not in plan.configurations  # a let inside an include stays there
    sim = plan.node("my_sim")
    assert sim.namespace == "/robot"
    cmd = sim.command("/bin/exe")
    # files first, then inline parameters (launch_ros order), remaps last
    assert cmd == [
        "/bin/exe", "--flag", "two words", "--ros-args", "-r", "__node:=my_sim", "-r", "__ns:=/robot",
        "--params-file", str(params), "-p", "use_sim_time:=true", "-p", "joint_names:=[j1, j2]",
        "-p", "publish_rate:=500.0", "-p", 'empty:=""', "-r", "/joint_states:=/joint_states_sim",
    ]
    with pytest.raises(KeyError, match=r"no node 'nope' \(nodes: \['my_sim', 'rec_20.0'\]\)"):
        plan.node("nope")


def test_command_line_arguments_override_defaults_everywhere(tmp_path):
    inc = write(tmp_path, """
        launch:
        - arg: {name: seed, default: "0", description: s}
        - node: {pkg: deadzone_id_ros, exec: sim_arm, name: "sim_$(var seed)"}
        """, "inc.launch.yaml")
    top = write(tmp_path, f"""
        launch:
        - include: {{file: {inc}}}
        """)
    assert load_launch_file(top).nodes[0].name == "sim_0"
    assert load_launch_file(top, {"seed": "7"}).nodes[0].name == "sim_7"


def test_render_parameter_round_trips_through_yaml():
    for value in (1000.0, 3, True, False, [1.0, 2.5], ["a", "b"], "wall", "0.1"):
        assert yaml.safe_load(render_parameter(value)) == (yaml.safe_load(value) if isinstance(value, str) else value)
    assert yaml.safe_load(render_parameter("")) == ""


def test_parse_launch_arguments():
    assert parse_launch_arguments(["a:=1", "b:=x:=y", "c:="]) == {"a": "1", "b": "x:=y", "c": ""}
    with pytest.raises(LaunchError, match=r"launch argument 'a=1' must have the form name:=value"):
        parse_launch_arguments(["a=1"])
    with pytest.raises(LaunchError, match=r"launch argument ':=1' must have the form name:=value"):
        parse_launch_arguments([":=1"])


def test_resolve_launch_file_and_executable(tmp_path):
    assert resolve_launch_file("sim.launch.yaml") == share_dir() / "launch" / "sim.launch.yaml"
    with pytest.raises(FileNotFoundError, match=r"launch file nope.launch.yaml not found .*available: \["):
        resolve_launch_file("nope.launch.yaml")
    assert Path(resolve_executable("deadzone_id_ros", "deadzone-id")).parent == Path(sys.prefix) / "bin"
    with pytest.raises(LaunchError, match=r"here: executable 'no_such_exe' of package 'pkg' not found"):
        resolve_executable("pkg", "no_such_exe", "here")


# ------------------------------------------------------------------------------------------------------ errors
@pytest.mark.parametrize(
    ("body", "match"),
    [
        ("launch: {}", r"'launch' must hold a list of entries, got dict"),
        ("nodes: []", r"must be a mapping with the single key 'launch', got \['nodes'\]"),
        ("[1, 2]", r"must be a mapping with the single key 'launch', got list"),
        ("launch:\n- group: {}", r"launch\[0\]: unsupported entry 'group'; this launcher supports only"),
        ("launch:\n- executable: {cmd: ls}", r"launch\[0\]: unsupported entry 'executable'"),
        ("launch:\n- set_env: {name: A, value: B}", r"unsupported entry 'set_env'"),
        (
            "launch:\n- {arg: {name: a}, let: {name: b, value: c}}",
            r"launch\[0\]: each entry must be a mapping with one key",
        ),
        ("launch:\n- arg: [a]", r"launch\[0\] \(arg\): expected a mapping of attributes"),
        (
            "launch:\n- arg: {name: a, default: b, choices: [b]}",
            r"launch\[0\] \(arg\): unsupported key\(s\) \['choices'\]",
        ),
        ("launch:\n- arg: {default: b}", r"launch\[0\] \(arg\): missing required key\(s\) \['name'\]"),
        (
            "launch:\n- arg: {name: a, description: the a}",
            r"launch\[0\]: required launch argument 'a' not given \(pass a:=VALUE\): the a",
        ),
        ("launch:\n- arg: {name: '', default: b}", r"\(arg\).name: expected a non-empty string"),
        ("launch:\n- arg: {name: a, default: b, description: [x]}", r"\(arg a\).description: expected a string"),
        ("launch:\n- let: {name: a}", r"\(let\): missing required key\(s\) \['value'\]"),
        ("launch:\n- let: {name: a, value: {x: 1}}", r"\(let a\).value: expected a string, got dict"),
        ("launch:\n- node: {pkg: p, exec: e, if: 'true'}", r"\(node\): unsupported key\(s\) \['if'\]"),
        ("launch:\n- node: {pkg: p, exec: e, respawn: true}", r"\(node\): unsupported key\(s\) \['respawn'\]"),
        ("launch:\n- node: {pkg: p, exec: e, ros_args: '-p a:=1'}", r"unsupported key\(s\) \['ros_args'\]"),
        ("launch:\n- node: {pkg: p, exec: e, env: [{name: A, value: B}]}", r"unsupported key\(s\) \['env'\]"),
        ("launch:\n- node: {pkg: p, exec: e, launch-prefix: gdb}", r"unsupported key\(s\) \['launch-prefix'\]"),
        ("launch:\n- node: {exec: e}", r"\(node\): missing required key\(s\) \['pkg'\]"),
        ("launch:\n- node: {pkg: p, exec: e, output: loud}", r"\(node e\).output: 'loud' is not one of"),
        ("launch:\n- node: {pkg: p, exec: e, param: {a: 1}}", r"\(node e\).param: expected a list"),
        (
            "launch:\n- node: {pkg: p, exec: e, param: [{name: a}]}",
            r"\(node e\).param\[0\]: expected \{from: FILE\} or \{name: K, value: V\}, got \['name'\]",
        ),
        (
            "launch:\n- node: {pkg: p, exec: e, param: [{from: f, name: a}]}",
            r"param\[0\]: expected .* got \['from', 'name'\]",
        ),
        (
            "launch:\n- node: {pkg: p, exec: e, param: [{name: a, param: [{name: b, value: 1}]}]}",
            r"param\[0\]: expected .* got \['name', 'param'\]",
        ),
        (
            "launch:\n- node: {pkg: p, exec: e, param: [{name: a, value: {b: 1}}]}",
            r"param\[0\] \(a\).value: unsupported parameter value",
        ),
        (
            "launch:\n- node: {pkg: p, exec: e, remap: [{from: a}]}",
            r"\(node e\).remap\[0\]: expected exactly the keys \['from', 'to'\], got \['from'\]",
        ),
        ("launch:\n- node: {pkg: p, exec: e, remap: {from: a, to: b}}", r"\(node e\).remap: expected a list"),
        (
            "launch:\n- include: {file: x.launch.yaml, arg: [{name: a}]}",
            r"\(include x.launch.yaml\).arg\[0\]: expected exactly the keys \['name', 'value'\]",
        ),
        ("launch:\n- include: {file: x.launch.yaml, arg: {a: 1}}", r"\(include\).arg: expected a list"),
        ("launch:\n- include: {file: x.launch.yaml, scoped: true}", r"\(include\): unsupported key\(s\) \['scoped'\]"),
        (
            "launch:\n- node: {pkg: p, exec: $(eval 'e')}",
            r"launch\[0\] \(node\).exec: unsupported substitution \$\(eval",
        ),
        ("launch: [\n", r"malformed YAML"),
    ],
)
def test_unsupported_constructs_are_refused_naming_file_entry_and_key(tmp_path, body, match):
    path = write(tmp_path, body + "\n")
    with pytest.raises(LaunchError, match=match) as info:
        load_launch_file(path)
    assert str(path) in str(info.value)


def test_include_errors(tmp_path):
    missing = write(tmp_path, "launch:\n- include: {file: nowhere.launch.yaml}\n", "a.launch.yaml")
    with pytest.raises(
        FileNotFoundError, match=r"launch\[0\]: included launch file .*nowhere.launch.yaml does not exist"
    ):
        load_launch_file(missing)
    write(tmp_path, "launch:\n- include: {file: c.launch.yaml}\n", "b.launch.yaml")
    cyc = write(tmp_path, "launch:\n- include: {file: b.launch.yaml}\n", "c.launch.yaml")
    with pytest.raises(LaunchError, match=r"include cycle: .*c.launch.yaml -> .*b.launch.yaml -> .*c.launch.yaml"):
        load_launch_file(cyc)


def test_unknown_command_line_argument_is_refused_unless_not_strict(tmp_path):
    path = write(tmp_path, "launch:\n- arg: {name: rate, default: '1', description: r}\n")
    with pytest.raises(LaunchError, match=r"launch argument\(s\) \['rtae'\] not declared .*; declared: \['rate'\]"):
        load_launch_file(path, {"rtae": "2"})
    assert load_launch_file(path, {"rtae": "2"}, strict=False).configurations["rate"] == "1"


def test_allow_missing_gives_placeholders_for_listing(tmp_path):
    path = write(tmp_path, "launch:\n- arg: {name: bag, description: the bag}\n")
    plan = load_launch_file(path, allow_missing=True)
    assert plan.configurations["bag"] == "<required bag>"
    assert plan.arguments[0].default is None


def test_every_project_launch_file_parses_and_documents_every_argument():
    files = sorted((share_dir() / "launch").glob("*.launch.yaml"))
    assert files, "no launch files found"
    for path in files:
        plan = load_launch_file(path, allow_missing=True)
        assert plan.nodes, f"{path.name} starts no node"
        for arg in plan.arguments:
            assert arg.description.strip(), f"{path.name}: argument {arg.name} has no description"
        for node in plan.nodes:
            assert node.package == "deadzone_id_ros", f"{path.name}: {node.label}"
            assert node.name, f"{path.name}: node {node.executable} has no explicit name"
            shlex.join(node.command())  # every executable resolves
            for f in node.param_files:
                assert os.path.isfile(f), f"{path.name}: {node.label}: parameter file {f} missing"


def test_the_sensing_launch_arguments_reach_the_nodes(tmp_path):
    # sensing:=true and a sensing parameter file (deadzone-id sense's OUT/sensing.yaml) reach the controller of the
    # simulated graph; the force estimator takes the file; by default the shipped file that sets nothing
    settings = tmp_path / "sensing.yaml"
    settings.write_text("/**:\n  ros__parameters:\n    sensing_threshold: [0.1, 0.2, 0.3]\n")
    plan = load_launch_file("sim_feedforward.launch.yaml", {"sensing": "true", "sensing_worker": "true",
                                                            "sensing_params_file": str(settings)})
    ctrl = plan.node("feedforward_controller")
    assert ctrl.param_files[-1] == str(settings)
    assert ("sensing", "true") in ctrl.params and ("sensing_worker", "true") in ctrl.params
    default = load_launch_file("sim_feedforward.launch.yaml").node("feedforward_controller")
    assert ("sensing", "false") in default.params
    shipped = Path(default.param_files[-1])
    assert shipped.name == "sensing.yaml" and yaml.safe_load(shipped.read_text())["/**"]["ros__parameters"] == {}
    estimator = load_launch_file("force_estimator.launch.yaml", {"sensing_params_file": str(settings)})
    assert estimator.node("force_estimator").param_files == (str(settings),)
    with pytest.raises(LaunchError, match="sensing_threshold"):  # thresholds come with the rest of the file
        load_launch_file("force_estimator.launch.yaml", {"sensing_threshold": "[0.1, 0.2, 0.3]"})
