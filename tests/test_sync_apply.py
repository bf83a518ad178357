"""An import's fast paths read, check and write exactly what the plain paths did.

The file is read once, a piece at a time; rows are parsed by the stdlib scanner (json.loads
where a line is not as an export writes it); the store's rows for a chunk's ids are looked
up together. Each is checked here against the behaviour it replaced: the same rows, the
same errors, lines at every size limit just below and just above it, chunks and pieces
cut at every boundary, files written before the export's gzip level changed.
"""

from __future__ import annotations

import gzip
import hashlib
import json
from pathlib import Path

import pytest
from test_sync import _forge, _rehash, _rows, full_dump

import localmem
from localmem.core.db import connect
from localmem.core.ledger import Ledger
from localmem.sync import apply, files
from localmem.testing import FrozenClock


def fill(store: localmem.Store, n: int) -> None:
    with store.batch():
        ids = [store.add(f"note {i} about lisbon", user_id=f"u{i % 3}", resolve=False).memory_id
               for i in range(n)]
        for memory_id in ids[::3]:
            store.correct(memory_id, text="corrected: a swim in the river")


def _outcome(fn: object, *args: object) -> tuple[str, object]:
    try:
        return "ok", fn(*args)  # type: ignore[operator]
    except localmem.SyncFileError as exc:
        return type(exc).__name__, str(exc)


@pytest.mark.parametrize("line", [
    b'{"t":"memory","memory_id":"x"}\n',
    b'{"t":"memory","memory_id":"x"}',  # a last line without its newline
    b'{"t":"memory","text":"caf\xc3\xa9 \xe2\x82\xac"}\n',
    b' {"t":"memory"}\n',  # whitespace around: json.loads allows it
    b'{"t":"memory"} \n',
    b'{"t":"memory"}\r\n',
    b'{"a":1}{"b":2}\n',  # extra data
    b'{"a":1},{"b":2}\n',
    b'[1, 2]\n',  # not an object
    b'"text"\n',
    b'{"a":NaN}\n',
    b'{"a":"\xed\xa0\x80"}\n',  # a lone surrogate in UTF-8: json.loads decodes it (surrogatepass)
    '{"a":1}\n'.encode("utf-16-le"),  # json.loads sniffs the encoding
    b'{"a":\n',
    b'\n',
    b'{"a":"\xff"}\n',
    b'{"a":"tab\there"}\n',  # a control character inside a string
])
def test_a_row_is_parsed_as_json_loads_parses_it(line: bytes, tmp_path: Path) -> None:
    """parse_row gives parse_line's row, or its very error, for every kind of line."""
    path = tmp_path / "f.gz"
    assert _outcome(files.parse_row, line, 7, path) == _outcome(files.parse_line, line, 7, path)


@pytest.mark.parametrize("line", [
    b'{"t":"revision","hlc":9223372036854775807,"n":-9223372036854775808,"ok":true,"no":null}',
    b'{"t":"revision","hlc":18446744073709551616}',  # beyond 64 bits: orjson gives a float
    b'{"t":"revision","hlc":-9223372036854775809}',
    b'{"t":"revision","hlc":1e3}',
    b'{"t":"revision","hlc":1.0}',
    b'{"t":"revision","hlc":1e400}',
    b'{"t":"revision","x":"\\ud800"}',  # an escaped lone surrogate: orjson refuses it
    b'{"t":"revision","x":"\\ud83d\\ude00 \\u0000 \\/"}',
    b'\xef\xbb\xbf{"t":"memory"}',  # a byte-order mark: json.loads skips it
    b'{"t":"revision","content":{"text":"x","value":null,"n":3}}',
    b'{"t":"revision","content":{"text":["x"]}}',
    b'{"t":"revision","content":{"text":{"deeper":1}}}',
    b'{"t":"revision","content":[1]}',
    b'{"t":"revision","a":1,"b":2,"a":3}',  # a key twice: the last value, the first place
    b'{"t":"revision","content":' + b'[' * 995 + b']' * 995 + b'}',  # past json.loads' depth, not orjson's
    b'{"t":"revision","content":' + b'{"a":' * 995 + b'1' + b'}' * 995 + b'}',
])
def test_a_row_is_exactly_what_json_loads_makes_of_it(line: bytes, tmp_path: Path) -> None:
    """Types and key order included: an integer is not its float, ``True`` not ``1``."""
    path = tmp_path / "f.gz"
    got, want = _outcome(files.parse_row, line, 7, path), _outcome(files.parse_line, line, 7, path)
    assert repr(got) == repr(want)
    if got[0] == "ok":
        assert list(got[1]) == list(want[1])  # type: ignore[call-overload]


def _pieces(data: bytes, tmp_path: Path) -> list[bytes]:
    path = tmp_path / "lines.gz"
    path.write_bytes(gzip.compress(data))
    with files.lines(path) as found:
        return list(found)


@pytest.mark.parametrize("piece", [1, 2, 5, 64])
def test_lines_cut_at_any_piece_size_are_the_files_lines(piece: int, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """Lines straddling pieces, empty lines and a last line without its newline come back whole."""
    monkeypatch.setattr(files, "_PIECE_BYTES", piece)
    data = b'{"a":1}\n\n{"bb":"' + b"x" * 40 + b'"}\n{"c":3}\n{"end":1}'
    assert _pieces(data, tmp_path) == data.splitlines(keepends=True)
    assert _pieces(data + b"\n", tmp_path) == (data + b"\n").splitlines(keepends=True)


@pytest.mark.parametrize("piece", [3, 16, 1 << 20])
def test_the_line_limit_refuses_one_byte_over_and_takes_a_line_at_it(
        piece: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A line of MAX_LINE_BYTES with its newline is read; one byte more is refused, naming its line;
    a last line without a newline may take all MAX_LINE_BYTES."""
    monkeypatch.setattr(files, "_PIECE_BYTES", piece)
    monkeypatch.setattr(files, "MAX_LINE_BYTES", 10)
    at = b"a" * 9 + b"\n"
    assert _pieces(b"x\n" + at + b"y\n", tmp_path) == [b"x\n", at, b"y\n"]
    with pytest.raises(localmem.SyncFileError, match="line 2 of .* longer than 10 bytes"):
        _pieces(b"x\n" + b"a" + at + b"y\n", tmp_path)
    with pytest.raises(localmem.SyncFileError, match="line 3 of .* longer than 10 bytes"):
        _pieces(b"x\n" + at + b"a" + at + b"aa" + at, tmp_path)  # the first too long, not the longest
    assert _pieces(b"x\n" + b"a" * 10, tmp_path) == [b"x\n", b"a" * 10]
    with pytest.raises(localmem.SyncFileError, match="line 2 of .* longer than 10 bytes"):
        _pieces(b"x\n" + b"a" * 11, tmp_path)


@pytest.mark.parametrize("piece", [4, 1 << 20])
def test_the_expanded_limit_takes_a_file_at_it_and_refuses_one_byte_more(
        piece: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(files, "_PIECE_BYTES", piece)
    monkeypatch.setattr(files, "MAX_EXPANDED_BYTES", 20)
    assert len(_pieces(b"a" * 9 + b"\n" + b"b" * 9 + b"\n", tmp_path)) == 2
    assert len(_pieces(b"a" * 9 + b"\n" + b"b" * 10, tmp_path)) == 2
    for over in (b"a" * 9 + b"\n" + b"b" * 10 + b"\n", b"a" * 9 + b"\n" + b"b" * 11):
        with pytest.raises(localmem.SyncFileError, match="expands to more than 20 bytes"):
            _pieces(over, tmp_path)


@pytest.mark.parametrize(("chunk", "piece"), [(1, 1 << 20), (2, 97), (7, 1 << 20), (4096, 501)])
def test_any_chunk_and_piece_size_imports_the_same_rows(
        chunk: int, piece: int, phone: localmem.Store, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Chunks of 1, 2, 7 or all the rows, pieces cutting lines anywhere: the same store, and a second
    import skips every row (the batched look-ups find them all)."""
    fill(phone, 40)
    out = phone.export(tmp_path / "p.gz")
    monkeypatch.setattr(apply, "CHUNK_ROWS", chunk)
    monkeypatch.setattr(files, "_PIECE_BYTES", piece)
    with localmem.open(tmp_path / f"l{chunk}.db", clock=FrozenClock("2026-03-04T09:00:00Z")) as laptop:
        got = laptop.import_(out.path)
        assert (got.memories, got.revisions, got.skipped) == (40, 54, 0)
        assert laptop.digest() == phone.digest() and laptop.doctor().ok
        again = laptop.import_(out.path)
        assert not again.changed and again.skipped == 94


def _with_lines(src: Path, dst: Path, edit: object) -> Path:
    body = gzip.decompress(src.read_bytes()).splitlines(keepends=True)[:-1]
    body = edit(body)  # type: ignore[operator]
    trailer = {"end": {"sha256": hashlib.sha256(b"".join(body)).hexdigest(), "rows": len(body) - 1}}
    head = json.loads(body[0])
    head["counts"]["revision"] += len(body) - 1 - sum(head["counts"].values())
    body[0] = json.dumps(head).encode() + b"\n"
    trailer["end"]["sha256"] = hashlib.sha256(b"".join(body)).hexdigest()
    dst.write_bytes(gzip.compress(b"".join(body) + json.dumps(trailer).encode() + b"\n"))
    return dst


@pytest.mark.parametrize("chunk", [3, 4096])
def test_a_revision_twice_in_one_file_is_skipped_the_second_time_in_one_chunk_or_two(
        chunk: int, phone: localmem.Store, laptop: localmem.Store, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The second copy is compared with the first (written by then); another text under its id is refused."""
    fill(phone, 4)
    out = Path(phone.export(tmp_path / "p.gz").path)
    monkeypatch.setattr(apply, "CHUNK_ROWS", chunk)
    twice = _with_lines(out, tmp_path / "twice.gz", lambda ls: [*ls[:6], ls[5], *ls[6:]])
    got = laptop.import_(twice)
    assert (got.revisions, got.skipped) == (6, 1) and laptop.digest() == phone.digest()

    def other(ls: list[bytes]) -> list[bytes]:
        row = json.loads(ls[5])
        row["retracted"] = 1
        return [*ls[:6], json.dumps(row).encode() + b"\n", *ls[6:]]
    with localmem.open(tmp_path / "other.db", clock=FrozenClock("2026-03-04T09:00:00Z")) as fresh:
        before = full_dump(fresh)
        with pytest.raises(localmem.SyncRuleError, match="line 7 .*differs from the one here"):
            fresh.import_(_with_lines(out, tmp_path / "other.gz", other))
        assert full_dump(fresh) == before


def test_an_id_that_is_not_ascii_is_looked_up_on_its_own(
        phone: localmem.Store, laptop: localmem.Store, tmp_path: Path) -> None:
    """Ids outside the batched look-ups (not plain ASCII) are still found: a second import skips them."""
    phone.add("Alice: diagnosis", user_id="alice")
    memory, rev = _rows(phone.export(tmp_path / "one.gz").path)
    memory["memory_id"] = rev["memory_id"] = "é" * 26
    _rehash(rev, str(memory["kind"]), None, None)
    forged = _forge(tmp_path / "accent.gz", phone.device_id, [memory, rev])
    assert laptop.import_(forged).revisions == 1
    again = laptop.import_(forged)
    assert not again.changed and again.skipped == 2


def test_a_file_both_damaged_and_breaking_a_rule_is_refused_for_its_damage(
        phone: localmem.Store, laptop: localmem.Store, tmp_path: Path) -> None:
    """The file is read once, but the error is the one a check of the whole file first would give."""
    phone.add("Alice: diagnosis", user_id="alice")
    memory, rev = _rows(phone.export(tmp_path / "one.gz").path)
    rev["user_id"] = "mallory"  # breaks a rule (hashes recomputed)...
    _rehash(rev, str(memory["kind"]), None, None)
    forged = _forge(tmp_path / "forged.gz", phone.device_id, [memory, rev])
    lines = gzip.decompress(forged.read_bytes()).splitlines(keepends=True)
    with pytest.raises(localmem.SyncRuleError, match="revisions carry their memory's user"):
        laptop.import_(forged)
    damaged = tmp_path / "damaged.gz"  # ...and fails its checksum
    wrong = lines[-1].replace(b'"sha256": "', b'"sha256": "0')
    damaged.write_bytes(gzip.compress(b"".join(lines[:-1]) + wrong))
    with pytest.raises(localmem.SyncFileError, match="fails its checksum"):
        laptop.import_(damaged)
    after = tmp_path / "after.gz"  # ...or holds a line after its trailer
    after.write_bytes(gzip.compress(b"".join(lines) + lines[1]))
    with pytest.raises(localmem.SyncFileError, match="data after its trailer"):
        laptop.import_(after)
    assert laptop.read("mallory") == [] and laptop.read("alice") == []


@pytest.mark.parametrize("level", [1, 6, 9])
def test_a_file_compressed_at_any_gzip_level_imports_alike(
        level: int, phone: localmem.Store, laptop: localmem.Store, tmp_path: Path) -> None:
    """Files written before the export's level changed (6) still import, and read the same."""
    fill(phone, 12)
    out = Path(phone.export(tmp_path / "p.gz").path)
    again = tmp_path / f"level{level}.gz"
    again.write_bytes(gzip.compress(gzip.decompress(out.read_bytes()), compresslevel=level))
    assert laptop.import_(again).revisions == 16 and laptop.digest() == phone.digest()


class _Hook:
    """A before_chunk hook that records each attempt at a file and the lines it was shown."""

    def __init__(self) -> None:
        self.attempts: list[list[int]] = []

    def start(self) -> None:
        self.attempts.append([])

    def __call__(self, batch: list[tuple[int, dict[str, object]]], /) -> None:
        self.attempts[-1].extend(n for n, _row in batch)


def test_an_import_run_again_after_sqlite_refused_a_chunk_tells_its_hook_it_starts_again(
        phone: localmem.Store, tmp_path: Path) -> None:
    """A first pass writes without savepoints; when SQLite refuses a chunk, all is rolled back and the
    file runs again, chunk by chunk, to name the row. The hook (the hub seeds its staging store from
    it) hears of both attempts, so it never takes what the rolled-back one did as still there."""
    fill(phone, 6)
    out = phone.export(tmp_path / "p.gz").path
    conn = connect(":memory:")
    conn.execute("CREATE TEMP TRIGGER refuse BEFORE INSERT ON revisions WHEN NEW.version = 2 "
                 "BEGIN SELECT RAISE(ABORT, 'no second versions here'); END")
    hook = _Hook()
    with pytest.raises(localmem.LocalmemError, match="no second versions here"):
        apply.import_(Ledger(conn, FrozenClock("2026-03-04T09:00:00Z"), None), out, before_chunk=hook,
                      aside=False)
    assert len(hook.attempts) == 2 and hook.attempts[0] == hook.attempts[1] != []
    assert conn.execute("SELECT count(*) FROM revisions").get == 0


def test_rows_named_by_ids_before_or_after_everything_here_are_found_or_written(
        phone: localmem.Store, laptop: localmem.Store, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Only ids after the greatest of their table here go unlooked-up: a file of older ids than the
    store's newest (the laptop wrote since) is still found here, a row differing from one refused."""
    monkeypatch.setattr(apply, "CHUNK_ROWS", 3)
    fill(phone, 6)
    out = Path(phone.export(tmp_path / "p.gz").path)
    assert laptop.import_(out).revisions == 8
    fill(laptop, 3)  # on Wednesday: ids after every one of the file's (Monday's)
    again = laptop.import_(out)
    assert not again.changed and again.skipped == 14
    rows = _rows(out)
    rows[0]["created_at"] = int(str(rows[0]["created_at"])) + 1
    before = full_dump(laptop)
    with pytest.raises(localmem.SyncRuleError, match="line 2 .*differs from the one here"):
        laptop.import_(_forge(tmp_path / "other.gz", phone.device_id, rows))
    assert full_dump(laptop) == before
