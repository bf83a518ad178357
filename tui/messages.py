"""Messages the TUI's workers post back to the UI thread (threads never touch widgets)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from textual.message import Message

__all__ = ["Loaded", "LoadFailed"]


class Loaded(Message):
    """A worker finished: hand ``result`` to ``done`` on the UI thread, unless superseded."""

    def __init__(self, generation: int, done: Callable[[Any], None], result: Any) -> None:
        super().__init__()
        self.generation = generation
        self.done = done
        self.result = result


class LoadFailed(Message):
    """A worker's store call raised a localmem error: show ``text`` on screen."""

    def __init__(self, generation: int, text: str) -> None:
        super().__init__()
        self.generation = generation
        self.text = text
