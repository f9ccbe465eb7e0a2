"""``deadzone-id improve`` on the command line: its help, and bad values answered with exit status 2 and a message
naming the flag and the value, before anything runs."""

from __future__ import annotations

import pytest

from deadzone_id_ros.cli.main import main


def test_help_names_the_options(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["improve", "--help"])
    assert exit_.value.code == 0
    text = capsys.readouterr().out
    for flag in ("--robot NAME|FILE", "--iterations N", "--seeds N", "--task-seeds N", "--dob-cutoff-scale F",
                 "--compare-model DIR", "--out DIR", "--live"):
        assert flag in text


@pytest.mark.parametrize(("argv", "says"), [
    (("--seeds", "11", "1000"), "held-out seed(s) [11] are also task seeds"),
    (("--iterations", "-1"), "iterations = -1 must be a non-negative integer"),
    (("--dob-cutoff-scale", "0"), "dob_cutoff_scale = 0.0 must be a positive number"),
    (("--methods", "masked", "nope"), "unknown method(s) ['nope']"),
    (("--workers", "0"), "--workers = 0 must be >= 1"),
])
def test_bad_values_exit_2_before_running(tmp_path, capsys, argv, says):
    assert main(["improve", "--out", str(tmp_path / "out"), *argv]) == 2
    assert says in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_an_earlier_output_is_refused_before_iteration_0_runs(tmp_path, capsys):
    """A new user reran improve into the same --out: it ran iteration 0 (5 s) before refusing. Now at once, and the
    folder is left as it was."""
    out = tmp_path / "out"
    out.mkdir()
    (out / "report.md").write_text("an earlier run")
    assert main(["improve", "--out", str(out), "--no-check"]) == 2
    assert "exists and is not empty" in capsys.readouterr().err
    assert [p.name for p in out.iterdir()] == ["report.md"]
