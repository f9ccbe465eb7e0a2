"""The identified rigid body as a URDF (``deadzone-id export --urdf``): any URDF consumer (pinocchio, KDL, a C++
ros2_control controller) can then run the model the comparison identified.

What is written, starting from the artifact's own URDF:

- each recorded joint's child link gets the identified body as its ``<inertial>``: mass m, centre of mass c = h / m
  and the inertia about c, I_c = I_o - m (|c|^2 1 - c c^T) (pinocchio's ``Inertia.FromDynamicParameters``), in the
  link frame (the joint frame); links welded to it by fixed joints lose their own ``<inertial>`` (the identified
  body is the whole welded group, as pinocchio merges it);
- each recorded joint gets ``<dynamics damping="Fv" friction="Fc"/>``: the identified viscous and Coulomb friction.

So ``pinocchio.rnea`` of the written URDF gives the identified model's rigid-body torque, and adding
``damping dq + friction tanh(dq / eps) + armature ddq`` per joint gives its full torque. The rotor inertia
(armature) has no URDF element: it is listed in the result (:class:`UrdfExport`), not in the file; the smooth
sign's eps is the artifact's ``friction_eps``. A negative identified friction (a link-side sensor on an arm moved
from outside, see :mod:`.rbd`) has no URDF meaning: ``<dynamics>`` holds friction magnitudes, and URDF readers refuse a
negative one (pinocchio: "min_dry_friction greater than max_dry_friction"). Such a value is written as 0 and listed
in the result (:attr:`UrdfExport.clipped`, printed by the command), and the check compares the file with the model
without that part.

Only a physically consistent body has a mass, a centre of mass and an inertia (Wensing, Kim, Slotine 2018), so the
export refuses a model with an inconsistent body (fit it as ``rbd_consistent``), a base-parameter fit (bodies not
separately identified), a gravity-only model, and a model whose URDF had joints locked (their bodies were merged at
one pose).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..errors import ArtifactError
from .rbd import RigidBodyModel

__all__ = ["UrdfExport", "export_rigid_body_urdf", "identified_urdf"]

_PARAMS = ("m", "mcx", "mcy", "mcz", "Ixx", "Ixy", "Iyy", "Ixz", "Iyz", "Izz")


@dataclass(frozen=True)
class UrdfExport:
    """Result of :func:`export_rigid_body_urdf`.

    Attributes:
        path: the URDF written.  armature: joint -> identified rotor inertia [kg·m²] (not in the URDF).
        friction_eps: joint -> velocity scale of the smooth sign tanh(dq / eps) [rad/s].
        max_abs_diff: largest |pinocchio on the file + friction + armature - the identified model| over a seeded
            random batch [N·m] (the model without its clipped friction).  ok: within 1e-6 relative.
        clipped: joint -> its identified (viscous [N·m·s/rad], Coulomb [N·m]) where one of them was negative and is
            written as 0 (empty: every friction written as identified).
    """

    path: Path
    armature: dict[str, float]
    friction_eps: dict[str, float]
    max_abs_diff: float
    ok: bool
    clipped: dict[str, tuple[float, float]] = field(default_factory=dict)


def _fmt(v: float) -> str:
    return f"{float(v):.12g}"


def identified_urdf(rbd: RigidBodyModel, source: str = "<model>") -> str:
    """The artifact's URDF text with the identified inertials and ``<dynamics>`` of ``rbd`` (module docstring).

    Raises:
        ArtifactError: a base-parameter or gravity-only model, Stribeck or load friction (no URDF element), locked
            joints, or a physically inconsistent body
            (named), the URDF's joint is not found, or the URDF text is not well-formed XML.
    """
    import pinocchio as pin

    reg = rbd.regressor
    if rbd.gravity_only:
        raise ArtifactError(f"{source}: the gravity baseline identifies nothing; export an rbd model")
    if reg.friction is not None:
        raise ArtifactError(f"{source}: its Stribeck / load-dependent friction has no URDF element (<dynamics> holds "
                            "viscous and Coulomb friction only); export an rbd or rbd_consistent model")
    if reg.locked:
        raise ArtifactError(f"{source}: URDF joints {sorted(reg.locked)} were locked (their bodies merged at one "
                            "pose): a URDF of the identified body cannot be written")
    p = rbd.parameters()
    bodies = [str(reg.model.names[k]) for k in range(1, reg.model.njoints)]
    missing = [b for b in bodies if any(f"{b}.{n}" not in p for n in _PARAMS)]
    if missing:
        raise ArtifactError(f"{source}: bodies {missing} are not separately identified (a base-parameter fit); "
                            "fit every parameter (rbd or rbd_consistent)")
    bad = rbd.inconsistent_bodies()
    if bad:
        raise ArtifactError(f"{source}: bodies {bad} are not physically consistent (no mass, centre of mass and "
                            "inertia have these parameters): fit the model as rbd_consistent")
    try:
        root = ET.fromstring(reg.urdf_xml)
    except ET.ParseError as err:  # pinocchio's parser accepts what XML does not (e.g. "--" inside a comment)
        raise ArtifactError(f"{source}: its URDF is not well-formed XML ({err}); fix the file the model was "
                            "trained with") from err
    joints = {j.get("name"): j for j in root.findall("joint")}  # not the <ros2_control> block's joints
    links = {ln.get("name"): ln for ln in root.findall("link")}
    fixed_children: dict[str, list[str]] = {}
    for j in joints.values():
        if j.get("type") == "fixed":
            parent, child = j.find("parent"), j.find("child")
            if parent is not None and child is not None:
                fixed_children.setdefault(str(parent.get("link")), []).append(str(child.get("link")))
    for data_joint, urdf_joint in zip(reg.joint_names, reg.robot.urdf_joint_names):
        body = str(reg.model.names[reg.model.getJointId(urdf_joint)])
        el = joints.get(urdf_joint)
        child = el.find("child") if el is not None else None
        if el is None or child is None or child.get("link") not in links:
            raise ArtifactError(f"{source}: joint {urdf_joint!r} or its child link is not in the URDF")
        link = links[str(child.get("link"))]
        inertia = pin.Inertia.FromDynamicParameters(np.array([p[f"{body}.{n}"] for n in _PARAMS]))
        welded, todo = [], list(fixed_children.get(str(link.get("name")), []))
        while todo:
            name = todo.pop()
            welded.append(name)
            todo += fixed_children.get(name, [])
        for name in [str(link.get("name")), *welded]:
            for old in links[name].findall("inertial"):
                links[name].remove(old)
        c, ic = np.asarray(inertia.lever), np.asarray(inertia.inertia)
        new = ET.SubElement(link, "inertial")
        ET.SubElement(new, "origin", xyz=" ".join(_fmt(v) for v in c), rpy="0 0 0")
        ET.SubElement(new, "mass", value=_fmt(inertia.mass))
        ET.SubElement(new, "inertia", ixx=_fmt(ic[0, 0]), ixy=_fmt(ic[0, 1]), ixz=_fmt(ic[0, 2]),
                      iyy=_fmt(ic[1, 1]), iyz=_fmt(ic[1, 2]), izz=_fmt(ic[2, 2]))
        for old in el.findall("dynamics"):
            el.remove(old)
        ET.SubElement(el, "dynamics", damping=_fmt(max(0.0, p.get(f"{data_joint}.viscous", 0.0))),
                      friction=_fmt(max(0.0, p.get(f"{data_joint}.coulomb", 0.0))))
    ET.indent(root)
    return ET.tostring(root, encoding="unicode") + "\n"


def export_rigid_body_urdf(rbd: RigidBodyModel, path: str | Path, source: str = "<model>") -> UrdfExport:
    """Write :func:`identified_urdf` to ``path`` and check it: pinocchio's RNEA on the written file plus each
    joint's damping dq + friction tanh(dq / eps) + armature ddq against ``rbd.predict`` on 16 seeded random states.

    Raises:
        ArtifactError: as :func:`identified_urdf`.
    """
    import pinocchio as pin

    from .rbd import RigidBodyRegressor

    text = identified_urdf(rbd, source)
    target = Path(path)
    target.write_text(text)
    reg = rbd.regressor
    p = rbd.parameters()
    again = RigidBodyRegressor(text, reg.joint_names, reg.friction_eps, source=str(target),
                               joint_map=reg.joint_map or None)
    q, dq, ddq = reg.random_states(16, seed=1)
    model, data = again.model, again.model.createData()
    conf = again.robot.configuration(q)
    got = np.empty_like(q)
    v, a = np.zeros(model.nv), np.zeros(model.nv)
    idx = again.robot.idx_v
    for i in range(len(q)):
        v[idx], a[idx] = dq[i], ddq[i]
        got[i] = pin.rnea(model, data, conf[i], v, a)[idx]
    names = reg.joint_names
    damping = np.asarray(model.damping)[idx]
    friction = np.asarray(model.friction)[idx]
    armature = np.array([p.get(f"{n}.armature", 0.0) for n in names])
    got += damping * dq + friction * np.tanh(dq / reg.friction_eps) + armature * ddq
    identified = np.array([[p.get(f"{n}.viscous", 0.0), p.get(f"{n}.coulomb", 0.0)] for n in names])
    lost = np.minimum(identified, 0.0)  # the negative friction written as 0
    want = rbd.predict(q, dq, ddq) - lost[:, 0] * dq - lost[:, 1] * np.tanh(dq / reg.friction_eps)
    err = float(np.abs(got - want).max())
    clipped = {n: (float(v), float(c)) for n, (v, c) in zip(names, identified) if min(v, c) < 0}
    return UrdfExport(target, dict(zip(names, armature.tolist())), dict(zip(names, reg.friction_eps.tolist())),
                      err, err <= 1e-6 * max(1.0, float(np.abs(want).max())), clipped)
