"""Append-only storage: no connection can update or delete a stored row.

schema.sql's triggers refuse UPDATE and DELETE on every table that holds
revisions, whoever runs the statement: the store's own apsw connection, the
stdlib sqlite3 module, or a person at a SQLite shell. Content is destroyed only
by an erasure's tombstone, and a revision never carries an end of record time
that a later write would have to fill in.
"""

from __future__ import annotations

import contextlib
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import apsw
import pytest
import sqlite_utils

import localmem
from localmem.core.db import transaction
from localmem.testing import FrozenClock

#: The tables that hold revisions (and what the store knows about itself).
TABLES = ("store_meta", "memories", "revisions", "content", "erasures", "usage",
          "runs", "run_events", "artifacts", "decisions", "decision_sources", "derivations",
          "imports", "extra_tombstones", "sync_peers")

#: Per table, a column and a new value its CHECK constraints accept, so that only
#: the immutability triggers can refuse the change.
CHANGE = {
    "store_meta": ("value", "value || 'x'"),
    "memories": ("kind", "kind || 'x'"),
    "revisions": ("tz", "tz || 'x'"),
    "content": ("text", "text || 'x'"),
    "erasures": ("reason", "'changed'"),
    "usage": ("run_id", "'changed'"),
    "runs": ("user_id", "user_id || 'x'"),
    "run_events": ("recorded_at", "recorded_at + 1"),
    "artifacts": ("recorded_at", "recorded_at + 1"),
    "decisions": ("step", "step || 'x'"),
    # Links name existing revisions (foreign keys): the same id, rewritten, is still a change refused.
    "decision_sources": ("rev_id", "rev_id"),
    "derivations": ("source_rev", "source_rev"),
    "imports": ("arrived_at", "arrived_at + 1"),
    "extra_tombstones": ("reason", "'changed'"),
    "sync_peers": ("mark", "mark + 1"),
}

#: The primary key of each table, for the upsert form of an update.
PRIMARY_KEY = {
    "store_meta": "name",
    "memories": "memory_id",
    "revisions": "seq",
    "content": "rev_seq",
    "erasures": "memory_id",
    "usage": "seq",
    "runs": "run_id",
    "run_events": "seq",
    "artifacts": "sha256",
    "decisions": "decision_id",
    "decision_sources": "decision_id, position",
    "derivations": "memory_id, position",
    "imports": "import_id",
    "extra_tombstones": "tomb_id",
    "sync_peers": "seq",
}


def _update_sql(table: str) -> str:
    column, value = CHANGE[table]
    return f"UPDATE {table} SET {column} = {value}"


def _delete_sql(table: str) -> str:
    return f"DELETE FROM {table}"


def _upsert_sql(table: str, columns: list[str]) -> str:
    column, value = CHANGE[table]
    cols = ", ".join(columns)
    # WHERE true: without it SQLite reads ON CONFLICT as part of the SELECT's join.
    return (f"INSERT INTO {table} ({cols}) SELECT {cols} FROM {table} WHERE true"
            f" ON CONFLICT ({PRIMARY_KEY[table]}) DO UPDATE SET {column} = {value}")


def _replace_sql(table: str, columns: list[str]) -> str:
    column, value = CHANGE[table]
    picked = ", ".join(value if c == column else c for c in columns)
    return f"INSERT OR REPLACE INTO {table} ({', '.join(columns)}) SELECT {picked} FROM {table}"


UPDATE_AND_DELETE = [
    pytest.param(table, verb, id=f"{verb}-{table}") for verb in ("update", "delete") for table in TABLES
]
#: A shell runs a process per statement: the replay tables' triggers are the same kind, so one
#: of them stands for all there (the store's and the stdlib connections check every table).
SHELL_UPDATE_AND_DELETE = [
    p for p in UPDATE_AND_DELETE
    if p.values[0] not in ("runs", "run_events", "artifacts", "decision_sources", "derivations")
]


def _statement(table: str, verb: str, path: Path) -> str:
    if verb == "update":
        return _update_sql(table)
    if verb == "delete":
        return _delete_sql(table)
    columns = _columns(path, table)
    return _upsert_sql(table, columns) if verb == "upsert" else _replace_sql(table, columns)


def _columns(path: Path, table: str) -> list[str]:
    with contextlib.closing(sqlite3.connect(path)) as conn:
        return [row[1] for row in conn.execute(f"PRAGMA table_info({table})")]


def dump(path: Path) -> dict[str, object]:
    """Every row of every table in the file (shadow tables of the index too), and the header pragmas."""
    conn = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        out: dict[str, object] = {
            "user_version": conn.pragma("user_version"),
            "application_id": conn.pragma("application_id"),
            "schema": sorted(conn.execute("SELECT type, name, sql FROM sqlite_schema").fetchall(),
                             key=repr),
        }
        names = [r[0] for r in conn.execute(
            "SELECT name FROM sqlite_schema WHERE type = 'table'"
            " AND name NOT LIKE 'sqlite_%' AND sql NOT LIKE 'CREATE VIRTUAL%'")]
        for name in names:
            out[name] = sorted(conn.execute(f'SELECT * FROM "{name}"').fetchall(), key=repr)
        return out
    finally:
        conn.close()


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A closed store file with rows in every table: live, corrected and erased memories."""
    path = tmp_path_factory.mktemp("immutability") / "template.db"
    clock = FrozenClock("2026-03-02T08:00:00Z")
    with localmem.open(path, clock=clock) as store:
        kept = store.add("Ann lives in Lisbon", user_id="ann", key="home_city")
        store.add("Ann likes green tea", user_id="ann", kind="preference")
        gone = store.add("Ann's bank PIN is 4711", user_id="ann")
        clock.advance(minutes=5)
        store.correct(kept.memory_id, text="Ann lives in Porto")
        clock.advance(minutes=5)
        store.erase(gone.memory_id, reason="user asked")
        store.search("Ann", user_id="ann", run_id="template")  # a usage row
        run = store.run("template", user_id="ann")  # a run, its events, a receipt and a summary
        run.step("look")
        hits = run.search("Ann")
        run.record_decision("reply", retrieved=hits, prompt="Ann lives in Porto")
        store.derive("Ann: Porto, green tea", from_=hits)
        # Sync: a phone shares a memory, both devices erase it, the phone's tombstone arrives
        # second (an extra tombstone), and a sync folder records how far it read the phone.
        phone_path, folder = path.parent / "phone.db", path.parent / "shared"
        folder.mkdir()
        with localmem.open(phone_path, clock=clock) as phone:
            shared = phone.add("Ann's old number", user_id="ann")
            phone.export(path.parent / "first.lmsync.gz")
            store.import_(path.parent / "first.lmsync.gz")
            clock.advance(minutes=1)
            phone.erase(shared.memory_id, reason="on the phone")
            store.erase(shared.memory_id, reason="on the laptop")
            phone.sync_dir(folder)
        store.sync_dir(folder)
        for table in TABLES:
            count = store.connection.execute(f"SELECT count(*) FROM {table}").get
            assert count > 0, f"{table} is empty: the statements below would change nothing"
    return path


@pytest.fixture
def populated(template: Path, db_path: Path, clock: FrozenClock) -> Iterator[localmem.Store]:
    """An open store on a fresh copy of the template file."""
    shutil.copyfile(template, db_path)
    clock.set("2026-03-02T09:00:00Z")  # after everything the template recorded
    store = localmem.open(db_path, clock=clock)
    yield store
    store.close()


def _shells() -> list[object]:
    shells: list[object] = [pytest.param([sys.executable, "-m", "apsw"], id="apsw-shell")]
    cli = shutil.which("sqlite3")
    if cli is not None:
        shells.append(pytest.param([cli], id="sqlite3-cli"))
    return shells


# -- the store's own connection ---------------------------------------------------------


@pytest.mark.parametrize(("table", "verb"), UPDATE_AND_DELETE)
def test_store_connection_refuses_update_and_delete(
    populated: localmem.Store, table: str, verb: str
) -> None:
    """UPDATE and DELETE via the store's apsw connection raise "immutable" ConstraintError, change nothing."""
    path = Path(populated.path)
    before = dump(path)
    with pytest.raises(apsw.ConstraintError, match="immutable"):
        populated.connection.execute(_statement(table, verb, path))
    assert dump(path) == before
    assert populated.connection.getautocommit()


@pytest.mark.parametrize("verb", ["upsert", "replace"])
@pytest.mark.parametrize("table", TABLES)
def test_store_connection_refuses_upsert_and_replace(
    populated: localmem.Store, table: str, verb: str
) -> None:
    """An upsert or INSERT OR REPLACE over rows via the store's connection is refused, changes nothing."""
    path = Path(populated.path)
    before = dump(path)
    with pytest.raises(apsw.ConstraintError, match="immutable"):
        populated.connection.execute(_statement(table, verb, path))
    assert dump(path) == before


@pytest.mark.parametrize(("table", "verb"), UPDATE_AND_DELETE)
def test_store_transaction_maps_refusal_to_immutable_error(
    populated: localmem.Store, table: str, verb: str
) -> None:
    """Inside localmem's transaction() a refused UPDATE or DELETE surfaces as localmem.ImmutableError."""
    path = Path(populated.path)
    before = dump(path)
    with pytest.raises(localmem.ImmutableError, match="immutable"), \
            transaction(populated.connection) as conn:
        conn.execute(_statement(table, verb, path))
    assert dump(path) == before


# -- the stdlib sqlite3 module ------------------------------------------------------------


@contextlib.contextmanager
def _stdlib(path: Path) -> Iterator[sqlite3.Connection]:
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        yield conn
    finally:
        conn.close()


@pytest.mark.parametrize(("table", "verb"), UPDATE_AND_DELETE)
def test_stdlib_sqlite3_refuses_update_and_delete(
    populated: localmem.Store, table: str, verb: str
) -> None:
    """UPDATE and DELETE through the stdlib sqlite3 module raise sqlite3.IntegrityError and change nothing."""
    path = Path(populated.path)
    before = dump(path)
    with _stdlib(path) as conn, pytest.raises(sqlite3.IntegrityError, match="immutable"):
        conn.execute(_statement(table, verb, path))
    assert dump(path) == before


@pytest.mark.parametrize("verb", ["upsert", "replace"])
@pytest.mark.parametrize("table", TABLES)
def test_stdlib_sqlite3_refuses_upsert_and_replace(
    populated: localmem.Store, table: str, verb: str
) -> None:
    """Upsert or INSERT OR REPLACE via stdlib sqlite3 (recursive triggers off) is refused, changes nothing."""
    path = Path(populated.path)
    before = dump(path)
    with _stdlib(path) as conn, pytest.raises(sqlite3.IntegrityError, match="immutable"):
        conn.execute(_statement(table, verb, path))
    assert dump(path) == before


# -- a shell a person types into ------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("shell", _shells())
@pytest.mark.parametrize(("table", "verb"), SHELL_UPDATE_AND_DELETE)
def test_shell_refuses_update_and_delete(
    populated: localmem.Store, shell: list[str], table: str, verb: str
) -> None:
    """UPDATE and DELETE in a SQLite shell exit non-zero, say "immutable", and change nothing."""
    path = Path(populated.path)
    before = dump(path)
    result = subprocess.run(
        [*shell, str(path), _statement(table, verb, path)],
        capture_output=True, text=True, timeout=60, check=False,
    )
    assert result.returncode != 0, result.stdout
    assert "immutable" in result.stderr
    assert dump(path) == before


# -- content is destroyed only by a tombstone ------------------------------------------------


def test_deleting_live_content_is_refused_without_a_tombstone(populated: localmem.Store) -> None:
    """Deleting the content of a memory that has no tombstone fails, through apsw and stdlib sqlite3 alike."""
    path = Path(populated.path)
    live = populated.read("ann")[0].memory_id
    before = dump(path)
    sql = "DELETE FROM content WHERE memory_id = ?"
    with pytest.raises(apsw.ConstraintError, match="content is destroyed only by erase"):
        populated.connection.execute(sql, (live,))
    with _stdlib(path) as conn, \
            pytest.raises(sqlite3.IntegrityError, match="content is destroyed only by erase"):
        conn.execute(sql, (live,))
    assert dump(path) == before


def test_erase_destroys_content_and_keeps_revisions(populated: localmem.Store) -> None:
    """store.erase deletes exactly that memory's content rows and index entries, and keeps its revisions."""
    conn = populated.connection
    target = populated.add("Ann's locker code is 9931", user_id="ann")
    populated.correct(target.memory_id, text="Ann's locker code is 9932")
    other_content = conn.execute(
        "SELECT * FROM content WHERE memory_id != ? ORDER BY rev_seq", (target.memory_id,)).fetchall()
    revisions_before = conn.execute("SELECT * FROM revisions ORDER BY seq").fetchall()
    assert conn.execute("SELECT count(*) FROM content WHERE memory_id = ?",
                        (target.memory_id,)).get == 2

    populated.erase(target.memory_id)

    assert conn.execute("SELECT count(*) FROM content WHERE memory_id = ?",
                        (target.memory_id,)).get == 0
    assert conn.execute("SELECT count(*) FROM content_fts WHERE content_fts MATCH '9931 OR 9932'").get == 0
    assert conn.execute("SELECT * FROM revisions ORDER BY seq").fetchall() == revisions_before
    assert conn.execute(
        "SELECT * FROM content WHERE memory_id != ? ORDER BY rev_seq",
        (target.memory_id,)).fetchall() == other_content
    assert populated.doctor().ok


def test_inserting_a_tombstone_is_what_destroys_content(populated: localmem.Store) -> None:
    """A tombstone inserted by hand destroys that memory's content: the trigger does it, not store code."""
    conn = populated.connection
    target = populated.add("Ann's spare key is under the mat", user_id="ann")
    others = conn.execute("SELECT count(*) FROM content WHERE memory_id != ?", (target.memory_id,)).get
    with transaction(conn):
        conn.execute(
            "INSERT INTO erasures (memory_id, tomb_id, user_id, erased_at, origin)"
            " VALUES (?, ?, 'ann', ?, 'test')",
            (target.memory_id, "T" * 26, 1_900_000_000_000_000),
        )
    assert conn.execute("SELECT count(*) FROM content WHERE memory_id = ?", (target.memory_id,)).get == 0
    assert conn.execute("SELECT count(*) FROM content WHERE memory_id != ?",
                        (target.memory_id,)).get == others
    assert populated.doctor().ok


# -- no mutable end of record time ------------------------------------------------------------


REVISION_COLUMNS = [
    "seq", "rev_id", "memory_id", "user_id", "version", "op", "valid_from", "valid_to",
    "precision", "valid_source", "observed_at", "recorded_at", "tz", "expires_at",
    "retracted", "corrected", "prev_rev", "supersedes", "superseded_by", "origin",
    # Sync's: an order key and the start of local visibility, neither an end of record time.
    "hlc", "arrived_at",
    # Tamper evidence's hashes (localmem/core/chain.py).
    "content_hash", "rev_hash", "chain",
    # Schema 9's local copies of the memory's kind and key (a get reads no memories row).
    "memory_kind", "memory_key",
]


def test_revisions_have_no_record_time_end_column(populated: localmem.Store) -> None:
    """The revisions table stores when a revision was recorded, with no column for when it stopped being."""
    db = sqlite_utils.Database(sqlite3.connect(populated.path))
    try:
        columns = [c.name for c in db["revisions"].columns]
    finally:
        db.conn.close()
    assert columns == REVISION_COLUMNS
    assert [c for c in columns if "record" in c] == ["recorded_at"]
    assert not [c for c in columns if c.startswith(("sys_", "tx_", "transaction_"))]


def _quoted_rows(conn: apsw.Connection, table: str, key: str) -> dict[int, tuple[str, ...]]:
    columns = [r[1] for r in conn.execute(f"PRAGMA table_info({table})")]
    # quote() renders each value exactly as stored: its type and every byte.
    select = ", ".join(f"quote({c})" for c in columns)
    return {row[0]: tuple(row) for row in conn.execute(
        f"SELECT {key}, {select} FROM {table} ORDER BY {key}")}


def test_correction_leaves_earlier_revisions_byte_identical(
    populated: localmem.Store, clock: FrozenClock
) -> None:
    """After corrections every earlier revision row and its content row are stored exactly as before."""
    conn = populated.connection
    target = populated.add("Ann's dentist is Dr Silva", user_id="ann", value={"floor": 3},
                           attributes={"city": "Porto"}, source={"msg": 17})
    revisions = _quoted_rows(conn, "revisions", "seq")
    content = _quoted_rows(conn, "content", "rev_seq")

    clock.advance(hours=1)
    populated.correct(target.memory_id, text="Ann's dentist is Dr Sousa", value={"floor": 4})
    clock.advance(hours=1)
    populated.correct(target.memory_id, valid_from="2026-01-01", reason="she said January")

    revisions_after = _quoted_rows(conn, "revisions", "seq")
    content_after = _quoted_rows(conn, "content", "rev_seq")
    assert len(revisions_after) == len(revisions) + 2
    assert {seq: revisions_after[seq] for seq in revisions} == revisions
    assert {seq: content_after[seq] for seq in content} == content
    history = populated.history(target.memory_id)
    assert [c.op for c in history] == ["assert", "correct", "correct"]
    assert history[0].new_text == "Ann's dentist is Dr Silva"
