"""localmem.present: the one way the CLI and the TUI show flags, intervals, times and values."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime
from pathlib import Path

import pytest

import localmem
from localmem.present import (
    FLAGS,
    flags,
    flags_text,
    interval,
    local_iso,
    local_time,
    marks,
    memory_text,
    parse_json,
    value_text,
)
from localmem.testing import FrozenClock


def _moves(store: localmem.Store) -> tuple[localmem.Revision, localmem.Revision]:
    """Sam's Lisbon → Berlin move: the superseded revision and the one that supersedes it."""
    store.add("Sam lives in Lisbon", user_id="sam", key="home_city", valid_from="2023-05",
              tz="Europe/Berlin")
    berlin = store.add("Sam lives in Berlin", user_id="sam", key="home_city", valid_from="2025-09-01")
    lisbon = store.read("sam", key="home_city", current_only=False)
    old = next(r for r in lisbon if r.memory_id != berlin.memory_id)
    return old, berlin


def test_flags_come_in_one_order_whatever_sets_them(store: localmem.Store) -> None:
    """Every flag set on a revision is named in FLAGS order, joined by commas for a cell."""
    rev = store.add("x", user_id="u")
    everything = dataclasses.replace(rev, stale=True, corrected=True, erased=True, retracted=True,
                                     expired=True, superseded_by="01LATER")
    assert flags(everything) == list(FLAGS)
    assert flags(dataclasses.replace(rev, stale=True, expired=True)) == ["expired", "stale"]
    assert flags_text(dataclasses.replace(rev, corrected=True, superseded_by="01LATER")) \
        == "corrected, superseded"
    assert flags(rev) == [] and flags_text(rev) == ""


def test_marks_name_the_chain_where_ids_fit(store: localmem.Store) -> None:
    """marks spells superseded with its successor's id, and adds the predecessor a memory supersedes."""
    old, new = _moves(store)
    assert marks(old) == f"superseded by {new.memory_id}"
    assert marks(new) == f"supersedes {old.memory_id}"
    assert marks(dataclasses.replace(new, corrected=True)) == f"corrected, supersedes {old.memory_id}"


def test_interval_is_the_library_rendering(store: localmem.Store) -> None:
    """An interval reads as str(ValidTime) does, at its precision and in its zone; none is '-'."""
    old, new = _moves(store)
    assert interval(old.valid) == str(old.valid) == "2023-05 until 2025-09-01"
    assert interval(new.valid) == "since 2025-09-01"
    weekend = localmem.ValidTime(datetime(2025, 6, 13, 22, tzinfo=UTC), datetime(2025, 6, 15, 22, tzinfo=UTC),
                                 "weekend", "Europe/Berlin")
    assert interval(weekend) == "weekend of 2025-06-14 to 2025-06-15"
    assert interval(None) == "-"


def test_local_times_are_on_the_users_wall_clock() -> None:
    """An instant shows in the user's zone: compact for tables, ISO with the offset for the CLI."""
    at = datetime(2025, 9, 3, 16, 55, 7, tzinfo=UTC)
    assert local_time(at, "Europe/Berlin") == "2025-09-03 18:55"
    assert local_time(at, "Europe/Berlin", seconds=True) == "2025-09-03 18:55:07"
    assert local_iso(at, "Europe/Berlin") == "2025-09-03T18:55:07+02:00"
    assert local_time(None, "UTC") == local_iso(None, "UTC") == "-"


def test_memory_text_carries_its_value_as_json(store: localmem.Store) -> None:
    """A memory reads as its text then ` = ` and its JSON value; strings stay quoted; erased hides both."""
    fee = store.add("fee for fill 42", user_id="acct", value=7)
    assert memory_text(fee) == "fee for fill 42 = 7"
    name = store.add("nickname", user_id="acct", value="seven")
    assert memory_text(name) == 'nickname = "seven"' and value_text(name.value) == '"seven"'
    assert memory_text(store.add("no value", user_id="acct")) == "no value"
    assert value_text(None) == ""
    store.erase(fee.memory_id, "privacy")
    erased = store.get(fee.memory_id)
    assert erased is not None and memory_text(erased) == "[erased]"


def test_value_text_reads_back_through_parse_json() -> None:
    """What value_text shows is what parse_json reads back: 7 and "7" stay different values."""
    for value in (7, "7", 4.5, None, True, [1, "a"], {"a": {"b": 1}}, "café"):
        text = value_text(value)
        assert (parse_json(text, "Value") if text else None) == value
    assert parse_json("7", "Value") != parse_json('"7"', "Value")


@pytest.mark.parametrize("text", ["seven", "{not json", "'quoted'", ""])
def test_parse_json_refuses_what_is_not_json(text: str) -> None:
    """Text that is not JSON is refused with an InvalidInputError naming it and what was expected."""
    with pytest.raises(localmem.InvalidInputError) as caught:
        parse_json(text, "--value")
    message = str(caught.value)
    assert message.startswith(f"--value {text!r} is not JSON: numbers as they are (7), strings quoted")
    assert isinstance(caught.value, ValueError)


def test_the_cli_refuses_a_value_with_the_same_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--value seven` fails with parse_json's own message (the TUI's Value field shows it too)."""
    from localmem.cli import main

    db = tmp_path / "m.db"
    with pytest.raises(localmem.InvalidInputError) as caught:
        parse_json("seven", "--value")
    assert main(["--db", str(db), "add", "x", "--user", "u", "--value", "seven"]) == 1
    assert capsys.readouterr().err == f"localmem: error: {caught.value}\n"
    with localmem.open(db, clock=FrozenClock("2026-03-02T08:00:00Z")) as store:
        assert store.users() == []
