"""How the TUI marks a change between two texts: a word diff.

Everything else the TUI writes for people (times, intervals, flags, a
memory's text with its value) comes from :mod:`localmem.present`, which the
command line shares, so the two agree. Colour never appears here:
highlighted parts carry theme variables (``$text-success``...) that the
active theme resolves, so light and dark themes both stay legible.
"""

from __future__ import annotations

import difflib
import re

from textual.content import Content

__all__ = ["word_diff"]

_ADDED = "$text-success bold"
_REMOVED = "$text-error strike"

_TOKEN = re.compile(r"\s+|[^\s]+")


def word_diff(old: str | None, new: str | None) -> Content:
    """``old`` → ``new`` as one line: removed words struck through, added words highlighted.

    Words both share are plain; the first revision (no old text) is all plain.
    """
    if old is None:
        return Content(new or "")
    if new is None:
        return Content.assemble((old, _REMOVED))
    a, b = _TOKEN.findall(old), _TOKEN.findall(new)
    parts: list[tuple[str, str] | str] = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        if op == "equal":
            parts.append("".join(a[i1:i2]))
            continue
        if op in ("delete", "replace"):
            parts.append(("".join(a[i1:i2]), _REMOVED))
        if op == "replace":
            parts.append(" ")
        if op in ("insert", "replace"):
            parts.append(("".join(b[j1:j2]), _ADDED))
    return Content.assemble(*parts)
