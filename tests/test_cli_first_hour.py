"""What a newcomer hits in the first hour, through the installed console script (issue 17).

Each test runs the real ``localmem`` executable in a subprocess, in a temp dir,
and checks exit code, stdout and stderr apart; no stderr ever holds a traceback.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import localmem

pytestmark = pytest.mark.slow

EXE = Path(sys.executable).with_name("localmem")
CMD = [str(EXE)] if EXE.exists() else [sys.executable, "-m", "localmem.cli"]


class Shell:
    """Runs ``localmem ARGS`` in ``cwd`` with its own data dir (no LOCALMEM_DB unless given)."""

    def __init__(self, cwd: Path) -> None:
        self.cwd = cwd
        self.env = {k: v for k, v in os.environ.items() if k != "LOCALMEM_DB"}
        self.env["XDG_DATA_HOME"] = str(cwd / "data-home")

    def __call__(self, *argv: str, stdin: str | None = None) -> tuple[int, str, str]:
        done = subprocess.run([*CMD, *argv], cwd=self.cwd, env=self.env, capture_output=True, input=stdin,
                              text=True, timeout=60)
        assert "Traceback" not in done.stderr, done.stderr
        return done.returncode, done.stdout, done.stderr

    def json(self, *argv: str) -> Any:
        code, out, err = self(*argv, "--json")
        assert (code, err) == (0, ""), err
        return json.loads(out)


@pytest.fixture
def sh(tmp_path: Path) -> Shell:
    """The console script in a fresh temp dir."""
    return Shell(tmp_path)


def one_error(result: tuple[int, str, str], *needles: str) -> None:
    code, out, err = result
    assert (code, out) == (1, ""), err
    assert err.startswith("localmem: error: ") and err.count("\n") == 1
    for needle in needles:
        assert needle in err, err


def test_export_to_a_missing_folder_or_a_directory_is_one_line(sh: Shell, tmp_path: Path) -> None:
    """Exports to a missing folder (sync, CSV, JSON) or onto a directory are one-line errors."""
    sh("--db", "m.db", "add", "x", "--user", "sam")
    one_error(sh("--db", "m.db", "export", "nodir/out.gz"), "nodir")
    one_error(sh("--db", "m.db", "export", "nodir/out.csv", "--format", "csv", "--user", "sam"), "nodir")
    one_error(sh("--db", "m.db", "export", "nodir/out.json", "--format", "json", "--user", "sam"), "nodir")
    (tmp_path / "box").mkdir()
    one_error(sh("--db", "m.db", "export", "box"), "directory")
    assert not (tmp_path / "nodir").exists() and list((tmp_path / "box").iterdir()) == []
    assert list(tmp_path.rglob("*.partial")) == []  # no DIR.partial left behind


def test_store_export_to_a_bad_path_is_a_localmem_error(tmp_path: Path) -> None:
    """In Python, export to a missing folder or onto a directory raises InvalidInputError naming the path."""
    with localmem.open(tmp_path / "m.db") as store:
        store.add("x", user_id="sam")
        with pytest.raises(localmem.InvalidInputError, match="nodir"):
            store.export(tmp_path / "nodir" / "x.gz")
        with pytest.raises(localmem.InvalidInputError, match="is a directory"):
            store.export(tmp_path)
    assert list(tmp_path.rglob("*.partial")) == []


def test_open_without_create_makes_no_file(tmp_path: Path) -> None:
    """localmem.open(path, create=False) on a missing file raises DatabaseNotFoundError and makes nothing."""
    with pytest.raises(localmem.DatabaseNotFoundError, match="missing.db"):
        localmem.open(tmp_path / "missing.db", create=False)
    assert list(tmp_path.iterdir()) == []


def test_a_mistyped_db_creates_nothing(sh: Shell, tmp_path: Path) -> None:
    """A read of a missing file and a write into a missing folder fail and leave no file or folder."""
    one_error(sh("--db", "missing.db", "read", "--user", "sam"), "missing.db", "never creates")
    one_error(sh("--db", "nodir/x.db", "add", "x", "--user", "sam"), "nodir", "mkdir -p")
    assert not (tmp_path / "missing.db").exists() and not (tmp_path / "nodir").exists()


def test_an_import_of_an_unreadable_file_creates_no_database(sh: Shell, tmp_path: Path) -> None:
    """A conversation import whose file is missing or not JSON fails before any database is made."""
    one_error(sh("--db", "new.db", "import", "nofile.json", "--user", "sam"), "nofile.json")
    (tmp_path / "bad.json").write_text("{not json")
    one_error(sh("--db", "new.db", "import", "bad.json", "--user", "sam"), "not JSON")
    assert not (tmp_path / "new.db").exists()


def test_the_default_database_is_made_on_first_write(sh: Shell, tmp_path: Path) -> None:
    """Without --db a read first says there is no database yet; the first add makes it, folder and all."""
    default = tmp_path / "data-home" / "localmem" / "localmem.db"
    one_error(sh("read", "--user", "sam"), str(default))
    code, out, err = sh("add", "x", "--user", "sam")
    assert (code, err) == (0, "") and default.is_file()


def test_tui_without_a_terminal_refuses_at_once(sh: Shell) -> None:
    """`localmem tui` with pipes for stdin and stdout exits 1 with one line instead of drawing forever."""
    sh("--db", "m.db", "add", "x", "--user", "sam")
    one_error(sh("--db", "m.db", "tui", stdin=""), "needs a terminal")


def test_now_before_the_store_clock_warns_and_records_later(sh: Shell) -> None:
    """`--now` earlier than the newest recorded time still writes, recorded later, with a warning."""
    assert sh("--db", "m.db", "--now", "2026-01-01T00:00Z", "add", "first", "--user", "sam")[0] == 0
    code, out, err = sh("--db", "m.db", "--now", "2025-01-01T00:00Z", "add", "second", "--user", "sam",
                        "--json")
    assert code == 0 and json.loads(out)["recorded_at"] == "2026-01-01T00:00:00+00:00"
    assert json.loads(err)["warning"].startswith("--now 2025-01-01T00:00:00+00:00 is before")
    code, out, err = sh("--db", "m.db", "--now", "2025-01-01T00:00Z", "read", "--user", "sam")
    assert (code, err) == (0, "")  # a read at an earlier --now records nothing: no warning


def test_errors_under_json_are_json_on_stderr(sh: Shell) -> None:
    """Under --json an error is one JSON object on stderr naming its type, and the exit code is 1."""
    sh("--db", "m.db", "add", "x", "--user", "sam")
    code, out, err = sh("--db", "m.db", "get", "NOSUCHID", "--json")
    assert (code, out) == (1, "")
    assert json.loads(err) == {"error": "no memory with id 'NOSUCHID'", "type": "NotFoundError"}


def test_get_and_writes_print_one_object_and_ids_prints_the_id(sh: Shell) -> None:
    """`add --ids` prints the bare id; `get --json` an object, or null before the memory was known."""
    code, out, err = sh("--db", "m.db", "--now", "2026-03-02T09:01Z", "add", "fee", "--user", "acct",
                        "--value", "4", "--ids")
    fee = out.strip()
    assert (code, err) == (0, "") and out == fee + "\n" and len(fee) == 26
    got = sh.json("--db", "m.db", "get", fee[:12])
    assert isinstance(got, dict) and got["memory_id"] == fee and got["value"] == 4
    assert sh.json("--db", "m.db", "get", fee, "--known-at", "2026-03-02T09:00Z") is None
    corrected = sh.json("--db", "m.db", "--now", "2026-03-02T10:00Z", "correct", fee, "--value", "7")
    assert corrected["version"] == 2 and corrected["value"] == 7


def test_export_and_import_summaries_name_the_watermark_alike(sh: Shell) -> None:
    """Export and import JSON summaries both give the watermark as a {"from", "to"} range."""
    sh("--db", "a.db", "add", "x", "--user", "sam")
    out = sh.json("--db", "a.db", "export", "a.lmsync.gz")
    assert out["watermark"] == {"from": 0, "to": 1} and "since" not in out
    back = sh.json("--db", "b.db", "import", "a.lmsync.gz")
    assert back["watermark"] == out["watermark"] and back["changed"] is True


def test_version_and_help(sh: Shell) -> None:
    """`--version` prints the version; `tui --help` offers no --json and `demo --help` no --now."""
    code, out, err = sh("--version")
    assert (code, out, err) == (0, f"localmem {localmem.__version__}\n", "")
    tui_help, demo_help = sh("tui", "--help")[1], sh("demo", "--help")[1]
    assert "--now" in tui_help and "--json" not in tui_help
    assert "--json" in demo_help and "--now" not in demo_help


def test_import_prints_a_summary_or_only_the_ids(sh: Shell, tmp_path: Path) -> None:
    """A conversation import prints one summary line, not a line per message; --ids prints only ids."""
    chat = [{"role": "user", "content": f"message {i}", "sent_at": 1750075200 + 60 * i} for i in range(300)]
    (tmp_path / "chat.json").write_text(json.dumps(chat))
    code, out, err = sh("--db", "m.db", "import", "chat.json", "--user", "sam")
    assert (code, err) == (0, "")
    assert out == "imported 300 memories for sam (0 with a time phrase resolved; recorded now)\n"
    code, out, err = sh("--db", "m.db", "import", "-", "--user", "ann", "--ids", stdin=json.dumps(chat[:3]))
    assert (code, err) == (0, "") and len(out.split()) == 3 and all(len(i) == 26 for i in out.split())


class _Tty(io.StringIO):
    """A stream that says it is a terminal."""

    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize(("quiet", "drawn"), [(False, True), (True, False)], ids=["terminal", "quiet"])
def test_progress_draws_only_at_a_terminal_unless_quiet(
    monkeypatch: pytest.MonkeyPatch, quiet: bool, drawn: bool
) -> None:
    """Long operations draw a progress bar on a terminal's stderr, and nothing under --quiet."""
    from localmem.cli.common import progress

    err = _Tty()
    monkeypatch.setattr("sys.stderr", err)
    with progress(argparse.Namespace(quiet=quiet, json=False), "importing messages") as tick:
        tick(100, 300)
        tick(300, 300)
    assert ("importing messages" in err.getvalue()) is drawn
