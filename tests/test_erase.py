"""Erase really erases: after store.erase the words are gone from every byte on disk.

The memories below carry made-up words that no other text contains, so a
case-insensitive search of the raw bytes of the database file, its -wal and
its -shm finds them exactly when some trace of the memory survives: in a
content row, a full-text index page, a freed page or an old WAL frame.
"""

from __future__ import annotations

import os
import random
import sqlite3
from collections.abc import Callable
from pathlib import Path

import apsw
import pytest

import localmem
from localmem.testing import FrozenClock

#: Words of the memory that is erased, with a stem-proof prefix of each: the
#: full-text index stores porter stems, so the raw search also looks for these.
ERASED = {"Zorbluxia": "zorblux", "quaffelnix": "quaffeln", "Grimblewortz": "grimblew"}
#: Words of memories that stay, which must still be on disk.
KEPT = {"Vexmorthian": "vexmorth", "Plindragosh": "plindrag"}


def raw_files(path: Path) -> dict[str, bytes]:
    """The lowercased bytes of the database file and its -wal and -shm, when they exist."""
    out = {}
    for suffix in ("", "-wal", "-shm"):
        f = Path(f"{path}{suffix}")
        if f.exists():
            out[f.name] = f.read_bytes().lower()
    return out


def traces(path: Path, words: dict[str, str]) -> list[str]:
    """Where any of ``words`` (or its prefix) occurs in the raw files, as 'file: needle @ offset'."""
    found = []
    for name, data in raw_files(path).items():
        for word, prefix in words.items():
            for needle in {word.lower(), prefix}:
                at = data.find(needle.encode())
                if at >= 0:
                    found.append(f"{name}: {needle!r} @ {at}")
    return found


def on_disk(path: Path, word: str) -> bool:
    """Whether ``word`` occurs (case-insensitively) in the db file, its -wal or its -shm."""
    return any(word.lower().encode() in data for data in raw_files(path).values())


@pytest.fixture
def target(file_store: localmem.Store, clock: FrozenClock) -> str:
    """A memory mentioning the ERASED words in two revisions, beside memories that stay."""
    file_store.add("Ann grew up with a cat called Vexmorthian", user_id="ann")
    rev = file_store.add(
        "Ann's secret nickname is Zorbluxia", user_id="ann", key="nickname",
        value={"nick": "Zorbluxia"}, attributes={"said": "Grimblewortz"},
        source={"quote": "call me Zorbluxia"}, reason="she told us Zorbluxia",
    )
    file_store.add("Ann plays the Plindragosh every Sunday", user_id="ann")
    clock.advance(minutes=10)
    file_store.correct(rev.memory_id, text="Ann's secret nicknames are Zorbluxias and quaffelnixes",
                       reason="Grimblewortz corrected it")
    clock.advance(minutes=10)
    return rev.memory_id


def test_made_up_words_survive_stemming_recognisably(file_store: localmem.Store, target: str) -> None:
    """Every indexed stem of the made-up words starts with the prefix the raw search looks for."""
    conn = file_store.connection
    conn.execute("CREATE VIRTUAL TABLE temp.vocab USING fts5vocab(main, content_fts, row)")
    terms = [t for (t,) in conn.execute("SELECT term FROM temp.vocab")]
    for word, prefix in {**ERASED, **KEPT}.items():
        if word != "Grimblewortz":  # it is only in attributes and reason: not indexed
            assert any(t.startswith(prefix) for t in terms), (word, terms)
    assert {"zorbluxia", "quaffelnix"} <= set(terms)  # plurals stem to the word itself


def test_erase_leaves_no_trace_in_the_files(
    file_store: localmem.Store, target: str, db_path: Path
) -> None:
    """After erase, and again after close, no erased word is in the db, -wal or -shm bytes; kept words are."""
    assert traces(db_path, ERASED), "the words should be on disk before the erase"

    file_store.erase(target, reason="user request")

    assert traces(db_path, ERASED) == []
    assert all(on_disk(db_path, word) for word in KEPT)
    file_store.close()
    assert traces(db_path, ERASED) == []
    assert all(on_disk(db_path, word) for word in KEPT)


def test_checkpointed_file_after_erase_has_no_trace(
    file_store: localmem.Store, target: str, db_path: Path
) -> None:
    """A further write and a full checkpoint after the erase bring no erased word back."""
    file_store.erase(target)
    file_store.add("Ann bought a new Plindragosh", user_id="ann")
    file_store.connection.wal_checkpoint(mode=apsw.SQLITE_CHECKPOINT_TRUNCATE)
    assert traces(db_path, ERASED) == []


def test_erase_keeps_tombstone_revisions_and_history(
    file_store: localmem.Store, target: str, clock: FrozenClock
) -> None:
    """The tombstone exists, the revision rows stay, and history ends with 'erase' and no texts."""
    conn = file_store.connection
    revisions = conn.execute("SELECT count(*) FROM revisions WHERE memory_id = ?", (target,)).get
    assert revisions == 2
    erased_at = clock()

    erasure = file_store.erase(target, reason="user request", by="ann")

    tomb = file_store.erasure(target)
    assert tomb == erasure
    assert (tomb.memory_id, tomb.user_id, tomb.erased_by, tomb.reason) == (
        target, "ann", "ann", "user request")
    assert tomb.erased_at == erased_at
    assert conn.execute("SELECT count(*) FROM revisions WHERE memory_id = ?", (target,)).get == 2
    assert conn.execute("SELECT count(*) FROM content WHERE memory_id = ?", (target,)).get == 0
    history = file_store.history(target)
    assert [c.op for c in history] == ["assert", "correct", "erase"]
    for change in history:
        assert (change.old_text, change.new_text) == (None, None)
        assert (change.old_value, change.new_value, change.source) == (None, None, None)
    assert history[-1].reason == "user request"
    assert file_store.doctor().ok


def test_erased_memory_never_appears_in_reads(
    file_store: localmem.Store, target: str, clock: FrozenClock
) -> None:
    """read never returns it (now, as of before, filters off); get and snapshot show it erased."""
    before = clock()
    file_store.erase(target)
    clock.advance(minutes=1)

    for reads in (
        file_store.read("ann"),
        file_store.read("ann", as_of=before),
        file_store.read("ann", current_only=False, include_expired=True, include_retracted=True),
        file_store.read("ann", key="nickname", current_only=False),
    ):
        assert target not in {r.memory_id for r in reads}
    assert sorted((r.text for r in file_store.read("ann")), key=str) == [
        "Ann grew up with a cat called Vexmorthian", "Ann plays the Plindragosh every Sunday"]
    rev = file_store.get(target)
    assert rev is not None and rev.erased
    assert (rev.text, rev.value, rev.attributes, rev.source, rev.reason) == (None,) * 5
    snap = file_store.snapshot("ann")
    erased = [r for r in snap.memories if r.memory_id == target]
    assert len(erased) == 1 and erased[0].erased and erased[0].text is None
    assert all(r.text is None for r in snap.revisions if r.memory_id == target)
    assert file_store.connection.execute(
        "SELECT count(*) FROM content_fts WHERE content_fts MATCH 'zorbluxia OR quaffelnix'").get == 0
    assert file_store.doctor().ok


WRITES: dict[str, Callable[[localmem.Store, str], object]] = {
    "correct": lambda s, m: s.correct(m, text="Ann's nickname is Bob"),
    "retract": lambda s, m: s.retract(m, reason="again"),
    "expire": lambda s, m: s.expire(m, "2026-04-01"),
    "erase": lambda s, m: s.erase(m),
    "supersede": lambda s, m: s.supersede(m, "Ann's nickname is Bob", valid_from="2026-03-03"),
    "add-supersedes": lambda s, m: s.add("Ann's nickname is Bob", user_id="ann",
                                         supersedes=m, valid_from="2026-03-03"),
}


@pytest.mark.parametrize("write", WRITES.values(), ids=WRITES.keys())
def test_writes_to_an_erased_memory_raise_erased_error(
    file_store: localmem.Store, target: str, write: Callable[[localmem.Store, str], object]
) -> None:
    """Every kind of write to an erased memory raises ErasedError and appends nothing."""
    file_store.erase(target)
    count = file_store.connection.execute("SELECT count(*) FROM revisions").get
    with pytest.raises(localmem.ErasedError, match=target):
        write(file_store, target)
    assert file_store.connection.execute("SELECT count(*) FROM revisions").get == count
    assert file_store.connection.execute("SELECT count(*) FROM erasures").get == 1


def test_erase_inside_a_batch_leaves_no_trace(
    file_store: localmem.Store, target: str, db_path: Path
) -> None:
    """An erase inside store.batch() leaves no trace once the batch commits; its other writes stay."""
    with file_store.batch():
        file_store.add("Ann visited Plindragosh Hall", user_id="ann")
        file_store.erase(target)
        file_store.add("Ann's cat Vexmorthian is twelve", user_id="ann")
    assert traces(db_path, ERASED) == []
    assert {r.text for r in file_store.read("ann")} >= {
        "Ann visited Plindragosh Hall", "Ann's cat Vexmorthian is twelve"}
    assert file_store.doctor().ok
    file_store.close()
    assert traces(db_path, ERASED) == []


def test_erase_of_a_long_memory_leaves_no_trace_in_the_index(
    file_store: localmem.Store, db_path: Path
) -> None:
    """An erased memory whose words span full-text index pages leaves no word, in content_fts_idx either."""
    rng = random.Random(1)

    def filler() -> str:
        return " ".join("".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(8))
                        for _ in range(6))

    words = [f"zorblux{a}{b}" for a in "abcdefghijklmnop" for b in "abcdefghijklmnopqrstuvwxy"]
    for _ in range(20):
        file_store.add(filler(), user_id="ann")
    secret = file_store.add(" ".join(words), user_id="ann").memory_id
    for _ in range(20):
        file_store.add(filler(), user_id="ann")

    file_store.erase(secret)

    # The index's page directory keeps the first term of each leaf page.
    idx_terms = [t for (t,) in file_store.connection.execute(
        "SELECT term FROM content_fts_idx WHERE instr(term, 'zorblux')")]
    file_store.close()
    assert traces(db_path, {"zorblux": "zorblux"}) == [], f"content_fts_idx holds {idx_terms}"
    assert idx_terms == []


def test_stdlib_sqlite3_can_still_search_after_an_erase(
    file_store: localmem.Store, target: str, db_path: Path
) -> None:
    """After an erase, tools on the stdlib sqlite3 module can still query the full-text index."""
    file_store.erase(target)
    conn = sqlite3.connect(db_path)
    try:
        hits = conn.execute(
            "SELECT count(*) FROM content_fts WHERE content_fts MATCH 'vexmorthian'").fetchone()
    finally:
        conn.close()
    assert hits == (1,)


# -- what erase reaches (issue 15) ----------------------------------------------------------------


def test_erasing_a_source_erases_the_memories_derived_from_it(
        file_store: localmem.Store, db_path: Path) -> None:
    """A summary quoting an erased memory (and a summary of that summary) is erased with it: no word stays."""
    secret = file_store.add("Ann's secret nickname is Zorbluxia", user_id="ann")
    kept = file_store.add("Ann plays the Plindragosh every Sunday", user_id="ann")
    summary = file_store.derive("Ann, called Zorbluxia, plays music", from_=[secret, kept], user_id="ann")
    digest = file_store.derive("Weekly: Zorbluxia still plays", from_=[summary], user_id="ann")
    erasure = file_store.erase(secret.memory_id, reason="user request")
    assert set(erasure.derived) == {summary.memory_id, digest.memory_id}
    assert file_store.search("Zorbluxia", user_id="ann") == []
    assert traces(db_path, {"Zorbluxia": "zorblux"}) == []
    assert file_store.get(kept.memory_id) is not None and on_disk(db_path, "Plindragosh")
    assert file_store.doctor().ok


def test_an_imported_erasure_erases_what_this_device_derived_from_the_memory(tmp_path: Path) -> None:
    """A peer's tombstone for a memory this device summarised erases the summary here too."""
    phone = localmem.open(tmp_path / "phone.db", clock=FrozenClock("2026-03-02T09:00:00Z"))
    laptop = localmem.open(tmp_path / "laptop.db", clock=FrozenClock("2026-03-02T09:00:00Z"))
    secret = phone.add("Ann's secret nickname is Zorbluxia", user_id="ann")
    laptop.import_(phone.export(tmp_path / "1.gz").path)
    summary = laptop.derive("Ann is called Zorbluxia", from_=[secret.rev_id], user_id="ann")
    phone.erase(secret.memory_id)
    laptop.import_(phone.export(tmp_path / "2.gz").path)
    assert laptop.search("Zorbluxia", user_id="ann") == []
    assert laptop.connection.execute("SELECT count(*) FROM erasures WHERE memory_id = ?",
                                     (summary.memory_id,)).get == 1
    assert laptop.doctor().ok
    phone.close()
    laptop.close()


_CRASH_AFTER_COMMIT = """
import os, sys
import localmem
from localmem.core.ledger import Ledger
Ledger.checkpoint = lambda self: False  # the process dies before its checkpoint runs
s = localmem.open(sys.argv[1])
s.erase(s.read("ann")[0].memory_id)
os._exit(0)
"""


def test_a_crash_between_commit_and_checkpoint_is_scrubbed_on_the_next_open(db_path: Path) -> None:
    """Erased words left in the main file by a crash before the checkpoint are gone once the file is opened
    again (before it is closed), and doctor then passes."""
    import subprocess
    import sys

    with localmem.open(db_path) as s:
        s.add("Ann's secret nickname is Zorbluxia", user_id="ann")
    assert on_disk(db_path, "Zorbluxia")  # checkpointed into the main file at close
    subprocess.run([sys.executable, "-c", _CRASH_AFTER_COMMIT, str(db_path)], check=True, timeout=60)
    assert Path(f"{db_path}-erasing").exists()
    assert on_disk(db_path, "Zorbluxia")  # the crash window: the words are still in the main file
    with localmem.open(db_path) as s:
        assert traces(db_path, {"Zorbluxia": "zorblux"}) == []
        assert not Path(f"{db_path}-erasing").exists()
        assert s.doctor().ok


def test_doctor_fails_while_an_erase_awaits_its_checkpoint(file_store: localmem.Store, db_path: Path) -> None:
    """The marker an unfinished erase leaves makes doctor fail, naming it."""
    Path(f"{db_path}-erasing").touch()
    failed = {c.name: c.detail for c in file_store.doctor().checks if not c.ok}
    assert list(failed) == ["no erase awaits its checkpoint"] and "-erasing" in failed[
        "no erase awaits its checkpoint"]


def test_export_files_are_private_like_the_database(file_store: localmem.Store, tmp_path: Path) -> None:
    """A sync export is created 0600 whatever the umask, as the database is."""
    file_store.add("Ann's secret", user_id="ann")
    old = os.umask(0o022)
    try:
        out = Path(file_store.export(tmp_path / "x.gz").path)
        folder = tmp_path / "Sync"
        folder.mkdir()
        summary = file_store.sync_dir(folder)
    finally:
        os.umask(old)
    assert summary.exported is not None
    for path in (out, Path(summary.exported.path)):
        assert path.stat().st_mode & 0o777 == 0o600, path


def test_sync_dir_prunes_its_own_files_superseded_by_an_erasure(file_store: localmem.Store,
                                                                 tmp_path: Path) -> None:
    """After an erase, the next sync writes a full export and removes this device's older files, so no
    file in the folder holds the erased words."""
    import gzip

    folder = tmp_path / "Sync"
    folder.mkdir()
    secret = file_store.add("Ann's secret nickname is Zorbluxia", user_id="ann")
    file_store.add("Ann plays the Plindragosh", user_id="ann")
    file_store.sync_dir(folder)
    file_store.add("Ann likes tea", user_id="ann")
    file_store.sync_dir(folder)
    file_store.erase(secret.memory_id)
    result = file_store.sync_dir(folder)
    assert result.exported is not None and result.exported.since == 0 and result.exported.revisions == 3
    assert len(result.pruned) == 2
    files = list(folder.iterdir())
    assert [p.name for p in files] == [Path(result.exported.path).name]
    text = gzip.decompress(files[0].read_bytes())
    assert b"Zorbluxia" not in text and b"Plindragosh" in text
