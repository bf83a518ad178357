"""A large file is read by a reader process beside the import: the same rows, the same refusals.

The size from which a file goes to the reader is lowered to nothing here, so these small
files take that path; each is imported both ways (in a store of its own) and the two must
end alike: the same summary and rows, or the same error with the store as it was.
"""

from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path

import pytest
from test_sync import _forge, _rehash, _rows, full_dump

import localmem
from localmem.sync import reader
from localmem.testing import FrozenClock

WEDNESDAY = "2026-03-04T09:00:00Z"


def fill(store: localmem.Store, n: int) -> list[str]:
    with store.batch():
        ids = [store.add(f"note {i} about lisbon", user_id=f"u{i % 3}", resolve=False).memory_id
               for i in range(n)]
        for memory_id in ids[::3]:
            store.correct(memory_id, text="corrected: a swim in the river")
    return ids


def both_ways(path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
              seed: Path | None = None) -> tuple[tuple[str, object], tuple[str, object]]:
    """The outcome of importing ``path`` in this process and through the reader (each into a fresh
    store, or a copy of ``seed``): the summary and the rows, or the error and whether the store
    was left as it was."""
    outcomes: list[tuple[str, object]] = []
    for name, size in (("here", 1 << 40), ("reader", 0)):
        monkeypatch.setattr(reader, "READER_BYTES", size)
        db = tmp_path / f"{name}-{path.stem}.db"
        if seed is not None:
            db.write_bytes(seed.read_bytes())
        with localmem.open(db, clock=FrozenClock(WEDNESDAY)) as store:
            before = full_dump(store)
            try:
                got = store.import_(path)
            except localmem.SyncFileError as exc:
                outcomes.append((f"{type(exc).__name__}: {exc}", full_dump(store) == before))
            else:
                after = full_dump(store)
                del after["imports"], after["store_meta"]  # the import's id, the store's device id
                outcomes.append((repr((got.revisions, got.memories, got.skipped, got.sha256)), after))
    return outcomes[0], outcomes[1]


def test_a_file_read_by_the_reader_imports_the_same_rows(
        phone: localmem.Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fill(phone, 60)
    out = Path(phone.export(tmp_path / "p.gz").path)
    here, there = both_ways(out, tmp_path, monkeypatch)
    assert here == there
    monkeypatch.setattr(reader, "READER_BYTES", 0)
    with localmem.open(tmp_path / "again.db", clock=FrozenClock(WEDNESDAY)) as laptop:
        assert laptop.import_(out).revisions == 80
        assert laptop.digest() == phone.digest() and laptop.doctor().ok
        assert laptop.import_(out).skipped == 140


def _lines_edit(src: Path, dst: Path, edit: object) -> Path:
    data = edit(gzip.decompress(src.read_bytes()))  # type: ignore[operator]
    dst.write_bytes(gzip.compress(data))
    return dst


@pytest.mark.parametrize("damage", ["truncated", "flipped", "not-json", "after-trailer", "no-trailer"])
def test_a_damaged_file_is_refused_alike(damage: str, phone: localmem.Store, tmp_path: Path,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    fill(phone, 30)
    out = Path(phone.export(tmp_path / "p.gz").path)
    raw = out.read_bytes()
    bad = tmp_path / f"{damage}.gz"
    if damage == "truncated":
        bad.write_bytes(raw[: len(raw) // 2])
    elif damage == "flipped":
        bad.write_bytes(raw[:40] + bytes([raw[40] ^ 1]) + raw[41:])
    elif damage == "not-json":
        _lines_edit(out, bad, lambda d: d.replace(b'"t":"revision"', b'"t":revision', 1))
    elif damage == "after-trailer":
        _lines_edit(out, bad, lambda d: d + b'{"t":"memory"}\n')
    else:
        _lines_edit(out, bad, lambda d: d[: d.rindex(b'{"end"')])
    here, there = both_ways(bad, tmp_path, monkeypatch)
    assert here == there and here[1] is True


def test_a_forged_hash_under_the_readers_guess_is_still_refused(
        phone: localmem.Store, laptop: localmem.Store, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The reader guesses a memory's kind and key when its row is not in the file; a revision
    hashed under that guess, not under its memory's real kind, is refused all the same."""
    fill(phone, 5)
    pref = phone.add("Alice prefers tea", user_id="u1", kind="preference", resolve=False)
    first = Path(phone.export(tmp_path / "first.gz").path)
    laptop.import_(first)
    laptop.close()
    rows = _rows(first)
    rev = next(r for r in rows if r["t"] == "revision" and r["memory_id"] == pref.memory_id)
    memories = [r for r in rows if r["t"] == "memory" and r["memory_id"] != pref.memory_id]
    forged = dict(rev, rev_id="01KZZZZZZZZZZZZZZZZZZZZZZZ", version=2, op="correct", corrected=1,
                  prev_rev=rev["rev_id"], hlc=int(str(rev["hlc"])) + 1,
                  content={"text": "Alice prefers coffee", "value": None, "attributes": None,
                           "source": None, "reason": None})
    _rehash(forged, "fact", None, str(rev["rev_hash"]))  # the file's common kind, not "preference"
    forged["content_hash"] = None
    path = _forge(tmp_path / "forged.gz", phone.device_id, [*memories, forged])
    here, there = both_ways(path, tmp_path, monkeypatch, seed=tmp_path / "laptop.db")
    assert here == there
    assert here[0].startswith("SyncRuleError") and "revision hashes match" in here[0] and here[1] is True
    _rehash(forged, "preference", None, str(rev["rev_hash"]))
    forged["content_hash"] = None
    path = _forge(tmp_path / "honest.gz", phone.device_id, [*memories, forged])
    here, there = both_ways(path, tmp_path, monkeypatch, seed=tmp_path / "laptop.db")
    assert here == there and "(1, 0," in here[0]


def test_a_revision_whose_rows_break_the_rules_is_refused_alike(
        phone: localmem.Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A rehashed row with another user, and a row SQLite refuses (an op no revision has)."""
    fill(phone, 8)
    rows = _rows(phone.export(tmp_path / "p.gz").path)
    kinds = {r["memory_id"]: str(r["kind"]) for r in rows if r["t"] == "memory"}
    for name, change in (("user", {"user_id": "mallory"}), ("op", {"op": "bogus"})):
        edited = [dict(r) for r in rows]
        target = next(r for r in edited if r["t"] == "revision" and r["version"] == 1)
        target.update(change)
        _rehash(target, kinds[str(target["memory_id"])], None, None)
        target["content_hash"] = None
        path = _forge(tmp_path / f"{name}.gz", phone.device_id, edited)
        here, there = both_ways(path, tmp_path, monkeypatch)
        assert here == there and here[1] is True, name


def test_a_reader_that_cannot_start_leaves_the_import_to_this_process(
        phone: localmem.Store, laptop: localmem.Store, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    fill(phone, 10)
    out = phone.export(tmp_path / "p.gz")
    monkeypatch.setattr(reader, "READER_BYTES", 0)
    monkeypatch.setattr(sys, "executable", str(tmp_path / "no-python-here"))
    assert laptop.import_(out.path).revisions == 14
    assert laptop.digest() == phone.digest()


def test_the_readers_events_are_the_files_events(phone: localmem.Store, tmp_path: Path) -> None:
    """Less what it computes beside them (the hashes, checked in test_a_forged_hash...)."""
    fill(phone, 12)
    out = Path(phone.export(tmp_path / "p.gz").path)
    with reader.events(out, worker=False) as here, reader.events(out, worker=True) as there:
        mine = list(here)
        theirs = [(e[0], [(n, o) for n, o, _pre in e[1]]) if e[0] == "rows" else e for e in there]
    assert [(e[0], [(n, o) for n, o, _pre in e[1]]) if e[0] == "rows" else e for e in mine] == theirs
    assert json.loads(mine[0][1])["counts"]["revision"] == 16


def test_a_piece_with_a_row_orjson_would_read_otherwise_comes_parsed_by_json_loads(
        phone: localmem.Store, tmp_path: Path) -> None:
    """The reader sends a piece as its lines only when orjson reads every line as json.loads does;
    a float in a row (here in a memory's key) sends the piece as rows, parsed by json.loads."""
    fill(phone, 6)
    rows = _rows(phone.export(tmp_path / "p.gz").path)
    odd = next(r for r in rows if r["t"] == "memory")
    odd["key"] = 1.5
    path = _forge(tmp_path / "odd.gz", phone.device_id, rows)
    with reader.events(path, worker=False) as here, reader.events(path, worker=True) as there:
        mine = list(here)
        theirs = [(e[0], [(n, o) for n, o, _pre in e[1]]) if e[0] == "rows" else e for e in there]
    assert [(e[0], [(n, o) for n, o, _pre in e[1]]) if e[0] == "rows" else e for e in mine] == theirs
    assert any(o.get("key") == 1.5 for e in mine if e[0] == "rows" for _n, o, _pre in e[1])
