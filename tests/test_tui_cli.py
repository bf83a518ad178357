"""`localmem tui` and `localmem demo` at a terminal: which app they start, on which file, with which flags."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

import tui
from localmem.cli import demo, main


class _Started(Exception):
    """Raised by the stubbed App.run to hand the app back to the test."""


@pytest.fixture
def started(monkeypatch: pytest.MonkeyPatch) -> list[tui.LocalmemApp]:
    """Stub LocalmemApp.run: record the app instead of taking over the terminal (which `tui` needs)."""
    apps: list[tui.LocalmemApp] = []
    monkeypatch.setattr("localmem.cli.database.at_terminal", lambda: True)

    def run(self: tui.LocalmemApp, *args: object, **kwargs: object) -> None:
        apps.append(self)

    monkeypatch.setattr(tui.LocalmemApp, "run", run)
    return apps


def test_tui_command_passes_db_user_and_write(tmp_path: Path, started: list[tui.LocalmemApp]) -> None:
    """`localmem tui --db P --user U --write` starts the app on P for U, writable."""
    db = tmp_path / "m.db"
    assert main(["tui", "--db", str(db), "--user", "sam", "--write"]) == 0
    (app,) = started
    assert app._path == db and app.view.user == "sam" and app.write
    assert not db.exists()  # starting the TUI creates nothing


def test_tui_is_read_only_by_default(tmp_path: Path, started: list[tui.LocalmemApp]) -> None:
    """Without --write the app cannot append."""
    assert main(["--db", str(tmp_path / "m.db"), "tui"]) == 0
    assert started[0].write is False and started[0].view.user is None


def test_demo_at_a_terminal_opens_the_tui_on_the_demo_database(
    tmp_path: Path, started: list[tui.LocalmemApp], monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """At a terminal `demo` rebuilds the demo file and opens the TUI on it, on Sam's memories."""
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.setattr("sys.stdout", Tty())
    monkeypatch.setattr("sys.stdin", Tty())
    assert main(["--db", str(tmp_path / "mine.db"), "demo"]) == 0
    (app,) = started
    assert app._path == tmp_path / "mine-demo.db" and app.view.user == demo.SAM
    assert (tmp_path / "mine-demo.db").exists()
