"""The write core: the one place rows are appended, and the rules every write follows.

A :class:`Ledger` wraps one connection and the store's clock. The store's writes
(:mod:`localmem.core.writes`), derived memories, runs and receipts
(:mod:`localmem.replay`) and sync's imports (:mod:`localmem.sync`) all go
through its named methods; none of them opens a transaction or appends a
revision any other way. Its transactions and their recorded time (one transaction
per write, recorded time that never goes backwards and stays in range, vectors
embedded with their words, erased words scrubbed from the file) are its base class's,
:class:`~localmem.core.transactions.Transactions`. The rules it holds itself:

* **A revision carries its memory's whole state.** :meth:`Ledger.append` writes the
  revision and its content; :meth:`Ledger.follow` copies a memory's current revision
  forward with changes; its hybrid logical clock orders it after every revision of
  the memory it saw.
* **A supersession closes the old memory** where the new one starts
  (:meth:`Ledger.close_superseded`), and only a live memory of the same user can be
  superseded (:meth:`Ledger.check_supersedable`).
* **Erasing a memory erases what was derived from it.** A summary quotes its sources,
  so keeping it would keep the erased words: every memory derived (directly or not)
  from an erased one is erased in the same transaction, with its own tombstone.
* **Every revision is hashed** (:mod:`localmem.core.chain`): its content, its fields
  chained to the revision it follows, and the store's local chain.
"""

from __future__ import annotations

from operator import itemgetter
from typing import Any
from zoneinfo import ZoneInfo

from ..errors import ErasedError, InvalidIntervalError, InvalidOperationError, NotFoundError
from ..time.clock import (
    Micros,
    TimeInput,
    from_micros,
    instant_micros,
    parse_time,
    period_end,
    to_micros,
    zone,
)
from ..time.interval import Precision, check_interval, check_precision
from . import chain, sql
from .embedding import Pending
from .ids import new_id
from .inputs import check_memory_id, encode_json
from .revision import Op, Revision, ValidSource, lazy_revision_from_row, revision_from_row
from .transactions import EARLIEST_RECORDED, LATEST, LATEST_RECORDED, Transactions, erase_marker

__all__ = ["Ledger", "LATEST", "KEY_HEAD_WINDOW", "EARLIEST_RECORDED", "LATEST_RECORDED",
           "ValidSpan", "erase_marker"]

#: A valid time worked out for a write: (valid_from, valid_to or None, precision, valid_source).
ValidSpan = tuple[Micros, Micros | None, Precision, ValidSource]

#: How many of a user's latest-starting revisions a new key value looks among for the key's
#: current value before it reads the key's whole history.
KEY_HEAD_WINDOW = 64

#: Where :meth:`Ledger.append_new` finds a revision row's seq, memory, user, recorded time and zone.
_AT = tuple(sql.STAGED[1].columns.index(c) for c in ("seq", "memory_id", "user_id", "recorded_at", "tz"))
# An appended row's hashed fields are the revision's columns up to hlc; arrived_at and the three
# hashes follow them (one tuple serves both).
assert sql.STORED_REVISION_COLUMNS == (*chain.HASHED_FIELDS, "arrived_at", "content_hash", "rev_hash",
                                       "chain")
#: From :meth:`Ledger.append`'s row: the hashed fields, the content columns, and a read's columns
#: (:data:`~localmem.core.sql.REVISION_FIELDS`, what the lazy Revision it returns decodes).
_HASHED = itemgetter(*chain.HASHED_FIELDS)
_CONTENT = itemgetter(*sql.CONTENT_COLUMNS)
_READ = itemgetter(*(name for name, _ in sql.REVISION_FIELDS))


class Ledger(Transactions):
    """One connection's writes: the transactions of its base class, and every append.

    Not shared between threads: the store that owns it is one per thread or process.
    """

    # -- valid time and read axes -------------------------------------------------------

    def axes(
        self, as_of: TimeInput | None, known_at: TimeInput | None, valid_at: TimeInput | None, tz: ZoneInfo
    ) -> tuple[Micros, Micros]:
        """A read's (known, valid): ``known_at`` else ``as_of`` else now; ``valid_at`` else
        ``as_of`` else known — a read pinned in knowledge is pinned in the world too."""
        base = None if as_of is None else instant_micros(as_of, name="as_of", tz=tz)
        if known_at is not None:
            known = instant_micros(known_at, name="known_at", tz=tz)
        else:
            known = base if base is not None else to_micros(self.now())
        if valid_at is not None:
            valid = instant_micros(valid_at, name="valid_at", tz=tz)
        else:
            valid = base if base is not None else known
        return known, valid

    def expiry(self, expires: TimeInput | None, z: ZoneInfo) -> Micros | None:
        """When ``expires`` hides a memory: a date means through the end of that local period."""
        if expires is None:
            return None
        return to_micros(period_end(parse_time(expires, name="expires", tz=z), z))

    def valid_time(
        self, z: ZoneInfo, *, valid_from: TimeInput | None, valid_to: TimeInput | None,
        precision: Precision | None, otherwise: ValidSpan,
    ) -> ValidSpan:
        """A new memory's valid time: an explicit ``valid_from`` wins (its form gives the precision),
        else ``otherwise`` (what the text said, the sources' hull, or the observed instant); an
        explicit ``valid_to`` ends it and ``precision`` overrides. The interval is checked."""
        source: ValidSource
        if valid_from is not None:
            start = parse_time(valid_from, name="valid_from", tz=z)
            vf, vt, prec, source = to_micros(start.at), None, check_precision(start.precision), "explicit"
        else:
            vf, vt, prec, source = otherwise
        if valid_to is not None:
            vt = to_micros(parse_time(valid_to, name="valid_to", tz=z).at)
        if vt is not None:  # an open interval is never empty
            check_interval(from_micros(vf), from_micros(vt))
        return vf, vt, precision or prec, source

    # -- users and memories ---------------------------------------------------------

    def user_zone(self, user_id: str) -> str | None:
        """The IANA zone last given for a user (None if none was)."""
        if user_id in self._txn_zones:
            return self._txn_zones[user_id]
        tz: str | None = self.connection.execute(sql.USER_ZONE, (user_id,)).get
        if self._depth and tz is not None:
            self._txn_zones[user_id] = tz
        return tz

    def zone_for(self, tz: str | ZoneInfo | None, user_id: str | None) -> ZoneInfo:
        """``tz`` if given, else the user's last zone, else UTC."""
        if tz is not None:
            return zone(tz)
        return zone((self.user_zone(user_id) if user_id is not None else None) or "UTC")

    def resolve_id(self, prefix: str) -> str:
        """The memory id that starts with ``prefix`` (case-insensitive)."""
        check_memory_id(prefix)
        if not prefix.strip():
            raise NotFoundError(f"memory id {prefix!r} is not an id: expected a memory id")
        p = prefix.strip().upper()
        rows = self.connection.execute(sql.MEMORY_ID_PREFIX, (p, p + "~")).fetchall()
        if not rows:
            raise NotFoundError(f"no memory with id {prefix!r}")
        if len(rows) > 1 and rows[0][0] != p:
            raise NotFoundError(f"memory id prefix {prefix!r} is ambiguous: give more characters")
        return str(rows[0][0])

    def state(self, memory_id: str, *, writable: bool = True) -> Revision:
        """The newest revision of a memory: what a write follows.

        Raises:
            NotFoundError: no such memory. ErasedError: it is erased and ``writable``.
        """
        check_memory_id(memory_id)
        row = self.connection.execute(sql.GET_AS_OF, (memory_id, LATEST)).fetchone()
        if row is None:
            raise NotFoundError(f"no memory with id {memory_id!r}")
        rev = revision_from_row(row, None)
        if writable and rev.erased:
            raise ErasedError(f"memory {memory_id!r} was erased: it takes no more writes")
        return rev

    def exists(self, memory_id: str) -> bool:
        """Whether a memory has this exact id."""
        return self.connection.execute(sql.MEMORY_EXISTS, (memory_id,)).fetchone() is not None

    # -- appending ------------------------------------------------------------------

    def new_memory(self, *, user_id: str, kind: str, key: str | None, at: Micros, tz: str) -> str:
        """Create a memory's identity row (its first revision is appended next); returns its id."""
        memory_id = new_id(at)
        self.connection.execute(sql.INSERT_MEMORY, (memory_id, user_id, kind, key, at))
        self._txn_zones[user_id] = tz  # this user's last given zone, from now on
        return memory_id

    def append(self, **row: Any) -> Revision:
        """Insert one revision and its content; return it as a read at recorded_at would.

        ``row`` holds every column of STORED_REVISION_COLUMNS except rev_id, origin, hlc and
        arrived_at (the ledger's), plus kind and key, and the content's columns (value,
        attributes and source as JSON text). Its hybrid logical clock is its recorded time
        (shifted past a 10-bit counter), or one more than the greatest clock among the
        memory's revisions if that is later (a device whose wall clock lags another's still
        orders its write after what it saw).

        The result is the lazy :class:`Revision` a ``get`` returns, over the row just written
        (each field decoded when read): nothing is encoded, inserted and then decoded again.
        """
        recorded_at: Micros = row["recorded_at"]
        row["rev_id"] = new_id(recorded_at)
        hlc = recorded_at << 10
        prev_hash: bytes | None = None
        if row["version"] > 1:
            found = self.connection.execute(
                sql.MAX_HLC_AND_PREV_HASH, (row["memory_id"], row["prev_rev"])).fetchone()
            assert found is not None  # an aggregate always gives a row
            seen, prev_hash = found
            if seen is not None and seen >= hlc:
                hlc = seen + 1
        row["hlc"], row["origin"] = hlc, self.device_id
        row["retracted"], row["corrected"] = int(row["retracted"]), int(row["corrected"])
        content_row = _CONTENT(row)
        content = chain.content_hash(*content_row)
        fields = _HASHED(row)
        rev_hash = chain.rev_hash(fields, row["kind"], row["key"], content, prev_hash)
        head = self.link(rev_hash, recorded_at)
        conn, memory_id = self.connection, row["memory_id"]
        conn.execute(sql.INSERT_REVISION,
                     (*fields, recorded_at, content, rev_hash, head, row["kind"], row["key"]))
        self._txn_head = head
        rev_seq = row["seq"] = conn.last_insert_rowid()
        conn.execute(sql.INSERT_CONTENT, (rev_seq, memory_id, *content_row))
        if self.embedder is not None:
            self._unembedded.append(Pending(rev_seq, memory_id, row["user_id"], recorded_at, row["text"]))
        row["erased_at"] = None
        return lazy_revision_from_row(_READ(row), recorded_at)

    def newest_seq(self) -> int:
        """The newest local revision number (0 in an empty file)."""
        return int(self.connection.execute(sql.NEWEST_SEQ).get)

    def append_new(self, memories: list[tuple[Any, ...]], revisions: list[tuple[Any, ...]],
                   contents: list[tuple[Any, ...]]) -> None:
        """Append new memories with their first revisions and content, one statement per table
        (:data:`~localmem.core.sql.STAGED`, whose column orders the rows follow): ``add_many``'s
        rows, seqs given and hashes chained through :meth:`link` and :meth:`set_head`."""
        conn = self.connection
        for staged, rows in zip(sql.STAGED, (memories, revisions, contents), strict=True):
            conn.execute(staged.create)
            conn.executemany(staged.stage, rows)
            conn.execute(staged.insert)
            conn.execute(staged.clear)
        seq, memory, user, recorded, tz = _AT
        for rev, content in zip(revisions, contents, strict=True):
            self._txn_zones[rev[user]] = rev[tz]  # this user's last given zone, from now on
            if self.embedder is not None:
                self._unembedded.append(Pending(rev[seq], rev[memory], rev[user], rev[recorded], content[2]))

    def chain_head(self) -> bytes | None:
        """The local chain value of the newest revision (None in an empty file), read once per
        transaction."""
        if not self._head_known:
            self._txn_head = self.connection.execute(sql.CHAIN_HEAD).get
            self._head_known = True
        return self._txn_head

    def link(self, revision_hash: bytes | None, arrived_at: Micros) -> bytes:
        """The local chain value of the next revision (see :mod:`localmem.core.chain`); the caller
        inserts it and sets the head (``_txn_head``) once the row is in."""
        return chain.link(self.chain_head(), revision_hash, arrived_at)

    def set_head(self, head: bytes) -> None:
        """Say that a revision with local chain value ``head`` was just inserted (by an import)."""
        self._txn_head = head

    def follow(self, rev: Revision, recorded_at: Micros, op: Op, **changes: Any) -> Revision:
        """Append a revision that copies ``rev`` forward with ``changes`` (observed now, no reason
        unless given)."""
        row: dict[str, Any] = {
            "memory_id": rev.memory_id, "user_id": rev.user_id, "kind": rev.kind, "key": rev.key,
            "version": rev.version + 1, "op": op,
            "valid_from": to_micros(rev.valid_from),
            "valid_to": None if rev.valid_to is None else to_micros(rev.valid_to),
            "precision": rev.precision, "valid_source": rev.valid_source,
            "observed_at": recorded_at, "recorded_at": recorded_at, "tz": rev.tz,
            "expires_at": None if rev.expires_at is None else to_micros(rev.expires_at),
            "retracted": rev.retracted, "corrected": rev.corrected, "prev_rev": rev.rev_id,
            "supersedes": rev.supersedes, "superseded_by": rev.superseded_by, "text": rev.text,
            "value": encode_json(rev.value, "value"), "attributes": encode_json(rev.attributes, "attributes"),
            "source": encode_json(rev.source, "source"), "reason": None,
        }
        row.update(changes)
        return self.append(**row)

    def first_revision(self, memory_id: str, *, user_id: str, kind: str, key: str | None, op: Op,
                       span: ValidSpan, observed_at: Micros, recorded_at: Micros, tz: str,
                       expires_at: Micros | None, supersedes: str | None, text: str,
                       encoded: tuple[str | None, str | None, str | None], reason: str | None) -> Revision:
        """Append a new memory's first revision (op assert, supersede or derive)."""
        vf, vt, precision, valid_source = span
        value, attributes, source = encoded
        return self.append(
            memory_id=memory_id, user_id=user_id, kind=kind, key=key, version=1, op=op,
            valid_from=vf, valid_to=vt, precision=precision, valid_source=valid_source,
            observed_at=observed_at, recorded_at=recorded_at, tz=tz, expires_at=expires_at,
            retracted=False, corrected=False, prev_rev=None, supersedes=supersedes, superseded_by=None,
            text=text, value=value, attributes=attributes, source=source, reason=reason,
        )

    # -- supersession -------------------------------------------------------------------

    def check_supersedable(self, rev: Revision, user_id: str, valid_from: Micros) -> None:
        """Refuse to supersede a memory of another user, a retracted or superseded one, or one
        that does not start before ``valid_from``."""
        if rev.user_id != user_id:
            raise InvalidOperationError(
                f"memory {rev.memory_id!r} belongs to user {rev.user_id!r}, not {user_id!r}: "
                "a memory can only be superseded by one about the same user"
            )
        if rev.retracted:
            raise InvalidOperationError(f"memory {rev.memory_id!r} is retracted: nothing to supersede")
        if rev.superseded_by is not None:
            raise InvalidOperationError(
                f"memory {rev.memory_id!r} is already superseded by {rev.superseded_by!r}: "
                "supersede that one instead"
            )
        if valid_from <= to_micros(rev.valid_from):
            raise InvalidIntervalError(
                f"valid_from={from_micros(valid_from).isoformat()!r} is not after the superseded "
                f"memory's start {rev.valid_from.isoformat()!r}: a new fact must start after the "
                "one it replaces (use correct() if the old account was wrong)"
            )

    def close_superseded(self, old: Revision, *, by: str, starts: Micros, at: Micros, observed: Micros,
                         reason: str | None) -> Revision:
        """Mark ``old`` superseded by memory ``by``: its interval closes where the new one starts
        (unless it already ended before), and the two are linked."""
        old_to = None if old.valid_to is None else to_micros(old.valid_to)
        return self.follow(old, at, "superseded", observed_at=observed,
                           valid_to=starts if old_to is None or old_to > starts else old_to,
                           superseded_by=by, reason=reason)

    def key_head_row(self, user_id: str, key: str) -> tuple[Any, ...] | None:
        """The key's current value (:data:`~localmem.core.sql.KEY_HEAD`'s row), found among the
        user's latest-starting revisions first: a key that changes daily for years would
        otherwise make every new value read all the earlier ones."""
        conn = self.connection
        boundary = conn.execute(sql.NTH_LATEST_START, (user_id, KEY_HEAD_WINDOW)).fetchone()
        after = -(2**63) if boundary is None else boundary[0]
        row: tuple[Any, ...] | None = conn.execute(sql.KEY_HEAD_AFTER, (user_id, key, after)).fetchone()
        if row is None and boundary is not None:  # the value starts before the window: look everywhere
            row = conn.execute(sql.KEY_HEAD, (user_id, key)).fetchone()
        return row

    def key_head(self, user_id: str, key: str, vf: Micros, vt: Micros | None) -> Revision | None:
        """The memory a new value for ``key`` starting at ``vf`` supersedes (None: keep both apart).

        Raises:
            InvalidIntervalError: the new value overlaps the current one without starting after it.
        """
        row = self.key_head_row(user_id, key)
        if row is None:
            return None
        head = revision_from_row(row, None)
        start = to_micros(head.valid_from)
        if vf > start:
            return head
        if vt is not None and vt <= start:
            return None  # an earlier value of the key: history, not a change
        raise InvalidIntervalError(
            f"key {key!r} of user {user_id!r} already holds {head.text!r} from "
            f"{head.valid_from.isoformat()!r}: a new value must start after it (it then "
            "supersedes it) or end at or before it (it is then history)"
        )

    # -- erasure and usage ------------------------------------------------------------------

    def record_erasure(self, rev: Revision, *, at: Micros, by: str | None, reason: str | None) -> str:
        """Insert a memory's tombstone (its trigger destroys the content); returns the tomb id."""
        tomb_id = new_id(at)
        self.connection.execute(
            sql.INSERT_ERASURE, (tomb_id, rev.memory_id, rev.user_id, at, by, reason, self.device_id))
        self.note_erasure()
        return tomb_id

    def erase_derived(self, memory_ids: list[str], *, at: Micros, by: str | None) -> list[str]:
        """Erase every memory derived, directly or through others, from these erased ones; returns
        their ids. Each gets its own tombstone, whose reason names the memory it was derived from."""
        done: list[str] = []
        todo = list(memory_ids)
        while todo:
            source = todo.pop()
            for row in self.connection.execute(sql.DERIVED_FROM, (source,)).fetchall():
                derived = str(row[0])
                rev = self.state(derived, writable=False)
                if rev.erased:
                    continue
                self.record_erasure(rev, at=at, by=by, reason=f"derived from erased memory {source}")
                done.append(derived)
                todo.append(derived)
        return done

    def log_usage(self, user_id: str, memory_ids: list[str], run_id: str | None) -> None:
        """Append that a search returned these memories (best first), at the recorded time now."""
        with self.write() as now:
            self.connection.executemany(
                sql.INSERT_USAGE, [(user_id, m, now, run_id, i) for i, m in enumerate(memory_ids, 1)])
