"""What the TUI is looking at: the user, the two clocks and the toggles.

One immutable :class:`View` lives on the app; every screen reads through it
and re-reads when it changes. The clocks are ``None`` for "now" (the app's
injected clock, read at each load); an unset valid_at follows known_at, the
store's own rule ("a read pinned in knowledge is pinned in the world too").
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

from localmem import Clock, InvalidTimeError, find_times

__all__ = ["View", "parse_clock", "parse_expiry"]


@dataclass(frozen=True, slots=True)
class View:
    """The reference times and toggles every screen reads with."""

    user: str | None = None
    tz: str = "UTC"
    known_at: datetime | None = None
    valid_at: datetime | None = None
    current_only: bool = True
    show_expired: bool = False
    show_retracted: bool = False

    def known(self, clock: Clock) -> datetime:
        """The knowledge cutoff of a load now: the set one, else the clock's now."""
        return self.known_at if self.known_at is not None else clock()

    def valid(self, clock: Clock) -> datetime:
        """The valid time of a load now: the set one, else the knowledge cutoff."""
        return self.valid_at if self.valid_at is not None else self.known(clock)


def parse_clock(text: str, *, now: datetime, tz: str) -> datetime | None:
    """Read what a person typed for a clock; None means "now".

    Accepted: ``now`` (or nothing), an ISO instant (``2026-03-02T10:01:00Z``;
    without an offset it is read on the user's wall clock), and every phrase
    the time-phrase resolver understands, read as said at ``now`` in ``tz``
    ("last monday", "2025-06-16 09:05", "yesterday", "nov 16 2025"). A phrase
    naming a period (a day, a month) means the start of that period, as a date
    does everywhere else in localmem.

    Raises:
        InvalidTimeError: nothing in ``text`` reads as a time.
    """
    raw = text.strip()
    if raw.lower() in ("", "now"):
        return None
    zone = ZoneInfo(tz)
    try:
        parsed = datetime.fromisoformat(raw.replace("Z", "+00:00") if raw.endswith("Z") else raw)
    except ValueError:
        parsed = None
    if parsed is not None:
        if parsed.tzinfo is None:
            parsed = parsed.replace(tzinfo=zone)
        return parsed.astimezone(UTC)
    mentions = find_times(raw, sent_at=now, tz=zone)
    if mentions:
        m = mentions[0]
        at = m.start if m.start is not None else m.end
        if at is not None:
            return at.astimezone(UTC)
    raise InvalidTimeError(
        f"{raw!r} is not a time: try 'now', '2026-03-02 10:01', '2025-06-16', 'last monday' or 'yesterday'"
    )


_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_FINE = ("instant", "minute", "hour")


def parse_expiry(text: str, *, now: datetime, tz: str) -> tuple[str | datetime, str]:
    """Read what a person typed as an expiry: what to pass to ``Store.expire``, and how it reads.

    Accepted like a clock (:func:`parse_clock`): a date (``2026-12-31``: visible
    through that day in ``tz``), an instant (``2026-12-31 18:00``, ``...Z``:
    hidden from then), or a phrase read as said at ``now`` ("next friday",
    "end of the month": visible through the last day it names; "tomorrow at
    6pm": hidden from then). Refused before anything is confirmed.

    Raises:
        InvalidTimeError: nothing in ``text`` reads as a time.
    """
    raw = text.strip()
    zone = ZoneInfo(tz)
    if _DATE.match(raw):
        try:
            datetime.fromisoformat(raw)
        except ValueError as exc:
            raise InvalidTimeError(f"{raw!r} is not a date: expected YYYY-MM-DD, e.g. 2026-12-31") from exc
        return raw, f"visible through {raw} ({tz})"
    if raw:
        try:
            parsed = datetime.fromisoformat(raw.replace("Z", "+00:00") if raw.endswith("Z") else raw)
        except ValueError:
            parsed = None
        if parsed is not None:
            at = parsed.replace(tzinfo=zone) if parsed.tzinfo is None else parsed
            return at, f"hidden from {at.astimezone(zone).strftime('%Y-%m-%d %H:%M')} ({tz})"
        for m in find_times(raw, sent_at=now, tz=zone):
            if m.precision in _FINE and m.start is not None:
                return m.start, f"hidden from {m.start.astimezone(zone).strftime('%Y-%m-%d %H:%M')} ({tz})"
            last = (m.end - timedelta(microseconds=1)) if m.end is not None else m.start
            if last is not None:
                day = last.astimezone(zone).date().isoformat()
                return day, f"visible through {day} ({tz})"
    raise InvalidTimeError(
        f"{raw!r} is not an expiry: try '2026-12-31' (visible through that day), "
        "'2026-12-31 18:00' (hidden from then) or a phrase like 'next friday'"
    )
