"""Small helpers the tests share: dumping every row, to prove nothing changed."""

from __future__ import annotations

from typing import Any

import apsw

TABLES = ("store_meta", "memories", "revisions", "content", "erasures")


def dump(conn: apsw.Connection) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every localmem table, in a stable order."""
    return {t: conn.execute(f"SELECT * FROM {t} ORDER BY 1").fetchall() for t in TABLES}
