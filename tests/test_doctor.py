"""doctor: SQLite's integrity check, the full-text index, and localmem's invariants."""

from __future__ import annotations

from pathlib import Path

import pytest

import localmem
from localmem.cli import main


def test_a_healthy_store_passes_every_check(store: localmem.Store) -> None:
    """A store with every kind of write passes all checks."""
    a = store.add("Sam lives in Lisbon", user_id="sam", key="home_city", valid_from="2023-05")
    store.add("Sam lives in Berlin", user_id="sam", key="home_city", valid_from="2025-09-01")
    b = store.add("fee", user_id="acct", value=4)
    store.correct(b.memory_id, value=7)
    store.expire(b.memory_id, "2030-01-01")
    store.retract(b.memory_id)
    store.erase(a.memory_id)
    report = store.doctor()
    assert report.ok, [c for c in report.checks if not c.ok]
    assert len(report.checks) >= 10


def test_a_dropped_immutability_trigger_is_reported(store: localmem.Store) -> None:
    """Someone who drops a trigger to edit rows is caught by doctor."""
    store.add("x", user_id="u")
    store.connection.execute("DROP TRIGGER revisions_no_update")
    report = store.doctor()
    [failed] = [c for c in report.checks if not c.ok]
    assert failed.name == "immutability triggers present"
    assert "revisions_no_update" in failed.detail


def test_a_tampered_full_text_index_is_reported(store: localmem.Store) -> None:
    """An index entry removed behind the store's back fails the FTS check."""
    m = store.add("Sam likes hills", user_id="u")
    seq = store.connection.execute(
        "SELECT seq FROM revisions WHERE rev_id = ?", (m.rev_id,)).get
    store.connection.execute(
        "INSERT INTO content_fts (content_fts, rowid, text) VALUES ('delete', ?, ?)", (seq, m.text))
    failed = [c.name for c in store.doctor().checks if not c.ok]
    assert failed == ["full-text index matches content"]


def test_doctor_command_exits_non_zero_on_problems(
    db_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`localmem doctor` prints each check and exits 1 when one fails."""
    s = localmem.open(db_path)
    s.add("x", user_id="u")
    s.connection.execute("DROP TRIGGER content_no_delete")
    s.close()
    assert main(["--db", str(db_path), "doctor"]) == 1
    out = capsys.readouterr().out
    assert "FAIL immutability triggers present: missing: content_no_delete" in out
    assert out.rstrip().endswith("PROBLEMS FOUND")


def test_doctor_prints_the_chain_head_which_each_write_moves(store: localmem.Store) -> None:
    """The hash chain's check names how many revisions it covers and its head, the newest revision's chain."""
    def chain_check() -> str:
        [check] = [c for c in store.doctor().checks if c.name == "revision hashes chain"]
        assert check.ok
        return check.detail

    m = store.add("fee", user_id="acct", value=4)
    head = store.connection.execute("SELECT chain FROM revisions ORDER BY seq DESC LIMIT 1").get
    assert chain_check() == f"ok: 1 revisions chained, head {head.hex()}"
    store.correct(m.memory_id, value=7)
    later = store.connection.execute("SELECT chain FROM revisions ORDER BY seq DESC LIMIT 1").get
    assert later != head and chain_check() == f"ok: 2 revisions chained, head {later.hex()}"


def test_a_trigger_recreated_with_other_sql_is_reported_by_name(store: localmem.Store) -> None:
    """A trigger of the right name but other SQL (here: one that never fires) fails the trigger check."""
    store.add("x", user_id="u")
    store.connection.execute("DROP TRIGGER revisions_no_delete")
    store.connection.execute("CREATE TRIGGER revisions_no_delete BEFORE DELETE ON revisions WHEN 0 BEGIN"
                             " SELECT RAISE(ABORT, 'localmem: revisions are immutable'); END")
    [failed] = [c for c in store.doctor().checks if not c.ok]
    assert failed.name == "immutability triggers present" and failed.detail == "changed: revisions_no_delete"


def test_a_tombstone_naming_another_user_is_reported(store: localmem.Store) -> None:
    """A tombstone inserted by hand for alice's memory under mallory's name fails doctor."""
    m = store.add("Alice's diagnosis", user_id="alice")
    store.connection.execute(
        "INSERT INTO erasures (memory_id, tomb_id, user_id, erased_at, origin)"
        " VALUES (?, ?, 'mallory', 0, 'x')",
        (m.memory_id, "T" * 26))
    failed = [c.name for c in store.doctor().checks if not c.ok]
    assert failed == ["tombstones carry their memory's user"]


def test_a_summary_left_behind_by_an_erase_made_by_hand_is_reported(store: localmem.Store) -> None:
    """A source erased behind localmem's back (its summary kept, quoting it) fails doctor."""
    source = store.add("Ann's secret nickname is Zorbluxia", user_id="ann")
    store.derive("Ann is called Zorbluxia", from_=[source], user_id="ann")
    store.connection.execute(
        "INSERT INTO erasures (memory_id, tomb_id, user_id, erased_at, origin) VALUES (?, ?, 'ann', 0, 'x')",
        (source.memory_id, "T" * 26))
    failed = [c.name for c in store.doctor().checks if not c.ok]
    assert failed == ["memories derived from an erased one are erased"]


def test_a_revision_whose_copy_of_its_memorys_kind_was_changed_by_hand_is_reported(
        store: localmem.Store) -> None:
    """A revision's copy of its memory's kind (what get reads) edited behind localmem's back fails doctor."""
    m = store.add("Sam lives in Lisbon", user_id="sam", kind="place")
    conn = store.connection
    trigger = conn.execute("SELECT sql FROM sqlite_schema WHERE name = 'revisions_no_update'").get
    conn.execute("DROP TRIGGER revisions_no_update")
    conn.execute("UPDATE revisions SET memory_kind = 'fact' WHERE memory_id = ?", (m.memory_id,))
    conn.execute(trigger)
    failed = [c.name for c in store.doctor().checks if not c.ok]
    assert failed == ["revisions' copies of their memory's kind and key match it"]
