"""Bad input gets a clear error from localmem's hierarchy and changes nothing."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

import pytest
from helpers import dump

import localmem
from localmem import InvalidFilterError
from localmem.testing import FrozenClock

NAIVE = datetime(2025, 6, 16, 12, 0)  # noqa: DTZ001 - naive on purpose


@pytest.fixture
def seeded(store: localmem.Store, clock: FrozenClock) -> dict[str, str]:
    """A store holding a memory per user, one of them erased, one retracted."""
    clock.set("2025-06-01T00:00:00Z")
    ids = {
        "sam": store.add("Sam lives in Lisbon", user_id="sam", key="home_city",
                         valid_from="2023-05", tz="Europe/Lisbon").memory_id,
        "ana": store.add("Ana likes tea", user_id="ana").memory_id,
        "gone": store.add("secret", user_id="sam").memory_id,
        "revoked": store.add("revoked", user_id="sam").memory_id,
    }
    store.erase(ids["gone"], "asked")
    store.retract(ids["revoked"], "forget it")
    clock.set("2025-07-01T00:00:00Z")
    return ids


def _bad_calls(ids: dict[str, str]) -> list[tuple[str, type[Exception], str, Callable[..., Any]]]:
    """(name, expected error, text the message must contain, call) for each bad input."""
    sam = ids["sam"]
    return [
        ("naive observed_at", localmem.NaiveDatetimeError, "2025-06-16T12:00:00",
         lambda s: s.add("x", user_id="sam", observed_at=NAIVE)),
        ("naive valid_from", localmem.NaiveDatetimeError, "no time zone",
         lambda s: s.add("x", user_id="sam", valid_from=NAIVE)),
        ("naive ISO string", localmem.NaiveDatetimeError, "2025-06-16T12:00",
         lambda s: s.add("x", user_id="sam", valid_from="2025-06-16T12:00")),
        ("naive expires", localmem.NaiveDatetimeError, "expires",
         lambda s: s.add("x", user_id="sam", expires=NAIVE)),
        ("naive as_of on read", localmem.NaiveDatetimeError, "as_of",
         lambda s: s.read("sam", as_of=NAIVE)),
        ("naive known_at on get", localmem.NaiveDatetimeError, "known_at",
         lambda s: s.get(sam, known_at=NAIVE)),
        ("valid_to equal to valid_from", localmem.InvalidIntervalError, "2025-06-01",
         lambda s: s.add("x", user_id="sam", valid_from="2025-06-01T00:00:00Z",
                         valid_to="2025-06-01T00:00:00Z")),
        ("valid_to before valid_from", localmem.InvalidIntervalError, "not after",
         lambda s: s.add("x", user_id="sam", valid_from="2025-06-02", valid_to="2025-06-01")),
        ("correction inverting the interval", localmem.InvalidIntervalError, "not after",
         lambda s: s.correct(sam, valid_to="2020-01-01")),
        ("unknown zone", localmem.UnknownZoneError, "Mars/Olympus",
         lambda s: s.add("x", user_id="sam", tz="Mars/Olympus")),
        ("unknown precision", localmem.InvalidInputError, "fortnight",
         lambda s: s.add("x", user_id="sam", precision="fortnight")),
        ("unknown precision on correct", localmem.InvalidInputError, "fortnight",
         lambda s: s.correct(sam, precision="fortnight")),
        ("malformed time", localmem.InvalidTimeError, "yesterday-ish",
         lambda s: s.add("x", user_id="sam", valid_from="yesterday-ish")),
        ("impossible date", localmem.InvalidTimeError, "2025-13-01",
         lambda s: s.add("x", user_id="sam", valid_from="2025-13-01")),
        ("a bool as time", localmem.InvalidTimeError, "True",
         lambda s: s.add("x", user_id="sam", observed_at=True)),
        ("a non-finite epoch", localmem.InvalidTimeError, "inf",
         lambda s: s.add("x", user_id="sam", observed_at=float("inf"))),
        ("unknown id on correct", localmem.NotFoundError, "NOPE",
         lambda s: s.correct("NOPE", text="y")),
        ("unknown id on retract", localmem.NotFoundError, "NOPE",
         lambda s: s.retract("NOPE")),
        ("unknown id on expire", localmem.NotFoundError, "NOPE",
         lambda s: s.expire("NOPE", "2026-01-01")),
        ("unknown id on erase", localmem.NotFoundError, "NOPE",
         lambda s: s.erase("NOPE")),
        ("unknown id on get", localmem.NotFoundError, "NOPE",
         lambda s: s.get("NOPE")),
        ("unknown id on history", localmem.NotFoundError, "NOPE",
         lambda s: s.history("NOPE")),
        ("unknown id on supersede", localmem.NotFoundError, "NOPE",
         lambda s: s.supersede("NOPE", "y")),
        ("unknown supersedes on add", localmem.NotFoundError, "NOPE",
         lambda s: s.add("x", user_id="sam", supersedes="NOPE")),
        ("correcting an erased memory", localmem.ErasedError, ids["gone"],
         lambda s: s.correct(ids["gone"], text="back")),
        ("erasing twice", localmem.ErasedError, ids["gone"],
         lambda s: s.erase(ids["gone"])),
        ("correcting a retracted memory", localmem.InvalidOperationError, ids["revoked"],
         lambda s: s.correct(ids["revoked"], text="y")),
        ("retracting twice", localmem.InvalidOperationError, ids["revoked"],
         lambda s: s.retract(ids["revoked"])),
        ("superseding across users", localmem.InvalidOperationError, "'ana'",
         lambda s: s.add("Ana lives in Rome", user_id="ana", supersedes=sam,
                         valid_from="2025-01-01")),
        ("superseding with an earlier start", localmem.InvalidIntervalError, "after",
         lambda s: s.supersede(sam, "Sam lives in Porto", valid_from="2022-01")),
        ("overlapping value for a key", localmem.InvalidIntervalError, "home_city",
         lambda s: s.add("Sam lives in Faro", user_id="sam", key="home_city",
                         valid_from="2023-01", valid_to="2024-01")),
        ("a correction that changes nothing", localmem.InvalidOperationError, "changes nothing",
         lambda s: s.correct(sam, text="Sam lives in Lisbon")),
        ("empty text", localmem.InvalidInputError, "''",
         lambda s: s.add("", user_id="sam")),
        ("blank text", localmem.InvalidInputError, "'   '",
         lambda s: s.add("   ", user_id="sam")),
        ("text that is not a string", localmem.InvalidInputError, "b'bytes'",
         lambda s: s.add(b"bytes", user_id="sam")),
        ("None as text", localmem.InvalidInputError, "None",
         lambda s: s.add(None, user_id="sam")),
        ("empty user id", localmem.InvalidInputError, "user_id",
         lambda s: s.add("x", user_id="")),
        ("a value that is not JSON", localmem.InvalidInputError, "value",
         lambda s: s.add("x", user_id="sam", value=object())),
        ("a set as value", localmem.InvalidInputError, "JSON",
         lambda s: s.add("x", user_id="sam", value={1, 2})),
        ("NaN as value", localmem.InvalidInputError, "nan",
         lambda s: s.add("x", user_id="sam", value=float("nan"))),
        ("attributes that are not a dict", localmem.InvalidInputError, "attributes",
         lambda s: s.add("x", user_id="sam", attributes=["a"])),
        ("a non-JSON correction value", localmem.InvalidInputError, "value",
         lambda s: s.correct(sam, value=object())),
        # What SQLite cannot hold faithfully (issue 15, item 7).
        ("a lone surrogate in text", localmem.InvalidInputError, "surrogate",
         lambda s: s.add("caf\udcff", user_id="sam")),
        ("a lone surrogate in a user id", localmem.InvalidInputError, "user_id",
         lambda s: s.add("cafe", user_id="sam\udcff")),
        ("a lone surrogate in a key", localmem.InvalidInputError, "surrogate",
         lambda s: s.add("cafe", user_id="sam", key="k\udcff")),
        ("a lone surrogate in a correction", localmem.InvalidInputError, "surrogate",
         lambda s: s.correct(sam, text="Sam lives in Lisb\udcffn")),
        ("a lone surrogate in a reason", localmem.InvalidInputError, "reason",
         lambda s: s.retract(sam, reason="\ud800")),
        ("a lone surrogate in an attribute name", localmem.InvalidInputError, "surrogate",
         lambda s: s.add("x", user_id="sam", attributes={"caf\udcff": 1})),
        ("a lone surrogate in a value", localmem.InvalidInputError, "surrogate",
         lambda s: s.add("x", user_id="sam", value=["caf\udcff"])),
        ("a lone surrogate in a read's user id", localmem.InvalidInputError, "surrogate",
         lambda s: s.read("sam\udcff")),
        ("text starting with NUL", localmem.InvalidInputError, "NUL",
         lambda s: s.add("\x00Sam", user_id="sam")),
        ("text holding a NUL", localmem.InvalidInputError, "position 3",
         lambda s: s.add("Sam\x00 lives", user_id="sam")),
        ("a user id holding a NUL", localmem.InvalidInputError, "NUL",
         lambda s: s.add("x", user_id="\x00sam")),
        ("year 1 read in a zone east of UTC", localmem.InvalidTimeError, "0001-01-01",
         lambda s: s.add("x", user_id="sam", valid_from="0001-01-01", tz="Asia/Tokyo")),
        ("an expiry at the last day of 9999", localmem.InvalidTimeError, "9999-12-31",
         lambda s: s.add("x", user_id="sam", expires="9999-12-31")),
        ("an expiry in the year 9999", localmem.InvalidTimeError, "9999",
         lambda s: s.add("x", user_id="sam", expires="9999")),
        ("expiring on the last day of 9999", localmem.InvalidTimeError, "9999-12-31",
         lambda s: s.expire(sam, "9999-12-31")),
        ("an instant before year 1 in UTC", localmem.InvalidTimeError, "out of range",
         lambda s: s.add("x", user_id="sam", observed_at="0001-01-01T00:00:00+09:00")),
        ("as_of=10**400", localmem.InvalidTimeError, "out of range",
         lambda s: s.read("sam", as_of=10**400)),
        ("known_at beyond year 9999", localmem.InvalidTimeError, "out of range",
         lambda s: s.get(sam, known_at=10**12)),
        ("a zone name too long for a file name", localmem.UnknownZoneError, "AAAA",
         lambda s: s.add("x", user_id="sam", tz="A" * 300)),
        ("attributes nested 10,000 deep", localmem.InvalidInputError, "64 levels",
         lambda s: s.add("x", user_id="sam", attributes={"a": _nested(10_000)})),
        ("a value nested 10,000 deep", localmem.InvalidInputError, "64 levels",
         lambda s: s.add("x", user_id="sam", value=_nested(10_000))),
        ("a source nested 10,000 deep", localmem.InvalidInputError, "source",
         lambda s: s.add("x", user_id="sam", source={"said": _nested(10_000)})),
        ("a correction's value nested 10,000 deep", localmem.InvalidInputError, "64 levels",
         lambda s: s.correct(sam, value=_nested(10_000))),
        ("a value of 5,000 digits", localmem.InvalidInputError, "int of 16610 bits",
         lambda s: s.add("x", user_id="sam", value=10**5000)),
        ("a filter list of 40,000 values", InvalidFilterError, "at most 1000",
         lambda s: s.search("Lisbon", user_id="sam", filters={"kind": {"in": ["fact"] * 40_000}})),
        ("a filter integer beyond 64 bits", InvalidFilterError, "64 bits",
         lambda s: s.search("Lisbon", user_id="sam", filters={"attributes.a": 2**70})),
        ("a NaN filter value", InvalidFilterError, "finite",
         lambda s: s.search("Lisbon", user_id="sam", filters={"attributes.a": float("nan")})),
        ("an infinite filter bound", InvalidFilterError, "finite",
         lambda s: s.search("Lisbon", user_id="sam", filters={"attributes.a": {"lt": float("inf")}})),
        ("a filter nested 10,000 deep", InvalidFilterError, "deeper than",
         lambda s: s.search("Lisbon", user_id="sam", filters=_nested_not(10_000))),
        ("a filter value nested 10,000 deep", InvalidFilterError, "attributes.a",
         lambda s: s.search("Lisbon", user_id="sam", filters={"attributes.a": _nested(10_000)})),
        ("a filter ending after 9999", InvalidFilterError, "9999",
         lambda s: s.search("Lisbon", user_id="sam", filters={"valid_time": {"lte": "9999"}})),
    ]


def _nested(depth: int) -> Any:
    """A list holding a list ... ``depth`` levels down to a 1."""
    value: Any = 1
    for _ in range(depth):
        value = [value]
    return value


def _nested_not(depth: int) -> dict[str, Any]:
    """A filter of ``depth`` NOTs around one condition."""
    tree: dict[str, Any] = {"kind": "fact"}
    for _ in range(depth):
        tree = {"NOT": tree}
    return tree


def test_every_bad_input_is_refused_and_changes_nothing(
    store: localmem.Store, seeded: dict[str, str]
) -> None:
    """Each bad call raises its LocalmemError subclass naming the value; no row changes."""
    for name, error, needle, call in _bad_calls(seeded):
        before = dump(store.connection)
        with pytest.raises(error) as info:
            call(store)
        assert isinstance(info.value, localmem.LocalmemError), name
        assert needle in str(info.value), f"{name}: {info.value}"
        assert dump(store.connection) == before, name


def test_errors_also_derive_from_the_builtins_they_refine() -> None:
    """Callers can catch TypeError, ValueError or LookupError as usual."""
    assert issubclass(localmem.NaiveDatetimeError, TypeError)
    assert issubclass(localmem.InvalidIntervalError, ValueError)
    assert issubclass(localmem.UnknownZoneError, ValueError)
    assert issubclass(localmem.NotFoundError, LookupError)


def test_a_naive_clock_is_refused(clock: FrozenClock) -> None:
    """A clock that returns naive datetimes makes writes fail, recording nothing."""
    s = localmem.open(":memory:", clock=lambda: NAIVE)
    before = dump(s.connection)
    with pytest.raises(localmem.NaiveDatetimeError, match="clock"):
        s.add("x", user_id="u")
    assert dump(s.connection) == before
    s.close()


def test_a_failed_write_inside_a_batch_rolls_back_the_batch(
    store: localmem.Store, seeded: dict[str, str]
) -> None:
    """A bad input in the middle of a batch leaves the database exactly as before the batch."""
    before = dump(store.connection)
    with pytest.raises(localmem.UnknownZoneError), store.batch():
        store.add("one", user_id="sam")
        store.correct(seeded["sam"], text="Sam lives in Porto")
        store.add("two", user_id="sam", tz="Nowhere/Special")
    assert dump(store.connection) == before
