"""The MCP server, driven end to end by the SDK's own client over a real stdio subprocess.

Each server is ``python -m localmem.cli mcp --db FILE`` on a file seeded on a frozen
clock (the fee story: 4 euros at 09:05, corrected to 7 at 10:01), so reads as of a
past time have a past to see. One server per mode serves the whole module; each
test writes under its own user so the tests stay independent. The module stays on one
xdist worker (its group), so the servers start once.
"""

from __future__ import annotations

import socket
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import anyio
import pytest
from anyio.from_thread import BlockingPortal, start_blocking_portal
from mcp import Client, StdioServerParameters
from mcp.types import CallToolResult, ListToolsResult

import localmem
from localmem.cli import main
from localmem.mcp_server import READ_TOOLS, WRITE_TOOLS, build_server
from localmem.testing import FrozenClock

# The servers are subprocesses (slow); one xdist worker runs the module, so they start once.
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("mcp")]


@pytest.fixture(scope="module")
def seeded(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """A database file holding the fee story for user "desk" and Sam's home city."""
    path = tmp_path_factory.mktemp("mcp") / "mem.db"
    clock = FrozenClock("2025-06-16T09:05:00Z")
    with localmem.open(path, clock=clock) as store:
        fee = store.add("The booking fee is 4 euros", user_id="desk", value=4, kind="price")
        clock.set("2025-06-16T10:01:00Z")
        store.correct(fee.memory_id, text="The booking fee is 7 euros", value=7, reason="the invoice said 7")
        store.add("Sam lives in Lisbon", user_id="sam", key="home_city", valid_from="2024-01-01",
                  tz="Europe/Lisbon")
    return {"path": str(path), "fee": fee.memory_id}


@pytest.fixture(scope="module")
def http_port(seeded: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    """The port of ``localmem mcp --read-only --http PORT`` on the seeded file, for the module's life."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    log = (tmp_path_factory.mktemp("http") / "server.log").open("w")
    proc = subprocess.Popen([sys.executable, "-m", "localmem.cli", "mcp", "--db", seeded["path"],
                             "--read-only", "--http", str(port)], stdout=log, stderr=subprocess.STDOUT)
    try:
        yield port
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        log.close()


class _Session:
    """A client connected over stdio to one ``localmem mcp`` server, called from synchronous tests."""

    def __init__(self, portal: BlockingPortal, client: Client) -> None:
        self._portal, self._client = portal, client

    def __call__(self, name: str, arguments: dict[str, Any] | None = None) -> CallToolResult:
        result: CallToolResult = self._portal.call(self._client.call_tool, name, arguments or {})
        return result

    def list_tools(self) -> ListToolsResult:
        listed: ListToolsResult = self._portal.call(self._client.list_tools)
        return listed


Call = _Session


@pytest.fixture(scope="module")
def sessions(seeded: dict[str, str], http_port: int) -> Iterator[dict[str, _Session]]:
    """A read-write and a --read-only server over stdio, started side by side (each spends
    seconds importing the SDK); the HTTP server is started before them for the same reason."""
    modes = {"read-write": (), "read-only": ("--read-only",)}
    with start_blocking_portal() as portal, ExitStack() as stack:
        managers = {
            mode: portal.wrap_async_context_manager(Client(StdioServerParameters(
                command=sys.executable, args=["-m", "localmem.cli", "mcp", "--db", seeded["path"], *flags]),
                read_timeout_seconds=60))
            for mode, flags in modes.items()}
        with ThreadPoolExecutor(len(managers)) as pool:
            entering = {mode: pool.submit(cm.__enter__) for mode, cm in managers.items()}
            clients = {}
            for mode, future in entering.items():
                clients[mode] = future.result()
                stack.push(managers[mode].__exit__)
        yield {mode: _Session(portal, client) for mode, client in clients.items()}


@pytest.fixture(scope="module")
def call(sessions: dict[str, _Session]) -> _Session:
    """A read-write server's tools, called over stdio."""
    return sessions["read-write"]


@pytest.fixture(scope="module")
def read_only_call(sessions: dict[str, _Session]) -> _Session:
    """A --read-only server's tools, called over stdio."""
    return sessions["read-only"]


def ok(result: CallToolResult) -> dict[str, Any]:
    """The structured result of a call that must have succeeded."""
    assert not result.is_error, result.content
    content = result.structured_content
    assert isinstance(content, dict)
    return content


def error_text(result: CallToolResult) -> str:
    """The message of a call that must have failed."""
    assert result.is_error
    return " ".join(getattr(block, "text", "") for block in result.content)


def test_lists_every_tool_with_documented_arguments(call: Call) -> None:
    """The server lists the six read and five write tools, each described, every argument described."""
    tools = {t.name: t for t in call.list_tools().tools}
    assert set(tools) == set(READ_TOOLS) | set(WRITE_TOOLS)
    for tool in tools.values():
        assert tool.description
        props = tool.input_schema["properties"]
        assert props and all(p.get("description") for p in props.values()), tool.name
    assert tools["search"].annotations is not None and tools["search"].annotations.read_only_hint
    assert tools["add"].annotations is not None and tools["add"].annotations.destructive_hint is False
    assert set(tools["add"].input_schema["properties"]) >= {"text", "messages", "sent_at", "zone"}


def test_search_now_and_as_of_a_past_time(call: Call, seeded: dict[str, str]) -> None:
    """search finds the corrected fee now, and the fee as first recorded when asked as of 09:30."""
    now = ok(call("search", {"user_id": "desk", "query": "booking fee"}))
    assert [h["memory"]["value"] for h in now["hits"]] == [7]
    then = ok(call("search", {"user_id": "desk", "query": "booking fee", "as_of": "2025-06-16T09:30:00Z"}))
    assert [h["memory"]["text"] for h in then["hits"]] == ["The booking fee is 4 euros"]
    assert then["hits"][0]["memory"]["memory_id"] == seeded["fee"]
    assert set(then["hits"][0]) == {"memory", "score", "text", "time", "usage"}


def test_search_known_at_and_filters(call: Call) -> None:
    """known_at splits the knowledge axis, and a filter tree narrows the hits."""
    known = ok(call("search", {"user_id": "desk", "query": "fee", "known_at": "2025-06-16T10:01:00Z",
                               "valid_at": "2025-06-16T09:30:00Z"}))
    assert [h["memory"]["value"] for h in known["hits"]] == [7]
    none = ok(call("search", {"user_id": "desk", "query": "fee", "filters": {"kind": "event"}}))
    assert none["hits"] == []
    price = ok(call("search", {"user_id": "desk", "query": "fee", "filters": {"kind": "price"}, "limit": 1}))
    assert len(price["hits"]) == 1


def test_read_and_get_as_of_a_past_time(call: Call, seeded: dict[str, str]) -> None:
    """read and get answer as of 09:30 with the first account, and now with the correction."""
    past = ok(call("read", {"user_id": "desk", "as_of": "2025-06-16T09:30:00Z"}))
    assert [m["value"] for m in past["memories"]] == [4]
    got = ok(call("get", {"memory_id": seeded["fee"], "as_of": "2025-06-16T09:30:00Z"}))
    assert got["memory"]["text"] == "The booking fee is 4 euros"
    assert ok(call("get", {"memory_id": seeded["fee"]}))["memory"]["value"] == 7
    before = ok(call("get", {"memory_id": seeded["fee"], "as_of": "2025-06-16T09:00:00Z"}))
    assert before["memory"] is None
    sam = ok(call("read", {"user_id": "sam", "key": "home_city"}))
    assert [m["text"] for m in sam["memories"]] == ["Sam lives in Lisbon"]


def test_history_snapshot_and_knew(call: Call, seeded: dict[str, str]) -> None:
    """history lists the assert and the correction; snapshot and knew tell what was known at 09:30."""
    changes = ok(call("history", {"memory_id": seeded["fee"]}))["changes"]
    assert [(c["op"], c["new_text"]) for c in changes] == [
        ("assert", "The booking fee is 4 euros"), ("correct", "The booking fee is 7 euros")]
    assert changes[1]["reason"] == "the invoice said 7"
    snap = ok(call("snapshot", {"user_id": "desk", "known_at": "2025-06-16T09:30:00Z",
                                "include_revisions": True}))
    assert [m["value"] for m in snap["memories"]] == [4] and snap["revision_count"] == 1
    knew = ok(call("knew", {"user_id": "desk", "at": "2025-06-16T09:30:00Z",
                            "until": "2025-06-16T12:00:00Z"}))
    assert [m["value"] for m in knew["knew_then"]] == [4]
    assert [(c["change"], c["after"]["value"]) for c in knew["changes"]] == [("corrected", 7)]


def test_add_text_with_sent_at_and_zone(call: Call) -> None:
    """add reads "yesterday" against sent_at in the given zone and keeps what was said."""
    added = ok(call("add", {"user_id": "ana", "text": "I ran a 10K yesterday",
                            "sent_at": "2025-06-16T05:00:00+08:00", "zone": "Asia/Singapore"}))
    [memory] = added["memories"]
    assert memory["text"] == "I ran a 10K on 2025-06-15"
    assert memory["precision"] == "day" and memory["tz"] == "Asia/Singapore"
    assert memory["source"] == {"message": "I ran a 10K yesterday"}


def test_add_messages_keeps_the_users_and_reads_each_at_its_send_time(call: Call) -> None:
    """add with messages stores one memory per user message, each resolved against its own sent_at."""
    added = ok(call("add", {"user_id": "bo", "zone": "Europe/Berlin", "messages": [
        {"role": "user", "content": "My knee hurt yesterday", "sent_at": "2025-06-10T09:00:00+02:00"},
        {"role": "assistant", "content": "Sorry to hear that", "sent_at": "2025-06-10T09:00:05+02:00"},
        {"role": "user", "content": "Vegetarian since last month", "sent_at": "2025-07-02T09:00:00+02:00"},
    ]}))
    texts = [m["text"] for m in added["memories"]]
    assert texts == ["My knee hurt on 2025-06-09", "Vegetarian since 2025-06"]
    assert all(m["kind"] == "message" for m in added["memories"])


def test_add_messages_default_to_the_calls_sent_at(call: Call) -> None:
    """A message without its own sent_at is read against the call's sent_at."""
    added = ok(call("add", {"user_id": "bo2", "sent_at": "2025-06-10T09:00:00Z",
                            "messages": [{"role": "user", "content": "Slept badly yesterday"}]}))
    assert [m["text"] for m in added["memories"]] == ["Slept badly on 2025-06-09"]
    assert added["memories"][0]["observed_at"] == "2025-06-10T09:00:00+00:00"


def test_correct_supersede_expire_retract(call: Call) -> None:
    """The four changing writes each append a revision the reads then show."""
    [first] = ok(call("add", {"user_id": "cy", "text": "Cy lives in Lisbon", "key": "home_city",
                              "valid_from": "2024-01-01"}))["memories"]
    fixed = ok(call("correct", {"memory_id": first["memory_id"], "text": "Cy lives in Porto"}))["memory"]
    assert (fixed["op"], fixed["text"], fixed["version"]) == ("correct", "Cy lives in Porto", 2)
    moved = ok(call("supersede", {"memory_id": first["memory_id"], "text": "Cy lives in Berlin",
                                  "valid_from": "2025-09-01"}))["memory"]
    assert moved["supersedes"] == first["memory_id"]
    exp = ok(call("expire", {"memory_id": moved["memory_id"], "on": "2030-11-15"}))["memory"]
    assert exp["op"] == "expire" and exp["expires_at"] == "2030-11-16T00:00:00+00:00"  # through Nov 15, UTC
    gone = ok(call("retract", {"memory_id": moved["memory_id"], "reason": "asked to forget"}))["memory"]
    assert gone["retracted"] is True
    assert ok(call("read", {"user_id": "cy", "key": "home_city"}))["memories"] == []
    ops = [c["op"] for c in ok(call("history", {"memory_id": moved["memory_id"]}))["changes"]]
    assert ops == ["supersede", "expire", "retract"]


@pytest.mark.parametrize(("tool", "arguments", "message"), [
    ("search", {"user_id": "desk", "query": "fee", "limit": 0}, "limit=0 is not acceptable"),
    ("read", {"user_id": "desk", "filters": {"colour": "red"}}, "colour"),
    ("get", {"memory_id": "ZZZZ"}, "no memory with id 'ZZZZ'"),
    ("add", {"user_id": "dee", "text": "hi", "sent_at": "2025-06-16T09:00:00"},
     "sent_at='2025-06-16T09:00:00' has no time zone"),
    ("add", {"user_id": "dee", "text": "hi", "zone": "Mars/Olympus"}, "Mars/Olympus"),
    ("add", {"user_id": "dee"}, "either text or messages"),
    ("add", {"user_id": "dee", "messages": [{"role": "user", "content": "hi"}]}, "sent_at"),
    ("knew", {"user_id": "desk", "at": "2025-06-16T12:00:00Z", "until": "2025-06-16T09:00:00Z"},
     "is not after"),
])
def test_a_bad_argument_is_a_tool_error_with_the_librarys_message(
    call: Call, tool: str, arguments: dict[str, Any], message: str
) -> None:
    """A refused call comes back as an error result carrying localmem's message, never a traceback."""
    text = error_text(call(tool, arguments))
    assert message in text
    assert "Traceback" not in text


def test_a_refused_write_changes_nothing(call: Call, seeded: dict[str, str]) -> None:
    """correct with nothing to change is refused with the library's message; the history is unchanged."""
    text = error_text(call("correct", {"memory_id": seeded["fee"], "text": "The booking fee is 7 euros"}))
    assert "changes nothing" in text
    assert len(ok(call("history", {"memory_id": seeded["fee"]}))["changes"]) == 2


def test_a_wrongly_typed_argument_is_a_tool_error(call: Call) -> None:
    """An argument of the wrong JSON type is refused by the schema check and names the argument."""
    text = error_text(call("search", {"user_id": "desk", "query": "fee", "limit": "many"}))
    assert "limit" in text and "Traceback" not in text


def test_read_only_lists_no_write_tool_and_refuses_writes(read_only_call: Call) -> None:
    """--read-only lists only the read tools, refuses a write tool by name, and still reads the past."""
    names = {t.name for t in read_only_call.list_tools().tools}
    assert names == set(READ_TOOLS)
    assert "add" in error_text(read_only_call("add", {"user_id": "eve", "text": "hello"}))
    then = ok(read_only_call("read", {"user_id": "desk", "as_of": "2025-06-16T09:30:00Z"}))
    assert [m["value"] for m in then["memories"]] == [4]


def test_read_only_search_logs_no_usage(tmp_path: Path) -> None:
    """A read-only server's search appends nothing to the usage log (a read-write one does)."""
    clock = FrozenClock("2025-06-16T09:05:00Z")
    store = localmem.open(tmp_path / "u.db", clock=clock)
    store.add("The booking fee is 4 euros", user_id="desk")

    async def search(read_only: bool) -> None:
        async with Client(build_server(store, read_only=read_only)) as client:
            result = await client.call_tool("search", {"user_id": "desk", "query": "fee"})
            assert not result.is_error

    def usage() -> int:
        row = store.connection.execute("SELECT count(*) FROM usage").fetchone()
        assert row is not None
        return int(row[0])

    anyio.run(search, True)
    assert usage() == 0
    anyio.run(search, False)
    assert usage() == 1
    store.close()


def test_http_serves_the_same_tools_on_localhost(http_port: int) -> None:
    """--http PORT serves streamable HTTP on 127.0.0.1:PORT/mcp, and an SDK client reads the past over it."""
    async def read_past() -> list[Any]:
        with anyio.fail_after(60):
            while True:  # until uvicorn listens
                try:
                    probe = await anyio.connect_tcp("127.0.0.1", http_port)
                    await probe.aclose()
                    break
                except OSError:
                    await anyio.sleep(0.1)
            async with Client(f"http://127.0.0.1:{http_port}/mcp") as client:
                result = await client.call_tool("read", {"user_id": "desk", "as_of": "2025-06-16T09:30:00Z"})
                assert not result.is_error and result.structured_content is not None
                return [m["value"] for m in result.structured_content["memories"]]

    assert anyio.run(read_past) == [4]


def test_cli_refuses_a_bad_port(seeded: dict[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    """localmem mcp --http 70000 exits 1 with one line naming the port, and serves nothing."""
    assert main(["mcp", "--db", seeded["path"], "--http", "70000"]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert err == "localmem: error: --http 70000 is not a port: expected 1 to 65535\n"


def test_cli_without_the_sdk_says_which_extra_to_install(
    seeded: dict[str, str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without the mcp package, localmem mcp exits 1 naming the extra to install."""
    for name in [n for n in sys.modules if n == "mcp" or n.startswith("mcp.")]:
        monkeypatch.setitem(sys.modules, name, None)  # what an install without the extra looks like
    monkeypatch.setitem(sys.modules, "mcp", None)
    monkeypatch.delitem(sys.modules, "localmem.mcp_server")
    assert main(["mcp", "--db", seeded["path"]]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert err == ("localmem: error: localmem mcp needs the MCP SDK (mcp is missing): "
                   "pip install 'localmem[mcp]'\n")
