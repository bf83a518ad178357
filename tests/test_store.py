"""The acceptance scenarios through the Python API (SCENARIOS.md A, B3, B4, B8, C1, C2)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

import localmem
from localmem.testing import FrozenClock

FILL = "2026-03-02T09:00:00Z"
DECISION = "2026-03-02T09:05:00Z"


def at(hhmm: str) -> str:
    return f"2026-03-02T{hhmm}:00Z"


def cash(store: localmem.Store, *, known_at: str, valid_at: str = DECISION) -> int:
    v = {r.key: r.value for r in store.read("acct", known_at=known_at, valid_at=valid_at)}
    return int(v["opening"] - v["purchase"] - v["fee"])


def record_fee(store: localmem.Store, clock: FrozenClock) -> localmem.Revision:
    """Balance 500 (08:00), purchase 100 (09:00) and a fee of 4 (09:01), all valid at the fill."""
    clock.set(at("08:00"))
    store.add("opening balance", user_id="acct", key="opening", value=500, valid_from=at("08:00"))
    clock.set(at("09:00"))
    store.add("purchase", user_id="acct", key="purchase", value=100, valid_from=FILL)
    clock.set(at("09:01"))
    return store.add("fee", user_id="acct", key="fee", value=4, valid_from=FILL)


@pytest.fixture
def fee(store: localmem.Store, clock: FrozenClock) -> localmem.Revision:
    """Scenario A: balance, purchase and a fee of 4, then corrections to 7 (10:00) and 6 (11:00)."""
    first = record_fee(store, clock)
    clock.set(at("10:00"))
    store.correct(first.memory_id, value=7, reason="fee service correction")
    clock.set(at("11:00"))
    store.correct(first.memory_id, value=6, reason="restored")
    clock.set(at("12:00"))
    return first


# -- A. One fee, two answers --------------------------------------------------


def test_cash_known_at_the_decision_is_396(store: localmem.Store, fee: localmem.Revision) -> None:
    """Known at 09:05, the cash valid at 09:05 uses the fee of 4."""
    assert cash(store, known_at=at("09:05")) == 396


def test_cash_known_after_the_correction_is_393(store: localmem.Store, fee: localmem.Revision) -> None:
    """Known at 10:01, the corrected fee of 7 gives 393."""
    assert cash(store, known_at=at("10:01")) == 393


def test_correction_is_seen_exactly_at_its_recorded_time(
    store: localmem.Store, fee: localmem.Revision
) -> None:
    """Half-open record time: a read at exactly 10:00 sees the 10:00 correction."""
    assert cash(store, known_at=at("10:00")) == 393
    assert cash(store, known_at="2026-03-02T09:59:59.999999Z") == 396


def test_second_correction_restores_six(store: localmem.Store, fee: localmem.Revision) -> None:
    """A correction of a correction starts a new record interval: 393 at 10:30, 394 at 11:01."""
    assert cash(store, known_at=at("10:30")) == 393
    assert cash(store, known_at=at("11:01")) == 394


def test_fee_history_keeps_every_revision(store: localmem.Store, fee: localmem.Revision) -> None:
    """The fee's history is 4 → 7 → 6, each with its recorded time and a link to what it corrects."""
    changes = store.history(fee.memory_id)
    assert [c.new_value for c in changes] == [4, 7, 6]
    assert [c.old_value for c in changes] == [None, 4, 7]
    assert [c.op for c in changes] == ["assert", "correct", "correct"]
    assert [c.recorded_at for c in changes] == [
        datetime(2026, 3, 2, h, m, tzinfo=UTC) for h, m in ((9, 1), (10, 0), (11, 0))
    ]
    assert changes[0].link is None
    assert changes[1].link == changes[0].rev_id
    assert changes[2].link == changes[1].rev_id
    assert changes[1].reason == "fee service correction"
    assert all(c.old_valid == c.new_valid for c in changes[1:])


def test_only_the_fee_of_four_was_available_at_the_decision(
    store: localmem.Store, fee: localmem.Revision
) -> None:
    """The snapshot at 09:05 holds exactly one fee revision: the 4."""
    snap = store.snapshot("acct", known_at=DECISION)
    fees = [r for r in snap.revisions if r.key == "fee"]
    assert [(r.rev_id, r.value) for r in fees] == [(fee.rev_id, 4)]


def test_correction_received_before_the_decision_is_eligible(
    store: localmem.Store, clock: FrozenClock
) -> None:
    """Variant: the 7 recorded at 09:03 is part of a 09:05 replay, giving 393."""
    first = record_fee(store, clock)
    clock.set(at("09:03"))
    store.correct(first.memory_id, value=7)
    clock.set(at("12:00"))
    assert cash(store, known_at=at("09:05")) == 393
    assert cash(store, known_at=at("09:02")) == 396


def test_other_numbers_and_a_corrected_valid_time(store: localmem.Store, clock: FrozenClock) -> None:
    """A correction that moves valid time changes what is valid when, per knowledge cutoff."""
    clock.set(at("09:00"))
    m = store.add("fee", user_id="u", value=12, valid_from=at("09:30"))
    clock.set(at("10:00"))
    store.correct(m.memory_id, valid_from=at("09:00"), reason="fill was earlier")
    assert store.read("u", known_at=at("09:59"), valid_at=at("09:10")) == []
    [r] = store.read("u", known_at=at("10:00"), valid_at=at("09:10"))
    assert (r.value, r.valid_source, r.version) == (12, "explicit", 2)


# -- B3. Changing facts -------------------------------------------------------


@pytest.fixture
def sam(store: localmem.Store, clock: FrozenClock) -> dict[str, localmem.Revision]:
    """Sam in Lisbon then Berlin, vegetarian then eating fish, all in Europe/Berlin."""
    clock.set("2025-06-16T12:00:00Z")
    out = {
        "lisbon": store.add("Sam lives in Lisbon", user_id="sam", key="home_city",
                            valid_from="2023-05", tz="Europe/Berlin"),
        "vegetarian": store.add("Sam is vegetarian", user_id="sam", key="diet",
                                valid_from="2024-01"),
    }
    clock.set("2025-09-03T18:00:00Z")
    out["berlin"] = store.add("Sam lives in Berlin", user_id="sam", key="home_city",
                              valid_from="2025-09-01")
    out["fish"] = store.add("Sam eats fish", user_id="sam", key="diet", valid_from="2025-03-01")
    clock.set("2025-12-01T00:00:00Z")
    return out


def test_current_read_has_berlin_and_fish(store: localmem.Store, sam: dict[str, localmem.Revision]) -> None:
    """A current-only read on 2025-10-01 has Berlin and fish, not Lisbon or vegetarian."""
    texts = {r.text for r in store.read("sam", as_of="2025-10-01")}
    assert texts == {"Sam lives in Berlin", "Sam eats fish"}


def test_history_read_links_old_to_new(store: localmem.Store, sam: dict[str, localmem.Revision]) -> None:
    """A history read has both values linked old → new, Lisbon closed at 2025-09-01 local."""
    revs = {r.text: r for r in store.read("sam", as_of="2025-10-01", current_only=False)}
    lisbon, berlin = revs["Sam lives in Lisbon"], revs["Sam lives in Berlin"]
    assert lisbon.superseded_by == berlin.memory_id
    assert berlin.supersedes == lisbon.memory_id
    assert lisbon.valid_to == berlin.valid_from
    assert lisbon.valid_to == datetime(2025, 8, 31, 22, tzinfo=UTC)  # Berlin midnight
    assert str(lisbon.valid) == "2023-05 until 2025-09-01"
    assert revs["Sam is vegetarian"].valid_to == revs["Sam eats fish"].valid_from
    assert store.chain(berlin.memory_id) == [lisbon.memory_id, berlin.memory_id]


def test_valid_time_read_in_2024_says_lisbon_vegetarian(
    store: localmem.Store, sam: dict[str, localmem.Revision]
) -> None:
    """Valid at 2024-06-01, as known now: Lisbon and vegetarian."""
    texts = {r.text for r in store.read("sam", valid_at="2024-06-01")}
    assert texts == {"Sam lives in Lisbon", "Sam is vegetarian"}


def test_before_the_move_was_told_lisbon_was_still_open(
    store: localmem.Store, sam: dict[str, localmem.Revision]
) -> None:
    """Known before 2025-09-03, Lisbon's interval is still open and current on 2025-09-02."""
    [r] = store.read("sam", known_at="2025-09-02", valid_at="2025-09-02", key="home_city")
    assert (r.text, r.valid_to, r.superseded_by) == ("Sam lives in Lisbon", None, None)


def test_explicit_supersede_keeps_user_key_and_zone(
    store: localmem.Store, sam: dict[str, localmem.Revision], clock: FrozenClock
) -> None:
    """supersede() makes a new memory in the same chain, user, key and zone."""
    new = store.supersede(sam["berlin"].memory_id, "Sam lives in Hamburg", valid_from="2026-01-15")
    assert (new.user_id, new.key, new.tz, new.supersedes) == (
        "sam", "home_city", "Europe/Berlin", sam["berlin"].memory_id)
    old = store.get(sam["berlin"].memory_id)
    assert old is not None and old.superseded_by == new.memory_id


def test_older_value_for_a_key_is_kept_as_history(
    store: localmem.Store, sam: dict[str, localmem.Revision]
) -> None:
    """A value for a key that ended before the current one started does not supersede it."""
    porto = store.add("Sam lived in Porto", user_id="sam", key="home_city",
                      valid_from="2020-01", valid_to="2023-05")
    assert porto.supersedes is None
    assert {r.text for r in store.read("sam", valid_at="2021-06-01", key="home_city")} == {
        "Sam lived in Porto"}
    assert {r.text for r in store.read("sam", valid_at="2025-10-01", key="home_city")} == {
        "Sam lives in Berlin"}


# -- B4. Expiry -----------------------------------------------------------------


def test_training_goal_expires_after_the_local_day(
    store: localmem.Store, clock: FrozenClock
) -> None:
    """Expires after 2025-11-15 Berlin: visible 23:30 local, hidden 00:30, listed when asked."""
    clock.set("2025-09-01T10:00:00Z")
    goal = store.add("Training for the Berlin half on Nov 15", user_id="sam",
                     tz="Europe/Berlin", valid_from="2025-09-01", expires="2025-11-15")
    visible = store.read("sam", as_of="2025-11-15T23:30:00+01:00")
    assert [r.memory_id for r in visible] == [goal.memory_id]
    assert store.read("sam", as_of="2025-11-16T00:30:00+01:00") == []
    [listed] = store.read("sam", as_of="2025-11-16T00:30:00+01:00", include_expired=True)
    assert listed.expired and listed.memory_id == goal.memory_id
    row = store.get(goal.memory_id, as_of="2025-11-20T00:00:00Z")
    assert row is not None and row.expired and row.text == goal.text


def test_dry_january_ends_after_january_31(store: localmem.Store, clock: FrozenClock) -> None:
    """"Dry January" set to expire on Jan 31 is gone on Feb 1 local, still stored."""
    clock.set("2025-12-31T10:00:00Z")
    m = store.add("Dry January", user_id="ana", tz="America/New_York",
                  valid_from="2026-01-01", expires="2026-01-31")
    assert store.read("ana", as_of="2026-01-31T23:59:00-05:00")
    assert store.read("ana", as_of="2026-02-01T00:00:00-05:00") == []
    assert store.snapshot("ana", known_at="2026-02-02T00:00:00Z").memories[0].memory_id == m.memory_id


def test_expire_moves_the_expiry_and_keeps_both_revisions(
    store: localmem.Store, clock: FrozenClock
) -> None:
    """expire() appends a revision; reads before it still use the old expiry."""
    clock.set("2025-07-01T10:00:00Z")
    m = store.add("Physio twice a week", user_id="sam", tz="Europe/Berlin",
                  valid_from="2025-07-01", expires="2025-08-31")
    clock.advance(days=1)
    store.expire(m.memory_id, "2025-09-30", reason="extended")
    assert store.read("sam", as_of="2025-09-15") != []  # default known_at = as_of
    assert store.read("sam", known_at=clock(), valid_at="2025-09-15") != []
    assert store.read("sam", known_at=m.recorded_at, valid_at="2025-09-15") == []
    assert [c.op for c in store.history(m.memory_id)] == ["assert", "expire"]


# -- B8. "You forgot" -----------------------------------------------------------


def test_snapshot_at_the_hill_session_shows_what_was_known(
    store: localmem.Store, clock: FrozenClock
) -> None:
    """The injury is in the hill-session snapshot if and only if it was recorded before it."""
    clock.set("2025-07-01T08:00:00Z")
    store.add("Sam likes hill runs", user_id="sam", tz="Europe/Berlin")
    clock.set("2025-07-02T18:00:00Z")
    injury = store.add("Sam hurt the left knee", user_id="sam", valid_from="2025-07-01")
    clock.set("2025-07-04T18:00:00Z")
    store.correct(injury.memory_id, text="Sam hurt the left knee: patellar tendinitis")
    clock.set("2025-07-10T18:00:00Z")

    before = store.snapshot("sam", known_at="2025-07-01T17:00:00Z")
    after = store.snapshot("sam", known_at="2025-07-03T17:00:00Z")
    assert injury.memory_id not in {r.memory_id for r in before.memories}
    assert injury.memory_id in {r.memory_id for r in after.memories}

    history = store.history(injury.memory_id)
    assert [(c.old_text, c.new_text) for c in history] == [
        (None, "Sam hurt the left knee"),
        ("Sam hurt the left knee", "Sam hurt the left knee: patellar tendinitis"),
    ]
    assert [c.recorded_at.date().isoformat() for c in history] == ["2025-07-02", "2025-07-04"]


def test_snapshot_lists_retracted_and_superseded_memories_unfiltered(
    store: localmem.Store, sam: dict[str, localmem.Revision], clock: FrozenClock
) -> None:
    """A snapshot has no filter: retracted and superseded memories are in it, flagged."""
    store.retract(sam["fish"].memory_id, "forget that")
    snap = store.snapshot("sam", known_at=clock())
    by_id = {r.memory_id: r for r in snap.memories}
    assert len(by_id) == 4
    assert by_id[sam["fish"].memory_id].retracted
    assert by_id[sam["lisbon"].memory_id].superseded_by == sam["berlin"].memory_id
    assert len(snap.revisions) == 7  # 4 asserts, 2 closing revisions, 1 retraction


# -- C1, C2. Replay without leakage ------------------------------------------------

MONDAY = "2026-03-09T15:00:00Z"
TUESDAY = "2026-03-10T10:00:00Z"


def test_tuesday_preference_is_invisible_to_a_monday_replay(
    store: localmem.Store, clock: FrozenClock
) -> None:
    """C1: a preference told on Tuesday is not in a replay of Monday."""
    clock.set("2026-03-09T09:00:00Z")
    store.add("Customer reported an outage", user_id="cust", kind="incident")
    clock.set(TUESDAY)
    store.add("Send updates by text, not email", user_id="cust", kind="preference")
    monday = {r.text for r in store.read("cust", as_of=MONDAY)}
    assert monday == {"Customer reported an outage"}
    assert "Send updates by text, not email" in {r.text for r in store.read("cust", as_of=TUESDAY)}


def test_preference_valid_since_january_but_learned_tuesday(
    store: localmem.Store, clock: FrozenClock
) -> None:
    """C2: valid from January, observed Tuesday: not in Monday's replay, but true in February now."""
    clock.set(TUESDAY)
    store.add("Prefers text messages", user_id="cust", kind="preference",
              valid_from="2026-01", observed_at=TUESDAY)
    assert store.read("cust", known_at=MONDAY, valid_at="2026-02-15") == []
    assert store.read("cust", as_of=MONDAY) == []
    [r] = store.read("cust", valid_at="2026-02-15")
    assert r.text == "Prefers text messages" and r.precision == "month"
    assert r.observed_at == datetime(2026, 3, 10, 10, tzinfo=UTC)


# -- Retraction and the defaults of the read axes ---------------------------------


def test_retracted_memory_is_hidden_now_but_visible_before(
    store: localmem.Store, clock: FrozenClock
) -> None:
    """A retraction hides the memory from current reads; as-of reads before it still see it."""
    m = store.add("Sam's ex is called Alex", user_id="sam")
    clock.advance(hours=1)
    store.retract(m.memory_id, "forget that")
    assert store.read("sam") == []
    assert [r.text for r in store.read("sam", as_of=m.recorded_at)] == [m.text]
    [flagged] = store.read("sam", include_retracted=True)
    assert flagged.retracted
    assert [c.op for c in store.history(m.memory_id)] == ["assert", "retract"]


def test_valid_at_defaults_to_known_at(store: localmem.Store, clock: FrozenClock) -> None:
    """With only known_at given, valid_at is the same instant."""
    clock.set("2026-01-01T00:00:00Z")
    store.add("past fact", user_id="u", valid_from="2025-01-01", valid_to="2025-06-01")
    assert store.read("u", known_at="2026-02-01") == []
    assert len(store.read("u", known_at="2026-02-01", valid_at="2025-03-01")) == 1


def test_assumed_valid_time_starts_at_observed_at(store: localmem.Store, clock: FrozenClock) -> None:
    """Without a valid time, a memory is assumed valid from when it was observed."""
    m = store.add("likes oat milk", user_id="u", observed_at="2025-12-24T08:00:00Z")
    assert (m.valid_source, m.precision) == ("assumed", "instant")
    assert m.valid_from == m.observed_at == datetime(2025, 12, 24, 8, tzinfo=UTC)
    assert m.recorded_at == clock()


def test_recorded_time_never_goes_backwards(store: localmem.Store, clock: FrozenClock) -> None:
    """A clock that jumps back does not record a revision before the newest one."""
    first = store.add("one", user_id="u")
    clock.set(clock() - timedelta(days=3))
    second = store.add("two", user_id="u")
    assert second.recorded_at == first.recorded_at


def test_epoch_seconds_and_aware_datetimes_are_accepted(store: localmem.Store) -> None:
    """observed_at as epoch seconds, valid_from as an aware datetime in another zone."""
    from zoneinfo import ZoneInfo

    m = store.add("ran a 10K", user_id="sam", observed_at=1750075200,
                  valid_from=datetime(2025, 6, 14, tzinfo=ZoneInfo("Europe/Berlin")),
                  valid_to="2025-06-16T00:00:00+02:00", precision="weekend")
    assert m.observed_at == datetime(2025, 6, 16, 12, tzinfo=UTC)
    assert m.valid_from == datetime(2025, 6, 13, 22, tzinfo=UTC)
    assert m.precision == "weekend"


def test_batch_is_all_or_nothing(store: localmem.Store) -> None:
    """An error inside a batch rolls back every write of the batch."""
    store.add("kept", user_id="u")
    with pytest.raises(localmem.InvalidInputError), store.batch():
        store.add("first of batch", user_id="u")
        store.add("", user_id="u")
    assert [r.text for r in store.read("u")] == ["kept"]


def test_get_before_a_memory_existed_is_none(store: localmem.Store, clock: FrozenClock) -> None:
    """get() at a known_at before the memory was recorded returns None."""
    m = store.add("x", user_id="u")
    assert store.get(m.memory_id, known_at=m.recorded_at - timedelta(microseconds=1)) is None
    assert store.get(m.memory_id, known_at=m.recorded_at) == store.get(m.memory_id)


def test_memory_id_prefix_resolves(store: localmem.Store) -> None:
    """A unique prefix of a memory id resolves to the id; an unknown one is NotFoundError."""
    m = store.add("x", user_id="u")
    assert store.resolve_id(m.memory_id[:20].lower()) == m.memory_id
    with pytest.raises(localmem.NotFoundError):
        store.resolve_id("ZZZZZZ")


def test_ids_are_time_ordered_ulids() -> None:
    """Ids are 26 Crockford base32 characters whose order follows the time they encode."""
    from localmem.core.ids import is_id, new_id

    ids = [new_id(t * 1000) for t in (0, 1, 2**40, 2**47)]
    assert all(is_id(i) for i in ids) and ids == sorted(ids)
    assert new_id(0).startswith("0000000000") and len(set(new_id(5) for _ in range(100))) == 100


def test_each_write_returns_what_a_read_at_its_recorded_time_returns(
    store: localmem.Store, clock: FrozenClock
) -> None:
    """The Revision a write returns equals get() at its recorded time, for every kind of write."""
    first = store.add("Sam lives in Lisbon", user_id="sam", key="home_city", valid_from="2023-05",
                      tz="Europe/Lisbon", value={"city": "Lisbon"}, attributes={"src": "chat"},
                      source={"message": 7}, expires="2030-01-01", reason="told us")
    clock.advance(hours=1)
    corrected = store.correct(first.memory_id, text="Sam lives in Lisboa", value=[1, 2.5])
    clock.advance(hours=1)
    expired = store.expire(first.memory_id, "2025-12-31")
    clock.advance(hours=1)
    successor = store.add("Sam lives in Berlin", user_id="sam", key="home_city",
                          valid_from="2025-09-01")
    clock.advance(hours=1)
    retracted = store.retract(successor.memory_id, "wrong person")
    for rev in (first, corrected, expired, successor, retracted):
        assert store.get(rev.memory_id, known_at=rev.recorded_at, valid_at=rev.recorded_at) == rev


def test_a_refused_write_inside_a_batch_leaves_the_batch_usable(store: localmem.Store) -> None:
    """A write refused before changing a row does not spoil the batch around it."""
    with store.batch():
        store.add("first", user_id="u")
        with pytest.raises(localmem.UnknownZoneError):
            store.add("second", user_id="u", tz="Nowhere/Land")
        with pytest.raises(localmem.NotFoundError):
            store.correct("NOSUCHMEMORY", text="x")
        store.add("third", user_id="u")
    assert [r.text for r in store.read("u")] == ["first", "third"]


def test_a_write_failing_after_changes_dooms_the_batch(store: localmem.Store) -> None:
    """A write that fails half way inside a batch rolls the whole batch back, loudly."""
    store.add("before the batch", user_id="u")
    # Fail the content insert, which comes after the memory and revision rows.
    store.connection.execute(
        "CREATE TEMP TRIGGER boom BEFORE INSERT ON content WHEN NEW.text = 'boom'"
        " BEGIN SELECT RAISE(ABORT, 'boom'); END")
    with pytest.raises(localmem.BatchAbortedError, match="boom"), store.batch():
        store.add("in the batch", user_id="u")
        with pytest.raises(localmem.IntegrityError):
            store.add("boom", user_id="u")
        with pytest.raises(localmem.BatchAbortedError):
            store.add("after the failure", user_id="u")
    assert [r.text for r in store.read("u")] == ["before the batch"]
    assert store.doctor().ok
    store.add("the store goes on", user_id="u")


@pytest.mark.parametrize(
    "value", [0, -1.5, "text", "", [1, [2, {"a": None}]], {"é": "ü", "n": 1e300}, True, None]
)
def test_json_values_round_trip(store: localmem.Store, value: object) -> None:
    """Values, attributes and sources come back exactly as given, whatever their JSON shape."""
    m = store.add("x", user_id="u", value=value, attributes={"v": value}, source=value)
    got = store.get(m.memory_id)
    assert got is not None
    assert (got.value, got.attributes, got.source) == (value, {"v": value}, value)


def test_users_are_every_user_with_a_memory_once_sorted(store: localmem.Store) -> None:
    assert store.users() == []
    for user in ("sam", "kim", "ana", "kim", "sam"):
        store.add(f"note for {user}", user_id=user)
    gone = store.add("to be erased", user_id="zed")
    store.erase(gone.memory_id)
    assert store.users() == ["ana", "kim", "sam", "zed"]  # an erased memory is still a memory


@pytest.mark.parametrize("window", [1, 2, 5, 64, 10_000])
def test_a_keys_current_value_is_the_same_whatever_the_lookup_window(
    store: localmem.Store, clock: FrozenClock, monkeypatch: pytest.MonkeyPatch, window: int
) -> None:
    """A key changed daily among dated events, one value retracted and one kept as history: the
    bounded lookup agrees with reading the key's whole history."""
    monkeypatch.setattr(localmem.core.ledger, "KEY_HEAD_WINDOW", window)
    start = datetime(2025, 1, 1, tzinfo=UTC)
    for day in range(30):
        at = start + timedelta(days=day)
        clock.set(at)
        store.add(f"weight {70 + day % 3}", user_id="sam", key="weight", valid_from=at)
        store.add("ran", user_id="sam", valid_from=at + timedelta(hours=1), valid_to=at + timedelta(hours=2))
    clock.set(start + timedelta(days=40))
    last = store.read("sam", key="weight")[-1]
    store.retract(last.memory_id, reason="scale was off")
    store.add("weight 60", user_id="sam", key="weight", valid_from=start - timedelta(days=10),
              valid_to=start - timedelta(days=9))  # history, before the first value
    whole = store.connection.execute(localmem.core.sql.KEY_HEAD, ("sam", "weight")).fetchone()
    assert whole is not None
    assert store._ledger.key_head_row("sam", "weight") == whole
    new = store.add("weight 71", user_id="sam", key="weight", valid_from=start + timedelta(days=35))
    assert new.supersedes == whole[2]  # the one live value: the history one (the rest superseded)


def test_every_write_copies_the_memorys_kind_and_key_onto_its_revision(
        store: localmem.Store, clock: FrozenClock) -> None:
    """add, add_many (its bulk rows and its keyed ones), a key's new value, correct, retract and derive
    all write revisions whose copies of kind and key (what get reads) are the memory's."""
    lisbon = store.add("Sam lives in Lisbon", user_id="sam", key="home_city", kind="place")
    store.add_many([{"text": "Sam ran a 10K", "user_id": "sam", "kind": "event"},
                    {"text": "Sam prefers tea", "user_id": "sam", "key": "drink", "kind": "taste"}])
    clock.advance(days=1)
    store.add("Sam moved to Berlin", user_id="sam", key="home_city", kind="place", valid_from="2026-03-03")
    store.correct(lisbon.memory_id, text="Sam lived in Lisbon, Portugal")
    tea = store.read("sam", key="drink")[0]
    store.retract(tea.memory_id)
    store.derive("Sam is a runner", from_=store.read("sam", kind="event"), user_id="sam")
    conn = store.connection
    copied = conn.execute("SELECT count(*) FROM revisions").get
    assert copied == 8  # four memories, a supersession, a correction, a retraction and a summary
    assert conn.execute(
        "SELECT count(*) FROM revisions AS r JOIN memories AS m ON m.memory_id = r.memory_id"
        " WHERE r.memory_kind IS m.kind AND r.memory_key IS m.key").get == copied
    got = store.get(lisbon.memory_id)
    assert got is not None and (got.kind, got.key) == ("place", "home_city")
