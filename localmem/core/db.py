"""The connection: opening a file, its pragmas, its schema, its transactions.

One factory applies the pragmas every connection needs; one ``transaction()``
is the only way writes happen (BEGIN IMMEDIATE at the top, SAVEPOINT when
nested); one function maps SQLite's errors to localmem's.

Opening never writes to a current file: a reader opens, and reads, while
another process holds the write lock (SQLite's WAL lets readers go on beside
one writer). Only a file that needs creating, converting to WAL or migrating
is written at open. A connection waits up to its busy timeout for the write
lock, then raises :class:`~localmem.errors.BusyError`.
"""

from __future__ import annotations

import contextlib
import math
import os
import secrets
from collections.abc import Iterator
from importlib import resources
from pathlib import Path
from types import TracebackType

import apsw
import apsw.bestpractice
import platformdirs

from ..errors import (
    BusyError,
    CorruptDatabaseError,
    DatabaseNotFoundError,
    ImmutableError,
    IntegrityError,
    InvalidInputError,
    LocalmemError,
    SchemaVersionError,
    StorageError,
    shown,
)
from .migrations import MIGRATIONS, SCHEMA_EDITS

__all__ = [
    "SCHEMA_VERSION",
    "APPLICATION_ID",
    "MIGRATIONS",
    "default_path",
    "check_path",
    "schema_sql",
    "DEFAULT_BUSY_TIMEOUT",
    "connect",
    "optimize",
    "transaction",
    "map_errors",
]

#: The schema version this code writes; PRAGMA user_version of a current file.
SCHEMA_VERSION = 10
#: PRAGMA application_id of a localmem file ("LMEM"), so a stranger's SQLite
#: file is refused rather than written into.
APPLICATION_ID = 0x4C4D454D

#: Seconds a connection waits for another one to release the write lock before
#: a write raises BusyError (``connect(busy_timeout=...)`` changes it).
DEFAULT_BUSY_TIMEOUT = 5.0


def default_path() -> Path:
    """The default database file: ``localmem.db`` in the user data dir."""
    return platformdirs.user_data_path("localmem", appauthor=False) / "localmem.db"


def schema_sql() -> str:
    """The text of schema.sql.

    In a wheel it is packaged as ``localmem/schema.sql``; in a source checkout
    (an editable install) it is the file at the repository root.
    """
    packaged = resources.files("localmem").joinpath("schema.sql")
    if packaged.is_file():
        return packaged.read_text(encoding="utf-8")
    root = Path(__file__).resolve().parents[2] / "schema.sql"
    if root.is_file():
        return root.read_text(encoding="utf-8")
    raise LocalmemError(f"schema.sql not found in the package or at {root}: the install is broken")


def _code_name(exc: apsw.Error) -> str:
    """SQLite's name for an exception's result code, e.g. SQLITE_IOERR_FSYNC."""
    ext = getattr(exc, "extendedresult", None)
    res = getattr(exc, "result", None)
    name = apsw.mapping_extended_result_codes.get(ext) if isinstance(ext, int) else None
    if not name and isinstance(res, int):
        name = apsw.mapping_result_codes.get(res)
    return str(name or type(exc).__name__)


def _describe(exc: apsw.Error) -> str:
    detail = str(exc).strip()
    return f"{_code_name(exc)}: {detail}" if detail else _code_name(exc)


class _ErrorMap:
    """The context manager :func:`map_errors` gives: a class, not a generator (it runs two to three
    times a write and once a read; a generator-based one costs about five times as much to enter
    and leave). It keeps no state, so one instance serves every nesting."""

    __slots__ = ("committing",)

    def __init__(self, committing: bool) -> None:
        self.committing = committing

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if exc is not None and not isinstance(exc, LocalmemError):
            _reraise(exc, committing=self.committing)


_PLAIN, _COMMITTING = _ErrorMap(False), _ErrorMap(True)


def map_errors(*, committing: bool = False) -> _ErrorMap:
    """Turn SQLite's exceptions into localmem's hierarchy (the one place that does).

    ``committing`` words storage errors for a failed COMMIT, after which the
    write may or may not be on disk (the WAL can hold a whole commit whose sync
    failed, and recovery after a crash would keep it). Any other exception
    (localmem's own among them) passes unchanged.
    """
    return _COMMITTING if committing else _PLAIN


def _reraise(exc: BaseException, *, committing: bool) -> None:
    """Raise localmem's error for SQLite's ``exc`` (or nothing, when localmem has none for it)."""
    if isinstance(exc, apsw.ConstraintError):
        msg = str(exc)
        if "immutable" in msg:
            raise ImmutableError(msg.split("localmem: ", 1)[-1]) from exc
        raise IntegrityError(f"the write broke a schema constraint: {msg}") from exc
    if isinstance(exc, (apsw.NotADBError, apsw.CorruptError)):
        raise CorruptDatabaseError(
            f"the database file is not a valid SQLite database ({_describe(exc)})") from exc
    if isinstance(exc, apsw.BusyError):
        # SQLITE_BUSY: another connection (usually another process) holds the
        # write lock and kept it past this connection's busy timeout.
        raise BusyError(
            f"the database is busy ({_describe(exc)}): another connection held its write lock "
            "past the busy timeout; nothing was changed: retry, or open with a longer busy_timeout"
        ) from exc
    if isinstance(exc, UnicodeEncodeError):
        # apsw binds str as UTF-8; a lone surrogate that no input check caught lands here.
        raise InvalidInputError(
            f"a text argument has a lone surrogate {shown(exc.object[exc.start:exc.end])} "
            f"(in {shown(exc.object)}): SQLite stores text as UTF-8, which cannot encode it"
        ) from exc
    if isinstance(exc, (apsw.IOError, apsw.FullError, apsw.CantOpenError, apsw.ReadOnlyError)):
        if committing:
            raise StorageError(
                f"the storage failed while committing ({_describe(exc)}): the write may not "
                "have been saved; read it back before relying on it"
            ) from exc
        raise StorageError(
            f"the storage failed ({_describe(exc)}); nothing was committed") from exc


def _create_private(path: Path) -> None:
    """Create ``path`` with mode 0600 if it does not exist (memories are private).

    Raises:
        StorageError: the directory cannot be made, or the file cannot be
            created there (a parent is a regular file, no permission, read-only
            file system), naming the path.
    """
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        if isinstance(exc, (FileExistsError, NotADirectoryError)):  # a parent is a regular file
            raise StorageError(
                f"cannot create database {str(path)!r}: {str(path.parent)!r} (or a parent of it) "
                "is a file, not a directory: expected a path in a writable directory"
            ) from exc
        raise StorageError(
            f"cannot create database {str(path)!r}: its directory {str(path.parent)!r} cannot be "
            f"made ({exc.strerror or exc}): expected a path in a writable directory"
        ) from exc
    try:
        fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
    except FileExistsError:
        if path.is_dir():
            raise StorageError(
                f"cannot open database {str(path)!r}: it is a directory, expected a file") from None
        return
    except OSError as exc:
        raise StorageError(
            f"cannot create database {str(path)!r}: {exc.strerror or exc}: "
            f"expected a path in a writable directory"
        ) from exc
    os.close(fd)


def _check_busy_timeout(busy_timeout: object) -> int:
    """Milliseconds for SQLite from a timeout in seconds."""
    if (isinstance(busy_timeout, bool) or not isinstance(busy_timeout, (int, float))
            or not math.isfinite(busy_timeout) or not 0 <= busy_timeout <= 86_400):
        raise InvalidInputError(
            f"busy_timeout={shown(busy_timeout)}: expected seconds to wait for the write lock, "
            "a number from 0 to 86400"
        )
    return round(busy_timeout * 1000)


def connect(
    path: str | os.PathLike[str] | None,
    *,
    vfs: str | None = None,
    busy_timeout: float = DEFAULT_BUSY_TIMEOUT,
) -> apsw.Connection:
    """Open (creating and migrating if needed) a localmem database.

    A file that is refused (not SQLite, someone else's, too new) is left
    exactly as it was: the checks run before any pragma that writes. A
    current file is not written at all, so opening works while another
    process holds the write lock.

    Args:
        path: a file path, ``":memory:"``, or None for :func:`default_path`.
        vfs: an apsw VFS name (tests use one that injects I/O faults).
        busy_timeout: seconds to wait for another connection's write lock
            before raising BusyError (default :data:`DEFAULT_BUSY_TIMEOUT`).

    Raises:
        CorruptDatabaseError: the file is not SQLite, or is someone else's database.
        SchemaVersionError: the file was written by a newer localmem, or no
            migration path leads from its version to this one, or a step
            failed on a file whose tables do not match its version.
        StorageError: the file cannot be created or opened (the path names it).
        BusyError: the file needed writing at open (creating, migrating) and
            another connection held the write lock past ``busy_timeout``.
        InvalidInputError: ``busy_timeout`` is not a number of seconds.
    """
    timeout_ms = _check_busy_timeout(busy_timeout)
    target = default_path() if path is None else path
    name = os.fspath(target)
    if name != ":memory:":
        _create_private(Path(name))
    with map_errors():
        try:
            conn = apsw.Connection(name, vfs=vfs) if vfs else apsw.Connection(name)
        except apsw.CantOpenError as exc:
            raise StorageError(f"cannot open database {name!r}: {exc}") from exc
        try:
            conn.setbusytimeout(timeout_ms)
            fresh = _check_ownership(conn, name)
            _configure(conn)
            if fresh:
                _create_schema(conn)
            else:
                _migrate(conn)
        except BaseException:
            conn.close()
            raise
    return conn


def _check_ownership(conn: apsw.Connection, name: str) -> bool:
    """Refuse files localmem must not write into; True for a new, empty file."""
    try:
        tables = conn.execute("SELECT count(*) FROM sqlite_schema").get
    except (apsw.NotADBError, apsw.CorruptError) as exc:
        raise CorruptDatabaseError(f"{name!r} is not a SQLite database ({_describe(exc)})") from exc
    version = conn.pragma("user_version")
    app_id = conn.pragma("application_id")
    if version == 0 and tables == 0 and app_id == 0:
        return True
    if app_id != APPLICATION_ID:
        raise CorruptDatabaseError(
            f"{name!r} is a SQLite database but not a localmem one "
            f"(application_id {app_id:#x}, expected {APPLICATION_ID:#x}); refusing to write into it"
        )
    if version > SCHEMA_VERSION:
        raise SchemaVersionError(
            f"{name!r} has schema version {version}, newer than this localmem's "
            f"{SCHEMA_VERSION}: upgrade localmem to open it"
        )
    missing = [step for step in range(version + 1, SCHEMA_VERSION + 1) if step not in MIGRATIONS]
    if missing:
        raise SchemaVersionError(
            f"{name!r} has schema version {version} and no migration to version {missing[0]} "
            f"exists (this localmem writes version {SCHEMA_VERSION})"
        )
    return False


def _configure(conn: apsw.Connection) -> None:
    apsw.bestpractice.connection_enable_foreign_keys(conn)
    apsw.bestpractice.connection_dqs(conn)
    apsw.bestpractice.connection_recursive_triggers(conn)
    # Not apsw.bestpractice.connection_optimize: its PRAGMA optimize may ANALYZE,
    # which writes, and open must not write (it would wait on, then fail beside,
    # another process's write lock). Statistics are refreshed by optimize() at close.
    if conn.pragma("journal_mode") != "wal":
        # Only a new (or foreign-converted) file; asking an existing WAL file again is a no-op.
        apsw.bestpractice.connection_wal(conn)
    # Query planner stability: without it, once ANALYZE has written STAT4 rows
    # (PRAGMA optimize does), every as-of lookup with `recorded_at <= ?` is
    # re-planned at each bind, which costs more than the lookup itself.
    conn.config(apsw.SQLITE_DBCONFIG_ENABLE_QPSG, 1)
    # Freed pages are zeroed, so erased words do not linger in the file.
    conn.pragma("secure_delete", True)
    # Statement journals and sorts stay in memory: each is bounded by one
    # write or one read, and a temporary file per statement costs ~8% of a write.
    conn.pragma("temp_store", "memory")


def _create_schema(conn: apsw.Connection) -> None:
    with transaction(conn):
        conn.execute(schema_sql())
        conn.pragma("application_id", APPLICATION_ID)
        conn.execute(
            "INSERT INTO store_meta (name, value) VALUES ('device_id', ?), ('schema_created', ?)",
            (secrets.token_hex(8), str(SCHEMA_VERSION)),
        )
        conn.pragma("user_version", SCHEMA_VERSION)


def _migrate(conn: apsw.Connection) -> None:
    """Run the numbered steps from the file's version to ours, one transaction each.

    Raises:
        SchemaVersionError: a step failed because the file's tables are not
            what its user_version says (e.g. a current file whose user_version
            was set back); that step is rolled back, so the file is unchanged.
    """
    version = conn.pragma("user_version")
    steps = range(version + 1, SCHEMA_VERSION + 1)
    for step in steps:
        try:
            with transaction(conn):
                conn.execute(MIGRATIONS[step])
                if step in SCHEMA_EDITS:
                    _edit_schema(conn, *SCHEMA_EDITS[step])
                conn.pragma("user_version", step)
        except (apsw.SQLError, apsw.ConstraintError, IntegrityError, ImmutableError) as exc:
            raise SchemaVersionError(
                f"{conn.filename!r} says schema version {version}, but migration step {step} "
                f"does not apply to its tables ({exc}): the file's user_version does not match "
                "its schema; it was left unchanged (run `localmem doctor` on a copy)"
            ) from exc
    analyzed = conn.execute("SELECT 1 FROM sqlite_schema WHERE name = 'sqlite_stat1'").fetchone()
    if steps and analyzed:
        # A step's new index has no statistics beside the others' and the planner would
        # guess it selective (the user's zone lookup took 88 ms instead of 0.1 at 100k
        # revisions, until PRAGMA optimize at close). A sampled ANALYZE takes well under
        # a second even at a million rows.
        conn.pragma("analysis_limit", 1000)
        conn.execute("ANALYZE")


def _edit_schema(conn: apsw.Connection, table: str, before: str, after: str) -> None:
    """Rewrite ``table``'s CREATE statement in sqlite_schema from ``before`` to ``after``.

    For a change no stored row or page depends on (SQLite's "Making Other Kinds Of Table
    Schema Changes"): inside the caller's transaction, under ``PRAGMA writable_schema``, with
    the schema cookie bumped so every connection reloads the schema; then ``PRAGMA
    quick_check`` of the table, which tests every row against the new CHECKs. A kill at any
    point leaves the file as it was (the transaction never committed).

    Raises:
        apsw.SQLError: the table's statement is not ``before`` (whitespace aside), or a row
            fails the check: the caller's transaction is rolled back.
    """
    current = conn.execute(
        "SELECT sql FROM sqlite_schema WHERE type = 'table' AND name = ?", (table,)).get
    if not isinstance(current, str) or current.split() != before.split():
        raise apsw.SQLError(f"table {table} is not as the step expects it")
    cookie = conn.pragma("schema_version")
    conn.pragma("writable_schema", True)
    try:
        conn.execute("UPDATE sqlite_schema SET sql = ? WHERE type = 'table' AND name = ?",
                     (after, table))
        conn.pragma("schema_version", cookie + 1)
    finally:
        conn.pragma("writable_schema", False)
    problems = [str(row[0]) for row in conn.execute(f"PRAGMA quick_check({table})")]
    if problems != ["ok"]:
        raise apsw.SQLError(f"table {table} fails its new statement: {'; '.join(problems[:5])}")


def optimize(conn: apsw.Connection) -> None:
    """Refresh the planner's statistics if that can be done now, else skip it.

    ``PRAGMA optimize`` may ANALYZE, which needs the write lock; while another
    process holds it this returns at once rather than waiting the busy timeout
    (statistics are an optimisation, and the next close tries again).
    """
    try:
        timeout = conn.pragma("busy_timeout")
    except apsw.ConnectionClosedError:
        return  # closed already (a store closed twice): nothing to refresh
    conn.setbusytimeout(0)
    try:
        # Skipped on any SQLite failure too: statistics never fail a close.
        with contextlib.suppress(apsw.Error):
            conn.pragma("optimize")
    finally:
        conn.setbusytimeout(int(timeout))


@contextlib.contextmanager
def transaction(conn: apsw.Connection) -> Iterator[apsw.Connection]:
    """One atomic unit of work: all of it commits or none of it does.

    The outermost level takes the write lock up front (BEGIN IMMEDIATE), so a
    write never fails half way for want of a lock; nested levels are savepoints.
    Some errors (a failed write to disk, a full disk) make SQLite roll back the
    whole transaction by itself; every level notices and raises StorageError
    rather than carrying on outside a transaction.
    """
    with map_errors():
        if not conn.getautocommit():
            # One constant name: SQLite nests same-named savepoints (RELEASE and
            # ROLLBACK TO act on the innermost), and the statements stay cached.
            name = "localmem"
            conn.execute(f"SAVEPOINT {name}")
            try:
                yield conn
            except BaseException:
                if not conn.getautocommit():
                    conn.execute(f"ROLLBACK TO {name}")
                    conn.execute(f"RELEASE {name}")
                raise
            _still_open(conn)
            conn.execute(f"RELEASE {name}")
            return
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield conn
        except BaseException:
            if not conn.getautocommit():
                conn.execute("ROLLBACK")
            raise
        _still_open(conn)
    with map_errors(committing=True):
        try:
            conn.execute("COMMIT")
        except BaseException:
            if not conn.getautocommit():
                conn.execute("ROLLBACK")
            raise


def _still_open(conn: apsw.Connection) -> None:
    if conn.getautocommit():
        raise StorageError(
            "SQLite rolled the transaction back after an earlier storage error; "
            "nothing of it was committed"
        )


def check_path(path: str | os.PathLike[str] | None, create: bool) -> None:
    """Refuse a missing file when not creating, before SQLite makes one."""
    if path is None:
        target = default_path()
        if not create and not target.exists():
            raise DatabaseNotFoundError(f"no localmem database at {str(target)!r} (the default file) yet")
        return
    name = os.fspath(path)
    if name == ":memory:":
        return
    target = Path(name)
    if target.exists():
        return
    if not create:
        raise DatabaseNotFoundError(f"no localmem database at {name!r}: open(..., create=False) makes none")
