"""LocalmemStore against LangGraph's own expectations, and a LangGraph agent that remembers through it.

langgraph ships no store conformance suite (langgraph-checkpoint-conformance covers
checkpointers only), so the behaviours below are ported from the tests of its
SqliteStore (libs/checkpoint-sqlite/tests/test_store.py, langgraph 1.x): batch
order, get/put/delete, search by prefix, filter and page, list_namespaces with
prefixes, suffixes, wildcards and depth, and namespace edge cases. The vector
tests are left out: localmem ranks by words, not by an embedding LangGraph hands it.
LangMem's own memory tools then run against it, alone and inside a LangGraph agent.
"""

from __future__ import annotations

import asyncio
import json
import uuid
import warnings
from collections.abc import Iterator
from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition
from langgraph.store.base import (
    BaseStore,
    GetOp,
    InvalidNamespaceError,
    Item,
    ListNamespacesOp,
    MatchCondition,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
)
from langgraph.warnings import LangGraphDeprecatedSinceV10

import localmem
from localmem.compat.langgraph import LocalmemStore
from localmem.testing import FrozenClock

with warnings.catch_warnings():
    # langmem 0.0.30 imports trustcall, which imports Send from its pre-1.0 place.
    warnings.filterwarnings("ignore", category=LangGraphDeprecatedSinceV10)
    from langmem import (  # type: ignore[import-untyped]  # langmem ships no py.typed
        create_manage_memory_tool,
        create_search_memory_tool,
    )


def items_of(result: Result) -> list[Item]:
    """A batch result that must be a search's: a list of items."""
    assert isinstance(result, list)
    found = [i for i in result if isinstance(i, Item)]
    assert len(found) == len(result)
    return found


def namespaces_of(result: Result) -> list[tuple[str, ...]]:
    """A batch result that must be list_namespaces': a list of namespace tuples."""
    assert isinstance(result, list)
    found = [n for n in result if isinstance(n, tuple)]
    assert len(found) == len(result)
    return found


def score(item: SearchItem) -> float:
    """The score of a hit of a query (which always has one)."""
    assert item.score is not None
    return item.score


@pytest.fixture
def clock() -> FrozenClock:
    """The localmem store's clock, moved by hand."""
    return FrozenClock("2026-03-02T08:00:00Z")


@pytest.fixture
def lm(clock: FrozenClock) -> Iterator[localmem.Store]:
    """An in-memory localmem store on the frozen clock."""
    s = localmem.open(":memory:", clock=clock)
    yield s
    s.close()


@pytest.fixture
def store(lm: localmem.Store) -> LocalmemStore:
    """A LocalmemStore over the localmem store."""
    return LocalmemStore(lm)


# -- ported from SqliteStore's tests -------------------------------------------------------


def test_batch_order(store: LocalmemStore) -> None:
    """Mixed operations run in order and each result sits in its operation's place."""
    store.put(("test", "foo"), "key1", {"data": "value1"})
    store.put(("test", "bar"), "key2", {"data": "value2"})
    results = store.batch([
        GetOp(namespace=("test", "foo"), key="key1"),
        PutOp(namespace=("test", "bar"), key="key2", value={"data": "value2"}),
        SearchOp(namespace_prefix=("test",), filter={"data": "value1"}, limit=10, offset=0),
        ListNamespacesOp(match_conditions=None, max_depth=None, limit=10, offset=0),
        GetOp(namespace=("test",), key="key3"),
    ])
    assert isinstance(results[0], Item) and results[0].value == {"data": "value1"}
    assert results[0].namespace == ("test", "foo") and results[0].key == "key1"
    assert results[1] is None
    assert [i.key for i in items_of(results[2])] == ["key1"]
    assert {("test", "foo"), ("test", "bar")} <= set(namespaces_of(results[3]))
    assert results[4] is None
    again = store.batch([
        SearchOp(namespace_prefix=("test",), filter=None, limit=5, offset=0),
        PutOp(namespace=("test",), key="key3", value={"data": "value3"}),
        GetOp(namespace=("test",), key="key3"),
    ])
    assert len(items_of(again[0])) == 2
    assert again[1] is None
    assert isinstance(again[2], Item) and again[2].value == {"data": "value3"}  # a put is seen by a later get


def test_batch_put_with_none_deletes(store: LocalmemStore) -> None:
    """A PutOp with value None deletes; the other puts of the batch are stored."""
    store.put(("test",), "key3", {"data": "doomed"})
    puts = [PutOp(("test",), "key1", {"data": "value1"}), PutOp(("test",), "key2", {"data": "v2"}),
            PutOp(("test",), "key3", None)]
    assert store.batch(puts) == [None, None, None]
    first, second = store.get(("test",), "key1"), store.get(("test",), "key2")
    assert first is not None and first.value == {"data": "value1"}
    assert second is not None and second.value == {"data": "v2"}
    assert store.get(("test",), "key3") is None


def test_batch_list_namespaces_ops(store: LocalmemStore) -> None:
    """ListNamespacesOps in one batch: all, cut at depth 2, and those ending in "public"."""
    data = [(("test", "documents", "public"), "doc1"), (("test", "documents", "private"), "doc2"),
            (("test", "images", "public"), "img1"), (("prod", "documents", "public"), "doc3")]
    for namespace, key in data:
        store.put(namespace, key, {"content": key})
    every, shallow, public = store.batch([
        ListNamespacesOp(match_conditions=None, max_depth=None, limit=10, offset=0),
        ListNamespacesOp(match_conditions=None, max_depth=2, limit=10, offset=0),
        ListNamespacesOp(match_conditions=(MatchCondition("suffix", ("public",)),), max_depth=None, limit=10,
                         offset=0),
    ])
    assert len(namespaces_of(every)) == len(data)
    assert set(namespaces_of(shallow)) == {("test", "documents"), ("test", "images"), ("prod", "documents")}
    assert [ns[-1] for ns in namespaces_of(public)] == ["public"] * 3


def test_basic_store_ops(store: LocalmemStore, clock: FrozenClock) -> None:
    """put, get, update, get in another namespace, delete: as LangGraph's stores behave."""
    namespace = ("test", "documents")
    store.put(namespace, "doc1", {"title": "Test Document", "content": "Hello, World!"})
    item = store.get(namespace, "doc1")
    assert item is not None and item.namespace == namespace and item.key == "doc1"
    assert item.value == {"title": "Test Document", "content": "Hello, World!"}
    clock.advance(minutes=1)
    store.put(namespace, "doc1", {"title": "Updated Document", "content": "Hello, Updated!"})
    updated = store.get(namespace, "doc1")
    assert updated is not None and updated.value["title"] == "Updated Document"
    assert updated.created_at == item.created_at and updated.updated_at > item.updated_at
    assert store.get(("test", "other_documents"), "doc1") is None
    store.delete(namespace, "doc1")
    assert store.get(namespace, "doc1") is None
    assert store.search(("test",)) == []


def test_search_by_prefix_filter_and_page(store: LocalmemStore) -> None:
    """search keeps the prefix's items, filters on values, and pages with limit and offset."""
    store.put(("test", "docs"), "doc1", {"title": "First Doc", "author": "Alice", "tags": ["important"]})
    store.put(("test", "docs"), "doc2", {"title": "Second Doc", "author": "Bob", "tags": ["draft"]})
    store.put(("test", "images"), "img1", {"title": "Image 1", "author": "Alice", "tags": ["final"]})
    assert len(store.search(("test",))) == 3
    docs = store.search(("test", "docs"))
    assert len(docs) == 2 and all(i.namespace == ("test", "docs") for i in docs)
    assert {i.key for i in store.search(("test",), filter={"author": "Alice"})} == {"doc1", "img1"}
    assert [i.key for i in store.search(("test",), filter={"tags": ["draft"]})] == ["doc2"]
    first, rest = store.search(("test",), limit=2), store.search(("test",), offset=2)
    assert len(first) == 2 and len(rest) == 1
    assert {i.key for i in first}.isdisjoint({i.key for i in rest})


def test_search_lists_most_recently_updated_first(store: LocalmemStore, clock: FrozenClock) -> None:
    """Without a query, search lists the prefix's items by last update, newest first."""
    for key in ("a", "b", "c"):
        store.put(("docs",), key, {"v": key})
        clock.advance(seconds=1)
    store.put(("docs",), "a", {"v": "a2"})
    assert [i.key for i in store.search(("docs",))] == ["a", "c", "b"]
    assert all(i.score is None for i in store.search(("docs",)))


def test_filter_operators_and_values(store: LocalmemStore) -> None:
    """$gt/$gte/$lt/$lte/$ne compare numbers (inf and NaN safely), booleans are not numbers."""
    for key, price, active in (("item1", 10, True), ("item2", 20, False), ("item3", 30, True)):
        store.put(("items",), key, {"price": price, "active": active})
    assert {i.key for i in store.search(("items",), filter={"price": {"$gt": 15}})} == {"item2", "item3"}
    assert len(store.search(("items",), filter={"price": {"$lt": float("inf")}})) == 3
    assert store.search(("items",), filter={"price": {"$eq": float("nan")}}) == []
    assert len(store.search(("items",), filter={"price": {"$lt": 10**100}})) == 3
    assert {i.key for i in store.search(("items",), filter={"price": {"$gte": 20, "$ne": 30}})} == {"item2"}
    assert {i.key for i in store.search(("items",), filter={"active": True})} == {"item1", "item3"}
    assert [i.key for i in store.search(("items",), filter={"active": False})] == ["item2"]
    assert store.search(("items",), filter={"price": 1}) == []  # 1 is not True, and no price is 1


def test_filter_keys_with_hyphens_digits_dots_and_quotes(store: LocalmemStore) -> None:
    """Filter keys with hyphens, leading digits or dotted paths work; quotes in values are literal."""
    store.put(("docs",), "hyphen", {"access-level": "public", "user": {"access-level": "nested"}})
    store.put(("docs",), "digit", {"123abc": "ok", "user": {"123abc": "ok2"}})
    store.put(("docs",), "quote", {"title": "O'Brien's Document"})
    assert [r.key for r in store.search(("docs",), filter={"access-level": "public"})] == ["hyphen"]
    assert [r.key for r in store.search(("docs",), filter={"user.access-level": "nested"})] == ["hyphen"]
    assert [r.key for r in store.search(("docs",), filter={"user.123abc": "ok2"})] == ["digit"]
    assert [r.key for r in store.search(("docs",), filter={"title": "O'Brien's Document"})] == ["quote"]
    assert store.search(("docs",), filter={"access') = 'public' OR '1'='1": "x"}) == []
    assert store.search(("docs",), filter={"title": "public' OR '1'='1"}) == []


def test_query_search_ranks_words_within_the_prefix(store: LocalmemStore) -> None:
    """A query ranks the prefix's items by localmem's search, best first, with scores; a filter narrows it."""
    store.put(("test",), "doc1", {"text": "red apple", "color": "red"})
    store.put(("test",), "doc2", {"text": "red car", "color": "red"})
    store.put(("test",), "doc3", {"text": "green apple", "color": "green"})
    store.put(("other",), "doc4", {"text": "apple pie"})
    hits = store.search(("test",), query="apple")
    assert {h.key for h in hits} == {"doc1", "doc3"} and all(h.score is not None for h in hits)
    assert [h.key for h in store.search(("test",), query="apple", filter={"color": "red"})] == ["doc1"]
    assert [h.key for h in store.search(("test",), query="car")] == ["doc2"]


def test_query_edge_cases(store: LocalmemStore) -> None:
    """An empty or wordless query lists the prefix; a long or punctuated one still finds the item."""
    store.put(("test",), "doc1", {"text": "test document"})
    for query in ("", None, "!@#$%", "test " * 100, "test!@#$%^&*()"):
        assert [i.key for i in store.search(("test",), query=query)] == ["doc1"], query


def test_query_pages_do_not_overlap(store: LocalmemStore) -> None:
    """Pages of a ranked search are disjoint and scores fall from one to the next."""
    for i in range(5):
        store.put(("test",), f"doc{i}", {"text": f"test document number {i}"})
    page1 = store.search(("test",), query="test", limit=2)
    page2 = store.search(("test",), query="test", limit=2, offset=2)
    assert len(page1) == len(page2) == 2
    assert {i.key for i in page1}.isdisjoint({i.key for i in page2})
    assert score(page1[0]) >= score(page1[1]) >= score(page2[0])
    assert len(store.search(("test",), query="test", limit=10)) == 5


def test_index_names_the_fields_search_reads(store: LocalmemStore) -> None:
    """put(index=[...]) makes search read those fields only; index=False keeps an item out of queries."""
    store.put(("test",), "doc3", {"key0": "aaa", "key1": "bbb", "key2": "ccc"}, index=["key0", "key1"])
    store.put(("test",), "doc5", {"key0": "aaa"}, index=False)
    assert [i.key for i in store.search(("test",), query="aaa")] == ["doc3"]
    assert store.search(("test",), query="ccc") == []
    assert {i.key for i in store.search(("test",))} == {"doc3", "doc5"}


def test_non_ascii_text_is_searchable(store: LocalmemStore) -> None:
    """Items in Chinese, Japanese, Korean, Russian and Hindi are each found by their own words."""
    texts = ["这是中文", "これは日本語です", "이건 한국어야", "Это русский", "यह रूसी है"]
    for i, text in enumerate(texts, 1):
        store.put(("user_123", "memories"), str(i), {"text": text})
    for i, text in enumerate(texts, 1):
        assert store.search(("user_123", "memories"), query=text)[0].key == str(i), text


def test_list_namespaces(store: LocalmemStore) -> None:
    """list_namespaces filters by prefix and suffix (with wildcards), truncates to depth, and pages."""
    pref = str(uuid.uuid4())
    namespaces = [
        (pref, "test", "documents", "public", pref), (pref, "test", "documents", "private", pref),
        (pref, "test", "images", "public", pref), (pref, "test", "images", "private", pref),
        (pref, "prod", "documents", "public", pref),
        (pref, "prod", "documents", "some", "nesting", "public", pref),
        (pref, "prod", "documents", "private", pref),
    ]
    for namespace in namespaces:
        store.put(namespace, "dummy", {"content": "dummy"})
    assert len(store.list_namespaces(prefix=(pref, "test"))) == 4
    assert len(store.list_namespaces(prefix=(pref, "test", "documents"))) == 2
    assert len(store.list_namespaces(suffix=("public", pref))) == 4
    assert len(store.list_namespaces(prefix=(pref, "test"), suffix=("public", pref))) == 2
    assert len(store.list_namespaces(prefix=(pref, "*", "documents"))) == 5
    assert len(store.list_namespaces(suffix=("*", "public", pref))) == 4
    assert store.list_namespaces(suffix=("some", "*", "public", pref)) == [namespaces[5]]
    assert all(len(ns) <= 3 for ns in store.list_namespaces(max_depth=3))
    deep = store.list_namespaces(max_depth=4, prefix=(pref, "*", "documents"))
    assert len(set(deep)) == len(deep) == 5  # cut at depth 4, each is listed once
    assert len(store.list_namespaces(prefix=(pref,), limit=3)) == 3
    assert len(store.list_namespaces(prefix=(pref,), offset=3)) == len(namespaces) - 3
    assert set(store.list_namespaces(prefix=(pref,))) == set(namespaces)
    for namespace in namespaces:
        store.delete(namespace, "dummy")
    assert store.list_namespaces(prefix=(pref,)) == []


def test_namespace_boundaries_case_and_metacharacters(store: LocalmemStore) -> None:
    """A prefix stops at a label boundary, labels are case-sensitive, and *, _, % are literal in labels."""
    for namespace in [("foo",), ("foo", "child"), ("foobar",), ("Foo",), ("user_1",), ("userX1",),
                      ("star*",), ("starX",), ("users", "alice"), ("users", "alice\n")]:
        store.put(namespace, "k", {"v": 1})

    def found(prefix: tuple[str, ...]) -> set[tuple[str, ...]]:
        return {item.namespace for item in store.search(prefix, limit=100)}

    assert found(("foo",)) == {("foo",), ("foo", "child")}
    assert found(("Foo",)) == {("Foo",)}
    assert found(("fo",)) == set()
    assert found(("user_1",)) == {("user_1",)}
    assert found(("star*",)) == {("star*",)}
    assert set(store.list_namespaces(suffix=("alice",), limit=100)) == {("users", "alice")}
    assert len(found(())) == 10  # an empty prefix constrains nothing


def test_invalid_namespaces_are_refused(store: LocalmemStore) -> None:
    """A period, an empty label or the reserved root "langgraph" is refused before anything is written."""
    for namespace in [("a.b",), ("",), ("langgraph", "x"), ()]:
        with pytest.raises(InvalidNamespaceError):
            store.put(namespace, "k", {"v": 1})
    with pytest.raises(InvalidNamespaceError):
        store.batch([PutOp(("ok", "bad.label"), "k", {"v": 1})])
    assert store.store.info().revisions == 0


def test_ttl_is_refused(store: LocalmemStore) -> None:
    """A put with a TTL is refused (supports_ttl is False), as LangGraph's base class does."""
    with pytest.raises(NotImplementedError):
        store.put(("docs",), "k", {"v": 1}, ttl=5)


def test_async_operations(store: LocalmemStore) -> None:
    """aput, aget, asearch, adelete and alist_namespaces do what their sync twins do."""
    async def run() -> list[Any]:
        await store.aput(("a", "b"), "k", {"text": "async hello"})
        got = await store.aget(("a", "b"), "k")
        hits = await store.asearch(("a",), query="hello")
        spaces = await store.alist_namespaces()
        await store.adelete(("a", "b"), "k")
        return [got.value if got else None, [h.key for h in hits], spaces, await store.aget(("a", "b"), "k")]

    assert asyncio.run(run()) == [{"text": "async hello"}, ["k"], [("a", "b")], None]


# -- what localmem adds -------------------------------------------------------------------------


def test_namespace_maps_onto_user_and_kind(store: LocalmemStore, lm: localmem.Store) -> None:
    """("memories", "alice") is localmem user alice with kind memories; put corrects, delete retracts."""
    store.put(("memories", "alice"), "m1", {"content": "Alice likes tennis"})
    store.put(("memories", "alice"), "m1", {"content": "Alice likes squash"})
    [rev] = lm.read("alice")
    assert (rev.kind, rev.text) == ("memories", "Alice likes squash")
    assert rev.value == {"content": "Alice likes squash"}
    store.delete(("memories", "alice"), "m1")
    assert lm.read("alice") == []
    assert [c.op for c in lm.history(rev.memory_id)] == ["assert", "correct", "retract"]


def test_a_put_of_the_same_value_writes_nothing(store: LocalmemStore, lm: localmem.Store) -> None:
    """Putting the value an item already has adds no revision."""
    store.put(("memories", "alice"), "m1", {"content": "same"})
    store.put(("memories", "alice"), "m1", {"content": "same"})
    assert lm.info().revisions == 1


def test_time_words_in_values_are_kept_as_given(store: LocalmemStore, lm: localmem.Store) -> None:
    """An item's text is stored as given (no time phrase is read), valid from when it was put."""
    store.put(("memories", "alice"), "m1", {"content": "ran a 10K yesterday"})
    [rev] = lm.read("alice")
    assert rev.text == "ran a 10K yesterday" and rev.valid_source == "assumed"


def test_a_view_as_of_a_past_time_reads_then_and_takes_no_writes(
    lm: localmem.Store, clock: FrozenClock
) -> None:
    """LocalmemStore(known_at=T) answers as the store knew at T, and refuses writes."""
    live = LocalmemStore(lm)
    live.put(("memories", "alice"), "city", {"content": "Alice lives in Lisbon"})
    clock.set("2026-03-02T09:00:00Z")
    live.put(("memories", "alice"), "city", {"content": "Alice lives in Berlin"})
    then = LocalmemStore(lm, known_at="2026-03-02T08:30:00Z")
    item = then.get(("memories", "alice"), "city")
    assert item is not None and item.value == {"content": "Alice lives in Lisbon"}
    assert [h.value["content"] for h in then.search(("memories", "alice"), query="lives")] == [
        "Alice lives in Lisbon"]
    with pytest.raises(localmem.InvalidOperationError):
        then.put(("memories", "alice"), "city", {"content": "Porto"})


def test_user_at_picks_the_user_label(lm: localmem.Store) -> None:
    """user_at=0 makes the first label the user: ("alice", "memories") is alice's."""
    store = LocalmemStore(lm, user_at=0)
    store.put(("alice", "memories"), "m1", {"content": "hello"})
    assert [r.kind for r in lm.read("alice")] == ["memories"]
    assert [i.key for i in store.search(("alice",))] == ["m1"]


# -- a LangGraph agent ------------------------------------------------------------------------------


def _langmem_tools(store: BaseStore | None = None) -> list[Any]:
    """LangMem's own manage_memory and search_memory tools on ("memories", user); without ``store``
    they use the graph's."""
    namespace = ("memories", "{langgraph_user_id}")
    return [create_manage_memory_tool(namespace, store=store),
            create_search_memory_tool(namespace, store=store)]


def _agent(model: FakeMessagesListChatModel, store: BaseStore) -> Any:
    """A ReAct loop: the model speaks or calls a tool; LangMem's tools run against the graph's store."""
    def agent(state: MessagesState) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    graph = StateGraph(MessagesState)
    graph.add_node("agent", agent)
    graph.add_node("tools", ToolNode(_langmem_tools()))
    graph.add_edge(START, "agent")
    graph.add_conditional_edges("agent", tools_condition, {"tools": "tools", END: END})
    graph.add_edge("tools", "agent")
    return graph.compile(store=store)


def _call(name: str, args: dict[str, Any]) -> AIMessage:
    return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": f"call-{name}"}])


def test_a_langgraph_agent_with_langmem_tools_remembers_through_localmem(
    store: LocalmemStore, lm: localmem.Store
) -> None:
    """An agent with LangMem's tools stores a memory in one conversation and finds it in the next,
    with no network and no model (a fake chat model decides the tool calls)."""
    model = FakeMessagesListChatModel(responses=[
        _call("manage_memory", {"content": "Sam is vegetarian"}), AIMessage(content="Noted."),
        _call("search_memory", {"query": "vegetarian"}), AIMessage(content="You are vegetarian."),
    ])
    app = _agent(model, store)
    config: RunnableConfig = {"configurable": {"langgraph_user_id": "sam"}}
    first = app.invoke({"messages": [HumanMessage("I'm vegetarian")]}, config)
    assert first["messages"][-1].content == "Noted."
    second = app.invoke({"messages": [HumanMessage("What do I eat?")]}, config)
    [found] = [m for m in second["messages"] if isinstance(m, ToolMessage)]
    assert [hit["value"] for hit in json.loads(str(found.content))] == [{"content": "Sam is vegetarian"}]
    assert [(r.user_id, r.kind, r.text) for r in lm.read("sam")] == [("sam", "memories", "Sam is vegetarian")]


def test_langmem_tools_create_update_search_delete(store: LocalmemStore, lm: localmem.Store) -> None:
    """LangMem's manage_memory creates, updates (a correction) and deletes (a retraction); search finds."""
    manage, search = _langmem_tools(store)
    config: RunnableConfig = {"configurable": {"langgraph_user_id": "sam"}}
    created = manage.invoke({"content": "Sam runs 5K", "action": "create"}, config)
    key = created.removeprefix("created memory ")
    manage.invoke({"content": "Sam runs 10K", "action": "update", "id": key}, config)
    hits = json.loads(search.invoke({"query": "runs"}, config))
    assert [(h["key"], h["value"]["content"], h["namespace"]) for h in hits] == [
        (key, "Sam runs 10K", ["memories", "sam"])]
    manage.invoke({"action": "delete", "id": key}, config)
    assert json.loads(search.invoke({"query": "runs"}, config)) == []
    [memory_id] = {r.memory_id for r in lm.snapshot("sam").memories}
    assert [c.op for c in lm.history(memory_id)] == ["assert", "correct", "retract"]


def test_a_refused_operation_rolls_the_batch_back(store: LocalmemStore, lm: localmem.Store) -> None:
    """A batch whose second put has a value that is not a mapping is refused whole, naming the value."""
    with pytest.raises(localmem.InvalidInputError, match="not a mapping"):
        # The second value is deliberately not a mapping.
        store.batch([PutOp(("docs",), "good", {"v": 1}), PutOp(("docs",), "bad", "text")])  # type: ignore[arg-type]
    assert lm.info().revisions == 0 and store.get(("docs",), "good") is None


def test_depth_pins_the_user_of_a_prefix(lm: localmem.Store, monkeypatch: pytest.MonkeyPatch) -> None:
    """With depth=2, ("memories", "sam") reads only sam's items; a namespace of another length is refused."""
    store = LocalmemStore(lm, depth=2)
    store.put(("memories", "sam"), "m1", {"content": "Sam runs"})
    store.put(("memories", "ann"), "m1", {"content": "Ann runs"})
    with monkeypatch.context() as m:
        m.setattr(lm, "users", lambda: pytest.fail("a prefix naming sam read every user"))
        assert [i.value["content"] for i in store.search(("memories", "sam"), query="runs")] == ["Sam runs"]
    assert {i.namespace for i in store.search(("memories",))} == {("memories", "sam"), ("memories", "ann")}
    assert store.search(("memories", "sam", "deeper")) == []
    with pytest.raises(localmem.InvalidInputError, match="has 3 labels"):
        store.put(("memories", "sam", "x"), "m2", {"content": "too deep"})
    with pytest.raises(localmem.InvalidInputError, match="depth=0"):
        LocalmemStore(lm, depth=0)
