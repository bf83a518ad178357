"""The error hierarchy: one base, one subclass per condition.

Every error a caller can provoke derives from :class:`LocalmemError`, and
also from the builtin it refines, so ``except ValueError`` keeps working.
Messages name the offending value and what was expected.
"""

from __future__ import annotations

import reprlib

__all__ = [
    "shown",
    "LocalmemError",
    "InvalidInputError",
    "NaiveDatetimeError",
    "InvalidTimeError",
    "InvalidIntervalError",
    "UnknownZoneError",
    "NotFoundError",
    "InvalidOperationError",
    "ErasedError",
    "RunConflictError",
    "ImmutableError",
    "IntegrityError",
    "SchemaVersionError",
    "CorruptDatabaseError",
    "StorageError",
    "DatabaseNotFoundError",
    "BusyError",
    "BatchAbortedError",
    "EmbeddingError",
    "EmbeddingMismatchError",
    "EmbeddingUnavailableError",
    "SyncFileError",
    "SyncVersionError",
    "SyncParentError",
]


class LocalmemError(Exception):
    """Base class of every error localmem raises on purpose."""


class InvalidInputError(LocalmemError, ValueError):
    """An argument has the wrong type or an unacceptable value."""


class NaiveDatetimeError(LocalmemError, TypeError):
    """A datetime without a time zone was given where an instant is needed."""


class InvalidTimeError(InvalidInputError):
    """A time value could not be read as an instant or a date."""


class InvalidIntervalError(InvalidInputError):
    """A valid-time interval does not end after it starts."""


class UnknownZoneError(InvalidInputError):
    """A time zone name is not in the IANA database."""


class NotFoundError(LocalmemError, LookupError):
    """No memory has the given id (or id prefix)."""


class InvalidOperationError(LocalmemError, ValueError):
    """The operation is not allowed on this memory in its current state."""


class ErasedError(InvalidOperationError):
    """The memory was erased; its content is gone and it takes no more writes."""


class RunConflictError(InvalidOperationError):
    """A run was moved on by another view (process) since this view last saw it."""


class ImmutableError(LocalmemError):
    """Something tried to update or delete an immutable row."""


class IntegrityError(LocalmemError):
    """A write broke a constraint of the schema."""


class SchemaVersionError(LocalmemError):
    """The database file has a schema version this localmem cannot open."""


class CorruptDatabaseError(LocalmemError):
    """The file is not a SQLite database, or not a localmem one, or is damaged."""


class StorageError(LocalmemError, OSError):
    """The operating system failed a read or write; nothing was committed."""


class DatabaseNotFoundError(LocalmemError, FileNotFoundError):
    """The database file (or the folder it would go in) does not exist, and creating it was not asked for."""


class BusyError(StorageError, TimeoutError):
    """Another connection held the write lock past the busy timeout; nothing was changed."""


class BatchAbortedError(LocalmemError):
    """A write failed part way inside a batch, so the whole batch rolls back."""


class EmbeddingError(LocalmemError):
    """The embedder failed, or returned something that is not one vector per text."""


class EmbeddingMismatchError(EmbeddingError, ValueError):
    """An embedder's dimensions differ from those stored for its model name."""


class EmbeddingUnavailableError(EmbeddingError, ImportError):
    """Vector search needs sqlite-vec, which is not installed or cannot be loaded."""


class SyncFileError(LocalmemError, ValueError):
    """A sync export file is empty, truncated, damaged or not a localmem export; nothing was applied."""


class SyncVersionError(SyncFileError):
    """A sync export file has a format or schema version this localmem does not read."""


class SyncParentError(SyncFileError):
    """A sync export file's row refers to a memory or revision neither in the file before it nor here."""


class SyncRuleError(SyncFileError):
    """A sync export file's row would break one of the store's invariants (doctor's); nothing was applied."""


class SyncClockError(SyncFileError):
    """A sync export file's row carries a time too far ahead of this store's clock; the file is refused."""


class HubError(LocalmemError):
    """The hub's PostgreSQL database cannot be reached, is not a hub, or refused a statement."""


__all__ += ["SyncRuleError", "SyncClockError", "HubError"]


class _Shown(reprlib.Repr):
    def repr_int(self, x: int, level: int) -> str:
        if x.bit_length() > 128:
            return f"<an int of {x.bit_length()} bits>"
        return super().repr_int(x, level)


_SHOWN = _Shown()
_SHOWN.maxlevel = 3
_SHOWN.maxstring = 80
_SHOWN.maxother = 80
_SHOWN.maxlong = 40


def shown(value: object) -> str:
    """A short repr of ``value`` for an error message, whatever it is.

    A message must never fail while it is being formatted: a plain ``repr`` of
    a list nested 10,000 deep raises RecursionError, one of ``10**5000`` raises
    ValueError (Python's limit on int-to-text conversion), and one of a 100 MB
    string would make a 100 MB message. This one is bounded in depth and length.
    """
    try:
        return _SHOWN.repr(value)
    except Exception:  # a user type whose __repr__ fails must not hide the real error
        return f"<a {type(value).__name__}>"
