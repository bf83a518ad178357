"""Time phrases in chat text, resolved against the instant the message was sent.

"I started the new knee meds yesterday" means nothing without the moment it was
said and the sender's zone. :func:`find_times` finds such phrases and turns each
into a half-open local interval ``[start, end)`` with a precision, so the store
can keep dates instead of words.

Conventions (choices, written down so they can be argued with):

- **Zone.** Everything is computed on the sender's wall clock in ``tz`` and
  returned as aware datetimes in that zone; "this morning" sent at 05:00 in
  Singapore is that local morning, whatever the UTC date. A local midnight that
  does not exist (a DST gap) starts at the first instant that does.
- **Weeks** run Monday to Sunday. "this/last/next week" are calendar weeks;
  "the past week" is the rolling seven days before today. A weekend is
  Saturday and Sunday. "last Friday" is the Friday of last week, "next Friday"
  the Friday of next week, "this Friday" the one in this week; "this past
  Friday" and "this coming Friday" are the nearest ones.
- **Tense decides direction** for anything that names a day or month without
  fixing which one: "I ran on Friday" is the Friday before today, "I'll run on
  Friday" and "I'm running on Friday" the next one; a bare weekday in a
  present-tense sentence is the next one. A year-less date or month follows
  the tense too (past: the latest one not after today; future: the next one
  not before today; no tense: the nearest). "last May" is the most recent May
  before this month.
- **Counted amounts** ("3 weeks ago", "in two months", "2 weeks before
  Christmas") are arithmetic: they land on the day it gives, with precision
  day (hours and minutes for "3 hours ago"). Vague counts ("a few days ago",
  "a couple of weeks ago") are not: the interval covers the plausible range,
  the precision is one step coarser than the unit and ``vague`` is set.
  Nothing finer than the phrase is invented.
- **Ranges** ("from July to September", "between Monday and Wednesday",
  "June 3-5") include their last named day, month or year: the end is where
  the second part's period ends. "since X" has no end, "until X" no start and
  ends where X starts ("through X" where X ends).
- **Parts of day**: morning 05-12, afternoon 12-17, evening 17-21, night
  21-05; "tonight" and "last night" run 17-05.
- **Seasons** are meteorological and follow the hemisphere of ``tz``: summer
  is June-August in Berlin and December-February in Sydney. "winter 2024" is
  the winter that begins in (northern) December 2024.
- **Quarters and halves** are calendar ones, labelled with month precision
  (the store has no quarter precision; both ends fall on month starts).
- **Decades**: "the 90s", "the nineties", "the 1990s"; a two-digit decade is
  the latest one not in the future.
- **Vague phrases** ("the other day", "recently", "a while ago") get a wide
  interval, a coarse precision and ``vague=True``.
- **Numeric dates** "03/04" are month/day by default (``date_order="MDY"``);
  pass ``"DMY"`` for day first. A first number above 12 is always a day;
  four-digit years first are always year-month-day.
- **Not times**: durations ("finished in 58 minutes", "a 3 hour hike", "in 3
  weeks" said in the past tense), the modal "may", "march" the verb, ordinals
  ("my second marathon"), "now and then", habits ("every Monday", "on
  Mondays"), scores, paces and fractions.

Why not a library: dateparser and dateutil parse one date string well but
search free text badly (they read "may" and "now and then" as dates, "in 58
minutes" as a moment, and nothing in "last weekend"), guess missing parts from
today rather than from a tense, have no precision, and are two orders of
magnitude slower than the regular expressions here. The calendar arithmetic
they would add is the standard library's (``datetime``, ``zoneinfo``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, tzinfo
from zoneinfo import ZoneInfo

from ...errors import InvalidInputError, NaiveDatetimeError
from ..clock import UTC_ZONE, zone
from . import dates, relative  # noqa: F401  (registers their rules)
from .combine import _combine, _scan, candidate_rules
from .context import _Context
from .render import _render

__all__ = ["TimeMention", "find_times", "rewrite", "DATE_ORDERS"]

DATE_ORDERS = ("MDY", "DMY")


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

    def render(self) -> str:
        """The phrase rewritten in absolute dates ("on the weekend of 2025-06-14 to 2025-06-15")."""
        return _render(self)


def _fold_case(text: str) -> str:
    low = text.lower().replace("\u2019", "'").replace("\u2018", "'")
    if len(low) != len(text):  # a character whose lower case is longer: keep offsets aligned
        low = "".join(c.lower() if len(c.lower()) == 1 else c for c in text).replace("\u2019", "'")
    return low


def _aware(at: datetime | None, tz: ZoneInfo) -> datetime | None:
    if at is None:
        return None
    # Round-trip through UTC moves a wall time inside a DST gap to the first that exists.
    return at.replace(tzinfo=tz).astimezone(UTC_ZONE).astimezone(tz)


def find_times(
    text: str, *, sent_at: datetime, tz: str | tzinfo = "UTC", date_order: str = "MDY"
) -> list[TimeMention]:
    """Find the time phrases in ``text`` and resolve each against ``sent_at`` in ``tz``.

    Args:
        text: the message.
        sent_at: the instant the message was sent (aware).
        tz: the sender's IANA zone; day boundaries are local to it.
        date_order: how to read "03/04": ``"MDY"`` (March 4) or ``"DMY"`` (3 April).

    Returns:
        The mentions in text order, none overlapping.

    Raises:
        InvalidInputError: ``text`` is not a string or ``date_order`` is unknown.
        NaiveDatetimeError: ``sent_at`` has no zone.
        UnknownZoneError: ``tz`` is not an IANA zone.
    """
    if not isinstance(text, str):
        raise InvalidInputError(f"text={text!r} is not a string: expected the message text")
    if not isinstance(sent_at, datetime):
        raise InvalidInputError(f"sent_at={sent_at!r} is not a datetime: expected an aware datetime")
    if sent_at.tzinfo is None or sent_at.utcoffset() is None:
        raise NaiveDatetimeError(
            f"sent_at={sent_at.isoformat()!r} has no time zone: expected an aware datetime"
        )
    if date_order not in DATE_ORDERS:
        raise InvalidInputError(f"date_order={date_order!r} is not known: expected one of {DATE_ORDERS}")
    z = zone(tz)
    low = _fold_case(text)
    rules = candidate_rules(low)
    if not rules:  # no word in the message could start a time phrase
        return []
    try:
        local_sent = sent_at.astimezone(z).replace(tzinfo=None)
    except OverflowError:  # sent within hours of year 1 or 9999, whose local date the zone pushes out
        return []
    ctx = _Context(low, local_sent, z, date_order)
    mentions = []
    for h in _combine(ctx, _scan(ctx, rules)):
        if not h.standalone:
            continue
        try:
            start, end = _aware(h.start, z), _aware(h.end, z)
        except OverflowError:  # year 1 or 9999 pushed out of range by the zone's offset
            continue
        mentions.append(
            TimeMention(
                phrase=text[h.lo : h.hi],
                span=(h.lo, h.hi),
                start=start,
                end=end,
                precision=h.precision,
                kind=h.kind,
                vague=h.vague,
            )
        )
    return mentions


_PREPOSITION_BEFORE = re.compile(
    r"\b(?:to|for|by|until|till|from|since|at|on|in|during|of|before|after|through)\s+$", re.IGNORECASE
)


def rewrite(text: str, mentions: list[TimeMention]) -> str:
    """``text`` with each mention replaced by its absolute rendering."""
    out, pos = [], 0
    for mention in sorted(mentions, key=lambda x: x.span):
        lo, hi = mention.span
        out.append(text[pos:lo])
        rendered = mention.render()
        if _PREPOSITION_BEFORE.search(text, max(0, lo - 12), lo):
            rendered = re.sub(r"^(?:on|in|at) ", "", rendered)  # "moved it to next Friday"
        if lo == 0 or re.search(r"[.!?]\s*$", text[:lo]):
            rendered = rendered[:1].upper() + rendered[1:]
        out.append(rendered)
        pos = hi
    out.append(text[pos:])
    return "".join(out)
