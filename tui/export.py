"""Export what a screen shows, at its clocks, to a CSV or JSON file.

The rule: an export is the *view*, not the store: the same user, clocks,
toggles, filter or search the screen shows, read again in full on a worker
(a table holds only the pages loaded so far), as the library's own
``to_dict()`` of each revision or change (times in ISO 8601 UTC). A
comparison exports its rows as shown. The database is only read; the file
written is the one named.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from localmem import InvalidInputError

__all__ = ["write_records", "FORMATS"]

FORMATS = ("csv", "json")


def _cell(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, str):
        return v
    return json.dumps(v, ensure_ascii=False)


def write_records(path: str | Path, records: Sequence[dict[str, Any]]) -> int:
    """Write ``records`` to ``path`` as CSV or JSON (by its suffix); returns how many.

    CSV has one column per key (the union, in first-seen order); nested values
    (a JSON value, attributes) are JSON in their cell.

    Raises:
        InvalidInputError: the suffix is neither ``.csv`` nor ``.json``, or the file cannot be written.
    """
    p = Path(path).expanduser()
    fmt = p.suffix.lower().lstrip(".")
    if fmt not in FORMATS:
        raise InvalidInputError(f"export path {str(p)!r} must end in .csv or .json")
    try:
        with p.open("w", encoding="utf-8", newline="") as out:
            if fmt == "json":
                json.dump(list(records), out, ensure_ascii=False, indent=2)
                out.write("\n")
            else:
                fields: dict[str, None] = {}
                for r in records:
                    fields.update(dict.fromkeys(r))
                writer = csv.DictWriter(out, fieldnames=list(fields))
                writer.writeheader()
                for r in records:
                    writer.writerow({k: _cell(v) for k, v in r.items()})
    except OSError as exc:
        raise InvalidInputError(f"cannot write the export to {str(p)!r}: {exc.strerror}") from exc
    return len(records)
