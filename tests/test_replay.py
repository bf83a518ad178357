"""Replay and audit through the API: scenario A's receipt and comparison rows, C1-C4, runs that
resume in another process, receipts that survive corrections, supersessions and erasures,
derived memories that go stale, and bad input that changes nothing."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers import dump, found

import localmem
from localmem.testing import FrozenClock

REPLAY_TABLES = ("runs", "run_events", "artifacts", "decisions", "decision_sources", "derivations")


def at(hhmm: str, day: str = "2026-03-02") -> str:
    return f"{day}T{hhmm}:00Z"


def cash(revs: list[localmem.Revision]) -> int:
    v = {r.key: r.value for r in revs}
    return int(v["opening"] - v["purchase"] - v["fee"])


def everything(store: localmem.Store) -> dict[str, Any]:
    conn = store.connection
    out: dict[str, Any] = dict(dump(conn))
    for t in (*REPLAY_TABLES, "usage"):
        out[t] = conn.execute(f"SELECT * FROM {t} ORDER BY 1").fetchall()
    return out


def fee_story(store: localmem.Store, clock: FrozenClock, correction_at: str = "10:00") -> str:
    """Scenario A up to (and including) the first correction; returns the fee's memory id."""
    clock.set(at("08:00"))
    store.add("opening balance", user_id="acct", key="opening", value=500, valid_from=at("08:00"))
    clock.set(at("09:00"))
    store.add("purchase", user_id="acct", key="purchase", value=100, valid_from=at("09:00"))
    clock.set(at("09:01"))
    fee = store.add("fee for fill 42", user_id="acct", key="fee", value=4, valid_from=at("09:00"))
    if correction_at < "09:05":
        clock.set(at(correction_at))
        store.correct(fee.memory_id, value=7, reason="fee service correction")
    return fee.memory_id


def decide(store: localmem.Store, clock: FrozenClock) -> localmem.Decision:
    clock.set(at("09:05"))
    run = store.run("fee-decision", user_id="acct")
    revs = run.read()
    return run.record_decision("compute cash", retrieved=revs, prompt=f"cash available: {cash(revs)}")


# -- scenario A -----------------------------------------------------------------------------


@pytest.fixture
def scenario_a(store: localmem.Store, clock: FrozenClock) -> tuple[str, localmem.Decision]:
    """Scenario A in full: the decision at 09:05, corrections at 10:00 (7) and 11:00 (6)."""
    fee = fee_story(store, clock)
    decision = decide(store, clock)
    clock.set(at("10:00"))
    store.correct(fee, value=7, reason="fee service correction")
    clock.set(at("11:00"))
    store.correct(fee, value=6, reason="restored")
    return fee, decision


def test_receipt_prompt_bytes_survive_the_correction(
    store: localmem.Store, scenario_a: tuple[str, localmem.Decision]
) -> None:
    """The receipt's prompt, read after both corrections, is still "cash available: 396", byte for byte."""
    _, decision = scenario_a
    again = store.decision(decision.decision_id)
    assert again.prompt == b"cash available: 396"
    assert again.prompt_sha256 == decision.prompt_sha256
    assert again.known_at.isoformat() == "2026-03-02T09:05:00+00:00"
    assert again.retrieved == decision.retrieved


def test_only_the_fee_4_revision_was_available_to_the_decision(
    store: localmem.Store, scenario_a: tuple[str, localmem.Decision]
) -> None:
    """available_at(decision) holds the fee only as its 4 revision, whatever was retrieved or came later."""
    fee, decision = scenario_a
    available = store.available_at(decision.decision_id)
    fees = [r for r in available if r.memory_id == fee]
    assert [(r.version, r.value) for r in fees] == [(1, 4)]
    assert sorted(r.value for r in available) == [4, 100, 500]


def test_comparison_of_the_two_perspectives(
    store: localmem.Store, scenario_a: tuple[str, localmem.Decision]
) -> None:
    """compare() of the cash shows 396 at known 09:05 and 393 at known 10:01, with their cutoffs."""
    c = store.compare(lambda v: cash(v.read()), user_id="acct", valid_at=at("09:05"),
                      known_at=[at("09:05"), at("10:01")], name="cash")
    assert c.answers == [396, 393]
    assert [p.known_at.isoformat() for p in c.perspectives] == [
        "2026-03-02T09:05:00+00:00", "2026-03-02T10:01:00+00:00"]
    assert c.render() == "valid 09:05 · known 09:05 → 396 / known 10:01 → 393"
    assert not c.agree
    later = store.compare(lambda v: cash(v.read()), user_id="acct", valid_at=at("09:05"),
                          known_at=[at("10:00"), at("10:30"), at("11:01")])
    assert later.answers == [393, 393, 394]


def test_comparison_of_the_fee_memory_and_of_a_search(
    store: localmem.Store, scenario_a: tuple[str, localmem.Decision]
) -> None:
    """A memory id compares its value (4 / 7 / 6); a query compares its hits, and logs no usage."""
    fee, _ = scenario_a
    c = store.compare(fee, valid_at=at("09:05"), known_at=[at("09:05"), at("10:01"), at("11:01")])
    assert c.kind == "memory"
    assert [r.value for r in c.answers] == [4, 7, 6]
    used = store.connection.execute("SELECT count(*) FROM usage").get
    s = store.compare("fee", user_id="acct", known_at=[at("09:05"), at("10:01")], valid_at=at("09:05"))
    assert s.kind == "search"
    assert [[h.revision.value for h in hits] for hits in s.answers] == [[4], [7]]
    assert store.connection.execute("SELECT count(*) FROM usage").get == used


def test_correction_before_the_decision_is_eligible(store: localmem.Store, clock: FrozenClock) -> None:
    """Variant: the 7 recorded at 09:03 is what the 09:05 decision sees (393), and all that was available."""
    fee = fee_story(store, clock, correction_at="09:03")
    decision = decide(store, clock)
    assert store.decision(decision.decision_id).prompt == b"cash available: 393"
    [available_fee] = [r for r in store.available_at(decision.decision_id) if r.memory_id == fee]
    assert (available_fee.version, available_fee.value) == (2, 7)
    c = store.compare(lambda v: cash(v.read()), user_id="acct", valid_at=at("09:05"), known_at=[at("09:05")])
    assert c.answers == [393]


def test_identical_prompts_are_stored_once(store: localmem.Store, clock: FrozenClock) -> None:
    """Two receipts with the same prompt bytes share one artifact row; a str is stored as its UTF-8 bytes."""
    fee_story(store, clock)
    clock.set(at("09:05"))
    run = store.run("r", user_id="acct")
    a = run.record_decision("one", prompt="café 396")
    b = run.record_decision("two", prompt="café 396".encode())
    assert a.prompt_sha256 == b.prompt_sha256
    assert store.connection.execute("SELECT count(*) FROM artifacts").get == 1
    assert store.decision(a.decision_id).prompt == "café 396".encode()


# -- scenario C -----------------------------------------------------------------------------


MONDAY, TUESDAY, WEDNESDAY, THURSDAY = "2026-03-02", "2026-03-03", "2026-03-04", "2026-03-05"


@pytest.fixture
def support(store: localmem.Store, clock: FrozenClock) -> dict[str, localmem.Revision]:
    """The support story: Monday's incident, Tuesday's preferences, Wednesday's summary."""
    clock.set(at("09:00", MONDAY))
    incident = store.add("Customer reported the outage", user_id="cust", kind="event")
    clock.set(at("10:00", TUESDAY))
    text_pref = store.add("Send updates by text, not email", user_id="cust", kind="preference")
    since_jan = store.add("Prefers text messages", user_id="cust", kind="preference", valid_from="2026-01-01",
                          observed_at=at("10:00", TUESDAY))
    clock.set(at("12:00", WEDNESDAY))
    summary = store.derive("Outage handled; customer wants text updates", from_=[incident, text_pref])
    return {"incident": incident, "text_pref": text_pref, "since_jan": since_jan, "summary": summary}


def test_c1_monday_replay_does_not_see_tuesdays_preference(
    store: localmem.Store, support: dict[str, localmem.Revision]
) -> None:
    """C1: a run pinned at Monday reads and searches without Tuesday's "send updates by text"."""
    run = store.run("monday", user_id="cust", known_at=at("18:00", MONDAY))
    assert [r.memory_id for r in run.read(current_only=False)] == [support["incident"].memory_id]
    assert run.search("text updates") == []
    assert run.get(support["text_pref"].memory_id) is None


def test_c2_preference_valid_since_january_is_not_in_the_monday_replay(
    store: localmem.Store, support: dict[str, localmem.Revision]
) -> None:
    """C2: valid from January, observed Tuesday: not in Monday's replay; "February, as known now" has it."""
    run = store.run("monday", user_id="cust", known_at=at("18:00", MONDAY))
    assert run.read(valid_at="2026-02-15T12:00:00Z") == []
    now = store.read("cust", valid_at="2026-02-15T12:00:00Z", known_at=at("12:00", THURSDAY))
    assert [r.text for r in now] == ["Prefers text messages"]


def test_c3_summary_invisible_to_monday_and_stale_after_thursdays_correction(
    store: localmem.Store, clock: FrozenClock, support: dict[str, localmem.Revision]
) -> None:
    """C3: Wednesday's summary is not in a Monday replay; a Thursday correction of a source makes it stale."""
    summary = support["summary"]
    monday = store.run("monday", user_id="cust", known_at=at("18:00", MONDAY))
    assert summary.memory_id not in {r.memory_id for r in monday.read(current_only=False)}
    assert monday.get(summary.memory_id) is None
    assert found(store.get(summary.memory_id, known_at=at("12:00", WEDNESDAY))).stale is False
    assert store.stale("cust") == []

    clock.set(at("09:00", THURSDAY))
    corrected = store.correct(support["text_pref"].memory_id, text="Send updates by text or email")
    [item] = store.stale("cust")
    assert item.revision.memory_id == summary.memory_id and item.stale
    [why] = item.staleness
    assert (why.reason, why.source_rev, why.newer_rev) == ("corrected", support["text_pref"].rev_id,
                                                           corrected.rev_id)
    assert found(store.get(summary.memory_id)).stale is True
    hits = store.search("outage", user_id="cust", log=False)
    assert {(h.revision.memory_id, h.revision.stale) for h in hits} == {
        (support["incident"].memory_id, False), (summary.memory_id, True)}
    # Known at Wednesday, it was not stale yet; a run pinned there agrees.
    assert store.stale("cust", known_at=at("12:00", WEDNESDAY)) == []
    wednesday = store.run("wed", user_id="cust", known_at=at("12:00", WEDNESDAY))
    assert found(wednesday.get(summary.memory_id)).stale is False
    assert store.provenance(summary.memory_id).sources == (support["incident"].rev_id,
                                                           support["text_pref"].rev_id)


@pytest.mark.parametrize(("op", "reason"), [("supersede", "superseded"), ("retract", "retracted")])
def test_every_kind_of_source_change_makes_a_summary_stale(
    store: localmem.Store, clock: FrozenClock, support: dict[str, localmem.Revision], op: str, reason: str
) -> None:
    """A supersession, a retraction or an erasure of a source flags the summary stale, naming why."""
    clock.set(at("09:00", THURSDAY))
    pref = support["text_pref"].memory_id
    replaced = None
    if op == "supersede":
        replaced = store.supersede(pref, "Send updates by carrier pigeon", valid_from=at("09:00", THURSDAY))
    elif op == "retract":
        store.retract(pref)
    else:
        store.erase(pref)
    [item] = store.stale("cust")
    [why] = item.staleness
    assert why.reason == reason
    assert why.replaced_by == (replaced.memory_id if replaced else None)
    assert why.newer_rev is not None


def test_erasing_a_source_erases_the_summary_instead_of_flagging_it(
    store: localmem.Store, clock: FrozenClock, support: dict[str, localmem.Revision]
) -> None:
    """A summary quotes its sources, so an erased source takes the summary with it (not just stale)."""
    clock.set(at("09:00", THURSDAY))
    summary = support["summary"]
    erasure = store.erase(support["text_pref"].memory_id)
    assert erasure.derived == (summary.memory_id,)
    assert store.stale("cust") == []
    assert store.erasure(summary.memory_id) is not None


def test_c4_run_sees_a_new_fact_only_after_it_advances(store: localmem.Store, clock: FrozenClock) -> None:
    """C4: pinned at step 3, a fact recorded in step 4 is invisible until the recorded advance at step 5."""
    clock.set(at("09:00"))
    store.add("Ticket opened", user_id="cust")
    run = store.run("agent", user_id="cust")
    for n in (1, 2, 3):
        clock.advance(minutes=1)
        run.step(f"step {n}")
    clock.advance(minutes=1)
    run.step("step 4")
    new = store.add("Customer: use SMS from now on", user_id="cust")
    assert new.memory_id not in {r.memory_id for r in run.read()}
    assert run.search("SMS") == []
    clock.advance(minutes=1)
    event = run.advance(step="step 5")
    assert event.known_at == clock()
    assert new.memory_id in {r.memory_id for r in run.read()}
    kinds = [(e.kind, e.step) for e in run.events()]
    assert kinds == [("start", None), ("step", "step 1"), ("step", "step 2"), ("step", "step 3"),
                     ("step", "step 4"), ("advance", "step 5")]
    assert run.events()[-1].known_at > run.events()[-2].known_at


# -- resuming -------------------------------------------------------------------------------


_CHILD = """
import json, sys
import localmem
from localmem.testing import FrozenClock
store = localmem.open(sys.argv[1], clock=FrozenClock("2026-03-02T12:00:00Z"))
run = store.run("long")
out = {"known_at": run.known_at.isoformat(), "texts": [r.text for r in run.read()],
       "events": [e.kind for e in run.events()]}
run.step("resumed in the child")
print(json.dumps(out))
store.close()
"""


@pytest.mark.slow
def test_run_resumed_in_a_second_process_keeps_its_cutoff(db_path: Path, clock: FrozenClock) -> None:
    """A run started here and resumed in a subprocess reads at the same cutoff, not the later facts."""
    clock.set(at("09:00"))
    with localmem.open(db_path, clock=clock) as store:
        store.add("Fact known at the start", user_id="u")
        clock.set(at("09:05"))
        run = store.run("long", user_id="u")
        run.step("checkpoint")
        clock.set(at("09:10"))
        store.add("Fact recorded after the cutoff", user_id="u")
    result = subprocess.run([sys.executable, "-c", _CHILD, str(db_path)], capture_output=True,
                            text=True, timeout=60, check=True, cwd=Path(__file__).parent.parent)
    child = json.loads(result.stdout)
    assert child == {"known_at": "2026-03-02T09:05:00+00:00", "texts": ["Fact known at the start"],
                     "events": ["start", "step"]}
    with localmem.open(db_path, clock=clock) as store:
        assert [e.step for e in store.run("long").events()] == [None, "checkpoint", "resumed in the child"]


def test_a_stale_view_cannot_move_the_run(store: localmem.Store, clock: FrozenClock) -> None:
    """Once one view of a run advances, another view's step raises RunConflictError; its reads stay pinned."""
    store.add("a", user_id="u")
    one = store.run("r", user_id="u")
    two = store.run("r")
    clock.advance(minutes=5)
    store.add("b", user_id="u")
    one.advance(step="go")
    with pytest.raises(localmem.RunConflictError, match="moved on elsewhere"):
        two.step("late")
    assert [r.text for r in two.read()] == ["a"]
    assert [r.text for r in store.run("r").read()] == ["a", "b"]


# -- receipts survive --------------------------------------------------------------------------


def test_receipt_survives_supersession_and_erasure_without_leaking(
    store: localmem.Store, clock: FrozenClock
) -> None:
    """A receipt keeps its ids and bytes after supersession and erasure; erased citations read as erased."""
    clock.set(at("09:00"))
    city = store.add("Lives in Lisbon", user_id="u", key="city", valid_from="2024-01-01")
    secret = store.add("Ex-partner is called Alex", user_id="u")
    clock.set(at("09:05"))
    run = store.run("r", user_id="u")
    d = run.record_decision("reply", retrieved=run.search("Lisbon") + [secret], prompt="Lisbon; Alex",
                            output=b"\x00ok\xff")
    clock.set(at("10:00"))
    store.add("Lives in Berlin", user_id="u", key="city", valid_from="2026-03-01")
    store.erase(secret.memory_id, reason="user asked")

    again = store.decision(d.decision_id)
    assert again.prompt == b"Lisbon; Alex" and again.output == b"\x00ok\xff"
    assert again.retrieved == (city.rev_id, secret.rev_id)
    cited = store.cited(d.decision_id)
    assert [r.rev_id for r in cited] == [city.rev_id, secret.rev_id]
    assert cited[0].text == "Lives in Lisbon"
    assert (cited[1].erased, cited[1].text, cited[1].value, cited[1].source) == (True, None, None, None)
    erased = [r for r in store.available_at(d.decision_id) if r.memory_id == secret.memory_id]
    assert [(r.erased, r.text) for r in erased] == [(True, None)]
    assert "Alex" not in json.dumps([r.to_dict() for r in cited + store.available_at(d.decision_id)])
    assert [x.decision_id for x in store.decisions(citing=secret.memory_id)] == [d.decision_id]


# -- derived memories -----------------------------------------------------------------------


def test_derived_memory_is_invisible_before_its_own_recorded_time(
    store: localmem.Store, clock: FrozenClock
) -> None:
    """Sources known at 09:00, summary recorded at 12:00: a read known at 11:00 has the sources, not it."""
    clock.set(at("09:00"))
    a = store.add("ran 5k", user_id="u", valid_from="2026-03-01")
    b = store.add("ran 10k", user_id="u", valid_from="2026-03-02")
    clock.set(at("12:00"))
    s = store.derive("ran 15k this week", from_=[a, b.rev_id])
    assert s.op == "derive" and s.kind == "summary"
    assert (s.valid_from, s.valid_to, s.valid_source) == (a.valid_from, None, "assumed")
    ids = {r.memory_id for r in store.read("u", known_at=at("11:00"), current_only=False)}
    assert ids == {a.memory_id, b.memory_id}
    assert s.memory_id in {r.memory_id for r in store.read("u", known_at=at("12:00"), current_only=False)}
    assert store.snapshot("u", known_at=at("11:59")).memories == store.snapshot(
        "u", known_at=at("11:00")).memories


def test_derive_can_supersede_an_earlier_summary(store: localmem.Store, clock: FrozenClock) -> None:
    """A re-derivation that supersedes the stale summary is fresh, and the old one leaves current reads."""
    a = store.add("fee 4", user_id="u", value=4, valid_from=at("07:00"))
    old = store.derive("total 4", from_=[a], valid_from=at("07:00"))
    clock.advance(hours=1)
    newer = store.correct(a.memory_id, value=7)
    assert [p.revision.memory_id for p in store.stale("u")] == [old.memory_id]
    clock.advance(hours=1)
    fresh = store.derive("total 7", from_=[newer], supersedes=old.memory_id, valid_from=at("08:30"))
    assert fresh.supersedes == old.memory_id
    assert store.stale("u") == []
    assert {r.text for r in store.read("u", valid_at=at("09:30"))} == {"fee 4", "total 7"}


# -- bad input changes nothing --------------------------------------------------------------


def _bad_calls(store: localmem.Store, clock: FrozenClock) -> list[tuple[Any, type[Exception], str]]:
    clock.set(at("09:00"))
    mine = store.add("mine", user_id="u")
    theirs = store.add("theirs", user_id="v")
    run = store.run("r", user_id="u")
    clock.set(at("10:00"))
    later = store.add("later", user_id="u")
    from datetime import datetime

    naive = datetime(2026, 3, 2, 9, 0)  # noqa: DTZ001 - the naive datetime under test
    return [
        (lambda: store.run("nope"), localmem.NotFoundError, "no run with id 'nope'"),
        (lambda: store.run("", user_id="u"), localmem.InvalidInputError, "run_id"),
        (lambda: store.run("n", user_id="u", known_at=naive), localmem.NaiveDatetimeError, "no time zone"),
        (lambda: store.run("n", user_id="u", known_at=at("11:00")), localmem.InvalidOperationError,
         "in the future"),
        (lambda: store.run("r", user_id="v"), localmem.InvalidOperationError, "belongs to user 'u'"),
        (lambda: store.run("r", known_at=at("09:30")), localmem.InvalidOperationError, "advance it"),
        (lambda: run.advance(step="back", to=at("08:00")), localmem.InvalidOperationError,
         "only moves forwards"),
        (lambda: run.advance(step="x", to=naive), localmem.NaiveDatetimeError, "no time zone"),
        (lambda: run.advance(step="x", to=at("12:00")), localmem.InvalidOperationError, "in the future"),
        (lambda: run.step(""), localmem.InvalidInputError, "step"),
        (lambda: run.record_decision("d", retrieved=[later], prompt="p"), localmem.InvalidOperationError,
         "after the run's cutoff"),
        (lambda: run.record_decision("d", retrieved=[theirs], prompt="p"), localmem.InvalidOperationError,
         "belongs to user 'v'"),
        (lambda: run.record_decision("d", retrieved=["X" * 26], prompt="p"), localmem.NotFoundError,
         "no revision"),
        (lambda: run.record_decision("d", retrieved=[mine.memory_id], prompt="p"), localmem.NotFoundError,
         "that is a memory id"),
        (lambda: run.record_decision("d", retrieved=[mine, mine], prompt="p"), localmem.InvalidInputError,
         "twice"),
        (lambda: run.record_decision("d", prompt=42),  # type: ignore[arg-type]  # deliberately wrong
         localmem.InvalidInputError, "not bytes or text"),
        (lambda: run.record_decision("d", prompt="p", meta=[1]),  # type: ignore[arg-type]  # deliberately wrong
         localmem.InvalidInputError, "not a dict"),
        (lambda: store.decision("Z" * 26), localmem.NotFoundError, "no decision"),
        (lambda: store.available_at("nope"), localmem.NotFoundError, "no decision"),
        (lambda: store.derive("s", from_=[]), localmem.InvalidInputError, "at least one source"),
        (lambda: store.derive("s", from_="abc"), localmem.InvalidInputError, "not a list"),
        (lambda: store.derive("s", from_=["Q" * 26]), localmem.NotFoundError, "no revision"),
        (lambda: store.derive("s", from_=[mine, theirs]), localmem.InvalidOperationError,
         "belongs to user 'v'"),
        (lambda: store.derive("s", from_=[mine], user_id="v"), localmem.InvalidOperationError,
         "not 'v'"),
        (lambda: store.provenance(mine.memory_id), localmem.InvalidOperationError, "not derived"),
        (lambda: store.compare("q", known_at=[at("09:00")]), localmem.InvalidInputError, "needs user_id"),
        (lambda: store.compare("q", user_id="u", known_at=[]), localmem.InvalidInputError, "cutoffs"),
        (lambda: store.compare("q", user_id="u", known_at=[naive]), localmem.NaiveDatetimeError,
         "known_at\\[0\\]"),
        (lambda: store.knowledge_diff("u", since=at("10:00"), until=at("09:00")), localmem.InvalidInputError,
         "not after"),
    ]


def test_bad_input_raises_a_clear_error_and_changes_nothing(
    store: localmem.Store, clock: FrozenClock
) -> None:
    """Each refused call raises its error naming the bad value, and leaves every table as it was."""
    calls = _bad_calls(store, clock)
    before = everything(store)
    for call, error, message in calls:
        with pytest.raises(error, match=message):
            call()
        assert everything(store) == before, message


def test_erased_source_cannot_be_derived_from(store: localmem.Store) -> None:
    """Deriving from a revision of an erased memory raises ErasedError and writes nothing."""
    gone = store.add("secret", user_id="u")
    store.erase(gone.memory_id)
    before = everything(store)
    with pytest.raises(localmem.ErasedError, match="erased"):
        store.derive("s", from_=[gone])
    assert everything(store) == before


def test_cutoff_trigger_refuses_a_backwards_advance_from_any_client(store: localmem.Store) -> None:
    """Inserting an advance that moves a run's cutoff backwards is refused by the schema itself."""
    run = store.run("r", user_id="u")
    with pytest.raises(localmem.IntegrityError, match="only forwards"), store.batch():
        store.connection.execute(
            "INSERT INTO run_events (run_id, position, kind, step, known_at, recorded_at)"
            " VALUES ('r', 2, 'advance', 'x', ?, ?)", (0, 2_000_000_000_000_000))
    assert len(run.events()) == 1


def test_knowledge_diff_lists_what_was_learned_corrected_and_retracted(
    store: localmem.Store, clock: FrozenClock
) -> None:
    """Between two times, the diff names each learned, corrected, retracted and erased memory."""
    clock.set(at("09:00"))
    fee = store.add("fee", user_id="u", value=4)
    old = store.add("old note", user_id="u")
    gone = store.add("gone", user_id="u")
    clock.set(at("10:00"))
    store.correct(fee.memory_id, value=7)
    store.retract(old.memory_id)
    store.erase(gone.memory_id)
    new = store.add("new fact", user_id="u")
    diff = store.knowledge_diff("u", since=at("09:30"), until=at("10:30"))
    assert {(e.change, e.memory_id) for e in diff.entries} == {
        ("corrected", fee.memory_id), ("retracted", old.memory_id), ("erased", gone.memory_id),
        ("learned", new.memory_id)}
    [c] = diff.of("corrected")
    assert (found(c.before).value, found(c.after).value) == (4, 7)
    assert "gone" not in json.dumps(diff.to_dict())


def test_knowledge_diff_shows_each_change_with_the_value_it_wrote(
    store: localmem.Store, clock: FrozenClock
) -> None:
    """Learned at 4, corrected to 7, then to 6: three entries, each with its own values."""
    clock.set(at("09:00"))
    fee = store.add("fee", user_id="u", value=4)
    clock.set(at("10:00"))
    store.correct(fee.memory_id, value=7)
    clock.set(at("10:15"))
    store.correct(fee.memory_id, value=6)
    diff = store.knowledge_diff("u", since=at("08:00"), until=at("11:00"))
    steps = [(e.change, None if e.before is None else e.before.value, e.revision.value) for e in diff.entries]
    assert steps == [("learned", None, 4), ("corrected", 4, 7), ("corrected", 7, 6)]
    assert {e.after.value for e in diff.entries} == {6}
