"""The time a query asks about, read as people mean it, and how well a memory fits it.

A query's time phrases come from the resolver (:func:`localmem.time.resolver.find_times`),
resolved against the search's as_of in the user's zone. Search then decides what each
phrase is worth, by these rules:

- **About the future: ignored.** A phrase that starts after as_of ("suggest a workout for
  *next week*") is the subject of a request, not a reference.
- **Named in the calendar: a window.** A phrase that names a year or a month ("on
  13 October 2023", "in June", "the second week of November") is what the question is
  about: its window counts fully (:data:`CALENDAR_WEIGHT`).
- **Relative to now: it reorders the relevant.** "last weekend", "yesterday", "4 years
  ago", "last summer", "Sunday" are read against as_of, but a question's relative phrase
  is often about the past of what it asks ("what did she do last weekend?" asked months
  later about a chat that said "last weekend"). So its fit is added in full
  (:data:`RELATIVE_WEIGHT`) only to memories whose words weigh at least
  :data:`RELEVANT_SHARE` of the best match's, and in proportion to their text score below
  that: "what did I eat last week?" puts last week's meals first, but a memory barely
  holding the words is not lifted over the ones that hold them. A query with no content
  words ("what did I do last weekend?") ranks by the fit alone.
- **Anchored: read against the anchor.** When the query also names a calendar date, its
  relative phrases are read against that date rather than as_of: "the Sunday *before
  25 October 2022*", "last week, *as mentioned on 6 November 2023*", "recently, as
  mentioned on 3 June". The anchor is the nearest calendar phrase after the relative one
  (else before it); an open-ended anchor ("before X", "until X") is used up as the anchor,
  a dated one ("on X") stays a window too. An anchored phrase counts as calendar.
- **Vague recency: a prior.** "recently", "lately", "these days", "nowadays" are not a
  window: a memory of the month before the reference gains at most
  :data:`RECENCY_WEIGHT`, by the relative phrases' rule.
- **"When did ...?"** asks for a date: memories whose valid time was resolved from a
  phrase or given explicitly (not assumed from when they were said) gain
  :data:`WHEN_BONUS`, by the relative phrases' rule (in full for the relevant).

A memory's fit to a window is how much of its time lies in it, weighed by the precision
of that time (:func:`time_fit`). A memory whose valid time was resolved from its words is
placed at that time and also on the day it was said: "what did Joanna share on
25 February?" is about what was said that day, even when it was about last week. The
better of the two counts, the day said at :data:`SAID_WEIGHT`. A valid time the caller
gave is the memory's time and nothing else (a correction recorded today of last month's
event is about last month).
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Protocol
from zoneinfo import ZoneInfo

from ..time.clock import from_micros, to_micros
from ..time.resolver import TimeMention, find_times

__all__ = [
    "CALENDAR_WEIGHT",
    "RELATIVE_WEIGHT",
    "RECENCY_WEIGHT",
    "RELEVANT_SHARE",
    "time_score",
    "when_bonus",
    "SAID_WEIGHT",
    "WHEN_BONUS",
    "PRECISION_WEIGHT",
    "Window",
    "QueryTime",
    "read_query",
    "time_fit",
    "time_fitter",
    "Placed",
]

CALENDAR_WEIGHT = 1.0
RELATIVE_WEIGHT = 1.0
RECENCY_WEIGHT = 0.1
RELEVANT_SHARE = 0.5
SAID_WEIGHT = 0.8
WHEN_BONUS = 0.3
_DAY_US = 86_400_000_000

#: How much a memory's time counts, by the precision of its valid time.
PRECISION_WEIGHT = {
    "instant": 1.0,
    "minute": 1.0,
    "hour": 1.0,
    "part_of_day": 1.0,
    "day": 1.0,
    "weekend": 0.9,
    "week": 0.9,
    "month": 0.7,
    "season": 0.6,
    "year": 0.5,
    "decade": 0.4,
    "unknown": 0.3,
}

_MONTHS = (
    "jan feb mar apr may jun jul aug sep sept oct nov dec january february march april june july august "
    "september october november december"
).split()
_CALENDAR = re.compile(r"\b(?:\d{4}|" + "|".join(_MONTHS) + r")\b", re.IGNORECASE)
_OPEN_ANCHOR = re.compile(r"^\s*(?:before|until|till|by|prior to|after|since)\b", re.IGNORECASE)
#: Vague recency the resolver does not report as a phrase (it reports "recently", "lately").
_RECENCY = re.compile(r"\b(?:these days|nowadays)\b", re.IGNORECASE)
_WHEN = re.compile(r"^\W*when\b", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Window:
    """A span of time the query asks about (UTC µs, half-open) and what fitting it is worth."""

    lo: int
    hi: int
    weight: float
    phrase: str
    scales: bool = False  # relative to now: its fit counts in full only for the relevant


@dataclass(frozen=True, slots=True)
class QueryTime:
    """What a query says about time: its windows, its words outside them, whether it asks when."""

    windows: tuple[Window, ...]
    rest: str
    asks_when: bool


class Placed(Protocol):
    """Where a memory sits in time (UTC µs): its valid time and the instant it was said."""

    @property
    def valid_from(self) -> int: ...
    @property
    def valid_to(self) -> int | None: ...
    @property
    def precision(self) -> str: ...
    @property
    def valid_source(self) -> str: ...
    @property
    def observed_at(self) -> int: ...
    @property
    def tz(self) -> str: ...


def _calendar(m: TimeMention) -> bool:
    return bool(_CALENDAR.search(m.phrase))


def _anchor_instant(m: TimeMention) -> datetime | None:
    """The instant a relative phrase is read against when ``m`` anchors it."""
    if m.start is None:  # "before X" / "until X": X is where it ends
        return m.end
    return m.start


def _window(m: TimeMention, at: int, weight: float, scales: bool) -> Window | None:
    lo = 0 if m.start is None else to_micros(m.start)
    hi = at if m.end is None else to_micros(m.end)
    return Window(lo, hi, weight, m.phrase, scales) if hi > lo else None


def read_query(query: str, at: datetime, tz: ZoneInfo) -> QueryTime:
    """The query's windows (rules: the module docstring) and its text without its time phrases."""
    known = to_micros(at)
    mentions = [m for m in find_times(query, sent_at=at, tz=tz) if m.start is None or m.start <= at]
    calendar = [i for i, m in enumerate(mentions) if _calendar(m)]
    used_up: set[int] = set()
    windows: list[Window] = []
    for i, m in enumerate(mentions):
        if i in calendar:
            continue
        after = [j for j in calendar if j > i]
        before = [j for j in calendar if j < i]
        anchor = after[0] if after else (before[-1] if before else None)
        read = m
        if anchor is not None:
            instant = _anchor_instant(mentions[anchor])
            if instant is not None:  # the whole query again, so the phrase keeps its tense
                again = {a.span: a for a in find_times(query, sent_at=instant, tz=tz)}
                if m.span in again:
                    read = again[m.span]
                    if _OPEN_ANCHOR.match(mentions[anchor].phrase):
                        used_up.add(anchor)
        if m.vague:
            end = read.end or from_micros(known)
            w = _window(read, known, RECENCY_WEIGHT, True) if anchor is not None else None
            month = to_micros(end - timedelta(days=30))
            w = w or Window(month, to_micros(end), RECENCY_WEIGHT, m.phrase, True)
        elif anchor is not None:
            w = _window(read, known, CALENDAR_WEIGHT, False)
        else:
            w = _window(read, known, RELATIVE_WEIGHT, True)
        if w is not None:
            windows.append(w)
    for i in calendar:
        if i not in used_up and (w := _window(mentions[i], known, CALENDAR_WEIGHT, False)) is not None:
            windows.append(w)
    rest, pos = [], 0
    for m in mentions:
        rest.append(query[pos : m.span[0]])
        pos = m.span[1]
    rest.append(query[pos:])
    text = " ".join(rest)
    for found in _RECENCY.finditer(text):
        windows.append(Window(known - 30 * _DAY_US, known, RECENCY_WEIGHT, found.group(0), True))
    text = _RECENCY.sub(" ", text)
    return QueryTime(tuple(windows), text, bool(_WHEN.match(query)))


def _said_day(p: Placed) -> tuple[int, int]:
    """The local day (in the memory's zone) it was said on, as UTC µs: from its local midnight,
    one day of µs long."""
    # fromtimestamp on whole seconds: zone transitions fall on whole seconds, so the local
    # date and fold are those of the exact instant.
    local = datetime.fromtimestamp(p.observed_at // 1_000_000, ZoneInfo(p.tz))
    start = _midnight(p.tz, local.toordinal(), local.fold)
    return start, start + _DAY_US


@functools.lru_cache(maxsize=8192)
def _midnight(tz: str, day: int, fold: int) -> int:
    """The instant (UTC µs) of local midnight on ``day`` (a proleptic ordinal) in ``tz``,
    read with ``fold`` as the instant said on that day had it: a search scores hundreds of
    memories, most said on a few hundred days, so each (zone, day) is worked out once."""
    return to_micros(datetime.fromordinal(day).replace(tzinfo=ZoneInfo(tz), fold=fold))


def _fit(start: int, end: int, lo: int, hi: int) -> float:
    """Inside: the share of the span in the window, times how specific it is. Outside: falling
    with the distance from the span's middle to the window, e^-1 at a sixth of the window's
    length (at least an hour)."""
    length = max(end - start, 1)
    middle = start + (end - start) // 2
    width = max(hi - lo, 1)
    overlap = min(end, hi) - max(start, lo)
    if lo <= middle < hi or (overlap > 0 and length > width):
        fit = (overlap / min(length, width)) * min(1.0, width / length)
    else:
        gap = min(abs(middle - lo), abs(middle - hi))
        fit = math.exp(-gap / max(width / 6, 3_600_000_000))
    return min(fit, 1.0)


def time_fit(p: Placed, windows: tuple[Window, ...], known: int) -> tuple[float, float]:
    """How well a memory fits the query's windows: (the best window that adds, the best that
    scales), each its weight times the better of the valid time's fit (weighed by precision)
    and the said day's (weighed by :data:`SAID_WEIGHT`), a fit being in [0, 1].

    The valid time is the memory's span, or its said day when the valid time was assumed; the
    said day counts too when the valid time was resolved from its words.
    """
    return time_fitter(windows, known)(p)


def time_fitter(windows: tuple[Window, ...], known: int) -> Callable[[Placed], tuple[float, float]]:
    """:func:`time_fit` for many memories and the same windows: each distinct placing (span,
    precision, said day) is fitted once, for a search's hundreds of candidates share a few
    hundred days."""
    bounds = [(w.lo, w.hi, w.weight, w.scales) for w in windows]
    memo: dict[tuple[int, int, float, int | None], tuple[float, float]] = {}

    def fit(p: Placed) -> tuple[float, float]:
        source = p.valid_source
        said: int | None = None
        if source == "assumed":
            start, _ = _said_day(p)
            end = start + _DAY_US
            precision = PRECISION_WEIGHT["day"]
        else:
            start = p.valid_from
            end = p.valid_to if p.valid_to is not None else max(known, start + _DAY_US)
            precision = PRECISION_WEIGHT.get(p.precision, 0.3)
            if source == "resolved":
                said = _said_day(p)[0]
        key = (start, end, precision, said)
        found = memo.get(key)
        if found is None:
            found = memo[key] = _fit_windows(start, end, precision, said, bounds)
        return found

    return fit


def _fit_windows(
    start: int, end: int, precision: float, said: int | None, bounds: list[tuple[int, int, float, bool]]
) -> tuple[float, float]:
    added = scaled = 0.0
    for lo, hi, weight, scales in bounds:
        fit = _fit(start, end, lo, hi) * precision
        if said is not None:  # said that day, about the time its words name
            fit = max(fit, SAID_WEIGHT * _fit(said, said + _DAY_US, lo, hi))
        if scales:
            scaled = max(scaled, weight * fit)
        else:
            added = max(added, weight * fit)
    return added, scaled


def time_score(fits: tuple[float, float], text: float, by_words: bool) -> float:
    """The time term of a memory's score from :func:`time_fit`'s ``fits`` and its text score
    in [0, 1]: the calendar fit, plus the relative one scaled by min(1, text / RELEVANT_SHARE)
    when the query has words to weigh (``by_words``)."""
    added, relative = fits
    return added + relative * (min(1.0, text / RELEVANT_SHARE) if by_words else 1.0)


def when_bonus(text: float, by_words: bool) -> float:
    """What a dated memory gains for a "When did ...?" question, by its text score in [0, 1]:
    :data:`WHEN_BONUS`, in full at RELEVANT_SHARE of the best match's weight and above."""
    return WHEN_BONUS * (min(1.0, text / RELEVANT_SHARE) if by_words else 1.0)
