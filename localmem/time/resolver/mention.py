"""What the resolver finds: a time phrase, its span, and the local interval it names.

A mention also writes itself back in absolute dates (:meth:`TimeMention.render`):
"last weekend" becomes "on the weekend of 2025-06-14 to 2025-06-15".
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta

__all__ = ["TimeMention", "render_mention"]


@dataclass(frozen=True, slots=True)
class TimeMention:
    """One time phrase found in a message, resolved to a local interval.

    ``start``/``end`` are aware datetimes in the sender's zone; the interval is
    half-open. ``start is None`` for "until X" (no start said), ``end is None``
    for "since X" (still going). ``kind`` is ``point`` (one period: a day, a
    weekend, "3 weeks ago"), ``range`` ("from X to Y", "the past 3 days"),
    ``since`` or ``until``.
    """

    phrase: str
    span: tuple[int, int]
    start: datetime | None
    end: datetime | None
    precision: str
    kind: str = "point"
    vague: bool = False

    @property
    def open_start(self) -> bool:
        """No start was said ("until Friday")."""
        return self.start is None

    @property
    def open_end(self) -> bool:
        """No end was said ("since January")."""
        return self.end is None

    @property
    def present(self) -> bool:
        """The phrase names the present ("now", "currently", "these days"), not a time of its own."""
        return self.kind == "point" and _PRESENT.fullmatch(self.phrase) is not None

    def render(self) -> str:
        """The phrase rewritten in absolute dates ("on the weekend of 2025-06-14 to 2025-06-15")."""
        return render_mention(self)


def _fmt(at: datetime, precision: str) -> str:
    if precision in ("instant", "minute", "hour"):
        return at.strftime("%Y-%m-%d %H:%M")
    if precision in ("month", "season"):
        return at.strftime("%Y-%m")
    if precision in ("year", "decade"):
        return at.strftime("%Y")
    return at.strftime("%Y-%m-%d")


def _last(end: datetime, precision: str) -> datetime:
    return end - (
        timedelta(minutes=1) if precision in ("instant", "minute", "hour") else timedelta(microseconds=1)
    )


#: Words for the present: rewritten with the date they stand for, the word kept.
_PRESENT = re.compile(
    r"(?:right\s+|just\s+)?now|at\s+the\s+moment|at\s+present|currently|presently|as\s+we\s+speak|my\s+day|this\s+day"
    r"|(?P<wide>these\s+days|nowadays)",
    re.IGNORECASE,
)


_YEAR = re.compile(r"\d{4}")


#: "weekend", "the weekend", "my weekend" with no preposition: the object or subject of a verb.
_NOUN_WEEKEND = re.compile(r"(?:(?:the|my)\s+)?weekend", re.IGNORECASE)


def render_mention(m: TimeMention) -> str:
    """A mention written in absolute dates: what :meth:`TimeMention.render` returns."""
    p = m.precision
    if m.kind == "point" and _YEAR.fullmatch(m.phrase):
        return m.phrase  # "a 2010 trip", "it was 2020": the year already says it
    if m.kind == "point" and p == "weekend" and m.start is not None and m.end is not None \
            and _NOUN_WEEKEND.fullmatch(m.phrase):
        # "had a great weekend", "spent the weekend hiking": a noun in the sentence, so the word stays
        return f"{m.phrase} ({m.start:%Y-%m-%d} to {_last(m.end, p):%Y-%m-%d})"
    if m.kind == "point" and m.start is not None and (w := _PRESENT.fullmatch(m.phrase)):
        said = m.end - timedelta(days=1) if m.end else m.start
        return f"{m.phrase} ({'around ' if w['wide'] else ''}{said:%Y-%m-%d})"
    if m.kind == "since" and m.start is not None:
        return f"since {_fmt(m.start, p)}"
    if m.kind == "until" and m.end is not None:
        if m.end.hour or m.end.minute:
            return f"until {_fmt(m.end, 'minute')}"
        if m.phrase.lower().startswith(("through", "thru", "by")):  # the named day is included
            return f"through {_fmt(m.end - timedelta(days=1), 'day' if p in ('week', 'weekend') else p)}"
        return f"until {_fmt(m.end, 'day' if p in ('week', 'weekend') else p)}"
    assert m.start is not None and m.end is not None
    s, last = m.start, _last(m.end, p)
    if m.vague and p in ("week", "month", "unknown"):
        return f"between {_fmt(s, 'day')} and {_fmt(last, 'day')}"
    if m.kind == "range":
        return f"from {_fmt(s, p)} to {_fmt(last, p)}"
    if p == "part_of_day":
        hours = (m.end - m.start).total_seconds() / 3600
        name = {5: "morning", 12: "afternoon", 17: "evening" if hours <= 4 else "night", 21: "night"}.get(
            s.hour, f"{s:%H:%M}-{m.end:%H:%M}"
        )
        return f"on the {name} of {s:%Y-%m-%d}"
    if p in ("instant", "minute", "hour"):
        return f"at {_fmt(s, p)}"
    one_day = s.date() == last.date()
    if one_day and p == "day":
        return f"on {s:%Y-%m-%d}"
    if one_day:
        return f"around {s:%Y-%m-%d}"
    if p == "weekend":
        return f"on the weekend of {s:%Y-%m-%d} to {last:%Y-%m-%d}"
    if p == "week" and (last - s).days == 6 and s.weekday() == 0:
        return f"in the week of {s:%Y-%m-%d} to {last:%Y-%m-%d}"
    if p == "month" and (s.year, s.month) == (last.year, last.month) and s.day == 1:
        return f"in {s:%Y-%m}"
    if p == "year" and s.year == last.year and (s.month, s.day) == (1, 1):
        return f"in {s:%Y}"
    if p == "decade" and s.year % 10 == 0 and last.year == s.year + 9:
        return f"in the {s:%Y}s"
    shown = "day" if p in ("week", "weekend") else p
    if _fmt(s, shown) == _fmt(last, shown):  # "later this year": part of one year, so its days
        shown = "day"
    return f"between {_fmt(s, shown)} and {_fmt(last, shown)}"
