"""The history screen: every revision of one memory, and the links along its chain.

Each revision shows its op, the old → new text as a word diff (and the value,
when it changed), the old and new valid intervals, recorded_at, observed_at,
source and reason. The links (what a correction corrects, what this memory
supersedes or is superseded by) are an option list: Enter follows one. With
``--write`` the memory can be corrected, retracted or given an expiry, each
after a dialog that shows the revision about to be appended; nothing is ever
edited in place.

Everything is read at the header's clocks (:func:`tui.asof.read_history`):
the title is the memory as known at known_at, the changes are those
recorded by then, and the links are the chain as it stood then, so a link
never leads to a memory that was not yet known. Following links leaves a
breadcrumb (Esc walks back along it).
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any, ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.content import Content
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from localmem import UNSET, Change, InvalidInputError, Revision, Store
from localmem.present import flags_text, interval, local_time, memory_text, parse_json, value_text

from ..asof import HistoryData, read_history
from ..format import count, expiry_text, op_noun, word_diff
from ..state import parse_expiry
from .base import ExportJob, ViewScreen
from .dialogs import AskDialog, ConfirmDialog

__all__ = ["HistoryScreen", "HistoryData", "change_card", "link_labels", "title_text"]


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
        if c.expires_at is not None and (first or c.op == "expire"):
            lines.append(f"  expiry {expiry_text(c.expires_at, tz)}")
        if c.op == "retract":
            lines.append("  retracted: hidden from current reads from now on")
    for label, v in (("source", c.source), ("reason", c.reason)):
        if v is not None:
            lines.append(f"  {label} {v if isinstance(v, str) else json.dumps(v)}")
    return Content("\n").join(Content(x) if isinstance(x, str) else x for x in lines)


def title_text(data: HistoryData) -> str:
    """The memory as known at known_at, with its flags then (or why there is nothing to show)."""
    head = data.head
    if head is None:
        return f"memory {data.memory_id} was not yet recorded at known_at (k sets a later time)"
    key = f"   key {head.key}" if head.key else ""
    flags = flags_text(head)
    return f"{memory_text(head)}{f'   [{flags}]' if flags else ''}   {head.kind}{key}   id {head.memory_id}"


def link_labels(data: HistoryData) -> list[tuple[str, str]]:
    """The links as (target, label): corrections within the memory, then the chain as known at known_at."""
    out: list[tuple[str, str]] = []
    for c in data.changes:
        if c.op == "correct" and c.version is not None:
            out.append((f"rev:v{c.version - 1}", f"v{c.version} corrects v{c.version - 1}  (jump to it)"))
    ids = [r.memory_id for r in data.chain]
    here = ids.index(data.memory_id) if data.memory_id in ids else 0
    for i, rev in enumerate(data.chain):
        if rev.memory_id == data.memory_id:
            continue
        rel = "supersedes" if i < here else "superseded by"
        if abs(i - here) != 1:
            rel = "chain"
        out.append((f"mem:{rev.memory_id}", f"{rel}: {memory_text(rev)}  ({interval(rev.valid)})"))
    return out


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

    def __init__(self, memory_id: str, *, known_at: datetime | None = None, pin_note: str = "",
                 trail: tuple[str, ...] = ()) -> None:
        super().__init__(known_at=known_at, pin_note=pin_note)
        self.memory_id = memory_id
        self.trail = trail
        self.data: HistoryData | None = None

    def compose(self) -> ComposeResult:
        yield from self.compose_header()
        yield Static("", id="breadcrumb")
        yield Static("", id="memory-title")
        yield VerticalScroll(id="changes")
        yield Static("Links (l, then Enter to follow)", classes="section")
        yield OptionList(id="links")
        yield from self.compose_footer()

    def reload(self) -> None:
        """Read the memory's title, changes and chain, all at the header's clocks."""
        source = self.lm.source
        if source is None:
            return
        memory_id, view, write = self.memory_id, self.view, self.lm.write
        known, valid = view.known(source.clock), view.valid(source.clock)

        def job(store: Store) -> HistoryData:
            return read_history(store, memory_id, known, valid, newest=write)

        self.status("loading…")
        self.load(job, self._show)

    def _show(self, data: HistoryData) -> None:
        self.data = data
        tz = data.head.tz if data.head is not None else self.view.tz
        crumbs = self.trail + (self.crumb(),)
        self.query_one("#breadcrumb", Static).update(
            Content.assemble(("History: ", "dim"), " › ".join(crumbs)) if len(crumbs) > 1 else "")
        self.query_one("#memory-title", Static).update(title_text(data))
        box = self.query_one("#changes", VerticalScroll)
        box.remove_children()
        box.mount_all([Static(change_card(c, tz), classes=f"change rev-v{c.version or 0}")
                       for c in data.changes])
        links = self.query_one("#links", OptionList)
        links.clear_options()
        labels = link_labels(data)
        links.add_options([Option(label, id=target) for target, label in labels] or
                          [Option("(no links: not corrected, not part of a chain)", disabled=True)])
        if data.head is None:
            self.status("nothing recorded by known_at")
        else:
            self.status(f"{count(len(data.changes), 'revision')} recorded by known_at, oldest first; "
                        "nothing is ever edited in place")

    def crumb(self) -> str:
        """This memory's short name in a breadcrumb."""
        if self.data is None or self.data.head is None:
            return self.memory_id[:8]
        text = memory_text(self.data.head)
        return text if len(text) <= 28 else text[:27] + "…"

    @on(OptionList.OptionSelected, "#links")
    def _follow(self, event: OptionList.OptionSelected) -> None:
        target = event.option.id or ""
        kind, _, ref = target.partition(":")
        if kind == "mem":
            self.lm.open_history(ref, known_at=self.pinned, pin_note=self._pin_note,
                                 trail=(*self.trail, self.crumb()))
        elif kind == "rev":
            for card in self.query(f".rev-{ref}"):
                card.scroll_visible()
                card.add_class("flash")
                self.set_timer(1.0, lambda c=card: c.remove_class("flash"))

    def action_back(self) -> None:
        """Back to the screen below (one step back along the breadcrumb)."""
        self.app.pop_screen()

    def action_links(self) -> None:
        """Focus the links, the first one highlighted."""
        links = self.query_one("#links", OptionList)
        links.focus()
        if links.highlighted is None and links.option_count:
            links.highlighted = 0

    def action_timeline(self) -> None:
        """The timeline of this memory's key."""
        head = self.data.head if self.data is not None else None
        if head is not None and head.key:
            self.lm.open_timeline(head.key)
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
        head = self.data.latest
        if head is None:
            return None
        if head.erased:
            self.notify("this memory was erased: it takes no more writes", severity="error")
            return None
        return head

    def _preview(self, op: str, head: Revision, lines: list[str]) -> Content:
        now = local_time(self.lm.source.clock() if self.lm.source else None, head.tz, seconds=True)
        body = [f"append revision v{head.version + 1} (op {op}) to memory {head.memory_id}",
                f"  newest  {memory_text(head)}", *lines,
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
        """Ask for the expiry (a date, an instant or a phrase), show the revision, append it on yes."""
        head = self._writable()
        if head is None or self.lm.source is None:
            return
        clock, tz = self.lm.source.clock, head.tz

        def check(answers: dict[str, str]) -> tuple[str | datetime, str]:
            return parse_expiry(answers["on"], now=clock(), tz=tz)

        def asked(answers: dict[str, str] | None) -> None:
            if answers is None:
                return
            on_, reads = check(answers)
            reason = answers["reason"].strip() or None
            mid = head.memory_id
            self._confirm("expire", head, [f"  expiry  {reads}", f"  reason  {reason or '-'}"],
                          lambda store: store.expire(mid, on_, reason=reason))

        self.app.push_screen(AskDialog(
            "Expire: hide it from default reads after a date",
            [("on", "Visible through (a date, an instant or a phrase)", ""), ("reason", "Reason", "")],
            hint=f"2026-12-31 (visible through that day) · 2026-12-31 18:00 (hidden from then) · "
                 f"next friday · end of the month   (read on {tz} wall clock)",
            check=check), asked)

    def _confirm(self, op: str, head: Revision, lines: list[str], run: Any) -> None:
        def confirmed(yes: bool | None) -> None:
            if yes:
                self.status(f"appending the {op}…")
                self.load(run, self._written)

        noun = op_noun(op)
        article = "an" if noun[0] in "aeiou" else "a"
        dialog = ConfirmDialog(f"Append {article} {noun}?", self._preview(op, head, lines))
        self.app.push_screen(dialog, confirmed)

    def _written(self, rev: Revision) -> None:
        self.notify(f"appended v{rev.version} ({rev.op})")
        self.lm.data_written()

    def copy_choices(self) -> list[tuple[str, str]]:
        """The memory's id, or its text as known at known_at."""
        head = self.data.head if self.data is not None else None
        if head is None:
            return [("memory id", self.memory_id)]
        return [("memory id", self.memory_id), ("text", memory_text(head))]

    def export_job(self) -> ExportJob | None:
        """The changes shown: those recorded by known_at."""
        if self.data is None:
            return None
        records = [c.to_dict() for c in self.data.changes]

        def job(store: Store) -> list[dict[str, Any]]:
            return records

        return job
