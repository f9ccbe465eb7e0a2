"""Entry point of the ``deadzone-id`` command: dispatches to one module per subcommand.

User errors (:class:`~deadzone_id_ros.errors.DeadzoneIdError`, missing files) print one clear line on stderr and
exit with status 2, without a traceback. Interrupts exit with 130.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

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
    "compare": "compare",
    "launch": "launch",
    "replay": "replay",
    "demo": "demo",
    "demo-real": "demo",
    "robots": "robots",
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
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``deadzone-id``; returns the process exit status (0 ok, 1 failed check, 2 user error, 130 interrupt)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        status = args.func(args)
    except KeyboardInterrupt:
        print("deadzone-id: interrupted", file=sys.stderr)
        return 130
    except (DeadzoneIdError, FileNotFoundError) as err:
        print(f"deadzone-id {args.command}: error: {err}", file=sys.stderr)
        return 2
    return int(status or 0)


if __name__ == "__main__":
    sys.exit(main())
