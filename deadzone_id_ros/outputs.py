"""Output directories that never lose a user's files: every command that writes a directory goes through here.

Rules (:func:`output_dir`):

- the target may be missing, an empty directory, or this command's own earlier output (a directory holding the
  marker file :data:`MARKER` that names the command); anything else is refused with a :class:`OutputError` that
  names the path and says ``--force`` replaces it. The current directory, one of its parents and the home directory
  are refused even with ``--force``;
- the command writes into a temporary sibling (``.NAME.tmp-...``); only when it finishes is the old output moved
  aside, the sibling renamed into place and the old output deleted, so a failure (an exception, an interrupt) leaves
  the target exactly as it was and removes the sibling;
- ``in_place=True`` is for outputs whose files record their own paths (the demo's reports name its bags): the old
  output is moved aside to a hidden sibling first and the command writes at the final path; on failure the partial
  output is removed and the old one put back.

Single files (``export --out FILE``) use :func:`output_file`: an existing file is replaced only with ``--force``, a
directory is refused, and the file appears only complete (written to a sibling, then renamed).
"""

from __future__ import annotations

import json
import os
import shutil
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from . import __version__
from .errors import DeadzoneIdError

__all__ = ["MARKER", "OutputError", "check_output_dir", "output_dir", "output_file", "owner"]

MARKER = ".deadzone-id-output.json"


class OutputError(DeadzoneIdError):
    """An output path that would delete or overwrite something the command does not own."""


def owner(path: str | Path) -> str | None:
    """The command named by ``path``'s marker file, or None (no marker, unreadable marker, not a directory)."""
    marker = Path(path) / MARKER
    try:
        doc = json.loads(marker.read_text())
    except (OSError, ValueError):
        return None
    command = doc.get("command") if isinstance(doc, dict) else None
    return command if isinstance(command, str) else None


def _protected(path: Path) -> str | None:
    """Why ``path`` may never be replaced (the working directory, one of its parents, home, /), or None."""
    p = path.resolve()
    cwd = Path.cwd().resolve()
    if p == cwd or p in cwd.parents:
        return "it is the current directory or one of its parents"
    if p == Path.home().resolve() or p == Path(p.anchor):
        return "it is the home or root directory"
    return None


def check_output_dir(path: str | Path, command: str, *, force: bool = False) -> bool:
    """Check that ``command`` may write the directory ``path``; returns True when something is there to replace.

    Raises:
        OutputError: ``path`` is a file, a protected directory (current directory, a parent of it, home, root), or
            a non-empty directory that is not ``command``'s own output while ``force`` is False (names the path, the
            owner if any, and ``--force``).
    """
    p = Path(path)
    if not p.exists() and not p.is_symlink():
        return False
    if not p.is_dir() or p.is_symlink():
        raise OutputError(f"--out {p}: exists and is not a directory; choose another path")
    why = _protected(p)
    if why:
        raise OutputError(f"--out {p}: refusing to replace it ({why}); choose a new directory")
    if not any(p.iterdir()):
        return True
    found = owner(p)
    if found == command or force:
        return True
    what = f"the output of `deadzone-id {found}`" if found else "not the output of a deadzone-id command"
    raise OutputError(f"--out {p}: the directory is not empty and is {what}; choose a new directory, or pass "
                      f"--force to replace it")


def _write_marker(path: Path, command: str) -> None:
    doc = {"command": command, "package_version": __version__,
           "written": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    (path / MARKER).write_text(json.dumps(doc, indent=2) + "\n")


def _sibling(path: Path, tag: str) -> Path:
    return path.parent / f".{path.name}.{tag}-{os.getpid()}-{uuid.uuid4().hex[:8]}"


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    elif path.exists() or path.is_symlink():
        path.unlink()


@contextmanager
def output_dir(path: str | Path, command: str, *, force: bool = False, in_place: bool = False) -> Iterator[Path]:
    """Context manager giving the directory ``command`` writes into; the output appears at ``path`` on success only.

    Args:
        path: the target directory (``--out``).
        command: the command's name, written into the marker file (e.g. ``"train"``).
        force: replace a non-empty directory that is not this command's output (``--force``).
        in_place: write at ``path`` itself (the old output is kept aside until the command succeeds).

    Yields:
        the directory to write into (a temporary sibling of ``path``, or ``path`` with ``in_place``), created and
        marked.

    Raises:
        OutputError: see :func:`check_output_dir` (raised before anything is written).
    """
    final = Path(path)
    replace = check_output_dir(final, command, force=force)
    final.parent.mkdir(parents=True, exist_ok=True)
    old = _sibling(final, "old") if replace else None
    if in_place:
        if old is not None:
            final.rename(old)
        work = final
    else:
        work = _sibling(final, "tmp")
    try:
        work.mkdir()
        _write_marker(work, command)
        yield work
    except BaseException:
        _remove(work)
        if in_place and old is not None:
            old.rename(final)
        raise
    if not in_place:
        if old is not None:
            final.rename(old)
        work.rename(final)
    if old is not None:
        _remove(old)


@contextmanager
def output_file(path: str | Path, *, force: bool = False) -> Iterator[Path]:
    """Context manager giving a temporary sibling file to write; it replaces ``path`` only on success.

    Raises:
        OutputError: ``path`` is a directory, or an existing file while ``force`` is False.
    """
    final = Path(path)
    if final.is_dir():
        raise OutputError(f"--out {final}: is a directory; give the path of the file to write (e.g. "
                          f"{final / 'model.onnx'})")
    if final.exists() and not force:
        raise OutputError(f"--out {final}: the file exists; choose another path, or pass --force to replace it")
    final.parent.mkdir(parents=True, exist_ok=True)
    work = final.parent / f".{final.stem}.tmp-{os.getpid()}-{uuid.uuid4().hex[:8]}{final.suffix}"
    try:
        yield work
    except BaseException:
        _remove(work)
        raise
    os.replace(work, final)
