"""Every fixed-base serial arm of the robot catalog with no hand-written settings: robot check, then a quick demo.

The successor of bench/arms_table.py for issue 36. For each catalog robot (``deadzone-id robots``; ``--robots``
picks some) the derived profile ``catalog:NAME`` is resolved (a robot that is not a fixed-base serial arm is listed
with the reason it is refused), checked with ``deadzone-id robot check catalog:NAME --json`` (a few seconds), and,
with ``--demo`` for the arms the check accepts, run through ``deadzone-id demo --robot catalog:NAME --quick`` into
``OUT/NAME`` (``--demo NAME ...``: only those arms). Every figure comes from those commands' JSON files: the check's
verdict and findings, its noise floor and the URDF nominal rigid body's torque error on the same samples (mean over
joints), the demo's masked and conventional usable fractions, whether its report refused the torque comparison, and
the closed-loop tracking RMSE of pd_dob and of ctc_dob with the nominal rigid body (mean over joints and held-out
seeds).

Every check runs first, then the demos one at a time. Writes OUT/catalog_arms.json, the page ``--page`` (default
docs/arms.md), generated whole, and the arms table of ``--readme`` (default README.md, between its markers) after
each arm, so an interrupted run leaves the arms it finished. A quick demo takes a
few minutes on the shared 2-core machine; ``--demo`` with many arms takes long (run a few with ``--robots``).
``--from-json FILE`` rebuilds the page from an earlier run without running anything (the run of docs/arms.md:
bench/catalog_arms_results.json). ``--from-json FILE --demo NAME ...`` runs those arms' demos again into that
record (after a fix), keeping every other row; the page names each rerun with its date and commit.

Usage: ``python bench/catalog_arms.py [--out out/catalog_arms] [--robots NAME ...] [--demo [NAME ...]] [--page FILE]
[--from-json FILE [--demo NAME ...]]``
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

EXE = str(Path(sys.prefix) / "bin" / "deadzone-id")


def _classify() -> tuple[list[str], dict[str, str], dict[str, str]]:
    """(catalog arms, {non-arm: why refused}, {robot whose URDF cannot be used as it is: why}) over the catalog."""
    from deadzone_id_ros.errors import ConfigError, DeadzoneIdError
    from deadzone_id_ros.robot import available_robots, resolve_profile

    arms, refused, unusable = [], {}, {}
    for name in available_robots():
        try:
            resolve_profile(f"catalog:{name}")
            arms.append(name)
        except ConfigError as err:
            refused[name] = str(err).split(": ", 2)[-1].split(". Write a profile")[0]
        except DeadzoneIdError as err:
            unusable[name] = str(err).replace(str(Path(sys.prefix)), "$VENV")
    return arms, refused, unusable


def _check(name: str, out: Path) -> dict[str, Any]:
    """``robot check catalog:NAME --json``: verdict, findings, mean noise floor and nominal rigid-body error."""
    path = out / f"{name.replace('/', '_')}_check.json"
    proc = subprocess.run([EXE, "robot", "check", f"catalog:{name}", "--json", str(path)], capture_output=True,
                          text=True)
    if not path.is_file():  # the profile could not be derived or simulated (an effort limit of 0, a MuJoCo error)
        err = proc.stderr.split("deadzone-id robot: error: ", 1)[-1].strip().replace("\n", " ")
        return {"verdict": "refused", "why": err.replace(str(Path(sys.prefix)), "$VENV")}
    doc = json.loads(path.read_text())
    joints = doc["joints"]
    return {"verdict": doc["verdict"], "why": "; ".join(f"{f['check']} ({', '.join(f['joints'])}): {f['fix']}"
                                                       for f in doc["findings"]),
            "joints": len(joints), "noise_floor": sum(j["noise_floor"] for j in joints) / len(joints),
            "nominal_rbd": sum(j["nominal_rbd_rmse"] for j in joints) / len(joints),
            "inertia_gain": doc["inertia_gain_max"]}


def _demo(name: str, out: Path) -> dict[str, Any]:
    """``demo --robot catalog:NAME --quick``: usable fractions, refusal, closed-loop tracking [mrad]."""
    demo = out / name.replace("/", "_")
    log = out / f"{name.replace('/', '_')}_demo.log"
    with log.open("w") as f:
        proc = subprocess.run([EXE, "demo", "--robot", f"catalog:{name}", "--quick", "--force", "--out", str(demo)],
                              stdout=f, stderr=subprocess.STDOUT)
    if proc.returncode != 0 or not (demo / "report.json").is_file():
        return {"demo": f"failed (rc {proc.returncode}, {log.name})"}
    rep = json.loads((demo / "report.json").read_text())
    methods, closed = rep["compare"]["methods"], rep["closed_loop"]
    return {"demo": "ok", "usable_masked": methods.get("masked", {}).get("usable_fraction"),
            "usable_conventional": methods.get("conventional", {}).get("usable_fraction"),
            "compare_noise_floor": (rep["compare"].get("noise_floor") or {}).get("rmse_mean"),
            "comparison_refused": rep.get("comparison_refused", ""),
            "pd_dob_mrad": closed.get("pd_dob", {}).get("tracking_rmse_mean_mrad"),
            "ctc_dob_nominal_mrad": closed.get("ctc_dob_rbd_nominal", {}).get("tracking_rmse_mean_mrad"),
            "seconds": rep.get("seconds")}


def _num(v: Any, fmt: str) -> str:
    return "—" if v is None else format(v, fmt)


def page(doc: dict[str, Any]) -> str:
    """docs/arms.md from the run's record."""
    lines = ["# Catalog arms with no hand-written settings", "",
             "Generated by `bench/catalog_arms.py` (do not edit by hand) on "
             f"{doc['date']}, package commit {doc['commit']}, load average {doc['loadavg'][0]:.1f} before the run. "
             "Each arm is the catalog robot's derived profile `catalog:NAME` (docs/own-arm.md explains the "
             "derivation): its joints in series from the base, the gripper locked, rotor inertia, gains, DOB "
             "cutoff and simulated noise from the default rules. Figures: `deadzone-id robot check catalog:NAME` "
             "(4 s closed loop with pd_dob, seed 1; noise floor: the simulator's own inverse dynamics on measured "
             "q, dq and Savitzky–Golay ddq against the recorded torque on moving samples; nominal rbd: the URDF's "
             "rigid body on the same samples; both mean over joints) and, where run, `deadzone-id demo --robot "
             "catalog:NAME --quick` (usable: masked = moving (sample, joint) pairs, conventional = samples "
             "with every joint moving; tracking: mean over joints and the held-out seeds)."
             + "".join(f" The demo of {n} was run again on {r['date']} at commit {r['commit']}."
                       for n, r in doc.get("reruns", {}).items()), "",
             "| arm | joints | robot check | noise floor / nominal rbd [N·m] | usable masked | usable conventional | "
             "pd_dob [mrad] | ctc_dob nominal rbd [mrad] | torque table |",
             "|---|---|---|---|---|---|---|---|---|"]
    for name, r in doc["arms"].items():
        floor = (f"{r['noise_floor']:.3g} / {r['nominal_rbd']:.3g}" if r.get("noise_floor") is not None else "—")
        table = "—" if r.get("demo") is None else (
            r["demo"] if r["demo"] != "ok" else ("refused" if r.get("comparison_refused") else "shown"))
        lines.append(f"| {name} | {r.get('joints', '—')} | {r['verdict']} | {floor} | "
                     f"{_num(r.get('usable_masked'), '.1%')} | {_num(r.get('usable_conventional'), '.1%')} | "
                     f"{_num(r.get('pd_dob_mrad'), '.2f')} | {_num(r.get('ctc_dob_nominal_mrad'), '.2f')} | "
                     f"{table} |")
    fixes = [(n, r["why"]) for n, r in doc["arms"].items() if r.get("why")]
    if fixes:
        lines += ["", "## What the robot check says to change", ""]
        lines += [f"- **{n}**: {why}" for n, why in fixes]
    if doc.get("unusable"):
        lines += ["", "## Catalog robots whose URDF cannot be used as it is", ""]
        lines += [f"- **{n}**: {why}" for n, why in doc["unusable"].items()]
    if doc.get("refused"):
        lines += ["", "## Catalog robots that are not fixed-base serial arms", "",
                  "`--robot NAME` refuses these with the reason below; write a profile naming the joints of one "
                  "chain to control part of one (docs/own-arm.md).", ""]
        lines += [f"- **{n}**: {why}" for n, why in doc["refused"].items()]
    return "\n".join(lines) + "\n"


def _stamp() -> dict[str, str]:
    """{"date": now (UTC, ISO 8601), "commit": the checkout's short commit, "?" outside git} of a run."""
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout
    return {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "commit": commit.strip() or "?"}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("out/catalog_arms"))
    parser.add_argument("--robots", nargs="+", default=None, help="catalog arms to run (default: every one)")
    parser.add_argument("--demo", nargs="*", default=None, metavar="NAME",
                        help="also run the quick demo of each arm the check accepts (of these names, when given)")
    parser.add_argument("--page", type=Path, default=Path("docs/arms.md"))
    parser.add_argument("--readme", type=Path, default=Path("README.md"),
                        help="README whose arms table (between the markers) is rewritten")
    parser.add_argument("--from-json", type=Path, help="rebuild the page from an earlier catalog_arms.json")
    args = parser.parse_args()
    if args.from_json:
        doc = json.loads(args.from_json.read_text())
        if "unusable" not in doc:  # a record written before the split: classify again (no simulation)
            _, doc["refused"], doc["unusable"] = _classify()
        if args.demo:  # rerun these arms' demos into the earlier record
            args.out.mkdir(parents=True, exist_ok=True)
            for name in args.demo:
                row = doc["arms"].get(name)
                if row is None or row.get("verdict") != "trustworthy":
                    raise SystemExit(f"--demo {name}: not a trustworthy arm of {args.from_json}")
                print(f"demo {name} (rerun)", flush=True)
                row.update(_demo(name, args.out))
                doc.setdefault("reruns", {})[name] = _stamp()
                args.from_json.write_text(json.dumps(doc, indent=1) + "\n")
                _write(doc, args)
    else:
        args.out.mkdir(parents=True, exist_ok=True)
        arms, refused, unusable = _classify()
        doc = {**_stamp(), "loadavg": list(os.getloadavg()), "arms": {}, "refused": refused,
               "unusable": unusable}
        names = args.robots or arms
        for name in names:  # every check first (seconds each), then the demos (minutes each)
            if name not in arms:
                doc["arms"][name] = {"verdict": "refused", "why": refused.get(name, "not in the catalog")}
                continue
            print(f"checking {name}", flush=True)
            doc["arms"][name] = _check(name, args.out)
            _write(doc, args)
        if args.demo is not None:
            for name in [n for n in (args.demo or names) if n in doc["arms"]]:  # in the order --demo names them
                row = doc["arms"][name]
                if row["verdict"] == "trustworthy":
                    print(f"demo {name}", flush=True)
                    row.update(_demo(name, args.out))
                    _write(doc, args)  # partial results as each demo ends
    return _write(doc, args)


def _write(doc: dict[str, Any], args: argparse.Namespace) -> int:
    """OUT/catalog_arms.json (when running), the page and the README's arms table, from ``doc`` as it stands."""
    if not args.from_json:
        (args.out / "catalog_arms.json").write_text(json.dumps(doc, indent=1) + "\n")
    args.page.parent.mkdir(parents=True, exist_ok=True)
    args.page.write_text(page(doc))
    readme = args.readme is not None and args.readme.is_file()
    if readme:
        args.readme.write_text(readme_table(args.readme.read_text(), doc))
    print(f"wrote {args.page}" + (f" and the table of {args.readme}" if readme else ""), flush=True)
    return 0


#: The README's arms table lies between these lines (written whole by :func:`readme_table`).
README_BEGIN = "<!-- arms table: written by bench/catalog_arms.py, do not edit -->"
README_END = "<!-- end of arms table -->"


def readme_table(text: str, doc: dict[str, Any]) -> str:
    """``text`` (the README) with the table between :data:`README_BEGIN` and :data:`README_END` replaced by the
    arms of ``doc`` that reached the robot check (unchanged when the markers are missing)."""
    if README_BEGIN not in text or README_END not in text:
        return text
    head, rest = text.split(README_BEGIN, 1)
    tail = rest.split(README_END, 1)[1]
    rows = ["| arm | robot check | noise floor / nominal rbd [N·m] | usable masked / conventional | "
            "pd_dob / ctc_dob nominal rbd [mrad] |", "|---|---|---|---|---|"]
    for name, r in doc["arms"].items():
        if r.get("joints") is None:
            continue
        floor = f"{r['noise_floor']:.3g} / {r['nominal_rbd']:.3g}"
        usable = (f"{_num(r.get('usable_masked'), '.0%')} / {_num(r.get('usable_conventional'), '.0%')}"
                  if r.get("demo") == "ok" else (r.get("demo") or "—"))
        track = (f"{_num(r.get('pd_dob_mrad'), '.2f')} / {_num(r.get('ctc_dob_nominal_mrad'), '.2f')}"
                 if r.get("demo") == "ok" else "—")
        rows.append(f"| {name} | {r['verdict']} | {floor} | {usable} | {track} |")
    reruns = "".join(f" {n}'s demo: {r['date']} (commit {r['commit']})." for n, r in doc.get("reruns", {}).items())
    note = (f"Measured on {doc['date']} (commit {doc['commit']});{reruns} The robot check's fixes and the arms it "
            "refuses: [docs/arms.md](docs/arms.md).")
    if not reruns:
        note = note.replace("); The robot", "); the robot")
    return head + README_BEGIN + "\n" + "\n".join(rows) + "\n\n" + note + "\n" + README_END + tail


if __name__ == "__main__":
    sys.exit(main())
