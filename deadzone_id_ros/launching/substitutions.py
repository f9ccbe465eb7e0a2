"""Substitutions of the ROS 2 launch front end: ``$(var NAME)``, ``$(find-pkg-share PKG)``, ``$(env NAME [DEFAULT])``.

Exactly these three are supported (they are all the project's launch files use); any other substitution, an
unbalanced ``$(``, or a wrong number of arguments raises :class:`~deadzone_id_ros.errors.LaunchError` naming the
place (file and entry) given by the caller. Substitutions nest (``$(var $(env NAME))``) and arguments may be quoted
with single or double quotes, as in the launch grammar (launch/launch/frontend/grammar.lark).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from ..errors import LaunchError

__all__ = ["SUPPORTED_SUBSTITUTIONS", "evaluate", "find_package_share"]

SUPPORTED_SUBSTITUTIONS = ("env", "find-pkg-share", "var")


def find_package_share(package: str) -> Path:
    """Return the share directory of ``package`` like ``$(find-pkg-share PKG)`` does.

    Looks the package up in the ament index (``$AMENT_PREFIX_PATH``); for this project's own package it falls back
    to the source checkout (editable install), through :func:`deadzone_id_ros.resources.share_dir`.

    Raises:
        LaunchError: the package is not in the ament index.
    """
    from ..resources import PACKAGE_NAME, share_dir

    if package == PACKAGE_NAME:
        try:
            return share_dir()
        except FileNotFoundError as err:
            raise LaunchError(str(err)) from err
    try:
        from ament_index_python.packages import PackageNotFoundError, get_package_share_directory
    except ImportError as err:  # pragma: no cover - ament_index_python is a declared dependency
        raise LaunchError(f"cannot look up package '{package}': ament_index_python is not installed") from err
    try:
        return Path(get_package_share_directory(package))
    except (PackageNotFoundError, KeyError, ValueError, OSError) as err:
        raise LaunchError(
            f"package '{package}' not found in the ament index (AMENT_PREFIX_PATH="
            f"{os.environ.get('AMENT_PREFIX_PATH', '')!r})"
        ) from err


def evaluate(text: str, variables: Mapping[str, str], where: str) -> str:
    """Expand every substitution in ``text``.

    Args:
        text: a string from a launch file, e.g. ``"$(find-pkg-share deadzone_id_ros)/config/sim_arm.yaml"``.
        variables: launch configurations (declared args and lets) visible here, name -> value.
        where: the place, for error messages (e.g. ``"sim.launch.yaml: launch[2] (node sim_arm): param[0].from"``).

    Returns:
        the expanded string.

    Raises:
        LaunchError: unsupported substitution, undefined variable, unset environment variable without default,
            unknown package, or malformed syntax; the message names ``where``.
    """
    out, pos = _expand(text, 0, variables, where, nested=False)
    if pos != len(text):  # pragma: no cover - _expand consumes the whole top-level string
        raise LaunchError(f"{where}: cannot parse {text!r} after position {pos}")
    return out


def _expand(text: str, pos: int, variables: Mapping[str, str], where: str, *, nested: bool) -> tuple[str, int]:
    """Expand from ``pos`` to the end of ``text`` (top level) or to the ``)`` closing a substitution (nested)."""
    parts: list[str] = []
    while pos < len(text):
        if text.startswith("$(", pos):
            value, pos = _substitution(text, pos + 2, variables, where)
            parts.append(value)
        elif nested and text[pos] == ")":
            return "".join(parts), pos
        else:
            parts.append(text[pos])
            pos += 1
    if nested:
        raise LaunchError(f"{where}: unbalanced '$(' in {text!r}")
    return "".join(parts), pos


def _substitution(text: str, pos: int, variables: Mapping[str, str], where: str) -> tuple[str, int]:
    """Parse one ``$(name args...)`` whose body starts at ``pos``; return its value and the index after ``)``."""
    tokens: list[str] = []
    current: list[str] = []
    have_token = False
    while True:
        if pos >= len(text):
            raise LaunchError(f"{where}: unbalanced '$(' in {text!r}")
        ch = text[pos]
        if ch == ")":
            pos += 1
            break
        if ch.isspace():
            if have_token:
                tokens.append("".join(current))
                current, have_token = [], False
            pos += 1
        elif ch in "'\"":
            end = text.find(ch, pos + 1)
            if end < 0:
                raise LaunchError(f"{where}: unterminated quote in {text!r}")
            inner, _ = _expand(text[pos + 1:end], 0, variables, where, nested=False)
            current.append(inner)
            have_token = True
            pos = end + 1
        elif text.startswith("$(", pos):
            value, pos = _substitution(text, pos + 2, variables, where)
            current.append(value)
            have_token = True
        else:
            current.append(ch)
            have_token = True
            pos += 1
    if have_token:
        tokens.append("".join(current))
    if not tokens:
        raise LaunchError(f"{where}: empty substitution '$()' in {text!r}")
    kind, args = tokens[0], tokens[1:]
    if kind == "var":
        _arity(kind, args, 1, 1, where)
        if args[0] not in variables:
            raise LaunchError(
                f"{where}: $(var {args[0]}) is not a declared launch argument or let; known: {sorted(variables)}"
            )
        return variables[args[0]], pos
    if kind == "env":
        _arity(kind, args, 1, 2, where)
        env_value = os.environ.get(args[0])
        if env_value is None:
            if len(args) == 1:
                raise LaunchError(f"{where}: environment variable {args[0]} is not set and $(env) has no default")
            env_value = args[1]
        return env_value, pos
    if kind == "find-pkg-share":
        _arity(kind, args, 1, 1, where)
        try:
            return str(find_package_share(args[0])), pos
        except LaunchError as err:
            raise LaunchError(f"{where}: $(find-pkg-share {args[0]}): {err}") from err
    raise LaunchError(
        f"{where}: unsupported substitution $({kind} ...); this launcher supports only "
        f"{', '.join(f'$({s})' for s in SUPPORTED_SUBSTITUTIONS)}"
    )


def _arity(kind: str, args: list[str], low: int, high: int, where: str) -> None:
    if not low <= len(args) <= high:
        expected = str(low) if low == high else f"{low} to {high}"
        raise LaunchError(f"{where}: $({kind}) takes {expected} argument(s), got {len(args)}: {args}")
