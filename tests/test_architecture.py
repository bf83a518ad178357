"""The shape of the code: layers that import only downwards, no cycles, no private reach, rules stated once.

These guard what the README's architecture section promises a newcomer: for any
read, one module and one SQL file decide it.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path
from typing import get_args

from localmem.core import sql
from localmem.core.db import schema_sql
from localmem.core.revision import Op, ValidSource
from localmem.time.interval import Precision

REPO = Path(__file__).resolve().parent.parent

#: Each layer of the library and what it may import of localmem (besides itself, errors and testing).
LAYERS: dict[str, set[str]] = {
    "localmem.time": set(),
    "localmem.core": {"localmem.time"},
    "localmem.search": {"localmem.core", "localmem.time"},
    "localmem.sync": {"localmem.core", "localmem.time"},
    "localmem.replay": {"localmem.search", "localmem.core", "localmem.time"},
    # The hub: an interface-level layer above sync (PostgreSQL through psycopg, the hub extra).
    "localmem.hub": {"localmem.sync", "localmem.core", "localmem.time"},
}
MAX_LINES = 700


def _modules(package: str) -> Iterator[tuple[str, Path]]:
    root = REPO / package
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(REPO).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        yield ".".join(parts), path


def _imports(name: str, path: Path, known: set[str] | frozenset[str] = frozenset()) -> set[str]:
    """Every module ``path`` imports, at any depth (TYPE_CHECKING and function-level imports too).

    ``from pkg import mod`` counts as an import of ``pkg.mod`` when that is one of ``known``'s
    modules (as Python runs it: the package is already being imported), else of ``pkg``.
    """
    is_pkg = path.name == "__init__.py"
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".") if is_pkg else name.split(".")[:-1]
                base = base[: len(base) - (node.level - 1)]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            names = {f"{module}.{alias.name}" for alias in node.names}
            submodules = names & known
            found.update(submodules or {module})
            if not known:
                found.update(names)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


def _graph(package: str) -> dict[str, set[str]]:
    mods = dict(_modules(package))
    known = set(mods)
    return {name: {m for m in _imports(name, path, known) if m in mods and m != name}
            for name, path in mods.items()}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_no_module_imports_one_that_imports_it_back() -> None:
    """Neither the library nor the TUI has an import cycle, counting every import a module makes."""
    for package in ("localmem", "tui"):
        graph = _graph(package)
        assert len(graph) > 10
        assert _cycles(graph) == [], package


def _layer(module: str) -> str | None:
    return next((layer for layer in LAYERS if module == layer or module.startswith(layer + ".")), None)


def test_each_layer_imports_only_the_layers_below_it() -> None:
    """time → core → search, sync → replay, hub: no layer imports the store, an interface or a layer above."""
    wrong = []
    for name, path in _modules("localmem"):
        layer = _layer(name)
        if layer is None:
            continue
        for module in _imports(name, path):
            if not module.startswith("localmem.") or module.split(".")[1] in ("errors", "testing"):
                continue
            target = _layer(module)
            if target != layer and target not in LAYERS[layer]:
                wrong.append(f"{name} imports {module}")
    assert wrong == []


def test_the_library_never_imports_an_interface_or_the_tui_toolkit() -> None:
    """Only the interfaces (the CLI, the TUI) import the TUI; no layer imports textual or rich."""
    for name, path in _modules("localmem"):
        if name.startswith("localmem.cli"):
            continue
        imported = {m.split(".")[0] for m in _imports(name, path)}
        assert not imported & {"textual", "rich", "tui"}, name
        assert not any(m.startswith("localmem.cli") for m in _imports(name, path)), name


def _private_reach(path: Path) -> list[str]:
    """Private names of other modules this file uses: ``obj._name`` on anything but self/cls, or
    ``from m import _name`` (what ruff's SLF001 flags, plus private imports)."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__"):
            owner = node.value
            if isinstance(owner, ast.Name) and owner.id in ("self", "cls"):
                continue
            if isinstance(owner, ast.Call) and isinstance(owner.func, ast.Name) and owner.func.id == "super":
                continue
            out.append(f"{path.name}:{node.lineno} .{node.attr}")
        elif isinstance(node, ast.ImportFrom):
            out.extend(f"{path.name}:{node.lineno} import {a.name}" for a in node.names
                       if a.name.startswith("_") and not a.name.startswith("__"))
    return out


def test_no_module_reaches_into_another_modules_private_names() -> None:
    """No module of the library or the TUI uses another object's or module's private members."""
    reach = [r for package in ("localmem", "tui")
             for _, path in _modules(package) for r in _private_reach(path)]
    assert reach == []


def test_no_module_is_over_seven_hundred_lines() -> None:
    """Modules stay small enough to read in one sitting."""
    sizes = {name: len(path.read_text(encoding="utf-8").splitlines())
             for package in ("localmem", "tui") for name, path in _modules(package)}
    assert {n: s for n, s in sizes.items() if s > MAX_LINES} == {}


_ORDER = re.compile(r"hlc\s+DESC\s*,\s*\w*\.?origin\s+DESC", re.IGNORECASE)


def test_the_latest_revision_order_is_written_once() -> None:
    """The as-of rule's order is generated by core/sql.py alone; the only other spellings are the
    schema's memory_latest view (for people at the sqlite3 shell) and the migration that made it."""
    spelled = {name for package in ("localmem", "tui") for name, path in _modules(package)
               if _ORDER.search(path.read_text(encoding="utf-8"))}
    assert spelled == {"localmem.core.migrations"}  # migration 7's copy of the view, frozen with its step
    assert len(_ORDER.findall(schema_sql())) == 1
    assert sql.revision_order("r") == "r.hlc DESC, r.origin DESC, r.rev_id DESC"
    assert sql.revision_order("r", newest_first=False) == "r.hlc, r.origin, r.rev_id"


def _check_values(column: str) -> set[str]:
    # Schema 10 writes each as a chain of `=` (an IN list built an ephemeral table per INSERT).
    match = re.search(rf"{column}\s+TEXT NOT NULL CHECK \(((?:{column} = '[^']+'\s*(?:OR\s+)?)+)\)",
                      schema_sql())
    assert match, column
    return set(re.findall(r"'([^']+)'", match[1]))


def test_the_named_domain_values_are_the_schemas() -> None:
    """Op, Precision and ValidSource list exactly the values schema.sql's CHECKs allow."""
    assert set(get_args(Op)) == _check_values("op")
    assert set(get_args(Precision)) == _check_values("precision")
    assert set(get_args(ValidSource)) == _check_values("valid_source")


def test_the_revision_columns_and_the_decoder_come_from_one_field_list() -> None:
    """REVISION_COLUMNS lists REVISION_FIELDS' expressions in order, and every field but the
    computed ones is one of them."""
    assert sql.REVISION_COLUMNS.split(",")[0].strip() == sql.REVISION_FIELDS[0][1]
    assert [c.strip() for c in sql.REVISION_COLUMNS.split(",")] == [e for _, e in sql.REVISION_FIELDS]
