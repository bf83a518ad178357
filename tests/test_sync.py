"""Offline sync: export files, their verified atomic idempotent import, clocks, arrival and erasure.

Two or three stores on their own frozen clocks stand for a phone, a laptop and a
backup; they exchange files and must converge on the same rows (the digest).
"""

from __future__ import annotations

import gzip
import json
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

import apsw
import pytest

import localmem
from localmem.core import chain
from localmem.core.db import SCHEMA_VERSION
from localmem.sync.files import CONTENT_FIELDS
from localmem.testing import FrozenClock

FAR = "2100-01-01T00:00:00Z"


def _open(path: Path | str, at: str) -> tuple[localmem.Store, FrozenClock]:
    clock = FrozenClock(at)
    return localmem.open(path, clock=clock), clock


def at_the_end(store: localmem.Store, memory_id: str) -> localmem.Revision:
    """The memory as known at the end of time (it must be known by then)."""
    rev = store.get(memory_id, known_at=FAR)
    assert rev is not None
    return rev


def full_dump(store: localmem.Store) -> dict[str, list[tuple[object, ...]]]:
    """Every row of every table in the file (the full-text index's shadow tables too)."""
    conn = store.connection
    names = [r[0] for r in conn.execute(
        "SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
        " AND sql NOT LIKE 'CREATE VIRTUAL%' ORDER BY name")]
    return {n: sorted(conn.execute(f'SELECT * FROM "{n}"').fetchall(), key=repr) for n in names}


# -- round trip ----------------------------------------------------------------------------------


def test_export_then_import_converges_and_a_second_import_changes_nothing(
        phone: localmem.Store, laptop: localmem.Store, tmp_path: Path) -> None:
    """After an import both stores have the same digest; a second import writes nothing, says so."""
    a = phone.add("Sam lives in Lisbon", user_id="sam", key="home_city", valid_from="2023-05")
    phone.add("Sam moved to Berlin", user_id="sam", key="home_city", valid_from="2025-09-01")
    phone.correct(a.memory_id, text="Sam lived in Lisbon, Portugal")
    out = phone.export(tmp_path / "p.lmsync.gz")
    assert (out.memories, out.revisions, out.tombstones) == (2, 4, 0)

    first = laptop.import_(out.path)
    assert first.changed and first.revisions == 4 and first.skipped == 0
    assert laptop.digest() == phone.digest()
    before = full_dump(laptop)
    second = laptop.import_(out.path)
    assert not second.changed and second.skipped == 6
    assert "nothing new" in second.describe()
    assert full_dump(laptop) == before
    assert laptop.doctor().ok


def test_imported_revisions_carry_their_memorys_kind_and_key_copied_here(
        phone: localmem.Store, laptop: localmem.Store, tmp_path: Path) -> None:
    """The copies of a memory's kind and key on its revisions are local (files carry them on the
    memory): an import fills them from the memory it brings, on the row-by-row path."""
    a = phone.add("Sam lives in Lisbon", user_id="sam", key="home_city", kind="place")
    phone.correct(a.memory_id, text="Sam lives in Lisbon, Portugal")
    laptop.import_(phone.export(tmp_path / "p.lmsync.gz").path)
    rows = laptop.connection.execute("SELECT memory_kind, memory_key FROM revisions").fetchall()
    assert rows == [("place", "home_city")] * 2
    got = laptop.get(a.memory_id, known_at=FAR)
    assert got is not None and (got.kind, got.key) == ("place", "home_city")
    assert laptop.doctor().ok


def test_file_is_gzip_json_lines_readable_without_localmem(phone: localmem.Store, tmp_path: Path) -> None:
    """The file is gzip'd JSON lines: header (format, versions, device, counts), checksummed trailer."""
    import hashlib

    phone.add("Sam hurt his knee", user_id="sam")
    out = phone.export(tmp_path / "p.lmsync.gz")
    lines = gzip.decompress(Path(out.path).read_bytes()).splitlines(keepends=True)
    header, trailer = json.loads(lines[0]), json.loads(lines[-1])
    assert header["format"] == "localmem-sync" and header["format_version"] == 1
    assert header["schema_version"] == localmem.core.db.SCHEMA_VERSION
    assert header["origin"] == phone.device_id and header["watermark"] == {"from": 0, "to": 1}
    assert header["counts"] == {"memory": 1, "revision": 1, "derivation": 0, "tombstone": 0}
    assert trailer["end"]["sha256"] == hashlib.sha256(b"".join(lines[:-1])).hexdigest()
    assert json.loads(lines[2])["content"]["text"] == "Sam hurt his knee"


def test_incremental_export_carries_only_what_is_new(phone: localmem.Store, laptop: localmem.Store,
                                                     tmp_path: Path) -> None:
    """An export since the last watermark carries only later revisions; in order, they converge."""
    a = phone.add("fee 4", user_id="acct", value=4)
    first = phone.export(tmp_path / "1.gz")
    phone.correct(a.memory_id, text="fee 7", value=7)
    second = phone.export(tmp_path / "2.gz", since=first.watermark)
    assert second.revisions == 1 and second.since == first.watermark
    laptop.import_(first.path)
    laptop.import_(second.path)
    assert laptop.digest() == phone.digest()
    assert at_the_end(laptop, a.memory_id).value == 7


def test_an_export_whose_write_fails_raises_it_and_leaves_no_file(
        phone: localmem.Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The file is compressed and written on a thread of its own: a write that fails there (a full
    disk) is raised by export, nothing takes the file's name, no partial file stays, and the
    next export works."""
    with phone.batch():
        for i in range(3000):
            phone.add(f"note {i} about a long swim in the cold river", user_id="sam", resolve=False)
    real = gzip.GzipFile.write
    calls = []

    def full(self: gzip.GzipFile, data: bytes) -> int:
        calls.append(threading.current_thread().name)
        if len(calls) == 2:
            raise OSError(28, "No space left on device")
        return real(self, data)

    monkeypatch.setattr(gzip.GzipFile, "write", full)
    with pytest.raises(OSError, match="No space left"):
        phone.export(tmp_path / "p.gz")
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("p.gz")) == []
    assert calls[0] != threading.current_thread().name  # written beside the SQL, not by it
    monkeypatch.setattr(gzip.GzipFile, "write", real)
    out = phone.export(tmp_path / "p.gz")
    assert out.revisions == 3000


def test_user_filter_exports_one_users_rows(phone: localmem.Store, tmp_path: Path) -> None:
    """export(user_id=...) carries only that user's memories and revisions."""
    phone.add("Sam ran 10K", user_id="sam")
    phone.add("Ann swims", user_id="ann")
    out = phone.export(tmp_path / "sam.gz", user_id="sam")
    assert (out.memories, out.revisions) == (1, 1)


# -- clocks: arrival and order ------------------------------------------------------------------


def test_revision_recorded_monday_imported_wednesday_is_invisible_to_a_tuesday_replay(
        phone: localmem.Store, laptop: localmem.Store, tmp_path: Path) -> None:
    """A phone's Monday revision imported Wednesday is not known to a laptop read of Tuesday."""
    rev = phone.add("Send updates by text, not email", user_id="cust", kind="preference")
    laptop.import_(phone.export(tmp_path / "p.gz").path)
    got = laptop.get(rev.memory_id, known_at="2026-03-04T09:00:00Z")
    assert got is not None and got.recorded_at == rev.recorded_at and got.origin == phone.device_id
    assert laptop.get(rev.memory_id, known_at="2026-03-03T12:00:00Z") is None
    assert laptop.read(user_id="cust", known_at="2026-03-03T12:00:00Z", current_only=False) == []
    assert laptop.search("text email", user_id="cust", as_of="2026-03-03T12:00:00Z") == []
    assert [h.revision.memory_id for h in laptop.search("text email", user_id="cust", as_of=FAR)] \
        == [rev.memory_id]
    # On the phone it was known from Monday.
    assert phone.get(rev.memory_id, known_at="2026-03-02T09:00:00Z") is not None


def test_a_revision_from_a_clock_ahead_is_not_visible_before_its_origin_recorded_it(
        phone: localmem.Store, tmp_path: Path) -> None:
    """Visibility is the later of origin recorded_at and arrival: a row from a clock ahead (within the
    allowed skew) waits."""
    ahead, _ = _open(tmp_path / "ahead.db", "2026-03-02T20:00:00Z")
    rev = ahead.add("from the future", user_id="sam")
    phone.import_(ahead.export(tmp_path / "a.gz").path)
    assert phone.get(rev.memory_id, known_at="2026-03-02T12:00:00Z") is None
    assert phone.get(rev.memory_id, known_at="2026-03-02T20:00:00Z") is not None
    # Later local writes are recorded after it (the store's recorded time never goes backwards).
    assert phone.add("next", user_id="sam").recorded_at >= rev.recorded_at
    assert phone.doctor().ok
    ahead.close()


def test_concurrent_corrections_both_stay_and_the_greatest_clock_is_current_everywhere(
        tmp_path: Path) -> None:
    """Two devices correcting one memory apart keep both (a fork in history); both pick the same one."""
    phone, pc = _open(tmp_path / "phone.db", "2026-03-02T09:00:00Z")
    laptop, lc = _open(tmp_path / "laptop.db", "2026-03-02T09:00:00Z")
    fee = phone.add("fee 4", user_id="acct", value=4)
    laptop.import_(phone.export(tmp_path / "0.gz").path)
    pc.set("2026-03-02T10:00:00Z")
    lc.set("2026-03-02T09:30:00Z")  # the laptop's clock is behind: its correction is older
    phone.correct(fee.memory_id, text="fee 7", value=7)
    laptop.correct(fee.memory_id, text="fee 6", value=6)
    p_file, l_file = phone.export(tmp_path / "p.gz"), laptop.export(tmp_path / "l.gz")
    phone.import_(l_file.path)
    laptop.import_(p_file.path)
    assert phone.digest() == laptop.digest()
    for s in (phone, laptop):
        assert at_the_end(s, fee.memory_id).value == 7
        hist = s.history(fee.memory_id)
        assert sorted(c.new_value for c in hist) == [4, 6, 7]
        assert [c.old_value for c in hist if c.version == 2] == [4, 4]  # both followed the 4: a fork
        assert s.doctor().ok
    # A write after the merge follows the current revision and wins on both once exchanged.
    lc.set("2026-03-02T09:45:00Z")
    laptop.correct(fee.memory_id, text="fee 5", value=5)  # its clock passes the phone's 10:00
    phone.import_(laptop.export(tmp_path / "l2.gz").path)
    assert at_the_end(phone, fee.memory_id).value == 5
    assert phone.digest() == laptop.digest()
    phone.close()
    laptop.close()


# -- erasure travels ----------------------------------------------------------------------------


def test_erasure_travels_and_is_never_undone_by_a_later_file(tmp_path: Path) -> None:
    """An erase on the phone erases the laptop's copy; an older file imported later brings no words back."""
    phone, _ = _open(tmp_path / "phone.db", "2026-03-02T09:00:00Z")
    laptop, _ = _open(tmp_path / "laptop.db", "2026-03-04T09:00:00Z")
    ex = phone.add("my ex is called Bob", user_id="sam")
    phone.correct(ex.memory_id, text="my ex is called Robert")
    old = phone.export(tmp_path / "old.gz")
    phone.erase(ex.memory_id, reason="asked")
    new = phone.export(tmp_path / "new.gz", since=old.watermark)
    assert new.revisions == 0 and new.tombstones == 1

    fresh, _ = _open(tmp_path / "fresh.db", "2026-03-05T09:00:00Z")
    fresh.import_(new.path)  # the tombstone first: the memory's row comes with it
    fresh.import_(old.path)  # then the revisions: stored without their words
    laptop.import_(old.path)
    assert at_the_end(laptop, ex.memory_id).text == "my ex is called Robert"
    laptop.import_(new.path)
    for s in (phone, laptop, fresh):
        assert s.connection.execute("SELECT count(*) FROM content WHERE memory_id = ?",
                                    (ex.memory_id,)).get == 0
        assert s.search("Robert", user_id="sam", current_only=False) == []
        assert s.doctor().ok
    assert phone.digest() == laptop.digest() == fresh.digest()
    for s in (phone, laptop, fresh):
        s.close()


def test_two_devices_erasing_one_memory_keep_both_tombstones(tmp_path: Path) -> None:
    """Independent erasures of one memory on two devices converge: every replica keeps both tombstones."""
    phone, _ = _open(tmp_path / "phone.db", "2026-03-02T09:00:00Z")
    laptop, _ = _open(tmp_path / "laptop.db", "2026-03-02T09:00:00Z")
    m = phone.add("secret", user_id="sam")
    laptop.import_(phone.export(tmp_path / "0.gz").path)
    phone.erase(m.memory_id)
    laptop.erase(m.memory_id)
    phone.import_(laptop.export(tmp_path / "l.gz").path)
    laptop.import_(phone.export(tmp_path / "p.gz").path)
    assert phone.digest() == laptop.digest()
    assert phone.connection.execute("SELECT count(*) FROM extra_tombstones").get == 1
    phone.close()
    laptop.close()


# -- refused files -----------------------------------------------------------------------------


Edit = Callable[[list[bytes]], list[bytes]]


def _rewrite(src: Path, dst: Path, edit: Edit, *, fix_checksum: bool = True) -> Path:
    """Decompress, let ``edit`` change the list of lines, recompute the trailer's checksum, recompress."""
    import hashlib

    lines = gzip.decompress(src.read_bytes()).splitlines(keepends=True)
    body = edit(lines[:-1])
    trailer = json.loads(lines[-1])
    if fix_checksum:
        trailer["end"]["sha256"] = hashlib.sha256(b"".join(body)).hexdigest()
    dst.write_bytes(gzip.compress(b"".join(body) + json.dumps(trailer).encode() + b"\n"))
    return dst


def _rehash(row: dict[str, object], kind: str, key: str | None, prev_hash: str | None) -> None:
    """Recompute a forged revision row's hashes, as a careful forger would."""
    content = row["content"]
    if isinstance(content, dict):
        row["content_hash"] = chain.content_hash(*(content[f] for f in CONTENT_FIELDS)).hex()
    row["rev_hash"] = chain.rev_hash([row[f] for f in chain.HASHED_FIELDS], kind, key,
                                     bytes.fromhex(str(row["content_hash"])),
                                     None if prev_hash is None else bytes.fromhex(prev_hash)).hex()


def _header_edit(**changes: object) -> Edit:
    def edit(lines: list[bytes]) -> list[bytes]:
        header = json.loads(lines[0])
        header.update(changes)
        return [json.dumps(header).encode() + b"\n", *lines[1:]]
    return edit


def _corrupt_files(good: Path, incremental: Path, tmp: Path) -> dict[str, tuple[Path, type[Exception], str]]:
    raw = good.read_bytes()
    flipped = bytearray(raw)
    flipped[len(raw) // 2] ^= 0x10
    (tmp / "truncated.gz").write_bytes(raw[: len(raw) * 2 // 3])
    (tmp / "flipped.gz").write_bytes(bytes(flipped))
    (tmp / "text.txt").write_text('[{"role": "user", "content": "hi"}]\n')
    (tmp / "empty.gz").write_bytes(b"")
    body_flip = _rewrite(good, tmp / "body.gz",
                         lambda ls: [x.replace(b"Lisbon", b"Lisbom") for x in ls], fix_checksum=False)
    no_trailer = tmp / "no-trailer.gz"
    no_trailer.write_bytes(gzip.compress(b"".join(gzip.decompress(raw).splitlines(keepends=True)[:-1])))
    return {
        "truncated": (tmp / "truncated.gz", localmem.SyncFileError, "damaged or truncated"),
        "bit-flipped": (tmp / "flipped.gz", localmem.SyncFileError, "nothing was applied"),
        "wrong-checksum": (body_flip, localmem.SyncFileError, "checksum"),
        "no-trailer": (no_trailer, localmem.SyncFileError, "truncated"),
        "future-format": (_rewrite(good, tmp / "future.gz", _header_edit(format_version=2)),
                          localmem.SyncVersionError, "upgrade localmem"),
        "other-schema": (_rewrite(good, tmp / "schema.gz", _header_edit(schema_version=6)),
                         localmem.SyncVersionError, "schema version 6"),
        "not-localmem": (_rewrite(good, tmp / "other.gz", _header_edit(format="something-else")),
                         localmem.SyncFileError, "not a localmem sync export"),
        "missing-parent": (incremental, localmem.SyncParentError, "neither earlier in the file"),
        "not-gzip": (tmp / "text.txt", localmem.SyncFileError, "not a gzip file"),
        "empty": (tmp / "empty.gz", localmem.SyncFileError, "empty"),
    }


def test_every_corrupt_file_is_refused_with_a_clear_error_and_nothing_applied(
        phone: localmem.Store, laptop: localmem.Store, tmp_path: Path) -> None:
    """Truncated, bit-flipped, bad checksum, future format, other schema, missing parents, non-gzip, empty."""
    a = phone.add("Sam lives in Lisbon", user_id="sam")
    for i in range(40):
        phone.add(f"filler memory number {i} with some words", user_id="sam")
    good = phone.export(tmp_path / "good.gz")
    phone.correct(a.memory_id, text="Sam lives in Porto")
    incremental = phone.export(tmp_path / "inc.gz", since=good.watermark)
    laptop.add("laptop's own memory", user_id="sam")
    cases = _corrupt_files(Path(good.path), Path(incremental.path), tmp_path)
    before = full_dump(laptop)
    for name, (path, error, words) in cases.items():
        with pytest.raises(error, match=words) as info:
            laptop.import_(path)
        assert isinstance(info.value, localmem.LocalmemError), name
        assert full_dump(laptop) == before, name
        # The thread that decompresses ahead of the checks is stopped, however the read ended.
        assert not [t for t in threading.enumerate() if t.name == "localmem-sync-reader"], name
    assert laptop.connection.getautocommit()
    # The good files still import afterwards, in order.
    laptop.import_(good.path)
    laptop.import_(incremental.path)
    assert at_the_end(laptop, a.memory_id).text == "Sam lives in Porto"


def test_a_file_from_a_schema_8_device_imports_into_a_schema_9_store(
        phone: localmem.Store, laptop: localmem.Store, tmp_path: Path) -> None:
    """A fleet mid-upgrade keeps syncing: schema 9 added only local copies, so a schema-8 export
    (same synced fields) imports, whole, and reads as the phone does; older schemas are refused."""
    a = phone.add("Sam lives in Lisbon", user_id="sam", key="home")
    for i in range(120):  # past the bulk import's threshold too
        phone.add(f"note {i} from the older phone", user_id="sam")
    phone.correct(a.memory_id, text="Sam lives in Porto")
    good = Path(phone.export(tmp_path / "p.gz").path)
    old = _rewrite(good, tmp_path / "v8.gz", _header_edit(schema_version=8))
    laptop.import_(old)
    assert at_the_end(laptop, a.memory_id).text == "Sam lives in Porto"
    got = laptop.get(a.memory_id)
    assert got is not None and got.key == "home"
    assert laptop.connection.execute("SELECT count(*) FROM revisions").get == 122
    assert laptop.doctor().ok


def test_a_row_breaking_a_constraint_rolls_the_whole_import_back(
        phone: localmem.Store, laptop: localmem.Store, tmp_path: Path) -> None:
    """A well-formed file whose last row is invalid applies nothing: the rows before it roll back too."""
    for i in range(5):
        phone.add(f"memory {i}", user_id="sam")
    good = Path(phone.export(tmp_path / "good.gz").path)

    def spoil(lines: list[bytes]) -> list[bytes]:
        row = json.loads(lines[-1])
        row["precision"] = "fortnight"
        _rehash(row, "fact", None, None)  # so the row reaches the table's CHECK
        return [*lines[:-1], json.dumps(row).encode() + b"\n"]

    bad = _rewrite(good, tmp_path / "bad.gz", spoil)
    before = full_dump(laptop)
    with pytest.raises(localmem.SyncFileError, match="not a valid row"):
        laptop.import_(bad)
    assert full_dump(laptop) == before


# -- a killed import ---------------------------------------------------------------------------

_CHILD = """
import sys, time
import localmem, localmem.sync.apply as sync
from localmem.testing import FrozenClock
row = sync._Apply.row
def slow(self, n, obj):
    row(self, n, obj)
    if n == 300:
        print("mid", flush=True)
        time.sleep(60)
sync._Apply.row = slow
store = localmem.open(sys.argv[1], clock=FrozenClock("2026-03-05T00:00:00Z"))
store.import_(sys.argv[2])
print("done", flush=True)
"""


@pytest.mark.slow
def test_a_process_killed_during_import_leaves_the_database_as_before(
        phone: localmem.Store, tmp_path: Path) -> None:
    """SIGKILL in the middle of applying a file: reopened, the database is exactly as before the import."""
    with phone.batch():
        for i in range(400):
            phone.add(f"memory {i}", user_id="sam")
    out = phone.export(tmp_path / "p.gz")
    target = tmp_path / "target.db"
    s, _ = _open(target, "2026-03-04T00:00:00Z")
    s.add("already here", user_id="sam")
    before = full_dump(s)
    s.close()
    with subprocess.Popen([sys.executable, "-c", _CHILD, str(target), out.path],
                          stdout=subprocess.PIPE, text=True) as child:
        try:
            assert child.stdout is not None
            assert child.stdout.readline().strip() == "mid"
            os.kill(child.pid, signal.SIGKILL)
        finally:
            child.wait(timeout=30)
    assert child.returncode == -signal.SIGKILL
    s, _ = _open(target, "2026-03-05T00:00:00Z")
    assert full_dump(s) == before
    assert s.doctor().ok
    assert s.import_(out.path).revisions == 400
    s.close()


# -- the shared folder -------------------------------------------------------------------------


def test_sync_dir_converges_three_devices_and_a_second_round_does_nothing(tmp_path: Path) -> None:
    """Phone, laptop and backup syncing through one folder converge; a second round does nothing."""
    folder = tmp_path / "Sync"
    folder.mkdir()
    stores = [_open(tmp_path / f"{n}.db", "2026-03-02T09:00:00Z")[0] for n in ("phone", "laptop", "backup")]
    phone, laptop, backup = stores
    m = phone.add("Sam is vegetarian", user_id="sam")
    laptop.add("Sam runs on Sundays", user_id="sam")
    for _ in range(2):
        for s in stores:
            s.sync_dir(folder)
    phone.erase(m.memory_id)
    for _ in range(2):
        for s in stores:
            s.sync_dir(folder)
    assert len({s.digest() for s in stores}) == 1
    assert all(s.connection.execute("SELECT count(*) FROM content WHERE memory_id = ?",
                                    (m.memory_id,)).get == 0 for s in stores)
    again = [s.sync_dir(folder) for s in stores]
    assert all(r.exported is None and not any(i.changed for i in r.imported) for r in again)
    for s in stores:
        s.close()


# -- the new tables are append-only -------------------------------------------------------------


@pytest.mark.parametrize("table", ["imports", "extra_tombstones", "sync_peers"])
def test_sync_tables_refuse_update_and_delete(tmp_path: Path, table: str) -> None:
    """The import log, extra tombstones and peer watermarks are immutable like every other table."""
    phone, _ = _open(tmp_path / "phone.db", "2026-03-02T09:00:00Z")
    laptop, _ = _open(tmp_path / "laptop.db", "2026-03-02T09:00:00Z")
    m = phone.add("secret", user_id="sam")
    folder = tmp_path / "dir"
    folder.mkdir()
    phone.sync_dir(folder)
    laptop.sync_dir(folder)
    phone.erase(m.memory_id)
    laptop.erase(m.memory_id)
    laptop.import_(phone.export(tmp_path / "p.gz").path)
    conn = laptop.connection
    assert conn.execute(f"SELECT count(*) FROM {table}").get >= 1
    for sql in (f"UPDATE {table} SET rowid = rowid", f"DELETE FROM {table}"):
        with pytest.raises(apsw.ConstraintError, match="immutable"):
            conn.execute(sql)
    phone.close()
    laptop.close()


# -- the command line --------------------------------------------------------------------------


def test_cli_export_import_and_plain_export(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`export FILE`, `import FILE` (a sync file by its gzip bytes) and `export --format csv`."""
    from localmem.cli import main

    phone, laptop = str(tmp_path / "phone.db"), str(tmp_path / "laptop.db")
    assert main(["--db", phone, "add", "Sam ran 10K", "--user", "sam"]) == 0
    capsys.readouterr()
    assert main(["--db", phone, "export", str(tmp_path / "p.gz")]) == 0
    assert "watermark 1" in capsys.readouterr().out
    assert main(["--db", laptop, "import", str(tmp_path / "p.gz")]) == 0
    assert capsys.readouterr().out.startswith("imported from device")
    assert main(["--db", laptop, "import", str(tmp_path / "p.gz")]) == 0
    assert capsys.readouterr().out.startswith("nothing new")
    assert main(["--db", laptop, "export", "-", "--format", "csv", "--user", "sam"]) == 0
    out = capsys.readouterr()
    assert out.out.splitlines()[0].startswith("memory_id,user_id,kind") and "Sam ran 10K" in out.out
    (tmp_path / "bad.gz").write_bytes(b"\x1f\x8bnot really")
    assert main(["--db", laptop, "import", str(tmp_path / "bad.gz")]) == 1
    err = capsys.readouterr()
    assert err.out == "" and err.err.startswith("localmem: error:") and "nothing was applied" in err.err


def test_cli_sync_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`localmem sync DIR` on two databases leaves them with the same digest."""
    from localmem.cli import main

    folder = tmp_path / "Sync"
    folder.mkdir()
    a, b = str(tmp_path / "a.db"), str(tmp_path / "b.db")
    main(["--db", a, "add", "from a", "--user", "sam"])
    main(["--db", b, "add", "from b", "--user", "sam"])
    for db in (a, b, a):
        assert main(["--db", db, "sync", str(folder)]) == 0
    capsys.readouterr()
    with localmem.open(a) as sa, localmem.open(b) as sb:
        assert sa.digest() == sb.digest()


# -- a file is evidence, not a command (issue 15) ------------------------------------------------


def _rows(path: Path | str) -> list[dict[str, object]]:
    """The rows of a sync file (header and trailer left out)."""
    return [json.loads(x) for x in gzip.decompress(Path(path).read_bytes()).splitlines()[1:-1]]


def _forge(path: Path, origin: str, rows: list[dict[str, object]], **header: object) -> Path:
    """A well-formed sync file (valid header, counts and checksum) holding exactly ``rows``."""
    import hashlib

    counts = {k: sum(r["t"] == k for r in rows) for k in ("memory", "revision", "derivation", "tombstone")}
    head = {"format": "localmem-sync", "format_version": 1, "schema_version": SCHEMA_VERSION,
            "origin": origin, "created_at": 0, "watermark": {"from": 0, "to": len(rows)},
            "user_id": None, "counts": counts, **header}
    body = b"".join(json.dumps(x, separators=(",", ":")).encode() + b"\n" for x in [head, *rows])
    trailer = {"end": {"sha256": hashlib.sha256(body).hexdigest(), "rows": len(rows)}}
    path.write_bytes(gzip.compress(body + json.dumps(trailer).encode() + b"\n"))
    return path


def test_a_peer_clock_in_2150_is_refused_and_never_carries_this_stores_clock(
        phone: localmem.Store, tmp_path: Path) -> None:
    """A file recorded far in the future is quarantined (SyncClockError, nothing applied); local writes
    keep recording at this store's own clock."""
    future, _ = _open(tmp_path / "future.db", "2150-01-01T00:00:00Z")
    future.add("from a clock gone wrong", user_id="sam")
    path = future.export(tmp_path / "f.gz").path
    before = full_dump(phone)
    with pytest.raises(localmem.SyncClockError, match=r"line 2 .*more than a day after this store's clock"):
        phone.import_(path)
    assert full_dump(phone) == before
    assert phone.add("today", user_id="sam").recorded_at.year == 2026
    future.close()


def test_a_clock_past_the_recorded_range_is_a_clear_error(tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    """A local clock in 2300 (past what a 64-bit hybrid clock holds) refuses the write with one line."""
    from localmem.cli import main

    db = str(tmp_path / "x.db")
    assert main(["--db", db, "--now", "2300-01-01T00:00Z", "add", "x", "--user", "u"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("localmem: error:") and "2200-01-01" in err and len(err.splitlines()) == 1
    s, _ = _open(db, "2300-01-01T00:00:00Z")
    with pytest.raises(localmem.InvalidTimeError, match="2300-01-01"):
        s.add("x", user_id="u")
    assert s.connection.execute("SELECT count(*) FROM revisions").get == 0
    s.close()


def _one_memory_file(store: localmem.Store, tmp_path: Path, text: str = "Alice: diagnosis") -> Path:
    store.add(text, user_id="alice")
    return Path(store.export(tmp_path / "one.gz").path)


def test_a_revision_with_another_users_id_is_refused_naming_the_line_and_rule(
        phone: localmem.Store, laptop: localmem.Store, tmp_path: Path) -> None:
    """Alice's memory with a revision claiming user mallory (hashes recomputed) applies nothing."""
    memory, rev = _rows(_one_memory_file(phone, tmp_path))
    rev["user_id"] = "mallory"
    _rehash(rev, str(memory["kind"]), None, None)
    forged = _forge(tmp_path / "forged.gz", phone.device_id, [memory, rev])
    before = full_dump(laptop)
    with pytest.raises(localmem.SyncRuleError, match=r"line 3 .*revisions carry their memory's user"):
        laptop.import_(forged)
    assert full_dump(laptop) == before
    assert laptop.read("mallory") == [] and laptop.doctor().ok


def test_a_peer_correction_older_than_the_local_revision_it_follows_is_refused(
        laptop: localmem.Store, tmp_path: Path) -> None:
    """A 'correction' of a memory only this store has, recorded before the revision it follows, is refused."""
    mine = laptop.add("fee is 4", user_id="acct", value=4)
    memory, first = _rows(laptop.export(tmp_path / "mine.gz").path)
    fake = {**first, "rev_id": "01" + "Z" * 24, "version": 2, "op": "correct", "prev_rev": mine.rev_id,
            "recorded_at": int(first["recorded_at"]) - 86_400_000_000,  # type: ignore[call-overload]
            "hlc": int(first["hlc"]) + 1, "origin": "evil",  # type: ignore[call-overload]
            "content": {**first["content"], "value": "999"}}  # type: ignore[dict-item]
    _rehash(fake, str(memory["kind"]), None, str(first["rev_hash"]))
    before = full_dump(laptop)
    with pytest.raises(localmem.SyncRuleError, match="each revision follows the previous version"):
        laptop.import_(_forge(tmp_path / "forged.gz", "evil", [fake]))
    assert full_dump(laptop) == before
    kept = laptop.get(mine.memory_id, known_at=FAR)
    assert kept is not None and kept.value == 4


def test_a_known_revision_id_with_other_content_is_refused_not_skipped(
        phone: localmem.Store, laptop: localmem.Store, tmp_path: Path) -> None:
    """Reusing a revision id laptop already holds, with other words, is an error (it was skipped silently)."""
    good = _one_memory_file(phone, tmp_path)
    laptop.import_(good)
    memory, rev = _rows(good)
    rev["content"] = {**rev["content"], "text": "Alice: nothing wrong"}  # type: ignore[dict-item]
    _rehash(rev, str(memory["kind"]), None, None)
    with pytest.raises(localmem.SyncRuleError, match="an id names one row"):
        laptop.import_(_forge(tmp_path / "forged.gz", phone.device_id, [memory, rev]))
    assert [m.text for m in laptop.read("alice")] == ["Alice: diagnosis"]


def test_a_revision_without_content_for_a_memory_not_erased_is_refused(
        phone: localmem.Store, laptop: localmem.Store, tmp_path: Path) -> None:
    """A revision arriving without its words is allowed only for a memory erased by the end of the file."""
    memory, rev = _rows(_one_memory_file(phone, tmp_path))
    content = rev["content"]
    assert isinstance(content, dict)
    rev["content_hash"] = chain.content_hash(*(content[f] for f in CONTENT_FIELDS)).hex()
    rev["content"] = None
    with pytest.raises(localmem.SyncRuleError, match="every revision has its content unless erased"):
        laptop.import_(_forge(tmp_path / "forged.gz", phone.device_id, [memory, rev]))


@pytest.mark.parametrize("field", ["hlc", "valid_from"])
def test_integers_beyond_64_bits_are_a_sync_file_error(
        phone: localmem.Store, laptop: localmem.Store, tmp_path: Path, field: str) -> None:
    """hlc or valid_from of 2**70 is refused as a SyncFileError, not an OverflowError."""
    memory, rev = _rows(_one_memory_file(phone, tmp_path))
    rev[field] = 2**70
    with pytest.raises(localmem.SyncFileError, match="64 bits"):
        laptop.import_(_forge(tmp_path / "forged.gz", phone.device_id, [memory, rev]))


def test_a_header_with_a_created_at_that_is_not_a_time_is_refused(
        phone: localmem.Store, laptop: localmem.Store, tmp_path: Path) -> None:
    """created_at: "yesterday" in the header is a SyncFileError before anything is read further."""
    rows = _rows(_one_memory_file(phone, tmp_path))
    with pytest.raises(localmem.SyncFileError, match="created_at"):
        laptop.import_(_forge(tmp_path / "forged.gz", phone.device_id, rows, created_at="yesterday"))


def test_a_row_nested_200k_deep_is_refused(phone: localmem.Store, laptop: localmem.Store,
                                          tmp_path: Path) -> None:
    """JSON nested 200,000 deep is a SyncFileError, not a RecursionError."""
    import hashlib

    rows = _rows(_one_memory_file(phone, tmp_path))
    path = _forge(tmp_path / "deep.gz", phone.device_id, rows)
    lines = gzip.decompress(path.read_bytes()).splitlines(keepends=True)
    lines[2] = b'{"t":"revision","content":' + b"[" * 200_000 + b"]" * 200_000 + b"}\n"
    trailer = {"end": {"sha256": hashlib.sha256(b"".join(lines[:-1])).hexdigest(), "rows": 2}}
    path.write_bytes(gzip.compress(b"".join(lines[:-1]) + json.dumps(trailer).encode() + b"\n"))
    with pytest.raises(localmem.SyncFileError, match="nests JSON too deeply"):
        laptop.import_(path)


def test_a_small_gzip_expanding_to_one_huge_line_is_refused_without_holding_it(
        laptop: localmem.Store, tmp_path: Path) -> None:
    """A gzip of a few KB that expands to one 20 MB line is refused at the 16 MB line limit."""
    from localmem.sync import files

    bomb = tmp_path / "bomb.gz"
    bomb.write_bytes(gzip.compress(b'{"format":"' + b" " * (20 << 20) + b'"}\n'))
    assert bomb.stat().st_size < 100_000 and files.MAX_LINE_BYTES == 16 << 20
    with pytest.raises(localmem.SyncFileError, match="longer than 16777216 bytes"):
        laptop.import_(bomb)


def test_a_file_over_the_size_limit_is_refused(phone: localmem.Store, laptop: localmem.Store,
                                               tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A sync file larger than MAX_FILE_BYTES is refused before it is read."""
    from localmem.sync import files

    path = _one_memory_file(phone, tmp_path)
    monkeypatch.setattr(files, "MAX_FILE_BYTES", 100)
    with pytest.raises(localmem.SyncFileError, match="at most 100 bytes"):
        laptop.import_(path)


def _within(seconds: float, fn: object) -> BaseException | None:
    """Run ``fn`` in a thread; fail the test if it has not finished in time (a FIFO would hang it)."""
    import threading

    out: list[BaseException | None] = [None]

    def run() -> None:
        try:
            fn()  # type: ignore[operator]
        except BaseException as exc:  # noqa: BLE001 - handed back to the test
            out[0] = exc

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(seconds)
    assert not t.is_alive(), "it hung"
    return out[0]


def test_a_fifo_a_directory_and_a_device_are_refused_without_hanging(tmp_path: Path) -> None:
    """Only regular files are read: a FIFO is refused at once (it used to wait for a writer forever)."""
    fifo = tmp_path / "pipe.gz"
    os.mkfifo(fifo)
    folder = tmp_path / "dir.gz"
    folder.mkdir()
    s, _ = _open(tmp_path / "s.db", "2026-03-02T09:00:00Z")
    for path, kind in ((fifo, "a FIFO"), (folder, "a directory"), (Path("/dev/zero"), "a device")):
        err = _within(10, lambda p=path: s.import_(p))
        assert isinstance(err, localmem.SyncFileError) and kind in str(err), (path, err)
    s.close()


def _folder_with_peer(tmp_path: Path) -> tuple[Path, localmem.Store, localmem.Store]:
    folder = tmp_path / "Sync"
    folder.mkdir()
    phone, _ = _open(tmp_path / "phone.db", "2026-03-02T09:00:00Z")
    laptop, _ = _open(tmp_path / "laptop.db", "2026-03-02T09:00:00Z")
    phone.add("Sam is vegetarian", user_id="sam")
    phone.sync_dir(folder)
    return folder, phone, laptop


def test_sync_dir_skips_and_reports_bad_files_and_still_writes_its_own(tmp_path: Path) -> None:
    """A bad gzip, a directory, a symlink to /etc/passwd and a FIFO under matching names are skipped with
    reasons; the good peer file is imported and this device's export is written."""
    folder, phone, laptop = _folder_with_peer(tmp_path)
    laptop.add("laptop's own", user_id="sam")
    (folder / "aaaa.000001.lmsync.gz").write_bytes(b"\x1f\x8bnot gzip at all")
    (folder / "bbbb.000001.lmsync.gz").mkdir()
    (folder / "cccc.000001.lmsync.gz").symlink_to("/etc/passwd")
    os.mkfifo(folder / "dddd.000001.lmsync.gz")
    box: list[localmem.SyncSummary] = []
    assert _within(20, lambda: box.append(laptop.sync_dir(folder))) is None
    [result] = box
    assert [Path(i.path).name for i in result.imported] == [f"{phone.device_id}.000001.lmsync.gz"]
    assert sorted(Path(k.path).name[:4] for k in result.skipped) == ["aaaa", "bbbb", "cccc", "dddd"]
    assert all(k.reason for k in result.skipped)
    assert result.exported is not None and result.exported.revisions == 2
    phone.close()
    laptop.close()


def test_a_forged_own_file_with_a_huge_watermark_is_not_trusted(tmp_path: Path) -> None:
    """`<own-id>.000002` claiming watermark 10**6 is skipped as untrusted; the next export still carries
    the new revisions."""
    folder, phone, _laptop = _folder_with_peer(tmp_path)
    own = folder / f"{phone.device_id}.000001.lmsync.gz"
    _rewrite(own, folder / f"{phone.device_id}.000002.lmsync.gz",
             _header_edit(watermark={"from": 0, "to": 10**6}))
    phone.add("Sam runs on Sundays", user_id="sam")
    result = phone.sync_dir(folder)
    assert result.exported is not None and result.exported.revisions == 1
    assert any("not trusted" in k.reason and k.path.endswith(".000002.lmsync.gz") for k in result.skipped)
    _laptop.close()
    phone.close()


def test_a_forged_peer_file_numbered_999999_does_not_block_the_peers_later_files(tmp_path: Path) -> None:
    """A copy of phone's file named `<phone>.999999`, imported then removed, hides none of its later files."""
    folder, phone, laptop = _folder_with_peer(tmp_path)
    genuine = folder / f"{phone.device_id}.000001.lmsync.gz"
    forged = folder / f"{phone.device_id}.999999.lmsync.gz"
    forged.write_bytes(genuine.read_bytes())
    laptop.sync_dir(folder)
    forged.unlink()
    later = phone.add("Sam moved to Berlin", user_id="sam")
    assert phone.sync_dir(folder).exported is not None
    result = laptop.sync_dir(folder)
    assert [Path(i.path).name for i in result.imported] == [f"{phone.device_id}.000002.lmsync.gz"]
    assert laptop.get(later.memory_id, known_at=FAR) is not None
    phone.close()
    laptop.close()


def test_names_ending_in_a_newline_do_not_match(tmp_path: Path) -> None:
    """`<phone>.000001.lmsync.gz\\n` is not a sync file name: it is neither imported nor reported."""
    folder, phone, laptop = _folder_with_peer(tmp_path)
    genuine = folder / f"{phone.device_id}.000001.lmsync.gz"
    genuine.rename(folder / (genuine.name + "\n"))
    result = laptop.sync_dir(folder)
    assert result.imported == () and result.skipped == ()
    phone.close()
    laptop.close()


def test_a_file_named_as_another_devices_is_refused(tmp_path: Path) -> None:
    """A copy of phone's file named as device C's is skipped (its header's origin is phone), not recorded."""
    folder, phone, laptop = _folder_with_peer(tmp_path)
    genuine = folder / f"{phone.device_id}.000001.lmsync.gz"
    genuine.rename(folder / "cafe.000001.lmsync.gz")
    result = laptop.sync_dir(folder)
    assert result.imported == ()
    [skip] = result.skipped
    assert "named as device 'cafe'" in skip.reason
    assert laptop.connection.execute("SELECT count(*) FROM sync_peers WHERE peer = 'cafe'").get == 0
    phone.close()
    laptop.close()


def test_a_hash_that_is_not_a_sha256_is_refused(phone: localmem.Store, laptop: localmem.Store,
                                                 tmp_path: Path) -> None:
    """A revision's rev_hash must be 64 hex digits (a SHA-256), else the file is a SyncFileError."""
    memory, rev = _rows(_one_memory_file(phone, tmp_path))
    rev["rev_hash"] = "not a hash"
    with pytest.raises(localmem.SyncFileError, match="is not a SHA-256"):
        laptop.import_(_forge(tmp_path / "forged.gz", phone.device_id, [memory, rev]))


@pytest.mark.parametrize("where", ["memory created_at", "revision hlc", "tombstone erased_at"])
def test_every_time_a_file_brings_is_bounded_by_the_skew(
        phone: localmem.Store, laptop: localmem.Store, tmp_path: Path, where: str) -> None:
    """A memory's creation, a revision's clock or a tombstone's erased_at 10 days ahead refuses the file."""
    m = phone.add("Alice: diagnosis", user_id="alice")
    phone.erase(m.memory_id)
    memory, rev, tomb = _rows(phone.export(tmp_path / "one.gz").path)
    ahead = int(rev["recorded_at"]) + 10 * 86_400_000_000  # type: ignore[call-overload]
    if where == "memory created_at":
        memory["created_at"] = ahead
    elif where == "revision hlc":
        rev["hlc"] = ahead << 10
        _rehash(rev, str(memory["kind"]), None, None)
    else:
        tomb["erased_at"] = ahead
    before = full_dump(laptop)
    with pytest.raises(localmem.SyncClockError, match="more than a day after"):
        laptop.import_(_forge(tmp_path / "forged.gz", phone.device_id, [memory, rev, tomb]))
    assert full_dump(laptop) == before
