"""The README and docs/ as a reader follows them: every relative link lands on a file and a heading.

A link is ``[text](target)`` outside code; ``target`` is a path relative to the file that holds
it, with an optional ``#anchor`` that must be one of the target's headings as GitHub names them
(lower case, punctuation dropped, spaces as hyphens, a repeated heading numbered ``-1``, ``-2``).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
DOCS = sorted((REPO / "docs").glob("*.md"))
PAGES = [REPO / "README.md", *DOCS]
FENCED = re.compile(r"^```.*?^```", re.S | re.M)
INLINE_CODE = re.compile(r"`[^`\n]*`")
LINK = re.compile(r"\[[^\]\n]*\]\(([^)\s]+)\)")
HEADING = re.compile(r"^#{1,6} (.+)$", re.M)


def prose(text: str) -> str:
    """The text outside fenced blocks and inline code, where a link is a link."""
    return INLINE_CODE.sub("", FENCED.sub("", text))


def anchors(text: str) -> set[str]:
    """The anchors GitHub gives a page's headings."""
    seen: dict[str, int] = {}
    out: set[str] = set()
    for title in HEADING.findall(FENCED.sub("", text)):
        slug = re.sub(r"[^\w\- ]", "", title.replace("`", "").strip().lower()).replace(" ", "-")
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        out.add(slug if n == 0 else f"{slug}-{n}")
    return out


def relative_links(page: Path) -> list[str]:
    """Every link of a page that is not a URL (``scheme:``) or mail address."""
    return [t for t in LINK.findall(prose(page.read_text(encoding="utf-8")))
            if not re.match(r"[a-z][a-z0-9+.-]*:", t)]


def test_the_anchor_rule_names_headings_as_github_does() -> None:
    """Punctuation goes, spaces become hyphens, and a second heading of one title is numbered."""
    text = '## Time phrases: "yesterday" is a date\n### Writes (issue 19)\n## Sync\n### Sync\n'
    assert anchors(text) == {"time-phrases-yesterday-is-a-date", "writes-issue-19", "sync", "sync-1"}


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(REPO)))
def test_every_relative_link_resolves(page: Path) -> None:
    """Each relative link names a file that exists, and its anchor a heading of that file."""
    broken = []
    for target in relative_links(page):
        path, _, anchor = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        if not dest.exists():
            broken.append(f"{target}: no file {dest}")
        elif anchor and anchor not in anchors(dest.read_text(encoding="utf-8")):
            broken.append(f"{target}: no heading #{anchor} in {dest.name}")
    assert not broken, "\n".join(broken)


def test_every_history_page_is_linked_from_the_readme() -> None:
    """The README links each page of docs/, so the older runs are one click from the current figures."""
    linked = {(REPO / t.partition("#")[0]).resolve() for t in relative_links(REPO / "README.md")}
    assert DOCS
    assert [d.name for d in DOCS if d.resolve() not in linked] == []



def architecture() -> str:
    """The README's Architecture section."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    return text.split("\n## Architecture\n", 1)[1].split("\n## ", 1)[0]


def version(path: str, name: str) -> str:
    """The number a module assigns to ``name`` at its top level."""
    found = re.search(rf"^{name} = (\d+)$", (REPO / path).read_text(encoding="utf-8"), re.M)
    assert found, f"no {name} in {path}"
    return found.group(1)


def test_the_architecture_section_names_every_module() -> None:
    """The map of the code names each module of every layer, so a new module lands on it."""
    section = architecture()
    unnamed = [str(path.relative_to(REPO)) for path in sorted((REPO / "localmem").rglob("*.py"))
               if path.stem not in {"__init__", "__main__"}
               and not re.search(rf"\b{re.escape(path.stem)}\b", section)]
    assert unnamed == []


def test_the_versions_the_architecture_names_are_the_codes() -> None:
    """The map's schema and hub versions are the ones the code writes."""
    section = architecture()
    assert re.findall(r"schema version (\d+)", section) == [version("localmem/core/db.py", "SCHEMA_VERSION")]
    assert re.findall(r"hub version (\d+)", section) == [version("localmem/hub/db.py", "HUB_VERSION")]
