"""The relay: devices sync through the hub, erasures travel through it, erased words leave it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

import localmem
from localmem.cli import main
from localmem.hub import db, ingest, relay
from localmem.testing import FrozenClock

Conn = psycopg.Connection[tuple[Any, ...]]


@pytest.fixture
def hub(hub_dsn: str) -> Iterator[Conn]:
    with db.connect(hub_dsn) as conn:
        db.init(conn)
        yield conn


def test_a_device_syncs_through_the_hub_and_an_erasure_follows(hub: Conn, tmp_path: Path) -> None:
    clock = FrozenClock("2026-03-02T08:00:00Z")
    phone, laptop = localmem.open(":memory:", clock=clock), localmem.open(":memory:", clock=clock)
    fee = phone.add("fee for fill 42", user_id="sam", value=7, resolve=False)
    knee = phone.add("knee hurts after long runs", user_id="sam", resolve=False)
    phone.correct(fee.memory_id, value=8)
    first = phone.export(tmp_path / "p1.gz")
    clock.advance(minutes=5)
    ingest.ingest(hub, first.path, clock=clock)
    out = relay.export(hub, tmp_path / "hub1.gz", clock=clock)
    assert (out.origin, out.revisions, out.memories, out.since) == (db.hub_id(hub), 3, 2, 0)
    assert laptop.import_(out.path).revisions == 3  # a device verifies the hub's file like a peer's
    assert laptop.digest() == phone.digest()

    clock.advance(minutes=5)
    phone.erase(knee.memory_id, reason="asked to forget")
    ingest.ingest(hub, phone.export(tmp_path / "p2.gz", since=first.watermark).path, clock=clock)
    knee_id = (knee.memory_id,)
    assert hub.execute("SELECT count(*) FROM content WHERE memory_id = %s", knee_id).fetchone() == (0,)
    assert hub.execute("SELECT count(*) FROM revisions WHERE memory_id = %s", knee_id).fetchone() == (1,)
    clock.advance(minutes=5)
    second = relay.export(hub, tmp_path / "hub2.gz", clock=clock, since=out.watermark)
    assert (second.revisions, second.tombstones) == (0, 1)
    laptop.import_(second.path)
    assert laptop.digest() == phone.digest()
    assert [r.memory_id for r in laptop.read("sam")] == [fee.memory_id]
    assert laptop.connection.execute("SELECT count(*) FROM content WHERE memory_id = ?",
                                     (knee.memory_id,)).get == 0
    again = relay.export(hub, tmp_path / "hub3.gz", clock=clock, since=second.watermark)
    assert (again.revisions, again.watermark) == (0, second.watermark)


def test_a_relay_export_of_one_user_carries_only_that_users_rows(hub: Conn, tmp_path: Path) -> None:
    clock = FrozenClock("2026-03-02T08:00:00Z")
    phone = localmem.open(":memory:", clock=clock)
    phone.add("sam's note", user_id="sam", resolve=False)
    phone.add("ann's note", user_id="ann", resolve=False)
    ingest.ingest(hub, phone.export(tmp_path / "p.gz").path, clock=clock)
    out = relay.export(hub, tmp_path / "ann.gz", clock=clock, user_id="ann")
    tablet = localmem.open(":memory:", clock=clock)
    tablet.import_(out.path)
    assert [r.text for r in tablet.read("ann")] == ["ann's note"]
    assert tablet.read("sam") == []


def test_a_relay_export_refuses_a_bad_watermark(hub: Conn, tmp_path: Path) -> None:
    clock = FrozenClock("2026-03-02T08:00:00Z")
    with pytest.raises(localmem.InvalidInputError, match="since=-1"):
        relay.export(hub, tmp_path / "x.gz", clock=clock, since=-1)
    assert not (tmp_path / "x.gz").exists()


def test_the_command_line_relays(hub_dsn: str, hub: Conn, tmp_path: Path,
                                 capsys: pytest.CaptureFixture[str]) -> None:
    clock = FrozenClock("2026-03-02T08:00:00Z")
    phone = localmem.open(":memory:", clock=clock)
    phone.add("sam's note", user_id="sam", resolve=False)
    path = phone.export(tmp_path / "p.gz").path
    assert main(["hub", "ingest", path, "--dsn", hub_dsn]) == 0
    assert main(["hub", "export", "--since", "0", "--dsn", hub_dsn, "--out", str(tmp_path / "h.gz")]) == 0
    assert "pass --since 1 next time" in capsys.readouterr().out
    tablet = localmem.open(":memory:", clock=clock)
    assert tablet.import_(tmp_path / "h.gz").revisions == 1
