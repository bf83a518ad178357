"""What an ingest's staging store is seeded with: the hub rows a file's rows are checked against.

The device's import calls :class:`Seeder` with each chunk of rows it has parsed, before it
checks any of them (its ``before_chunk`` hook); the seeder reads from the hub every row the
chunk's ids name that it has not read yet, and writes it into the staging store, so each
row's check finds there what a device holding the hub's rows would find:

* the memories the rows name (``memory_id``, ``supersedes``, ``superseded_by``), with their
  tombstones; the revisions they name (``rev_id``, ``prev_rev``, a provenance link's
  ``source_rev``) with the whole history of each one's memory (a seeded revision follows the
  one before it, so the staging store's foreign keys hold for every seeded row); the
  tombstones they name (``tomb_id``); the provenance links of the memories a link names; and,
  for a memory a tombstone erases, every memory derived from it, recursively, with its links
  and history (the import erases those too).
* Ids are the ones the import itself parsed: nothing is read twice, and no id spelled in a way
  a pattern would miss is left out. Ids are looked up alone, without trusting the user a row
  claims, so a row claiming another user's id is refused as the device refuses it.
* A seeded revision's staging number is its hub number minus :data:`SEED_SEQ_BASE`: below the
  import's own (which start at 1 in the empty staging store), in hub order. The other seeded
  rows are remembered by key (:attr:`Seeder.memories_seeded` ...), so what the import added
  is told apart from them.

The rows of a user are read only once that user's advisory lock is held (the ingest takes the
file's users' locks first, from :func:`file_users`). A chunk that names a user the ingest does
not hold (a line the pattern missed, or a file replaced meanwhile) raises :class:`MoreUsers`,
and the ingest starts again with that user locked too.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import psycopg

from ..core import sql as core_sql
from ..core.ledger import Ledger
from ..errors import SyncFileError
from ..sync.files import CONTENT_FIELDS, MEMORY_FIELDS, REVISION_FIELDS, TOMBSTONE_FIELDS, line_pieces

__all__ = ["HUB_REVISION_COLUMNS", "SEED_SEQ_BASE", "MoreUsers", "Seeder", "file_users"]

#: The revision columns the hub stores from a staging row (the device's, minus its local chain).
HUB_REVISION_COLUMNS = (*REVISION_FIELDS, "arrived_at")
#: A seeded revision's staging seq is its hub seq minus this: negative, below every imported one.
SEED_SEQ_BASE = 1 << 62

_MEMORY_AT = HUB_REVISION_COLUMNS.index("memory_id")
_REV_AT = HUB_REVISION_COLUMNS.index("rev_id")
_LINKS_AT = (HUB_REVISION_COLUMNS.index("supersedes"), HUB_REVISION_COLUMNS.index("superseded_by"))
_TOMB_AT = TOMBSTONE_FIELDS.index("tomb_id")
_TOMB_MEMORY_AT = TOMBSTONE_FIELDS.index("memory_id")

#: A user field as the device's export writes it: found in a piece of lines without parsing them.
_USER_FIELD = re.compile(rb'"user_id":"([^"\\\n]*)"')


class MoreUsers(Exception):  # noqa: N818 - a signal to the ingest, not an error anyone sees
    """A chunk names users the ingest has not locked: it starts again with them locked too."""

    def __init__(self, users: set[str]) -> None:
        super().__init__(f"{len(users)} more users to lock")
        self.users = users


def file_users(path: Path) -> set[str]:
    """The users a file's rows name, to lock before anything is read for them. Lenient: a damaged
    file is left to the import to refuse (with the device's message), so this finds what it can.

    The file is read as the import reads it (:func:`~localmem.sync.files.line_pieces`: the same
    pieces and limits), and each piece's lines are matched by a pattern; a line with a backslash
    is parsed, so a user spelled with escapes is still found. A user missed here (a line written
    otherwise) is found by the seeder as the import reads it (:class:`MoreUsers`).
    """
    found: set[bytes] = set()
    users: set[str] = set()
    try:
        with line_pieces(path) as pieces:
            for _first, lines, _ended in pieces:
                joined = b"\n".join(lines)
                found.update(_USER_FIELD.findall(joined))
                if b"\\" in joined:
                    users.update(_escaped_users(lines))
    except SyncFileError:
        pass
    users.update(u.decode("utf-8", "replace") for u in found)
    return users


def _escaped_users(lines: list[bytes]) -> Iterator[str]:
    """The users of the lines with a backslash in them (JSON escapes the pattern cannot read)."""
    for line in lines:
        if b"\\" in line:
            try:
                row = json.loads(line)
            except (ValueError, RecursionError):
                continue
            if isinstance(row, dict) and isinstance(row.get("user_id"), str):
                yield row["user_id"]


# Each seeding query is a join of the ids with an index, probed once per id: the ingest's
# transaction turns sequential scans, hash joins and merge joins off. The planner's statistics
# lag behind bulk loads, and it reads the number of ids from the parameter: for thousands of
# ids it hashes or merges the whole table instead (through an index, as scans are off), which
# costs what the table holds — measured 100 ms of server CPU per 1,000-revision file into a hub
# of 60k revisions, growing with the hub, before psycopg prepares the statements.
_DERIVED_CLOSURE = """WITH RECURSIVE d (user_id, memory_id) AS (
    SELECT dv.user_id, dv.memory_id FROM unnest(%(erased)s::text[]) AS i (id)
    JOIN memories AS m ON m.memory_id = i.id
    JOIN revisions AS r ON r.user_id = m.user_id AND r.memory_id = m.memory_id
    JOIN derivations AS dv ON dv.source_rev = r.rev_id
    UNION
    SELECT dv.user_id, dv.memory_id FROM d
    JOIN revisions AS r ON r.user_id = d.user_id AND r.memory_id = d.memory_id
    JOIN derivations AS dv ON dv.source_rev = r.rev_id)
SELECT memory_id FROM d"""
#: A set of ids as a query takes it (:func:`_ids`): one text, newline-separated, and the rare
#: ids with a newline in them as an array (dumping a list of 100k strings costs a second).
_IDS = "unnest(string_to_array(%s, E'\\n') || %s::text[]) AS i (id)"
_REV = ", ".join(f"r.{c}" for c in HUB_REVISION_COLUMNS)
_CONTENT = ", ".join(f"c.{c}" for c in CONTENT_FIELDS)
_SEED_DERIVATIONS = (f"SELECT d.memory_id, d.position, d.source_rev FROM {_IDS}"
                     " JOIN derivations AS d ON d.memory_id = i.id")
_MEMORIES_OF = f"SELECT r.memory_id FROM {_IDS} JOIN revisions AS r ON r.rev_id = i.id"
_SEED_HISTORIES = f"""SELECT r.seq, {_REV}, c.rev_id IS NOT NULL, {_CONTENT} FROM {_IDS}
JOIN memories AS m ON m.memory_id = i.id
JOIN revisions AS r ON r.user_id = m.user_id AND r.memory_id = m.memory_id
LEFT JOIN content AS c ON c.user_id = r.user_id AND c.rev_id = r.rev_id"""
_SEED_MEMORIES = (f"SELECT {', '.join('m.' + c for c in MEMORY_FIELDS)} FROM {_IDS}"
                  " JOIN memories AS m ON m.memory_id = i.id")
_ERASURE_SEED = (f"SELECT e.seq, {', '.join('e.' + c for c in TOMBSTONE_FIELDS)} FROM {_IDS}"
                 " JOIN erasures AS e ON e.{column} = i.id")
_SEED_ERASURES = _ERASURE_SEED.format(column="memory_id")
_SEED_TOMBS = _ERASURE_SEED.format(column="tomb_id")
_SEED_EXTRA = (f"SELECT {', '.join('x.' + c for c in TOMBSTONE_FIELDS)} FROM {_IDS}"
               " JOIN extra_tombstones AS x ON x.tomb_id = i.id")

_REVISION_INSERT_COLUMNS = ("seq", *HUB_REVISION_COLUMNS, "chain")
_INSERT_REVISION = (f"INSERT INTO revisions ({', '.join(_REVISION_INSERT_COLUMNS)})"
                    f" VALUES ({', '.join('?' * len(_REVISION_INSERT_COLUMNS))})")
_INSERT_DERIVATION = "INSERT INTO derivations (memory_id, position, source_rev) VALUES (?, ?, ?)"
_INSERT_EXTRA = (f"INSERT INTO extra_tombstones ({', '.join(TOMBSTONE_FIELDS)})"
                 f" VALUES ({', '.join('?' * len(TOMBSTONE_FIELDS))})")

# The fields of a row that hold ids, by what they name.
_MEMORY_NAMES = ("memory_id", "supersedes", "superseded_by")
_REVISION_NAMES = ("rev_id", "prev_rev", "source_rev")


def _ids(values: Iterable[str]) -> tuple[str, list[str]]:
    """Ids as :data:`_IDS` takes them. An id with a NUL in it cannot be on the hub (PostgreSQL
    text holds none): it is left out, and the import finds it in neither store."""
    ids = list(values)
    joined = "\n".join(ids)
    if joined.count("\n") == max(len(ids) - 1, 0) and "\x00" not in joined:
        return joined, []
    plain = [v for v in ids if "\n" not in v and "\x00" not in v]
    return "\n".join(plain), [v for v in ids if "\n" in v and "\x00" not in v]


class Seeder:
    """The import's ``before_chunk`` hook for one ingest: seeds the staging store chunk by chunk
    (see the module docstring). ``users`` are the users the ingest holds the locks of."""

    def __init__(self, cur: psycopg.Cursor[tuple[Any, ...]], ledger: Ledger, users: set[str]) -> None:
        self.cur, self.conn, self.users = cur, ledger.connection, users
        cur.execute(b"SET LOCAL enable_seqscan = off; SET LOCAL enable_hashjoin = off;"
                    b" SET LOCAL enable_mergejoin = off")
        self.start()

    def start(self) -> None:
        """An attempt at the file begins (the import may run it again, after rolling the staging
        store back): nothing is seeded there yet."""
        # Ids already looked up on the hub (found or not), so each is read once.
        self._memories: set[str] = set()
        self._revisions: set[str] = set()
        self._histories: set[str] = set()
        self._tombs: set[str] = set()
        self._derived: set[str] = set()
        self._erased: set[str] = set()
        # What was seeded, by key: the staging store's other rows are the import's.
        self.memories_seeded: set[str] = set()
        self.revisions_seeded: set[str] = set()
        self.tombs_seeded: set[str] = set()
        self.derivations_seeded: set[tuple[str, int]] = set()

    def __call__(self, batch: list[tuple[int, dict[str, Any]]]) -> None:
        rows = [row for _n, row in batch if type(row) is dict]  # others: refused by the import's check

        def named(*names: str) -> set[str]:
            return {v for name in names for row in rows if type(v := row.get(name)) is str}

        def memories_of(kind: str) -> set[str]:
            return {v for row in rows if row.get("t") == kind and type(v := row.get("memory_id")) is str}

        # One pass over the rows per field (comprehensions), not one loop over every field per row.
        users = named("user_id")
        memories, revisions, tombs = named(*_MEMORY_NAMES), named(*_REVISION_NAMES), named("tomb_id")
        erased, derived = memories_of("tombstone"), memories_of("derivation")
        if not users <= self.users:
            raise MoreUsers(users - self.users)
        self._seed(memories, revisions, tombs, erased, derived)

    def _query(self, sql: str, ids: Iterable[str]) -> list[tuple[Any, ...]]:
        return self.cur.execute(sql, _ids(ids)).fetchall() if ids else []

    def _seed(self, memories: set[str], revisions: set[str], tombs: set[str], erased: set[str],
              derived: set[str]) -> None:
        cur = self.cur
        erased -= self._erased
        self._erased |= erased
        closure = {str(r[0]) for r in cur.execute(_DERIVED_CLOSURE, {"erased": sorted(erased)})} \
            if erased else set()
        derived = (derived | closure) - self._derived
        self._derived |= derived
        derivations = [d for d in self._query(_SEED_DERIVATIONS, derived)
                       if (str(d[0]), int(d[1])) not in self.derivations_seeded]
        before = self._revisions  # looked up in an earlier chunk: seeded then, or the import's since
        revisions = (revisions | {str(d[2]) for d in derivations}) - before
        self._revisions = before | revisions
        histories = ({str(r[0]) for r in self._query(_MEMORIES_OF, revisions)} | closure) - self._histories
        self._histories |= histories
        found = {int(r[0]): r[1:] for r in self._query(_SEED_HISTORIES, histories)}
        history = [(k, found[k]) for k in sorted(found) if str(found[k][_REV_AT]) not in before]
        tomb_ids = tombs - self._tombs
        self._tombs |= tomb_ids
        by_tomb = self._query(_SEED_TOMBS, tomb_ids)
        extra = [x for x in self._query(_SEED_EXTRA, tomb_ids) if str(x[_TOMB_AT]) not in self.tombs_seeded]
        wanted = memories | derived | histories | {str(r[_MEMORY_AT]) for _, r in history}
        wanted |= {str(r[i]) for _, r in history for i in _LINKS_AT if r[i] is not None}
        wanted |= {str(t[1 + _TOMB_MEMORY_AT]) for t in by_tomb} | {str(x[_TOMB_MEMORY_AT]) for x in extra}
        wanted -= self._memories
        self._memories |= wanted
        memory_rows = self._query(_SEED_MEMORIES, wanted)
        tombstones = {int(t[0]): t[1:] for t in (*self._query(_SEED_ERASURES, wanted), *by_tomb)}
        erasures = [tombstones[k] for k in sorted(tombstones)
                    if str(tombstones[k][_TOMB_AT]) not in self.tombs_seeded]
        self._write(memory_rows, history, derivations, erasures, extra)

    def _write(self, memory_rows: list[tuple[Any, ...]], history: list[tuple[Any, ...]],
               derivations: list[tuple[Any, ...]], erasures: list[tuple[Any, ...]],
               extra: list[tuple[Any, ...]]) -> None:
        """Insert seeded rows, parents first (the staging store's foreign keys hold throughout)."""
        conn = self.conn
        conn.executemany(core_sql.INSERT_MEMORY, memory_rows)
        self.memories_seeded.update(str(m[0]) for m in memory_rows)
        nr = len(HUB_REVISION_COLUMNS)
        # Every revision before any content (content's key names its revision), one executemany each.
        conn.executemany(_INSERT_REVISION, [(hub_seq - SEED_SEQ_BASE, *row[:nr], None)
                                            for hub_seq, row in history])
        conn.executemany(core_sql.INSERT_CONTENT, [(hub_seq - SEED_SEQ_BASE, row[_MEMORY_AT], *row[nr + 1:])
                                                   for hub_seq, row in history if row[nr]])
        self.revisions_seeded.update(str(row[_REV_AT]) for _, row in history)
        conn.executemany(_INSERT_DERIVATION, derivations)
        self.derivations_seeded.update((str(d[0]), int(d[1])) for d in derivations)
        conn.executemany(core_sql.INSERT_ERASURE, erasures)
        conn.executemany(_INSERT_EXTRA, extra)
        self.tombs_seeded.update(str(t[_TOMB_AT]) for t in (*erasures, *extra))
