"""What reads return: immutable revisions, changes between them, snapshots.

A revision is the whole state of a memory after one write. Reads return the
revision that was current at the read's known_at, with flags computed for the
read's valid_at (``expired``) and known_at (``stale``, on derived memories).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields
from datetime import datetime
from typing import Any, Literal

from ..time.clock import from_micros
from ..time.interval import Precision, ValidTime
from .sql import REVISION_FIELDS

__all__ = [
    "Op", "ValidSource", "Revision", "Added", "Change", "Snapshot", "Erasure", "new_revision",
    "revision_from_row", "lazy_revision_from_row", "loads_json", "changes",
]


#: The write that made a revision. Kept in step with the CHECK in schema.sql.
Op = Literal["assert", "correct", "supersede", "superseded", "expire", "retract", "derive"]
#: Where a revision's valid time came from: given, read from a time phrase, or assumed.
ValidSource = Literal["explicit", "resolved", "assumed"]


@dataclass(frozen=True, slots=True)
class Revision:
    """One immutable revision of a memory: what it said, when it was true, when known.

    Attributes:
        rev_id: globally unique, time-ordered id of this revision.
        memory_id: the memory it belongs to.
        version: 1 for the first revision of a memory, then 2, 3, ...
        op: the write that made it: assert, correct, supersede, superseded,
            expire, retract or derive.
        text: what the memory says (None once erased).
        value: structured JSON value (numbers for the fee), if any.
        valid_from, valid_to: the valid-time interval, half-open; ``valid_to``
            None means still true.
        precision: how precisely the valid time is known (day, weekend, ...).
        valid_source: where the valid time came from: explicit, resolved, assumed.
        observed_at: when the fact reached the app (the message's send instant).
        recorded_at: when this store committed the revision.
        tz: the user's IANA zone, for local day boundaries.
        expires_at: the instant from which the memory is hidden by default.
        prev_rev: the revision this one follows (for a correction: what it corrects).
        supersedes / superseded_by: links along a chain of changing facts.
        origin: the device id that wrote the revision.
        expired: whether expires_at had passed at the read's valid_at.
        retracted: the user revoked the memory.
        corrected: the memory's content has been corrected at least once.
        erased: the memory's content was destroyed by a privacy erasure.
        stale: a derived memory one of whose sources was corrected, superseded,
            retracted or erased by the read's known_at (see :mod:`localmem.derive`).
    """

    rev_id: str
    memory_id: str
    user_id: str
    kind: str
    key: str | None
    version: int
    op: Op
    text: str | None
    value: Any
    attributes: dict[str, Any] | None
    source: Any
    reason: str | None
    valid_from: datetime
    valid_to: datetime | None
    precision: Precision
    valid_source: ValidSource
    observed_at: datetime
    recorded_at: datetime
    tz: str
    expires_at: datetime | None
    prev_rev: str | None
    supersedes: str | None
    superseded_by: str | None
    origin: str
    retracted: bool
    corrected: bool
    erased: bool
    expired: bool
    stale: bool = False

    @property
    def valid(self) -> ValidTime:
        """The valid-time interval with its precision and zone."""
        return ValidTime(self.valid_from, self.valid_to, self.precision, self.tz)

    def valid_at(self, at: datetime) -> bool:
        """Whether the memory's valid interval contains ``at``."""
        return self.valid.contains(at)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict: times as ISO 8601 UTC strings, plus the rendered interval."""
        out: dict[str, Any] = {}
        for name in self.__dataclass_fields__:
            v = getattr(self, name)
            out[name] = v.isoformat() if isinstance(v, datetime) else v
        out["valid"] = str(self.valid)
        return out


# Stored JSON is always compact json.dumps output (and CHECKed valid), so the C
# scanner reads it directly: json.loads adds two whitespace regex passes and a
# wrapper, two thirds of its cost on small values.
_scan_json = json.JSONDecoder().scan_once  # type: ignore[attr-defined]  # set in __init__, untyped


def loads_json(text: str | None) -> Any:
    """Decode a stored JSON column (None stays None)."""
    if text is None:
        return None
    try:
        value, end = _scan_json(text, 0)
    except StopIteration:
        return json.loads(text)  # not compact after all: let json explain
    return value if end == len(text) else json.loads(text)


def _builder(cls: type) -> type:
    """A plain class with the slots of ``cls`` (a frozen slots dataclass), in the same order.

    Assigning a slot of a frozen dataclass goes through ``object.__setattr__`` (its own
    ``__setattr__`` refuses), which costs about what the rest of a row's decoding does. An
    instance of this class takes plain assignments (the interpreter's fastest store), then
    becomes a ``cls`` by ``__class__`` assignment, which Python allows exactly when the two
    layouts are the same: the same slots in the same order over the same base. The result is a
    ``cls`` in every way (frozen, equal to one built by ``__init__``, pickled as one).
    """
    slots = tuple(cls.__dict__["__slots__"])
    assert slots == tuple(f.name for f in fields(cls)), f"{cls.__name__}'s slots are not its fields"
    return type(f"_{cls.__name__}Builder", (), {"__slots__": slots})


def _generated(name: str, params: str, prologue: str, values: Sequence[tuple[str, str]], cls: type,
               namespace: dict[str, Any]) -> Any:
    """A function ``name(params)`` that runs ``prologue`` and returns a ``cls`` whose fields are
    the (field, expression) ``values``, built through :func:`_builder`'s class."""
    body = "".join(f"    obj.{field} = {expr}\n" for field, expr in values)
    src = (f"def {name}({params}):\n{prologue}    obj = _new(_builder)\n{body}"
           f"    obj.__class__ = _cls\n    return obj\n")
    namespace.update({"_new": object.__new__, "_builder": _builder(cls), "_cls": cls})
    exec(src, namespace)  # noqa: S102 - generated from the dataclass's own field names
    return namespace[name]


def _fast_constructor(cls: type) -> Any:
    """A keyword-only constructor for a frozen slots dataclass that skips its __init__.

    A frozen dataclass's __init__ sets each field through object.__setattr__,
    about 8 µs for Revision's 29 fields, a sixth of an as-of get; here each is a
    plain assignment (:func:`_builder`). The instance is still frozen (assignment
    raises FrozenInstanceError) and equal to one built by __init__. Defaults are
    not applied: pass every field.
    """
    names = [f.name for f in fields(cls)]
    return _generated("make", f"*, {', '.join(names)}", "", [(n, n) for n in names], cls, {})


#: Keyword constructor for Revision that skips the frozen __init__ (see above): every field given.
new_revision = _fast_constructor(Revision)

#: How a stored column becomes a Revision field (the others are taken as they are).
_DECODERS = {
    "value": "loads_json({0})", "attributes": "loads_json({0})", "source": "loads_json({0})",
    "valid_from": "_vf", "valid_to": "None if {0} is None else from_micros({0})",
    "observed_at": "_obs", "recorded_at": "_rec",
    "expires_at": "None if {0} is None else from_micros({0})",
    "retracted": "bool({0})", "corrected": "bool({0})",
}
#: Decoded before the Revision is built: a write observed when it was recorded and valid from then
#: (most are) has one instant three times, decoded once (datetimes are immutable).
_SHARED = (
    "    _rec = from_micros(recorded_at)\n"
    "    _obs = _rec if observed_at == recorded_at else from_micros(observed_at)\n"
    "    _vf = _obs if valid_from == observed_at else from_micros(valid_from)\n"
)
#: Fields computed from the row and the read's times rather than read from a column.
_COMPUTED = {
    "erased": "erased_at is not None",
    "expired": "expires_at is not None and valid_at is not None and expires_at <= valid_at",
    "stale": "False",
}


def _row_decoder() -> Any:
    """``revision_from_row``, generated from :data:`localmem.core.sql.REVISION_FIELDS`.

    The row's columns are unpacked in that list's order, so the SELECT list and the
    decoder cannot drift apart; written out as straight-line code that sets the slots
    itself (:func:`_builder`), it costs what a hand-written one does: about 2 µs a row,
    a third of building it through :data:`new_revision`'s keywords.
    """
    columns = [name for name, _ in REVISION_FIELDS]
    kept = [f.name for f in fields(Revision)]
    unknown = set(kept) - set(columns) - set(_COMPUTED)
    assert not unknown, f"Revision fields with no column or rule: {unknown}"
    values = [(n, _DECODERS.get(n, "{0}").format(n)) for n in kept if n not in _COMPUTED]
    values += list(_COMPUTED.items())
    namespace: dict[str, Any] = {"loads_json": loads_json, "from_micros": from_micros}
    return _generated("revision_from_row", "row, valid_at", f"    ({', '.join(columns)},) = row\n{_SHARED}",
                      values, Revision, namespace)


#: Build a Revision from a row of :data:`localmem.core.sql.REVISION_COLUMNS`; ``valid_at``
#: (microseconds, or None) is the read's valid time, for the expired flag. Generated (see
#: ``_row_decoder``) and called directly: it is on every read's hot path.
revision_from_row: Callable[[Sequence[Any], int | None], Revision] = _row_decoder()


class _LazyRevision(Revision):
    """A :class:`Revision` that decodes each field from its row when the field is read.

    ``get`` returns one: building a Revision decodes every time and JSON column and sets 29
    slots (about 5 µs, a quarter of a get), most of which a caller never reads. It is a
    Revision in every way a caller can tell — isinstance, equality and hashing with eager
    ones, repr, frozen, ``dataclasses.replace`` and pickling (both give an eager Revision) —
    but its fields are properties over the stored row (decoded at each read: cheap, and
    nothing to invalidate).
    """

    __slots__ = ("_row", "_valid_at")

    def __new__(cls, **fields: Any) -> Any:  # dataclasses.replace: an eager Revision
        return new_revision(**fields)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Revision):
            return _values(self) == _values(other)
        return NotImplemented

    __hash__ = Revision.__hash__

    def __repr__(self) -> str:
        return repr(new_revision(**dict(zip(_FIELD_NAMES, _values(self), strict=True))))

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return _eager, _values(self)


def _values(rev: Revision) -> tuple[Any, ...]:
    return tuple(getattr(rev, name) for name in _FIELD_NAMES)


def _eager(*values: Any) -> Revision:
    """A Revision from its field values in order (what a pickled lazy one unpickles to)."""
    made: Revision = new_revision(**dict(zip(_FIELD_NAMES, values, strict=True)))
    return made


_FIELD_NAMES = tuple(f.name for f in fields(Revision))


def _lazy_decoder() -> Any:
    """``lazy_revision_from_row`` and the properties of :class:`_LazyRevision`, generated from
    :data:`localmem.core.sql.REVISION_FIELDS` and the decoding rules of ``_row_decoder``."""
    columns = [name for name, _ in REVISION_FIELDS]
    rules = {**_DECODERS, "valid_from": "from_micros({0})", "observed_at": "from_micros({0})",
             "recorded_at": "from_micros({0})"}
    computed = {
        "erased": "self._row[{erased_at}] is not None",
        "expired": ("self._row[{expires_at}] is not None and self._valid_at is not None"
                    " and self._row[{expires_at}] <= self._valid_at"),
        "stale": "False",
    }
    at = {name: i for i, name in enumerate(columns)}
    namespace: dict[str, Any] = {"loads_json": loads_json, "from_micros": from_micros}
    for name in _FIELD_NAMES:
        if name in computed:
            body = computed[name].format(**at)
        else:
            body = rules.get(name, "{0}").format(f"self._row[{at[name]}]")
        exec(f"def get_{name}(self):\n    return {body}\n", namespace)  # noqa: S102 - generated
        setattr(_LazyRevision, name, property(namespace[f"get_{name}"]))
    set_row, set_at = (vars(_LazyRevision)[slot].__set__ for slot in ("_row", "_valid_at"))

    def lazy_revision_from_row(row: Sequence[Any], valid_at: int | None) -> Revision:
        rev: Revision = object.__new__(_LazyRevision)
        set_row(rev, row)
        set_at(rev, valid_at)
        return rev

    return lazy_revision_from_row


#: :func:`revision_from_row`'s Revision, its fields decoded only when read (see _LazyRevision).
lazy_revision_from_row: Callable[[Sequence[Any], int | None], Revision] = _lazy_decoder()


class Added:
    """What ``add_many`` returns for each item: the new memory's ids at once, its first revision
    (as ``add`` returns it) built only when :attr:`revision` is first read.

    Building a :class:`Revision` (29 fields, times and JSON decoded) costs about as much as
    the rows' own SQL in a bulk write; most callers keep only the ids.
    """

    __slots__ = ("memory_id", "rev_id", "_made")

    memory_id: str
    rev_id: str

    def __init__(self, memory_id: str, rev_id: str,
                 made: Revision | tuple[str, Sequence[Any], Sequence[Any]]) -> None:
        # made: the Revision, or (kind, the row's hashed fields, its content row) to build it from.
        self.memory_id = memory_id
        self.rev_id = rev_id
        self._made = made

    @property
    def revision(self) -> Revision:
        """The new memory's first revision (built on first use, then kept)."""
        made = self._made
        if isinstance(made, Revision):
            return made
        kind, (rev_id, memory_id, user_id, version, op, vf, vt, precision, valid_source, observed,
               recorded, tz, exp, retracted, corrected, prev_rev, supersedes, superseded_by, origin,
               _hlc), (_seq, _memory, text, value, attributes, source, reason) = made
        rev: Revision = new_revision(
            rev_id=rev_id, memory_id=memory_id, user_id=user_id, kind=kind, key=None, version=version,
            op=op, text=text, value=loads_json(value), attributes=loads_json(attributes),
            source=loads_json(source), reason=reason, valid_from=from_micros(vf),
            valid_to=None if vt is None else from_micros(vt), precision=precision,
            valid_source=valid_source, observed_at=from_micros(observed), recorded_at=from_micros(recorded),
            tz=tz, expires_at=None if exp is None else from_micros(exp), prev_rev=prev_rev,
            supersedes=supersedes, superseded_by=superseded_by, origin=origin, retracted=bool(retracted),
            corrected=bool(corrected), erased=False, expired=exp is not None and exp <= recorded, stale=False)
        self._made = rev
        return rev

    def __repr__(self) -> str:
        return f"Added(memory_id={self.memory_id!r}, rev_id={self.rev_id!r})"


@dataclass(frozen=True, slots=True)
class Erasure:
    """The tombstone of a privacy erasure: which memory, when, by whom, why.

    ``checkpointed`` (on the value ``erase`` returns) says the WAL was already
    truncated, so the erased words are gone from every file; False means the
    checkpoint is still pending (inside a batch, until it commits; or after a
    reader or a fault stopped it, until the next write or close succeeds).
    ``derived`` lists the memories derived from it, which were erased with it.
    """

    memory_id: str
    user_id: str
    erased_at: datetime
    erased_by: str | None
    reason: str | None
    tomb_id: str
    checkpointed: bool = True
    #: The memories derived from this one (summaries quoting it), erased with it.
    derived: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Change:
    """One entry of a memory's history: what one write changed.

    ``old_*`` describe the memory before the write (None for its first
    revision); ``new_*`` after it. An erasure is the last entry, with
    ``op == "erase"``; after it every text in the history reads None.
    ``link`` is what the write points at: the corrected revision for a
    correction, the replaced memory for a supersede, the replacing memory for
    a superseded, the previous revision otherwise.
    """

    op: str
    rev_id: str | None
    version: int | None
    old_text: str | None
    new_text: str | None
    old_value: Any
    new_value: Any
    old_valid: ValidTime | None
    new_valid: ValidTime | None
    expires_at: datetime | None
    retracted: bool
    recorded_at: datetime
    observed_at: datetime | None
    source: Any
    reason: str | None
    link: str | None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict: times as ISO 8601 UTC strings, intervals rendered."""
        out: dict[str, Any] = {}
        for name in self.__dataclass_fields__:
            v = getattr(self, name)
            if isinstance(v, datetime):
                v = v.isoformat()
            elif isinstance(v, ValidTime):
                v = {"from": v.start.isoformat(), "to": v.end.isoformat() if v.end else None,
                     "precision": v.precision, "text": str(v)}
            out[name] = v
        return out


def _link(rev: Revision) -> str | None:
    if rev.op == "supersede":
        return rev.supersedes
    if rev.op == "superseded":
        return rev.superseded_by
    return rev.prev_rev


def changes(revisions: Sequence[Revision], erasure: Erasure | None) -> list[Change]:
    """The history of one memory from its revisions (oldest first) and tombstone."""
    out: list[Change] = []
    prev: Revision | None = None
    seen: dict[str, Revision] = {}
    for rev in revisions:
        # A fork (two devices changed the memory apart): "old" is what this revision followed,
        # not the one listed before it.
        if prev is not None and rev.prev_rev is not None and prev.rev_id != rev.prev_rev:
            prev = seen.get(rev.prev_rev, prev)
        out.append(Change(
            op=rev.op,
            rev_id=rev.rev_id,
            version=rev.version,
            old_text=prev.text if prev else None,
            new_text=rev.text,
            old_value=prev.value if prev else None,
            new_value=rev.value,
            old_valid=prev.valid if prev else None,
            new_valid=rev.valid,
            expires_at=rev.expires_at,
            retracted=rev.retracted,
            recorded_at=rev.recorded_at,
            observed_at=rev.observed_at,
            source=rev.source,
            reason=rev.reason,
            link=_link(rev),
        ))
        seen[rev.rev_id] = rev
        prev = rev
    if erasure is not None:
        out.append(Change(
            op="erase", rev_id=None, version=None,
            old_text=None, new_text=None, old_value=None, new_value=None,
            old_valid=prev.valid if prev else None, new_valid=None,
            expires_at=None, retracted=prev.retracted if prev else False,
            recorded_at=erasure.erased_at, observed_at=None, source=None,
            reason=erasure.reason, link=erasure.tomb_id,
        ))
    return out


@dataclass(frozen=True, slots=True)
class Snapshot:
    """Everything the store held about a user at ``known_at``, unfiltered.

    ``memories`` is each memory's newest revision at known_at (retracted,
    expired, superseded and erased ones included, flagged); ``revisions`` is
    every revision recorded by then, oldest first.
    """

    user_id: str
    known_at: datetime
    memories: tuple[Revision, ...]
    revisions: tuple[Revision, ...]
