"""Health checks for a database file: SQLite's own, then localmem's invariants.

Each check is one query that should find nothing wrong; ``run_checks`` returns
them all, passed or not, so a person sees what was checked.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

import apsw

__all__ = ["BUSY_DETAIL", "Check", "DoctorReport", "run_checks"]

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
)


def _trigger_names(schema: str) -> set[str]:
    return set(re.findall(r"CREATE TRIGGER\s+(\w+)", schema, flags=re.IGNORECASE))


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
    have = {r[0] for r in conn.execute("SELECT name FROM sqlite_schema WHERE type = 'trigger'")}
    missing = sorted(_trigger_names(schema) - have)
    yield Check("immutability triggers present", not missing,
                f"missing: {', '.join(missing)}" if missing else "ok")
    uv, aid = conn.pragma("user_version"), conn.pragma("application_id")
    yield Check("schema version", uv == version and aid == app_id,
                f"user_version {uv} (expected {version}), application_id {aid:#x}")
    for name, sql in _INVARIANTS:
        bad = conn.execute(sql).get
        yield Check(name, bad == 0, "ok" if bad == 0 else f"{bad} rows break it")
