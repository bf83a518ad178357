"""Helpers for tests, yours and ours: a clock you set by hand.

    clock = FrozenClock("2026-03-02T09:00:00Z")
    store = localmem.open(":memory:", clock=clock)
    store.add(...)
    clock.set("2026-03-02T10:00:00Z")
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from .time.clock import TimeInput, parse_time, zone

__all__ = ["FrozenClock"]


class FrozenClock:
    """A clock that reads what it was last set to; pass it as ``clock=``."""

    def __init__(self, start: TimeInput = "2026-01-01T00:00:00Z") -> None:
        self._now = parse_time(start, name="start", tz=zone("UTC")).at

    def __call__(self) -> datetime:
        return self._now

    def set(self, at: TimeInput) -> datetime:
        """Move the clock to ``at`` (forwards or backwards) and return it."""
        self._now = parse_time(at, name="at", tz=zone("UTC")).at.astimezone(UTC)
        return self._now

    def advance(self, **delta: float) -> datetime:
        """Move the clock forward by a timedelta's keywords (``minutes=5``)."""
        self._now = self._now + timedelta(**delta)
        return self._now
