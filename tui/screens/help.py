"""The help screen (``?``): every key, the app's and each screen's, with what it does."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.markup import escape
from textual.screen import ModalScreen
from textual.widgets import Static

from ..widgets.paged_table import FitTable
from .base import ViewScreen
from .compare import CompareScreen
from .expired import ExpiredScreen
from .history import HistoryScreen
from .memories import MemoriesScreen
from .timeline import TimelineScreen

__all__ = ["HelpScreen", "help_text"]


def _lines(title: str, bindings: list[BindingType]) -> list[str]:
    out = [f"[b]{title}[/b]"]
    for b in bindings:
        if not isinstance(b, Binding):
            continue
        keys = b.key.replace("question_mark", "?").replace("slash", "/").replace(",", " / ")
        desc = b.tooltip or b.description
        out.append(f"  {escape(keys):<14} {escape(desc)}")
    return out


def help_text(app_bindings: Sequence[BindingType]) -> str:
    """All the bindings, the app's (``app_bindings``) then each screen's (markup, escaped descriptions)."""
    sections = [
        ("Everywhere", app_bindings), ("Every data screen", ViewScreen.BINDINGS),
        ("Tables", FitTable.BINDINGS), ("Memories (1)", MemoriesScreen.BINDINGS),
        ("Expired (2)", ExpiredScreen.BINDINGS), ("Compare (3)", CompareScreen.BINDINGS),
        ("History (Enter on a memory)", HistoryScreen.BINDINGS), ("Timeline (t)", TimelineScreen.BINDINGS),
    ]
    lines: list[str] = []
    for title, bindings in sections:
        lines += [*_lines(title, list(bindings)), ""]
    lines += [
        "[b]Clocks[/b]  known_at: what the store knew then; valid_at: what was true then (unset: same as",
        "  known_at). Type 'now', an ISO time (2026-03-02 10:01, 2025-06-16T12:00:00Z) or a phrase",
        "  (last monday, yesterday, nov 16 2025), read on the user's wall clock.",
        "[b]Palette[/b]  ctrl+p: every action by name (jump to a user, set the clocks, open a screen,",
        "  copy, export this view), and Textual's own (theme, screenshot).",
        "[b]Mouse[/b]  click a row to highlight it, click again to open it; click a header to sort;",
        "  click a key in the footer.",
    ]
    return "\n".join(lines)


class HelpScreen(ModalScreen[None]):
    """Every binding, with what it does."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,question_mark,q", "close", "Close", id="help.close"),
    ]

    def compose(self) -> ComposeResult:
        with VerticalScroll(classes="dialog help"):
            yield Static("[b]localmem — keys[/b]  (Esc closes)\n\n" + help_text(self.app.BINDINGS))

    def action_close(self) -> None:
        """Close the help."""
        self.dismiss(None)
