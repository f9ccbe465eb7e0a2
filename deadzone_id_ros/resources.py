"""Locate the package's share files (urdf/, config/, launch/) installed or in a source checkout."""

from __future__ import annotations

import sys
from pathlib import Path

__all__ = ["PACKAGE_NAME", "default_urdf", "share_dir", "share_file"]

PACKAGE_NAME = "deadzone_id_ros"


def share_dir() -> Path:
    """Return the package share directory.

    Order: the ament index (``$AMENT_PREFIX_PATH/share/deadzone_id_ros``, as after ``colcon build``), then
    ``sys.prefix/share/deadzone_id_ros`` (``pip install .`` into a venv), then the source checkout that holds this
    module. Raises FileNotFoundError if none exists.
    """
    try:
        from ament_index_python.packages import PackageNotFoundError, get_package_share_directory

        try:
            return Path(get_package_share_directory(PACKAGE_NAME))
        except (PackageNotFoundError, KeyError, ValueError, OSError):
            pass
    except ImportError:
        pass
    # `pip install .` puts the data files under <prefix>/share/<pkg>: usable even without AMENT_PREFIX_PATH.
    installed = Path(sys.prefix) / "share" / PACKAGE_NAME
    if (installed / "urdf").is_dir() and (installed / "config").is_dir():
        return installed
    source_root = Path(__file__).resolve().parent.parent
    if (source_root / "urdf").is_dir() and (source_root / "config").is_dir():
        return source_root
    raise FileNotFoundError(
        f"cannot find the share directory of {PACKAGE_NAME}: set AMENT_PREFIX_PATH to the install prefix "
        "(for this project's venv: export AMENT_PREFIX_PATH=$PWD/.venv), or install the package with `make install`"
    )


def share_file(*parts: str) -> Path:
    """Return ``share_dir()/parts...``; raises FileNotFoundError naming the path if it does not exist."""
    path = share_dir().joinpath(*parts)
    if not path.exists():
        raise FileNotFoundError(f"{path} does not exist in the {PACKAGE_NAME} share directory")
    return path


def default_urdf() -> Path:
    """Return the path of the bundled 3-DOF arm URDF (``urdf/three_dof_arm.urdf``)."""
    return share_file("urdf", "three_dof_arm.urdf")
