"""A large import's bulk window: triggers and indexes set aside for its rows, put back exactly.

The window's size thresholds are lowered so that a few dozen rows open it, and rows are
written in chunks of a few, so every path (a chunk, a chunk refused and replayed row by
row, the window closing before a tombstone) runs on a small file.
"""

from __future__ import annotations

import gzip
import hashlib
import json
from pathlib import Path

import pytest
from test_sync import full_dump as dump

import localmem
import localmem.testing
from localmem.sync import apply, sql

FAR = "2100-01-01T00:00:00Z"


@pytest.fixture(autouse=True)
def small_window(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(apply, "BULK_REVISIONS", 10)
    monkeypatch.setattr(apply, "CHUNK_ROWS", 7)


def schema(store: localmem.Store) -> list[tuple[object, ...]]:
    """Every table, index, trigger and view, by its own text (statistics tables aside)."""
    return store.connection.execute(
        "SELECT type, name, tbl_name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_stat%'"
        " ORDER BY type, name").fetchall()


def fts_ok(store: localmem.Store) -> None:
    """FTS5's own check of the index against the content it indexes (raises if they differ)."""
    store.connection.execute("INSERT INTO content_fts (content_fts, rank) VALUES ('integrity-check', 1)")


def fill(store: localmem.Store, n: int) -> list[str]:
    ids = []
    with store.batch():
        for i in range(n):
            ids.append(store.add(f"note {i} about {'lisbon' if i % 2 else 'berlin'}", user_id=f"u{i % 3}",
                                 resolve=False).memory_id)
        for memory_id in ids[::4]:
            store.correct(memory_id, text="corrected: a swim in the river")
    return ids


def test_a_large_import_puts_the_schema_back_and_indexes_every_word(
        phone: localmem.Store, laptop: localmem.Store, tmp_path: Path) -> None:
    """Into an empty store: the same digest, the same schema text, a consistent full-text index."""
    fill(phone, 40)
    out = phone.export(tmp_path / "p.gz")
    before = schema(laptop)
    got = laptop.import_(out.path)
    assert got.revisions == 50 and got.memories == 40
    assert schema(laptop) == before
    assert laptop.digest() == phone.digest()
    fts_ok(laptop)
    assert len(laptop.search("river swim", user_id="u0", limit=50)) == len(
        phone.search("river swim", user_id="u0", limit=50)) > 0
    assert laptop.doctor().ok
    again = laptop.import_(out.path)
    assert not again.changed and again.skipped == 90


def test_a_large_import_into_a_larger_store_keeps_its_indexes_and_their_statistics(
        phone: localmem.Store, laptop: localmem.Store, tmp_path: Path) -> None:
    """The indexes are rebuilt only when the file at least doubles the store; either way the planner's
    statistics of every index are there after."""
    fill(phone, 12)
    fill(laptop, 30)
    laptop.connection.execute("ANALYZE")
    stats = laptop.connection.execute("SELECT tbl, idx FROM sqlite_stat1 ORDER BY 1, 2").fetchall()
    laptop.import_(phone.export(tmp_path / "p.gz").path)
    assert laptop.connection.execute("SELECT tbl, idx FROM sqlite_stat1 ORDER BY 1, 2").fetchall() == stats
    fill(phone, 80)  # now the file is larger than the store: its indexes are rebuilt
    laptop.import_(phone.export(tmp_path / "p2.gz").path)
    assert laptop.connection.execute("SELECT tbl, idx FROM sqlite_stat1 ORDER BY 1, 2").fetchall() == stats
    fts_ok(laptop)
    assert laptop.doctor().ok


def _forge(src: Path, dst: Path, line: int, **changes: object) -> Path:
    """Change one revision line's fields, its hashes recomputed as a careful forger would."""
    from localmem.core import chain
    from localmem.sync.files import CONTENT_FIELDS

    lines = gzip.decompress(src.read_bytes()).splitlines(keepends=True)
    row = json.loads(lines[line - 1])
    assert row["t"] == "revision" and row["version"] == 1
    row.update(changes)
    content = row["content"]
    digest = chain.content_hash(*(content[f] for f in CONTENT_FIELDS))
    row["rev_hash"] = chain.rev_hash([row[f] for f in chain.HASHED_FIELDS], "fact", None, digest, None).hex()
    lines[line - 1] = json.dumps(row).encode() + b"\n"
    trailer = json.loads(lines[-1])
    trailer["end"]["sha256"] = hashlib.sha256(b"".join(lines[:-1])).hexdigest()
    dst.write_bytes(gzip.compress(b"".join(lines[:-1]) + json.dumps(trailer).encode() + b"\n"))
    return dst


def test_a_row_refused_in_a_chunk_names_its_line_and_leaves_store_and_schema_as_before(
        phone: localmem.Store, laptop: localmem.Store, tmp_path: Path) -> None:
    """A CHECK constraint fails inside a chunk: the line named is that row's, and nothing changed."""
    fill(phone, 40)
    fill(laptop, 3)
    good = Path(phone.export(tmp_path / "p.gz").path)
    line = 1 + 40 + 5  # the header, the memories, then the fifth revision
    bad = _forge(good, tmp_path / "bad.gz", line, precision="fortnight")
    before, shape = dump(laptop), schema(laptop)
    with pytest.raises(localmem.SyncFileError, match=f"line {line} of .*not a valid row"):
        laptop.import_(bad)
    assert dump(laptop) == before and schema(laptop) == shape
    fts_ok(laptop)
    assert laptop.import_(good).revisions == 50


def test_tombstones_after_a_large_import_erase_the_words_it_brought(
        phone: localmem.Store, laptop: localmem.Store, tmp_path: Path) -> None:
    """The window closes before the file's tombstones: the erase finds the words indexed, destroys them."""
    ids = fill(phone, 40)
    phone.erase(ids[1], reason="asked to")
    assert phone.search("lisbon", user_id="u1", current_only=False, limit=50)
    got = laptop.import_(phone.export(tmp_path / "p.gz").path)
    assert got.tombstones == 1
    assert laptop.digest() == phone.digest()
    assert ids[1] not in {h.revision.memory_id for h in laptop.search(
        "lisbon", user_id="u1", current_only=False, limit=50, as_of=FAR)}
    fts_ok(laptop)
    assert laptop.doctor().ok


def test_a_bulk_import_copies_each_memorys_kind_and_key_onto_its_revisions(
        phone: localmem.Store, laptop: localmem.Store, tmp_path: Path) -> None:
    """Through the bulk window too, each imported revision carries its memory's kind and key."""
    phone.add_many([{"text": f"note {i}", "user_id": "sam", "kind": "note", "key": f"k{i}" if i % 2 else None}
                    for i in range(30)])
    laptop.import_(phone.export(tmp_path / "p.lmsync.gz").path)
    conn = laptop.connection
    assert conn.execute(
        "SELECT count(*) FROM revisions AS r JOIN memories AS m ON m.memory_id = r.memory_id"
        " WHERE r.memory_kind IS m.kind AND r.memory_key IS m.key").get == 30
    assert laptop.doctor().ok


def test_revisions_written_many_to_a_statement_are_the_rows_one_to_a_statement_writes(
        phone: localmem.Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The bulk path's multi-row INSERT (sql.REVISIONS_PER_STATEMENT rows each) and the plain one
    row per statement leave the same memories, revisions (local columns too: seq, arrival, chain,
    the memory's kind and key) and content in two stores that start alike."""
    fill(phone, 120)  # 150 revisions: two whole statements and a rest, in one chunk
    out = phone.export(tmp_path / "p.gz")
    monkeypatch.setattr(apply, "CHUNK_ROWS", 1000)
    tables = ("memories", "revisions", "content")

    def imported(name: str) -> dict[str, list[tuple[object, ...]]]:
        with localmem.open(tmp_path / name, clock=localmem.testing.FrozenClock("2026-03-04T00:00:00Z")) as s:
            got = s.import_(out.path)
            assert got.revisions == 150
            assert s.doctor().ok
            conn = s.connection
            return {t: conn.execute(f"SELECT * FROM {t} ORDER BY rowid").fetchall() for t in tables}

    fast = imported("fast.db")

    def one_by_one(conn: object, rows: list[tuple[object, ...]]) -> None:
        assert len(rows) > 2 * sql.REVISIONS_PER_STATEMENT
        conn.executemany(sql.INSERT_REVISION_AT, rows)  # type: ignore[attr-defined]

    monkeypatch.setattr(apply, "_insert_revisions", one_by_one)
    plain = imported("plain.db")
    assert fast == plain
    assert [len(fast[t]) for t in tables] == [120, 150, 150]
    assert all(row[-2] is not None for row in fast["revisions"])  # memory_kind filled
