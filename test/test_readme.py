"""README.md is the front page: its relative links reach files that exist (the docs pages it points to are checked by
``make docs``; the README is not part of that build), its `#anchors` name its own headings, and it stays short."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
README = REPO / "README.md"
LINK = re.compile(r"\]\(([^)\s]+)\)")


def _anchor(heading: str) -> str:
    """GitHub's anchor of a Markdown heading: lower case, punctuation dropped, spaces as '-'."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def test_every_relative_link_of_the_readme_reaches_a_file_or_heading():
    text = README.read_text()
    anchors = {_anchor(line.lstrip("#")) for line in text.splitlines() if line.startswith("#")}
    targets = [t for t in LINK.findall(text) if not re.match(r"[a-z]+://", t)]
    assert targets, "no relative link found: the pattern no longer matches the README's links"
    broken = [t for t in targets
              if (t.startswith("#") and t[1:] not in anchors)
              or (not t.startswith("#") and not (REPO / t.split("#", 1)[0]).exists())]
    assert not broken, f"README.md links to what does not exist: {broken}"


def test_the_readme_is_a_short_front_page_with_the_two_commands_first():
    lines = README.read_text().splitlines()
    assert len(lines) <= 250, f"README.md has {len(lines)} lines; details belong in docs/"
    headings = [line for line in lines if line.startswith("## ")]
    assert headings[:3] == ["## Two commands", "## Results", "## Use it on your own arm"], headings
    assert "make demo" in "\n".join(lines) and "make test" in "\n".join(lines)
