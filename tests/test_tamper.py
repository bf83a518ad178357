"""Tamper evidence: edits made behind the triggers' back are found by doctor, every time.

The fee walkthrough's memory (4, corrected to 7) plus a later memory is tampered
with the way an attacker with the sqlite3 shell would: triggers dropped and
recreated, a same-named trigger that never fires, the schema text rewritten through
writable_schema, a content row edited, a revision deleted or edited. doctor must
fail each time, naming what it found.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import apsw
import pytest

import localmem
from localmem.core import chain
from localmem.testing import FrozenClock

FAR = "2100-01-01T00:00:00Z"

_NO_UPDATE = ("CREATE TRIGGER content_no_update BEFORE UPDATE ON content BEGIN\n"
              "    SELECT RAISE(ABORT, 'localmem: revisions are immutable: content is never updated');\nEND;")


def _sql_of(conn: apsw.Connection, trigger: str) -> str:
    return str(conn.execute("SELECT sql FROM sqlite_schema WHERE name = ?", (trigger,)).get)


def edit_content_and_recreate_trigger(conn: apsw.Connection, fee: localmem.Revision) -> None:
    sql = _sql_of(conn, "content_no_update")
    conn.execute("DROP TRIGGER content_no_update")
    conn.execute("UPDATE content SET value = '999' WHERE value = '7'")
    conn.execute(sql)


def delete_the_correction(conn: apsw.Connection, fee: localmem.Revision) -> None:
    saved = [_sql_of(conn, t) for t in ("content_no_delete", "revisions_no_delete")]
    conn.execute("DROP TRIGGER content_no_delete")
    conn.execute("DROP TRIGGER revisions_no_delete")
    seq = conn.execute("SELECT seq FROM revisions WHERE memory_id = ? AND version = 2", (fee.memory_id,)).get
    conn.execute("DELETE FROM content WHERE rev_seq = ?", (seq,))
    conn.execute("DELETE FROM revisions WHERE seq = ?", (seq,))
    for sql in saved:
        conn.execute(sql)


def edit_a_revision_field(conn: apsw.Connection, fee: localmem.Revision) -> None:
    sql = _sql_of(conn, "revisions_no_update")
    conn.execute("DROP TRIGGER revisions_no_update")
    conn.execute("UPDATE revisions SET valid_from = valid_from - 86400000000 WHERE rev_id = ?", (fee.rev_id,))
    conn.execute(sql)


def insert_a_revision(conn: apsw.Connection, fee: localmem.Revision) -> None:
    conn.execute(
        "INSERT INTO revisions (rev_id, memory_id, user_id, version, op, valid_from, precision, valid_source,"
        " observed_at, recorded_at, tz, retracted, corrected, prev_rev, origin, hlc, arrived_at)"
        " SELECT 'Z' || substr(rev_id, 2), memory_id, user_id, version + 1, 'correct', valid_from, precision,"
        " valid_source, observed_at, recorded_at + 1, tz, retracted, 1, rev_id, origin, hlc + 1,"
        " (SELECT max(arrived_at) FROM revisions) FROM revisions WHERE rev_id = ?", (fee.rev_id,))
    conn.execute("INSERT INTO content (rev_seq, memory_id, text, value) VALUES (last_insert_rowid(), ?,"
                 " 'the fee', '999')", (fee.memory_id,))


def when_0_trigger(conn: apsw.Connection, fee: localmem.Revision) -> None:
    conn.execute("DROP TRIGGER content_no_update")
    conn.execute(_NO_UPDATE.replace("ON content BEGIN", "ON content WHEN 0 BEGIN"))


def writable_schema_edit(conn: apsw.Connection, fee: localmem.Revision) -> None:
    conn.config(apsw.SQLITE_DBCONFIG_DEFENSIVE, 0)
    conn.execute("PRAGMA writable_schema = ON")
    conn.execute("UPDATE sqlite_schema SET sql = replace(sql, 'BEGIN', 'WHEN 0 BEGIN')"
                 " WHERE name = 'content_no_update'")
    conn.execute("PRAGMA writable_schema = OFF")


def extra_trigger(conn: apsw.Connection, fee: localmem.Revision) -> None:
    conn.execute("CREATE TRIGGER sneaky AFTER INSERT ON revisions BEGIN SELECT 1; END")


def drop_a_check(conn: apsw.Connection, fee: localmem.Revision) -> None:
    conn.config(apsw.SQLITE_DBCONFIG_DEFENSIVE, 0)
    conn.execute("PRAGMA writable_schema = ON")
    conn.execute("UPDATE sqlite_schema SET sql = replace(sql, 'CHECK (length(text) > 0)', '')"
                 " WHERE name = 'content'")
    conn.execute("PRAGMA writable_schema = OFF")


TAMPERS: dict[str, tuple[Callable[[apsw.Connection, localmem.Revision], None], str]] = {
    "content edited, trigger recreated": (edit_content_and_recreate_trigger, "revision hashes chain"),
    "a revision deleted": (delete_the_correction, "revision hashes chain"),
    "a revision field edited": (edit_a_revision_field, "revision hashes chain"),
    "a revision inserted behind localmem": (insert_a_revision, "revision hashes chain"),
    "a same-named WHEN 0 trigger": (when_0_trigger, "immutability triggers present"),
    "writable_schema edit of a trigger": (writable_schema_edit, "immutability triggers present"),
    "an extra trigger": (extra_trigger, "immutability triggers present"),
    "writable_schema edit of a table": (drop_a_check, "tables, indexes and views as schema.sql has them"),
}


@pytest.fixture
def fee_store(db_path: Path, clock: FrozenClock) -> Iterator[localmem.Store]:
    """The fee (4, corrected to 7) and a later memory, so the correction is not the newest revision."""
    s = localmem.open(db_path, clock=clock)
    fee = s.add("the fee", user_id="acct", value=4)
    clock.advance(minutes=5)
    s.correct(fee.memory_id, value=7)
    clock.advance(minutes=5)
    s.add("Sam likes hills", user_id="sam")
    yield s
    s.close()


@pytest.mark.parametrize("name", list(TAMPERS))
def test_each_tampering_is_reported_by_doctor(fee_store: localmem.Store, db_path: Path, name: str) -> None:
    """Every way of editing history behind localmem's back makes doctor fail the check that sees it."""
    tamper, check = TAMPERS[name]
    assert fee_store.doctor().ok
    fee = fee_store.get(fee_store.read("acct")[0].memory_id, known_at=FAR)
    assert fee is not None
    tamper(fee_store.connection, fee)
    fee_store.close()
    with localmem.open(db_path) as reopened:
        report = reopened.doctor()
    failed = {c.name: c.detail for c in report.checks if not c.ok}
    assert check in failed, (name, failed)
    assert not report.ok


def test_the_chain_stays_verifiable_after_an_erase(fee_store: localmem.Store) -> None:
    """An erase destroys the words, not the evidence: the revisions' hashes still check."""
    fee = fee_store.read("acct")[0]
    fee_store.erase(fee.memory_id)
    [check] = [c for c in fee_store.doctor().checks if c.name == "revision hashes chain"]
    assert check.ok and "3 revisions chained" in check.detail


def test_each_revision_hashes_its_content_its_fields_and_its_predecessor(fee_store: localmem.Store) -> None:
    """The stored hashes are what the chain module computes from the row, its content and its parent."""
    rows = fee_store.connection.execute(
        "SELECT r.rev_id, r.prev_rev, r.content_hash, r.rev_hash, r.chain, r.arrived_at, c.text, c.value,"
        " c.attributes, c.source, c.reason, m.kind, m.key, "
        + ", ".join(f"r.{f}" for f in chain.HASHED_FIELDS)
        + " FROM revisions AS r JOIN content AS c ON c.rev_seq = r.seq"
        " JOIN memories AS m ON m.memory_id = r.memory_id ORDER BY r.seq").fetchall()
    hashes: dict[str, bytes] = {}
    head = None
    for rev_id, prev, content_hash, rev_hash, link, arrived, *rest in rows:
        content: list[Any] = rest[:5]
        kind: Any = rest[5]
        key: Any = rest[6]
        fields: list[Any] = rest[7:]
        assert content_hash == chain.content_hash(*content)
        before = hashes.get(str(prev)) if prev else None
        assert rev_hash == chain.rev_hash(fields, kind, key, content_hash, before)
        assert link == chain.link(head, rev_hash, int(arrived))  # type: ignore[arg-type]
        hashes[str(rev_id)], head = rev_hash, link
    assert len(rows) == 3


def test_an_import_refuses_content_that_does_not_match_its_hash(
        fee_store: localmem.Store, tmp_path: Path) -> None:
    """A file whose words were changed (its checksum recomputed, its hashes not) is refused on import."""
    import gzip
    import hashlib
    import json

    path = Path(fee_store.export(tmp_path / "fee.gz").path)
    lines = gzip.decompress(path.read_bytes()).splitlines(keepends=True)
    body = [x.replace(b'"value":"7"', b'"value":"999"') for x in lines[:-1]]
    assert body != lines[:-1]
    trailer = json.loads(lines[-1])
    trailer["end"]["sha256"] = hashlib.sha256(b"".join(body)).hexdigest()
    path.write_bytes(gzip.compress(b"".join(body) + json.dumps(trailer).encode() + b"\n"))
    with localmem.open(tmp_path / "other.db") as other:
        with pytest.raises(localmem.SyncRuleError, match="revision hashes match their content"):
            other.import_(path)
        assert other.connection.execute("SELECT count(*) FROM revisions").get == 0


def test_synced_revisions_keep_their_hashes_and_both_stores_pass_doctor(
        fee_store: localmem.Store, tmp_path: Path) -> None:
    """A revision's hash is the same on every device (it travels); the importer's local chain is its own."""
    with localmem.open(tmp_path / "other.db") as other:
        other.add("other's own first", user_id="u")
        other.import_(fee_store.export(tmp_path / "fee.gz").path)
        q = "SELECT rev_id, rev_hash FROM revisions WHERE origin = ? ORDER BY rev_id"
        assert other.connection.execute(q, (fee_store.device_id,)).fetchall() == \
            fee_store.connection.execute(q, (fee_store.device_id,)).fetchall()
        assert other.doctor().ok and fee_store.doctor().ok
