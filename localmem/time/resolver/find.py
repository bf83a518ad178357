"""The resolver's hot path, once find_times has checked its arguments: rules, context, hits, mentions.

Separate from the package's ``__init__`` so that this part can be compiled by mypyc (hatch_build.py)
while :func:`localmem.time.resolver.find_times` stays interpreted: a compiled function checks its
argument types itself and raises ``TypeError``, where find_times must raise localmem's own
``InvalidInputError`` naming the bad value.
"""

from __future__ import annotations

from datetime import datetime
from functools import lru_cache
from zoneinfo import ZoneInfo

from ..clock import UTC_ZONE
from . import dates, holidays, relative, spans  # noqa: F401  (registers their rules)
from .combine import candidate_rules, combine_hits, find_matches, scan
from .context import Context
from .mention import TimeMention


def _fold_case(text: str) -> str:
    low = text.lower().replace("\u2019", "'").replace("\u2018", "'")
    if len(low) != len(text):  # a character whose lower case is longer: keep offsets aligned
        low = "".join(c.lower() if len(c.lower()) == 1 else c for c in text).replace("\u2019", "'")
    return low


@lru_cache(maxsize=4096)
def _local(at: datetime, fold: int, tz: ZoneInfo) -> datetime:
    """The naive wall time ``at`` in ``tz``, aware (pure: memoised, as the same days recur;
    ``fold`` is in the key because equal naive times with another fold name another instant)."""
    # Round-trip through UTC moves a wall time inside a DST gap to the first that exists.
    return at.replace(tzinfo=tz).astimezone(UTC_ZONE).astimezone(tz)


def resolve(text: str, sent_at: datetime, z: ZoneInfo, date_order: str) -> list[TimeMention]:
    """What :func:`localmem.time.resolver.find_times` returns for arguments it has checked
    (``sent_at`` aware, ``z`` the zone, ``date_order`` known)."""
    low = _fold_case(text)
    # The pre-filter: the rules the message's words and digits can wake, less those whose
    # `needs` the text lacks.
    rules = candidate_rules(low)
    if not rules:  # no word in the message could start a time phrase: no context built
        return []
    matched = find_matches(low, rules)
    if not matched:  # words that could start one, but no phrase: still no context built
        return []
    try:
        local_sent = sent_at.astimezone(z).replace(tzinfo=None)
    except OverflowError:  # sent within hours of year 1 or 9999, whose local date the zone pushes out
        return []
    ctx = Context(low, local_sent, z, date_order)
    mentions = []
    for h in combine_hits(ctx, scan(ctx, matched)):
        if not h.standalone:
            continue
        try:
            start = None if h.start is None else _local(h.start, h.start.fold, z)
            end = None if h.end is None else _local(h.end, h.end.fold, z)
        except OverflowError:  # year 1 or 9999 pushed out of range by the zone's offset
            continue
        lo, hi = h.lo, h.hi
        mentions.append(TimeMention(text[lo:hi], (lo, hi), start, end, h.precision, h.kind, h.vague))
    return mentions
