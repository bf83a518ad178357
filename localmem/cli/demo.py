"""The demo stories: the fee corrected twice, and Sam on the Stride coach app.

``build(path)`` writes both stories into a fresh database on a scripted clock
(so every recorded_at is the story's, not today's); ``summary(store)`` reads
them back the way the scenarios ask and returns the lines to print.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

from ..store import Store, open
from ..testing import FrozenClock

__all__ = ["build", "summary", "FEE_USER", "SAM"]

FEE_USER = "acct-7"
SAM = "sam"
_FILL = "2026-03-02T09:00:00Z"


def _remove(path: Path) -> None:
    for suffix in ("", "-wal", "-shm", "-journal"):
        p = Path(str(path) + suffix)
        if p.exists():
            p.unlink()


def build(path: str | os.PathLike[str]) -> Store:
    """Rebuild the demo database at ``path`` and return it open.

    The file is deleted and written anew, so running the demo never touches a
    user's own memories (it is a separate file) and always shows the same story.
    """
    target = Path(path)
    if str(target) != ":memory:":
        _remove(target)
    clock = FrozenClock("2025-06-16T12:00:00Z")
    store = open(target, clock=clock)
    # Stories in the order they happened: recorded time never goes backwards.
    with store.batch():
        _sam_story(store, clock)
    with store.batch():
        _fee_story(store, clock)
    return store


def _fee_story(store: Store, clock: FrozenClock) -> None:
    # Scenario A: every fact effective at the 09:00 fill, recorded at different times.
    clock.set("2026-03-02T08:00:00Z")
    store.add("opening balance", user_id=FEE_USER, key="opening_balance", value=500,
              valid_from="2026-03-02T08:00:00Z", tz="UTC", kind="account")
    clock.set("2026-03-02T09:00:00Z")
    store.add("purchase cost", user_id=FEE_USER, key="purchase", value=100,
              valid_from=_FILL, kind="account", source="fill 42")
    clock.set("2026-03-02T09:01:00Z")
    fee = store.add("fee for fill 42", user_id=FEE_USER, key="fee", value=4,
                    valid_from=_FILL, kind="account", source="fee service")
    clock.set("2026-03-02T10:00:00Z")
    store.correct(fee.memory_id, value=7, reason="fee service correction", source="fee service")
    clock.set("2026-03-02T11:00:00Z")
    store.correct(fee.memory_id, value=6, reason="fee restored to 6", source="fee service")


def _sam_story(store: Store, clock: FrozenClock) -> None:
    # Scenario B, imported in bulk on the day the coach app switched to localmem.
    clock.set("2025-06-16T12:00:00Z")
    store.add_messages(
        [{"role": "user", "content": "I ran my first 10K last weekend, finished in 58 minutes.",
          "sent_at": 1750075200},
         {"role": "assistant", "content": "Great first 10K!", "sent_at": 1750075260}],
        user_id=SAM, tz="Europe/Berlin", kind="event",
    )
    store.add("Sam lives in Lisbon", user_id=SAM, key="home_city", valid_from="2023-05",
              kind="fact")
    store.add("Sam is vegetarian", user_id=SAM, key="diet", valid_from="2024-01")
    store.add("Sam is allergic to penicillin", user_id=SAM, valid_from="2023-11", kind="health")
    clock.set("2025-07-02T18:00:00Z")
    knee = store.add("Sam injured the left knee", user_id=SAM, valid_from="2025-07-01",
                     kind="health")
    clock.set("2025-03-01T09:00:00Z")  # a late clock: recorded time does not go back
    clock.set("2025-07-20T08:00:00Z")
    store.correct(knee.memory_id, text="Sam injured the left knee (patellar tendinitis)",
                  reason="physio diagnosis")
    clock.set("2025-09-03T19:00:00Z")
    store.add("Sam lives in Berlin", user_id=SAM, key="home_city", valid_from="2025-09-01",
              observed_at="2025-09-03T18:55:00+02:00")
    store.add("Sam eats fish", user_id=SAM, key="diet", valid_from="2025-03-01")
    store.add("Training for the Berlin half marathon on Nov 15", user_id=SAM, kind="goal",
              valid_from="2025-09-03", expires="2025-11-15")


def _cash(store: Store, known_at: str, valid_at: str = "2026-03-02T09:05:00Z") -> tuple[int, int]:
    values = {r.key: r.value for r in store.read(FEE_USER, known_at=known_at, valid_at=valid_at)}
    return values["opening_balance"] - values["purchase"] - values["fee"], values["fee"]


def summary(store: Store) -> Iterator[str]:
    """The lines ``localmem demo`` prints: what each story shows."""
    yield "One fee, two answers (scenario A): cash = 500 - 100 - fee, valid at 09:05"
    for known in ("09:05", "10:00", "10:01", "10:30", "11:01"):
        cash, fee = _cash(store, f"2026-03-02T{known}:00Z")
        yield f"  valid 09:05 · known {known} → cash {cash} (fee {fee})"
    fee_id = store.read(FEE_USER, key="fee", as_of="2026-03-02T12:00:00Z")[0].memory_id
    steps = [str(c.new_value) for c in store.history(fee_id)]
    yield f"  history of the fee: {' → '.join(steps)} (each revision kept, none overwritten)"
    yield ""
    yield "Sam on the Stride coach app (scenario B)"
    now = "2025-10-01"
    views: tuple[tuple[str, dict[str, str]], ...] = (
        ("current on 2025-10-01", {"as_of": now}),
             ("valid on 2024-06-01, as known on 2025-10-01",
              {"known_at": now, "valid_at": "2024-06-01"}))
    for label, axes in views:
        texts = [r.text or "" for r in store.read(
            SAM, kind="fact", as_of=axes.get("as_of"), known_at=axes.get("known_at"),
            valid_at=axes.get("valid_at"))]
        yield f"  {label}: {'; '.join(texts)}"
    yield "  home_city over valid time:"
    for r in store.read(SAM, key="home_city", current_only=False, as_of=now):
        yield f"    {r.text}: {r.valid}"
    run = store.read(SAM, kind="event", current_only=False, as_of=now)[0]
    yield f"  the 10K, said {run.observed_at:%Y-%m-%d}: {run.source['message']!r}"
    yield f"    stored as {run.text!r}"
    yield f"    valid {run.valid} ({run.precision}, {run.valid_source}), observed {run.observed_at:%Y-%m-%d}"
    for at in ("2025-11-15T23:30:00+01:00", "2025-11-16T00:30:00+01:00"):
        goals = store.read(SAM, as_of=at, kind="goal")
        state = "visible" if goals else "hidden (expired, still stored)"
        yield f"  goal at {at}: {state}"
    hill = "2025-07-01T17:00:00Z"
    held = {r.text or "" for r in store.snapshot(SAM, known_at=hill).memories}
    injured = any("knee" in t for t in held)
    yield f"  'you forgot': at the hill session ({hill}) the knee injury was "\
          f"{'known' if injured else 'not yet known'}; it was recorded 2025-07-02"
