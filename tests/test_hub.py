"""The hub on a real PostgreSQL: init, ingest with the device's validation, append-only tables, the CLI.

Every test gets an empty schema of its own on the session's cluster (conftest.hub_dsn).
"""

from __future__ import annotations

import gzip
import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from test_sync import _corrupt_files, _rehash, _rewrite

import localmem
from localmem.cli import main
from localmem.hub import db, ingest, reads, seed
from localmem.sync import files
from localmem.sync.bulk import BULK_REVISIONS
from localmem.testing import FrozenClock

Conn = psycopg.Connection[tuple[Any, ...]]
TABLES = ("memories", "revisions", "content", "erasures", "extra_tombstones", "derivations", "hub_files")


@pytest.fixture
def hub(hub_dsn: str) -> Iterator[Conn]:
    """A connection to a new, empty hub."""
    with db.connect(hub_dsn) as conn:
        db.init(conn)
        yield conn


def hub_rows(conn: Conn) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every hub table, in a fixed order: equal before and after means nothing changed."""
    return {t: sorted(conn.execute(f"SELECT * FROM {t}".encode()).fetchall(), key=repr) for t in TABLES}


def _phone(clock: FrozenClock) -> localmem.Store:
    return localmem.open(":memory:", clock=clock)


def test_init_creates_the_hub_once_and_a_second_init_changes_nothing(hub: Conn) -> None:
    hub_id = db.hub_id(hub)
    with pytest.raises(localmem.HubError, match="already holds a hub"):
        db.init(hub)
    assert db.hub_id(hub) == hub_id


def test_a_schema_without_a_hub_is_named_as_such(hub_dsn: str) -> None:
    with db.connect(hub_dsn) as conn, pytest.raises(localmem.HubError, match="localmem hub init"):
        db.hub_id(conn)


def test_an_unreachable_hub_is_a_hub_error_naming_the_dsn(tmp_path: Path) -> None:
    dsn = f"host={tmp_path} port=1 user=nobody dbname=none connect_timeout=2"
    with pytest.raises(localmem.HubError, match="cannot connect to the hub"):
        db.connect(dsn)


def test_ingest_is_idempotent_and_records_the_files_arrival(hub: Conn, tmp_path: Path) -> None:
    clock = FrozenClock("2026-03-02T08:00:00Z")
    phone = _phone(clock)
    fee = phone.add("fee for fill 42", user_id="sam", value=7, resolve=False)
    phone.correct(fee.memory_id, value=8)
    path = Path(phone.export(tmp_path / "p.gz").path)
    clock.advance(hours=2)
    first = ingest.ingest(hub, path, clock=clock)
    assert (first.summary.memories, first.summary.revisions) == (1, 2)
    arrived = hub.execute("SELECT arrived_at FROM hub_files WHERE file_id = %s", (first.file_id,)).fetchone()
    assert arrived == (first.arrived_at,)
    assert {r[0] for r in hub.execute("SELECT arrived_at FROM revisions")} == {first.arrived_at}
    before = hub_rows(hub)
    clock.advance(hours=1)
    again = ingest.ingest(hub, path, clock=clock)
    assert not again.summary.changed and again.file_id is None and again.summary.skipped == 3
    assert hub_rows(hub) == before


def test_text_with_tabs_newlines_backslashes_and_any_script_arrives_byte_for_byte(
        hub: Conn, tmp_path: Path) -> None:
    """The rows reach PostgreSQL in COPY's text format, formatted by the staging store: every
    character COPY escapes, and NULLs and hashes, come out as the device holds them."""
    clock = FrozenClock("2026-03-02T08:00:00Z")
    phone = _phone(clock)
    odd = "tab\there, new\nline, cr\r, back\\slash \\N \\x00, quote \" and \u00e9\u6f22\U0001f3c3"
    a = phone.add(odd, user_id="sam\tann", value={"path": "C:\\runs\n", "n": 1}, key="k\\1",
                  source="note\\", resolve=False)
    phone.add("plain", user_id="sam\tann", resolve=False)
    path = Path(phone.export(tmp_path / "p.gz").path)
    ingest.ingest(hub, path, clock=clock)
    device = localmem.open(":memory:", clock=clock)
    device.import_(path)
    got = {r.memory_id: r for r in reads.read(hub, "sam\tann", clock=clock)}
    for want in device.read("sam\tann"):
        r = got[want.memory_id]
        assert (r.text, r.value, r.key, r.source, r.expires_at) == \
            (want.text, want.value, want.key, want.source, want.expires_at)
    assert got[a.memory_id].text == odd
    hashes = "SELECT rev_id, content_hash, rev_hash, valid_to FROM revisions ORDER BY rev_id"
    assert [tuple(r) for r in hub.execute(hashes)] == [tuple(r) for r in device.connection.execute(hashes)]


def test_the_hub_numbers_a_files_revisions_in_the_files_order_though_it_writes_them_by_user(
        hub: Conn, tmp_path: Path) -> None:
    """seq (the relay's watermark) is the hub's arrival order: within a file, the order a device
    importing it gives its revisions, whatever order the rows are written in."""
    clock = FrozenClock("2026-03-02T08:00:00Z")
    phone = _phone(clock)
    for i in range(12):
        clock.advance(minutes=1)
        phone.add(f"note {i}", user_id=("zed", "amy", "kim")[i % 3], resolve=False)
    first = phone.export(tmp_path / "p1.gz")
    for rev in phone.read("amy"):
        phone.correct(rev.memory_id, text=f"{rev.text}, corrected")
    second = phone.export(tmp_path / "p2.gz", since=first.watermark)
    device = localmem.open(":memory:", clock=clock)
    for path in (Path(first.path), Path(second.path)):
        ingest.ingest(hub, path, clock=clock)
        device.import_(path)
        # The second file's numbers are not one run, as when another ingest takes some meanwhile.
        hub.execute(b"ALTER SEQUENCE revisions_seq_seq INCREMENT BY 3")
    order = "SELECT rev_id FROM revisions ORDER BY seq"
    assert [r[0] for r in hub.execute(order)] == [r[0] for r in device.connection.execute(order)]
    physical = [r[0] for r in hub.execute("SELECT user_id FROM revisions WHERE file_id = (SELECT min(file_id)"
                                          " FROM hub_files) ORDER BY ctid")]
    assert physical == sorted(physical)
    spread = hub.execute(b"SELECT max(seq) - min(seq) + 1, count(*) FROM revisions"
                         b" WHERE file_id = (SELECT max(file_id) FROM hub_files)").fetchone()
    assert spread is not None and spread[0] > spread[1]  # the second file's numbers were not one run


def test_a_large_file_takes_the_devices_bulk_path_on_the_hub_and_adds_what_a_device_adds(
        hub: Conn, tmp_path: Path) -> None:
    """A file of BULK_REVISIONS revisions or more: the staging import sets its triggers and
    indexes aside (the staging store's stand-ins for the full-text index included)."""
    clock = FrozenClock("2026-03-02T08:00:00Z")
    phone = _phone(clock)
    ids = [phone.add(f"run {i} km", user_id=f"u{i % 3}", resolve=False).memory_id
           for i in range(BULK_REVISIONS)]
    exported = phone.export(tmp_path / "p1.gz")
    for i, memory in enumerate(ids):
        phone.correct(memory, text=f"ran {i} km")
    first, second = Path(exported.path), Path(phone.export(tmp_path / "p2.gz", since=exported.watermark).path)
    clock.advance(hours=1)
    got = [ingest.ingest(hub, p, clock=clock).summary for p in (first, second)]
    device = localmem.open(":memory:", clock=clock)
    want = [device.import_(p) for p in (first, second)]
    assert [(s.memories, s.revisions) for s in got] == [(s.memories, s.revisions) for s in want]
    on_hub = sorted(str(r.text) for r in reads.read(hub, "u1", clock=clock))
    assert on_hub == sorted(str(r.text) for r in device.read("u1"))
    assert hub.execute("SELECT count(*) FROM content").fetchone() == (2 * BULK_REVISIONS,)


def test_a_hub_read_as_of_a_time_never_sees_a_file_that_reached_the_hub_later(
        hub: Conn, tmp_path: Path) -> None:
    clock = FrozenClock("2026-03-02T08:00:00Z")
    phone = _phone(clock)
    phone.add("knee hurts after long runs", user_id="sam", resolve=False)
    path = phone.export(tmp_path / "p.gz").path
    clock.set("2026-03-05T08:00:00Z")
    ingest.ingest(hub, path, clock=clock)
    assert reads.read(hub, "sam", clock=clock, known_at="2026-03-04T00:00:00Z",
                      valid_at="2026-03-06T00:00:00Z") == []
    assert [r.text for r in reads.read(hub, "sam", clock=clock)] == ["knee hurts after long runs"]


def test_a_hub_read_by_kind_and_key_and_of_everything_answers_what_the_device_answers(
        hub: Conn, tmp_path: Path) -> None:
    """kind and key pick memories before the latest-revision rule, as on the device; corrected,
    retracted, expired and erased memories come and go as they do there."""
    clock = FrozenClock("2026-03-02T08:00:00Z")
    phone = _phone(clock)
    city = phone.add("lives in Lisbon", user_id="sam", key="city", kind="profile", resolve=False)
    phone.add("likes tea", user_id="sam", kind="preference", resolve=False)
    gone = phone.add("old phone number", user_id="sam", key="phone", kind="profile", resolve=False)
    phone.add("parking permit", user_id="sam", expires="2026-03-03", resolve=False)
    clock.advance(days=2)
    phone.correct(city.memory_id, text="lives in Berlin")
    phone.retract(gone.memory_id)
    erased = phone.add("a secret", user_id="sam", key="secret", kind="profile", resolve=False)
    phone.erase(erased.memory_id)
    path = phone.export(tmp_path / "p.gz").path
    clock.advance(hours=1)
    ingest.ingest(hub, path, clock=clock)
    device = localmem.open(":memory:", clock=clock)
    device.import_(path)
    asks: list[tuple[dict[str, Any], int]] = [  # (the read's arguments, how many memories it returns)
        ({}, 2), ({"kind": "profile"}, 1), ({"key": "city"}, 1), ({"kind": "profile", "key": "phone"}, 0),
        ({"current_only": False, "include_expired": True, "include_retracted": True}, 4),
        ({"kind": "profile", "include_retracted": True}, 2), ({"known_at": "2026-03-04T08:30:00Z"}, 0)]
    for ask, count in asks:
        on_hub = [(r.memory_id, r.rev_id, r.text, r.expired, r.retracted)
                  for r in reads.read(hub, "sam", clock=clock, **ask)]
        assert on_hub == [(r.memory_id, r.rev_id, r.text, r.expired, r.retracted)
                          for r in device.read("sam", **ask)]
        assert len(on_hub) == count, ask
    assert [r.text for r in reads.read(hub, "sam", clock=clock, key="city")] == ["lives in Berlin"]


def test_reads_are_prepared_on_the_server_unless_the_connection_prepares_nothing(
        hub: Conn, tmp_path: Path) -> None:
    """A read is prepared at its first run; behind a transaction-pooling PgBouncer an operator sets
    prepare_threshold to None, and then the hub prepares nothing either."""
    clock = FrozenClock("2026-03-02T08:00:00Z")
    phone = _phone(clock)
    phone.add("likes tea", user_id="sam", resolve=False)
    ingest.ingest(hub, phone.export(tmp_path / "p.gz").path, clock=clock)
    prepared = ("SELECT count(*) FROM pg_prepared_statements"
                " WHERE statement LIKE '%DISTINCT ON (r.memory_id)%'")  # the read's
    hub.prepare_threshold = None
    assert [r.text for r in reads.read(hub, "sam", clock=clock)] == ["likes tea"]
    assert hub.execute(prepared).fetchone() == (0,)
    hub.prepare_threshold = 5
    assert [r.text for r in reads.read(hub, "sam", clock=clock)] == ["likes tea"]
    assert hub.execute(prepared).fetchone() == (1,)


def _cases(tmp_path: Path) -> tuple[Path, dict[str, tuple[Path, type[Exception], str]]]:
    clock = FrozenClock("2026-03-02T08:00:00Z")
    phone = _phone(clock)
    a = phone.add("Sam lives in Lisbon", user_id="sam")
    for i in range(10):
        phone.add(f"filler memory number {i} with some words", user_id="sam")
    good = phone.export(tmp_path / "good.gz")
    phone.correct(a.memory_id, text="Sam lives in Porto")
    incremental = phone.export(tmp_path / "inc.gz", since=good.watermark)
    cases = _corrupt_files(Path(good.path), Path(incremental.path), tmp_path)

    def forge_text(lines: list[bytes]) -> list[bytes]:
        return [x.replace(b"Lisbon", b"Paris!") for x in lines]

    def other_user(lines: list[bytes]) -> list[bytes]:
        out = []
        for x in lines:
            row = json.loads(x)
            if row.get("t") == "revision" and row["version"] == 1 and "Lisbon" in json.dumps(row):
                row["user_id"] = "ann"
                _rehash(row, "observation", None, None)
                x = json.dumps(row).encode() + b"\n"
            out.append(x)
        return out

    cases["forged-content"] = (_rewrite(Path(good.path), tmp_path / "forged.gz", forge_text),
                               localmem.SyncRuleError, "hash")
    cases["other-user"] = (_rewrite(Path(good.path), tmp_path / "user.gz", other_user),
                           localmem.SyncRuleError, "user")
    return Path(good.path), cases


def test_forged_and_damaged_files_are_refused_by_the_hub_exactly_as_by_a_device(
        hub: Conn, tmp_path: Path) -> None:
    """Each bad file: the same error class and message as a device's import, and no hub row changed."""
    good, cases = _cases(tmp_path)
    clock = FrozenClock("2026-03-03T08:00:00Z")
    device = _phone(clock)
    device.add("a device with a memory of its own", user_id="sam")
    hub_before = hub_rows(hub)
    for name, (path, error, words) in cases.items():
        with pytest.raises(error, match=words) as on_device:
            device.import_(path)
        with pytest.raises(error) as on_hub:
            ingest.ingest(hub, path, clock=clock)
        assert (type(on_hub.value), str(on_hub.value)) == (type(on_device.value), str(on_device.value)), name
        assert hub_rows(hub) == hub_before, name
    assert ingest.ingest(hub, good, clock=clock).summary.changed


def test_a_memory_id_claimed_for_another_user_is_refused_against_the_hubs_rows(
        hub: Conn, tmp_path: Path) -> None:
    """The check looks ids up on the hub without trusting the user a file names."""
    clock = FrozenClock("2026-03-02T08:00:00Z")
    phone = _phone(clock)
    phone.add("Sam lives in Lisbon", user_id="sam")
    good = Path(phone.export(tmp_path / "good.gz").path)
    ingest.ingest(hub, good, clock=clock)

    def claim(lines: list[bytes]) -> list[bytes]:
        out = []
        for x in lines:
            row = json.loads(x)
            if row.get("t") in ("memory", "revision"):
                row["user_id"] = "ann"
                if row["t"] == "revision":
                    _rehash(row, "observation", None, None)
            out.append(json.dumps(row).encode() + b"\n")
        return out

    forged = _rewrite(good, tmp_path / "claim.gz", claim)
    before = hub_rows(hub)
    with pytest.raises(localmem.SyncRuleError, match="differs from the one here"):
        ingest.ingest(hub, forged, clock=clock)
    assert hub_rows(hub) == before


def test_a_user_the_first_read_missed_is_locked_on_a_second_attempt(
        hub: Conn, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The ingest locks the users a pattern finds in the file before it reads their rows; a row
    naming a user it does not hold (a line the pattern missed, or a file replaced meanwhile)
    makes it start again with that user locked too, and a file that keeps naming new ones is
    refused, nothing written."""
    clock = FrozenClock("2026-03-02T08:00:00Z")
    phone = _phone(clock)
    phone.add("Sam lives in Lisbon", user_id="sam")
    path = Path(phone.export(tmp_path / "p.gz").path)
    attempts: list[set[str]] = []
    run = ingest._ingest  # noqa: SLF001 - one attempt, observed

    def observed(conn: Conn, source: Path, clock: Any, hub: str, users: set[str]) -> Any:
        attempts.append(set(users))
        return run(conn, source, clock, hub, users)

    monkeypatch.setattr(ingest, "_ingest", observed)
    monkeypatch.setattr(ingest, "file_users", lambda path: set())  # the pattern found nobody
    monkeypatch.setattr(ingest, "_ATTEMPTS", 1)
    before = hub_rows(hub)
    with pytest.raises(localmem.SyncFileError, match="changed while it was being ingested"):
        ingest.ingest(hub, path, clock=clock)
    assert hub_rows(hub) == before
    monkeypatch.setattr(ingest, "_ATTEMPTS", 3)
    attempts.clear()
    assert ingest.ingest(hub, path, clock=clock).summary.revisions == 1
    assert attempts == [set(), {"sam"}]


def test_a_files_users_are_found_across_pieces_escapes_and_a_last_line_without_newline(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """file_users reads the decompressed file a piece at a time, as the import does: a line cut by a
    piece's end, a user spelled with a JSON escape, and a last line with no newline are all found;
    a file that is not gzip gives no users (the import refuses it, with the device's message)."""
    monkeypatch.setattr(files, "_PIECE_BYTES", 7)  # every line crosses a piece's end
    lines = [json.dumps({"t": "memory", "user_id": u}, separators=(",", ":")) for u in ("sam", "ana")]
    lines.append('{"t":"memory","user_id":"jo\\u00e3o"}')
    path = tmp_path / "f.gz"
    path.write_bytes(gzip.compress("\n".join([*lines, '{"user_id":"last"}']).encode()))
    assert seed.file_users(path) == {"sam", "ana", "jo\u00e3o", "last"}
    path.write_bytes(b'{"user_id":"sam"}\n')
    assert seed.file_users(path) == set()


def test_the_hubs_tables_are_append_only(hub: Conn, tmp_path: Path) -> None:
    clock = FrozenClock("2026-03-02T08:00:00Z")
    phone = _phone(clock)
    phone.add("Sam lives in Lisbon", user_id="sam")
    ingest.ingest(hub, phone.export(tmp_path / "p.gz").path, clock=clock)
    refused = {
        "UPDATE revisions SET op = 'retract'": "revisions are immutable",
        "DELETE FROM revisions": "revisions are immutable",
        "UPDATE content SET text = 'x'": "content is never updated",
        "DELETE FROM content": "content is destroyed only by erase",
        "UPDATE memories SET kind = 'x'": "memories are immutable",
        "DELETE FROM hub_files": "imports are immutable",
        "TRUNCATE content": "never truncated",
        "TRUNCATE revisions CASCADE": "never truncated",
    }
    before = hub_rows(hub)
    for statement, words in refused.items():
        with pytest.raises(psycopg.errors.RestrictViolation, match=words):
            hub.execute(statement.encode())
    assert hub_rows(hub) == before


def test_a_revision_or_content_without_its_parent_is_refused_for_every_writer(
        hub: Conn, tmp_path: Path) -> None:
    """The parent checks are statement triggers, not foreign keys: a direct INSERT or COPY
    naming a memory or revision the hub lacks is refused, and nothing of the statement stays."""
    clock = FrozenClock("2026-03-02T08:00:00Z")
    phone = _phone(clock)
    phone.add("Sam lives in Lisbon", user_id="sam")
    ingest.ingest(hub, phone.export(tmp_path / "p.gz").path, clock=clock)
    before = hub_rows(hub)
    # One row names sam's memory (fine), the other the same memory as ann's (no such memory).
    values = "1, 'assert', 0, 'day', 'explicit', 0, 0, 'UTC', 0, 0, 'x', 0, 0, 1 FROM revisions"
    orphan_revision = ("INSERT INTO revisions (user_id, rev_id, memory_id, version, op, valid_from,"
                       " precision, valid_source, observed_at, recorded_at, tz, retracted, corrected, origin,"
                       f" hlc, arrived_at, file_id) SELECT 'sam', repeat('R', 26), memory_id, {values}"
                       f" UNION ALL SELECT 'ann', repeat('S', 26), memory_id, {values}").encode()
    with pytest.raises(psycopg.errors.ForeignKeyViolation, match="names a memory the hub does not hold"):
        hub.execute(orphan_revision)
    with pytest.raises(psycopg.errors.ForeignKeyViolation, match="names a revision the hub does not hold"), \
            hub.cursor().copy(b"COPY content (user_id, rev_id, memory_id, text) FROM STDIN") as copy:
        copy.write_row(("sam", "Q" * 26, "M" * 26, "no such revision"))
    assert hub_rows(hub) == before


def test_every_hub_table_refuses_truncate(hub: Conn) -> None:
    """TRUNCATE fires no row trigger: each of the hub's tables carries its statement trigger."""
    tables = {str(r[0]) for r in hub.execute(
        b"SELECT tablename FROM pg_tables WHERE schemaname = current_schema()")}
    guarded = {str(r[0]) for r in hub.execute(
        b"SELECT c.relname FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid"
        b" WHERE c.relnamespace = current_schema()::regnamespace AND t.tgname LIKE '%no_truncate'")}
    assert tables and tables == guarded

def test_concurrent_ingesters_apply_each_file_once(hub_dsn: str, hub: Conn, tmp_path: Path) -> None:
    """Four connections ingest the same two files of one user at once: each row lands once."""
    clock = FrozenClock("2026-03-02T08:00:00Z")
    phone = _phone(clock)
    notes = [phone.add(f"note {i} about tempo runs", user_id="sam", resolve=False) for i in range(30)]
    first = phone.export(tmp_path / "a.gz")
    for n in notes[:10]:
        phone.correct(n.memory_id, text=f"{n.text} (corrected)")
    second = phone.export(tmp_path / "b.gz", since=first.watermark)
    errors: list[BaseException] = []

    def worker() -> None:
        try:
            with db.connect(hub_dsn) as conn:
                for path in (first.path, second.path):
                    ingest.ingest(conn, path, clock=clock)
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert hub.execute("SELECT count(*), count(DISTINCT rev_id) FROM revisions").fetchone() == (40, 40)
    assert hub.execute("SELECT count(*) FROM hub_files").fetchone() == (2,)


def test_the_command_line_inits_ingests_a_folder_and_reads(
        hub_dsn: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    clock = FrozenClock("2026-03-02T08:00:00Z")
    phone = _phone(clock)
    fee = phone.add("fee for fill 42", user_id="sam", value=7, resolve=False)
    folder = tmp_path / "files"
    folder.mkdir()
    first = phone.export(folder / "phone.1.lmsync.gz")
    phone.correct(fee.memory_id, value=8)
    phone.export(folder / "phone.2.lmsync.gz", since=first.watermark)
    tablet = _phone(clock)
    tablet.add("tablet's note on tempo", user_id="ann", resolve=False)
    tablet.export(folder / "tablet.1.lmsync.gz")
    (folder / "notes.txt").write_text("not an export")
    assert main(["hub", "init", "--dsn", hub_dsn]) == 0
    assert main(["hub", "ingest", str(folder), "--dsn", hub_dsn, "--now", "2026-03-02T09:00:00Z",
                 "--jobs", "2"]) == 0
    assert capsys.readouterr().out.count("derivations added") == 3
    assert main(["hub", "read", "--user", "sam", "--dsn", hub_dsn, "--json"]) == 0
    out = capsys.readouterr().out
    data = json.loads(out[out.index("["):])
    assert [(m["memory_id"], m["value"]) for m in data] == [(fee.memory_id, 8)]
    assert main(["hub", "read", "--user", "sam", "--dsn", hub_dsn, "--known-at", "2026-03-02T08:30:00Z"]) == 0
    assert capsys.readouterr().out == "(no memories)\n"
    assert main(["hub", "search", "fees", "--user", "sam", "--dsn", hub_dsn]) == 0
    assert fee.memory_id in capsys.readouterr().out


def test_the_command_line_needs_a_dsn(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv("LOCALMEM_HUB_DSN", raising=False)
    assert main(["hub", "read", "--user", "sam"]) != 0
    assert "--dsn" in capsys.readouterr().err


def test_a_read_of_a_schema_without_a_hub_says_how_to_make_one(
        hub_dsn: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["hub", "read", "--user", "sam", "--dsn", hub_dsn]) != 0
    assert "localmem hub init" in capsys.readouterr().err


def test_a_derived_memory_is_stale_on_the_hub_once_its_sources_correction_arrived(
        hub: Conn, tmp_path: Path) -> None:
    clock = FrozenClock("2026-03-02T08:00:00Z")
    phone = _phone(clock)
    knee = phone.add("knee hurts after long runs", user_id="sam", resolve=False)
    summary = phone.derive("Sam should run shorter", from_=[knee], user_id="sam")
    first = phone.export(tmp_path / "p1.gz")
    phone.correct(knee.memory_id, text="knee is fine now")
    second = phone.export(tmp_path / "p2.gz", since=first.watermark)
    clock.set("2026-03-03T08:00:00Z")
    ingest.ingest(hub, first.path, clock=clock)
    before = clock()
    clock.set("2026-03-04T08:00:00Z")
    ingest.ingest(hub, second.path, clock=clock)

    def flags(**when: Any) -> dict[str, bool]:
        return {r.memory_id: r.stale for r in reads.read(hub, "sam", clock=clock, **when)}

    assert flags(known_at=before)[summary.memory_id] is False
    assert flags()[summary.memory_id] is True
    got = reads.get(hub, "sam", summary.memory_id, clock=clock)
    assert got is not None and got.stale
    snap = reads.snapshot(hub, "sam", clock=clock)
    assert [r.stale for r in snap.memories if r.memory_id == summary.memory_id] == [True]


def test_hub_knew_diff_prints_what_a_devices_knew_diff_prints_for_the_same_files(
        hub_dsn: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`hub knew --diff` is the device's `knew --diff` (the same rule over the hub's snapshots):
    a receiver that imported the same files at the same times prints the same lines."""
    clock = FrozenClock("2026-03-02T08:00:00Z")
    phone = _phone(clock)
    fee = phone.add("fee", user_id="acct", key="fee", value=4, resolve=False)
    gone = phone.add("a secret", user_id="acct", resolve=False)
    first = phone.export(tmp_path / "p1.gz")
    clock.set("2026-03-02T10:00:00Z")
    phone.correct(fee.memory_id, value=7)
    phone.add("tip", user_id="acct", value=1, resolve=False)
    phone.erase(gone.memory_id)
    second = phone.export(tmp_path / "p2.gz", since=first.watermark)
    receiver = tmp_path / "receiver.db"
    assert main(["hub", "init", "--dsn", hub_dsn]) == 0
    for path, now in ((first.path, "2026-03-02T09:00:00Z"), (second.path, "2026-03-02T11:00:00Z")):
        assert main(["hub", "ingest", str(path), "--dsn", hub_dsn, "--now", now]) == 0
        assert main(["--db", str(receiver), "--now", now, "import", str(path)]) == 0
    capsys.readouterr()
    for extra in ([], ["--json"]):
        window = ["knew", "--user", "acct", "--at", "2026-03-02T09:30:00Z", "--diff", "2026-03-02T12:00:00Z",
                  *extra]
        assert main(["hub", *window, "--dsn", hub_dsn]) == 0
        on_hub = capsys.readouterr().out
        assert main(["--db", str(receiver), *window]) == 0
        on_device = capsys.readouterr().out
        assert on_hub == on_device
    assert "corrected" in on_hub and "erased" in on_hub and "a secret" not in on_hub


def test_ingest_paths_with_an_unpicklable_clock_runs_its_jobs_as_threads(hub_dsn: str, hub: Conn,
                                                                         tmp_path: Path) -> None:
    """``--jobs`` are processes, which need a picklable clock; a lambda still ingests every file."""
    clock = FrozenClock("2026-03-02T08:00:00Z")
    paths = []
    for name in ("phone", "tablet"):
        device = _phone(clock)
        device.add(f"{name}'s note", user_id=name, resolve=False)
        paths.append(device.export(tmp_path / f"{name}.gz").path)
    at = clock()
    results = ingest.ingest_paths(hub_dsn, paths, clock=lambda: at, jobs=2)
    assert [r.summary.revisions if isinstance(r, ingest.Ingested) else r for r in results] == [1, 1]
    assert sorted(reads.users(hub)) == ["phone", "tablet"]
