"""localmem: a local-first bitemporal memory store for long-running AI agents.

Two clocks on every memory (when it was true, and when the app learned it),
nothing ever overwritten, one SQLite file. Start with :func:`open`.
"""

from .core.embedding import Embedder
from .core.filters import InvalidFilterError
from .core.revision import Added, Change, Erasure, Revision, Snapshot
from .core.staleness import Staleness
from .errors import (
    BatchAbortedError,
    BusyError,
    CorruptDatabaseError,
    DatabaseNotFoundError,
    EmbeddingError,
    EmbeddingMismatchError,
    EmbeddingUnavailableError,
    ErasedError,
    HubError,
    ImmutableError,
    IntegrityError,
    InvalidInputError,
    InvalidIntervalError,
    InvalidOperationError,
    InvalidTimeError,
    LocalmemError,
    NaiveDatetimeError,
    NotFoundError,
    RunConflictError,
    SchemaVersionError,
    StorageError,
    SyncClockError,
    SyncFileError,
    SyncParentError,
    SyncRuleError,
    SyncVersionError,
    UnknownZoneError,
)
from .replay.compare import Comparison, Perspective
from .replay.derive import Provenance
from .replay.knew import DiffEntry, KnowledgeDiff
from .replay.receipts import Decision
from .replay.runs import Run, RunEvent, View
from .search.ranking import Hit
from .store import UNSET, Check, DoctorReport, Store, StoreInfo, open
from .sync.files import ExportSummary, ImportSummary, SkippedFile, SyncSummary
from .time.clock import Clock, TimeInput, system_clock
from .time.interval import PRECISIONS, ValidTime
from .time.resolver import TimeMention, find_times

__all__ = [
    "open",
    "Store",
    "UNSET",
    "Revision",
    "Added",
    "Hit",
    "Embedder",
    "Change",
    "Snapshot",
    "Erasure",
    "Run",
    "RunEvent",
    "View",
    "Decision",
    "Provenance",
    "Staleness",
    "Comparison",
    "Perspective",
    "KnowledgeDiff",
    "DiffEntry",
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
    "SyncFileError",
    "SyncVersionError",
    "SyncParentError",
    "SyncRuleError",
    "SyncClockError",
    "HubError",
    "ExportSummary",
    "ImportSummary",
    "SyncSummary",
    "SkippedFile",
    "InvalidInputError",
    "InvalidFilterError",
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
    "DatabaseNotFoundError",
    "StorageError",
    "BusyError",
    "BatchAbortedError",
    "EmbeddingError",
    "EmbeddingMismatchError",
    "EmbeddingUnavailableError",
]

__version__ = "0.1.0"
