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

- ``keep_on_failure=True`` (the demo) never deletes what a run wrote: a failed or interrupted run leaves its partial
  output at ``path`` (the caller marks it with :func:`mark_incomplete`, naming the stage, the reason and the logs) and
  an earlier output it would have replaced is kept beside it as ``NAME.previous``;
- :func:`output_lock` (an ``fcntl.flock`` on the sibling ``.NAME.lock``, which holds the PID of its owner) lets one
  run at a time write a directory; a second is refused with the PID of the first.

Single files (``export --out FILE``) use :func:`output_file`: an existing file is replaced only with ``--force``, a
directory is refused, and the file appears only complete (written to a sibling, then renamed).
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from . import __version__
from .errors import DeadzoneIdError

__all__ = ["INCOMPLETE", "MARKER", "OutputError", "check_output_dir", "incomplete", "mark_incomplete", "output_dir",
           "output_file", "output_lock", "owner"]

MARKER = ".deadzone-id-output.json"
#: Marker file of an output whose run failed or was interrupted (JSON: stage, reason, logs, how to resume).
INCOMPLETE = "INCOMPLETE.json"


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
    left = incomplete(p)
    if left is not None and not force:
        raise OutputError(f"--out {p}: holds an incomplete run of `deadzone-id {found}` (stage {left.get('stage')!r}: "
                          f"{left.get('reason')}); continue it with `{left.get('resume')}`, or pass --force to "
                          "start over")
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


def _free_name(path: Path) -> Path:
    """``path``, or ``path-2``, ``path-3``, ... whichever does not exist yet."""
    k, candidate = 1, path
    while candidate.exists() or candidate.is_symlink():
        k += 1
        candidate = path.with_name(f"{path.name}-{k}")
    return candidate


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    elif path.exists() or path.is_symlink():
        path.unlink()


def incomplete(path: str | Path) -> dict[str, object] | None:
    """The :data:`INCOMPLETE` marker of ``path`` as a dict, or None (none there, or unreadable)."""
    try:
        doc = json.loads((Path(path) / INCOMPLETE).read_text())
    except (OSError, ValueError):
        return None
    return doc if isinstance(doc, dict) else None


def mark_incomplete(path: str | Path, stage: str, reason: str, logs: list[str], resume: str) -> Path:
    """Write ``path``/:data:`INCOMPLETE`: the stage that failed or was interrupted, why, the logs the run wrote
    (paths relative to ``path``) and the command that continues it; returns the marker's path."""
    marker = Path(path) / INCOMPLETE
    doc = {"stage": stage, "reason": reason, "logs": logs, "resume": resume, "pid": os.getpid(),
           "written": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    marker.write_text(json.dumps(doc, indent=2) + "\n")
    return marker


@contextmanager
def output_lock(path: str | Path) -> Iterator[Path]:
    """Hold an exclusive ``fcntl.flock`` on ``path``'s sibling ``.NAME.lock`` (created if missing; it holds this
    process's PID and command line) for the block; yields the lock file. The kernel releases the lock when the
    process ends, however it ends, so a stale lock file never blocks a later run.

    Raises:
        OutputError: another process holds the lock (names its PID and command line from the lock file).
    """
    final = Path(path).absolute()
    final.parent.mkdir(parents=True, exist_ok=True)
    lock = final.parent / f".{final.name}.lock"
    fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = os.pread(fd, 4096, 0).decode(errors="replace").strip() or "(unknown)"
        os.close(fd)
        pid = holder.split()[0]
        raise OutputError(f"--out {path}: in use by process {pid} (`{holder}` holds {lock}); wait for it to end or "
                          f"stop it (kill {pid}), or choose another directory") from None
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()} {' '.join(sys.argv)}\n".encode(), 0)
        yield lock
    finally:
        os.ftruncate(fd, 0)
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


@contextmanager
def output_dir(path: str | Path, command: str, *, force: bool = False, in_place: bool = False,
               keep_on_failure: bool = False) -> Iterator[Path]:
    """Context manager giving the directory ``command`` writes into; the output appears at ``path`` on success only.

    Args:
        path: the target directory (``--out``).
        command: the command's name, written into the marker file (e.g. ``"train"``).
        force: replace a non-empty directory that is not this command's output (``--force``).
        in_place: write at ``path`` itself (the old output is kept aside until the command succeeds).
        keep_on_failure: with ``in_place``: on failure keep what was written at ``path`` and the old output as
            ``NAME.previous`` (a free name: ``NAME.previous-2``, ...), instead of restoring the old one.

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
        if keep_on_failure and in_place:
            if old is not None:
                old.rename(_free_name(final.parent / f"{final.name}.previous"))
            raise
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
