"""Entry point of the ``deadzone-id`` command: dispatches to one module per subcommand.

User errors (:class:`~deadzone_id_ros.errors.DeadzoneIdError`, missing files) print one clear line on stderr and
exit with status 2, without a traceback. Interrupts exit with 130; SIGTERM and SIGHUP end a command as Ctrl-C does
(child nodes stopped) and exit with 128 + the signal number. Output to a pipe that closes early (``deadzone-id replay
... | head``) ends the command quietly, as Unix tools do: status 141 (128 + SIGPIPE), no traceback, and nothing more
written to the closed pipe (standard output goes to /dev/null, so the final flush cannot fail again).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import re
import signal
import sys
import warnings
from collections.abc import Iterator, Sequence

from .. import __version__
from ..errors import DeadzoneIdError

__all__ = ["SUBCOMMANDS", "build_parser", "main"]

# Subcommand name -> module under deadzone_id_ros.cli that defines register(subparsers).
SUBCOMMANDS: dict[str, str] = {
    "simulate": "simulate",
    "inspect": "inspect",
    "convert": "convert",
    "train": "train",
    "evaluate": "evaluate",
    "export": "export",
    "export-lerobot": "export_lerobot",
    "compare": "compare",
    "sweep": "sweep",
    "launch": "launch",
    "replay": "replay",
    "demo": "demo",
    "demo-real": "demo",
    "closed-loop": "closed_loop",
    "sense": "sense",
    "teleop": "teleop",
    "improve": "improve",
    "robots": "robots",
    "robot": "robot",
    "record": "record",
    "status": "status",
    "param": "param",
}


def build_parser() -> argparse.ArgumentParser:
    """Build the argument parser with every subcommand whose module is present."""
    parser = argparse.ArgumentParser(
        prog="deadzone-id",
        description="Dead-zone-aware inverse-dynamics learning and feedforward control for ros2_control arms "
        "(Inami, Yamane, Sakaino, arXiv 2402.00393).",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    registered: set[str] = set()
    for module_name in dict.fromkeys(SUBCOMMANDS.values()):
        try:
            module = importlib.import_module(f"{__package__}.{module_name}")
        except ModuleNotFoundError as err:
            if err.name == f"{__package__}.{module_name}":
                continue  # subcommand not built yet
            raise
        module.register(sub)
        registered.add(module_name)
    for command in sub.choices.values():  # the module docstrings are reST: --help shows plain text
        if command.description:
            command.description = plain_text(command.description)
    return parser


def plain_text(doc: str) -> str:
    """``doc`` (reST) as terminal text: ``code`` -> `code`, :func:`pkg.mod.name` -> `name`."""
    doc = re.sub(r":[a-z]+:`~?([^`]+)`", lambda m: f"`{m.group(1).split('.')[-1]}`", doc)
    return doc.replace("``", "`")


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``deadzone-id``; returns the process exit status (0 ok, 1 failed check, 2 user error, 130 interrupt)."""
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    take_extra = getattr(args, "take_extra", None)  # a subcommand that takes tokens after its options (launch)
    if extra and (take_extra is None or not take_extra(args, extra)):
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    from ..launching.graph import TerminationSignal, signals_as_interrupt

    try:
        with signals_as_interrupt(), _plain_warnings(args.command):  # no node outlives the command
            status = args.func(args)
    except TerminationSignal as sig:
        print(f"deadzone-id: {signal.Signals(sig.signum).name} received; stopped", file=sys.stderr)
        return 128 + sig.signum
    except KeyboardInterrupt:
        print("deadzone-id: interrupted", file=sys.stderr)
        return 130
    except (DeadzoneIdError, FileNotFoundError) as err:
        print(f"deadzone-id {args.command}: error: {err}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        if not _stdout_closed():
            raise  # another pipe (a child's stdin): a bug to see, not the reader of our output going away
        return _closed_pipe()
    return int(status or 0)


_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@contextlib.contextmanager
def _plain_warnings(command: str) -> Iterator[None]:
    """While the command runs, this package's own warnings print as one line, ``deadzone-id COMMAND: warning:
    MESSAGE``, not as Python's ``FILE:LINE: Category: MESSAGE`` followed by the source line that raised it (a user
    read ``arm = SimArm(sim_cfg)`` under a friction warning); other libraries' warnings keep Python's form. Only
    the text changes (``warnings.formatwarning``): filters and recorders (``catch_warnings(record=True)``) see the
    warnings as before."""
    default = warnings.formatwarning

    def plain(message: Warning | str, category: type[Warning], filename: str, lineno: int,
              line: str | None = None) -> str:
        if category.__module__.split(".")[0] == __name__.split(".")[0] or filename.startswith(_PACKAGE_DIR):
            return f"deadzone-id {command}: warning: {message}\n"
        return default(message, category, filename, lineno, line)

    warnings.formatwarning = plain
    try:
        yield
    finally:
        warnings.formatwarning = default


def _stdout_closed() -> bool:
    """True when standard output is a pipe whose reader has gone (poll reports an error on it)."""
    import select

    try:
        poller = select.poll()
        poller.register(sys.stdout.fileno(), select.POLLOUT)
        return any(events & (select.POLLERR | select.POLLHUP) for _, events in poller.poll(0))
    except (OSError, ValueError):  # stdout closed or not a file descriptor
        return True


def _closed_pipe() -> int:
    """The reader of standard output went away (``| head``): point stdout at /dev/null, so the interpreter's last
    flush does not fail again, and return 128 + SIGPIPE as a Unix tool killed by SIGPIPE would (Python's own
    recipe, "Note on SIGPIPE" in the signal module's documentation)."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
    return 128 + signal.SIGPIPE


if __name__ == "__main__":
    sys.exit(main())
