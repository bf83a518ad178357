"""Backfill: an app migrating its own log records each message as known when it was sent.

``add_messages(..., backfill=True)`` (``localmem import --backfill``) records
every memory at its ``sent_at``, so a replay of a past day sees what the app knew
then. Recorded time still never goes backwards: the messages come in send
order, none before the newest time already in the store, none after now.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import localmem
from localmem.cli import main
from localmem.testing import FrozenClock

CHAT = [
    {"role": "user", "content": "My knee hurts after long runs", "sent_at": "2025-03-10T08:00:00Z"},
    {"role": "assistant", "content": "Let's cut the long run", "sent_at": "2025-03-10T08:00:05Z"},
    {"role": "user", "content": "Booked a physio for Friday", "sent_at": "2025-03-11T19:00:00Z"},
    {"role": "user", "content": "Physio says it is the IT band", "sent_at": "2025-03-14T12:00:00Z"},
]


@pytest.fixture
def late() -> FrozenClock:
    """The day the app switched to localmem, long after the chat."""
    return FrozenClock("2025-11-20T09:00:00Z")


@pytest.fixture
def migrating(late: FrozenClock) -> localmem.Store:
    """An empty store on that day."""
    return localmem.open(":memory:", clock=late)


def knew(store: localmem.Store, at: str) -> list[str]:
    return [r.text or "" for r in store.read("sam", known_at=at, current_only=False)]


def test_backfill_records_each_message_when_it_was_sent(migrating: localmem.Store) -> None:
    """Each backfilled memory's recorded_at is its sent_at, so March 11 replays what was known by then."""
    revs = migrating.add_messages(CHAT, user_id="sam", tz="UTC", backfill=True)
    assert [r.recorded_at.isoformat() for r in revs] == [
        "2025-03-10T08:00:00+00:00", "2025-03-11T19:00:00+00:00", "2025-03-14T12:00:00+00:00"]
    assert knew(migrating, "2025-03-11T23:59:00Z") == [
        "My knee hurts after long runs", "Booked a physio for 2025-03-14"]
    assert migrating.doctor().ok


def test_an_ordinary_import_records_now(migrating: localmem.Store) -> None:
    """Without backfill the chat is recorded at the import instant: March 11 knew nothing of it."""
    revs = migrating.add_messages(CHAT, user_id="sam", tz="UTC")
    assert {r.recorded_at.isoformat() for r in revs} == {"2025-11-20T09:00:00+00:00"}
    assert knew(migrating, "2025-03-11T23:59:00Z") == []


def test_backfill_never_goes_before_what_the_store_holds(
    migrating: localmem.Store, late: FrozenClock
) -> None:
    """A store that already recorded something later refuses the backfill, and writes nothing."""
    late.set("2025-06-01T00:00:00Z")
    migrating.add("already here", user_id="ann")
    late.set("2025-11-20T09:00:00Z")
    with pytest.raises(localmem.InvalidInputError, match=r"messages\[0\]\.sent_at.*newest time"):
        migrating.add_messages(CHAT, user_id="sam", tz="UTC", backfill=True)
    assert migrating.users() == ["ann"]


def test_backfill_needs_send_order_and_no_future(migrating: localmem.Store) -> None:
    """Messages out of send order, or sent after the store's now, are refused whole."""
    with pytest.raises(localmem.InvalidInputError, match=r"messages\[1\]\.sent_at"):
        migrating.add_messages([CHAT[2], CHAT[0]], user_id="sam", tz="UTC", backfill=True)
    future = {"role": "user", "content": "tomorrow's news", "sent_at": "2025-12-01T00:00:00Z"}
    with pytest.raises(localmem.InvalidInputError, match="cannot record the future"):
        migrating.add_messages([CHAT[0], future], user_id="sam", tz="UTC", backfill=True)
    assert migrating.users() == []


def test_writes_after_a_backfill_never_go_backwards(migrating: localmem.Store, late: FrozenClock) -> None:
    """After a backfill the next ordinary write is recorded at the clock, later than every backfilled one."""
    migrating.add_messages(CHAT, user_id="sam", tz="UTC", backfill=True)
    rev = migrating.add("ran 10K", user_id="sam")
    assert rev.recorded_at.isoformat() == "2025-11-20T09:00:00+00:00"
    assert migrating.last_recorded_at() == rev.recorded_at


def test_import_backfill_through_the_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`localmem import chat.json --backfill` says each memory was recorded when it was sent."""
    chat, db = tmp_path / "chat.json", tmp_path / "m.db"
    chat.write_text(json.dumps(CHAT))
    argv = ["--db", str(db), "--now", "2025-11-20T09:00Z"]
    assert main([*argv, "import", str(chat), "--user", "sam", "--backfill"]) == 0
    out, err = capsys.readouterr()
    assert (out, err) == ("imported 3 memories for sam (1 with a time phrase resolved; "
                          "each recorded when it was sent)\n", "")
    assert main(["--db", str(db), "--json", "read", "--user", "sam", "--known-at", "2025-03-10T12:00Z"]) == 0
    assert [r["text"] for r in json.loads(capsys.readouterr().out)] == ["My knee hurts after long runs"]
