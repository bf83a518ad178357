"""The search entry point the store and the replay views call: check, scope, rank, flag, log.

The ranking rules are :mod:`localmem.search.ranking`'s; this module turns a call's
arguments into a :class:`~localmem.search.sql.Scope` (the user's current knowledge as
known at known_at, narrowed by a filter), flags stale derived memories among the hits,
and appends the hits to the usage log unless told not to.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from ..core.db import map_errors
from ..core.filters import compile_filter
from ..core.inputs import check_text, optional_text
from ..core.ledger import Ledger
from ..core.staleness import mark_stale
from ..errors import InvalidInputError
from ..time.clock import TimeInput
from .ranking import Hit, run_search
from .sql import Scope

__all__ = ["search"]


def search(
    ledger: Ledger,
    query: str,
    *,
    user_id: str,
    as_of: TimeInput | None = None,
    known_at: TimeInput | None = None,
    valid_at: TimeInput | None = None,
    filters: Mapping[str, Any] | None = None,
    current_only: bool = True,
    include_expired: bool = False,
    limit: int = 10,
    log: bool = True,
    run_id: str | None = None,
) -> list[Hit]:
    """See :meth:`localmem.store.Store.search`."""
    if not isinstance(query, str):
        raise InvalidInputError(f"query={query!r:.80} is not text: expected a string")
    check_text(user_id, "user_id")
    optional_text(run_id, "run_id")
    if not isinstance(log, bool):
        raise InvalidInputError(f"log={log!r} is not a bool")
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= 1000:
        raise InvalidInputError(f"limit={limit!r} is not acceptable: expected an integer from 1 to 1000")
    z = ledger.zone_for(None, user_id)
    known, valid = ledger.axes(as_of, known_at, valid_at, z)
    compiled = None if filters is None else compile_filter(filters, tz=z)
    scope = Scope(
        user_id=user_id, known=known, valid=valid, current_only=current_only,
        include_expired=include_expired, extra=None if compiled is None else (compiled.sql, compiled.params),
    )
    conn = ledger.connection
    with map_errors():
        hits = run_search(conn, query, scope, z, limit, ledger.embedder)
        marked = mark_stale(conn, [h.revision for h in hits], known)
        hits = [h if h.revision is r else dataclasses.replace(h, revision=r)
                for h, r in zip(hits, marked, strict=True)]
    if log and hits:
        ledger.log_usage(user_id, [h.revision.memory_id for h in hits], run_id)
    return hits
