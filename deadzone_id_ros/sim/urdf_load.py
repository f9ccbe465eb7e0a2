"""A URDF as MuJoCo loads it for dynamics: mesh geometry left out.

MuJoCo resolves mesh files itself and knows no ROS ``package://`` paths (mujoco issue 1432), so a robot URDF from a
description package (``ur5_robot``, ``panda`` from ``deadzone-id robots``) failed to load. The simulated arm needs
the kinematic tree, the inertials, the joints and their limits and dynamics, never the meshes: every ``<visual>`` and
``<collision>`` whose geometry is a mesh is dropped before MuJoCo reads the file. A URDF without meshes (the bundled
arm) is loaded from its file unchanged.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import mujoco

__all__ = ["spec_without_meshes"]


def spec_without_meshes(urdf: Path) -> tuple[mujoco.MjSpec, int]:
    """``mujoco.MjSpec`` of ``urdf`` with its mesh visuals and collisions removed, and how many were removed.

    Raises:
        ValueError: MuJoCo cannot parse the file (as ``MjSpec.from_file`` raises), or the URDF is not valid XML.
    """
    import mujoco

    from ..robot.urdf_text import read_urdf

    text = read_urdf(urdf)  # xacro expanded
    if "<mesh" not in text:
        spec = mujoco.MjSpec.from_string(text)
        spec.modelfiledir = str(urdf.parent)
        return spec, 0
    try:
        root = ET.fromstring(text)
    except ET.ParseError as err:
        raise ValueError(f"not valid XML: {err}") from err
    removed = 0
    for link in root.iter("link"):
        for child in list(link):
            if child.tag in ("visual", "collision") and child.find("geometry/mesh") is not None:
                link.remove(child)
                removed += 1
    return mujoco.MjSpec.from_string(ET.tostring(root, encoding="unicode")), removed
