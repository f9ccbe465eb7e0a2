"""CSV logs as spreadsheets and loggers write them (issue 11, item 7), and a reset in a CSV's time (item 3): detected
before writing, with the line, the column and the option to give; nothing half-written is left behind."""

from __future__ import annotations

import numpy as np
import pytest

from deadzone_id_ros.cli.main import main
from deadzone_id_ros.data.convert import convert_csv, parse_joint_spec, read_csv_recording
from deadzone_id_ros.data.dataset import load_dataset
from deadzone_id_ros.errors import DataError

JOINT = [parse_joint_spec("j:pos=q,vel=dq,effort=tau")]
EPOCH = 1_700_000_000.0


def _rows(n: int = 600, rate: float = 200.0, t0: float = 0.0, scale: float = 1.0) -> list[tuple[float, ...]]:
    t = np.arange(n) / rate
    return [((t0 + ti) * scale, np.sin(ti), np.cos(ti), 2 * np.sin(ti) + 1) for ti in t]


def _write(path, rows, sep=",", decimal=".", bom=False, header="time,q,dq,tau"):
    def num(x: float) -> str:
        return repr(float(x)).replace(".", decimal)

    text = header.replace(",", sep) + "\n" + "\n".join(sep.join(num(x) for x in r) for r in rows) + "\n"
    path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + text.encode())
    return path


def test_utf8_bom_is_ignored(tmp_path):
    rec = read_csv_recording(_write(tmp_path / "x.csv", _rows(), bom=True), "time", JOINT, start_time_ns=10**18)
    assert len(rec.state_t_ns) == 600 and rec.position[1, 0] == pytest.approx(np.sin(0.005))


def test_semicolons_with_decimal_commas_are_detected(tmp_path):
    path = _write(tmp_path / "x.csv", _rows(), sep=";", decimal=",")
    rec = read_csv_recording(path, "time", JOINT, start_time_ns=10**18)
    assert rec.position[1, 0] == pytest.approx(np.sin(0.005)) and rec.metadata["csv_dialect"] == {
        "delimiter": ";", "decimal": ","}
    with pytest.raises(DataError, match=r"x.csv: line 2 column time: value '0,0' is not a number \(a decimal comma\? "
                                        r"give --decimal ,\)"):
        read_csv_recording(path, "time", JOINT, delimiter=";", decimal=".")
    with pytest.raises(DataError, match=r"not in header \['time;q;dq;tau'\] \(one column only: is the separator not "
                                        r"','\? see --delimiter\)"):
        read_csv_recording(path, "time", JOINT, delimiter=",")


@pytest.mark.parametrize(("scale", "unit"), [(1e3, "ms"), (1e6, "us")])
def test_epoch_time_in_another_unit_is_refused_before_writing(tmp_path, scale, unit):
    path = _write(tmp_path / "x.csv", _rows(t0=EPOCH, scale=scale))
    out = tmp_path / "bag"
    with pytest.raises(DataError, match=rf"x.csv: line 2 column time: time .* s is not a plausible epoch time; the "
                                        rf"column looks like epoch time in {unit}: give --time-unit {unit}"):
        convert_csv(path, out, "time", JOINT)
    assert not out.exists() and list(tmp_path.iterdir()) == [path]  # nothing half-written
    bag, rec = convert_csv(path, out, "time", JOINT, time_unit=unit)  # the rerun works
    assert rec.state_t_ns[0] == pytest.approx(EPOCH * 1e9, rel=1e-12) and load_dataset([bag]).num_samples == 600


def test_implausible_sample_rate_names_line_column_and_unit(tmp_path, capsys):
    path = _write(tmp_path / "x.csv", _rows(scale=1e3))  # relative time in ms, read as s: 0.2 Hz
    with pytest.raises(DataError, match=r"line 3 column time: median time step 5 s gives 0.2 Hz, not a plausible "
                                        r"sample rate .*; is the column in ms\? give --time-unit ms"):
        read_csv_recording(path, "time", JOINT)
    assert main(["convert", str(path), "--out", str(tmp_path / "b"), "--time", "time", "--joint",
                 "j:pos=q,vel=dq,effort=tau"]) == 2
    assert "give --time-unit ms" in capsys.readouterr().err and not (tmp_path / "b").exists()


def test_failed_write_leaves_nothing_behind(tmp_path, monkeypatch):
    import deadzone_id_ros.data.convert as conv

    def broken(rec, out, **kw):
        out.mkdir()
        (out / "half.mcap").write_bytes(b"\x89MCAP0\r\n")
        raise DataError("disk full")

    monkeypatch.setattr(conv, "write_recording", broken)
    with pytest.raises(DataError, match="disk full"):
        convert_csv(_write(tmp_path / "x.csv", _rows()), tmp_path / "bag", "time", JOINT, start_time_ns=10**18)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.csv"]


def test_csv_time_reset_is_kept_in_file_order_and_split(tmp_path, capsys):
    rows = _rows(400) + [(r[0], r[1] + 1.0, r[2], r[3]) for r in _rows(300)]  # a second log appended
    path = _write(tmp_path / "x.csv", rows)
    assert main(["convert", str(path), "--out", str(tmp_path / "b"), "--time", "time", "--start-time", "1e9",
                 "--joint", "j:pos=q,vel=dq,effort=tau"]) == 0
    assert "line 402 column time: time jumps back by 1.995 s" in capsys.readouterr().err
    ds = load_dataset([tmp_path / "b"])
    assert ds.report.resets_split == 1 and [len(e) for e in ds.episodes] == [400, 300]
    assert "before message 400" in " ".join(ds.report.warnings)
    assert max(float(np.abs(np.diff(e.q[:, 0])).max()) for e in ds.episodes) < 0.01  # no 1 rad jump
