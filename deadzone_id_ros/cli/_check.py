"""The robot check that ``simulate``, ``compare``, ``closed-loop``, ``improve`` and ``demo`` run first when given
``--robot`` (:mod:`deadzone_id_ros.experiments.check`; ``--no-check`` skips it)."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..experiments.check import RobotCheck

__all__ = ["add_check_argument", "robot_check_first"]


def add_check_argument(p: argparse.ArgumentParser) -> None:
    """--no-check: skip the robot check that runs first with --robot."""
    p.add_argument("--no-check", action="store_true",
                   help="skip the robot check (`deadzone-id robot check`, a few seconds) that runs first with --robot "
                   "and stops a profile whose simulated arm chatters, saturates, does not move or has a noise floor "
                   "above its torques")


def robot_check_first(spec: str | None, skip: bool = False, *, refuse: bool = True) -> RobotCheck | None:
    """Run the robot check of the profile ``spec`` and print it on stderr; None (nothing run) without ``spec`` or
    with ``skip``.

    Args:
        spec: a profile name or file (``--robot``), or None/"" (the bundled arm: not checked).
        skip: ``--no-check``.
        refuse: stop when the simulated arm is not trustworthy (else only print).

    Raises:
        ConfigError: ``refuse`` and the check found a problem; the message says what to change or how to skip.
        FileNotFoundError, ConfigError, RobotDescriptionError: the profile cannot be found or resolved.
    """
    if skip or not spec:
        return None
    from ..errors import ConfigError
    from ..experiments.check import run_check
    from ..robot_configs import load_robot

    result = run_check(load_robot(spec))
    print(result.text(), file=sys.stderr, end="", flush=True)
    if refuse and not result.trustworthy:
        raise ConfigError(f"robot check: the simulated {result.robot} is {result.verdict}; change the profile as "
                          f"the fixes above say (`deadzone-id robot check {spec}` checks it again), or pass "
                          "--no-check to run anyway")
    return result
