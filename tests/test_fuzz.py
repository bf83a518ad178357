"""Hostile input over the whole public API: only LocalmemError comes out, and a refused write changes nothing.

Every write and read signature of Store is called with random unicode (lone
surrogates and NUL included), extreme times (huge and negative ints,
non-finite floats, year 1 and 9999, naive datetimes, any string), JSON nested
past every limit, and filter trees of every shape. Whatever a call raises must
be a :class:`localmem.LocalmemError`; a write that raises must leave
``store.digest()`` as it was. Example counts come from the hypothesis profile
(tests/conftest.py): small under ``ci``, thousands under ``thorough``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import UTC, date, datetime
from typing import Any, TypedDict
from zoneinfo import ZoneInfo

from hypothesis import example, given
from hypothesis import strategies as st

import localmem
from localmem.testing import FrozenClock


class Lazy:
    """A value built only when the call is made, printed by its label (hypothesis prints
    failing examples, and neither 10**5000 nor a list 10,000 deep can be printed)."""

    def __init__(self, label: str, make: Callable[[], Any]) -> None:
        self.label, self.make = label, make

    def __repr__(self) -> str:
        return self.label


class Ref:
    """The seeded store's i-th memory id, resolved when the call is made."""

    def __init__(self, index: int) -> None:
        self.index = index

    def __repr__(self) -> str:
        return f"Ref({self.index})"


# -- values ---------------------------------------------------------------------------------

_chars = st.one_of(
    st.characters(),
    st.characters(categories=["Cs"]),  # lone surrogates: st.characters() leaves them out
    st.sampled_from(["\x00", "\n", " ", "\u200b", "\ufeff", "é", "🙂"]),
)
texts = st.one_of(
    st.text(_chars, max_size=40),
    st.sampled_from([
        "", "   ", "\x00", "\x00Sam", "Sam\x00runs", "caf\udcff", "\ud800", "A" * 300,
        "Sam ran a 10K yesterday", "knee pain since last week", "moved to Berlin on 12 June 3pm",
        "Lisbon", "next Tuesday", "2025-06-16",
    ]),
)
_instants = st.datetimes(
    min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30),  # noqa: DTZ001 - hypothesis takes naive bounds
    timezones=st.timezones(),
)
times = st.one_of(
    st.none(),
    st.sampled_from([
        "0001-01-01", "0001", "9999-12-31", "9999-12", "9999", "10000-01-01", "0000-01-01",
        "2025-02-30", "2025-06-16", "2025-06", "2025", "2025-06-16T12:00:00Z",
        "2025-06-16T12:00:00", "0001-01-01T00:00:00+14:00", "9999-12-31T23:59:59-12:00",
        "1" * 400, "-99999", "nan", "inf", "1e400", "yesterday", " 2025-06-16 ",
        Lazy("10**400", lambda: 10**400), Lazy("-(10**400)", lambda: -(10**400)),
        2**63, -(2**63), 10**12, -(10**12), 0, -1,
        float("nan"), float("inf"), float("-inf"), 1e308, -1e308, 5e-324,
        date(1, 1, 1), date(9999, 12, 31), datetime(2025, 6, 16, 12),  # noqa: DTZ001 - naive on purpose
        datetime.max.replace(tzinfo=UTC), datetime.min.replace(tzinfo=UTC),
        datetime(1, 1, 1, tzinfo=ZoneInfo("Asia/Tokyo")), True,
    ]),
    st.integers(), st.floats(), st.text(_chars, max_size=30), st.dates(), _instants,
)
zones = st.one_of(
    st.none(),
    st.sampled_from([
        "UTC", "Asia/Tokyo", "Pacific/Kiritimati", "America/Adak", "Europe/Lisbon", "Mars/Olympus",
        "A" * 300, "../../etc/passwd", "Europe", "", "UTC\x00", "caf\udcff",
    ]),
    st.text(_chars, max_size=20),
)
precisions = st.one_of(st.none(), st.sampled_from(["day", "month", "instant", "fortnight", ""]), texts)


def _nested(depth: int, leaf: Any, as_dict: bool) -> Lazy:
    def make() -> Any:
        value = _real(leaf, [])
        for _ in range(depth):
            value = {"a": value} if as_dict else [value]
        return value
    return Lazy(f"nested({depth}, {leaf!r}, {'dict' if as_dict else 'list'})", make)


def _nots(depth: int) -> Lazy:
    def make() -> Any:
        tree: Any = {"kind": "fact"}
        for _ in range(depth):
            tree = {"NOT": tree}
        return tree
    return Lazy(f"{depth} NOTs around {{'kind': 'fact'}}", make)


def _real(value: Any, ids: list[str]) -> Any:
    """``value`` with every Lazy built and every Ref resolved (generated values nest a few levels only)."""
    if isinstance(value, Lazy):
        return value.make()
    if isinstance(value, Ref):
        return ids[value.index]
    if isinstance(value, list):
        return [_real(v, ids) for v in value]
    if isinstance(value, tuple):
        return tuple(_real(v, ids) for v in value)
    if isinstance(value, dict):
        return {k: _real(v, ids) for k, v in value.items()}
    return value


_huge = st.sampled_from([
    Lazy("10**5000", lambda: 10**5000), Lazy("-(10**5000)", lambda: -(10**5000)),
    2**70, -(2**63) - 1, 2**63 - 1, -(2**63),
])
_json_leaf = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), texts, _huge)
json_values = st.one_of(
    st.recursive(
        _json_leaf,
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(texts, inner, max_size=4),
        max_leaves=12,
    ),
    st.builds(_nested, st.sampled_from([63, 64, 65, 1000, 10_000]), _json_leaf, st.booleans()),
    st.sampled_from([{1, 2}, b"bytes", {1: "int key"}, ("a", "tuple"), Lazy("object()", object)]),
)
attributes = st.one_of(st.none(), st.dictionaries(texts, json_values, max_size=4), json_values)

_fields = st.sampled_from([
    "valid_time", "observed_at", "recorded_at", "kind", "key", "precision",
    "attributes.part", "attributes.km", "attributes.tags", "attributes.", "colour", "AND",
])
_ops = st.sampled_from(["eq", "ne", "gt", "gte", "lt", "lte", "in", "nin", "contains", "like"])
_filter_values = st.one_of(
    _json_leaf, times, st.lists(_json_leaf, max_size=4),
    st.sampled_from([
        Lazy("['fact'] * 40000", lambda: ["fact"] * 40_000),
        Lazy("list(range(1001))", lambda: list(range(1001))),
        Lazy("list(range(1000))", lambda: list(range(1000))),
    ]),
)
_leaves = st.one_of(
    st.dictionaries(_fields, _filter_values, min_size=1, max_size=2),
    st.dictionaries(_fields, st.dictionaries(_ops, _filter_values, min_size=1, max_size=2),
                    min_size=1, max_size=2),
)
filters = st.one_of(
    st.none(),
    st.recursive(
        _leaves,
        lambda inner: st.one_of(
            st.builds(lambda xs: {"AND": xs}, st.lists(inner, max_size=3)),
            st.builds(lambda xs: {"OR": xs}, st.lists(inner, max_size=3)),
            st.builds(lambda x: {"NOT": x}, inner),
        ),
        max_leaves=6,
    ),
    st.builds(_nots, st.sampled_from([31, 32, 33, 10_000])),
    st.sampled_from([{}, [], "kind", Lazy("{'AND': [{'kind': 'fact'}] * 1001}",
                                           lambda: {"AND": [{"kind": "fact"}] * 1001})]),
)


flags = st.booleans()
limits = st.one_of(st.integers(min_value=-5, max_value=300), st.sampled_from([0, 10**6, 2**63, -(2**70)]))
texts_or_none = st.none() | texts

memory_refs = st.one_of(st.builds(Ref, st.integers(min_value=0, max_value=3)), texts,
                        st.sampled_from(["", "01", "NOPE"]))
users = st.one_of(st.just("sam"), texts)

#: A call: the Store method's name, its positional and its keyword arguments.
Call = tuple[str, tuple[Any, ...], dict[str, Any]]
WRITES = ("add", "correct", "supersede", "retract", "expire", "erase", "derive")


def _call(
    method: str,
    /,
    *args: st.SearchStrategy[Any],
    required: Mapping[str, st.SearchStrategy[Any]] | None = None,
    **kwargs: st.SearchStrategy[Any],
) -> st.SearchStrategy[Call]:
    """Calls of ``method``: the ``required`` keywords always given, each other one given or left out."""
    keywords = st.fixed_dictionaries(required or {}, optional=kwargs)
    return st.tuples(st.just(method), st.tuples(*args), keywords)


class _Axes(TypedDict):
    as_of: st.SearchStrategy[Any]
    known_at: st.SearchStrategy[Any]
    valid_at: st.SearchStrategy[Any]


_AXES: _Axes = {"as_of": times, "known_at": times, "valid_at": times}
write_calls = st.one_of(
    _call("add", texts, required={"user_id": users}, observed_at=times, tz=zones,
          valid_from=times, valid_to=times, precision=precisions, expires=times,
          key=texts_or_none, supersedes=st.none() | memory_refs, kind=texts,
          value=json_values, attributes=attributes, source=json_values,
          reason=texts_or_none, resolve=flags),
    _call("correct", memory_refs, text=texts, value=json_values, valid_from=times, valid_to=times,
          precision=precisions, attributes=attributes, observed_at=times, source=json_values,
          reason=texts_or_none),
    _call("supersede", memory_refs, texts, valid_from=times, valid_to=times, precision=precisions,
          observed_at=times, expires=times, value=json_values, attributes=attributes,
          source=json_values, reason=texts_or_none, resolve=flags),
    _call("retract", memory_refs, texts_or_none, observed_at=times),
    _call("expire", memory_refs, times, reason=texts_or_none),
    _call("erase", memory_refs, texts_or_none, by=texts_or_none),
    _call("derive", texts, required={"from_": st.lists(memory_refs, max_size=3)}, user_id=st.none() | users,
          kind=texts, value=json_values, attributes=attributes, valid_from=times, valid_to=times,
          precision=precisions, source=json_values, reason=texts_or_none,
          supersedes=st.none() | memory_refs),
)
read_calls = st.one_of(
    _call("get", memory_refs, **_AXES),
    _call("read", users, **_AXES, current_only=flags, include_expired=flags, include_retracted=flags,
          kind=texts_or_none, key=texts_or_none, filters=filters),
    _call("search", texts, required={"user_id": users}, **_AXES, filters=filters, current_only=flags,
          include_expired=flags, limit=limits, log=flags, run_id=texts_or_none),
    _call("snapshot", users, known_at=times),
    _call("history", memory_refs, known_at=times),
    _call("read_page", users, **_AXES, current_only=flags, include_expired=flags,
          include_retracted=flags, only_expired=flags, kind=texts_or_none, key=texts_or_none,
          after=texts_or_none, limit=limits),
    _call("compare", memory_refs | texts, required={"known_at": st.lists(times, max_size=3)}, valid_at=times,
          user_id=st.none() | users, name=texts_or_none),
)

# -- the store -------------------------------------------------------------------------------------


def _seeded() -> tuple[localmem.Store, list[str]]:
    """A fresh in-memory store with a few memories of user "sam" (one erased, one retracted)."""
    clock = FrozenClock("2025-06-01T00:00:00Z")
    store = localmem.open(":memory:", clock=clock)
    ids = [
        store.add("Sam lives in Lisbon", user_id="sam", key="home_city", valid_from="2023-05",
                  tz="Europe/Lisbon").memory_id,
        store.add("knee pain after the 10K", user_id="sam", kind="health",
                  attributes={"part": "knee", "km": 10, "tags": ["run"]}, expires="2025-12-31").memory_id,
        store.add("secret", user_id="sam").memory_id,
        store.add("revoked", user_id="sam").memory_id,
    ]
    store.erase(ids[2], "asked")
    store.retract(ids[3], "forget it")
    clock.set("2025-07-01T00:00:00Z")
    return store, ids


def _make(store: localmem.Store, ids: list[str], call: Call) -> None:
    """Make one call; a refused write must leave the digest as it was."""
    name, args, kwargs = call
    before = store.digest() if name in WRITES else None
    try:
        getattr(store, name)(*_real(args, ids), **_real(kwargs, ids))
    except localmem.LocalmemError:
        if before is not None:
            assert store.digest() == before, f"a refused {name} changed the store"
    # Anything else propagates: hypothesis shrinks it and reports the call.


@given(call=write_calls)
def test_a_write_raises_only_localmem_errors_and_a_refused_one_changes_nothing(call: Call) -> None:
    """Every write signature under hostile arguments: a LocalmemError or success, never a partial write."""
    store, ids = _seeded()
    try:
        _make(store, ids, call)
    finally:
        store.close()


@given(call=read_calls)
# Found by the thorough profile: year 1 in Tokyo is year 0 in UTC, and the read axes' fast
# path for aware datetimes let it through to from_micros (OverflowError).
@example(call=("compare", (Ref(0),), {"known_at": [datetime(1, 1, 1, tzinfo=ZoneInfo("Asia/Tokyo"))]}))
@example(call=("get", (Ref(0),), {"as_of": datetime(1, 1, 1, tzinfo=ZoneInfo("Asia/Tokyo"))}))
# And: a query's time phrases were read in the user's zone at a known_at of 0001-01-01Z
# (Lisbon is behind UTC there, so the local send date was in year 0).
@example(call=("search", ("0",), {"user_id": "sam", "known_at": datetime(1, 1, 1, tzinfo=UTC)}))
@example(call=("get", ("\ud800",), {}))
@example(call=("history", ("\ud800",), {}))
def test_a_read_raises_only_localmem_errors(call: Call) -> None:
    """Every read signature under hostile arguments raises nothing but LocalmemError."""
    store, ids = _seeded()
    try:
        _make(store, ids, call)
    finally:
        store.close()


@given(calls=st.lists(st.one_of(write_calls, read_calls), min_size=2, max_size=6))
def test_a_sequence_of_calls_raises_only_localmem_errors(calls: list[Call]) -> None:
    """Writes and reads one after another on one store: only LocalmemErrors, and the file stays healthy."""
    store, ids = _seeded()
    try:
        for call in calls:
            _make(store, ids, call)
        assert store.doctor().ok
    finally:
        store.close()


def test_the_seeded_store_is_what_the_fuzz_starts_from() -> None:
    """The fuzz's store holds four memories, one erased and one retracted, and is healthy."""
    store, ids = _seeded()
    try:
        assert len(ids) == 4
        assert store.erasure(ids[2]) is not None
        assert [r.memory_id for r in store.read("sam", include_retracted=True) if r.retracted] == [ids[3]]
        assert store.doctor().ok
    finally:
        store.close()
