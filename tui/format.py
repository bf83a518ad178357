"""How the TUI writes times, intervals, flags and changes for people.

Pure functions over the library's values, so they are tested without a
terminal. Colour never appears here: highlighted parts carry theme
variables (``$text-success``...) that the active theme resolves, so light and
dark themes both stay legible.
"""

from __future__ import annotations

import difflib
import json
import re
from datetime import datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from textual.content import Content

from localmem import Revision, ValidTime

__all__ = [
    "local_time",
    "interval",
    "flags",
    "value_text",
    "word_diff",
    "memory_text",
]

_ADDED = "$text-success bold"
_REMOVED = "$text-error strike"


def _zone(tz: str) -> ZoneInfo:
    return ZoneInfo(tz)


def local_time(at: datetime | None, tz: str, *, seconds: bool = False) -> str:
    """An instant on the user's wall clock: ``2026-03-02 09:05`` (``-`` for None)."""
    if at is None:
        return "-"
    return at.astimezone(_zone(tz)).strftime("%Y-%m-%d %H:%M:%S" if seconds else "%Y-%m-%d %H:%M")


def _day(d: datetime) -> str:
    return f"{d.day} {d:%b %Y}"


def _at(d: datetime, precision: str) -> str:
    """One end of an interval at its precision ("14 Jun 2025", "Jan 2024", "2025")."""
    if precision in ("instant", "minute", "hour", "part_of_day"):
        return f"{_day(d)} {d:%H:%M}"
    if precision in ("month", "season"):
        return f"{d:%b %Y}"
    if precision in ("year", "decade"):
        return f"{d:%Y}"
    return _day(d)


def _span(s: datetime, last: datetime) -> str:
    """Two days as one phrase: ``14–15 Jun 2025``, ``30 Jun–1 Jul 2025``."""
    if (s.year, s.month) == (last.year, last.month):
        return f"{s.day}–{last.day} {last:%b %Y}"
    if s.year == last.year:
        return f"{s.day} {s:%b}–{last.day} {last:%b %Y}"
    return f"{_day(s)}–{_day(last)}"


def interval(valid: ValidTime | None) -> str:
    """A valid-time interval at its precision, in its zone.

    The rule: say only what is known. A weekend reads "weekend of 14–15 Jun
    2025", an open month "since Jan 2024", a closed fact "May 2023 until 1 Sep
    2025" (the end is exclusive, so it names the first moment no longer inside).
    """
    if valid is None:
        return "-"
    z = _zone(valid.tz)
    s = valid.start.astimezone(z)
    if valid.end is None:
        return f"since {_at(s, valid.precision)}"
    e = valid.end.astimezone(z)
    last = e - timedelta(microseconds=1)
    p = valid.precision
    if p == "weekend":
        return f"weekend of {_span(s, last)}"
    if p == "week":
        return f"week of {_span(s, last)}"
    if p == "day" and s.date() == last.date():
        return _day(s)
    if p == "day":
        return _span(s, last)
    if p in ("month", "season") and (s.year, s.month) == (last.year, last.month):
        return f"{s:%b %Y}"
    if p in ("month", "season") and e.day == 1 and e.hour == 0 and e.minute == 0:
        return f"{s:%b}–{last:%b %Y}" if s.year == last.year else f"{s:%b %Y}–{last:%b %Y}"
    if p in ("year", "decade") and s.year == last.year:
        return f"{s:%Y}"
    midnight = (e.hour, e.minute, e.second, e.microsecond) == (0, 0, 0, 0)
    end = _day(e) if midnight else f"{_day(e)} {e:%H:%M}"
    return f"{_at(s, p)} until {end}"


def flags(rev: Revision) -> str:
    """The flags a row shows: expired, retracted, stale, corrected, superseded."""
    names = [n for n in ("expired", "retracted", "stale", "corrected", "erased") if getattr(rev, n)]
    if rev.superseded_by:
        names.append("superseded")
    return " ".join(names)


def value_text(value: Any) -> str:
    """A memory's JSON value as one short line ("" for none)."""
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def memory_text(rev: Revision) -> str:
    """What a memory says, with its value: ``fee for fill 42 = 7``."""
    text = "[erased]" if rev.erased or rev.text is None else rev.text
    value = value_text(rev.value)
    return f"{text} = {value}" if value else text


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
