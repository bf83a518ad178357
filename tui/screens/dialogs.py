"""Modal dialogs: ask for a value, confirm an append, pick a user. Each returns through ``dismiss``."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, OptionList, Static
from textual.widgets.option_list import Option

from localmem import LocalmemError

__all__ = ["AskDialog", "ConfirmDialog", "PickDialog"]


class AskDialog(ModalScreen[dict[str, str] | None]):
    """Ask for one or more text fields; Enter on the last one submits, Escape cancels.

    ``check`` runs on the answers before the dialog closes: a localmem error it
    raises is shown in the dialog, which stays open to be fixed.
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", id="dialog.cancel"),
    ]

    def __init__(
        self,
        title: str,
        fields: Sequence[tuple[str, str, str]],
        *,
        hint: str = "",
        check: Callable[[dict[str, str]], Any] | None = None,
    ) -> None:
        super().__init__()
        self._title = title
        self._fields = list(fields)
        self._hint = hint
        self._check = check

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(self._title, classes="dialog-title")
            if self._hint:
                yield Static(self._hint, classes="hint")
            for name, label, initial in self._fields:
                yield Label(label)
                yield Input(value=initial, id=f"field-{name}")
            yield Static("", classes="dialog-error")
            with Horizontal(classes="buttons"):
                yield Button("OK", variant="primary", id="ok")
                yield Button("Cancel", id="cancel")

    def on_mount(self) -> None:
        self.query(Input).first().focus()

    def _answers(self) -> dict[str, str]:
        return {name: self.query_one(f"#field-{name}", Input).value for name, _, _ in self._fields}

    def _submit(self) -> None:
        answers = self._answers()
        if self._check is not None:
            try:
                self._check(answers)
            except LocalmemError as exc:
                self.query_one(".dialog-error", Static).update(str(exc))
                return
        self.dismiss(answers)

    @on(Input.Submitted)
    def _entered(self, event: Input.Submitted) -> None:
        inputs = list(self.query(Input).results(Input))
        if event.input is inputs[-1]:
            self._submit()
        else:
            inputs[inputs.index(event.input) + 1].focus()

    @on(Button.Pressed, "#ok")
    def _ok(self) -> None:
        self._submit()

    @on(Button.Pressed, "#cancel")
    def action_cancel(self) -> None:
        """Close without an answer."""
        self.dismiss(None)


class ConfirmDialog(ModalScreen[bool]):
    """Show what is about to happen; ``y``/Enter on Append confirms, ``n``/Escape cancels."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,n", "cancel", "Cancel", id="confirm.cancel"),
        Binding("y", "confirm", "Append", id="confirm.yes"),
    ]

    def __init__(self, title: str, body: Content | str, *, confirm: str = "Append revision") -> None:
        super().__init__()
        self._title = title
        self._body = body
        self._confirm = confirm

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(self._title, classes="dialog-title")
            yield Static(self._body, id="preview")
            with Horizontal(classes="buttons"):
                yield Button(f"{self._confirm} (y)", variant="warning", id="yes")
                yield Button("Cancel (n)", id="no")

    def on_mount(self) -> None:
        self.query_one("#no", Button).focus()

    @on(Button.Pressed, "#yes")
    def action_confirm(self) -> None:
        """Go ahead."""
        self.dismiss(True)

    @on(Button.Pressed, "#no")
    def action_cancel(self) -> None:
        """Do nothing."""
        self.dismiss(False)


class PickDialog(ModalScreen[str | None]):
    """Pick one of a list (the users); Enter picks, Escape cancels."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", id="pick.cancel"),
    ]

    def __init__(self, title: str, choices: Sequence[str], current: str | None = None) -> None:
        super().__init__()
        self._title = title
        self._choices = list(choices)
        self._current = current

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(self._title, classes="dialog-title")
            yield OptionList(*[Option(c, id=str(i)) for i, c in enumerate(self._choices)], id="choices")

    def on_mount(self) -> None:
        options = self.query_one(OptionList)
        if self._current in self._choices:
            options.highlighted = self._choices.index(self._current)
        options.focus()

    @on(OptionList.OptionSelected)
    def _picked(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(self._choices[event.option_index])

    def action_cancel(self) -> None:
        """Close without a choice."""
        self.dismiss(None)
