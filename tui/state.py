"""What the TUI is looking at: the user, the two clocks and the toggles.

One immutable :class:`View` lives on the app; every screen reads through it
and re-reads when it changes. The clocks are ``None`` for "now" (the app's
injected clock, read at each load); an unset valid_at follows known_at, the
store's own rule ("a read pinned in knowledge is pinned in the world too").
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from zoneinfo import ZoneInfo

from localmem import Clock, InvalidTimeError, find_times

__all__ = ["View", "parse_clock"]


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
