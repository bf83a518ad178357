"""The replay commands: scenario A's rows through the CLI, runs, receipts, stale, compare, knew."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from localmem.cli import main


def at(hhmm: str) -> str:
    return f"2026-03-02T{hhmm}:00Z"


class CLI:
    """Runs ``localmem --db PATH ...`` in-process and captures stdout and stderr apart."""

    def __init__(self, db: Path, capsys: pytest.CaptureFixture[str]) -> None:
        self.db, self.capsys = db, capsys

    def __call__(self, *argv: str, now: str | None = None) -> tuple[int, str, str]:
        code = main(["--db", str(self.db), *(["--now", now] if now else []), *argv])
        out, err = self.capsys.readouterr()
        return code, out, err

    def ok(self, *argv: str, now: str | None = None) -> str:
        code, out, err = self(*argv, now=now)
        assert (code, err) == (0, ""), err
        return out

    def json(self, *argv: str, now: str | None = None) -> Any:
        import json

        return json.loads(self.ok(*argv, "--json", now=now))


@pytest.fixture
def cli(db_path: Path, capsys: pytest.CaptureFixture[str]) -> CLI:
    """The CLI on a fresh database file."""
    return CLI(db_path, capsys)


@pytest.fixture
def fee(cli: CLI) -> dict[str, str]:
    """Scenario A through the CLI: a run decides at 09:05, the fee is corrected at 10:00 and 11:00."""
    cli.ok("add", "opening balance", "--user", "acct", "--key", "opening", "--value", "500",
           "--valid-from", at("08:00"), now=at("08:00"))
    cli.ok("add", "purchase", "--user", "acct", "--key", "purchase", "--value", "100",
           "--valid-from", at("09:00"), now=at("09:00"))
    fee = cli.json("add", "fee", "--user", "acct", "--key", "fee", "--value", "4",
                     "--valid-from", at("09:00"), now=at("09:01"))
    cli.ok("run", "start", "r1", "--user", "acct", now=at("09:05"))
    revs = cli.json("run", "read", "r1")
    retrieved = [x for r in revs for x in ("--retrieved", r["rev_id"])]
    decision = cli.json("run", "decide", "r1", "--step", "cash", "--prompt", "cash available: 396",
                        *retrieved, now=at("09:05"))
    cli.ok("correct", fee["memory_id"], "--value", "7", now=at("10:00"))
    cli.ok("correct", fee["memory_id"], "--value", "6", now=at("11:00"))
    return {"fee": fee["memory_id"], "fee_rev": fee["rev_id"],
            "decision": decision["decision_id"]}


def test_compare_prints_the_seeds_line(cli: CLI, fee: dict[str, str]) -> None:
    """`compare --expr` prints "valid 09:05 · known 09:05 → 396 / known 10:01 → 393" first."""
    out = cli.ok("compare", "--expr", "opening - purchase - fee", "--user", "acct", "--valid-at", at("09:05"),
                 "--known-at", at("09:05"), "--known-at", at("10:01"))
    assert out.splitlines()[0] == "valid 09:05 · known 09:05 → 396 / known 10:01 → 393"
    out = cli.ok("compare", fee["fee"][:12], "--valid-at", at("09:05"), "--known-at", at("09:05"),
                 "--known-at", at("10:30"), "--known-at", at("11:01"))
    assert out.splitlines()[0] == "valid 09:05 · known 09:05 → 4 / known 10:30 → 7 / known 11:01 → 6"
    data = cli.json("compare", "--query", "fee", "--user", "acct", "--valid-at", at("09:05"),
                    "--known-at", at("09:05"), "--known-at", at("10:00"))
    assert [p["answer"] for p in data["perspectives"]] == ["4", "7"]


def test_decision_show_prompt_writes_the_exact_bytes(db_path: Path, fee: dict[str, str]) -> None:
    """`decision show ID --prompt` writes exactly b"cash available: 396" to stdout, after the corrections."""
    result = subprocess.run(
        [sys.executable, "-m", "localmem.cli", "--db", str(db_path), "decision", "show", fee["decision"],
         "--prompt"], capture_output=True, timeout=60, check=False, cwd=Path(__file__).parent.parent)
    assert (result.returncode, result.stdout, result.stderr) == (0, b"cash available: 396", b"")


def test_decision_show_lists_what_was_cited_and_available(cli: CLI, fee: dict[str, str]) -> None:
    """The receipt shows its cutoff, the fee-4 revision it cited (since corrected), only fee 4 available."""
    out = cli.ok("decision", "show", fee["decision"], "--available")
    assert "known_at 2026-03-02T09:05:00+00:00" in out
    assert f"{fee['fee_rev']}  v1 fee = 4  [since: v3 correct → fee = 6]" in out
    available = out.split("available at its cutoff")[1]
    assert "fee = 4" in available and "fee = 7" not in available and "fee = 6" not in available
    data = cli.json("decision", "show", fee["decision"])
    assert data["prompt"] == "cash available: 396"


def test_run_commands_record_steps_and_advances(cli: CLI, fee: dict[str, str]) -> None:
    """`run step` and `run advance` append to the run's record; the run reads fee 7 only after advancing."""
    assert [r["value"] for r in cli.json("run", "read", "r1", "--key", "fee")] == [4]
    cli.ok("run", "step", "r1", "review", now=at("11:30"))
    data = cli.json("run", "advance", "r1", "--step", "refresh", "--to", at("10:30"), now=at("11:30"))
    assert [(e["kind"], e["step"], e["known_at"]) for e in data["events"]] == [
        ("start", None, "2026-03-02T09:05:00+00:00"), ("step", "review", "2026-03-02T09:05:00+00:00"),
        ("advance", "refresh", "2026-03-02T10:30:00+00:00")]
    assert [r["value"] for r in cli.json("run", "read", "r1", "--key", "fee")] == [7]
    assert "r1  user acct  cutoff 2026-03-02T10:30:00+00:00" in cli.ok("run", "list")


def test_stale_and_knew(cli: CLI, fee: dict[str, str]) -> None:
    """A summary derived from fee 4 is listed by `stale`; `knew --diff` shows the fee corrected 4 → 7."""
    out = cli.ok("derive", "cash 396", "--from", fee["fee_rev"], "--user", "acct", now=at("11:30"))
    summary = out.split()[0]
    stale = cli.ok("stale", "--user", "acct")
    assert stale.splitlines()[0].startswith(f"{summary}  cash 396  [stale]")
    assert "corrected at 2026-03-02T10:00:00+00:00" in stale
    assert cli.ok("stale", "--user", "acct", "--known-at", at("09:30")) == "(nothing stale)\n"
    knew = cli.ok("knew", "--user", "acct", "--at", at("09:05"))
    assert knew.splitlines()[0] == "what the app knew about acct at 2026-03-02T09:05:00+00:00: 3 memories"
    assert "fee = 4" in knew and "fee = 7" not in knew
    diff = cli.ok("knew", "--user", "acct", "--at", at("09:05"), "--diff", at("10:05"))
    assert f"corrected  {fee['fee']}  fee = 4 → fee = 7" in diff


def test_knew_marks_memories_like_read(cli: CLI, fee: dict[str, str]) -> None:
    """`knew` shows the flags `read` shows, in the same order: the corrected fee is marked corrected."""
    knew = cli.ok("knew", "--user", "acct", "--at", at("11:30"))
    [line] = [x for x in knew.splitlines() if fee["fee"] in x]
    assert line.endswith("fee = 6  · valid since 2026-03-02T09:00:00+00:00  [corrected]")
    read = cli.ok("read", "--user", "acct", "--key", "fee", "--as-of", at("11:30"))
    assert read.splitlines()[-1] == "    [corrected]"


@pytest.mark.parametrize(("argv", "message"), [
    (("run", "show", "nope"), "no run with id 'nope'"),
    (("run", "advance", "r1", "--step", "x", "--to", at("08:00")), "only moves forwards"),
    (("run", "advance", "r1", "--step", "x", "--to", "2026-03-02T09:30:00"), "no time zone"),
    (("decision", "show", "Z" * 26), "no decision"),
    (("derive", "s", "--from", "Q" * 26), "no revision"),
    (("compare", "--user", "acct", "--known-at", at("09:00")), "exactly one question"),
    (("compare", "--expr", "__import__('os')", "--user", "acct", "--known-at", at("09:00")), "not allowed"),
    (("knew", "--user", "acct", "--at", at("10:00"), "--diff", at("09:00")), "not after"),
])
def test_errors_are_one_line_on_stderr(
    cli: CLI, fee: dict[str, str], argv: tuple[str, ...], message: str
) -> None:
    """Bad replay commands exit 1 with one line on stderr naming the problem, and print nothing on stdout."""
    code, out, err = cli(*argv)
    assert (code, out) == (1, "")
    assert err.startswith("localmem: error: ") and err.count("\n") == 1 and message in err
