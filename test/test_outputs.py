"""Output directories never lose a user's files (issue 11 item 15): refuse, write aside, rename, clean up."""

from __future__ import annotations

import json

import pytest

from deadzone_id_ros.outputs import MARKER, OutputError, check_output_dir, output_dir, output_file, owner


def test_a_new_directory_appears_only_on_success_and_is_marked(tmp_path):
    target = tmp_path / "a" / "out"
    with output_dir(target, "train") as work:
        assert work != target and work.parent == target.parent
        (work / "model.json").write_text("{}")
        assert not target.exists()
    assert (target / "model.json").is_file() and owner(target) == "train"
    assert sorted(p.name for p in target.parent.iterdir()) == ["out"]  # no temporary sibling left


def test_a_failure_leaves_the_earlier_output_untouched_and_nothing_else(tmp_path):
    target = tmp_path / "out"
    with output_dir(target, "compare") as work:
        (work / "report.md").write_text("first")
    with pytest.raises(RuntimeError), output_dir(target, "compare") as work:
        (work / "plots").mkdir()
        raise RuntimeError("training failed")
    assert (target / "report.md").read_text() == "first" and not (target / "plots").exists()
    assert [p.name for p in tmp_path.iterdir()] == ["out"]


def test_own_output_is_replaced_but_a_users_directory_is_refused(tmp_path):
    mine = tmp_path / "mine"
    with output_dir(mine, "train") as work:
        (work / "old.txt").write_text("x")
    with output_dir(mine, "train") as work:
        (work / "new.txt").write_text("y")
    assert sorted(p.name for p in mine.iterdir()) == sorted([MARKER, "new.txt"])
    user = tmp_path / "user"
    user.mkdir()
    (user / "thesis.tex").write_text("precious")
    with pytest.raises(OutputError, match=r"--out .*user: the directory is not empty .* pass --force"):
        check_output_dir(user, "train")
    with pytest.raises(OutputError, match="output of `deadzone-id train`"):
        check_output_dir(mine, "compare")  # another command's output is not this command's
    with output_dir(user, "train", force=True) as work:
        (work / "model.json").write_text("{}")
    assert not (user / "thesis.tex").exists() and owner(user) == "train"


def test_the_working_directory_is_refused_even_with_force(tmp_path, monkeypatch):
    (tmp_path / "keep.txt").write_text("x")
    monkeypatch.chdir(tmp_path)
    for target in (".", str(tmp_path.parent)):
        with pytest.raises(OutputError, match="current directory"):
            check_output_dir(target, "demo", force=True)
    assert (tmp_path / "keep.txt").is_file()


def test_in_place_output_restores_the_earlier_one_on_failure(tmp_path):
    target = tmp_path / "demo"
    with output_dir(target, "demo", in_place=True) as work:
        assert work == target
        (work / "report.md").write_text("first")
    with pytest.raises(KeyboardInterrupt), output_dir(target, "demo", in_place=True) as work:
        assert not (work / "report.md").exists()
        (work / "logs").mkdir()
        raise KeyboardInterrupt
    assert (target / "report.md").read_text() == "first" and not (target / "logs").exists()
    assert [p.name for p in tmp_path.iterdir()] == ["demo"]


def test_output_file_refuses_a_directory_and_an_existing_file(tmp_path):
    with pytest.raises(OutputError, match="is a directory; give the path of the file"):
        with output_file(tmp_path):
            pass
    f = tmp_path / "m.onnx"
    f.write_text("old")
    with pytest.raises(OutputError, match="the file exists; .* --force"):
        with output_file(f):
            pass
    with pytest.raises(ValueError), output_file(f, force=True) as work:
        work.write_text("half")
        raise ValueError
    assert f.read_text() == "old" and sorted(p.name for p in tmp_path.iterdir()) == ["m.onnx"]
    with output_file(f, force=True) as work:
        work.write_text("new")
    assert f.read_text() == "new"


def test_demo_and_demo_real_refuse_a_users_directory_before_doing_anything(tmp_path, monkeypatch, capsys):
    from deadzone_id_ros.cli.main import main

    (tmp_path / "notes.txt").write_text("mine")
    monkeypatch.chdir(tmp_path)
    assert main(["demo", "--out", ".", "--quick"]) == 2
    assert "current directory" in capsys.readouterr().err
    other = tmp_path / "other"
    other.mkdir()
    (other / "data.csv").write_text("1,2")
    assert main(["demo-real", "--out", str(other), "--real-dir", str(tmp_path)]) == 2
    assert "not the output of a deadzone-id command" in capsys.readouterr().err
    assert (tmp_path / "notes.txt").read_text() == "mine" and (other / "data.csv").read_text() == "1,2"


def test_marker_names_the_command_and_version(tmp_path):
    from deadzone_id_ros import __version__

    with output_dir(tmp_path / "o", "replay") as work:
        pass
    doc = json.loads((tmp_path / "o" / MARKER).read_text())
    assert doc["command"] == "replay" and doc["package_version"] == __version__ and work.name != "o"
