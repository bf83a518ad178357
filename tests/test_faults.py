"""Storage faults: a failing disk loses the write it hit, and nothing else.

An apsw VFS shim, inheriting every method from the default VFS, can be armed
to fail xWrite or xSync from the Nth call on (until disarmed), the way a full
or failing disk does. The store runs on it in WAL mode. A write that hits the
fault must raise localmem.StorageError with a message saying what failed; what
was committed before stays, the file passes integrity checks, and once the
fault clears the same store keeps working.
"""

from __future__ import annotations

import itertools
import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import apsw
import pytest

import localmem
from localmem.core.db import connect
from localmem.testing import FrozenClock

_names = itertools.count()

#: Reads after reopening look from a day after everything these tests record.
LATER = "2026-03-03T00:00:00Z"

#: SQLite's own words for the result codes injected below, any of which a clear message may use.
DESCRIPTIONS = {
    apsw.SQLITE_IOERR: ("disk I/O error", "SQLITE_IOERR", "I/O error"),
    apsw.SQLITE_FULL: ("database or disk is full", "SQLITE_FULL", "disk is full"),
}


@dataclass
class FaultPlan:
    """Which VFS call to fail: the ``after``-th call (0 = the next) of ``method`` on matching files."""

    method: str | None = None
    after: int = 0
    error: Callable[[], Exception] = lambda: apsw.IOError("injected I/O fault")
    suffix: str | None = None  # only files whose name ends so ("-wal", ".db"); None: any file
    seen: int = 0
    hits: list[tuple[str, str]] = field(default_factory=list)

    def arm(self, method: str, *, after: int = 0, error: Callable[[], Exception] | None = None,
            suffix: str | None = None) -> None:
        """Fail ``method`` from its ``after``-th matching call on, until disarmed."""
        self.method, self.after, self.suffix, self.seen = method, after, suffix, 0
        if error is not None:
            self.error = error

    def disarm(self) -> None:
        """Let every call through again."""
        self.method = None

    def check(self, method: str, filename: str) -> None:
        """Raise the armed error if this call is one to fail."""
        if method != self.method or (self.suffix and not filename.endswith(self.suffix)):
            return
        self.seen += 1
        if self.seen > self.after:
            self.hits.append((method, filename))
            raise self.error()


class FaultyFile(apsw.VFSFile):
    """A file of the default VFS whose writes and syncs go through a FaultPlan."""

    def __init__(self, plan: FaultPlan, name: apsw.URIFilename | str | None, flags: list[int]):
        self.plan = plan
        self.filename = name.filename() if isinstance(name, apsw.URIFilename) else str(name)
        super().__init__("", name, flags)

    def xWrite(self, data: bytes, offset: int) -> None:
        self.plan.check("xWrite", self.filename)
        super().xWrite(data, offset)

    def xSync(self, flags: int) -> None:
        self.plan.check("xSync", self.filename)
        super().xSync(flags)


class FaultyVFS(apsw.VFS):
    """The default VFS, registered under a unique name, opening FaultyFiles."""

    def __init__(self, name: str, plan: FaultPlan) -> None:
        self.plan = plan
        super().__init__(name, "")

    def xOpen(self, name: apsw.URIFilename | str | None, flags: list[int]) -> FaultyFile:
        return FaultyFile(self.plan, name, flags)


@dataclass
class Faulty:
    """A store on the faulty VFS, its plan and its file."""

    store: localmem.Store
    plan: FaultPlan
    path: Path


@pytest.fixture
def faulty(db_path: Path, clock: FrozenClock) -> Iterator[Faulty]:
    """A WAL-mode file store opened through a fresh FaultyVFS, disarmed."""
    plan = FaultPlan()
    name = f"localmem-faulty-{next(_names)}"
    vfs = FaultyVFS(name, plan)
    store = localmem.Store(connect(db_path, vfs=name), clock=clock)
    assert store.connection.pragma("journal_mode") == "wal"
    yield Faulty(store, plan, db_path)
    plan.disarm()
    store.close()
    vfs.unregister()


def _texts(store: localmem.Store) -> set[str]:
    return {r.text for r in store.read("ann") if r.text is not None}


def _check_file(path: Path, expected: set[str]) -> None:
    """Reopen the file without the shim: integrity_check ok, doctor ok, exactly ``expected`` readable."""
    conn = apsw.Connection(str(path))
    try:
        assert [r[0] for r in conn.execute("PRAGMA integrity_check")] == ["ok"]
    finally:
        conn.close()
    with localmem.open(path, clock=FrozenClock(LATER)) as store:
        report = store.doctor()
        assert report.ok, [c for c in report.checks if not c.ok]
        assert _texts(store) == expected


def _message_describes(exc: BaseException, error: Exception) -> bool:
    """Whether the message passes on the OS's reason, or names the failure when there is none."""
    msg = str(exc)
    if str(error):
        return str(error) in msg
    assert isinstance(error, apsw.Error)
    return any(d.lower() in msg.lower() for d in DESCRIPTIONS[error.result])  # type: ignore[attr-defined]  # apsw's stub omits it


#: name -> (VFS method, matching calls to let through first, the error, file suffix)
FAULTS = {
    "write-first-wal-frame": ("xWrite", 0, lambda: apsw.IOError("injected: write failed"), "-wal"),
    "write-mid-commit": ("xWrite", 5, lambda: apsw.IOError("injected: write failed"), "-wal"),
    "write-disk-full": ("xWrite", 2, lambda: apsw.FullError("injected: no space left"), "-wal"),
    "write-code-only": ("xWrite", 1, lambda: apsw.exception_for(apsw.SQLITE_IOERR_WRITE), None),
    "full-code-only": ("xWrite", 0, lambda: apsw.exception_for(apsw.SQLITE_FULL), None),
    "sync-wal-at-commit": ("xSync", 0, lambda: apsw.IOError("injected: fsync failed"), "-wal"),
    "sync-code-only": ("xSync", 0, lambda: apsw.exception_for(apsw.SQLITE_IOERR_FSYNC), None),
}

#: The write that meets the fault, given a store and a memory id it may change.
DOOMED: dict[str, Callable[[localmem.Store, str], object]] = {
    "add": lambda s, m: s.add("Ann adopted a dog", user_id="ann"),
    "correct": lambda s, m: s.correct(m, text="Ann lives in Faro"),
    "erase": lambda s, m: s.erase(m),
}


def _fail_one_write(
    faulty: Faulty, method: str, after: int, error: Callable[[], Exception], suffix: str | None,
    doomed: Callable[[localmem.Store, str], object],
) -> localmem.StorageError:
    """Commit two memories, run ``doomed`` into the armed fault, and check what survives."""
    store, plan = faulty.store, faulty.plan
    home = store.add("Ann lives in Lisbon", user_id="ann")
    store.add("Ann likes green tea", user_id="ann")
    committed = _texts(store)
    revisions = store.connection.execute("SELECT count(*) FROM revisions").get

    plan.arm(method, after=after, error=error, suffix=suffix)
    with pytest.raises(localmem.StorageError) as info:
        doomed(store, home.memory_id)
    plan.disarm()

    assert plan.hits, "the fault never fired: the test did not test anything"
    assert isinstance(info.value, localmem.LocalmemError) and isinstance(info.value, OSError)
    assert store.connection.getautocommit(), "the failed write left a transaction open"
    assert _texts(store) == committed
    assert store.connection.execute("SELECT count(*) FROM revisions").get == revisions
    assert store.erasure(home.memory_id) is None

    after_fault = store.add("Ann bought a bicycle", user_id="ann")
    got = store.get(after_fault.memory_id)
    assert got is not None and got.text == "Ann bought a bicycle"
    assert store.doctor().ok
    store.close()
    _check_file(faulty.path, committed | {"Ann bought a bicycle"})
    return info.value


@pytest.mark.parametrize("doomed", DOOMED.values(), ids=DOOMED.keys())
@pytest.mark.parametrize(("method", "after", "error", "suffix"), FAULTS.values(), ids=FAULTS.keys())
def test_fault_loses_only_the_write_it_hit(
    faulty: Faulty, method: str, after: int, error: Callable[[], Exception], suffix: str | None,
    doomed: Callable[[localmem.Store, str], object],
) -> None:
    """A failed write raises StorageError; earlier data, file integrity and the same store all survive it."""
    _fail_one_write(faulty, method, after, error, suffix, doomed)


@pytest.mark.parametrize(("method", "after", "error", "suffix"), FAULTS.values(), ids=FAULTS.keys())
def test_fault_message_says_what_failed(
    faulty: Faulty, method: str, after: int, error: Callable[[], Exception], suffix: str | None,
) -> None:
    """The StorageError passes on the OS's reason, or names the SQLite error when only a code came back."""
    err = _fail_one_write(faulty, method, after, error, suffix, DOOMED["add"])
    assert _message_describes(err, error()), str(err)


@pytest.mark.parametrize("arm_at", [0, 150, "commit"])
def test_fault_inside_a_batch_loses_the_whole_batch(faulty: Faulty, arm_at: int | str) -> None:
    """A write fault in a large batch (spilling to the WAL, or at commit) raises StorageError, loses all."""
    store, plan = faulty.store, faulty.plan
    store.add("Ann lives in Lisbon", user_id="ann")
    committed = _texts(store)
    # A small page cache makes the batch spill into the WAL long before it commits.
    store.connection.pragma("cache_size", 20)

    with pytest.raises(localmem.StorageError), store.batch():
        for i in range(200):
            if i == arm_at:
                plan.arm("xWrite", suffix="-wal")
            store.add(f"Ann's batch note {i}", user_id="ann")
        if arm_at == "commit":
            plan.arm("xWrite", suffix="-wal")
    plan.disarm()

    assert plan.hits
    assert store.connection.getautocommit()
    assert _texts(store) == committed
    store.add("Ann bought a bicycle", user_id="ann")
    store.close()
    _check_file(faulty.path, committed | {"Ann bought a bicycle"})


def test_writes_after_a_fault_inside_a_batch_are_not_committed(faulty: Faulty) -> None:
    """Carrying on after a fault inside store.batch() commits none of the batch and raises at its end."""
    store, plan = faulty.store, faulty.plan
    store.add("Ann lives in Lisbon", user_id="ann")
    committed = _texts(store)
    store.connection.pragma("cache_size", 20)

    exit_error: BaseException | None = None
    try:
        with store.batch():
            for i in range(150):
                if i == 100:
                    plan.arm("xWrite", suffix="-wal")
                if i == 110:
                    plan.disarm()
                try:
                    store.add(f"Ann's batch note {i}", user_id="ann")
                except Exception:  # a caller that logs and skips the items that fail
                    pass
    except Exception as exc:
        exit_error = exc
    plan.disarm()

    assert plan.hits
    stored = len(_texts(store) - committed)
    assert stored == 0, f"{stored} writes of the failed batch were committed one by one"
    assert isinstance(exit_error, localmem.LocalmemError), repr(exit_error)
    store.close()
    _check_file(faulty.path, committed)


def test_reopened_store_works_after_a_fault(faulty: Faulty, clock: FrozenClock) -> None:
    """After a write fault the file opens normally in a new store, which takes and returns new writes."""
    store, plan = faulty.store, faulty.plan
    store.add("Ann lives in Lisbon", user_id="ann")
    plan.arm("xWrite", after=3, suffix="-wal")
    with pytest.raises(localmem.StorageError):
        store.add("Ann adopted a dog", user_id="ann")
    plan.disarm()
    store.close()

    with localmem.open(faulty.path, clock=clock) as again:
        rev = again.add("Ann bought a bicycle", user_id="ann")
        assert again.get(rev.memory_id) == rev
        assert _texts(again) == {"Ann lives in Lisbon", "Ann bought a bicycle"}
        assert again.doctor().ok


def test_sync_fault_error_keeps_its_promise_after_a_crash(faulty: Faulty, tmp_path: Path) -> None:
    """If a failed fsync's error says nothing was committed, a crash right after must not revive the write."""
    store, plan = faulty.store, faulty.plan
    store.add("Ann lives in Lisbon", user_id="ann")
    plan.arm("xSync", suffix="-wal")
    with pytest.raises(localmem.StorageError) as info:
        store.add("Ann adopted a dog", user_id="ann")
    plan.disarm()

    # A crash now: the files as they are, with no clean close to tidy the WAL.
    crashed = tmp_path / "crashed"
    crashed.mkdir()
    for suffix in ("", "-wal"):
        shutil.copyfile(f"{faulty.path}{suffix}", crashed / f"mem.db{suffix}")
    with localmem.open(crashed / "mem.db", clock=FrozenClock(LATER)) as after_crash:
        assert after_crash.doctor().ok
        came_back = "Ann adopted a dog" in _texts(after_crash)

    if came_back:
        assert "nothing was committed" not in str(info.value), (
            "the error promised the write was lost, but it survives a crash")


def _erase_into_checkpoint_fault(faulty: Faulty) -> tuple[str, localmem.StorageError | None]:
    """Erase a memory while writes to the main file fail: the erase commits, its checkpoint fails."""
    store, plan = faulty.store, faulty.plan
    secret = store.add("Ann's nickname is Zorbluxia", user_id="ann")
    store.add("Ann lives in Lisbon", user_id="ann")
    # The WAL takes the commit; copying it into the main file then fails.
    plan.arm("xWrite", suffix=faulty.path.name)
    err: localmem.StorageError | None = None
    try:
        store.erase(secret.memory_id)
    except localmem.StorageError as exc:
        err = exc
    plan.disarm()
    assert plan.hits, "the checkpoint never wrote to the main file"
    return secret.memory_id, err


def test_checkpoint_fault_after_erase_does_not_deny_the_erase(faulty: Faulty) -> None:
    """When the checkpoint after an erase fails, the erase stays committed and no error claims otherwise."""
    memory_id, err = _erase_into_checkpoint_fault(faulty)
    assert faulty.store.erasure(memory_id) is not None
    if err is not None:
        assert "nothing was committed" not in str(err), str(err)
    faulty.store.close()
    _check_file(faulty.path, {"Ann lives in Lisbon"})


def test_checkpoint_fault_after_erase_is_retried(faulty: Faulty) -> None:
    """Once the fault clears, the next write finishes the erase's checkpoint: the WAL holds no erased word."""
    _erase_into_checkpoint_fault(faulty)
    faulty.store.add("Ann bought a bicycle", user_id="ann")
    wal = Path(f"{faulty.path}-wal")
    assert not wal.exists() or b"zorbluxia" not in wal.read_bytes().lower(), (
        "the erased words stay in the WAL after the failed checkpoint")
    faulty.store.close()
    _check_file(faulty.path, {"Ann lives in Lisbon", "Ann bought a bicycle"})
