"""localmem: a local-first bitemporal memory store for long-running AI agents.

Two clocks on every memory (when it was true, and when the app learned it),
nothing ever overwritten, one SQLite file. Start with :func:`open`.
"""

from .clock import Clock, TimeInput, system_clock
from .embedding import Embedder
from .errors import (
    BatchAbortedError,
    CorruptDatabaseError,
    EmbeddingError,
    EmbeddingMismatchError,
    EmbeddingUnavailableError,
    ErasedError,
    ImmutableError,
    IntegrityError,
    InvalidInputError,
    InvalidIntervalError,
    InvalidOperationError,
    InvalidTimeError,
    LocalmemError,
    NaiveDatetimeError,
    NotFoundError,
    SchemaVersionError,
    StorageError,
    UnknownZoneError,
)
from .filters import InvalidFilterError
from .interval import PRECISIONS, ValidTime
from .resolver import TimeMention, find_times
from .revision import Change, Erasure, Revision, Snapshot
from .search import Hit
from .store import UNSET, Check, DoctorReport, Store, StoreInfo, open

__all__ = [
    "open",
    "Store",
    "UNSET",
    "Revision",
    "Hit",
    "Embedder",
    "Change",
    "Snapshot",
    "Erasure",
    "StoreInfo",
    "DoctorReport",
    "Check",
    "ValidTime",
    "PRECISIONS",
    "find_times",
    "TimeMention",
    "Clock",
    "TimeInput",
    "system_clock",
    "LocalmemError",
    "InvalidInputError",
    "InvalidFilterError",
    "NaiveDatetimeError",
    "InvalidTimeError",
    "InvalidIntervalError",
    "UnknownZoneError",
    "NotFoundError",
    "InvalidOperationError",
    "ErasedError",
    "ImmutableError",
    "IntegrityError",
    "SchemaVersionError",
    "CorruptDatabaseError",
    "StorageError",
    "BatchAbortedError",
    "EmbeddingError",
    "EmbeddingMismatchError",
    "EmbeddingUnavailableError",
]

__version__ = "0.1.0"
