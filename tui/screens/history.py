"""The history screen: every revision of one memory, and the links along its chain.

Each revision shows its op, the old → new text as a word diff (and the value,
when it changed), the old and new valid intervals, recorded_at, observed_at,
source and reason. The links (what a correction corrects, what this memory
supersedes or is superseded by) are an option list: Enter follows one. With
``--write`` the memory can be corrected, retracted or given an expiry, each
after a dialog that shows the revision about to be appended; nothing is ever
edited in place. With known_at set, only the changes recorded by then show.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.content import Content
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from localmem import UNSET, Change, InvalidInputError, Revision, Store
from localmem.present import interval, local_time, memory_text, parse_json, value_text

from ..format import word_diff
from .base import ViewScreen
from .dialogs import AskDialog, ConfirmDialog

__all__ = ["HistoryScreen", "HistoryData"]


@dataclass(frozen=True, slots=True)
class HistoryData:
    """What the history screen shows, read in one worker call."""

    head: Revision  # the newest revision (for the title and for writes)
    changes: list[Change]
    chain: list[tuple[str, Revision]]  # (memory_id, its newest revision), oldest first


def _json(value: Any) -> str:
    return "-" if value is None else json.dumps(value, ensure_ascii=False)


def change_card(c: Change, tz: str) -> Content:
    """One revision as a card: its head line, then only what it changed."""
    head = f"v{c.version}" if c.version is not None else "--"
    lines: list[Content | str] = [Content.assemble(
        (f"{head} {c.op}", "bold $text-accent"),
        f"   recorded {local_time(c.recorded_at, tz, seconds=True)}",
        f"   observed {local_time(c.observed_at, tz, seconds=True)}" if c.observed_at else "",
        f"   rev {c.rev_id}" if c.rev_id else "",
    )]
    first = c.old_valid is None and c.op != "erase"
    if c.op == "erase":
        lines.append("  content destroyed by a privacy erasure (the tombstone remains)")
    else:
        if first or c.old_text != c.new_text:
            lines.append(Content.assemble("  text   ", word_diff(None if first else c.old_text, c.new_text)))
        if (first and c.new_value is not None) or (not first and c.old_value != c.new_value):
            lines.append(Content.assemble(
                "  value  ", word_diff(None if first else _json(c.old_value), _json(c.new_value))))
        if first or c.old_valid != c.new_valid:
            old = "" if first else f"{interval(c.old_valid)} → "
            lines.append(f"  valid  {old}{interval(c.new_valid)}")
        if c.op == "expire" and c.expires_at is not None:
            lines.append(f"  expires {local_time(c.expires_at, tz)}")
        if c.op == "retract":
            lines.append("  retracted: hidden from current reads from now on")
    for label, v in (("source", c.source), ("reason", c.reason)):
        if v is not None:
            lines.append(f"  {label} {v if isinstance(v, str) else json.dumps(v)}")
    return Content("\n").join(Content(x) if isinstance(x, str) else x for x in lines)


class HistoryScreen(ViewScreen):
    """Every revision of one memory, oldest first."""

    TITLE = "History"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "back", "Back", id="history.back"),
        Binding("l", "links", "Links", tooltip="Focus the links along the chain (Enter follows)",
                id="history.links"),
        Binding("t", "timeline", "Timeline", id="history.timeline"),
        Binding("c", "correct", "Correct", tooltip="Append a correction (--write)", id="history.correct"),
        Binding("d", "retract", "Retract", tooltip="Append a retraction (--write)", id="history.retract"),
        Binding("e", "expire", "Expire", tooltip="Set the expiry (--write)", id="history.expire"),
    ]

    def __init__(self, memory_id: str) -> None:
        super().__init__()
        self.memory_id = memory_id
        self.data: HistoryData | None = None

    def compose(self) -> ComposeResult:
        yield from self.compose_header()
        yield Static("", id="memory-title")
        yield VerticalScroll(id="changes")
        yield Static("Links (l, then Enter to follow)", classes="section")
        yield OptionList(id="links")
        yield from self.compose_footer()

    def reload(self) -> None:
        """Read the memory's changes and its chain."""
        memory_id = self.memory_id
        known = self.lm.view.known_at

        def job(store: Store) -> HistoryData:
            changes = store.history(memory_id, known_at=known)
            head = store.get(memory_id, known_at="9999-12-31T00:00:00Z")
            assert head is not None
            chain = [(m, store.get(m, known_at="9999-12-31T00:00:00Z")) for m in store.chain(memory_id)]
            return HistoryData(head, changes, [(m, r) for m, r in chain if r is not None])

        self.status("loading…")
        self.load(job, self._show)

    def _show(self, data: HistoryData) -> None:
        self.data = data
        tz = data.head.tz
        key = f"   key {data.head.key}" if data.head.key else ""
        self.query_one("#memory-title", Static).update(Content.assemble(
            (memory_text(data.head), "bold"), f"   {data.head.kind}{key}   id {self.memory_id}"))
        box = self.query_one("#changes", VerticalScroll)
        box.remove_children()
        box.mount_all([Static(change_card(c, tz), classes=f"change rev-v{c.version or 0}")
                       for c in data.changes])
        links = self.query_one("#links", OptionList)
        links.clear_options()
        links.add_options(self._links(data))
        cut = "" if self.lm.view.known_at is None else " recorded by known_at"
        n = len(data.changes)
        plural = "" if n == 1 else "s"
        self.status(f"{n} revision{plural}{cut}, oldest first; nothing is ever edited in place")

    def _links(self, data: HistoryData) -> list[Option]:
        out: list[Option] = []
        for c in data.changes:
            if c.op == "correct" and c.version is not None:
                out.append(Option(f"v{c.version} corrects v{c.version - 1}  (jump to it)",
                                  id=f"rev:v{c.version - 1}"))
        ids = [m for m, _ in data.chain]
        here = ids.index(self.memory_id) if self.memory_id in ids else 0
        for i, (m, rev) in enumerate(data.chain):
            if m == self.memory_id:
                continue
            rel = "supersedes" if i < here else "superseded by"
            if i == here - 1 or i == here + 1:
                label = f"{rel}: {memory_text(rev)}  ({interval(rev.valid)})"
            else:
                label = f"chain: {memory_text(rev)}  ({interval(rev.valid)})"
            out.append(Option(label, id=f"mem:{m}"))
        if not out:
            out.append(Option("(no links: not corrected, not part of a chain)", disabled=True))
        return out

    @on(OptionList.OptionSelected, "#links")
    def _follow(self, event: OptionList.OptionSelected) -> None:
        target = event.option.id or ""
        kind, _, ref = target.partition(":")
        if kind == "mem":
            self.lm.open_history(ref)
        elif kind == "rev":
            for card in self.query(f".rev-{ref}"):
                card.scroll_visible()
                card.add_class("flash")
                self.set_timer(1.0, lambda c=card: c.remove_class("flash"))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """The write keys exist only with --write (hidden from the footer otherwise)."""
        if action in ("correct", "retract", "expire"):
            return self.lm.write
        return True

    def action_back(self) -> None:
        """Back to the screen below."""
        self.app.pop_screen()

    def action_links(self) -> None:
        """Focus the links, the first one highlighted."""
        links = self.query_one("#links", OptionList)
        links.focus()
        if links.highlighted is None and links.option_count:
            links.highlighted = 0

    def action_timeline(self) -> None:
        """The timeline of this memory's key."""
        if self.data is not None and self.data.head.key:
            self.lm.open_timeline(self.data.head.key)
        else:
            self.notify("this memory has no key: a timeline follows a key's values", severity="warning")

    # -- writes (only with --write) ---------------------------------------------

    def _writable(self) -> Revision | None:
        if not self.lm.write:
            self.notify("read-only: start the TUI with --write to correct, retract or expire",
                        severity="warning")
            return None
        if self.data is None:
            return None
        if self.data.head.erased:
            self.notify("this memory was erased: it takes no more writes", severity="error")
            return None
        return self.data.head

    def _preview(self, op: str, head: Revision, lines: list[str]) -> Content:
        now = local_time(self.lm.source.clock() if self.lm.source else None, head.tz, seconds=True)
        body = [f"append revision v{head.version + 1} (op {op}) to memory {head.memory_id}",
                f"  now     {memory_text(head)}", *lines,
                f"  recorded at {now} by the store's clock",
                "", "The earlier revisions stay as they are: nothing is edited in place."]
        return Content("\n".join(body))

    def action_correct(self) -> None:
        """Ask for the corrected text/value, show the revision to append, append it on yes."""
        head = self._writable()
        if head is None:
            return

        def parse(answers: dict[str, str]) -> dict[str, Any]:
            changes: dict[str, Any] = {}
            if answers["text"].strip() and answers["text"] != (head.text or ""):
                changes["text"] = answers["text"]
            raw = answers["value"].strip()
            if raw != value_text(head.value):
                changes["value"] = None if raw == "" else parse_json(raw, "Value")
            if not changes:
                raise InvalidInputError("nothing changes: give a different text or value")
            return changes

        def asked(answers: dict[str, str] | None) -> None:
            if answers is None:
                return
            changes = parse(answers)
            lines = []
            if "text" in changes:
                lines.append(f"  text    {head.text!r} → {changes['text']!r}")
            if "value" in changes:
                lines.append(f"  value   {_json(head.value)} → {_json(changes['value'])}")
            reason = answers["reason"].strip() or None
            lines.append(f"  reason  {reason or '-'}")
            mid = head.memory_id

            def run(store: Store) -> Revision:
                return store.correct(mid, text=changes.get("text", UNSET), value=changes.get("value", UNSET),
                                     reason=reason)

            self._confirm("correct", head, lines, run)

        self.app.push_screen(AskDialog(
            "Correct: the earlier account was wrong",
            [("text", "Text", head.text or ""), ("value", "Value (JSON, e.g. 7)", value_text(head.value)),
             ("reason", "Reason", "")],
            hint="Same fact, same valid time, new content.", check=parse), asked)

    def action_retract(self) -> None:
        """Ask why, show the retraction to append, append it on yes."""
        head = self._writable()
        if head is None:
            return

        def asked(answers: dict[str, str] | None) -> None:
            if answers is None:
                return
            reason = answers["reason"].strip() or None
            mid = head.memory_id
            self._confirm("retract", head, ["  retracted: hidden from current reads from now on",
                                            f"  reason  {reason or '-'}"],
                          lambda store: store.retract(mid, reason))

        self.app.push_screen(AskDialog("Retract: the user revoked this memory",
                                       [("reason", "Reason", "")]), asked)

    def action_expire(self) -> None:
        """Ask for the expiry date, show the revision to append, append it on yes."""
        head = self._writable()
        if head is None:
            return

        def asked(answers: dict[str, str] | None) -> None:
            if answers is None:
                return
            on_ = answers["on"].strip()
            reason = answers["reason"].strip() or None
            mid = head.memory_id
            self._confirm("expire", head, [f"  expires {on_} (a date: visible through that day in {head.tz})",
                                           f"  reason  {reason or '-'}"],
                          lambda store: store.expire(mid, on_, reason=reason))

        def check(answers: dict[str, str]) -> None:
            if not answers["on"].strip():
                raise InvalidInputError("give a date (2025-11-15) or an instant (2025-11-15T18:00:00Z)")

        self.app.push_screen(AskDialog(
            "Expire: hide it from default reads after a date",
            [("on", "Expires after (date or instant)", ""), ("reason", "Reason", "")], check=check), asked)

    def _confirm(self, op: str, head: Revision, lines: list[str], run: Any) -> None:
        def confirmed(yes: bool | None) -> None:
            if yes:
                self.status(f"appending the {op}…")
                self.load(run, self._written)

        self.app.push_screen(ConfirmDialog(f"Append a {op}?", self._preview(op, head, lines)), confirmed)

    def _written(self, rev: Revision) -> None:
        self.notify(f"appended v{rev.version} ({rev.op})")
        self.lm.data_written()
