"""Health checks for a database file: SQLite's own, then localmem's invariants.

Each check is one query that should find nothing wrong; ``run_checks`` returns
them all, passed or not, so a person sees what was checked.

Tamper evidence: the file's schema (every table, index, view and trigger, by its SQL,
whitespace aside) must be what ``schema.sql`` makes, so a dropped trigger, one recreated
with a ``WHEN 0`` or otherwise changed, an extra one, or a ``writable_schema`` edit is
reported; and every revision's hashes (:mod:`localmem.core.chain`) are recomputed, so
content edited behind the triggers' back, or a revision deleted, inserted or moved,
breaks the chain. The chain's head is printed: kept elsewhere, it also pins the newest
revisions (deleting the very last ones leaves a shorter chain that is whole).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import apsw

from . import chain
from .ledger import erase_marker

__all__ = ["StoreInfo", "file_info", "BUSY_DETAIL", "Check", "DoctorReport", "run_checks"]

#: How a check's detail begins when it could not run because the database was
#: busy (not a problem found in the file).
BUSY_DETAIL = "not checked: the database is busy"


@dataclass(frozen=True, slots=True)
class Check:
    """One check made by ``doctor``: its name, whether it passed, and what it found."""

    name: str
    ok: bool
    detail: str


@dataclass(frozen=True, slots=True)
class DoctorReport:
    """The result of ``Store.doctor()``: ``ok`` when every check passed."""

    checks: tuple[Check, ...]

    @property
    def ok(self) -> bool:
        return all(c.ok for c in self.checks)

    @property
    def busy(self) -> bool:
        """Some check could not run because another process held the write lock."""
        return any(c.detail.startswith(BUSY_DETAIL) for c in self.checks)

# Each invariant: a name, and a query counting the rows that break it.
_INVARIANTS: tuple[tuple[str, str], ...] = (
    ("every revision has its content unless erased",
     "SELECT count(*) FROM revisions AS r LEFT JOIN content AS c ON c.rev_seq = r.seq"
     " WHERE c.rev_seq IS NULL"
     " AND NOT EXISTS (SELECT 1 FROM erasures AS e WHERE e.memory_id = r.memory_id)"),
    ("erased memories keep no content",
     "SELECT count(*) FROM content AS c JOIN erasures AS e ON e.memory_id = c.memory_id"),
    ("content belongs to its revision's memory",
     "SELECT count(*) FROM content AS c JOIN revisions AS r ON r.seq = c.rev_seq"
     " WHERE r.memory_id IS NOT c.memory_id"),
    # Two devices that changed one memory while apart both wrote the same version (a fork):
    # versions start at 1 and leave no gap, but may repeat.
    ("revision versions run 1..n per memory",
     "SELECT count(*) FROM (SELECT memory_id FROM revisions GROUP BY memory_id"
     " HAVING min(version) != 1 OR max(version) != count(DISTINCT version))"),
    ("a revision's clock is after the one it follows, and it arrives after it",
     "SELECT count(*) FROM revisions AS r JOIN revisions AS p ON p.rev_id = r.prev_rev"
     " WHERE p.hlc >= r.hlc OR p.seq > r.seq"),
    ("arrival never goes backwards as revision numbers grow",
     "SELECT count(*) FROM revisions AS r JOIN revisions AS p ON p.seq = r.seq - 1"
     " WHERE p.arrived_at > r.arrived_at OR r.arrived_at < r.recorded_at"),
    ("each revision follows the previous version of its memory",
     "SELECT count(*) FROM revisions AS r JOIN revisions AS p ON p.rev_id = r.prev_rev"
     " WHERE p.memory_id IS NOT r.memory_id OR p.version != r.version - 1"
     " OR p.recorded_at > r.recorded_at"),
    ("revisions' copies of their memory's kind and key match it",
     "SELECT count(*) FROM revisions AS r JOIN memories AS m ON m.memory_id = r.memory_id"
     " WHERE r.memory_kind IS NOT NULL AND (r.memory_kind IS NOT m.kind OR r.memory_key IS NOT m.key)"),
    ("revisions carry their memory's user",
     "SELECT count(*) FROM revisions AS r JOIN memories AS m ON m.memory_id = r.memory_id"
     " WHERE m.user_id IS NOT r.user_id"),
    ("chain links stay within one user",
     "SELECT count(*) FROM revisions AS r JOIN memories AS m"
     " ON m.memory_id = r.supersedes OR m.memory_id = r.superseded_by"
     " WHERE m.user_id IS NOT r.user_id"),
    ("a memory starts when its first revision is recorded",
     "SELECT count(*) FROM memories AS m JOIN revisions AS r"
     " ON r.memory_id = m.memory_id AND r.version = 1 WHERE r.recorded_at != m.created_at"),
    ("tombstones carry their memory's user",
     "SELECT count(*) FROM (SELECT memory_id, user_id FROM erasures UNION ALL"
     " SELECT memory_id, user_id FROM extra_tombstones) AS t JOIN memories AS m USING (memory_id)"
     " WHERE m.user_id IS NOT t.user_id"),
    # A summary quotes its sources: kept, it would keep the erased words.
    ("memories derived from an erased one are erased",
     "SELECT count(DISTINCT d.memory_id) FROM derivations AS d JOIN revisions AS r ON r.rev_id = d.source_rev"
     " JOIN erasures AS e ON e.memory_id = r.memory_id"
     " WHERE d.memory_id NOT IN (SELECT memory_id FROM erasures)"),
)

_HASHED = ", ".join(f"r.{c}" for c in chain.HASHED_FIELDS)
#: Every revision with what its hashes cover, in local order.
_CHAIN_ROWS = f"""SELECT r.seq, {_HASHED}, m.kind, m.key, c.rev_seq IS NOT NULL,
    c.text, c.value, c.attributes, c.source, c.reason, p.rev_hash, r.content_hash, r.rev_hash,
    r.chain, r.arrived_at
FROM revisions AS r
LEFT JOIN memories AS m ON m.memory_id = r.memory_id
LEFT JOIN content AS c ON c.rev_seq = r.seq
LEFT JOIN revisions AS p ON p.rev_id = r.prev_rev
ORDER BY r.seq"""


def _normal(sql: str | None) -> str | None:
    return None if sql is None else " ".join(sql.split())


def _objects(conn: apsw.Connection) -> dict[tuple[str, str], str | None]:
    rows = conn.execute("SELECT type, name, sql FROM sqlite_schema WHERE name NOT LIKE 'sqlite_stat%'")
    return {(t, n): _normal(q) for t, n, q in rows}


def _expected_objects(schema: str) -> dict[tuple[str, str], str | None]:
    bare = apsw.Connection(":memory:")
    try:
        bare.execute(schema)
        return _objects(bare)
    finally:
        bare.close()


def _differences(have: dict[tuple[str, str], str | None], want: dict[tuple[str, str], str | None],
                 types: set[str]) -> str:
    missing = sorted(n for (t, n) in want if t in types and (t, n) not in have)
    changed = sorted(n for (t, n), q in want.items() if t in types and (t, n) in have and have[(t, n)] != q)
    extra = sorted(n for (t, n) in have if t in types and (t, n) not in want)
    parts = [f"{label}: {', '.join(names)}" for label, names in
             (("missing", missing), ("changed", changed), ("unexpected", extra)) if names]
    return "; ".join(parts)


def _chain_problems(conn: apsw.Connection) -> tuple[list[str], int, bytes | None]:
    """What breaks the hash chains (a sample), how many revisions are chained, and the head."""
    problems: list[str] = []
    n_fields = len(chain.HASHED_FIELDS)
    prev_chain: bytes | None = None
    chained = 0
    for row in conn.execute(_CHAIN_ROWS):
        seq, fields = row[0], row[1:1 + n_fields]
        kind, key, has_content = row[1 + n_fields:4 + n_fields]
        content = row[4 + n_fields:9 + n_fields]
        prev_hash, content_hash, rev_hash, link, arrived_at = row[9 + n_fields:]
        if link is None:
            if chained:
                problems.append(f"revision {seq} has no chain after chained ones (inserted behind localmem)")
            continue
        if link != chain.link(prev_chain, rev_hash, arrived_at):
            problems.append(f"the chain breaks at revision {seq} (a revision before it was deleted, "
                            "inserted or changed, or this one was)")
        prev_chain, chained = link, chained + 1
        if rev_hash is None and content_hash is None:
            continue  # synced from a store's rows written before schema 8
        if has_content and content_hash != chain.content_hash(*content):
            problems.append(f"revision {seq}'s content does not match its hash (edited)")
        if rev_hash != chain.rev_hash(fields, kind, key, content_hash, prev_hash):
            problems.append(f"revision {seq}'s fields or history do not match its hash (edited)")
    return problems, chained, prev_chain


def run_checks(conn: apsw.Connection, schema: str, version: int, app_id: int) -> Iterator[Check]:
    """Yield every check, passed or failed."""
    rows = [r[0] for r in conn.execute("PRAGMA integrity_check")]
    yield Check("sqlite integrity_check", rows == ["ok"], "; ".join(map(str, rows[:5])))
    fk = conn.execute("PRAGMA foreign_key_check").fetchall()
    yield Check("foreign keys", not fk, f"{len(fk)} dangling references" if fk else "ok")
    try:
        # FTS5's check is an INSERT of a command, so it needs the write lock.
        conn.execute("INSERT INTO content_fts (content_fts, rank) VALUES ('integrity-check', 1)")
        yield Check("full-text index matches content", True, "ok")
    except apsw.BusyError:
        # Not a finding about the index: it could not be looked at. Failed (the
        # report must not say healthy unchecked), and worded so no one repairs a
        # healthy index; running doctor again once the writer is done checks it.
        yield Check("full-text index matches content", False,
                    f"{BUSY_DETAIL}: another process held the write lock this check needs; "
                    "run doctor again when it is done")
    except apsw.Error as exc:
        yield Check("full-text index matches content", False, str(exc))
    have, want = _objects(conn), _expected_objects(schema)
    triggers = _differences(have, want, {"trigger"})
    yield Check("immutability triggers present", not triggers, triggers or "ok (each as schema.sql has it)")
    others = _differences(have, want, {"table", "index", "view"})
    yield Check("tables, indexes and views as schema.sql has them", not others, others or "ok")
    problems, chained, head = _chain_problems(conn)
    yield Check("revision hashes chain", not problems,
                f"{len(problems)} problems: " + "; ".join(problems[:3]) if problems
                else f"ok: {chained} revisions chained, head {head.hex() if head else '-'}")
    marker = erase_marker(conn)
    pending = marker is not None and os.path.exists(marker)
    yield Check("no erase awaits its checkpoint", not pending,
                f"{marker} is there: an erase committed but the WAL was not checkpointed (a crash, or "
                "another process reading); its words may still be on disk until localmem opens the file "
                "again with no other process using it" if pending else "ok")
    uv, aid = conn.pragma("user_version"), conn.pragma("application_id")
    yield Check("schema version", uv == version and aid == app_id,
                f"user_version {uv} (expected {version}), application_id {aid:#x}")
    for name, sql in _INVARIANTS:
        bad = conn.execute(sql).get
        yield Check(name, bad == 0, "ok" if bad == 0 else f"{bad} rows break it")


@dataclass(frozen=True, slots=True)
class StoreInfo:
    """What ``Store.info()`` reports about a database file."""

    path: str
    schema_version: int
    device_id: str
    users: int
    memories: int
    revisions: int
    erasures: int
    size_bytes: int

def file_info(conn: apsw.Connection, device_id: str) -> StoreInfo:
    """Counts and identity of the database file ``conn`` has open."""
    path = str(conn.filename)
    size = 0
    if path not in ("", ":memory:"):
        size = sum(Path(path + s).stat().st_size for s in ("", "-wal") if Path(path + s).exists())
    return StoreInfo(
        path=path or ":memory:",
        schema_version=conn.pragma("user_version"),
        device_id=device_id,
        users=conn.execute("SELECT count(DISTINCT user_id) FROM memories").get,
        memories=conn.execute("SELECT count(*) FROM memories").get,
        revisions=conn.execute("SELECT count(*) FROM revisions").get,
        erasures=conn.execute("SELECT count(*) FROM erasures").get,
        size_bytes=size,
    )
