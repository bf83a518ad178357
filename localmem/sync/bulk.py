"""A large import's bulk window: the per-row triggers and indexes set aside while its rows go in.

Measured at 100k revisions into a fresh store (executemany of the very rows an import
writes): 4.7 s as the schema stands; the full-text trigger costs 2.0 s of it against 0.2 s
for indexing the same rows in one ``INSERT ... SELECT`` afterwards; the three
``*_no_replace`` triggers 1.3 s (a trigger program per row, whatever its WHEN clause); the
five secondary indexes on revisions and content 1.3 s against 0.2 s for building them
once. All three set aside: 1.8 s.

So an import of a file of :data:`BULK_REVISIONS` (100) or more revisions opens a window
inside its one transaction: it drops those triggers (and, when the file brings at least
as many revisions as the store holds, those indexes), writes its memories, revisions and
content, then puts every one back from the text the file itself holds for it
(``sqlite_master``, so the schema after is byte for byte the schema before), indexes the
content it added (and only that) in the full-text index, and restores the planner's
statistics of the rebuilt indexes. DDL is transactional in SQLite: if anything fails the
rollback restores the triggers and indexes with everything else, and no other connection
ever sees the schema without them (the import holds the write lock from its first row to
its commit, and readers see the last commit).

What the triggers guard against cannot happen inside the window: the import writes only
plain INSERTs (a collision with an existing key fails, it never replaces), and it checks
every row against the store before it writes it. The window closes before any row that
needs them (a tombstone's erase deletes content through its index and its full-text
entries; a provenance link is checked against the rows), so those rows and the checks at
the end of the file run against the whole schema.
"""

from __future__ import annotations

import apsw

from . import sql

__all__ = ["BULK_REVISIONS", "BulkWindow"]

#: The fewest revisions in a file for which an import sets the triggers and indexes aside.
#: Measured (CPU, medians of five, files into a store of 20k revisions): 10 revisions 1.02x the
#: row-by-row import, 30 0.84x, 100 0.89x, 300 0.61x, 1,000 0.71x, 3,000 0.48x. Below the
#: threshold the DDL (and every connection preparing its statements again after a schema
#: change) is not worth it: a sync folder's small files stay on the plain path.
BULK_REVISIONS = 100


class BulkWindow:
    """The triggers (and maybe indexes) one import dropped, and what puts them back."""

    def __init__(self, conn: apsw.Connection, *, indexes: bool) -> None:
        self.conn = conn
        self.first_seq: int | None = None  # the first revision written inside the window
        self.last_seq: int | None = None
        self._triggers = [str(r[0]) for r in conn.execute(sql.BULK_TRIGGERS)]
        self._indexes = [str(r[0]) for r in conn.execute(sql.BULK_INDEXES)] if indexes else []
        self._stats: list[tuple[str, str, str]] = []
        if self._indexes and conn.execute(sql.HAS_STAT1).get is not None:
            self._stats = [(str(r[0]), str(r[1]), str(r[2])) for r in conn.execute(sql.BULK_INDEX_STATS)]
        for name in sql.BULK_TRIGGER_NAMES:
            conn.execute(f"DROP TRIGGER {name}")
        for name in sql.BULK_INDEX_NAMES if self._indexes else ():
            conn.execute(f"DROP INDEX {name}")

    def wrote(self, first: int, last: int) -> None:
        """Say that revisions ``first``..``last`` (local numbers) were written in the window."""
        if self.first_seq is None:
            self.first_seq = first
        self.last_seq = last

    def close(self) -> None:
        """Put back what the window set aside, and index the content it wrote."""
        c = self.conn
        for statement in self._indexes:
            c.execute(statement)
        if self._stats:
            c.executemany(sql.INSERT_STAT1, self._stats)
        if self.first_seq is not None:
            c.execute(sql.INDEX_CONTENT_RANGE, (self.first_seq, self.last_seq))
        for statement in self._triggers:
            c.execute(statement)
        if self._stats:
            c.execute("ANALYZE sqlite_schema")  # this connection reads the restored statistics
