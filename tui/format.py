"""How the TUI marks a change between two texts: a word diff.

Plus the few words the TUI's own lines need: counts with their plural and
thousands separators, and an expiry said one way everywhere.

Everything else the TUI writes for people (times, intervals, flags, a
memory's text with its value) comes from :mod:`localmem.present`, which the
command line shares, so the two agree. Colour never appears here:
highlighted parts carry theme variables (``$text-success``...) that the
active theme resolves, so light and dark themes both stay legible.
"""

from __future__ import annotations

import difflib
import re
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

from textual.content import Content

__all__ = ["word_diff", "count", "expiry_text", "op_noun"]

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


_PLURALS = {"memory": "memories", "entry": "entries", "revision": "revisions"}


def count(n: int, word: str, plural: str | None = None) -> str:
    """``n`` with thousands separators and the word in the right number: ``1 hit``, ``14,964 hits``."""
    if n == 1:
        return f"1 {word}"
    last = word.rsplit(" ", 1)[-1]
    many = plural or word[: len(word) - len(last)] + _PLURALS.get(last, last + "s")
    return f"{n:,} {many}"


def expiry_text(at: datetime | None, tz: str) -> str:
    """An expiry the way the expire dialog asks for it: ``visible through 2026-12-31``.

    The rule: an expiry at a local midnight came from a date and means the
    memory stays visible through the day before (``expire 2026-12-31`` is
    stored as 2027-01-01 00:00); any other instant reads ``hidden from
    2026-12-31 18:00``. ``-`` for none.
    """
    if at is None:
        return "-"
    local = at.astimezone(ZoneInfo(tz))
    if (local.hour, local.minute, local.second, local.microsecond) == (0, 0, 0, 0):
        return f"visible through {(local - timedelta(days=1)).date().isoformat()}"
    return f"hidden from {local.strftime('%Y-%m-%d %H:%M')}"


_NOUNS = {"correct": "correction", "retract": "retraction", "expire": "expiry", "supersede": "supersession"}


def op_noun(op: str) -> str:
    """The noun of a write: ``correct`` → ``correction`` (for "Append a correction?")."""
    return _NOUNS.get(op, op)
