"""Where training data came from: bag fingerprints (sha256), simulator detection, and the URDF for rbd/hybrid."""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from ..config import load_yaml
from ..errors import ConfigError, RobotDescriptionError
from ..jsonrecord import JsonRecord

if TYPE_CHECKING:
    from ..sim.config import SimArmConfig

__all__ = ["BagSource", "detect_simulator", "fingerprint", "resolve_urdf", "training_overlap"]


@dataclass(frozen=True)
class BagSource(JsonRecord):
    """One recording trained on: ``path`` (absolute), ``sha256`` of its content and its size [bytes]."""

    path: str
    sha256: str
    bytes: int

    def to_dict(self) -> dict[str, Any]:
        """The JSON record (model.json / report.json ``sources`` entries): keys as the fields."""
        return dataclasses.asdict(self)

EPISODE_FILE = "episode.yaml"


def fingerprint(paths: Sequence[str | Path]) -> list[BagSource]:
    """One :class:`BagSource` per bag: ``path`` (absolute), ``sha256`` and ``bytes``.

    A file is hashed as is; a directory (rosbag2) is hashed over its files in sorted order (relative name and
    content), so renaming or editing any file changes the hash.

    Raises:
        FileNotFoundError: a path does not exist.
    """
    out = []
    for p in paths:
        path = Path(p)
        if not path.exists():
            raise FileNotFoundError(f"bag {path} does not exist")
        h = hashlib.sha256()
        size = 0
        files = [path] if path.is_file() else sorted(f for f in path.rglob("*") if f.is_file())
        for f in files:
            if path.is_dir():
                h.update(str(f.relative_to(path)).encode() + b"\0")
            with open(f, "rb") as fh:
                for chunk in iter(lambda: fh.read(1 << 20), b""):
                    h.update(chunk)
                    size += len(chunk)
        out.append(BagSource(str(path.resolve()), h.hexdigest(), size))
    return out


def training_overlap(training_data: dict[str, Any] | None, sources: Sequence[BagSource]) -> list[str]:
    """Paths of ``sources`` (from :func:`fingerprint`) whose sha256 is among the training bags of an artifact.

    Args:
        training_data: the artifact's ``training_data`` record (model.json), with ``sources``; None: unknown.
        sources: the bags about to be evaluated.
    """
    trained = {s.get("sha256") for s in (training_data or {}).get("sources") or [] if isinstance(s, dict)}
    return [s.path for s in sources if s.sha256 in trained]


def _episode_doc(path: Path) -> dict[str, Any] | None:
    for cand in (path / EPISODE_FILE, path.parent / EPISODE_FILE) if path.is_dir() else (path.parent / EPISODE_FILE,):
        if cand.is_file():
            try:
                doc = load_yaml(cand.read_text())
            except yaml.YAMLError as err:
                raise ConfigError(f"{cand}: malformed YAML: {err}") from err
            return doc if isinstance(doc, dict) else None
    return None


def detect_simulator(paths: Sequence[str | Path]) -> tuple[bool, SimArmConfig | None, str]:
    """Whether every bag was recorded from the simulated arm, per its ``episode.yaml``.

    A bag counts as simulated when its episode.yaml has a ``sim_config`` mapping, or a ``generator``/``source``
    naming the simulator (``sim``), or ``simulator: true``.

    Returns:
        (simulated, SimArmConfig or None, reason). The config is the first ``sim_config`` found in any bag's
        episode.yaml, also when another bag does not name the simulator: a live recording through sim_arm has no
        sim_config, and ``--simulator yes`` on it plus offline bags takes the physics from the offline ones.

    Raises:
        ConfigError: an episode.yaml is malformed, or its sim_config has unknown keys / bad values.
    """
    from ..sim.config import sim_config_from_metadata

    cfg, not_sim = None, ""
    for p in paths:
        doc = _episode_doc(Path(p))
        if doc is None:
            not_sim = not_sim or f"{p}: no {EPISODE_FILE} saying it came from the simulator"
            continue
        tag = " ".join(str(doc.get(k, "")) for k in ("generator", "source", "robot_source")).lower()
        sim = isinstance(doc.get("sim_config"), dict) or doc.get("simulator") is True or "sim" in tag
        if not sim:
            not_sim = not_sim or f"{p}: {EPISODE_FILE} does not name the simulator"
        if cfg is None and isinstance(doc.get("sim_config"), dict):
            cfg = sim_config_from_metadata(doc["sim_config"], f"{p}/{EPISODE_FILE}: sim_config")
    if not_sim:
        return False, cfg, not_sim
    return bool(paths), cfg, "episode.yaml of every bag names the simulator"


def resolve_urdf(urdf: str | Path | None, joint_names: Sequence[str], *,
                 simulated: bool = False) -> tuple[str | None, str]:
    """The URDF text for the rigid-body model and its source name.

    Only a URDF the user named is used, or the bundled arm when the data says it came from the simulator: matching
    joint names alone (joint1..3) never pick the bundled arm for someone else's robot.

    Args:
        urdf: ``--urdf``: a file path or a robot model name (:func:`deadzone_id_ros.robot.available_robots`);
            always used when given (errors about its joints surface later, naming it).
        joint_names: (J,) the data's joints.
        simulated: the data came from this project's simulator (:func:`detect_simulator`); only then, and only
            when its joints are exactly ``joint_names``, is the bundled three_dof_arm.urdf used without ``urdf``.

    Returns:
        (URDF text, source) or (None, the reason there is none).

    Raises:
        FileNotFoundError: ``urdf`` is a path that does not exist.
        RobotDescriptionError: ``urdf`` is neither a file nor a known model name (the names are listed).
    """
    from ..robot import load_robot_description, resolve_robot_model
    from ..robot.urdf_text import read_urdf

    if urdf is not None:
        entry = resolve_robot_model(urdf)
        source = entry.name if entry.origin == "file" else f"{entry.name} ({entry.urdf_path})"
        return read_urdf(entry.urdf_path), source
    if not simulated:
        return None, ("no --urdf given and the data does not say it came from the simulator; pass --urdf FILE or a "
                      "name from `deadzone-id robots`")
    from ..resources import default_urdf

    try:
        path = default_urdf()
        desc = load_robot_description(path)
    except (FileNotFoundError, RobotDescriptionError) as err:
        return None, f"the bundled URDF could not be read: {err}"
    if set(desc.joint_names) == set(joint_names):
        return read_urdf(path), str(path)
    return None, f"the bundled URDF's joints {list(desc.joint_names)} are not the data's {list(joint_names)}"
