"""Filters: the JSON tree compiled to SQL, against scenarios, bad trees and a Python reading of each tree."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import date, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from helpers import examples
from hypothesis import given, settings
from hypothesis import strategies as st

import localmem
from localmem.core.filters import MAX_DEPTH, MAX_LIST, MAX_PARAMS, InvalidFilterError, compile_filter
from localmem.testing import FrozenClock

BERLIN = ZoneInfo("Europe/Berlin")


def ids(revs: list[localmem.Revision]) -> set[str]:
    return {r.memory_id for r in revs}


def everything(store: localmem.Store, user: str, filters: Any = None) -> list[localmem.Revision]:
    """Every memory the user has (history, expired, retracted), narrowed by ``filters``."""
    return store.read(user, current_only=False, include_expired=True, include_retracted=True, filters=filters)


# -- B1: the imported 10K, found by either clock ------------------------------------------


@pytest.fixture
def sam(store: localmem.Store) -> localmem.Revision:
    return store.add(
        "I ran my first 10K last weekend, finished in 58 minutes.",
        user_id="sam",
        observed_at=1750075200,
        tz="Europe/Berlin",
    )


def test_a_june_window_on_valid_time_finds_the_imported_run(
    store: localmem.Store, sam: localmem.Revision
) -> None:
    june = {"valid_time": {"gte": "2025-06-01", "lt": "2025-07-01"}}
    assert ids(everything(store, "sam", june)) == {sam.memory_id}
    assert everything(store, "sam", {"valid_time": {"gte": "2025-07-01"}}) == []


def test_a_june_window_on_observed_at_finds_the_imported_run(
    store: localmem.Store, sam: localmem.Revision
) -> None:
    assert ids(everything(store, "sam", {"observed_at": {"gte": "2025-06-01", "lt": "2025-07-01"}})) == {
        sam.memory_id
    }
    assert ids(everything(store, "sam", {"observed_at": "2025-06"})) == {sam.memory_id}
    assert everything(store, "sam", {"recorded_at": {"lt": "2025-07-01"}}) == []  # imported in 2026


def test_a_date_is_the_whole_local_day(store: localmem.Store) -> None:
    late = store.add(
        "late swim",
        user_id="ana",
        tz="Europe/Berlin",
        valid_from="2025-06-30T23:30:00+02:00",
        valid_to="2025-06-30T23:59:00+02:00",
        resolve=False,
    )
    assert ids(everything(store, "ana", {"valid_time": {"lte": "2025-06-30"}})) == {late.memory_id}
    assert everything(store, "ana", {"valid_time": {"lt": "2025-06-30"}}) == []
    assert everything(store, "ana", {"valid_time": {"gt": "2025-06-30"}}) == []
    assert ids(everything(store, "ana", {"valid_time": {"eq": "2025-06-30"}})) == {late.memory_id}
    # 21:30 UTC is already July 1st in Singapore, but dates read in the user's zone (Berlin).
    assert ids(everything(store, "ana", {"valid_time": "2025-06"})) == {late.memory_id}


def test_intervals_that_only_touch_the_window_do_not_overlap_it(store: localmem.Store) -> None:
    """Half-open on both sides: ending where the window starts, or starting where it ends, is outside."""
    store.add("before", user_id="u", tz="UTC", valid_from="2025-06-01", valid_to="2025-06-02", resolve=False)
    store.add("after", user_id="u", tz="UTC", valid_from="2025-06-03", valid_to="2025-06-04", resolve=False)
    inside = store.add(
        "inside",
        user_id="u",
        tz="UTC",
        valid_from="2025-06-02T23:59:59Z",
        valid_to="2025-06-03",
        resolve=False,
    )
    window = {"valid_time": {"gte": "2025-06-02T00:00:00Z", "lt": "2025-06-03T00:00:00Z"}}
    assert ids(everything(store, "u", window)) == {inside.memory_id}
    assert ids(everything(store, "u", {"valid_time": "2025-06-02"})) == {inside.memory_id}


def test_an_open_ended_fact_overlaps_every_later_window(store: localmem.Store) -> None:
    veg = store.add("Sam is vegetarian", user_id="sam", valid_from="2024-01", tz="UTC")
    assert ids(everything(store, "sam", {"valid_time": {"gte": "2030-01-01"}})) == {veg.memory_id}
    assert everything(store, "sam", {"valid_time": {"lt": "2024-01-01"}}) == []


# -- labels and attributes -------------------------------------------------------------------


@pytest.fixture
def notes(store: localmem.Store) -> dict[str, localmem.Revision]:
    add = store.add
    return {
        "goal": add(
            "half marathon", user_id="u", kind="goal", attributes={"km": 21.1, "tags": ["race", "run"]}
        ),
        "knee": add("knee pain", user_id="u", kind="health", attributes={"part": "knee", "acute": True}),
        "city": add("lives in Berlin", user_id="u", key="home_city", attributes={"note": None}),
        "diet": add("vegetarian", user_id="u", kind="fact", key="diet", attributes={"since": "2024"}),
    }


@pytest.mark.parametrize(
    ("tree", "expected"),
    [
        ({"kind": "goal"}, {"goal"}),
        ({"kind": {"ne": "fact"}}, {"goal", "knee"}),
        ({"kind": {"in": ["goal", "health"]}}, {"goal", "knee"}),
        ({"kind": {"nin": ["goal", "health"]}}, {"city", "diet"}),
        ({"kind": {"contains": "eal"}}, {"knee"}),
        ({"key": {"ne": "diet"}}, {"goal", "knee", "city"}),  # no key is not "diet"
        ({"key": {"in": ["diet", "home_city"]}}, {"city", "diet"}),
        ({"precision": "instant"}, {"goal", "knee", "city", "diet"}),
        ({"attributes.km": {"gt": 20}}, {"goal"}),
        ({"attributes.km": {"lt": 20}}, set()),
        ({"attributes.km": 21.1}, {"goal"}),
        ({"attributes.part": "knee"}, {"knee"}),
        ({"attributes.part": {"ne": "knee"}}, {"goal", "city", "diet"}),  # lacking it is "not knee"
        ({"attributes.acute": True}, {"knee"}),
        ({"attributes.acute": 1}, set()),  # true is not the number 1
        ({"attributes.note": None}, {"city"}),
        ({"attributes.tags": {"contains": "race"}}, {"goal"}),
        ({"attributes.since": {"contains": "202"}}, {"diet"}),
        ({"attributes.since": {"gte": "2024"}}, {"diet"}),
        ({"attributes.part": {"in": ["knee", "hip"]}}, {"knee"}),
        ({"AND": [{"kind": "fact"}, {"key": "diet"}]}, {"diet"}),
        ({"OR": [{"kind": "goal"}, {"key": "home_city"}]}, {"goal", "city"}),
        ({"NOT": {"OR": [{"kind": "goal"}, {"key": "home_city"}]}}, {"knee", "diet"}),
        ({"kind": "fact", "key": "diet"}, {"diet"}),
        ({"AND": [{"NOT": {"NOT": {"kind": "goal"}}}]}, {"goal"}),
    ],
    ids=lambda v: json.dumps(v) if isinstance(v, dict) else None,
)
def test_labels_and_attributes(
    store: localmem.Store, notes: dict[str, localmem.Revision], tree: Any, expected: set[str]
) -> None:
    by_id = {r.memory_id: name for name, r in notes.items()}
    assert {by_id[r.memory_id] for r in everything(store, "u", tree)} == expected


def test_a_filter_narrows_a_current_read_never_widens_it(store: localmem.Store, clock: FrozenClock) -> None:
    store.add("Sam lives in Lisbon", user_id="sam", key="home_city", valid_from="2023-05", tz="Europe/Berlin")
    berlin = store.add("Sam lives in Berlin", user_id="sam", key="home_city", valid_from="2025-09-01")
    now = store.read("sam", valid_at="2025-10-01", filters={"key": "home_city"})
    assert ids(now) == {berlin.memory_id}  # current-only still hides Lisbon


# -- bad trees -----------------------------------------------------------------------------------


def _nested_list(n: int) -> Any:
    value: Any = 1
    for _ in range(n):
        value = [value]
    return value


def _deep(n: int) -> dict[str, Any]:
    tree: dict[str, Any] = {"kind": "goal"}
    for _ in range(n):
        tree = {"NOT": tree}
    return tree


@pytest.mark.parametrize(
    ("tree", "says"),
    [
        ({}, "filters={}: expected a non-empty mapping"),
        ([], "filters=[]: expected a non-empty mapping"),
        ({"colour": "red"}, "filters.colour: unknown field 'colour'"),
        ({"kind": {"like": "g%"}}, "filters.kind: unknown operator 'like'"),
        ({"kind": {"gt": "a"}}, "filters.kind.gt: 'gt' does not apply to kind"),
        ({"kind": 3}, "filters.kind.eq=3: expected a string"),
        ({"kind": {"in": []}}, "filters.kind.in=[]: expected a non-empty list"),
        ({"kind": {"in": "goal"}}, "filters.kind.in='goal': expected a non-empty list"),
        ({"precision": "fortnight"}, "not a precision"),
        ({"AND": []}, "filters.AND=[]: expected a non-empty list of filters"),
        ({"AND": {"kind": "goal"}}, "filters.AND="),
        ({"OR": [{"kind": "goal"}, {"bogus": 1}]}, "filters.OR[1].bogus: unknown field"),
        ({"NOT": [{"kind": "goal"}]}, "filters.NOT=[{'kind': 'goal'}]: expected a non-empty mapping"),
        ({"AND": [{"kind": "goal"}], "kind": "x"}, "AND must stand alone"),
        ({"valid_time": {"contains": "2025"}}, "'contains' does not apply to valid_time"),
        ({"valid_time": {"gte": "2025-07-01", "lt": "2025-06-01"}}, "the window is empty"),
        ({"valid_time": {"gte": "next tuesday"}}, "filters.valid_time.gte"),
        ({"observed_at": {"gte": True}}, "filters.observed_at.gte=True"),
        ({"observed_at": {"gte": "2025-06-01T10:00:00"}}, "no time zone"),
        ({"recorded_at": {"contains": "x"}}, "'contains' does not apply to a time"),
        ({"attributes.": 1}, "unknown field 'attributes.'"),
        ({'attributes.a"b': 1}, "unknown field"),
        ({"attributes.km": {"gt": [1]}}, "gt compares numbers or strings"),
        ({"attributes.km": {"eq": {"a": 1}}}, "expected a string, number, boolean or null"),
        (_deep(MAX_DEPTH + 1), f"nested deeper than {MAX_DEPTH}"),
        # Bounds on size and on values SQLite cannot hold (issue 15, item 7).
        ({"kind": {"in": ["goal"] * 40_000}},
         f"filters.kind.in: a list of 40000 items: expected at most {MAX_LIST}"),
        ({"attributes.n": {"nin": list(range(MAX_LIST + 1))}}, f"expected at most {MAX_LIST}"),
        ({"OR": [{"kind": "goal"}] * (MAX_LIST + 1)}, "filters.OR: a list of 1001 items"),
        ({"observed_at": {"in": ["2025-06-01"] * (MAX_LIST + 1)}}, "filters.observed_at.in: a list"),
        ({"AND": [{"attributes.n": {"in": list(range(MAX_LIST))}}] * 11}, f"more than {MAX_PARAMS} values"),
        ({"attributes.a": 2**70}, "filters.attributes.a.eq=1180591620717411303424 does not fit in 64 bits"),
        ({"attributes.a": {"gt": -(2**63) - 1}}, "does not fit in 64 bits"),
        ({"attributes.a": {"in": [1, 2**64]}}, "filters.attributes.a.in[1]="),
        ({"attributes.a": {"contains": 2**70}}, "does not fit in 64 bits"),
        ({"attributes.a": float("nan")}, "filters.attributes.a.eq=nan: expected a finite number"),
        ({"attributes.a": {"lt": float("inf")}}, "expected a finite number"),
        ({"attributes.a": {"ne": float("-inf")}}, "expected a finite number"),
        ({"attributes.a": "caf\udcff"}, "lone surrogate"),
        ({"kind": "go\x00al"}, "NUL character"),
        ({"key": {"contains": "\ud800"}}, "filters.key.contains="),
        ({"attributes.a": _nested_list(10_000)}, "filters.attributes.a.eq=[[[[...]]]]"),
        ({"valid_time": {"lte": "9999-12-31"}}, "ends after 9999-12-31T23:59:59.999999Z"),
        ({"observed_at": {"gte": 10**400}}, "out of range"),
    ],
    ids=lambda v: None if isinstance(v, (dict, list)) else v,
)
def test_a_bad_tree_is_refused_naming_the_place(store: localmem.Store, tree: Any, says: str) -> None:
    store.add("x", user_id="u", kind="goal")
    before = store.info().revisions
    with pytest.raises(InvalidFilterError) as err:
        store.read("u", filters=tree)
    assert says in str(err.value)
    assert isinstance(err.value, localmem.InvalidInputError)
    assert store.info().revisions == before


def test_lists_at_the_size_limit_run_in_sqlite(store: localmem.Store) -> None:
    """An in-list, an OR list and an AND list of MAX_LIST items each run and find the one match.

    SQLite refuses an expression deeper than 1,000 and a statement with more than
    32,766 values; the compiler joins lists as balanced trees and bounds the values.
    """
    hit = store.add("the one", user_id="u", kind="k500", attributes={"n": 500})
    store.add("another", user_id="u", kind="other", attributes={"n": -1})
    kinds = [f"k{i}" for i in range(MAX_LIST)]
    trees = [
        {"kind": {"in": kinds}},
        {"attributes.n": {"in": list(range(MAX_LIST))}},
        {"OR": [{"attributes.n": i} for i in range(MAX_LIST)]},
        {"AND": [{"attributes.n": {"ne": i}} for i in range(MAX_LIST) if i != 500] + [{"kind": "k500"}]},
        {"NOT": {"kind": {"nin": kinds}}},
    ]
    for tree in trees:
        assert ids(everything(store, "u", tree)) == {hit.memory_id}, str(tree)[:60]


def test_integers_at_sqlites_limits_are_compared_exactly(store: localmem.Store) -> None:
    """The largest and smallest 64-bit integers are accepted as filter values and match exactly."""
    big = store.add("big", user_id="u", attributes={"n": 2**63 - 1})
    small = store.add("small", user_id="u", attributes={"n": -(2**63)})
    assert ids(everything(store, "u", {"attributes.n": 2**63 - 1})) == {big.memory_id}
    assert ids(everything(store, "u", {"attributes.n": {"lte": -(2**63)}})) == {small.memory_id}


def test_a_tree_at_the_depth_limit_compiles() -> None:
    assert compile_filter(_deep(MAX_DEPTH - 1), tz=BERLIN).sql.count("NOT") == MAX_DEPTH - 1


def test_values_are_bound_never_spliced_into_sql() -> None:
    nasty = "x') OR 1=1 --"
    compiled = compile_filter({"OR": [{"kind": nasty}, {"attributes.note": {"contains": nasty}}]}, tz=BERLIN)
    assert nasty not in compiled.sql and nasty in compiled.params.values()


# -- the compiler against a Python reading of the same tree ------------------------------------

KINDS = ("fact", "goal", "event")
KEYS = (None, "diet", "home_city")
DAYS = [date(2025, 6, 1) + timedelta(days=3 * i) for i in range(12)]


def _period(value: Any) -> tuple[datetime, datetime]:
    """The Python reading of a filter time: a date is its local day, an instant itself (+1 µs)."""
    if isinstance(value, str) and len(value) == 10:
        start = datetime.fromisoformat(value).replace(tzinfo=BERLIN)
        return start, start + timedelta(days=1)  # no DST change inside these June/July days
    at = datetime.fromisoformat(value)
    return at, at + timedelta(microseconds=1)


def _json_eq(have: Any, want: Any) -> bool:
    if isinstance(want, bool) or isinstance(have, bool):
        return type(have) is type(want) and have == want
    if want is None:
        return have is None
    if isinstance(want, (int, float)):
        return isinstance(have, (int, float)) and have == want
    return isinstance(have, str) and have == want


def _leaf(rev: localmem.Revision, name: str, ops: Any) -> bool:
    ops = ops if isinstance(ops, dict) else {"eq": ops}
    ok = True
    if name == "valid_time":
        lo = hi = None
        for op, v in ops.items():
            s, e = _period(v)
            if op in ("eq", "gte", "gt"):
                b = s if op != "gt" else e
                lo = b if lo is None else max(lo, b)
            if op in ("eq", "lt", "lte"):
                b = s if op == "lt" else e
                hi = b if hi is None else min(hi, b)
        return (hi is None or rev.valid_from < hi) and (
            lo is None or rev.valid_to is None or rev.valid_to > lo
        )
    if name in ("observed_at", "recorded_at"):
        at = getattr(rev, name)
        for op, v in ops.items():
            s, e = _period(v)
            ok &= {
                "eq": s <= at < e,
                "ne": not (s <= at < e),
                "gt": at >= e,
                "gte": at >= s,
                "lt": at < s,
                "lte": at < e,
            }[op]
        return ok
    if name in ("kind", "key"):
        have = getattr(rev, name)
        for op, v in ops.items():
            if op == "contains":
                ok &= have is not None and v in have
            elif op in ("in", "nin"):
                ok &= (have in v) == (op == "in")
            else:
                ok &= (have == v) == (op == "eq")
        return ok
    attrs = rev.attributes or {}
    present, have = name[len("attributes.") :] in attrs, attrs.get(name[len("attributes.") :])
    for op, v in ops.items():
        if op == "eq":
            ok &= present and _json_eq(have, v)
        elif op == "ne":
            ok &= not (present and _json_eq(have, v))
        elif op == "in":
            ok &= present and any(_json_eq(have, x) for x in v)
        elif op == "nin":
            ok &= not (present and any(_json_eq(have, x) for x in v))
        elif op == "contains":
            ok &= (isinstance(have, list) and any(_json_eq(x, v) for x in have)) or (
                isinstance(have, str) and isinstance(v, str) and v in have
            )
        else:
            numbers = (
                isinstance(have, (int, float)) and not isinstance(have, bool) and isinstance(v, (int, float))
            )
            if numbers or (isinstance(have, str) and isinstance(v, str)):
                if op == "gt":
                    ok &= have > v
                elif op == "gte":
                    ok &= have >= v
                elif op == "lt":
                    ok &= have < v
                else:
                    ok &= have <= v
            else:
                ok = False
    return ok


def evaluate(rev: localmem.Revision, tree: Any) -> bool:
    """The filter semantics, read straight off the module docstring."""
    if "AND" in tree:
        return all(evaluate(rev, t) for t in tree["AND"])
    if "OR" in tree:
        return any(evaluate(rev, t) for t in tree["OR"])
    if "NOT" in tree:
        return not evaluate(rev, tree["NOT"])
    return all(_leaf(rev, name, ops) for name, ops in tree.items())


day = st.sampled_from(DAYS).map(date.isoformat)
HOURS = (0, 12)  # row times and filter instants share one grid, so boundaries are hit often
instant = st.sampled_from(DAYS).flatmap(
    lambda d: st.sampled_from(HOURS).map(lambda h: f"{d.isoformat()}T{h:02d}:00:00+02:00")
)
when = day | instant
scalar = st.sampled_from([1, 2, 2.5, "a", "b", "ab", True, False, None])


def leaves() -> st.SearchStrategy[dict[str, Any]]:
    window = st.fixed_dictionaries(
        {}, optional={"gte": when, "gt": when, "lt": when, "lte": when, "eq": when}
    )
    times = st.sampled_from(["observed_at", "recorded_at"]).flatmap(
        lambda f: st.sampled_from(["eq", "ne", "gt", "gte", "lt", "lte"]).flatmap(
            lambda op: when.map(lambda v: {f: {op: v}})
        )
    )
    text = st.sampled_from(["kind", "key"]).flatmap(
        lambda f: st.one_of(
            st.sampled_from(KINDS if f == "kind" else KEYS[1:]).map(lambda v: {f: v}),
            st.sampled_from(["ne", "contains"]).flatmap(
                lambda op: st.sampled_from(["fa", "goal", "diet", "e"]).map(lambda v: {f: {op: v}})
            ),
            st.sampled_from(["in", "nin"]).flatmap(
                lambda op: st.lists(
                    st.sampled_from(["fact", "goal", "diet", "home_city"]), min_size=1, max_size=2
                ).map(lambda v: {f: {op: v}})
            ),
        )
    )
    attr = st.sampled_from(["attributes.x", "attributes.y"]).flatmap(
        lambda f: st.one_of(
            st.sampled_from(["eq", "ne", "contains"]).flatmap(
                lambda op: scalar.filter(lambda v: op != "contains" or v is not None).map(
                    lambda v: {f: {op: v}}
                )
            ),
            st.sampled_from(["gt", "gte", "lt", "lte"]).flatmap(
                lambda op: st.sampled_from([1, 2, 2.5, "a", "b"]).map(lambda v: {f: {op: v}})
            ),
            st.sampled_from(["in", "nin"]).flatmap(
                lambda op: st.lists(scalar, min_size=1, max_size=3).map(lambda v: {f: {op: v}})
            ),
        )
    )
    valid = window.filter(lambda w: bool(w) and _nonempty(w)).map(lambda w: {"valid_time": w})
    return st.one_of(valid, times, text, attr)


def _nonempty(window: dict[str, str]) -> bool:
    lo = max(
        [_period(v)[0 if op != "gt" else 1] for op, v in window.items() if op in ("eq", "gte", "gt")],
        default=None,
    )
    hi = min(
        [_period(v)[0 if op == "lt" else 1] for op, v in window.items() if op in ("eq", "lt", "lte")],
        default=None,
    )
    return lo is None or hi is None or lo < hi


trees = st.recursive(
    leaves(),
    lambda sub: st.one_of(
        st.lists(sub, min_size=1, max_size=3).map(lambda xs: {"AND": xs}),
        st.lists(sub, min_size=1, max_size=3).map(lambda xs: {"OR": xs}),
        sub.map(lambda x: {"NOT": x}),
    ),
    max_leaves=6,
)

attr_value = st.one_of(scalar, st.lists(st.sampled_from([1, "a", "b", True]), max_size=3))


@pytest.fixture(scope="module")
def random_store() -> Iterator[localmem.Store]:
    """Forty memories with every kind of field value the trees ask about."""
    import random

    rng = random.Random(7)
    clock = FrozenClock("2025-06-01T00:00:00Z")
    store = localmem.open(":memory:", clock=clock)
    values: list[Any] = [1, 2, 2.5, "a", "b", "ab", True, False, None, [1, "a"], ["b"], [], "xyz"]

    def on_grid() -> datetime:
        return datetime.combine(rng.choice(DAYS), datetime.min.time(), BERLIN) + timedelta(
            hours=rng.choice(HOURS)
        )

    for i in range(40):
        clock.set(on_grid())
        start = on_grid()
        attrs = {k: rng.choice(values) for k in ("x", "y") if rng.random() < 0.8}
        store.add(
            f"memory {i}",
            user_id="u",
            tz="Europe/Berlin",
            kind=rng.choice(KINDS),
            key=None,
            attributes=attrs or None,
            valid_from=start,
            valid_to=None if rng.random() < 0.4 else start + timedelta(hours=12 * rng.randint(1, 12)),
            observed_at=on_grid(),
            resolve=False,
        )
    for i, key in enumerate(("diet", "home_city")):  # keyed ones, kept apart so they supersede nothing
        store.add(f"keyed {i}", user_id="u", key=key, kind="fact", valid_from="2025-06-02", resolve=False)
    clock.set("2026-01-01T00:00:00Z")  # read after every write
    assert len(everything(store, "u")) == 42
    yield store
    store.close()


@settings(max_examples=examples(150), deadline=None)
@given(tree=trees)
def test_the_compiled_filter_agrees_with_the_python_reading(random_store: localmem.Store, tree: Any) -> None:
    rows = everything(random_store, "u")
    expected = {r.memory_id for r in rows if evaluate(r, tree)}
    assert ids(everything(random_store, "u", tree)) == expected
