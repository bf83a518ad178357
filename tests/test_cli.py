"""The command line: the scenarios again, exit codes, stdout for data and stderr for errors."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import apsw
import pytest

import localmem
from localmem.cli import main
from localmem.core import db as _db


class CLI:
    """Runs ``localmem --db PATH ...`` in-process and captures its three outputs."""

    def __init__(self, db: Path, capsys: pytest.CaptureFixture[str]) -> None:
        self.db = db
        self.capsys = capsys

    def __call__(self, *argv: str, now: str | None = None) -> tuple[int, str, str]:
        args = ["--db", str(self.db)] + (["--now", now] if now else []) + list(argv)
        code = main(args)
        out, err = self.capsys.readouterr()
        return code, out, err

    def json(self, *argv: str, now: str | None = None) -> Any:
        code, out, err = self(*argv, "--json", now=now)
        assert (code, err) == (0, ""), err
        return json.loads(out)


@pytest.fixture
def cli(db_path: Path, capsys: pytest.CaptureFixture[str]) -> CLI:
    """The CLI on a fresh database file."""
    return CLI(db_path, capsys)


def at(hhmm: str) -> str:
    return f"2026-03-02T{hhmm}:00Z"


@pytest.fixture
def fee_id(cli: CLI) -> str:
    """Scenario A written through the CLI; returns the fee's memory id."""
    cli.json("add", "opening balance", "--user", "acct", "--key", "opening", "--value", "500",
             "--valid-from", at("08:00"), now=at("08:00"))
    cli.json("add", "purchase", "--user", "acct", "--key", "purchase", "--value", "100",
             "--valid-from", at("09:00"), now=at("09:00"))
    fee = cli.json("add", "fee", "--user", "acct", "--key", "fee", "--value", "4",
                     "--valid-from", at("09:00"), now=at("09:01"))
    cli.json("correct", fee["memory_id"], "--value", "7", "--reason", "correction", now=at("10:00"))
    cli.json("correct", fee["memory_id"], "--value", "6", now=at("11:00"))
    return str(fee["memory_id"])


def cash(cli: CLI, known: str) -> int:
    rows = cli.json("read", "--user", "acct", "--known-at", known, "--valid-at", at("09:05"))
    v = {r["key"]: r["value"] for r in rows}
    return int(v["opening"] - v["purchase"] - v["fee"])


def test_fee_story_through_the_cli(cli: CLI, fee_id: str) -> None:
    """Scenario A's table through the CLI: 396, 393, 393 at exactly 10:00, 393, 394."""
    assert cash(cli, at("09:05")) == 396
    assert cash(cli, at("10:01")) == 393
    assert cash(cli, at("10:00")) == 393
    assert cash(cli, at("10:30")) == 393
    assert cash(cli, at("11:01")) == 394


def test_fee_history_through_the_cli(cli: CLI, fee_id: str) -> None:
    """`history` shows 4 → 7 → 6 with recorded times, as JSON and as text."""
    changes = cli.json("history", fee_id)
    assert [c["new_value"] for c in changes] == [4, 7, 6]
    assert [c["recorded_at"][:16] for c in changes] == [
        "2026-03-02T09:01", "2026-03-02T10:00", "2026-03-02T11:00"]
    assert changes[1]["link"] == changes[0]["rev_id"]
    code, out, err = cli("history", fee_id[:22])
    assert (code, err) == (0, "")
    assert "value: 4 → 7" in out and "value: 7 → 6" in out and "reason: correction" in out


def test_decision_snapshot_through_the_cli(cli: CLI, fee_id: str) -> None:
    """`snapshot --at 09:05` holds only the fee-4 revision of the fee."""
    snap = cli.json("snapshot", "--user", "acct", "--at", at("09:05"))
    fees = [r["value"] for r in snap["revisions"] if r["key"] == "fee"]
    assert fees == [4]


def test_get_as_of_through_the_cli(cli: CLI, fee_id: str) -> None:
    """`get --known-at` gives each revision in turn, and a clear line before it existed."""
    assert cli.json("get", fee_id, "--known-at", at("09:30"))["value"] == 4
    assert cli.json("get", fee_id, "--as-of", at("10:00"))["value"] == 7
    code, out, err = cli("get", fee_id, "--known-at", at("08:30"))
    assert (code, err) == (0, "") and "not yet known" in out


@pytest.fixture
def sam(cli: CLI) -> dict[str, str]:
    """Scenario B3 through the CLI."""
    ids = {}
    now = "2025-06-16T12:00:00Z"
    ids["lisbon"] = cli.json("add", "Sam lives in Lisbon", "--user", "sam", "--key", "home_city",
                             "--valid-from", "2023-05", "--tz", "Europe/Berlin", now=now)
    cli.json("add", "Sam is vegetarian", "--user", "sam", "--key", "diet",
             "--valid-from", "2024-01", now=now)
    now = "2025-09-03T18:00:00Z"
    ids["berlin"] = cli.json("add", "Sam lives in Berlin", "--user", "sam", "--key", "home_city",
                             "--valid-from", "2025-09-01", now=now)
    cli.json("add", "Sam eats fish", "--user", "sam", "--key", "diet",
             "--valid-from", "2025-03-01", now=now)
    return {k: v["memory_id"] for k, v in ids.items()}


def test_changing_facts_through_the_cli(cli: CLI, sam: dict[str, str]) -> None:
    """B3: current read has Berlin and fish; history links Lisbon → Berlin; 2024 says Lisbon."""
    current = {r["text"] for r in cli.json("read", "--user", "sam", "--as-of", "2025-10-01")}
    assert current == {"Sam lives in Berlin", "Sam eats fish"}
    history = {r["text"]: r for r in cli.json("read", "--user", "sam", "--history")}
    assert history["Sam lives in Lisbon"]["superseded_by"] == sam["berlin"]
    assert history["Sam lives in Lisbon"]["valid"] == "2023-05 until 2025-09-01"
    past = {r["text"] for r in cli.json("read", "--user", "sam", "--valid-at", "2024-06-01")}
    assert past == {"Sam lives in Lisbon", "Sam is vegetarian"}


def test_supersede_and_retract_through_the_cli(cli: CLI, sam: dict[str, str]) -> None:
    """`supersede` chains a new value; `retract` hides it from current reads."""
    new = cli.json("supersede", sam["berlin"], "Sam lives in Hamburg",
                     "--valid-from", "2026-01-15", now="2026-01-20T00:00:00Z")
    assert new["supersedes"] == sam["berlin"]
    cli.json("retract", new["memory_id"], "--reason", "forget that", now="2026-01-21T00:00:00Z")
    rows = cli.json("read", "--user", "sam", "--key", "home_city", "--as-of", "2026-02-01")
    assert rows == []
    rows = cli.json("read", "--user", "sam", "--key", "home_city", "--as-of", "2026-02-01",
                    "--include-retracted")
    assert [r["retracted"] for r in rows] == [True]


def test_expiry_through_the_cli(cli: CLI) -> None:
    """B4: the Berlin-half goal is visible 23:30 local on Nov 15, hidden 00:30, listed on request."""
    goal = cli.json("add", "Training for the Berlin half on Nov 15", "--user", "sam",
                      "--tz", "Europe/Berlin", "--valid-from", "2025-09-01",
                      "--expires", "2025-11-15", now="2025-09-01T10:00:00Z")
    assert cli.json("read", "--user", "sam", "--as-of", "2025-11-15T23:30:00+01:00")
    assert cli.json("read", "--user", "sam", "--as-of", "2025-11-16T00:30:00+01:00") == []
    listed = cli.json("read", "--user", "sam", "--as-of", "2025-11-16T00:30:00+01:00",
                      "--include-expired")
    assert [r["expired"] for r in listed] == [True]
    moved = cli.json("expire", goal["memory_id"], "2025-11-30", now="2025-11-20T10:00:00Z")
    assert moved["op"] == "expire"


def test_you_forgot_through_the_cli(cli: CLI) -> None:
    """B8: the injury is in the hill-session snapshot only if recorded before it."""
    cli.json("add", "likes hills", "--user", "sam", now="2025-07-01T08:00:00Z")
    inj = cli.json("add", "hurt the knee", "--user", "sam", "--valid-from", "2025-07-01",
                     now="2025-07-02T18:00:00Z")
    cli.json("correct", inj["memory_id"], "--text", "hurt the left knee", now="2025-07-03T09:00:00Z")
    before = cli.json("snapshot", "--user", "sam", "--at", "2025-07-01T17:00:00Z")
    after = cli.json("snapshot", "--user", "sam", "--at", "2025-07-02T19:00:00Z")
    assert inj["memory_id"] not in {m["memory_id"] for m in before["memories"]}
    assert inj["memory_id"] in {m["memory_id"] for m in after["memories"]}
    hist = cli.json("history", inj["memory_id"])
    assert [(h["old_text"], h["new_text"]) for h in hist] == [
        (None, "hurt the knee"), ("hurt the knee", "hurt the left knee")]


def test_replay_without_leakage_through_the_cli(cli: CLI) -> None:
    """C1, C2: Tuesday's preferences are invisible to Monday; valid-since-January shows for February."""
    cli.json("add", "outage reported", "--user", "cust", now="2026-03-09T09:00:00Z")
    cli.json("add", "send updates by text, not email", "--user", "cust",
             now="2026-03-10T10:00:00Z")
    cli.json("add", "prefers text since January", "--user", "cust", "--valid-from", "2026-01",
             "--observed-at", "2026-03-10T10:00:00Z", now="2026-03-10T10:00:00Z")
    monday = cli.json("read", "--user", "cust", "--as-of", "2026-03-09T15:00:00Z")
    assert [r["text"] for r in monday] == ["outage reported"]
    feb = cli.json("read", "--user", "cust", "--valid-at", "2026-02-15")
    assert [r["text"] for r in feb] == ["prefers text since January"]


def test_erase_needs_confirmation_and_then_erases(cli: CLI) -> None:
    """`erase` refuses without --yes (changing nothing), then leaves a tombstone."""
    m = cli.json("add", "my ex is Quorblex", "--user", "sam")
    code, out, err = cli("erase", m["memory_id"])
    assert (code, out) == (1, "") and "--yes" in err
    assert cli.json("read", "--user", "sam")
    code, out, err = cli("erase", m["memory_id"], "--yes", "--reason", "asked")
    assert code == 0 and err == "" and "tombstone" in out
    assert cli.json("read", "--user", "sam") == []
    hist = cli.json("history", m["memory_id"])
    assert hist[-1]["op"] == "erase" and hist[0]["new_text"] is None


def test_text_output_is_readable(cli: CLI, sam: dict[str, str]) -> None:
    """Plain `read` prints each memory with its rendered interval and flags."""
    code, out, err = cli("read", "--user", "sam", "--history")
    assert (code, err) == (0, "")
    assert "Sam lives in Lisbon" in out and "valid 2023-05 until 2025-09-01" in out
    assert f"[superseded by {sam['berlin']}]" in out


def test_text_output_shows_each_memory_the_way_the_tui_does(cli: CLI, fee_id: str) -> None:
    """A memory's line is its text and JSON value as localmem.present writes it, then its flags."""
    from localmem.present import marks, memory_text

    code, out, err = cli("get", fee_id)
    assert (code, err) == (0, "")
    with localmem.open(cli.db) as store:
        rev = store.get(fee_id)
    assert rev is not None
    assert out.splitlines()[0] == f"{fee_id}  {memory_text(rev)}" == f"{fee_id}  fee = 6"
    assert out.splitlines()[-1] == f"    [{marks(rev)}]" == "    [corrected]"
    named = cli.json("add", "nickname", "--user", "acct", "--value", '"seven"')
    assert cli("get", named["memory_id"])[1].splitlines()[0].endswith('nickname = "seven"')


def test_the_command_modules_import_only_the_shared_helpers() -> None:
    """No CLI command module imports another: each uses cli.common and the library, app.py wires them."""
    cli_dir = Path(localmem.__file__).parent / "cli"
    groups = {"memories", "sync", "replay", "database"}
    for name in groups:
        tree = ast.parse((cli_dir / f"{name}.py").read_text(encoding="utf-8"))
        siblings: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level == 1:
                siblings |= {node.module} if node.module else {a.name for a in node.names}
        assert not siblings & (groups | {"app"}), f"cli/{name}.py imports {siblings & (groups | {'app'})}"
        assert "common" in siblings


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["add", "x", "--user", "u", "--valid-from", "2025-06-16T12:00"], "no time zone"),
        (["add", "x", "--user", "u", "--tz", "Mars/Base"], "Mars/Base"),
        (["add", "x", "--user", "u", "--valid-from", "2025-06-02", "--valid-to", "2025-06-01"],
         "not after"),
        (["add", "", "--user", "u"], "empty"),
        (["add", "x", "--user", "u", "--value", "seven"], "not JSON"),
        (["get", "NOSUCHID"], "NOSUCHID"),
        (["correct", "NOSUCHID", "--text", "y"], "NOSUCHID"),
        (["read", "--user", "u", "--as-of", "someday"], "someday"),
    ],
)
def test_bad_input_is_one_line_on_stderr(cli: CLI, argv: list[str], needle: str) -> None:
    """Errors exit 1 with one line on stderr naming the bad value, nothing on stdout, no change."""
    cli("add", "kept", "--user", "u")
    before = cli.json("snapshot", "--user", "u")
    code, out, err = cli(*argv)
    assert code == 1 and out == ""
    assert err.startswith("localmem: error: ") and err.count("\n") == 1 and needle in err
    assert cli.json("snapshot", "--user", "u")["revisions"] == before["revisions"]


def test_usage_errors_exit_2(cli: CLI) -> None:
    """A missing required option is a usage error (exit 2)."""
    with pytest.raises(SystemExit) as info:
        cli("add", "x")
    assert info.value.code == 2
    with pytest.raises(SystemExit) as info:
        cli("add", "x", "--user", "u", "--precision", "fortnight")
    assert info.value.code == 2
    err = cli.capsys.readouterr().err
    assert "'fortnight'" in err and "'weekend'" in err  # the choices are listed


def test_info_and_doctor(cli: CLI, fee_id: str) -> None:
    """`info` counts what is stored; `doctor` reports every check healthy."""
    info = cli.json("info")
    assert (info["memories"], info["revisions"], info["schema_version"]) == (3, 5, _db.SCHEMA_VERSION)
    report = cli.json("doctor")
    assert report["ok"] and all(c["ok"] for c in report["checks"])
    code, out, _ = cli("doctor")
    assert code == 0 and out.rstrip().endswith("healthy")


def test_db_from_environment(db_path: Path, capsys: pytest.CaptureFixture[str],
                             monkeypatch: pytest.MonkeyPatch) -> None:
    """LOCALMEM_DB picks the database when --db is not given."""
    monkeypatch.setenv("LOCALMEM_DB", str(db_path))
    assert main(["add", "hello", "--user", "u"]) == 0
    capsys.readouterr()
    assert db_path.exists()


def test_demo_rebuilds_its_own_database(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`demo` writes beside the user's database, prints the stories, and leaves the user's db alone."""
    mine = tmp_path / "mine.db"
    assert main(["--db", str(mine), "add", "my own memory", "--user", "me"]) == 0
    capsys.readouterr()
    for _ in range(2):  # rebuilt each run: same output twice
        assert main(["--db", str(mine), "demo"]) == 0
        out, err = capsys.readouterr()
        assert err == ""
        assert "known 09:05 → cash 396" in out and "known 10:01 → cash 393" in out
        assert "known 11:01 → cash 394" in out
        assert "current on 2025-10-01: Sam eats fish; Sam lives in Berlin" in out
        assert "weekend of 2025-06-14 to 2025-06-15" in out
    assert (tmp_path / "mine-demo.db").exists()
    assert main(["--db", str(mine), "--json", "read", "--user", "me"]) == 0
    assert [r["text"] for r in json.loads(capsys.readouterr().out)] == ["my own memory"]


def test_installed_console_script_has_no_traceback(db_path: Path, tmp_path: Path) -> None:
    """The real `localmem` executable prints errors without a traceback and exits non-zero."""
    exe = Path(sys.executable).with_name("localmem")
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "localmem.cli"]
    env = {**os.environ, "XDG_DATA_HOME": str(tmp_path)}
    bad = subprocess.run([*cmd, "--db", str(db_path), "add", "x", "--user", "u", "--tz", "Nope/X"],
                         capture_output=True, text=True, env=env, timeout=60)
    assert bad.returncode == 1 and bad.stdout == ""
    assert "Traceback" not in bad.stderr and "Nope/X" in bad.stderr
    ok = subprocess.run([*cmd, "demo"], capture_output=True, text=True, env=env, timeout=60)
    assert ok.returncode == 0 and "cash 396" in ok.stdout and ok.stderr == ""
    assert (tmp_path / "localmem" / "demo.db").exists()


# -- time phrases: resolve, add, import ------------------------------------------------


def test_resolve_prints_each_phrase_its_interval_and_the_rewrite(cli: CLI) -> None:
    code, out, err = cli("resolve", "I ran my first 10K last weekend, finished in 58 minutes.",
                         "--sent-at", "2025-06-16T12:00:00Z")
    assert (code, err) == (0, "")
    assert "'last weekend' [19:31] point weekend: [2025-06-14T00:00+00:00, 2025-06-16T00:00+00:00)" in out
    assert "rewritten: I ran my first 10K on the weekend of 2025-06-14 to 2025-06-15, finished in 58" in out
    assert "58 minutes'" not in out


def test_resolve_json_reads_in_the_senders_zone(cli: CLI) -> None:
    data = cli.json("resolve", "I did yoga this morning", "--sent-at", "2025-08-10T05:00:00+08:00",
                    "--tz", "Asia/Singapore")
    (m,) = data["mentions"]
    assert (m["phrase"], m["precision"]) == ("this morning", "part_of_day")
    assert m["start"] == "2025-08-10T05:00:00+08:00"
    assert data["rewritten"] == "I did yoga on the morning of 2025-08-10"


def test_resolve_without_a_phrase_says_so(cli: CLI) -> None:
    assert cli("resolve", "I may march in the parade", "--sent-at", "2025-06-16T12:00:00Z")[:2] == (
        0, "no time phrase found\n")


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["--sent-at", "2025-06-16T12:00:00"], "no time zone"),
        (["--sent-at", "2025-06-16T12:00:00Z", "--tz", "Mars/Olympus"], "Mars/Olympus"),
        (["--sent-at", "soon"], "--sent-at"),
    ],
    ids=["naive", "unknown-zone", "not-a-time"],
)
def test_resolve_bad_input_is_one_line_and_exit_1(cli: CLI, argv: list[str], says: str) -> None:
    code, out, err = cli("resolve", "yesterday", *argv)
    assert (code, out) == (1, "") and says in err and err.count("\n") == 1


def test_add_resolves_the_phrase_and_no_resolve_keeps_the_words(cli: CLI) -> None:
    rev = cli.json("add", "I started the new knee meds yesterday", "--user", "sam",
                   "--observed-at", "2025-08-10T05:00:00+08:00", "--tz", "Asia/Singapore")
    assert (rev["text"], rev["precision"], rev["valid_source"]) == (
        "I started the new knee meds on 2025-08-09", "day", "resolved")
    assert rev["source"] == {"message": "I started the new knee meds yesterday"}
    rev = cli.json("add", "I started the new knee meds yesterday", "--user", "sam", "--no-resolve")
    assert (rev["text"], rev["valid_source"]) == ("I started the new knee meds yesterday", "assumed")


def test_import_reads_each_message_at_its_send_time(cli: CLI, tmp_path: Path) -> None:
    chat = tmp_path / "chat.json"
    chat.write_text(json.dumps([
        {"role": "user", "content": "I ran my first 10K last weekend", "sent_at": "2025-06-16T12:00:00Z"},
        {"role": "assistant", "content": "Great run!", "sent_at": "2025-06-16T12:00:09Z"},
        {"role": "user", "content": "Knee is fine", "sent_at": "2025-06-17T08:00:00Z"},
    ]))
    code, out, err = cli("import", str(chat), "--user", "sam", "--tz", "UTC", now="2026-11-29T10:00:00Z")
    assert (code, err) == (0, "")
    assert out == "imported 2 memories for sam (1 with a time phrase resolved; recorded now)\n"
    texts = [(r["valid_source"], r["text"]) for r in cli.json("read", "--user", "sam", "--history")]
    assert texts == [("resolved", "I ran my first 10K on the weekend of 2025-06-14 to 2025-06-15"),
                     ("assumed", "Knee is fine")]


@pytest.mark.parametrize(
    ("content", "says"),
    [("not json", "is not JSON"), (json.dumps([{"role": "user", "content": "hi"}]), "has no sent_at")],
    ids=["not-json", "no-sent-at"],
)
def test_import_refuses_a_bad_file_and_writes_nothing(
    cli: CLI, tmp_path: Path, content: str, says: str
) -> None:
    chat = tmp_path / "chat.json"
    chat.write_text(content)
    code, out, err = cli("import", str(chat), "--user", "sam")
    assert (code, out) == (1, "") and says in err
    assert not cli.db.exists() or cli.json("info")["revisions"] == 0  # unreadable JSON opens nothing


def test_read_filter_finds_the_imported_run_by_either_clock(cli: CLI) -> None:
    cli.json("add", "I ran my first 10K last weekend", "--user", "sam",
             "--observed-at", "2025-06-16T12:00:00Z", "--tz", "UTC", now="2026-11-29T10:00:00Z")
    june = '{"valid_time": {"gte": "2025-06-01", "lt": "2025-07-01"}}'
    assert len(cli.json("read", "--user", "sam", "--history", "--filter", june)) == 1
    assert len(cli.json("read", "--user", "sam", "--history", "--filter", '{"observed_at": "2025-06"}')) == 1
    assert cli.json("read", "--user", "sam", "--history", "--filter", '{"observed_at": "2025-07"}') == []


@pytest.mark.parametrize(
    ("tree", "says"),
    [("{not json", "--filter '{not json' is not JSON"),
     ('{"colour": "red"}', "filters.colour: unknown field")],
    ids=["not-json", "unknown-field"],
)
def test_read_filter_errors_are_one_line(cli: CLI, tree: str, says: str) -> None:
    cli("add", "x", "--user", "sam")
    code, out, err = cli("read", "--user", "sam", "--filter", tree)
    assert (code, out) == (1, "") and says in err and err.count("\n") == 1


def test_search_explains_each_hit(cli: CLI) -> None:
    cli("add", "Struggled with the long run in the heat", "--user", "sam", "--tz", "UTC",
        "--observed-at", "2025-07-28T17:00:00Z", now="2025-07-28T18:00:00Z")
    cli("add", "Struggled with hill repeats", "--user", "sam", "--observed-at", "2025-07-02T17:00:00Z",
        now="2025-07-28T18:01:00Z")
    code, out, err = cli("search", "What did I struggle with last week?", "--user", "sam",
                         "--as-of", "2025-08-04T12:00:00Z", "--explain")
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert " = text " in lines[0] and "time 1.00" in lines[0]
    assert "Struggled with the long run in the heat" in lines[1]
    hits = cli.json("search", "struggled", "--user", "sam", "--as-of", "2025-08-04T12:00:00Z")
    assert [h["time_score"] for h in hits] == [None, None] and len({h["text_score"] for h in hits}) == 2


def test_search_without_words_is_an_error(cli: CLI) -> None:
    cli("add", "x", "--user", "sam")
    code, out, err = cli("search", "what is it", "--user", "sam")
    assert (code, out) == (1, "") and "no words to search for" in err


def test_search_logs_under_a_run_unless_told_not_to(cli: CLI) -> None:
    cli("add", "Tempo run felt easy", "--user", "sam", "--tz", "UTC", now="2025-07-30T18:00:00Z")
    assert cli("search", "tempo", "--user", "sam", "--run-id", "eval-1", now="2025-08-01T00:00:00Z")[0] == 0
    assert cli("search", "tempo", "--user", "sam", "--no-log", now="2025-08-02T00:00:00Z")[0] == 0
    conn = apsw.Connection(str(cli.db))
    try:
        assert conn.execute("SELECT run_id, rank FROM usage").fetchall() == [("eval-1", 1)]
    finally:
        conn.close()
