"""Bad input gets a clear error from localmem's hierarchy and changes nothing."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

import pytest
from helpers import dump

import localmem
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
    ]


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
