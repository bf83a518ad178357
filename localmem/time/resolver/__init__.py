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
  Friday" and "this coming Friday" are the nearest ones. Said on a Saturday or
  Sunday, when the week's days are over, "last Friday" is the one just gone;
  "previous Friday" is always last week's. "the week of April 10" and "w/c
  Feb 4" are the calendar week holding that day; "a week starting tomorrow"
  is the seven days from it. A week named before weekdays places them: "next
  week between Wednesday and Friday". A relative weekday before a date on
  another weekday is read from that date: "last Friday on 23 January 2022" (a
  Sunday) is the 21st. Business (working) days skip Saturdays and Sundays:
  "in four business days", "the next 4 business days" (ending after the fourth).
- **Tense decides direction** for anything that names a day or month without
  fixing which one: "I ran on Friday" is the Friday before today, "I'll run on
  Friday" and "I'm running on Friday" the next one; a bare weekday in a
  present-tense sentence is the next one. A year-less date or month follows
  the tense too (past: the latest one not after today; future: the next one
  not before today; no tense: the nearest), and so does a bare "Q1" or "the
  15th" (this month's or a neighbour's). "see you", "looking forward", "can't
  wait" and "would" are future; "'d" is "would" before a bare verb ("she said
  she'd come on Friday": the coming Friday) and "had" before a participle.
  "last May" is the most recent May before this month. A weekday said with a
  date picks the date's year when exactly one year within six months of today
  makes it that weekday ("this Friday (Jun 15)").
- **since / until.** "since X" names a past start whatever the verb ("I live in
  Berlin since March" in December is last March); "until X" in a clause that
  is not past names an end ahead ("I'm off until Oct 5" in December is next
  October). "since X" has no end, "until X" no start and ends where X starts;
  "through X" and "by X" end where X ends.
- **Counted amounts back from now** ("five years ago", "a year ago", "two
  weeks ago", "3 months ago") are the calendar unit the arithmetic lands in:
  that year, that week, that month, as people round a recollection to the unit
  they count in; day-sized units ("3 days ago") give the day, hours and
  minutes the hour and minute, a mix its finest unit ("1 month and 21 days
  ago" is a day). **Counts ahead** ("in 2 weeks", "3 weeks from now") are a
  schedule: the day the arithmetic gives. Counts from a named time ("2 weeks
  before Christmas", "a week after the race on June 3") move from its start to
  a day; from a month or a year they move the whole period ("a year after
  2019" is 2020). Hedged counts of weeks or more ("about 3 years ago") are the
  same unit flagged vague; vague counts ("a few days ago", "a couple of weeks
  ago") cover the plausible range, one precision step coarser, vague. A weekday
  next to a count is that weekday in the week the count lands in ("Monday two
  weeks from now"). Weekends and weekdays are counted one by one from today:
  "two weekends ago" is the one before last weekend, "in two weekends" the
  second to come (this week's is the first, on a weekday), "two Sundays from
  now" the second Sunday ahead. "for 3 days from today" is the three days from
  today. Nothing finer than the phrase is invented.
- **The present.** "now", "currently", "at the moment", "at present", "my day",
  "this day" are the day it was said (rewritten "now (2025-06-18)"); "these
  days" and "nowadays" the month up to it, vague; "from now on" is since today,
  "until now" until the moment it was said; "the past day" is yesterday. "now
  and then", "now that", "to this day" are not times.
- **Read from the day named before.** A bare day of the month after a date
  takes that date's month ("May 25th - coffee - on 29th" is May 29th). "the next
  day", "the day after", "the day before" are a day from the last day named;
  with none they are from today and vague, and in a past clause (a day of a
  story not told) they are not read.
- **Ranges** ("from July to September", "between Monday and Wednesday",
  "June 3-5") include their last named day, month or year: the end is where
  the second part's period ends. Year-less ends are read together: the second
  follows the first, and a range holding today is the one meant ("May to
  September" said in September is this year's).
- **Parts of day**: morning 05-12, afternoon 12-17, evening 17-21, night
  21-05; "tonight" and "last night" run 17-05. A bare hour after a day
  ("tomorrow at 8") is 1-6 in the afternoon, 7-11 in the morning; after a part
  of day it is the hour inside it ("tonight at 8" is 20:00).
- **Seasons** are meteorological and follow the hemisphere of ``tz``: summer
  is June-August in Berlin and December-February in Sydney. "winter 2024" is
  the winter that begins in (northern) December 2024.
- **Quarters and halves** are calendar ones, labelled with month precision
  (the store has no quarter precision; both ends fall on month starts). "the
  third quarter" without a year needs a preposition and no sports words near.
  Units counted in a period: "the third month of 2021", "the first 2 weeks of
  2021" (weeks whose Thursday falls inside, as ISO counts them), "the last day
  of the month".
- **Holidays** have their US dates unless the zone says otherwise: Canadian
  zones keep Thanksgiving on October's second Monday, the UK and Ireland
  Mothering Sunday three weeks before Easter, Australia and New Zealand
  Father's Day on September's first Sunday. "Easter weekend" is Good Friday to
  Easter Monday in Europe, Africa, the Atlantic and Oceania (where both are
  public holidays), Saturday and Sunday elsewhere; a Monday holiday's weekend
  is the long weekend before it, Thanksgiving's Thursday to Sunday. Breaks are
  vague, precision week: "the holidays", "Christmas break" are Christmas Eve
  through New Year's Day (the UK's school "holidays" are not read), "Easter
  break" Good Friday to Easter Monday, "Thanksgiving break" Thursday to Sunday.
- **Years as adjectives** ("a 2010 trip", "the 2019 season") are that year and
  keep their words when rewritten; not before a measure ("a 2000 calorie
  diet") or more than ten years ahead ("the 2048 game"). A two-digit year is
  the latest at most ten years ahead ("April of 87" is 1987), in a future clause
  the next one within twenty years ("I'll go back 3-7-27" said in 2016 is 2027).
- **Weekend as a kind**: "a weekend yoga class", "weekend trips" are not a
  weekend; "had a great weekend", "spent the weekend hiking" are, and keep the
  word when rewritten ("a great weekend (2025-06-14 to 2025-06-15)").
- **Decades**: "the 90s", "the nineties", "the 1990s", "the nineteen
  seventies", "the noughties"; a two-digit decade is the latest one not in the
  future.
- **Vague phrases** ("the other day", "recently", "a while ago") get a wide
  interval, a coarse precision and ``vague=True``.
- **Numeric dates** "03/04" are month/day by default (``date_order="MDY"``);
  pass ``"DMY"`` for day first. A first number above 12 is always a day;
  four-digit years first are always year-month-day. "7-6" is a date only after
  a weekday, a dashed two-digit year only after a date word ("on", "back").
- **Not times**: durations ("finished in 58 minutes", "a 3 hour hike", "in 3
  weeks" said in the past tense), the modal "may", "march" the verb, ordinals
  ("my second marathon", "the 3rd floor"), "now and then", habits ("every
  Monday", "on Mondays"), scores, paces, part numbers and fractions.
- **Every branch of a rule starts and ends at a word edge** (not inside a
  number: "Dec/2018-May/2019" is a range, not "18-May/2019").
- **The pre-filter.** A message holding none of the rules' trigger words (nor
  a digit) returns before any context is built; the trigger pattern is built
  from the registered rules, so a new rule's words are in it.
- **Linear work.** Each rule scans the text once; overlaps are settled with a
  sorted index and tense with a bisected clause list; the few look-backs read
  a fixed window (40 characters for a sentence start when rewriting, 80 for a
  list of years), so a message twice as long costs twice as much.

Why not a library: dateparser and dateutil parse one date string well but
search free text badly (they read "may" and "now and then" as dates, "in 58
minutes" as a moment, and nothing in "last weekend"), guess missing parts from
today rather than from a tense, have no precision, and are two orders of
magnitude slower than the regular expressions here. The calendar arithmetic
they would add is the standard library's (``datetime``, ``zoneinfo``).
"""

from __future__ import annotations

import re
from datetime import datetime, tzinfo

from ...errors import InvalidInputError, NaiveDatetimeError
from ..clock import zone
from .find import resolve
from .mention import TimeMention

__all__ = ["TimeMention", "find_times", "rewrite", "DATE_ORDERS"]

DATE_ORDERS = ("MDY", "DMY")


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
    return resolve(text, sent_at, zone(tz), date_order)


_PREPOSITION_BEFORE = re.compile(
    r"\b(?:to|for|by|until|till|from|since|at|on|in|during|of|before|after|through)\s+$", re.IGNORECASE
)


_LEADING_PREPOSITION = re.compile(r"^(?:on|in|at) ")
_FROM_TO = re.compile(r"^from (.*) to ")


def rewrite(text: str, mentions: list[TimeMention]) -> str:
    """``text`` with each mention replaced by its absolute rendering."""
    out, pos = [], 0
    for mention in sorted(mentions, key=lambda x: x.span):
        lo, hi = mention.span
        out.append(text[pos:lo])
        rendered = mention.render()
        if before := _PREPOSITION_BEFORE.search(text, max(0, lo - 12), lo):
            rendered = _LEADING_PREPOSITION.sub("", rendered)  # "moved it to next Friday"
            if before.group().split()[0].lower() in ("for", "from", "during", "through", "in"):
                rendered = _FROM_TO.sub(r"\1 to ", rendered)  # "booked for 2021-01-04 to ..."
        said_before = text[max(0, lo - 40) : lo].rstrip()  # a window: rewriting stays linear
        if (said_before[-1:] in (".", "!", "?")) if said_before else lo <= 40:
            rendered = rendered[:1].upper() + rendered[1:]
        out.append(rendered)
        pos = hi
    out.append(text[pos:])
    return "".join(out)
