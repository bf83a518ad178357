"""Opening a database: what localmem creates, what it refuses, and that refusing touches nothing.

A file that is not SQLite, or is someone else's SQLite database, or was
written by a newer localmem, is refused with a specific error and left exactly
as it was. A fresh file is private (mode 0600), in WAL mode with foreign keys
on, and its schema is exactly what schema.sql declares.
"""

from __future__ import annotations

import os
import random
import re
import sqlite3
import stat
from pathlib import Path

import apsw
import pytest

import localmem
from localmem.core import db as _db
from localmem.testing import FrozenClock


def _set_user_version(path: Path, version: int) -> None:
    conn = sqlite3.connect(path)
    try:
        conn.execute(f"PRAGMA user_version = {int(version)}")
        conn.commit()
    finally:
        conn.close()


def _side_files(path: Path) -> list[str]:
    return sorted(p.name for p in path.parent.iterdir() if p.name != path.name)


def _localmem_file(path: Path, clock: FrozenClock) -> None:
    with localmem.open(path, clock=clock) as store:
        store.add("Ann lives in Lisbon", user_id="ann")


NOT_SQLITE = {
    "random-bytes": random.Random(0).randbytes(8192),
    "text-file": b"Dear diary,\nthis is not a database.\n" * 200,
    "short-text": b"hello\n",
    "zeros": bytes(4096),
    "fake-header": b"SQLite format 3\x00" + bytes(range(256)) * 16,
}


@pytest.mark.parametrize("content", NOT_SQLITE.values(), ids=NOT_SQLITE.keys())
def test_non_sqlite_file_is_refused_and_unchanged(db_path: Path, content: bytes) -> None:
    """A non-SQLite file raises CorruptDatabaseError and keeps every byte, with no -wal or -shm beside it."""
    db_path.write_bytes(content)
    with pytest.raises(localmem.CorruptDatabaseError, match="not a SQLite database"):
        localmem.open(db_path)
    assert db_path.read_bytes() == content
    assert _side_files(db_path) == []


def test_another_apps_sqlite_file_is_refused_and_unchanged(db_path: Path) -> None:
    """A SQLite database with a table of its own raises CorruptDatabaseError and keeps every byte."""
    conn = sqlite3.connect(db_path)
    try:
        conn.execute("CREATE TABLE recipes (name TEXT, minutes INTEGER)")
        conn.execute("INSERT INTO recipes VALUES ('soup', 40)")
        conn.commit()
    finally:
        conn.close()
    before = db_path.read_bytes()

    with pytest.raises(localmem.CorruptDatabaseError, match="not a localmem one"):
        localmem.open(db_path)

    after = db_path.read_bytes()
    assert after[18:20] == before[18:20], "the file's journal mode was changed (to WAL)"
    assert after == before
    assert _side_files(db_path) == []


def test_newer_schema_version_is_refused_naming_both_versions(
    db_path: Path, clock: FrozenClock
) -> None:
    """A localmem file with a higher user_version raises SchemaVersionError naming its version and ours."""
    _localmem_file(db_path, clock)
    _set_user_version(db_path, 99)
    before = db_path.read_bytes()

    with pytest.raises(localmem.SchemaVersionError) as info:
        localmem.open(db_path)

    message = str(info.value).replace(str(db_path), "<path>")
    assert re.search(r"\b99\b", message), message
    assert re.search(rf"\b{_db.SCHEMA_VERSION}\b", message), message
    assert db_path.read_bytes() == before


def test_lower_version_without_migration_is_refused(db_path: Path, clock: FrozenClock) -> None:
    """A localmem file at a version no migration leads from raises SchemaVersionError naming it."""
    _localmem_file(db_path, clock)
    _set_user_version(db_path, 0)

    with pytest.raises(localmem.SchemaVersionError) as info:
        localmem.open(db_path)

    message = str(info.value).replace(str(db_path), "<path>")
    assert re.search(r"\b0\b", message), message


def test_gap_in_migrations_is_refused_before_any_step_runs(
    db_path: Path, clock: FrozenClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With a later migration step missing, opening fails before any step runs: the file is unchanged."""
    _localmem_file(db_path, clock)
    current = _db.SCHEMA_VERSION
    monkeypatch.setattr(_db, "SCHEMA_VERSION", current + 2)
    step_two = "CREATE TABLE step_two (x INTEGER) STRICT"
    monkeypatch.setattr(_db, "MIGRATIONS", {**_db.MIGRATIONS, current + 1: step_two})

    with pytest.raises(localmem.SchemaVersionError, match="no migration"):
        localmem.open(db_path)

    conn = sqlite3.connect(db_path)
    try:
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_schema")}
    finally:
        conn.close()
    assert version == current
    assert "step_two" not in tables


def test_fresh_file_is_private(db_path: Path, clock: FrozenClock) -> None:
    """A new database file, its -wal and its -shm are created readable and writable by the owner only."""
    with localmem.open(db_path, clock=clock) as store:
        store.add("Ann lives in Lisbon", user_id="ann")
        for name in (db_path, Path(f"{db_path}-wal"), Path(f"{db_path}-shm")):
            assert stat.S_IMODE(name.stat().st_mode) == 0o600, name
    assert stat.S_IMODE(db_path.stat().st_mode) == 0o600


def test_fresh_file_in_a_new_directory(tmp_path: Path, clock: FrozenClock) -> None:
    """Opening a path whose directories do not exist yet creates them and the file."""
    path = tmp_path / "a" / "b" / "mem.db"
    with localmem.open(path, clock=clock) as store:
        assert Path(store.path) == path
    assert path.is_file()


def test_default_path_is_in_the_user_data_dir() -> None:
    """localmem.open(None) creates localmem/localmem.db under XDG_DATA_HOME (platformdirs' data dir)."""
    home = Path(os.environ["XDG_DATA_HOME"])  # a temp dir, set by conftest for every test
    with localmem.open(None) as store:
        path = Path(store.path)
        store.add("Ann lives in Lisbon", user_id="ann")
    assert path == home / "localmem" / "localmem.db"
    assert path == _db.default_path()
    assert path.is_file()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_memory_store_works(clock: FrozenClock) -> None:
    """':memory:' opens a working store that holds nothing on disk."""
    with localmem.open(":memory:", clock=clock) as store:
        rev = store.add("Ann lives in Lisbon", user_id="ann")
        assert [r.memory_id for r in store.read("ann")] == [rev.memory_id]
        assert store.info().schema_version == _db.SCHEMA_VERSION
        assert store.doctor().ok


def test_reopening_keeps_identity_and_data(db_path: Path, clock: FrozenClock) -> None:
    """Reopening a file keeps its device id and its memories, and does not run the schema again."""
    with localmem.open(db_path, clock=clock) as store:
        device = store.device_id
        rev = store.add("Ann lives in Lisbon", user_id="ann")
    with localmem.open(db_path, clock=clock) as store:
        assert store.device_id == device
        assert store.get(rev.memory_id) == rev
        assert store.connection.execute("SELECT count(*) FROM store_meta").get == 2


def test_file_is_in_wal_mode_with_foreign_keys(file_store: localmem.Store) -> None:
    """A file store's connection uses WAL, enforces foreign keys, zeroes freed pages and carries the ids."""
    conn = file_store.connection
    assert conn.pragma("journal_mode") == "wal"
    assert conn.pragma("foreign_keys") == 1
    assert conn.pragma("secure_delete") == 1
    assert conn.pragma("user_version") == _db.SCHEMA_VERSION
    assert conn.pragma("application_id") == _db.APPLICATION_ID
    other = sqlite3.connect(file_store.path)
    try:
        assert other.execute("PRAGMA journal_mode").fetchone() == ("wal",)  # stored in the file
    finally:
        other.close()


def test_foreign_keys_are_enforced(file_store: localmem.Store) -> None:
    """A revision pointing at a memory that does not exist is refused by the file's foreign keys."""
    with pytest.raises(localmem.IntegrityError, match="FOREIGN KEY"), \
            _db.transaction(file_store.connection) as conn:
        conn.execute(
            "INSERT INTO revisions (rev_id, memory_id, user_id, version, op, valid_from,"
            " precision, valid_source, observed_at, recorded_at, tz, retracted, corrected,"
            " origin) VALUES (?, ?, 'ann', 1, 'assert', 0, 'instant', 'assumed', 0, 0, 'UTC',"
            " 0, 0, 'x')",
            ("R" * 26, "M" * 26),
        )


# -- drift: the file's schema is schema.sql ------------------------------------------------


def _schema_of(conn: apsw.Connection) -> list[tuple[str, str, str, str | None]]:
    rows = [(str(kind), str(name), str(table), sql if sql is None else str(sql))
            for kind, name, table, sql in conn.execute("SELECT type, name, tbl_name, sql FROM sqlite_schema")]
    return sorted(rows, key=lambda r: (r[0], r[1]))


def _declared_names() -> set[tuple[str, str]]:
    """(type, name) of every object schema.sql creates, read from its text."""
    sql = re.sub(r"--[^\n]*", "", _db.schema_sql())
    found = set()
    for kind, name in re.findall(
            r"CREATE\s+(TABLE|INDEX|TRIGGER|VIEW|VIRTUAL\s+TABLE)\s+(\w+)", sql, re.IGNORECASE):
        found.add(("table" if "TABLE" in kind.upper() else kind.lower(), name))
    return found


def test_fresh_file_schema_matches_schema_sql(db_path: Path, clock: FrozenClock) -> None:
    """A fresh file holds exactly the objects schema.sql creates, with the SQL a bare connection gets."""
    with localmem.open(db_path, clock=clock) as store:
        fresh = _schema_of(store.connection)
    bare = apsw.Connection(":memory:")
    try:
        bare.execute(_db.schema_sql())
        expected = _schema_of(bare)
    finally:
        bare.close()

    def ours(rows: list[tuple[str, str, str, str | None]]) -> list[tuple[str, str, str, str | None]]:
        # The planner's statistics tables come from PRAGMA optimize, not from the schema.
        return [r for r in rows if not r[1].startswith("sqlite_stat")]

    assert ours(fresh) == ours(expected)
    shadow = {"content_fts_data", "content_fts_idx", "content_fts_config"}  # columnsize = 0
    names = {(t, n) for t, n, _, _ in fresh if not n.startswith("sqlite_") and n not in shadow}
    assert names == _declared_names()


def _version_1_file(path: Path) -> None:
    """A file as localmem 0.1 (schema version 1) made it, from the schema kept in tests/data."""
    conn = apsw.Connection(str(path))
    try:
        conn.execute((Path(__file__).parent / "data" / "schema_v1.sql").read_text(encoding="utf-8"))
        conn.pragma("application_id", _db.APPLICATION_ID)
        conn.execute("INSERT INTO store_meta (name, value)"
                     " VALUES ('device_id', 'v1'), ('schema_created', '1')")
        conn.pragma("user_version", 1)
    finally:
        conn.close()


def test_a_version_1_file_is_migrated_to_schema_sql_and_keeps_its_memories(
    db_path: Path, tmp_path: Path, clock: FrozenClock
) -> None:
    """Opening a version-1 file runs each step; the result is what schema.sql makes, data and index intact."""
    _version_1_file(db_path)
    conn = apsw.Connection(str(db_path))
    memory_id = "M" * 26
    conn.execute("INSERT INTO memories (memory_id, user_id, kind, key, created_at)"
                 " VALUES (?, 'sam', 'fact', NULL, 1)", (memory_id,))
    conn.execute(
        "INSERT INTO revisions (rev_id, memory_id, user_id, version, op, valid_from, precision, valid_source,"
        " observed_at, recorded_at, tz, retracted, corrected, origin)"
        " VALUES (?, ?, 'sam', 1, 'assert', 1, 'instant', 'assumed', 1, 1, 'UTC', 0, 0, 'v1')",
        ("R" * 26, memory_id))
    conn.execute("INSERT INTO content (rev_seq, memory_id, text) VALUES (1, ?, 'Sam hurt his knee')",
                 (memory_id,))
    conn.close()

    with localmem.open(db_path, clock=clock) as store:
        migrated = _schema_of(store.connection)
        assert store.connection.pragma("user_version") == _db.SCHEMA_VERSION
        hits = store.search("knee", user_id="sam", current_only=False)
        assert [h.revision.memory_id for h in hits] == [memory_id]
        assert store.doctor().ok
        # Rows from before schema 8 keep no hashes (rows are immutable); the chain starts after them.
        assert store.connection.execute("SELECT rev_hash, chain FROM revisions").fetchall() == [(None, None)]
        store.add("Sam's knee is better", user_id="sam")
        assert store.connection.execute("SELECT count(*) FROM revisions WHERE chain IS NOT NULL").get == 1
        assert store.doctor().ok
    with localmem.open(tmp_path / "fresh.db", clock=clock) as fresh:
        expected = _schema_of(fresh.connection)

    def ours(rows: list[tuple[str, str, str, str | None]]) -> list[tuple[str, str, str, str | None]]:
        return [r for r in rows if not r[1].startswith("sqlite_stat")]  # PRAGMA optimize's, not ours

    assert ours(migrated) == ours(expected)


def test_a_version_8_file_gets_the_kind_and_key_copies_and_reads_its_old_rows_through_the_memory(
    db_path: Path, tmp_path: Path, clock: FrozenClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Step 9 adds the revisions' copies of their memory's kind and key: rows written before it keep
    NULLs and are read with their memory's kind and key; every write after it fills them."""
    _version_1_file(db_path)
    with monkeypatch.context() as m:
        m.setattr(_db, "SCHEMA_VERSION", 8)
        localmem.open(db_path, clock=clock).close()  # steps 2..8: a version-8 file
    conn = apsw.Connection(str(db_path))
    assert conn.pragma("user_version") == 8
    memory_id = "M" * 26
    conn.execute("INSERT INTO memories (memory_id, user_id, kind, key, created_at)"
                 " VALUES (?, 'sam', 'place', 'home_city', 1)", (memory_id,))
    conn.execute(
        "INSERT INTO revisions (rev_id, memory_id, user_id, version, op, valid_from, precision, valid_source,"
        " observed_at, recorded_at, tz, retracted, corrected, origin, hlc, arrived_at)"
        " VALUES (?, ?, 'sam', 1, 'assert', 1, 'instant', 'assumed', 1, 1, 'UTC', 0, 0, 'v8', 1024, 1)",
        ("R" * 26, memory_id))
    conn.execute("INSERT INTO content (rev_seq, memory_id, text) VALUES (1, ?, 'Sam lives in Lisbon')",
                 (memory_id,))
    conn.close()

    with localmem.open(db_path, clock=clock) as store:
        conn = store.connection
        assert conn.pragma("user_version") == _db.SCHEMA_VERSION
        assert conn.execute("SELECT memory_kind, memory_key FROM revisions").fetchall() == [(None, None)]
        old = store.get(memory_id)
        assert old is not None
        assert (old.kind, old.key, old.text) == ("place", "home_city", "Sam lives in Lisbon")
        store.correct(memory_id, text="Sam lives in Lisbon, Portugal")
        assert conn.execute("SELECT memory_kind, memory_key FROM revisions WHERE version = 2").fetchall() \
            == [("place", "home_city")]
        new = store.get(memory_id)
        assert new is not None and (new.kind, new.key, new.version) == ("place", "home_city", 2)
        assert store.doctor().ok
        migrated = _schema_of(conn)
    with localmem.open(tmp_path / "fresh.db", clock=clock) as fresh:
        expected = _schema_of(fresh.connection)
    assert [r for r in migrated if not r[1].startswith("sqlite_stat")] == \
        [r for r in expected if not r[1].startswith("sqlite_stat")]


def test_two_fresh_files_have_identical_schemas(tmp_path: Path, clock: FrozenClock) -> None:
    """Two fresh files get byte-for-byte the same sqlite_schema and header pragmas."""
    def schema(path: Path) -> tuple[object, ...]:
        with localmem.open(path, clock=clock) as store:
            conn = store.connection
            return (_schema_of(conn), conn.pragma("user_version"), conn.pragma("application_id"))

    assert schema(tmp_path / "one.db") == schema(tmp_path / "two.db")


def test_a_migrated_file_that_had_statistics_has_them_for_its_new_index(
    db_path: Path, clock: FrozenClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without statistics for a new index beside the others', SQLite guesses it selective: a step
    adding an index on user_id made a user's zone lookup walk and sort every revision of the user."""
    with localmem.open(db_path, clock=clock) as store:
        for i in range(50):
            store.add(f"note {i}", user_id="sam", tz="Europe/Berlin")
        store.connection.execute("ANALYZE")
    step = _db.SCHEMA_VERSION + 1
    monkeypatch.setattr(_db, "SCHEMA_VERSION", step)
    monkeypatch.setitem(_db.MIGRATIONS, step, "CREATE INDEX revisions_new ON revisions (user_id, valid_to);")
    with localmem.open(db_path, clock=clock) as store:
        conn = store.connection
        assert conn.pragma("user_version") == step
        stats = conn.execute("SELECT count(*) FROM sqlite_stat1 WHERE idx = 'revisions_new'").fetchone()
        assert stats == (1,)
        plan = " ".join(str(r) for r in conn.execute(
            "EXPLAIN QUERY PLAN SELECT tz FROM revisions WHERE user_id = ? AND version = 1"
            " ORDER BY arrived_at DESC, seq DESC LIMIT 1", ("sam",)))
        assert "revisions_new" not in plan and "TEMP B-TREE" not in plan


# -- files that cannot be opened, and what opening writes (issue 15, items 5 and 7) ------------


def test_a_current_file_whose_version_was_set_back_is_refused_unchanged(
    db_path: Path, clock: FrozenClock
) -> None:
    """A current file labelled version 6 raises SchemaVersionError (not apsw's SQLError), every byte kept."""
    _localmem_file(db_path, clock)
    _set_user_version(db_path, _db.SCHEMA_VERSION - 1)
    before = db_path.read_bytes()

    with pytest.raises(localmem.SchemaVersionError) as info:
        localmem.open(db_path)

    message = str(info.value)
    assert f"says schema version {_db.SCHEMA_VERSION - 1}" in message
    assert f"migration step {_db.SCHEMA_VERSION} does not apply" in message
    assert db_path.read_bytes() == before


def test_a_path_under_a_regular_file_is_a_storage_error_naming_it(tmp_path: Path) -> None:
    """`--db notes.txt/x.db` raises StorageError naming the path and the file in the way, not OSError."""
    (tmp_path / "notes.txt").write_text("not a directory")
    for path in (tmp_path / "notes.txt" / "x.db", tmp_path / "notes.txt" / "deeper" / "x.db"):
        with pytest.raises(localmem.StorageError) as info:
            localmem.open(path)
        assert str(path) in str(info.value)
        assert "not a directory" in str(info.value)
    assert (tmp_path / "notes.txt").read_text() == "not a directory"


def test_a_directory_as_the_database_is_a_storage_error(tmp_path: Path) -> None:
    """Opening a directory as the database raises StorageError saying it is a directory."""
    with pytest.raises(localmem.StorageError, match="it is a directory"):
        localmem.open(tmp_path)


def test_a_new_file_in_a_read_only_directory_is_a_storage_error(
    db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """When the OS refuses to create the file (EACCES), open raises StorageError naming the path.

    Simulated at os.open: CI runs as root, and root ignores directory permissions.
    """
    def refuse(path: object, flags: int, mode: int = 0o777) -> int:
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr(os, "open", refuse)
    with pytest.raises(localmem.StorageError) as info:
        localmem.open(db_path)
    assert str(db_path) in str(info.value) and "Permission denied" in str(info.value)
    assert not db_path.exists()


@pytest.mark.parametrize("timeout", [-1, float("nan"), float("inf"), True, "5", 10**6])
def test_a_bad_busy_timeout_is_refused(timeout: object) -> None:
    """busy_timeout must be a number of seconds from 0 to a day: anything else is InvalidInputError."""
    with pytest.raises(localmem.InvalidInputError, match="busy_timeout"):
        _db.connect(":memory:", busy_timeout=timeout)  # type: ignore[arg-type]


def test_the_busy_timeout_is_the_one_given(db_path: Path) -> None:
    """connect(busy_timeout=s) makes SQLite wait s seconds for a lock (5 s by default)."""
    for given, ms in ((None, 5000), (0.25, 250), (0, 0)):
        conn = _db.connect(db_path) if given is None else _db.connect(db_path, busy_timeout=given)
        try:
            assert conn.pragma("busy_timeout") == ms
        finally:
            conn.close()


def test_opening_a_current_file_writes_nothing(db_path: Path, clock: FrozenClock) -> None:
    """Opening (and reading) a current file leaves its bytes as they were and puts no frame in the WAL."""
    _localmem_file(db_path, clock)
    before = db_path.read_bytes()
    conn = _db.connect(db_path)
    try:
        assert conn.execute("SELECT count(*) FROM memories").get == 1
        wal = db_path.with_name(db_path.name + "-wal")
        assert not wal.exists() or wal.stat().st_size == 0
        assert db_path.read_bytes() == before
    finally:
        conn.close()
