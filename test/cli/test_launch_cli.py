"""``deadzone-id launch`` as a user types it (issue 22, reports a user can trust): options after FILE with launch
arguments after them, and ``--show-args`` that says which file each argument belongs to and which ones an include
sets (``params_file`` was listed three times with no file named)."""

from __future__ import annotations

from deadzone_id_ros.cli.main import main


def test_print_takes_launch_arguments_after_the_option(capsys):
    assert main(["launch", "sim.launch.yaml", "--print", "seed:=3", "lockstep:=true"]) == 0
    out = capsys.readouterr().out
    assert "-p lockstep:=true -p seed:=3" in out, out


def test_an_unknown_option_after_file_is_still_refused(capsys):
    try:
        main(["launch", "sim.launch.yaml", "--print", "--bogus"])
    except SystemExit as err:
        assert err.code == 2
    assert "unrecognized arguments: --bogus" in capsys.readouterr().err


def test_show_args_names_each_file_and_what_an_include_sets(capsys):
    assert main(["launch", "sim_feedforward.launch.yaml", "--show-args"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0] == "# sim_feedforward.launch.yaml"
    assert "# sim.launch.yaml (included)" in lines and "# feedforward.launch.yaml (included)" in lines
    # params_file appears once per included file, each with the include's value, never as a settable argument
    assert not [line for line in lines if line.startswith("params_file ")], out
    assert "  params_file: the include in sim_feedforward.launch.yaml sets it to $(var sim_params_file)" in lines
    assert "  params_file: the include in sim_feedforward.launch.yaml sets it to $(var controller_params_file)" in lines
    assert any(line.startswith("controller_params_file (default: ") for line in lines)
