"""Sphinx configuration of the deadzone_id_ros documentation (Sphinx + MyST Markdown, the stack of ROS 2's rosdoc2).

Build with ``make docs`` (``sphinx-build -W --keep-going -n``: every warning is an error, and nitpicky mode makes
every unresolved cross-reference one). Pages are ``docs/*.md``; ``index.md``'s toctree globs them, so a new page
needs no edit elsewhere. The API reference (``api.md``) is generated from the package's docstrings by autodoc and
autosummary into ``docs/_api/`` (not committed).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # document the checkout's package, not an installed copy

project = "deadzone_id_ros"
author = "deadzone_id_ros contributors"
copyright = "2026, deadzone_id_ros contributors"

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.napoleon",  # the docstrings' Google style (Args:, Returns:, Raises:)
    "sphinx.ext.viewcode",
]

source_suffix = {".md": "markdown", ".rst": "restructuredtext"}  # .rst: the stubs autosummary writes
root_doc = "index"
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store"]
templates_path: list[str] = []

# MyST: `#`-anchors to headings down to ###, so [text](page.md#a-heading) is checked like any reference.
myst_heading_anchors = 3
myst_enable_extensions = ["colon_fence", "deflist"]

# API reference
autosummary_generate = True
autosummary_imported_members = False
# ignore-module-all: a name is documented in the module that defines it, not again where an __all__ re-exports it
autodoc_default_options = {"members": True, "show-inheritance": True, "ignore-module-all": True}
autodoc_member_order = "bysource"
autodoc_typehints = "description"  # types under Parameters / Returns, not in long signatures
autodoc_typehints_format = "short"
autoclass_content = "class"
napoleon_google_docstring = True
napoleon_numpy_docstring = False
napoleon_use_rtype = False

# Nitpicky mode checks every reference inside the project. Types of other libraries cannot be resolved without
# their inventories (intersphinx needs the network, which the build has not), so references into them are ignored.
_EXTERNAL = (r"(numpy|np|torch|mujoco|pinocchio|pin|rclpy|rosbags|onnx|onnxruntime|scipy|matplotlib|yaml|ray|tqdm"
             r"|collections|typing|typing_extensions|pathlib|os|io|argparse|logging|threading|subprocess|datetime"
             r"|concurrent|multiprocessing|enum|dataclasses|abc|contextlib|types|builtin_interfaces|sensor_msgs"
             r"|std_msgs|std_srvs|trajectory_msgs|diagnostic_msgs|rosgraph_msgs|rcl_interfaces|mcap|_io|_thread)"
             r"(\..*)?")
nitpick_ignore_regex = [
    (r"py:.*", _EXTERNAL),
    # builtins and typing names as autodoc writes them
    (r"py:.*", r"(None|NoneType|Any|Callable|Iterable|Iterator|Sequence|Mapping|MutableMapping|Generator|Literal"
               r"|Optional|Union|TypeVar|Protocol|ClassVar|Self|Path|PathLike|ndarray|Tensor|NDArray|ArrayLike"
               r"|T|K|V|TextIO|BinaryIO|Popen|Event|Lock|Thread|Namespace|ArgumentParser|Logger)"),
]

# "more than one target found": a name defined in one module and documented where a package re-exports it
suppress_warnings = ["ref.python"]

html_theme = "alabaster"
html_title = "deadzone_id_ros"
html_static_path: list[str] = []


_LITERAL = re.compile(r"(``.*?``|`[^`]*`)")


def _escape_bars(_app, _what, _name, _obj, _options, lines: list[str]) -> None:
    """The docstrings write |x| for an absolute value or a norm; reST would read it as a substitution. Escape every
    ``|`` outside inline literals and roles (before napoleon turns the Google sections into fields)."""
    for i, line in enumerate(lines):
        if "|" in line:
            parts = _LITERAL.split(line)
            lines[i] = "".join(p if k % 2 else p.replace("|", "\\|") for k, p in enumerate(parts))


def _lenient_in_api(_app, domain, node) -> bool | None:
    """True (no warning) for a Python cross-reference inside the generated API pages that does not resolve.

    The docstrings name objects the way a reader of the source needs (``FeedforwardController.swap_model``, a type
    variable, an object re-exported by a package), not always as a resolvable Sphinx target; such a reference is shown
    as code without a link. Python references on the hand-written pages, and every document, heading and file link,
    stay checked."""
    if domain is not None and domain.name == "py" and str(node.get("refdoc", "")).startswith("_api/"):
        return True
    return None


def setup(app) -> None:
    app.connect("autodoc-process-docstring", _escape_bars, priority=100)
    app.connect("warn-missing-reference", _lenient_in_api)
