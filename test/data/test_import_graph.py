"""The data package has no import cycle, type-only imports (``if TYPE_CHECKING:``) and imports inside functions
included: its import graph is read from the source with :mod:`ast` and sorted with :mod:`graphlib`."""

from __future__ import annotations

import ast
import graphlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = "deadzone_id_ros"


def module_name(path: Path, root: Path) -> str:
    """``a/b/c.py`` -> ``a.b.c``; ``a/b/__init__.py`` -> ``a.b`` (``path`` under ``root``)."""
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph(package_dir: Path, root: Path) -> dict[str, set[str]]:
    """{module: modules of the same package it imports}, from every ``import`` / ``from ... import`` anywhere in its
    source (module level, under ``if TYPE_CHECKING:``, inside functions). ``from X import name`` depends on the
    module ``X.name`` when that is a module, else on ``X``."""
    files = {module_name(p, root): p for p in sorted(package_dir.rglob("*.py"))}
    prefix = module_name(package_dir / "__init__.py", root)
    graph: dict[str, set[str]] = {m: set() for m in files}
    for mod, path in files.items():
        pkg = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = pkg.split(".")[: len(pkg.split(".")) - node.level + 1]
                    base = ".".join([*anchor, *([base] if base else [])])
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in files else base for a in node.names]
            graph[mod].update(t for t in targets if t in files and t != mod and t.startswith(prefix))
    return graph


def cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle of ``graph`` (a list of modules, first = last), or None."""
    try:
        graphlib.TopologicalSorter(graph).prepare()
    except graphlib.CycleError as err:
        return list(err.args[1])
    return None


def test_data_package_has_no_import_cycle_including_type_only_imports():
    graph = import_graph(ROOT / PACKAGE / "data", ROOT)
    assert len(graph) >= 20 and f"{PACKAGE}.data.dataset_config" in graph[f"{PACKAGE}.data.stages"]
    assert f"{PACKAGE}.data.types" in graph[f"{PACKAGE}.data.bag.joint_states"]  # `from ..types import` resolved
    assert cycle(graph) is None, f"import cycle: {' -> '.join(cycle(graph) or [])}"


@pytest.mark.parametrize("where", ["type_checking", "function", "module"])
def test_the_check_finds_a_cycle_however_the_import_is_written(tmp_path, where):
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("from .b import B\n")
    (pkg / "a.py").write_text("from .sub import b\n")
    back = {"type_checking": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..a import A\n",
            "function": "def f():\n    from pkg import a\n",
            "module": "import pkg.a\n"}[where]
    (pkg / "sub" / "b.py").write_text(back)
    graph = import_graph(pkg, tmp_path)
    assert graph["pkg.a"] == {"pkg.sub.b"} and graph["pkg.sub"] == {"pkg.sub.b"}
    found = cycle(graph)
    assert found is not None and set(found) == {"pkg.a", "pkg.sub.b"}
    (pkg / "sub" / "b.py").write_text("import os\n")
    assert cycle(import_graph(pkg, tmp_path)) is None
