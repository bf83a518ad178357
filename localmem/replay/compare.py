"""Perspectives: one question answered under several knowledge cutoffs, side by side.

A grader must say which it grades: *original-information correctness* (what
the app could know when it answered) or *corrected accuracy* (what is known
now). ``compare`` answers the same question at each cutoff and keeps each
answer with its cutoffs, so a disagreement reads as what it is: "valid 09:05 ·
known 09:05 → 396 / known 10:01 → 393", not an agent that saw the future.

The question is one of:

- a **memory id**: the answer is that memory as known at each cutoff (a
  :class:`~localmem.revision.Revision`, or None when it was not yet known);
- a **search query** (any other string; needs ``user_id``): the hits as known
  at each cutoff. These searches are not logged as usage: a comparison is an
  audit, not the app retrieving;
- a **function** of a :class:`~localmem.runs.View` pinned at each cutoff (its
  ``read()``, ``get()``, ``search()``): whatever it returns (the cash calculation).

``valid_at`` fixes the valid time for every perspective; without it each
perspective reads the world at its own cutoff (as ``as_of`` does).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ..core import reads
from ..core.ids import is_id
from ..core.inputs import check_text
from ..core.ledger import Ledger
from ..core.revision import Revision
from ..errors import InvalidInputError
from ..search.ranking import Hit
from ..time.clock import UTC_ZONE, TimeInput, from_micros, instant_micros
from .runs import View

__all__ = ["Perspective", "Comparison", "compare", "render_answer", "short_times"]


@dataclass(frozen=True, slots=True)
class Perspective:
    """One answer and the cutoffs it was read under."""

    known_at: datetime
    valid_at: datetime
    answer: Any


@dataclass(frozen=True, slots=True)
class Comparison:
    """A question answered under several knowledge cutoffs, oldest cutoff first as given.

    ``kind`` is ``memory``, ``search`` or ``function``; ``tz`` is the zone the
    times are rendered in.
    """

    question: str
    kind: str
    perspectives: tuple[Perspective, ...]
    tz: str = "UTC"

    @property
    def answers(self) -> list[Any]:
        """The answers, in the order of the cutoffs."""
        return [p.answer for p in self.perspectives]

    @property
    def agree(self) -> bool:
        """Whether every perspective gives the same answer (as rendered)."""
        return len({render_answer(a) for a in self.answers}) <= 1

    def render(self) -> str:
        """One line: ``valid 09:05 · known 09:05 → 396 / known 10:01 → 393``.

        Times are shown as HH:MM (seconds if any) when all fall on one day in
        ``tz``, else as dates and times; :meth:`header` names the day and zone.
        """
        times = [p.known_at for p in self.perspectives] + [p.valid_at for p in self.perspectives]
        fmt = short_times(times, self.tz)
        valids = {p.valid_at for p in self.perspectives}
        parts = [f"known {fmt(p.known_at)} → {render_answer(p.answer)}" for p in self.perspectives]
        if len(valids) == 1:
            return f"valid {fmt(next(iter(valids)))} · " + " / ".join(parts)
        return "valid = known · " + " / ".join(parts)

    def header(self) -> str:
        """What the times of :meth:`render` are in: the day (if one) and the zone."""
        from zoneinfo import ZoneInfo

        z = ZoneInfo(self.tz)
        days = {t.astimezone(z).date() for p in self.perspectives for t in (p.known_at, p.valid_at)}
        day = f"{next(iter(days)).isoformat()}, " if len(days) == 1 else ""
        return f"{self.kind} {self.question!r} ({day}times in {self.tz})"

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict; answers are rendered, with the full revisions or hits beside them."""
        def raw(a: Any) -> Any:
            if isinstance(a, Revision):
                return a.to_dict()
            if isinstance(a, list):
                return [raw(x) for x in a]
            if isinstance(a, Hit):
                return {"score": a.score, "revision": a.revision.to_dict()}
            return a if a is None or isinstance(a, int | float | str | bool | dict) else repr(a)

        return {"question": self.question, "kind": self.kind, "tz": self.tz, "agree": self.agree,
                "line": self.render(),
                "perspectives": [{"known_at": p.known_at.isoformat(), "valid_at": p.valid_at.isoformat(),
                                  "answer": render_answer(p.answer), "raw": raw(p.answer)}
                                 for p in self.perspectives]}


def short_times(times: Sequence[datetime], tz: str) -> Callable[[datetime], str]:
    """A formatter: HH:MM[:SS] when all ``times`` share a day in ``tz``, else date and time."""
    from zoneinfo import ZoneInfo

    z = ZoneInfo(tz)
    local = [t.astimezone(z) for t in times]
    one_day = len({t.date() for t in local}) <= 1
    seconds = any(t.second or t.microsecond for t in local)
    clock = "%H:%M:%S" if seconds else "%H:%M"

    def fmt(t: datetime) -> str:
        lt = t.astimezone(z)
        return lt.strftime(clock) if one_day else lt.strftime(f"%Y-%m-%d {clock}")

    return fmt


def _number(v: float) -> str:
    return str(int(v)) if v == int(v) else f"{v:g}"


def render_answer(answer: Any) -> str:
    """An answer as a short string: a memory's value (else text), hits' texts, a number."""
    if answer is None:
        return "(not known)"
    if isinstance(answer, Hit):
        return render_answer(answer.revision)
    if isinstance(answer, Revision):
        if answer.erased:
            return "[erased]"
        shown = render_answer(answer.value) if answer.value is not None else str(answer.text)
        flags = [f for f in ("retracted", "expired", "stale") if getattr(answer, f)]
        return shown + (f" ({', '.join(flags)})" if flags else "")
    if isinstance(answer, bool):
        return str(answer)
    if isinstance(answer, int | float):
        return _number(answer)
    if isinstance(answer, list | tuple):
        return "; ".join(render_answer(a) for a in answer) if answer else "(nothing)"
    return str(answer)


def compare(
    ledger: Ledger,
    question: str | Callable[[View], Any],
    *,
    known_at: Sequence[TimeInput],
    valid_at: TimeInput | None,
    user_id: str | None,
    name: str | None = None,
) -> Comparison:
    """See :meth:`localmem.store.Store.compare`."""
    if user_id is not None:
        check_text(user_id, "user_id")
    if name is not None:
        check_text(name, "name")
    if isinstance(known_at, str | bytes) or not isinstance(known_at, Sequence) or not known_at:
        raise InvalidInputError(
            f"known_at={known_at!r:.80} is not a list of times: give one or more cutoffs")
    kind: str
    label: str
    memory: Revision | None = None
    if callable(question):
        kind, label = "function", str(name or getattr(question, "__name__", "function"))
    elif isinstance(question, str) and question.strip():
        q = question.strip()
        if is_id(q) and ledger.exists(q.upper()):
            kind, label = "memory", q.upper()
            memory = ledger.state(label, writable=False)
            user_id = user_id or memory.user_id
        else:
            kind, label = "search", q
    else:
        raise InvalidInputError(
            f"question={question!r:.80} is not a question: expected a memory id, a search query "
            "or a function of a pinned view")
    if kind != "memory" and user_id is None:
        raise InvalidInputError(f"a {kind} comparison needs user_id=: whose memories to read")
    z = ledger.zone_for(None, user_id) if user_id is not None else UTC_ZONE
    if memory is not None:
        z = ledger.zone_for(memory.tz, memory.user_id)
    cutoffs = [instant_micros(k, name=f"known_at[{i}]", tz=z) for i, k in enumerate(known_at)]
    valid = None if valid_at is None else instant_micros(valid_at, name="valid_at", tz=z)
    out: list[Perspective] = []
    for known in cutoffs:
        v = known if valid is None else valid
        view = View(ledger, user_id, known, v)
        answer: Any
        if kind == "memory":
            answer = reads.get(ledger, label, known_at=from_micros(known), valid_at=from_micros(v))
        elif kind == "search":
            answer = view.search(label, log=False)
        else:
            assert callable(question)
            answer = question(view)
        out.append(Perspective(from_micros(known), from_micros(v), answer))
    return Comparison(label, kind, tuple(out), z.key)
