"""Valid-time intervals: half-open ``[start, end)`` with a precision.

A precision says how much of the interval is actually known. "Yesterday" is a
day, "last month" is a month; a day is never invented from a vague phrase.
Rendering follows the precision, in the memory's own zone, so a weekend reads
as "the weekend of 2025-06-14 to 2025-06-15", never as "last weekend".
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Literal, TypeGuard, get_args
from zoneinfo import ZoneInfo

from ..errors import InvalidInputError, InvalidIntervalError

__all__ = ["Precision", "PRECISIONS", "ValidTime", "is_precision", "check_precision", "check_interval",
           "render_interval"]

#: How precisely a valid time is known, finest first. Kept in step with the CHECK in schema.sql.
Precision = Literal[
    "instant", "minute", "hour", "part_of_day", "day", "weekend",
    "week", "month", "season", "year", "decade", "unknown",
]
#: The precisions as a tuple, finest first.
PRECISIONS: tuple[Precision, ...] = get_args(Precision)


def is_precision(value: object) -> TypeGuard[Precision]:
    """Whether ``value`` names a known precision."""
    return isinstance(value, str) and value in PRECISIONS


def check_precision(precision: object) -> Precision:
    """Return ``precision`` if it is a known precision name.

    Raises:
        InvalidInputError: it is not one of :data:`PRECISIONS`.
    """
    if not is_precision(precision):
        raise InvalidInputError(
            f"precision={precision!r} is not known: expected one of {', '.join(PRECISIONS)}"
        )
    return precision


def check_interval(start: datetime, end: datetime | None) -> None:
    """Reject an interval that does not end strictly after it starts.

    Raises:
        InvalidIntervalError: ``end <= start``.
    """
    if end is not None and end <= start:
        raise InvalidIntervalError(
            f"valid_to={end.isoformat()!r} is not after valid_from={start.isoformat()!r}: "
            "valid time is half-open [valid_from, valid_to) and must not be empty"
        )


@dataclass(frozen=True, slots=True)
class ValidTime:
    """When a fact was true: ``[start, end)``; ``end is None`` means still true."""

    start: datetime
    end: datetime | None
    precision: str
    tz: str = "UTC"

    def contains(self, at: datetime) -> bool:
        """Whether ``at`` lies in ``[start, end)``."""
        return self.start <= at and (self.end is None or at < self.end)

    def __str__(self) -> str:
        return render_interval(self.start, self.end, self.precision, self.tz)


def _fmt(at: datetime, precision: str) -> str:
    if precision in ("instant",):
        return at.isoformat(timespec="seconds" if at.microsecond == 0 else "microseconds")
    if precision in ("minute", "hour", "part_of_day"):
        return at.strftime("%Y-%m-%d %H:%M")
    if precision in ("day", "week", "weekend", "unknown"):
        return at.strftime("%Y-%m-%d")
    if precision in ("month", "season"):
        return at.strftime("%Y-%m")
    return at.strftime("%Y")


def render_interval(start: datetime, end: datetime | None, precision: str, tz: str) -> str:
    """Render a valid-time interval for people, in zone ``tz``, at its precision.

    Examples: ``2025-08-09`` (a day), ``weekend of 2025-06-14 to 2025-06-15``,
    ``2025-06`` (a month), ``since 2023-05``, ``2023-05 until 2025-09-01``.
    """
    z = ZoneInfo(tz)
    s = start.astimezone(z)
    if end is None:
        return f"since {_fmt(s, precision)}"
    e = end.astimezone(z)
    last = e - timedelta(microseconds=1)  # half-open: the last instant inside
    if precision == "weekend":
        return f"weekend of {s:%Y-%m-%d} to {last:%Y-%m-%d}"
    if precision == "week":
        return f"week of {s:%Y-%m-%d} to {last:%Y-%m-%d}"
    if precision == "day" and s.date() == last.date():
        return f"{s:%Y-%m-%d}"
    if precision in ("month", "season") and (s.year, s.month) == (last.year, last.month):
        return f"{s:%Y-%m}"
    if precision in ("year", "decade") and s.year == last.year:
        return f"{s:%Y}"
    if precision == "instant":
        end_text = _fmt(e, "instant")
    elif (e.hour, e.minute, e.second, e.microsecond) == (0, 0, 0, 0):
        end_text = _fmt(e, "day")
    else:
        end_text = _fmt(e, "minute")
    return f"{_fmt(s, precision)} until {end_text}"

