"""The mem0-compatible Memory: mem0's calls and shapes, localmem's meaning.

The first test is mem0's README quickstart, verbatim except for the import of
``Memory`` (OpenAI is replaced by a fake module, so no network or model runs).
"""

from __future__ import annotations

import sys
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import localmem
from localmem.compat.mem0 import Memory
from localmem.testing import FrozenClock

#: mem0ai 2.2.1's README "Basic Usage", with `from mem0 import Memory` changed and nothing else.
QUICKSTART = Path(__file__).with_name("data") / "mem0_quickstart.py.txt"


class _FakeCompletions:
    """Answers with the memories the system prompt gave it, so the output shows what was retrieved."""

    def __init__(self) -> None:
        self.prompts: list[str] = []

    def create(self, *, model: str, messages: list[dict[str, str]]) -> Any:
        system = messages[0]["content"]
        self.prompts.append(system)
        remembered = [line[2:] for line in system.splitlines() if line.startswith("- ")]
        answer = "I remember: " + "; ".join(remembered) if remembered else "Nice to meet you."
        message = types.SimpleNamespace(content=answer)
        return types.SimpleNamespace(choices=[types.SimpleNamespace(message=message)])


@pytest.fixture
def fake_openai(monkeypatch: pytest.MonkeyPatch) -> _FakeCompletions:
    """An `openai` module whose OpenAI().chat.completions.create answers from the prompt, offline."""
    completions = _FakeCompletions()
    module = types.ModuleType("openai")
    # A module built at run time: mypy cannot know the attribute the stand-in adds.
    module.OpenAI = lambda: types.SimpleNamespace(  # type: ignore[attr-defined]
        chat=types.SimpleNamespace(completions=completions))
    monkeypatch.setitem(sys.modules, "openai", module)
    return completions


def test_mem0_readme_quickstart_runs_with_the_import_changed(
    fake_openai: _FakeCompletions, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    """The quickstart chats three turns: the second turn's prompt and answer carry what the first said."""
    monkeypatch.setenv("LOCALMEM_DB", str(tmp_path / "quickstart.db"))
    said = iter(["I am vegetarian and I live in Lisbon", "Any vegetarian restaurants in Lisbon?", "exit"])
    monkeypatch.setattr("builtins.input", lambda prompt="": next(said))
    namespace: dict[str, Any] = {"__name__": "__main__"}
    exec(compile(QUICKSTART.read_text(encoding="utf-8"), str(QUICKSTART), "exec"), namespace)  # noqa: S102 - the README's own code
    namespace["memory"].close()
    assert capsys.readouterr().out.splitlines() == [
        "Chat with AI (type 'exit' to quit)",
        "AI: Nice to meet you.",
        "AI: I remember: I am vegetarian and I live in Lisbon",
        "Goodbye!",
    ]
    with localmem.open(tmp_path / "quickstart.db") as store:
        # The user's words were stored; the system prompt and the assistant's replies were not.
        assert [r.text for r in store.read("default_user")] == [
            "I am vegetarian and I live in Lisbon", "Any vegetarian restaurants in Lisbon?"]


@pytest.fixture
def clock() -> FrozenClock:
    """The store's clock, moved by hand."""
    return FrozenClock("2025-06-16T09:00:00Z")


@pytest.fixture
def memory(clock: FrozenClock) -> Iterator[Memory]:
    """A Memory on an in-memory store with a frozen clock."""
    with Memory(":memory:", clock=clock) as m:
        yield m


def test_add_returns_mem0_results_and_stores_only_the_users_words(memory: Memory) -> None:
    """add returns {"results": [...]} with id, memory, event ADD and role, for the user's messages only."""
    out = memory.add([{"role": "system", "content": "be nice"},
                      {"role": "user", "content": "I like tennis", "name": "alice"},
                      {"role": "assistant", "content": "Great!"}],
                     user_id="alice", metadata={"topic": "sport"})
    [result] = out["results"]
    assert result["memory"] == "I like tennis" and result["event"] == "ADD"
    assert (result["role"], result["actor_id"]) == ("user", "alice")
    got = memory.get(result["id"])
    assert got is not None
    assert got["metadata"] == {"topic": "sport"} and got["user_id"] == "alice"
    assert got["created_at"] == "2025-06-16T09:00:00+00:00" and got["updated_at"] is None


def test_search_returns_scored_mem0_dicts(memory: Memory) -> None:
    """search returns the scope's best hits as dicts with id, memory, hash, metadata, score and times."""
    memory.add("I like tennis on weekends", user_id="alice")
    memory.add("I like chess", user_id="alice")
    memory.add("I like tennis too", user_id="bob")
    out = memory.search("tennis", filters={"user_id": "alice"}, top_k=5, explain=True)
    assert [r["memory"] for r in out["results"]] == ["I like tennis on weekends"]
    hit = out["results"][0]
    assert {"id", "memory", "hash", "metadata", "score", "created_at", "updated_at", "user_id"} <= set(hit)
    assert hit["score"] > 0.1 and set(hit["score_details"]) == {"text", "time", "usage", "bm25"}


def test_timestamp_is_when_it_was_said(memory: Memory) -> None:
    """A time phrase is read against timestamp (when it was said), and the past event stays listed."""
    [r] = memory.add("I ran a 10K yesterday", user_id="alice", timestamp="2025-03-02T10:00:00Z")["results"]
    assert r["memory"] == "I ran a 10K on 2025-03-01"
    got = memory.get(r["id"])
    assert got is not None and got["localmem"]["valid"] == "2025-03-01"
    # A past event is still something the app knows: get_all lists it (a replaced fact it would not).
    assert [m["id"] for m in memory.get_all(filters={"user_id": "alice"})["results"]] == [r["id"]]


def test_update_is_a_correction_kept_in_history(memory: Memory, clock: FrozenClock) -> None:
    """update corrects the text: get shows the new one, history ADD then UPDATE, the past the old one."""
    [r] = memory.add("I live in Lisbon", user_id="alice")["results"]
    clock.set("2025-06-16T10:00:00Z")
    assert memory.update(r["id"], text="I live in Porto") == {"message": "Memory updated successfully!"}
    got = memory.get(r["id"])
    assert got is not None and got["memory"] == "I live in Porto"
    assert got["created_at"] == "2025-06-16T09:00:00+00:00"
    assert got["updated_at"] == "2025-06-16T10:00:00+00:00"
    events = memory.history(r["id"])
    assert [(e["event"], e["old_memory"], e["new_memory"]) for e in events] == [
        ("ADD", None, "I live in Lisbon"), ("UPDATE", "I live in Lisbon", "I live in Porto")]
    assert events[1]["localmem_op"] == "correct" and events[1]["memory_id"] == r["id"]
    past = memory.get_all(filters={"user_id": "alice"}, as_of="2025-06-16T09:30:00Z")
    assert [m["memory"] for m in past["results"]] == ["I live in Lisbon"]


def test_update_with_the_same_text_changes_nothing(memory: Memory) -> None:
    """update with the text it already has writes no revision, as mem0 raises nothing."""
    [r] = memory.add("I live in Lisbon", user_id="alice")["results"]
    assert memory.update(r["id"], text="I live in Lisbon")["message"].startswith("Memory unchanged")
    assert len(memory.history(r["id"])) == 1


def test_update_merges_metadata_and_moves_the_expiry(memory: Memory) -> None:
    """update's metadata is merged into the old (the scope ids stay); expiration_date sets the expiry."""
    [r] = memory.add("Training for the Berlin half", user_id="alice", agent_id="coach",
                     metadata={"topic": "run"})["results"]
    memory.update(r["id"], metadata={"priority": 1, "agent_id": "someone-else"},
                  expiration_date="2025-11-15")
    got = memory.get(r["id"])
    assert got is not None
    assert got["metadata"] == {"topic": "run", "priority": 1} and got["agent_id"] == "coach"
    assert got["expiration_date"] == "2025-11-16T00:00:00+00:00"
    assert [e["localmem_op"] for e in memory.history(r["id"])] == ["assert", "correct", "expire"]


def test_delete_is_a_retraction(memory: Memory, clock: FrozenClock) -> None:
    """delete hides a memory from get, search and get_all; history ends with DELETE; the past still has it."""
    [r] = memory.add("My ex is called Sam", user_id="alice")["results"]
    clock.set("2025-06-16T10:00:00Z")
    assert memory.delete(r["id"]) == {"message": "Memory deleted successfully!"}
    assert memory.get(r["id"]) is None
    assert memory.search("Sam", filters={"user_id": "alice"})["results"] == []
    assert memory.get_all(filters={"user_id": "alice"})["results"] == []
    last = memory.history(r["id"])[-1]
    assert (last["event"], last["is_deleted"], last["old_memory"]) == ("DELETE", True, "My ex is called Sam")
    assert memory.get_all(filters={"user_id": "alice"}, as_of="2025-06-16T09:30:00Z")["results"] != []


def test_delete_all_retracts_one_scope_only(memory: Memory) -> None:
    """delete_all(user_id=) retracts that user's memories and no one else's; agent_id narrows it."""
    memory.add("alice one", user_id="alice")
    memory.add("alice coached", user_id="alice", agent_id="coach")
    memory.add("bob one", user_id="bob")
    memory.delete_all(user_id="alice", agent_id="coach")
    assert [m["memory"] for m in memory.get_all(user_id="alice")["results"]] == ["alice one"]
    memory.delete_all(user_id="alice")
    assert memory.get_all(filters={"user_id": "alice"})["results"] == []
    assert [m["memory"] for m in memory.get_all(filters={"user_id": "bob"})["results"]] == ["bob one"]


def test_agent_and_run_scopes(memory: Memory) -> None:
    """A memory with only an agent_id is found through that agent; run_id narrows a user's memories."""
    memory.add("Prefers short answers", agent_id="helper")
    memory.add("Asked about knees", user_id="alice", run_id="r1")
    memory.add("Asked about shoes", user_id="alice", run_id="r2")
    [agent] = memory.get_all(filters={"agent_id": "helper"})["results"]
    assert agent["agent_id"] == "helper" and "user_id" not in agent
    run = memory.get_all(filters={"user_id": "alice", "run_id": "r1"})["results"]
    assert [m["memory"] for m in run] == ["Asked about knees"] and run[0]["run_id"] == "r1"


def test_metadata_filters_map_onto_attributes(memory: Memory) -> None:
    """mem0 filters on metadata keys (values, operators, AND/OR, NOT lists) select by attributes."""
    memory.add("tennis", user_id="u", metadata={"topic": "sport", "level": 3})
    memory.add("chess", user_id="u", metadata={"topic": "games", "level": 5})
    memory.add("poetry", user_id="u", metadata={"topic": "art", "level": 1})

    def names(filters: dict[str, Any]) -> list[str]:
        return sorted(m["memory"] for m in memory.get_all(filters={"user_id": "u", **filters})["results"])

    assert names({"topic": "sport"}) == ["tennis"]
    assert names({"level": {"gte": 3}}) == ["chess", "tennis"]
    assert names({"topic": {"in": ["art", "games"]}, "level": {"lt": 5}}) == ["poetry"]
    assert names({"OR": [{"topic": "art"}, {"level": 5}]}) == ["chess", "poetry"]
    assert names({"NOT": [{"topic": "art"}, {"topic": "games"}]}) == ["tennis"]
    assert names({"kind": "message", "valid_time": {"gte": "2025-06-16"}}) == ["chess", "poetry", "tennis"]


@pytest.mark.parametrize(("call", "message"), [
    (lambda m: m.add("hi", user_id="u", infer=True), "infer=True"),
    (lambda m: m.add("hi", user_id="u", prompt="extract facts"), "prompt="),
    (lambda m: m.add("hi"), "no scope given"),
    (lambda m: m.add([{"content": "no role"}], user_id="u"), "messages[0]"),
    (lambda m: m.search("hi", filters={"topic": "x"}), "no scope given"),
    (lambda m: m.search("hi", filters={"user_id": "u", "topic": {"icontains": "x"}}), "icontains"),
    (lambda m: m.search("hi", filters={"user_id": "u", "topic": "*"}), "wildcard"),
    (lambda m: m.search("hi", filters={"user_id": "u"}, rerank=True), "rerank"),
    (lambda m: m.get_all(filters={"user_id": "u"}, top_k=0), "top_k=0"),
    (lambda m: m.update("01JXVZR6K0QRYWWQFBF3YWXGGP", text="x"), "no memory with id"),
    (lambda m: Memory.from_config({"llm": {"provider": "openai"}}), "'llm'"),
])
def test_refusals_name_the_bad_value_and_change_nothing(memory: Memory, call: Any, message: str) -> None:
    """What localmem does not do, or cannot read, raises its own error naming the value; nothing is kept."""
    with pytest.raises(localmem.LocalmemError, match=message.replace("(", r"\(").replace("[", r"\[")):
        call(memory)
    assert memory.store.info().revisions == 0


def test_threshold_drops_weak_hits(memory: Memory) -> None:
    """A threshold above a hit's score drops it; threshold=None keeps every hit."""
    memory.add("tennis tennis tennis tennis", user_id="u")
    memory.add("tennis and a great many other words about other sports and games", user_id="u")
    every = memory.search("tennis", filters={"user_id": "u"}, threshold=None)["results"]
    assert len(every) == 2
    cut = (every[0]["score"] + every[1]["score"]) / 2
    kept = memory.search("tennis", filters={"user_id": "u"}, threshold=cut)["results"]
    assert [r["id"] for r in kept] == [every[0]["id"]]


def test_expiration_date_hides_until_show_expired(memory: Memory, clock: FrozenClock) -> None:
    """A memory past its expiration_date leaves get_all, and comes back with show_expired=True."""
    memory.add("Berlin half on Nov 15", user_id="u", expiration_date="2025-11-15")
    clock.set("2025-12-01T00:00:00Z")
    assert memory.get_all(filters={"user_id": "u"})["results"] == []
    assert len(memory.get_all(filters={"user_id": "u"}, show_expired=True)["results"]) == 1


def test_reset_retracts_everything_and_destroys_nothing(memory: Memory) -> None:
    """reset hides every user's memories; the revisions stay, so history still tells what was said."""
    [r] = memory.add("alice", user_id="alice")["results"]
    memory.add("bob", user_id="bob")
    memory.reset()
    assert memory.get_all(user_id="alice")["results"] == [] and memory.get_all(user_id="bob")["results"] == []
    assert [e["event"] for e in memory.history(r["id"])] == ["ADD", "DELETE"]


def test_a_given_store_stays_open(clock: FrozenClock) -> None:
    """Memory(store=...) uses the caller's store and leaves it open on close."""
    store = localmem.open(":memory:", clock=clock)
    with Memory(store=store) as m:
        m.add("hello", user_id="u")
    assert [r.text for r in store.read("u")] == ["hello"]
    store.close()


def test_a_bad_message_refuses_the_whole_add(memory: Memory) -> None:
    """A conversation with one unreadable sent_at is refused whole: the good message is not kept either."""
    with pytest.raises(localmem.NaiveDatetimeError, match="2025-06-16T09:00:00"):
        memory.add([{"role": "user", "content": "fine", "sent_at": "2025-06-16T09:00:00Z"},
                    {"role": "user", "content": "naive", "sent_at": "2025-06-16T09:00:00"}], user_id="u")
    assert memory.store.info().revisions == 0
