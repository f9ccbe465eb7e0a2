"""CSV logs as spreadsheets and loggers write them (core of ``deadzone-id convert``; no ROS): dialect and time checks.

- :func:`sniff_dialect`: the separator (``,``, ``;`` or tab) and the decimal mark (``.`` or ``,``, as European
  spreadsheets write ``0,5`` with ``;`` separators), from the header and the first data line, unless given;
- :func:`read_table`: a header row (a UTF-8 byte-order mark is dropped) and numeric columns, naming the line and
  column of a value that is not a number;
- :func:`check_time`: epoch times in another unit than the one given (milliseconds read as seconds overflow the
  nanosecond stamps), and sample rates no robot log has, each naming the line and column and the ``--time-unit``
  that fits. Everything is checked before a bag is written.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import DataError

__all__ = ["CsvDialect", "EPOCH_S_RANGE", "RATE_HZ_RANGE", "check_time", "read_table", "sniff_dialect"]

EPOCH_S_RANGE = (1e8, 1e10)
"""Plausible epoch times [s] (1973 .. 2286); a first time above this range is in a smaller unit."""
RATE_HZ_RANGE = (5.0, 100_000.0)
"""Plausible sample rates [Hz] of a robot log (median step after unit conversion)."""
_DECIMAL_COMMA = re.compile(r"^\s*[-+]?\d+,\d+([eE][-+]?\d+)?\s*$")


@dataclass(frozen=True)
class CsvDialect:
    """How a CSV is written: ``delimiter`` (``","``, ``";"`` or ``"\\t"``) and ``decimal`` (``"."`` or ``","``)."""

    delimiter: str = ","
    decimal: str = "."

    def __post_init__(self) -> None:
        if self.delimiter not in (",", ";", "\t"):
            raise ValueError(f"CsvDialect.delimiter = {self.delimiter!r} must be ',', ';' or a tab")
        if self.decimal not in (".", ","):
            raise ValueError(f"CsvDialect.decimal = {self.decimal!r} must be '.' or ','")
        if self.delimiter == self.decimal:
            raise ValueError("CsvDialect: the separator and the decimal mark must differ (use ';' with decimal ',')")


def _lines(path: Path, n: int) -> list[str]:
    try:
        with path.open(encoding="utf-8-sig", newline="") as f:
            return [line for _, line in zip(range(n), f, strict=False)]
    except UnicodeDecodeError as err:
        raise DataError(f"{path}: not a text CSV (byte {err.start} is not UTF-8: a binary file)"
                        f"{_binary_hint(path)}") from err


def _binary_hint(path: Path) -> str:
    from .lerobot import not_a_bag_hint

    return not_a_bag_hint(path)


def sniff_dialect(path: Path, delimiter: str | None = None, decimal: str | None = None) -> CsvDialect:
    """The dialect of ``path``: given values are kept; a missing separator is the one of ``,`` ``;`` tab that
    splits the header into most columns; a missing decimal mark is ``,`` when the separator is not ``,`` and a value
    of the first data line looks like ``12,5``.

    Raises:
        DataError: the given separator and decimal mark are the same.
    """
    head = _lines(path, 2)
    if delimiter is None:
        counts = {d: head[0].count(d) if head else 0 for d in (",", ";", "\t")}
        delimiter = max(counts, key=lambda d: counts[d]) if any(counts.values()) else ","
    if decimal is None:
        first = head[1].rstrip("\r\n").split(delimiter) if len(head) > 1 else []
        decimal = "," if delimiter != "," and any(_DECIMAL_COMMA.match(v) for v in first) else "."
    try:
        return CsvDialect(delimiter, decimal)
    except ValueError as err:
        raise DataError(f"{path}: {err}") from err


def read_table(path: Path, dialect: CsvDialect, columns: list[str]) -> tuple[list[str], np.ndarray]:
    """The header and the numeric ``columns`` (in that order) of a CSV.

    Returns:
        (header (C,), values (N, len(columns)) float).

    Raises:
        DataError: an empty file, a column not in the header (lists the header), a value that is not a number
            (names the line and column; hints at ``--delimiter``/``--decimal`` when the dialect looks wrong).
    """
    with path.open(encoding="utf-8-sig", newline="") as f:
        rows = csv.reader(f, delimiter=dialect.delimiter)
        header = [h.strip() for h in next(rows, [])]
        if not header:
            raise DataError(f"{path}: empty file, expected a header row")
        missing = [c for c in dict.fromkeys(columns) if c not in header]
        if missing:
            hint = "" if len(header) > 1 else f" (one column only: is the separator not {dialect.delimiter!r}? " \
                                               "see --delimiter)"
            raise DataError(f"{path}: column(s) {missing} not in header {header}{hint}")
        idx = [header.index(c) for c in columns]
        out = []
        for line, row in enumerate(rows, start=2):
            if not row or all(not v.strip() for v in row):
                continue
            values = []
            for c, i in zip(columns, idx, strict=True):
                text = row[i].strip() if i < len(row) else ""
                try:
                    values.append(float(text.replace(",", ".") if dialect.decimal == "," else text))
                except ValueError as err:
                    hint = (" (a decimal comma? give --decimal ,)" if _DECIMAL_COMMA.match(text)
                            and dialect.decimal == "." else "")
                    raise DataError(f"{path}: line {line} column {c}: value {text or '<missing>'!r} is not a "
                                    f"number{hint}") from err
            out.append(values)
    return header, np.asarray(out, dtype=np.float64).reshape(-1, len(columns))


def _unit_for(seconds_per_unit: dict[str, float], fits: Callable[[float], bool]) -> str | None:
    return next((u for u, k in seconds_per_unit.items() if fits(k)), None)


def check_time(path: Path, t: np.ndarray, column: str, unit: str, seconds_per_unit: dict[str, float]) -> None:
    """Refuse a time column (N,) [``unit``] that cannot be what the user said.

    An absolute first time beyond :data:`EPOCH_S_RANGE` after conversion (epoch milliseconds read as seconds), and
    a median step whose rate is outside :data:`RATE_HZ_RANGE`, are refused naming the line, the column and the
    ``--time-unit`` that gives a plausible value.

    Raises:
        DataError: as above, or a time that is not finite.
    """
    if not np.all(np.isfinite(t)):
        bad = int(np.argmax(~np.isfinite(t)))
        raise DataError(f"{path}: line {bad + 2} column {column}: time is not finite")
    first_s = float(t[0]) * seconds_per_unit[unit]
    if first_s > EPOCH_S_RANGE[1]:
        guess = _unit_for(seconds_per_unit, lambda k: EPOCH_S_RANGE[0] <= float(t[0]) * k <= EPOCH_S_RANGE[1])
        raise DataError(f"{path}: line 2 column {column}: time {t[0]:.6g} {unit} = {first_s:.4g} s is not a plausible "
                        f"epoch time" + (f"; the column looks like epoch time in {guess}: give --time-unit {guess}"
                                         if guess else ""))
    step = np.diff(t)
    forward = step[step > 0]
    if not len(forward):
        return
    rate = 1.0 / (float(np.median(forward)) * seconds_per_unit[unit])
    if not RATE_HZ_RANGE[0] <= rate <= RATE_HZ_RANGE[1]:
        med = float(np.median(forward))
        guess = _unit_for(seconds_per_unit, lambda k: 10.0 <= 1.0 / (med * k) <= 10_000.0)
        line = int(np.nonzero(step > 0)[0][0]) + 3
        raise DataError(f"{path}: line {line} column {column}: median time step {med:.6g} {unit} gives "
                        f"{rate:.4g} Hz, not a plausible sample rate ({RATE_HZ_RANGE[0]:g}..{RATE_HZ_RANGE[1]:g} Hz)"
                        + (f"; is the column in {guess}? give --time-unit {guess}" if guess else ""))
