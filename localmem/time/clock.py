"""Time in, time out: aware instants only, UTC microseconds in storage.

This is the only module that reads the wall clock (:func:`system_clock`, the
default at the API edge). Everything else receives time explicitly: the store
takes a ``clock`` callable, reads take ``as_of``/``known_at``/``valid_at``.

Accepted time values, everywhere a time is taken:

* an aware :class:`datetime.datetime` (naive ones raise
  :class:`~localmem.errors.NaiveDatetimeError`, the system zone is never assumed);
* epoch seconds (``int``/``float``, or a string of 5 or more digits);
* an ISO 8601 string with an offset or ``Z``;
* a calendar date: a :class:`datetime.date`, ``"2025-06-14"``, ``"2025-06"`` or
  ``"2025"``. A date has no instant of its own: it is read in the user's zone,
  as the local start of that day, month or year, and carries that precision.

Every instant lies between 0001-01-01T00:00Z and 9999-12-31T23:59:59.999999Z
(Python's datetime range, in UTC). A value outside it, or a date whose local
period starts or ends outside it (0001-01-01 in Asia/Tokyo starts in year 0 in
UTC; 9999-12-31 ends in year 10000), raises
:class:`~localmem.errors.InvalidTimeError` rather than OverflowError.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from ..errors import InvalidTimeError, NaiveDatetimeError, UnknownZoneError, shown

__all__ = [
    "Micros",
    "Clock",
    "TimeInput",
    "Moment",
    "system_clock",
    "zone",
    "parse_time",
    "to_micros",
    "from_micros",
    "period_end",
    "local_day_start",
    "is_date_form",
    "instant_micros",
    "UTC_ZONE",
]

Clock = Callable[[], datetime]
TimeInput = datetime | date | int | float | str
#: An instant as stored: integer microseconds since the Unix epoch, UTC. A plain int at run
#: time; the name says which ints are instants.
Micros = int

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)
#: The UTC zone as a ZoneInfo (the default zone of users who never gave one).
UTC_ZONE = ZoneInfo("UTC")
_PARTIAL_DATE = re.compile(r"^(\d{4})(?:-(\d{2})(?:-(\d{2}))?)?$")
_EPOCH_SECONDS = re.compile(r"^-?\d{5,}(?:\.\d+)?$")


_MIN_MICROS = -62_135_596_800_000_000  # 0001-01-01T00:00:00Z
_MAX_MICROS = 253_402_300_799_999_999  # 9999-12-31T23:59:59.999999Z


def system_clock() -> datetime:
    """The wall clock, in UTC. The store's default clock; nothing else calls it."""
    return datetime.now(UTC)


def zone(name: str | tzinfo) -> ZoneInfo:
    """The IANA zone called ``name``.

    Raises:
        UnknownZoneError: ``name`` is not an IANA zone name.
    """
    if isinstance(name, ZoneInfo):
        return name
    if not isinstance(name, str) or not name.strip():
        raise UnknownZoneError(
            f"time zone {shown(name)} is not an IANA zone name like 'Europe/Berlin'")
    try:
        return ZoneInfo(name.strip())
    # OSError: zoneinfo looks the name up as a file, and a name too long for a
    # file name (or naming a directory) fails there rather than as "not found".
    except (ZoneInfoNotFoundError, ValueError, OSError) as exc:
        raise UnknownZoneError(
            f"unknown time zone {shown(name)}: expected an IANA zone name like 'Europe/Berlin'"
        ) from exc


@dataclass(frozen=True, slots=True)
class Moment:
    """A parsed time value: the instant it denotes, and how precise it was.

    ``precision`` is ``"day"``, ``"month"`` or ``"year"`` for calendar dates
    and ``"instant"`` otherwise; ``is_date`` says it was a calendar date.
    """

    at: datetime
    precision: str
    is_date: bool


def _zone_name(tz: tzinfo) -> str:
    return str(getattr(tz, "key", None) or tz)


def _out_of_range(name: str, raw: object) -> InvalidTimeError:
    return InvalidTimeError(
        f"{name}={shown(raw)} is out of range: expected an instant between "
        "0001-01-01T00:00:00Z and 9999-12-31T23:59:59.999999Z"
    )


def _to_utc(value: datetime, name: str, raw: object) -> datetime:
    try:
        return value.astimezone(UTC)
    except OverflowError as exc:  # e.g. 0001-01-01T00:00+09:00 is in year 0 in UTC
        raise _out_of_range(name, raw) from exc


def _aware(value: datetime, name: str) -> datetime:
    if value.tzinfo is None or value.utcoffset() is None:
        raise NaiveDatetimeError(
            f"{name}={value.isoformat()!r} has no time zone: expected an aware datetime "
            "(e.g. with tzinfo=UTC or a ZoneInfo)"
        )
    return _to_utc(value, name, value)


def _from_epoch(seconds: int | float, name: str, raw: object) -> datetime:
    if isinstance(seconds, float) and not math.isfinite(seconds):
        raise InvalidTimeError(f"{name}={shown(raw)} is not a finite number of epoch seconds")
    try:
        if isinstance(seconds, int):  # exact, and no float conversion of 10**400 to fail
            return _EPOCH + timedelta(seconds=seconds)
        return _EPOCH + timedelta(microseconds=round(seconds * 1_000_000))
    except OverflowError as exc:
        raise _out_of_range(name, raw) from exc


def local_day_start(day: date, tz: ZoneInfo) -> datetime:
    """The instant (UTC) at which ``day`` begins in ``tz``.

    On a day whose midnight does not exist (a DST gap at 00:00) this is the
    first instant that does, which ``fold=0`` on a ZoneInfo gives.

    Raises:
        InvalidTimeError: that instant is outside the datetime range in UTC
            (0001-01-01 in a zone east of UTC).
    """
    local = datetime(day.year, day.month, day.day, tzinfo=tz)
    # Round-trip through UTC normalises a non-existent local time forward.
    return _to_utc(local, f"the start of {day.isoformat()} in {_zone_name(tz)}", day.isoformat())


def is_date_form(value: object) -> bool:
    """Whether ``value`` is a calendar date (read in a zone) rather than an instant."""
    if isinstance(value, datetime):
        return False
    if isinstance(value, date):
        return True
    return isinstance(value, str) and _PARTIAL_DATE.match(value.strip()) is not None


def parse_time(value: TimeInput, *, name: str, tz: ZoneInfo) -> Moment:
    """Read one time value (see the module docstring for the accepted forms).

    Args:
        value: the time as given by the caller.
        name: the argument's name, for error messages.
        tz: the zone calendar dates are read in.

    Raises:
        NaiveDatetimeError: a datetime or ISO string without an offset.
        InvalidTimeError: anything else that is not a time.
    """
    if isinstance(value, bool):
        raise InvalidTimeError(f"{name}={value!r} is not a time: expected an aware datetime, "
                               "epoch seconds, an ISO 8601 string or a date")
    if isinstance(value, datetime):
        return Moment(_aware(value, name), "instant", False)
    if isinstance(value, date):
        return Moment(_day_start(value, tz, name, value.isoformat()), "day", True)
    if isinstance(value, int | float):
        return Moment(_from_epoch(value, name, value), "instant", False)
    if isinstance(value, str):
        text = value.strip()
        partial = _PARTIAL_DATE.match(text)
        if partial:
            year, month, day = partial.groups()
            try:
                d = date(int(year), int(month or 1), int(day or 1))
            except ValueError as exc:
                raise InvalidTimeError(f"{name}={shown(value)} is not a calendar date: {exc}") from exc
            precision = "day" if day else "month" if month else "year"
            return Moment(_day_start(d, tz, name, value), precision, True)
        if _EPOCH_SECONDS.match(text):
            return Moment(_from_epoch(float(text), name, value), "instant", False)
        try:
            parsed = datetime.fromisoformat(text)
        except ValueError as exc:
            raise InvalidTimeError(
                f"{name}={shown(value)} is not a time: expected ISO 8601 with an offset "
                "('2025-06-16T12:00:00Z'), a date ('2025-06-16'), or epoch seconds"
            ) from exc
        if parsed.tzinfo is None:
            raise NaiveDatetimeError(
                f"{name}={shown(value)} has no time zone: add an offset or 'Z' "
                "('2025-06-16T12:00:00Z'), or give a date ('2025-06-16')"
            )
        return Moment(_to_utc(parsed, name, value), "instant", False)
    raise InvalidTimeError(
        f"{name}={shown(value)} is not a time: expected an aware datetime, epoch seconds, "
        "an ISO 8601 string or a date"
    )


def _day_start(day: date, tz: ZoneInfo, name: str, raw: object) -> datetime:
    try:
        return local_day_start(day, tz)
    except InvalidTimeError as exc:
        raise InvalidTimeError(
            f"{name}={shown(raw)} starts outside the supported range in {_zone_name(tz)}: expected "
            "a date whose local start is between 0001-01-01T00:00:00Z and 9999-12-31T23:59:59Z"
        ) from exc


def period_end(moment: Moment, tz: ZoneInfo) -> datetime:
    """The instant a calendar date's period ends (exclusive), in ``tz``.

    A day ends at the next local midnight, a month at the first of the next
    month, a year at the next January 1st. An instant is its own end.

    Raises:
        InvalidTimeError: the period ends after 9999-12-31T23:59:59.999999Z
            (the last day, month or year of 9999, in ``tz`` or east of it).
    """
    if not moment.is_date:
        return moment.at
    start = moment.at.astimezone(tz).date()
    try:
        if moment.precision == "day":
            nxt = start + timedelta(days=1)
        elif moment.precision == "month":
            nxt = date(start.year + (start.month == 12), start.month % 12 + 1, 1)
        else:
            nxt = date(start.year + 1, 1, 1)
        return local_day_start(nxt, tz)
    except (OverflowError, ValueError) as exc:  # InvalidTimeError is a ValueError too
        raise InvalidTimeError(
            f"the {moment.precision} starting {start.isoformat()} in {_zone_name(tz)} ends after "
            "9999-12-31T23:59:59.999999Z, the last instant localmem can store: "
            "expected an earlier date"
        ) from exc


def to_micros(at: datetime) -> Micros:
    """Microseconds since the Unix epoch for an aware datetime (storage format)."""
    # One subtraction and one exact integer division of timedeltas: a hot path (a get converts two).
    return (at - _EPOCH) // _MICROSECOND


def from_micros(us: Micros) -> datetime:
    """The aware UTC datetime for a stored microsecond count."""
    seconds, micros = divmod(us, 1_000_000)
    return _EPOCH + timedelta(0, seconds, micros)


def instant_micros(value: TimeInput, *, name: str, tz: ZoneInfo) -> Micros:
    """Storage microseconds for one time value; :func:`parse_time` without the Moment.

    Aware datetimes, the common case on hot read paths, skip the general parser.
    """
    if type(value) is datetime:
        try:  # the subtraction itself refuses a naive datetime: no separate offset check
            us = to_micros(value)
        except TypeError:  # naive: no tzinfo, or one whose utcoffset() is None
            _aware(value, name)  # raises NaiveDatetimeError
            raise
        # datetime(1, 1, 1, tzinfo=Tokyo) is a valid datetime but before year 1 in UTC:
        # stored, it could never be read back (from_micros would overflow).
        if not _MIN_MICROS <= us <= _MAX_MICROS:
            raise _out_of_range(name, value)
        return us
    return to_micros(parse_time(value, name=name, tz=tz).at)
