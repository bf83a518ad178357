"""Filters: a JSON tree of conditions on a memory's clocks and labels, compiled to SQL.

A filter is a mapping, mem0-style::

    {"AND": [{"valid_time": {"gte": "2025-06-01", "lt": "2025-07-01"}},
             {"OR": [{"kind": "event"}, {"attributes.topic": {"in": ["knee", "run"]}}]},
             {"NOT": {"key": "home_city"}}]}

- ``AND`` and ``OR`` take a non-empty list of filters, ``NOT`` one filter.
- A leaf names a field and either a value (shorthand for ``eq``) or a mapping of
  operators: ``eq, ne, gt, gte, lt, lte, in, nin, contains``. Several fields in
  one mapping must all hold.
- Fields: ``valid_time`` (the memory's valid interval *overlaps* the window the
  operators describe: ``gte``/``gt`` its start, ``lt``/``lte`` its end, ``eq``
  one period), ``observed_at``, ``recorded_at`` (instants), ``kind``, ``key``,
  ``precision`` (text), and ``attributes.<name>`` (a JSON value of the memory's
  attributes; ``contains`` looks inside a list or a string; ``ne`` and ``nin``
  match a memory that lacks the attribute, the other operators do not).
- Times are ISO strings or epoch seconds. A date without a time ("2025-06-15",
  "2025-06", "2025") is that whole period in the user's zone: ``lte
  "2025-06-30"`` includes all of June 30th, ``gt "2025-06-30"`` starts at July
  1st, ``eq "2025-06"`` is all of June.

Everything is compiled to parameterised SQL; no value ever becomes SQL text. An
unknown field or operator, a value of the wrong type, an empty list, an empty
window or a tree nested deeper than :data:`MAX_DEPTH` raises
:class:`InvalidFilterError` naming the place in the tree ("filters.AND[1].kind").

Bounds, so that every filter SQLite would refuse is refused here first, by name:
an ``in``/``nin`` list or an ``AND``/``OR`` list holds at most :data:`MAX_LIST`
items, and a whole tree binds at most :data:`MAX_PARAMS` values (SQLite allows
32,766 per statement). Numbers must fit SQLite: integers in 64 bits, floats
finite (NaN equals nothing, so a NaN filter could only ever match by accident).
Strings must be storable text (no lone surrogate, no NUL:
:func:`localmem.core.inputs.check_encodable`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import Any
from zoneinfo import ZoneInfo

from ..errors import InvalidInputError, LocalmemError, shown
from ..time.clock import parse_time, period_end, to_micros
from ..time.interval import PRECISIONS
from .inputs import check_encodable

__all__ = [
    "MAX_DEPTH",
    "MAX_LIST",
    "MAX_PARAMS",
    "OPERATORS",
    "FIELDS",
    "InvalidFilterError",
    "Compiled",
    "compile_filter",
]

MAX_DEPTH = 32
#: The most items an ``in``/``nin`` list, or an ``AND``/``OR`` list, may hold.
MAX_LIST = 1_000
#: The most values one filter may bind (SQLite's own limit per statement is 32,766,
#: and the read around the filter binds some of its own).
MAX_PARAMS = 10_000
_INT64 = (-(2**63), 2**63 - 1)
OPERATORS = ("eq", "ne", "gt", "gte", "lt", "lte", "in", "nin", "contains")
#: The fields a leaf can name (besides ``attributes.<name>``) and the SQL column each reads.
FIELDS = {
    "valid_time": None,
    "observed_at": "r.observed_at",
    "recorded_at": "r.recorded_at",
    "kind": "m.kind",
    "key": "m.key",
    "precision": "r.precision",
}
_TEXT_OPS = ("eq", "ne", "in", "nin", "contains")
_TIME_OPS = ("eq", "ne", "gt", "gte", "lt", "lte", "in", "nin")
_WINDOW_OPS = ("eq", "gt", "gte", "lt", "lte")
_ATTRIBUTE = re.compile(r"attributes\.([A-Za-z0-9_][A-Za-z0-9_\-]*)")


class InvalidFilterError(InvalidInputError):
    """A filter tree that cannot be compiled; the message names where in the tree."""


@dataclass(frozen=True, slots=True)
class Compiled:
    """A filter as a SQL condition over the read's aliases (r, m, c) and its parameters."""

    sql: str
    params: dict[str, object] = field(default_factory=dict)


class _Compiler:
    def __init__(self, tz: ZoneInfo) -> None:
        self.tz = tz
        self.params: dict[str, object] = {}

    def bind(self, value: object) -> str:
        if len(self.params) >= MAX_PARAMS:
            raise InvalidFilterError(
                f"filters: the filter is too large: it binds more than {MAX_PARAMS} values "
                f"(each list item, time and attribute path is one or two): expected a smaller tree"
            )
        name = f"f{len(self.params)}"
        self.params[name] = value
        return ":" + name

    def node(self, tree: object, path: str, depth: int) -> str:
        if depth > MAX_DEPTH:
            raise InvalidFilterError(f"{path}: the filter is nested deeper than {MAX_DEPTH} levels")
        if not isinstance(tree, Mapping) or not tree:
            raise InvalidFilterError(
                f"{path}={shown(tree)}: expected a non-empty mapping (AND, OR, NOT, or field conditions)"
            )
        logic = [k for k in tree if k in ("AND", "OR", "NOT")]
        if logic and len(tree) > 1:
            raise InvalidFilterError(
                f"{path}: {logic[0]} must stand alone in its mapping, "
                f"found beside {sorted(set(tree) - {logic[0]})}"
            )
        if logic == ["NOT"]:
            return f"NOT ({self.node(tree['NOT'], f'{path}.NOT', depth + 1)})"
        if logic:
            op = logic[0]
            items = tree[op]
            if isinstance(items, (str, bytes, Mapping)) or not isinstance(items, Sequence) or not items:
                raise InvalidFilterError(f"{path}.{op}={shown(items)}: expected a non-empty list of filters")
            _bounded(items, f"{path}.{op}")
            parts = [self.node(sub, f"{path}.{op}[{i}]", depth + 1) for i, sub in enumerate(items)]
            return _joined(op, parts)
        if len(tree) > MAX_LIST:
            raise InvalidFilterError(
                f"{path}: {len(tree)} field conditions in one mapping: expected at most {MAX_LIST}")
        return _joined("AND", [self.leaf(name, cond, f"{path}.{name}") for name, cond in tree.items()])

    def leaf(self, name: object, cond: object, path: str) -> str:
        if not isinstance(name, str):
            raise InvalidFilterError(f"{path}: field names are strings, got {shown(name)}")
        ops = dict(cond) if isinstance(cond, Mapping) else {"eq": cond}
        if not ops:
            raise InvalidFilterError(f"{path}: expected a value or a mapping of operators, got {{}}")
        for op in ops:
            if op not in OPERATORS:
                raise InvalidFilterError(
                    f"{path}: unknown operator {shown(op)}: expected one of {', '.join(OPERATORS)}"
                )
        if name == "valid_time":
            return self.window(ops, path)
        if name in ("observed_at", "recorded_at"):
            return " AND ".join(self.instant(FIELDS[name], op, v, f"{path}.{op}") for op, v in ops.items())  # type: ignore[arg-type]
        if name in ("kind", "key", "precision"):
            return " AND ".join(self.text(name, op, v, f"{path}.{op}") for op, v in ops.items())
        m = _ATTRIBUTE.fullmatch(name)
        if m is None:
            raise InvalidFilterError(
                f"{path}: unknown field {shown(name)}: "
                f"expected one of {', '.join(FIELDS)} or attributes.<name>"
            )
        return " AND ".join(self.attribute(m[1], op, v, f"{path}.{op}") for op, v in ops.items())

    # -- times -----------------------------------------------------------------

    def period(self, value: object, path: str) -> tuple[int, int, bool]:
        """(start, end, is_date): a date is its whole period; an instant is [t, t+1µs)."""
        if isinstance(value, bool) or not isinstance(value, (str, int, float, date)):
            raise InvalidFilterError(f"{path}={shown(value)}: expected an ISO time or date, or epoch seconds")
        try:
            moment = parse_time(value, name=path, tz=self.tz)
        except LocalmemError as exc:
            raise InvalidFilterError(str(exc)) from exc
        start = to_micros(moment.at)
        if moment.is_date:
            try:
                end = period_end(moment, self.tz)
            except LocalmemError as exc:
                raise InvalidFilterError(f"{path}: {exc}") from exc
            return start, to_micros(end), True
        return start, start + 1, False

    def instant(self, column: str, op: str, value: object, path: str) -> str:
        if op not in _TIME_OPS:
            raise InvalidFilterError(
                f"{path}: {op!r} does not apply to a time: expected one of {', '.join(_TIME_OPS)}"
            )
        if op in ("in", "nin"):
            values = self.listed(value, path)
            inside = _joined(
                "OR", [self.instant(column, "eq", v, f"{path}[{i}]") for i, v in enumerate(values)])
            return inside if op == "in" else f"NOT {inside}"
        start, end, _ = self.period(value, path)
        if op == "eq":
            return f"{column} >= {self.bind(start)} AND {column} < {self.bind(end)}"
        if op == "ne":
            return f"NOT ({column} >= {self.bind(start)} AND {column} < {self.bind(end)})"
        bound = {"gt": end, "gte": start, "lt": start, "lte": end}[op]
        sql_op = {"gt": ">=", "gte": ">=", "lt": "<", "lte": "<"}[op]
        return f"{column} {sql_op} {self.bind(bound)}"

    def window(self, ops: dict[str, Any], path: str) -> str:
        lo: int | None = None
        hi: int | None = None
        for op, value in ops.items():
            if op not in _WINDOW_OPS:
                raise InvalidFilterError(
                    f"{path}: {op!r} does not apply to valid_time (an overlap with a window): "
                    f"expected one of {', '.join(_WINDOW_OPS)}"
                )
            start, end, _ = self.period(value, f"{path}.{op}")
            if op in ("eq", "gte", "gt"):
                b = start if op in ("eq", "gte") else end
                lo = b if lo is None else max(lo, b)
            if op in ("eq", "lt", "lte"):
                b = start if op == "lt" else end
                hi = b if hi is None else min(hi, b)
        if lo is not None and hi is not None and hi <= lo:
            raise InvalidFilterError(f"{path}={shown(ops)}: the window is empty (it ends before it starts)")
        conds = []
        if hi is not None:
            conds.append(f"r.valid_from < {self.bind(hi)}")
        if lo is not None:
            conds.append(f"(r.valid_to IS NULL OR r.valid_to > {self.bind(lo)})")
        return " AND ".join(conds)

    # -- text and attributes -------------------------------------------------------

    def listed(self, value: object, path: str) -> list[object]:
        if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Sequence) or not value:
            raise InvalidFilterError(f"{path}={shown(value)}: expected a non-empty list")
        _bounded(value, path)
        return list(value)

    def text(self, name: str, op: str, value: object, path: str) -> str:
        column = FIELDS[name]
        if op not in _TEXT_OPS:
            raise InvalidFilterError(
                f"{path}: {op!r} does not apply to {name}: expected one of {', '.join(_TEXT_OPS)}"
            )
        values = self.listed(value, path) if op in ("in", "nin") else [value]
        for i, v in enumerate(values):
            where = f"{path}[{i}]" if op in ("in", "nin") else path
            if not isinstance(v, str) or (op == "contains" and not v):
                raise InvalidFilterError(
                    f"{where}={shown(v)}: expected a {'non-empty ' if op == 'contains' else ''}string"
                )
            _storable(v, where)
            if name == "precision" and op != "contains" and v not in PRECISIONS:
                raise InvalidFilterError(
                    f"{where}={shown(v)}: not a precision: expected one of {', '.join(PRECISIONS)}"
                )
        if op == "contains":
            return f"COALESCE(instr({column}, {self.bind(value)}) > 0, 0)"
        if op in ("eq", "ne"):
            return f"{column} {'IS' if op == 'eq' else 'IS NOT'} {self.bind(value)}"
        listed = ", ".join(self.bind(v) for v in values)
        return f"COALESCE({column} {'IN' if op == 'in' else 'NOT IN'} ({listed}), {0 if op == 'in' else 1})"

    def attribute(self, name: str, op: str, value: object, path: str) -> str:
        where = self.bind(f'$."{name}"')
        got, kind = f"json_extract(c.attributes, {where})", f"json_type(c.attributes, {where})"
        if op in ("in", "nin"):
            values = self.listed(value, path)
            inside = _joined(
                "OR", [self.attribute(name, "eq", v, f"{path}[{i}]") for i, v in enumerate(values)])
            return inside if op == "in" else f"NOT {inside}"
        _scalar(value, path)
        if op in ("eq", "ne"):
            same = f"COALESCE({self.same(got, kind, value, path)}, 0)"
            return same if op == "eq" else f"NOT {same}"
        if op == "contains":
            if isinstance(value, (Mapping, list)) or value is None:
                raise InvalidFilterError(f"{path}={shown(value)}: expected a string, number or boolean")
            in_list = (
                f"EXISTS (SELECT 1 FROM json_each(c.attributes, {where}) AS j "
                f"WHERE {self.same('j.value', 'j.type', value, path)})"
            )
            in_text = (
                f"({kind} = 'text' AND instr({got}, {self.bind(value)}) > 0)"
                if isinstance(value, str)
                else "0"
            )
            return f"COALESCE({kind} = 'array' AND {in_list}, 0) OR COALESCE({in_text}, 0)"
        if isinstance(value, bool) or not isinstance(value, (int, float, str)):
            raise InvalidFilterError(f"{path}={shown(value)}: {op} compares numbers or strings")
        types = "('integer', 'real')" if not isinstance(value, str) else "('text')"
        sql_op = {"gt": ">", "gte": ">=", "lt": "<", "lte": "<="}[op]
        return f"COALESCE({kind} IN {types} AND {got} {sql_op} {self.bind(value)}, 0)"

    def same(self, got: str, kind: str, value: object, path: str) -> str:
        """SQL for: the JSON value ``got`` (of JSON type ``kind``) equals ``value``."""
        if value is None:
            return f"{kind} = 'null'"
        if isinstance(value, bool):
            return f"{kind} = '{'true' if value else 'false'}'"
        if isinstance(value, (int, float)):
            return f"({kind} IN ('integer', 'real') AND {got} = {self.bind(value)})"
        if isinstance(value, str):
            return f"({kind} = 'text' AND {got} = {self.bind(value)})"
        raise InvalidFilterError(f"{path}={shown(value)}: expected a string, number, boolean or null")


def _bounded(items: Sequence[object], path: str) -> None:
    if len(items) > MAX_LIST:
        raise InvalidFilterError(
            f"{path}: a list of {len(items)} items: expected at most {MAX_LIST} "
            "(filter on a label or attribute the items share instead)"
        )


def _storable(value: str, path: str) -> None:
    try:
        check_encodable(value, path)
    except InvalidInputError as exc:
        raise InvalidFilterError(str(exc)) from None


def _scalar(value: object, path: str) -> None:
    """Refuse a number SQLite cannot compare exactly, or text it cannot hold."""
    if isinstance(value, bool):
        return
    if isinstance(value, int) and not _INT64[0] <= value <= _INT64[1]:
        raise InvalidFilterError(
            f"{path}={shown(value)} does not fit in 64 bits: expected an integer between "
            f"{_INT64[0]} and {_INT64[1]} (SQLite's range)"
        )
    if isinstance(value, float) and not math.isfinite(value):
        raise InvalidFilterError(
            f"{path}={value!r}: expected a finite number (NaN and infinity match nothing)")
    if isinstance(value, str):
        _storable(value, path)


def _joined(op: str, parts: list[str]) -> str:
    """``parts`` joined by AND/OR as a balanced tree of parentheses.

    SQLite parses ``a OR b OR c ...`` as a chain as deep as it is long, and refuses
    expressions deeper than 1,000; halving keeps a list of n items at depth log2(n).
    """
    if len(parts) == 1:
        return f"({parts[0]})"
    mid = len(parts) // 2
    return f"({_joined(op, parts[:mid])} {op} {_joined(op, parts[mid:])})"


def compile_filter(tree: object, *, tz: ZoneInfo) -> Compiled:
    """Compile a filter tree (see the module docstring); dates are read in ``tz``.

    Raises:
        InvalidFilterError: the tree is malformed; the message names where.
    """
    compiler = _Compiler(tz)
    return Compiled(compiler.node(tree, "filters", 1), compiler.params)
