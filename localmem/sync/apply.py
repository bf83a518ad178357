"""Applying a sync file: verified first, then all its rows in one transaction, or none.

Import reads the file once, inside one transaction: the header is checked before the
transaction opens, each row as it comes, and the checksum, the trailer and the counts at
the end, before the commit; anything refused rolls it all back. A refused file is then
checked whole (:func:`~localmem.sync.files.verify`), so a damaged or altered file is
reported as such before anything its rows broke. The store's rows for the ids a chunk of
rows names are looked up together, one query per table. Rows already here are skipped: a
repeated import writes nothing. An imported revision keeps its origin's recorded_at, device and clock; its
``arrived_at`` is the later of that recorded_at and its arrival here, and never earlier
than the row before it, so local revision numbers stay in visibility order. A revision
that arrives for an erased memory is stored without its content; a tombstone that
arrives destroys the memory's content as ``erase`` does, and erases what was derived
from the memory here.

A file is evidence from a peer, not a command. Every row is checked before it is
written against the invariants ``doctor`` checks (:mod:`localmem.core.doctor`): a
revision carries its memory's user, follows the previous version of its own memory
(recorded no earlier, with a greater clock), starts a memory at the memory's creation
time, links (supersedes) only memories of its user, has its content unless its memory
is erased by the end of the file, and its hashes match its content, its fields and the
revision it follows (:mod:`localmem.core.chain`). An id already here must name the same
row (a revision, memory, tombstone or provenance link with other content is refused,
not skipped). Times are bounded: nothing recorded more than :data:`MAX_SKEW` (one day)
after this store's clock reads is let in, so a peer's clock never carries ours
forward. The house rule is all or nothing, so any refused row refuses the whole file
(a :class:`~localmem.errors.SyncFileError` naming the line and the rule; a clock too
far ahead is a :class:`~localmem.errors.SyncClockError`): the file stays quarantined,
reported and never half-applied, until its peer's clock (or the file) is fixed.
"""
from __future__ import annotations

import itertools
import json
import os
from operator import itemgetter
from pathlib import Path
from typing import Any, Protocol

import apsw

from ..core import chain
from ..core import sql as core_sql
from ..core.ids import new_id
from ..core.ledger import EARLIEST_RECORDED, LATEST_RECORDED, Ledger
from ..errors import SyncClockError, SyncFileError, SyncParentError, SyncRuleError
from ..time.clock import Micros, from_micros, to_micros
from . import reader, sql
from .bulk import BULK_REVISIONS, BulkWindow
from .files import (
    CONTENT_FIELDS,
    DERIVATION_FIELDS,
    KINDS,
    MEMORY_FIELDS,
    REVISION_FIELDS,
    TOMBSTONE_FIELDS,
    ImportSummary,
    check_end,
    check_header,
    check_int,
    parse_line,
    verify,
)

__all__ = ["import_", "MAX_SKEW", "BeforeChunk"]

class BeforeChunk(Protocol):
    """An import's hook, told of each attempt at the file and of its rows (the hub seeds its
    staging store from it)."""

    def start(self) -> None:
        """An attempt at the file begins: whatever an earlier one did was rolled back."""

    def __call__(self, batch: list[tuple[int, dict[str, Any]]], /) -> None:
        """A chunk of parsed rows (line number, row), in file order, before any is checked."""


#: How far after this store's clock a peer's recorded times may be: one day. Farther ones
#: refuse the file: adopted, they would carry this store's recorded time forward with them.
MAX_SKEW: Micros = 86_400_000_000

_INT64 = range(-(2**63), 2**63)
_CACHED = 1 << 16  # rows each of the import's two look-up caches holds after a flush
#: Rows an import checks before it writes them together (executemany, in dependency order).
CHUNK_ROWS = 2048
_MAPPED = (apsw.ConstraintError, apsw.MismatchError, TypeError, ValueError, OverflowError)
_W_MEMORY, _W_REVISION, _W_CONTENT = 0, 1, 2  # what a pending write inserts
_STATEMENTS = (core_sql.INSERT_MEMORY, sql.INSERT_REVISION_AT, sql.INSERT_CONTENT_UNLESS_ERASED)
# A row's values in a given order, as one C call.
_STORED = itemgetter(*core_sql.STORED_REVISION_COLUMNS)
_HASHED = itemgetter(*chain.HASHED_FIELDS)
_TRAVELLED = itemgetter(*REVISION_FIELDS)
_CONTENT_VALUES = itemgetter(*CONTENT_FIELDS)
_MEMORY_VALUES = itemgetter(*MEMORY_FIELDS)
# The ids a revision names: its memory, itself, the revision it follows, the memories it links.
_NAMED = itemgetter("memory_id", "rev_id", "prev_rev", "supersedes", "superseded_by")
_INT_FIELDS = ("version", "valid_from", "observed_at", "recorded_at", "retracted", "corrected", "hlc")
_INTS = itemgetter(*_INT_FIELDS)
_JUST_INT = frozenset({int})
_LOWEST, _HIGHEST = _INT64.start, _INT64.stop - 1
_OPTIONAL_INT_FIELDS = ("valid_to", "expires_at")
_NO_TOP = chr(0x10FFFF) * 27  # after every id of 26 characters or fewer (and ids are 26)

# The doctor invariants an import keeps, by their names in doctor's report.
_USER = "revisions carry their memory's user"
_FOLLOWS = "each revision follows the previous version of its memory"
_CLOCK = "a revision's clock is after the one it follows, and it arrives after it"
_LINKS = "chain links stay within one user"
_STARTS = "a memory starts when its first revision is recorded"
_CONTENT = "every revision has its content unless erased"
_HASH = "revision hashes match their content and history"
_TOMB_USER = "tombstones carry their memory's user"
_SAME_ID = "an id names one row: a row already here is not replaced"


def _insert_revisions(conn: apsw.Connection, rows: list[tuple[Any, ...]]) -> None:
    """Insert revision rows (INSERT_REVISION_AT's parameters), in their order, most of them
    :data:`~localmem.sync.sql.REVISIONS_PER_STATEMENT` to a statement (see there why)."""
    size = sql.REVISIONS_PER_STATEMENT
    whole = len(rows) - len(rows) % size
    if whole:
        flat = itertools.chain.from_iterable
        conn.executemany(sql.INSERT_REVISIONS_AT,
                         [tuple(flat(rows[i:i + size])) for i in range(0, whole, size)])
    if whole < len(rows):
        conn.executemany(sql.INSERT_REVISION_AT, rows[whole:])


class _Careful(Exception):  # noqa: N818 (a signal, not an error anyone sees)
    """SQLite refused a row of a chunk written without a savepoint: run the import again, carefully."""


def _hex(digest: bytes | None) -> str:
    return "none" if digest is None else digest.hex()


def _shown(micros: int) -> str:
    try:
        return from_micros(micros).isoformat()
    except (OverflowError, ValueError, OSError):
        return f"{micros} µs"


class _Apply:
    """Checks and applies verified rows inside the import's transaction, counting what it did."""

    def __init__(self, ledger: Ledger, path: Path, arrival: int, clock_now: int, *,
                 careful: bool = True, before_chunk: BeforeChunk | None = None) -> None:
        self.ledger, self.conn, self.path = ledger, ledger.connection, path
        self.careful = careful  # each chunk in a savepoint of its own (see flush)
        self.before_chunk = before_chunk
        self.arrival = self.last = arrival
        self.clock_now = clock_now
        self.limit = min(clock_now + MAX_SKEW, LATEST_RECORDED - 1)
        self.added = dict.fromkeys(KINDS, 0)
        self.skipped = 0
        self.without_content = 0
        self.first_seq: int | None = None
        self.last_seq: int | None = None
        self.contentless: list[tuple[int, str, str]] = []  # (line, memory, revision) with no content
        # What the checks look up, as the file brings it: a memory's row comes just before its
        # first revision, a revision's just before the next. Bounded: cleared when full, but only
        # once the rows they hold are written (the checks of the rows still pending need them).
        self._memories: dict[str, tuple[Any, ...]] = {}
        self._revisions: dict[str, tuple[Any, ...]] = {}
        self.erased: list[str] = []  # memories this import erased
        # Rows checked but not yet written: per table (memories, revisions, content; see _W_*) their
        # parameters and, beside them, their lines, in file order. They are written together by
        # flush(); the checks of later rows see them through the caches above and _pending_revs.
        self._pending: tuple[list[tuple[Any, ...]], ...] = ([], [], [])
        self._pending_lines: tuple[list[int], ...] = ([], [], [])
        self._pending_revs: set[str] = set()
        # What the store held, at the start of the chunk being checked, of the ids the chunk names
        # (one look-up per table per chunk, not one per row; see rows()). None when not looked up,
        # or no longer true: every write (a flush) makes them stale.
        self._have_memories: dict[str, tuple[Any, ...]] | None = None
        self._have_revisions: dict[str, tuple[Any, ...]] | None = None
        self._have_prev: dict[str, tuple[Any, ...]] | None = None
        self.next_seq = int(self.conn.execute(core_sql.NEWEST_SEQ).get) + 1
        self.window: BulkWindow | None = None
        self._window_done = False
        # The local chain's head after the last revision checked; the ledger is told at each flush.
        self._chain_head: bytes | None = None
        self._pre: reader.Pre | None = None

    def open_window(self, *, indexes: bool) -> None:
        """Set the per-row triggers (and, if ``indexes``, the secondary indexes) aside for the
        file's memory and revision rows (see :mod:`localmem.sync.bulk`)."""
        self.window = BulkWindow(self.conn, indexes=indexes)

    @property
    def pending(self) -> int:
        """How many checked rows wait to be written."""
        return sum(map(len, self._pending))

    def flush(self) -> None:
        """Write the pending rows: memories, then revisions, then their content (executemany).

        Careful, the chunk has a savepoint: if a row is refused, it is rolled back to it and
        written row by row in file order, so the error names the line a row-by-row write would.
        Else (a top-level import's first pass) a refused row raises :class:`_Careful`: all is
        rolled back and run again carefully. Inside a savepoint SQLite journals every page each
        statement changes until the release: ~45% of the writes at 100k revisions, measured.
        """
        self._have_memories = self._have_revisions = self._have_prev = None
        groups, lines = self._pending, self._pending_lines
        if not (groups[_W_MEMORY] or groups[_W_REVISION] or groups[_W_CONTENT]):
            return
        if self._chain_head is not None:
            self.ledger.set_head(self._chain_head)
        self._pending, self._pending_lines = ([], [], []), ([], [], [])
        self._pending_revs.clear()
        for cache in (self._memories, self._revisions):
            if len(cache) >= _CACHED:
                cache.clear()
        c = self.conn
        if self.careful:
            c.execute("SAVEPOINT sync_chunk")
        try:
            if groups[_W_MEMORY]:
                c.executemany(core_sql.INSERT_MEMORY, groups[_W_MEMORY])
            _insert_revisions(c, groups[_W_REVISION])
            if groups[_W_CONTENT]:
                c.executemany(sql.INSERT_CONTENT_UNLESS_ERASED, groups[_W_CONTENT])
        except _MAPPED as exc:
            if not self.careful:
                raise _Careful from exc
            c.execute("ROLLBACK TO sync_chunk")
            c.execute("RELEASE sync_chunk")
            self._replay(groups, lines)
            raise
        if self.careful:
            c.execute("RELEASE sync_chunk")
        if groups[_W_REVISION]:
            first, last = groups[_W_REVISION][0][0], groups[_W_REVISION][-1][0]
            if groups[_W_CONTENT]:
                written = int(c.execute(sql.CONTENT_IN_RANGE, (first, last)).get)
                self.without_content += len(groups[_W_CONTENT]) - written  # erased here: not let back in
            if self.window is not None:
                self.window.wrote(first, last)

    def _replay(self, groups: tuple[list[tuple[Any, ...]], ...], lines: tuple[list[int], ...]) -> None:
        """Write a chunk's rows one by one in file order (a revision before its content), to name
        the first that is refused."""
        rev_ids = {params[0]: params[1] for params in groups[_W_REVISION]}  # seq -> rev_id
        rows = sorted(((n, what, params) for what in (_W_MEMORY, _W_REVISION, _W_CONTENT)
                       for n, params in zip(lines[what], groups[what], strict=True)),
                      key=itemgetter(0, 1))
        for n, what, params in rows:
            kind, ident = (("memory", params[0]) if what == _W_MEMORY
                           else ("revision", params[1] if what == _W_REVISION else rev_ids[params[0]]))
            try:
                self.conn.execute(_STATEMENTS[what], params)
            except _MAPPED as exc:
                raise self._fail(n, f"{kind} {ident!r}", exc) from exc

    def settle(self) -> None:
        """Write what is pending and close the bulk window (before a row or a check that needs
        the whole schema: a provenance link, a tombstone, the end of the file)."""
        self.flush()
        if self.window is not None:
            window, self.window = self.window, None
            window.close()

    def _at(self, n: int) -> str:
        return f"line {n} of {str(self.path)!r}"

    def _refuse(self, n: int, rule: str, what: str) -> SyncRuleError:
        return SyncRuleError(f"{self._at(n)}: {what}, which breaks the rule {rule!r}; nothing was applied")

    def _fail(self, n: int, what: str, exc: Exception) -> SyncFileError:
        msg = str(exc)
        if "FOREIGN KEY" in msg:
            return SyncParentError(
                f"{self._at(n)}: {what} refers to a memory or revision that is neither "
                "earlier in the file nor in this store (import the files it follows first); "
                "nothing was applied")
        return SyncFileError(f"{self._at(n)}: {what} is not a valid row ({msg}); nothing was applied")

    def _missing(self, n: int, what: str) -> SyncParentError:
        return SyncParentError(
            f"{self._at(n)}: {what}, which is neither earlier in the file nor in this store (import "
            "the files it follows first); nothing was applied")

    def _digest(self, n: int, value: object, what: str) -> bytes | None:
        """A hash as it travels (64 hex digits, or null) as it is stored (32 bytes)."""
        if value is None:
            return None
        if type(value) is str and len(value) == 64:
            try:
                return bytes.fromhex(value)
            except ValueError:
                pass
        raise SyncFileError(f"{self._at(n)}: {what} {value!r:.80} is not a SHA-256 (64 hex digits)")

    def _time(self, n: int, value: object, what: str) -> int:
        v = value if type(value) is int and value in _INT64 else check_int(value, f"{self._at(n)}: {what}")
        assert isinstance(v, int)
        if v > self.limit:
            raise SyncClockError(
                f"{self._at(n)}: {what} {_shown(v)} is more than a day after this store's clock "
                f"({_shown(self.clock_now)}): a peer's clock that far ahead is refused, never adopted; "
                "the whole file is refused (fix that device's clock and export again); nothing was applied")
        if v < EARLIEST_RECORDED:
            raise SyncFileError(f"{self._at(n)}: {what} {_shown(v)} is before 1970: expected a recorded time")
        return v

    def rows(self, batch: list[tuple[int, dict[str, Any], reader.Pre | None]]) -> None:
        """Check a chunk of rows (line number, row, what the reader computed) in file order, then
        write them.

        The store's rows for every id the chunk names are looked up first, one query per
        table; a row's check then reads them from there (or from the rows of this file
        before it), exactly as a look-up of its own at that point would find them. An id
        that is not a plain ASCII string is looked up on its own, as before.
        """
        if self.before_chunk is not None:
            self.before_chunk([(n, o) for n, o, _pre in batch])
        mem_ids: list[str] = []
        rev_ids: list[str] = []
        prev_ids: list[str] = []
        known_mem, known_rev = self._memories, self._revisions
        # An id after the greatest one of its table here cannot be here: it is not looked up (ids
        # are time-ordered, so a file's new rows mostly come after everything a store holds).
        top_mem, top_rev = self._greatest(sql.GREATEST_MEMORY_ID), self._greatest(sql.GREATEST_REV_ID)
        for _n, o, _pre in batch:
            kind = o.get("t")
            if kind == "revision":
                try:
                    memory_id, rev_id, prev_rev, *links = _NAMED(o)
                except KeyError:  # the row's own check names the field it lacks
                    continue
                for v in (memory_id, *links):
                    if type(v) is str and v <= top_mem and v not in known_mem and v.isascii():
                        mem_ids.append(v)
                if type(rev_id) is str and rev_id <= top_rev and rev_id.isascii():
                    rev_ids.append(rev_id)
                if type(prev_rev) is str and prev_rev <= top_rev and prev_rev not in known_rev \
                        and prev_rev.isascii():
                    prev_ids.append(prev_rev)
            elif kind == "memory":
                v = o.get("memory_id")
                if type(v) is str and v <= top_mem and v not in known_mem and v.isascii():
                    mem_ids.append(v)
        self._have_memories = self._look_up(sql.MEMORY_ROWS, mem_ids)
        self._have_revisions = self._look_up(sql.REVISION_ROWS, rev_ids)
        self._have_prev = self._look_up(sql.PREV_ROWS, prev_ids)
        for n, o, pre in batch:
            self._pre = pre  # what the reader computed for the row (see _revision)
            self.row(n, o)
        self._pre = None
        self.flush()

    def _greatest(self, query: str) -> str:
        """The greatest id of a table here ("" for none), read at a chunk's start (nothing pending,
        its hook run). Python orders strings by code point as BINARY orders their UTF-8 bytes."""
        top = self.conn.execute(query).get
        if top is None:
            return ""
        return top if type(top) is str else _NO_TOP

    def _look_up(self, query: str, ids: list[str]) -> dict[str, tuple[Any, ...]]:
        if not ids:
            return {}
        return {r[0]: r[1:] for r in self.conn.execute(query, (json.dumps(ids),))}

    def _stored(self, have: dict[str, tuple[Any, ...]] | None, key: object,
                query: str) -> tuple[Any, ...] | None:
        """``key``'s row in the store: from the chunk's look-up ``have`` if it covers the key,
        else looked up now with ``query``."""
        if have is not None and type(key) is str and key.isascii():
            return have.get(key)
        row: tuple[Any, ...] | None = self.conn.execute(query, (key,)).fetchone()
        return row

    def row(self, n: int, obj: dict[str, Any]) -> None:
        kind = obj.get("t")
        try:
            if kind == "revision":
                self._revision(n, obj)
            elif kind == "memory":
                self._memory(n, obj)
            elif kind == "derivation":
                self._derivation(n, obj)
            elif kind == "tombstone":
                self._tombstone(n, obj)
            else:
                raise SyncFileError(f"{self._at(n)} has row type {kind!r}: expected one of {KINDS}")
        except KeyError as exc:
            raise SyncFileError(f"{self._at(n)}: a {kind} row lacks field {exc}") from exc
        except _MAPPED as exc:
            if isinstance(exc, SyncFileError):
                raise
            raise self._fail(n, f"{kind} {obj.get('rev_id') or obj.get('memory_id') or obj.get('tomb_id')!r}",
                             exc) from exc

    def finish(self) -> None:
        """The checks that need the whole file: a revision without content belongs to a memory
        erased here (by now); then erase what was derived from the memories this file erased."""
        self.settle()
        for n, memory_id, rev_id in self.contentless:
            if self.conn.execute(sql.IS_ERASED, (memory_id,)).get is None:
                raise self._refuse(n, _CONTENT, f"revision {rev_id!r} has no content but memory "
                                                f"{memory_id!r} is not erased")
        if self.erased:
            self.ledger.erase_derived(self.erased, at=self.last, by=None)

    def _memory_row(self, memory_id: str) -> tuple[Any, ...] | None:
        """(user_id, kind, key, created_at) of a memory here, or None."""
        row = self._memories.get(memory_id)
        if row is None:
            found = self._stored(self._have_memories, memory_id, sql.MEMORY_ROW)
            if found is None:
                return None
            self._memories[memory_id] = row = tuple(found)
        return row

    def _memory(self, n: int, o: dict[str, Any]) -> None:
        self._time(n, o["created_at"], "created_at")
        have = self._memory_row(o["memory_id"])
        vals = _MEMORY_VALUES(o)
        if have is None:
            self._pending[_W_MEMORY].append(vals)
            self._pending_lines[_W_MEMORY].append(n)
            self._memories[o["memory_id"]] = vals[1:]
            self.added["memory"] += 1
        elif tuple(have) != vals[1:]:
            raise self._refuse(n, _SAME_ID, f"memory {o['memory_id']!r} differs from the one here "
                                            f"({tuple(have)!r} vs {vals[1:]!r})")
        else:
            self.skipped += 1

    def _revision(self, n: int, o: dict[str, Any]) -> None:
        pre = self._pre
        rev_id, memory_id = o["rev_id"], o["memory_id"]
        ints = _INTS(o)
        if not _JUST_INT.issuperset(map(type, ints)) or min(ints) < _LOWEST or max(ints) > _HIGHEST:
            for f in _INT_FIELDS:  # which one, and the message, only when one is not
                v = o[f]
                if type(v) is not int or v not in _INT64:
                    check_int(v, f"{self._at(n)}: {f}")
        valid_to, expires_at = o["valid_to"], o["expires_at"]
        if valid_to is not None or expires_at is not None:
            for f in _OPTIONAL_INT_FIELDS:
                v = o[f]
                if v is not None and (type(v) is not int or v not in _INT64):
                    check_int(v, f"{self._at(n)}: {f}")
        got_content, got_rev = o["content_hash"], o["rev_hash"]
        if got_content is not None:
            o["content_hash"] = got_content = self._digest(n, got_content, "content_hash")
        if got_rev is not None:
            o["rev_hash"] = got_rev = self._digest(n, got_rev, "rev_hash")
        rec, hlc = o["recorded_at"], o["hlc"]
        if not EARLIEST_RECORDED <= rec <= self.limit:  # an integer by now: refused, with the reason
            self._time(n, rec, "recorded_at")
        if hlc >> 10 > self.limit:
            self._time(n, hlc >> 10, "the clock (hlc) of revision " + repr(rev_id))
        content = o["content"]
        if content is not None:
            if type(content) is not dict:
                raise SyncFileError(f"{self._at(n)}: content {content!r:.60} is not an object")
            content_values = _CONTENT_VALUES(content)
            if got_rev is not None:
                # A file leaves out the content hash where the content is there to compute it from.
                computed = chain.content_hash(*content_values) if pre is None else pre[0]
                if got_content is not None and got_content != computed:
                    raise self._refuse(n, _HASH, f"revision {rev_id!r} has content hash "
                                                 f"{_hex(got_content)}, but its content hashes to "
                                                 f"{computed.hex()}")
                o["content_hash"] = got_content = computed
        if rev_id in self._pending_revs:
            self.flush()  # the same revision twice in the file: compare with the one written
        have = self._stored(self._have_revisions, rev_id, sql.REVISION_ROW)
        if have is not None:
            fields = _TRAVELLED(o)
            travelled = (*fields, *((True, *content_values) if content is not None else ()))
            nf = len(REVISION_FIELDS)
            here = tuple(have[:nf]) + ((True, *have[nf + 1:]) if have[nf] and content is not None else ())
            theirs = travelled[:nf] + (travelled[nf:] if have[nf] else ())
            if here != theirs:
                raise self._refuse(n, _SAME_ID, f"revision {rev_id!r} differs from the one here")
            self.skipped += 1
            return
        mem = self._memories.get(memory_id) or self._memory_row(memory_id)
        if mem is None:
            raise self._missing(n, f"revision {rev_id!r} belongs to memory {memory_id!r}")
        user, kind, key, created_at = mem
        if o["user_id"] != user:
            raise self._refuse(n, _USER, f"revision {rev_id!r} has user {o['user_id']!r} but its memory "
                                         f"{memory_id!r} is {user!r}'s")
        prev_hash: bytes | None = None
        version = o["version"]
        if version == 1:
            if rec != created_at:
                raise self._refuse(n, _STARTS, f"revision {rev_id!r} starts memory {memory_id!r} at "
                                               f"{_shown(rec)}, not at its creation {_shown(created_at)}")
        else:
            prev_rev = o["prev_rev"]
            prev = self._revisions.get(prev_rev)
            if prev is None:
                prev = self._stored(self._have_prev, prev_rev, sql.PREV_ROW)
            if prev is None:
                raise self._missing(n, f"revision {rev_id!r} follows revision {prev_rev!r}")
            p_memory, p_version, p_recorded, p_hlc, prev_hash = prev
            if p_memory != memory_id or p_version != version - 1 or p_recorded > rec:
                raise self._refuse(n, _FOLLOWS, (
                    f"revision {rev_id!r} (memory {memory_id!r}, version {version}, recorded "
                    f"{_shown(rec)}) follows {prev_rev!r} (memory {p_memory!r}, version {p_version}, "
                    f"recorded {_shown(p_recorded)})"))
            if p_hlc >= hlc:
                raise self._refuse(n, _CLOCK, f"revision {rev_id!r} has clock {hlc}, not after "
                                              f"{p_hlc} of the revision it follows")
        if o["supersedes"] is not None or o["superseded_by"] is not None:
            self._links(n, o, user)
        if got_rev is not None and got_content is not None:
            # The reader's hash, if it hashed these very inputs (with the same fields: o's own).
            expect = (pre[1][3] if pre is not None and pre[1] is not None and got_content == pre[0]
                      and pre[1][:3] == (kind, key, prev_hash)
                      else chain.rev_hash(_HASHED(o), kind, key, got_content, prev_hash))
            if got_rev != expect:
                raise self._refuse(n, _HASH, f"revision {rev_id!r} has hash {_hex(got_rev)}, but its "
                                             "fields, content hash and the revision it follows hash to "
                                             f"{expect.hex()}")
        else:
            self._check_hash(n, o, got_content, got_rev)
        if rec > self.last:
            self.last = rec
        head = self._chain_head  # the ledger's, read once (None until this import's first revision)
        link_value = (self.ledger.link(got_rev, self.last) if head is None
                      else chain.link(head, got_rev, self.last))
        o["arrived_at"], o["chain"] = self.last, link_value
        seq = self.next_seq
        self.next_seq = seq + 1
        pending, lines = self._pending, self._pending_lines
        pending[_W_REVISION].append((seq, *_STORED(o), kind, key))
        lines[_W_REVISION].append(n)
        self._pending_revs.add(rev_id)
        self._chain_head = link_value
        self._revisions[rev_id] = (memory_id, version, rec, hlc, got_rev)
        if self.first_seq is None:
            self.first_seq = seq
        self.last_seq = seq
        self.added["revision"] += 1
        if content is None:
            self.without_content += 1
            self.contentless.append((n, memory_id, rev_id))
            return
        pending[_W_CONTENT].append((seq, memory_id, *content_values))
        lines[_W_CONTENT].append(n)

    def _links(self, n: int, o: dict[str, Any], user: str) -> None:
        """A revision links (supersedes) only memories of its own user, here or earlier in the file."""
        rev_id = o["rev_id"]
        for link in ("supersedes", "superseded_by"):
            if o[link] is not None:
                other_row = self._memory_row(o[link])
                other = None if other_row is None else other_row[0]
                verb = link.replace("_", " ")
                if other is None:
                    raise self._missing(n, f"revision {rev_id!r} {verb} memory {o[link]!r}")
                if other != user:
                    raise self._refuse(n, _LINKS, f"revision {rev_id!r} of user {user!r} {verb} memory "
                                                  f"{o[link]!r} of user {other!r}")

    def _check_hash(self, n: int, o: dict[str, Any], got_content: bytes | None,
                    got_rev: bytes | None) -> None:
        """A revision that lacks a hash: fine only if it lacks both (written before schema 8; see
        :mod:`localmem.core.chain`). With both, :meth:`_revision` checks the hash itself."""
        rev_id = o["rev_id"]
        if got_rev is None:
            if got_content is None:
                return  # written before schema 8: nothing to check
            raise self._refuse(n, _HASH, f"revision {rev_id!r} has a content hash but no hash of its own")
        raise self._refuse(n, _HASH, f"revision {rev_id!r} has neither its content nor its content hash")

    def _derivation(self, n: int, o: dict[str, Any]) -> None:
        self.settle()
        check_int(o["position"], f"{self._at(n)}: position")
        have = self.conn.execute(sql.DERIVATION_SOURCE, (o["memory_id"], o["position"])).get
        if have is not None:
            if have != o["source_rev"]:
                raise self._refuse(n, _SAME_ID, f"memory {o['memory_id']!r}'s source {o['position']} is "
                                                f"{have!r} here, not {o['source_rev']!r}")
            self.skipped += 1
            return
        self.conn.execute(sql.INSERT_DERIVATION, tuple(o[f] for f in DERIVATION_FIELDS))
        self.added["derivation"] += 1

    def _tombstone(self, n: int, o: dict[str, Any]) -> None:
        self.settle()
        c = self.conn
        vals = tuple(o[f] for f in TOMBSTONE_FIELDS)
        have = c.execute(sql.TOMBSTONE_ROW, (o["tomb_id"],)).fetchone()
        if have is not None:
            if tuple(have) != vals:
                raise self._refuse(n, _SAME_ID, f"tombstone {o['tomb_id']!r} differs from the one here")
            self.skipped += 1
            return
        self._time(n, o["erased_at"], "erased_at")
        user = c.execute(sql.MEMORY_USER, (o["memory_id"],)).get
        if user is None:
            raise self._missing(n, f"tombstone {o['tomb_id']!r} erases memory {o['memory_id']!r}")
        if user != o["user_id"]:
            raise self._refuse(n, _TOMB_USER, f"tombstone {o['tomb_id']!r} has user {o['user_id']!r} but "
                                              f"memory {o['memory_id']!r} is {user!r}'s")
        if c.execute(sql.IS_ERASED, (o["memory_id"],)).get is not None:
            c.execute(sql.INSERT_EXTRA_TOMBSTONE, vals)
        else:
            c.execute(core_sql.INSERT_ERASURE, vals)
            self.ledger.note_erasure()  # merge the index and checkpoint, as erase() does
            self.erased.append(o["memory_id"])
        self.added["tombstone"] += 1


def import_(ledger: Ledger, path: str | os.PathLike[str], *, origin: str | None = None,
            before_chunk: BeforeChunk | None = None, aside: bool | None = None) -> ImportSummary:
    """Check and apply a sync file in one transaction, or refuse it whole (see :meth:`Store.import_`).

    ``origin``, if given, is the device the file must come from (its header's origin).
    ``before_chunk``, if given, is called with each chunk of parsed rows before they are checked,
    inside the transaction (:class:`BeforeChunk`; what it raises refuses the file as a row would).
    ``aside``: whether a reader process reads the file beside the import (None: when
    :func:`~localmem.sync.reader.worth_a_reader` says so; never inside a batch).

    The file is read once: its rows are checked and written as they come, its checksum
    and counts are checked at its end, before the commit, and anything refused rolls the
    whole transaction back. A file that is refused is then read again by
    :func:`~localmem.sync.files.verify`, so that a damaged or altered file is reported as
    such (its checksum, its trailer) before whatever its rows broke, as when the file was
    verified before its first row was applied.
    """
    source = Path(path)
    try:
        with reader.no_cycle_collection():
            if ledger.in_transaction:  # inside a batch: no rollback of our own to run again after
                return _import(ledger, source, origin, before_chunk, careful=True, worker=False)
            try:
                try:
                    return _import(ledger, source, origin, before_chunk, careful=False,
                                   worker=reader.worth_a_reader(source) if aside is None else aside)
                except reader.ReaderFailed:  # rolled back whole: again, reading the file here
                    return _import(ledger, source, origin, before_chunk, careful=False, worker=False)
            except _Careful:  # rolled back whole: again, each chunk in a savepoint, to name the row
                return _import(ledger, source, origin, before_chunk, careful=True, worker=False)
    except Exception:
        verify(source)  # a file-level error, if there is one, is the one reported
        raise


def _import(ledger: Ledger, source: Path, origin: str | None, before_chunk: BeforeChunk | None, *,
            careful: bool, worker: bool) -> ImportSummary:
    with reader.events(source, worker=worker) as events:
        head = next(events)[1]
        if head is None:
            raise SyncFileError(f"{str(source)!r} holds no lines: expected a localmem sync export")
        header = parse_line(head, 1, source)
        check_header(header, source)
        if origin is not None and header["origin"] != origin:
            raise SyncFileError(f"{str(source)!r} is named as device {origin!r}'s export but its header says "
                                f"it comes from device {header['origin']!r}; nothing was applied")
        mark = header["watermark"]
        with ledger.transaction():
            arrival = ledger.recorded_now()
            apply = _Apply(ledger, source, arrival, to_micros(ledger.now()), careful=careful,
                           before_chunk=before_chunk)
            if before_chunk is not None:
                before_chunk.start()
            if header["counts"]["revision"] >= BULK_REVISIONS:
                # Rebuilding the secondary indexes costs the whole table: only when the file at least
                # doubles it.
                apply.open_window(indexes=apply.next_seq - 1 <= header["counts"]["revision"])
            batch: list[tuple[int, dict[str, Any], reader.Pre | None]] = []
            chunk = CHUNK_ROWS
            for event in events:
                if event[0] == "end":
                    _, trailer, checksum, rows = event
                    break
                batch.extend(event[1])
                while len(batch) >= chunk:
                    apply.rows(batch[:chunk])
                    del batch[:chunk]
            else:
                raise reader.ReaderFailed("the file's events ended before its end")
            check_end(source, header, trailer, checksum, rows)
            apply.rows(batch)
            apply.finish()
            import_id: str | None = None
            if any(apply.added.values()):
                import_id = new_id(arrival)
                ledger.connection.execute(sql.INSERT_IMPORT, (
                    import_id, checksum, header["origin"], header["created_at"], mark["from"],
                    mark["to"], arrival, apply.first_seq, apply.last_seq, apply.added["memory"],
                    apply.added["revision"], apply.added["tombstone"], apply.added["derivation"]))
    return ImportSummary(
        path=str(source), origin=header["origin"], sha256=checksum, watermark=(mark["from"], mark["to"]),
        memories=apply.added["memory"], revisions=apply.added["revision"],
        tombstones=apply.added["tombstone"], derivations=apply.added["derivation"],
        skipped=apply.skipped, without_content=apply.without_content, import_id=import_id,
    )
