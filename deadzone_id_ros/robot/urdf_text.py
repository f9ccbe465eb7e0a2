"""The one loader of robot description files: URDF, or xacro expanded by the ``xacro`` package.

Most ROS robot descriptions are xacro (``*.urdf.xacro``): macros, includes and arguments that a URDF parser does not
understand. Pinocchio and MuJoCo read such a file as plain URDF and silently drop every macro call, so a gripper
included by a macro vanished from the rigid body (pinocchio issue 2506, urdfdom issue 100). Every URDF read in this
package goes through :func:`read_urdf` (text) or :func:`urdf_file` (a plain URDF file, for readers that take a path):
a file named ``*.xacro``, or whose text holds xacro markup (the ``xacro`` namespace, ``<xacro:...>`` elements), is
expanded with the ``xacro`` package (PyPI; the same code as ROS 2's ``xacro`` command) with the user's arguments
(``name:=value`` on the xacro command line; a robot profile's ``xacro_args``). What cannot be expanded is refused
with the reason: a ``$(find pkg)`` of a package that is not installed (named), an argument without a value, a
malformed file.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Mapping
from pathlib import Path

from ..errors import RobotDescriptionError

__all__ = ["is_xacro", "read_urdf", "urdf_file"]

_XACRO_MARKUP = re.compile(r"xmlns:xacro\s*=|<xacro:")
_MISSING_PACKAGE = re.compile(r"package '([^']+)' not found")
_ARG = re.compile(r"<xacro:arg\s+[^>]*?name\s*=\s*[\"']([^\"']+)[\"']")


def is_xacro(path: Path, text: str) -> bool:
    """True when ``path`` ends in ``.xacro`` or ``text`` holds xacro markup (namespace or ``<xacro:`` elements)."""
    return path.suffix.lower() == ".xacro" or bool(_XACRO_MARKUP.search(text))


def read_urdf(path: str | Path, xacro_args: Mapping[str, str] | None = None) -> str:
    """The URDF text of ``path``, expanded by xacro when it is a xacro file (:func:`is_xacro`).

    Args:
        path: a URDF or xacro file.
        xacro_args: xacro arguments ``name -> value`` (``<xacro:arg>`` values, as ``name:=value`` on the xacro
            command line); given for a plain URDF they are refused.

    Returns:
        URDF XML text.

    Raises:
        FileNotFoundError: the file does not exist.
        RobotDescriptionError: xacro cannot expand the file (names the package of a ``$(find pkg)`` that is not
            installed, or xacro's own message and the fix), an argument the file does not declare, or
            ``xacro_args`` given for a file that is not xacro.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"URDF {path} does not exist")
    text = path.read_text()
    if not is_xacro(path, text):
        if xacro_args:
            raise RobotDescriptionError(f"{path}: xacro arguments {sorted(xacro_args)} given, but the file is plain "
                                        "URDF (no xacro markup)")
        return text
    return _expand(path, {str(k): str(v) for k, v in (xacro_args or {}).items()})


def _expand(path: Path, args: dict[str, str]) -> str:
    import xml.parsers.expat

    import xacro
    from ament_index_python.packages import PackageNotFoundError

    try:
        xacro.all_includes.clear()  # xacro keeps the files it included in a module-level list
        doc = xacro.process_file(str(path), mappings=args)
    except (xacro.XacroException, PackageNotFoundError, xml.parsers.expat.ExpatError, OSError, RuntimeError,
            NameError, KeyError, ValueError, TypeError, SyntaxError) as err:
        missing = _MISSING_PACKAGE.search(str(err))
        if missing:
            pkg = missing.group(1)
            raise RobotDescriptionError(
                f"{path}: xacro cannot expand it: $(find {pkg}) names ROS package {pkg!r}, which is not installed "
                f"(searched AMENT_PREFIX_PATH={os.environ.get('AMENT_PREFIX_PATH', '')!r}); install the package "
                "(or add its prefix to AMENT_PREFIX_PATH), or expand the file with `xacro` where it is installed "
                "and pass the URDF") from err
        raise RobotDescriptionError(
            f"{path}: xacro cannot expand it: {err}; give xacro arguments in the robot profile's xacro_args "
            "({name: value}), or expand the file with `xacro` and pass the URDF") from err
    declared = {m.group(1) for f in (path, *map(Path, xacro.all_includes)) if Path(f).is_file()
                for m in _ARG.finditer(Path(f).read_text())}
    unknown = sorted(set(args) - declared)
    if unknown:
        raise RobotDescriptionError(f"{path}: xacro argument(s) {unknown} are not declared by the file or its "
                                    f"includes (<xacro:arg name=...>: {sorted(declared) or 'none'})")
    return str(doc.toprettyxml(indent="  "))


def urdf_file(path: str | Path, xacro_args: Mapping[str, str] | None = None) -> Path:
    """A plain URDF file for ``path``: ``path`` itself when it is URDF, else its xacro expansion written to the cache
    (``$XDG_CACHE_HOME/deadzone_id_ros/xacro/``, default ``~/.cache``; named by a hash of the text and arguments,
    so it is written once) for readers that take a file (MuJoCo, configs that store a path).

    Raises:
        FileNotFoundError, RobotDescriptionError: as :func:`read_urdf`.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"URDF {path} does not exist")
    if not is_xacro(path, path.read_text()):
        read_urdf(path, xacro_args)  # refuses xacro_args for a plain URDF
        return path
    text = read_urdf(path, xacro_args)
    digest = hashlib.sha256(text.encode()).hexdigest()[:16]
    folder = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "deadzone_id_ros" / "xacro"
    folder.mkdir(parents=True, exist_ok=True)
    stem = path.name.removesuffix(".xacro").removesuffix(".urdf")
    out = folder / f"{stem}-{digest}.urdf"
    if not out.is_file():
        tmp = out.with_suffix(f".tmp{os.getpid()}")
        tmp.write_text(text)
        tmp.replace(out)
    return out
