"""SQL builders for sync: what an export streams, what an import looks up, what a digest reads.

Strings and parameters, no execution. The rows an import writes go through the
write core's INSERTs (:mod:`localmem.core.sql`); the as-of rule a plain export reads
each memory by is the core's too.
"""

from __future__ import annotations

from typing import Any

from ..core.sql import STORED_REVISION_COLUMNS, latest_revision
from .files import CONTENT_FIELDS, DERIVATION_FIELDS, MEMORY_FIELDS, REVISION_FIELDS, TOMBSTONE_FIELDS

__all__ = [
    "TO",
    "export_queries",
    "bind",
    "INSERT_CONTENT_UNLESS_ERASED",
    "MEMORY_ROW",
    "HAS_REVISION",
    "DERIVATION_SOURCE",
    "INSERT_DERIVATION",
    "HAS_TOMBSTONE",
    "TOMBSTONE_ROW",
    "REVISION_ROW",
    "PREV_ROW",
    "MEMORY_ROWS",
    "REVISION_ROWS",
    "PREV_ROWS",
    "GREATEST_MEMORY_ID",
    "GREATEST_REV_ID",
    "MEMORY_USER",
    "PEER_FILE_SEEN",
    "REV_IDS_IN_RANGE",
    "IS_ERASED",
    "INSERT_EXTRA_TOMBSTONE",
    "INSERT_IMPORT",
    "PEER_MARK",
    "INSERT_PEER",
    "TOMBSTONE_COUNT",
    "DIGEST_PARTS",
    "PLAIN",
    "BULK_TRIGGER_NAMES",
    "BULK_INDEX_NAMES",
    "BULK_TRIGGERS",
    "BULK_INDEXES",
    "HAS_STAT1",
    "BULK_INDEX_STATS",
    "INSERT_STAT1",
    "INDEX_CONTENT_RANGE",
    "INSERT_REVISION_AT",
    "INSERT_REVISIONS_AT",
    "REVISIONS_PER_STATEMENT",
    "CONTENT_IN_RANGE",
]

#: Stands for the export's upper watermark in a query's parameters (see :func:`bind`).
TO = "TO"


def export_queries(since: int, user_id: str | None) -> dict[str, tuple[str, tuple[Any, ...]]]:
    """Per section, the SQL that streams its rows (in an order whose parents come first).

    Each query yields one column: the row's line as the file holds it (a JSON object,
    built by SQLite's ``json_object``: the fields in file order, digests as lower-case hex,
    a revision's content nested, or null), as its UTF-8 bytes (a BLOB: not decoded into a
    Python string to be encoded again). A revision with content and its own hash travels
    without its content hash: the importer computes it from the content.
    """
    user = "" if user_id is None else " AND {a}.user_id = ?"
    u: tuple[Any, ...] = () if user_id is None else (user_id,)
    tombed = "SELECT memory_id FROM erasures"
    tomb = ", ".join(TOMBSTONE_FIELDS)
    if since == 0:
        mem_where = "WHERE 1" + user.format(a="m")
        mem_params = u
    else:
        mem_where = ("WHERE (m.memory_id IN (SELECT memory_id FROM revisions WHERE seq > ? AND seq <= ?)"
                     f" OR m.memory_id IN ({tombed}))" + user.format(a="m"))
        mem_params = (since, TO, *u)
    return {
        "memory": (f"SELECT {_line('memory', MEMORY_FIELDS, 'm')} FROM memories AS m {mem_where}"
                   " ORDER BY m.rowid", mem_params),
        "revision": (f"SELECT {_REVISION_LINE} FROM revisions AS r"
                     " LEFT JOIN content AS c ON c.rev_seq = r.seq WHERE r.seq > ? AND r.seq <= ?"
                     + user.format(a="r") + " ORDER BY r.seq", (since, TO, *u)),
        "derivation": (f"SELECT {_line('derivation', DERIVATION_FIELDS, 'd')}"
                       " FROM derivations AS d"
                       " JOIN revisions AS r ON r.memory_id = d.memory_id AND r.version = 1"
                       " WHERE r.seq > ? AND r.seq <= ?" + user.format(a="r")
                       + " ORDER BY r.seq, d.position", (since, TO, *u)),
        "tombstone": (f"SELECT {_line('tombstone', TOMBSTONE_FIELDS, 't')} FROM (SELECT {tomb} FROM erasures"
                      f" UNION ALL SELECT {tomb} FROM extra_tombstones) AS t"
                      " WHERE 1" + user.format(a="t") + " ORDER BY t.tomb_id", u),
    }


def _line(kind: str, fields: tuple[str, ...], alias: str) -> str:
    """``json_object('t', kind, field, alias.field, ...)``: one row's line."""
    return (f"CAST(json_object('t', '{kind}', " + ", ".join(f"'{f}', {alias}.{f}" for f in fields)
            + ") AS BLOB)")


def _revision_field(f: str) -> str:
    if f == "content_hash":  # left out where the content is there to compute it from
        return ("'content_hash', CASE WHEN r.content_hash IS NULL"
                " OR (c.rev_seq IS NOT NULL AND r.rev_hash IS NOT NULL) THEN NULL"
                " ELSE lower(hex(r.content_hash)) END")
    if f == "rev_hash":
        return "'rev_hash', CASE WHEN r.rev_hash IS NULL THEN NULL ELSE lower(hex(r.rev_hash)) END"
    return f"'{f}', r.{f}"


_REVISION_LINE = (
    "CAST(json_object('t', 'revision', " + ", ".join(_revision_field(f) for f in REVISION_FIELDS)
    + ", 'content', CASE WHEN c.rev_seq IS NULL THEN NULL ELSE json_object("
    + ", ".join(f"'{f}', c.{f}" for f in CONTENT_FIELDS) + ") END) AS BLOB)"
)


def bind(params: tuple[Any, ...], top: int) -> tuple[Any, ...]:
    """A query's parameters with the export's upper watermark in place of :data:`TO`."""
    return tuple(top if p == TO else p for p in params)



#: A revision's content, unless its memory is erased here. Parameters: rev_seq, memory_id, then
#: the content columns.
INSERT_CONTENT_UNLESS_ERASED = (
    "INSERT INTO content (rev_seq, memory_id, text, value, attributes, source, reason)"
    " SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7 WHERE NOT EXISTS (SELECT 1 FROM erasures WHERE memory_id = ?2)"
)
#: Ids given as one JSON array of strings (a batched look-up binds one parameter for a whole chunk).
_IN_IDS = " IN (SELECT value FROM json_each(?))"
#: What this store holds of a memory's identity. Parameter: memory_id.
MEMORY_ROW = "SELECT user_id, kind, key, created_at FROM memories WHERE memory_id = ?"
#: Whether a revision is here. Parameter: rev_id.
HAS_REVISION = "SELECT 1 FROM revisions WHERE rev_id = ?"
#: One provenance link's source. Parameters: memory_id, position.
DERIVATION_SOURCE = "SELECT source_rev FROM derivations WHERE memory_id = ? AND position = ?"
#: One provenance link. Parameters: memory_id, position, source_rev.
INSERT_DERIVATION = "INSERT INTO derivations (memory_id, position, source_rev) VALUES (?,?,?)"
#: A revision as it travels, with its content (if any) after a flag. Parameter: rev_id.
REVISION_ROW = (f"SELECT {', '.join('r.' + c for c in REVISION_FIELDS)}, c.rev_seq IS NOT NULL,"
                f" {', '.join('c.' + c for c in CONTENT_FIELDS)} FROM revisions AS r"
                " LEFT JOIN content AS c ON c.rev_seq = r.seq WHERE r.rev_id = ?")
#: What a revision's successor is checked against. Parameter: rev_id.
PREV_ROW = "SELECT memory_id, version, recorded_at, hlc, rev_hash FROM revisions WHERE rev_id = ?"
#: MEMORY_ROW, REVISION_ROW and PREV_ROW for many ids at once, each row led by its id.
#: Parameter: the ids as a JSON array of strings.
MEMORY_ROWS = "SELECT memory_id, user_id, kind, key, created_at FROM memories WHERE memory_id" + _IN_IDS
REVISION_ROWS = REVISION_ROW.replace("SELECT ", "SELECT r.rev_id, ", 1).replace(" = ?", _IN_IDS)
PREV_ROWS = PREV_ROW.replace("SELECT ", "SELECT rev_id, ", 1).replace(" = ?", _IN_IDS)
#: The greatest memory id and rev_id here (NULL for none), each read from its unique index.
GREATEST_MEMORY_ID = "SELECT max(memory_id) FROM memories"
GREATEST_REV_ID = "SELECT max(rev_id) FROM revisions"
#: Whose memory it is. Parameter: memory_id.
MEMORY_USER = "SELECT user_id FROM memories WHERE memory_id = ?"
#: A tombstone as it travels (from erasures or extra_tombstones). Parameter: tomb_id.
TOMBSTONE_ROW = (f"SELECT {', '.join(TOMBSTONE_FIELDS)} FROM erasures WHERE tomb_id = ?1 UNION ALL"
                 f" SELECT {', '.join(TOMBSTONE_FIELDS)} FROM extra_tombstones WHERE tomb_id = ?1")
#: Whether a tombstone is here (in erasures or extra_tombstones). Parameter: tomb_id.
HAS_TOMBSTONE = ("SELECT 1 FROM erasures WHERE tomb_id = ?1 UNION ALL"
                 " SELECT 1 FROM extra_tombstones WHERE tomb_id = ?1")
#: Whether a memory is erased here. Parameter: memory_id.
IS_ERASED = "SELECT 1 FROM erasures WHERE memory_id = ?"
#: A second tombstone of an erased memory. Parameters: the tombstone columns.
INSERT_EXTRA_TOMBSTONE = (f"INSERT INTO extra_tombstones ({', '.join(TOMBSTONE_FIELDS)})"
                          f" VALUES ({', '.join('?' * len(TOMBSTONE_FIELDS))})")
#: The import log's row for an import that changed something.
INSERT_IMPORT = (
    "INSERT INTO imports (import_id, file_sha256, origin, created_at, mark_from, mark_to,"
    " arrived_at, first_seq, last_seq, memories, revisions, tombstones, derivations)"
    " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)"
)
#: The number of the newest file imported from a peer (0: none). Parameter: peer.
PEER_MARK = "SELECT coalesce(max(mark), 0) FROM sync_peers WHERE peer = ?"
#: A peer's file imported. Parameters: peer, mark, recorded_at, file_sha256.
INSERT_PEER = "INSERT INTO sync_peers (peer, mark, recorded_at, file_sha256) VALUES (?, ?, ?, ?)"
#: Whether this peer's file of this number and these bytes was imported (a row from before
#: schema 8, without a hash, matches by number). Parameters: peer, mark, file_sha256.
PEER_FILE_SEEN = ("SELECT 1 FROM sync_peers WHERE peer = ?1 AND mark = ?2"
                  " AND (file_sha256 = ?3 OR file_sha256 IS NULL) LIMIT 1")
#: The revisions in a watermark range, in local order. Parameters: from (exclusive), to.
REV_IDS_IN_RANGE = "SELECT rev_id FROM revisions WHERE seq > ? AND seq <= ? ORDER BY seq"
#: How many tombstones this store holds.
TOMBSTONE_COUNT = "SELECT (SELECT count(*) FROM erasures) + (SELECT count(*) FROM extra_tombstones)"

_REV = ", ".join(f"r.{c}" for c in REVISION_FIELDS)
_CONTENT = ", ".join(f"c.{c}" for c in CONTENT_FIELDS)
_TOMB = ", ".join(TOMBSTONE_FIELDS)
#: What a digest hashes, in canonical order: every row that travels, no local column.
DIGEST_PARTS = (
    f"SELECT {', '.join(MEMORY_FIELDS)} FROM memories ORDER BY memory_id",
    f"SELECT {_REV}, {_CONTENT} FROM revisions AS r LEFT JOIN content AS c ON c.rev_seq = r.seq"
    " ORDER BY r.rev_id",
    "SELECT memory_id, position, source_rev FROM derivations ORDER BY memory_id, position",
    f"SELECT {_TOMB} FROM erasures UNION ALL SELECT {_TOMB} FROM extra_tombstones ORDER BY 1",
)

#: One user's memories, each as known now (its current revision), for a plain export. Parameter: user_id.
PLAIN = f"""SELECT m.memory_id, m.user_id, m.kind, m.key, r.version, r.op, c.text, c.value,
    r.valid_from, r.valid_to, r.precision, r.valid_source, r.observed_at, r.recorded_at,
    r.arrived_at, r.tz, r.expires_at, r.retracted, e.memory_id IS NOT NULL, r.origin
FROM memories AS m
JOIN revisions AS r ON r.seq = {latest_revision("m.memory_id")}
LEFT JOIN content AS c ON c.rev_seq = r.seq
LEFT JOIN erasures AS e ON e.memory_id = m.memory_id
WHERE m.user_id = ?
ORDER BY r.valid_from, m.memory_id"""

# -- a large import's bulk window (localmem.sync.bulk) --------------------------------------------

#: The triggers a large import sets aside while its rows go in: the full-text index's insert
#: trigger (the content is indexed in one statement after) and the per-row no-replace checks.
BULK_TRIGGER_NAMES = ("content_fts_insert", "revisions_no_replace", "content_no_replace",
                      "memories_no_replace")
#: The secondary indexes a large import into a small store builds once after its rows.
BULK_INDEX_NAMES = ("revisions_asof", "revisions_user", "revisions_arrived", "revisions_valid")
_IN_TRIGGERS = ", ".join(f"'{n}'" for n in BULK_TRIGGER_NAMES)
_IN_INDEXES = ", ".join(f"'{n}'" for n in BULK_INDEX_NAMES)
#: Those triggers' and indexes' own text in this file: what puts each back exactly.
BULK_TRIGGERS = f"SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name IN ({_IN_TRIGGERS})"
BULK_INDEXES = f"SELECT sql FROM sqlite_master WHERE type = 'index' AND name IN ({_IN_INDEXES})"
#: Whether the planner's statistics table exists (after the first PRAGMA optimize that analysed).
HAS_STAT1 = "SELECT 1 FROM sqlite_master WHERE name = 'sqlite_stat1'"
#: The statistics of those indexes (dropping an index drops its rows).
BULK_INDEX_STATS = f"SELECT tbl, idx, stat FROM sqlite_stat1 WHERE idx IN ({_IN_INDEXES})"
INSERT_STAT1 = "INSERT INTO sqlite_stat1 (tbl, idx, stat) VALUES (?, ?, ?)"
#: Index the content of revisions first..last in the full-text index, as its trigger would have.
INDEX_CONTENT_RANGE = ("INSERT INTO content_fts (rowid, text, owner)"
                       " SELECT rev_seq, text, owner FROM content_indexed WHERE rev_seq BETWEEN ? AND ?")
#: A revision row with its local number given (a bulk import numbers its rows itself), then the
#: memory's kind and key (schema 9's local copies), which the import has at hand: it checked the
#: revision against its memory's row. Two scalar subqueries per row instead cost ~3% of the writes
#: (instructions, measured). Parameters: seq, STORED_REVISION_COLUMNS, kind, key.
_INSERT_REVISIONS = (f"INSERT INTO revisions (seq, {', '.join(STORED_REVISION_COLUMNS)},"
                     " memory_kind, memory_key)")
_REVISION_ROW = f"({', '.join('?' * (len(STORED_REVISION_COLUMNS) + 3))})"
INSERT_REVISION_AT = f"{_INSERT_REVISIONS} VALUES {_REVISION_ROW}"
#: Revisions one INSERT_REVISIONS_AT writes. Each execution of an INSERT into revisions builds
#: three small ephemeral tables for the CHECKs with IN lists (op, precision, valid_source), whatever
#: the number of rows it inserts: one row per execution spends ~18,000 instructions a row on that
#: alone (callgrind, 20k rows), a third of the insert's own cost; 64 rows a statement spread it.
REVISIONS_PER_STATEMENT = 64
#: INSERT_REVISION_AT for REVISIONS_PER_STATEMENT rows at once (their parameters one after another).
INSERT_REVISIONS_AT = f"{_INSERT_REVISIONS} VALUES {', '.join([_REVISION_ROW] * REVISIONS_PER_STATEMENT)}"
#: How many revisions first..last have content (the rest were not let in: their memory is erased here).
CONTENT_IN_RANGE = "SELECT count(*) FROM content WHERE rev_seq BETWEEN ? AND ?"
