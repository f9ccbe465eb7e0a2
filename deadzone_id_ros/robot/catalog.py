"""Robot models by name: the URDFs bundled under urdf/ and the ``example-robot-data`` collection.

``--urdf`` takes a file path or one of these names. example-robot-data (the pinocchio ecosystem's URDF collection,
PyPI package ``example-robot-data``, about 130 MB with meshes) is an optional extra: ``make demo-real`` and
``make test`` install it (requirements-robots.txt); without it only the bundled names and file paths resolve. Its
wheel ships no Python module, only files under ``cmeel.prefix/share/example-robot-data/robots/<pkg>/urdf/``; the
names are the URDF file stems (``panda``, ``ur5``, ``z1``, ...), qualified ``<pkg>/<stem>`` where two packages ship
the same stem. Meshes are not needed for dynamics: models are loaded with pinocchio without geometry.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..errors import RobotDescriptionError

__all__ = ["ERD_DISTRIBUTION", "RobotModelFile", "available_robots", "resolve_robot_model"]

#: PyPI distribution name of the URDF collection.
ERD_DISTRIBUTION = "example-robot-data"


@dataclass(frozen=True)
class RobotModelFile:
    """Where a named robot model lives.

    Attributes:
        name: the name ``--urdf`` accepts (or the file path as given).
        urdf_path: the URDF file.
        package_dirs: folders that resolve ``package://`` mesh paths (only needed for geometry, never for dynamics).
        origin: ``"bundled"``, ``"example-robot-data"`` or ``"file"``.
    """

    name: str
    urdf_path: Path
    package_dirs: tuple[Path, ...]
    origin: str


def _bundled() -> dict[str, RobotModelFile]:
    from ..resources import share_dir

    try:
        folder = share_dir() / "urdf"
    except FileNotFoundError:
        return {}
    return {p.stem: RobotModelFile(p.stem, p, (folder,), "bundled") for p in sorted(folder.glob("*.urdf"))}


def _example_robot_data() -> dict[str, RobotModelFile]:
    import importlib.metadata as md

    try:
        dist = md.distribution(ERD_DISTRIBUTION)
    except md.PackageNotFoundError:
        return {}
    files = sorted(str(f) for f in (dist.files or ()) if str(f).endswith(".urdf") and "/robots/" in str(f))
    stems: dict[str, list[str]] = {}
    for f in files:
        stems.setdefault(Path(f).stem, []).append(f)
    out: dict[str, RobotModelFile] = {}
    for stem, paths in stems.items():
        for f in paths:
            path = Path(str(dist.locate_file(f)))
            share = path.parents[3]  # <share>/example-robot-data/robots/<pkg>/urdf/<stem>.urdf
            pkg = path.parents[1].name.removesuffix("_description")
            name = stem if len(paths) == 1 else f"{pkg}/{stem}"
            out[name] = RobotModelFile(name, path, (share, share / "example-robot-data" / "robots"),
                                       ERD_DISTRIBUTION)
    return out


def available_robots() -> dict[str, RobotModelFile]:
    """Every robot model name, sorted: the bundled URDFs, then example-robot-data's (when installed).

    A bundled name wins over an example-robot-data name it collides with; the latter stays reachable as
    ``example-robot-data/<name>``.
    """
    out = dict(_bundled())
    for name, entry in _example_robot_data().items():
        key = name if name not in out else f"{ERD_DISTRIBUTION}/{name}"
        out[key] = RobotModelFile(key, entry.urdf_path, entry.package_dirs, entry.origin)
    return dict(sorted(out.items()))


def resolve_robot_model(spec: str | Path) -> RobotModelFile:
    """The URDF named by ``spec``: an existing file path (a xacro file expanded with its default arguments,
    :func:`~deadzone_id_ros.robot.urdf_text.urdf_file`), else a name from :func:`available_robots`.

    Raises:
        FileNotFoundError: ``spec`` ends in .urdf, .xacro or .xml (a path, not a name) and does not exist.
        RobotDescriptionError: xacro cannot expand the file (names the reason).
        RobotDescriptionError: ``spec`` is neither an existing file nor a known name; the message lists the names
            (and says how to install example-robot-data when it is missing).
    """
    from .urdf_text import urdf_file

    path = Path(spec)
    if path.is_file():  # a xacro file: its expansion (default arguments), a plain URDF in the cache
        return RobotModelFile(str(spec), urdf_file(path), (path.parent,), "file")
    names = available_robots()
    if str(spec) in names:
        return names[str(spec)]
    if path.suffix.lower() in (".urdf", ".xml", ".xacro"):
        raise FileNotFoundError(f"URDF {path} does not exist")
    hint = ""
    if not any(e.origin == ERD_DISTRIBUTION for e in names.values()):
        hint = (f"; {ERD_DISTRIBUTION} is not installed (`make demo-real` or `make test` installs it, or "
                f"`pip install -r requirements-robots.txt -c constraints.txt`)")
    raise RobotDescriptionError(f"--urdf {spec!r} is neither a file nor a known robot model (known: "
                                f"{', '.join(names) or 'none'}){hint}")
