"""A full-screen message for when there is nothing to browse: a bad path, a bad file, an empty store."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Center, Middle
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Footer, Static

__all__ = ["MessageScreen"]


class MessageScreen(Screen[None]):
    """Says what is wrong and what to do about it; ``q`` quits."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("q,escape", "app.quit", "Quit", id="message.quit")]

    def __init__(self, title: str, text: str, *, error: bool = True) -> None:
        super().__init__()
        self._title = title
        self._text = text
        self._error = error

    def compose(self) -> ComposeResult:
        with Middle(), Center():
            yield Static(Content.assemble((self._title, "bold"), "\n\n", self._text, "\n\nPress q to quit."),
                         id="message", classes="error" if self._error else "")
        yield Footer()
