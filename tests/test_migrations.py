"""Schema step 10: the revisions' CHECKs rewritten in place, and content_memory gone.

A version-9 file (made the way a real one was: a version-1 file taken through steps 2..9) opens
as version 10 with exactly the schema a fresh file has, its rows and full-text index intact, its
CHECKs still refusing what they refused, and no INSERT into revisions building an ephemeral
table. The step is one transaction: a process killed half way through it leaves the version-9
file, which the next open migrates; a file whose revisions statement is not schema 9's, or whose
rows would fail the new statement, is refused and left unchanged.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import apsw
import pytest

import localmem
from localmem.core import db as _db
from localmem.core import sql as _sql
from localmem.core.migrations import SCHEMA_EDITS
from localmem.testing import FrozenClock

MEMORY = "M" * 26


def _schema_of(conn: apsw.Connection) -> list[tuple[str, str, str | None]]:
    """Every object but the planner's statistics, sorted by (type, name)."""
    return sorted((str(t), str(n), None if s is None else str(s)) for t, n, s in conn.execute(
        "SELECT type, name, sql FROM sqlite_schema WHERE name NOT LIKE 'sqlite_stat%'"))


def _version_9_file(path: Path, clock: FrozenClock, monkeypatch: pytest.MonkeyPatch) -> None:
    """A version-9 file holding one memory of three revisions (an assert, two corrections)."""
    conn = apsw.Connection(str(path))
    conn.execute((Path(__file__).parent / "data" / "schema_v1.sql").read_text(encoding="utf-8"))
    conn.pragma("application_id", _db.APPLICATION_ID)
    conn.execute("INSERT INTO store_meta (name, value) VALUES ('device_id', 'v1'), ('schema_created', '1')")
    conn.pragma("user_version", 1)
    conn.close()
    with monkeypatch.context() as m:
        m.setattr(_db, "SCHEMA_VERSION", 9)
        localmem.open(path, clock=clock).close()  # steps 2..9
    conn = apsw.Connection(str(path))
    assert conn.pragma("user_version") == 9
    conn.execute("INSERT INTO memories (memory_id, user_id, kind, key, created_at)"
                 " VALUES (?, 'sam', 'fact', NULL, 1)", (MEMORY,))
    prev = None
    for n, (op, precision, source, text) in enumerate((
            ("assert", "day", "resolved", "Sam hurt his knee on Monday"),
            ("correct", "instant", "explicit", "Sam hurt his knee on Tuesday"),
            ("correct", "unknown", "assumed", "Sam hurt his knee, maybe"))):
        rev_id = chr(ord("A") + n) * 26
        conn.execute(
            "INSERT INTO revisions (rev_id, memory_id, user_id, version, op, valid_from, precision,"
            " valid_source, observed_at, recorded_at, tz, retracted, corrected, prev_rev, origin, hlc,"
            " arrived_at) VALUES (?, ?, 'sam', ?, ?, 1, ?, ?, ?, ?, 'UTC', ?, ?, ?, 'v9', ?, ?)",
            (rev_id, MEMORY, n + 1, op, precision, source, n + 1, n + 1, 0, int(op == "correct"), prev,
             (n + 1) << 10, n + 1))
        conn.execute("INSERT INTO content (rev_seq, memory_id, text) VALUES (?, ?, ?)", (n + 1, MEMORY, text))
        prev = rev_id
    conn.close()


def _fresh_schema(path: Path, clock: FrozenClock) -> list[tuple[str, str, str | None]]:
    with localmem.open(path, clock=clock) as fresh:
        return _schema_of(fresh.connection)


def test_a_version_9_file_is_migrated_to_what_schema_sql_makes_with_its_rows_intact(
    db_path: Path, tmp_path: Path, clock: FrozenClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Step 10 leaves the exact schema of a fresh file; the rows, the index and the erase still work."""
    _version_9_file(db_path, clock, monkeypatch)
    with localmem.open(db_path, clock=clock) as store:
        conn = store.connection
        assert conn.pragma("user_version") == _db.SCHEMA_VERSION == 10
        assert _schema_of(conn) == _fresh_schema(tmp_path / "fresh.db", clock)
        assert conn.execute("SELECT op, precision, valid_source FROM revisions ORDER BY seq").fetchall() == [
            ("assert", "day", "resolved"), ("correct", "instant", "explicit"),
            ("correct", "unknown", "assumed")]
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        hits = store.search("knee", user_id="sam", current_only=False)
        assert {h.revision.memory_id for h in hits} == {MEMORY}
        assert store.doctor().ok
        store.erase(MEMORY, reason="asked")
        assert conn.execute("SELECT count(*) FROM content").get == 0
        assert store.search("knee", user_id="sam", current_only=False) == []
        assert conn.execute("SELECT count(*) FROM content_fts WHERE content_fts MATCH 'knee'").get == 0
        assert conn.execute("SELECT count(*) FROM revisions").get == 3
        assert store.doctor().ok


@pytest.mark.parametrize(("column", "value"), [("op", "rewrite"), ("precision", "fortnight"),
                                               ("valid_source", "guessed"), ("op", "Assert")])
def test_the_rewritten_checks_refuse_what_the_in_lists_refused(
    db_path: Path, clock: FrozenClock, monkeypatch: pytest.MonkeyPatch, column: str, value: str
) -> None:
    """A migrated file, like a fresh one, refuses a revision whose op, precision or source is not listed."""
    _version_9_file(db_path, clock, monkeypatch)
    with localmem.open(db_path, clock=clock) as store:
        row = {"op": "assert", "precision": "day", "valid_source": "resolved", column: value}
        with pytest.raises(apsw.ConstraintError, match=f"CHECK constraint failed: {column} ="):
            store.connection.execute(
                "INSERT INTO revisions (rev_id, memory_id, user_id, version, op, valid_from, precision,"
                " valid_source, observed_at, recorded_at, tz, retracted, corrected, origin)"
                " VALUES (?, ?, 'sam', 1, ?, 1, ?, ?, 1, 1, 'UTC', 0, 0, 'v10')",
                ("Z" * 26, MEMORY, row["op"], row["precision"], row["valid_source"]))


def test_no_insert_into_revisions_builds_an_ephemeral_table(store: localmem.Store) -> None:
    """The one-row INSERT the ledger runs checks op, precision and source by comparisons alone."""
    holes = _sql.INSERT_REVISION.count("?")
    plan = [str(r[1]) for r in store.connection.execute(f"EXPLAIN {_sql.INSERT_REVISION}", (None,) * holes)]
    assert "Insert" in plan and "OpenEphemeral" not in plan


def test_a_migration_killed_half_way_leaves_the_version_9_file(
    db_path: Path, tmp_path: Path, clock: FrozenClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A process killed after step 10 rewrote sqlite_schema, before its COMMIT, leaves schema 9 whole."""
    _version_9_file(db_path, clock, monkeypatch)
    before = apsw.Connection(str(db_path))
    old = _schema_of(before)
    before.close()
    script = textwrap.dedent(f"""
        import os
        import localmem
        from localmem.core import db
        edit = db._edit_schema
        def killed(*args):
            edit(*args)
            os._exit(9)  # no COMMIT, no ROLLBACK: the process just ends
        db._edit_schema = killed
        localmem.open({str(db_path)!r})
    """)
    done = subprocess.run([sys.executable, "-c", script], check=False, capture_output=True)
    assert done.returncode == 9, done.stderr
    conn = apsw.Connection(str(db_path))
    assert conn.pragma("user_version") == 9
    assert _schema_of(conn) == old
    assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    conn.close()
    with localmem.open(db_path, clock=clock) as store:
        assert store.connection.pragma("user_version") == 10
        assert _schema_of(store.connection) == _fresh_schema(tmp_path / "fresh.db", clock)
        assert store.connection.execute("SELECT count(*) FROM revisions").get == 3


def test_a_revisions_statement_that_is_not_schema_9s_is_refused_unchanged(
    db_path: Path, clock: FrozenClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Step 10 rewrites only the statement it knows: any other one is a SchemaVersionError, file unchanged."""
    _version_9_file(db_path, clock, monkeypatch)
    table, before, after = SCHEMA_EDITS[10]
    monkeypatch.setitem(SCHEMA_EDITS, 10, (table, before.replace("length(tz) > 0", "length(tz) > 1"), after))
    image = db_path.read_bytes()
    with pytest.raises(localmem.SchemaVersionError, match="migration step 10 does not apply"):
        localmem.open(db_path, clock=clock)
    assert db_path.read_bytes() == image


def test_rows_that_fail_the_rewritten_statement_are_refused_unchanged(
    db_path: Path, clock: FrozenClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The quick_check after the edit tests every row: a row the new statement refuses rolls the step back."""
    _version_9_file(db_path, clock, monkeypatch)
    table, before, after = SCHEMA_EDITS[10]
    monkeypatch.setitem(SCHEMA_EDITS, 10, (table, before, after.replace("OR op = 'correct' ", "")))
    with pytest.raises(localmem.SchemaVersionError, match="fails its new statement"):
        localmem.open(db_path, clock=clock)
    conn = apsw.Connection(str(db_path))
    assert conn.pragma("user_version") == 9
    assert "op IN (" in str(conn.execute("SELECT sql FROM sqlite_schema WHERE name = 'revisions'").get)
    assert conn.execute("SELECT count(*) FROM sqlite_schema WHERE name = 'content_memory'").get == 1
    conn.close()
