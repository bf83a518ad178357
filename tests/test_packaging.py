"""Packaging and import hygiene: what an install of localmem contains and pulls in.

schema.sql lives at the repository root, the one place the data model is
written; an editable install reads it there and a wheel carries it inside the
package. Importing the library never imports the TUI's toolkit, and only
localmem/clock.py reads the wall clock.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

import localmem
from localmem.core import db as _db

REPO = Path(__file__).resolve().parent.parent


def _python(code: str, *, cwd: Path, pythonpath: Path | None = None) -> str:
    """Run ``code`` in a fresh interpreter and return its stdout (failing the test on error)."""
    env = dict(os.environ)
    if pythonpath is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(pythonpath), env.get("PYTHONPATH", "")]).rstrip(
            os.pathsep)
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=cwd, env=env,
        capture_output=True, text=True, timeout=120, check=False,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_schema_sql_found_in_editable_install() -> None:
    """In this source checkout, schema_sql() returns the repository root's schema.sql verbatim."""
    assert Path(localmem.__file__).resolve().is_relative_to(REPO)
    assert _db.schema_sql() == (REPO / "schema.sql").read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A wheel built from this checkout (no build isolation: hatchling is in the test extras), as a
    plain ``pip install .`` builds it: pure, since hatch_build.py compiles only when
    LOCALMEM_COMPILE asks (.ci/run installs and tests the compiled wheel)."""
    out = tmp_path_factory.mktemp("wheel")
    result = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", str(REPO), "--no-deps", "--no-build-isolation",
         "--disable-pip-version-check", "-q", "-w", str(out)],
        capture_output=True, text=True, timeout=300, check=False,
        env={k: v for k, v in os.environ.items() if k != "LOCALMEM_COMPILE"},
    )
    assert result.returncode == 0, result.stderr
    wheels = list(out.glob("localmem-*.whl"))
    assert len(wheels) == 1, wheels
    return wheels[0]


@pytest.fixture(scope="module")
def unpacked(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel's files, unzipped into a directory of their own."""
    target = tmp_path_factory.mktemp("site")
    with zipfile.ZipFile(wheel) as zf:
        zf.extractall(target)
    return target


def _entry_points(wheel: Path) -> str:
    with zipfile.ZipFile(wheel) as zf:
        name = next(n for n in zf.namelist() if n.endswith(".dist-info/entry_points.txt"))
        return zf.read(name).decode()


@pytest.mark.slow
def test_wheel_contains_schema_tui_and_console_script(wheel: Path) -> None:
    """The wheel carries localmem/schema.sql (the repo's, verbatim), tui, py.typed and the console script."""
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
        assert "localmem/schema.sql" in names
        assert zf.read("localmem/schema.sql") == (REPO / "schema.sql").read_bytes()
        assert "localmem/hub/schema.sql" in names  # the hub's PostgreSQL schema travels with its package
    assert {"localmem/__init__.py", "localmem/py.typed", "tui/__init__.py", "tui/localmem.tcss",
            "tui/screens/history.py"} <= names
    assert not any(n.startswith("tests/") for n in names)
    entry_points = _entry_points(wheel)
    assert "[console_scripts]" in entry_points
    assert re.search(r"^localmem\s*=\s*localmem\.cli:main\s*$", entry_points, re.MULTILINE)


@pytest.mark.slow
def test_pure_wheel_is_any_platform_and_holds_no_extension(wheel: Path) -> None:
    """Unless LOCALMEM_COMPILE asks, the wheel is the pure one: tagged py3-none-any, no compiled module."""
    assert wheel.name.endswith("-py3-none-any.whl")
    with zipfile.ZipFile(wheel) as zf:
        assert not [n for n in zf.namelist() if n.endswith((".so", ".pyd"))]


def test_compiled_modules_are_listed_once_and_exist() -> None:
    """pyproject.toml names the modules hatch_build.py compiles (one list); each entry is a directory
    or a .py file of the library, and the time-phrase resolver is among what they stand for."""
    hook = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["hatch"]["build"][
        "targets"]["wheel"]["hooks"]["custom"]
    spec = importlib.util.spec_from_file_location("hatch_build", REPO / hook["path"])
    assert spec is not None and spec.loader is not None
    build = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(build)
    sources = build.compiled_sources(REPO, hook["mypyc"])
    assert "localmem/time/resolver/combine.py" in sources
    assert "localmem/time/resolver/__init__.py" not in sources  # find_times checks its arguments there
    assert all(s.startswith("localmem/") and (REPO / s).is_file() for s in sources)
    with pytest.raises(ValueError, match="nowhere"):
        build.compiled_sources(REPO, ["localmem/nowhere"])
    with pytest.raises(ValueError, match="no other entry"):
        build.compiled_sources(REPO, ["localmem/time", "!localmem/store.py"])


@pytest.mark.slow
def test_unpacked_wheel_imports_and_opens_a_store(unpacked: Path, tmp_path: Path) -> None:
    """With the unpacked wheel first on sys.path, localmem imports from it, finds schema.sql, adds one."""
    code = """
import json
from importlib import resources
import localmem
from localmem.testing import FrozenClock

store = localmem.open(":memory:", clock=FrozenClock("2026-03-02T08:00:00Z"))
rev = store.add("Ann lives in Lisbon", user_id="ann")
print(json.dumps({
    "file": localmem.__file__,
    "packaged_schema": resources.files("localmem").joinpath("schema.sql").is_file(),
    "texts": [r.text for r in store.read("ann")],
    "ok": store.doctor().ok,
}))
"""
    out = json.loads(_python(code, cwd=tmp_path, pythonpath=unpacked))
    assert Path(out["file"]).resolve().is_relative_to(unpacked.resolve())
    assert out["packaged_schema"] is True
    assert out["texts"] == ["Ann lives in Lisbon"]
    assert out["ok"] is True


@pytest.mark.slow
def test_console_script_target_exists_in_the_wheel(wheel: Path, unpacked: Path, tmp_path: Path) -> None:
    """The console script's entry point names a module and function that the wheel itself provides."""
    match = re.search(r"^localmem\s*=\s*([\w.]+):(\w+)", _entry_points(wheel), re.MULTILINE)
    assert match, _entry_points(wheel)
    module, func = match.groups()
    code = f"""
import importlib
mod = importlib.import_module({module!r})
print(mod.__file__)
assert callable(getattr(mod, {func!r}))
"""
    out = _python(code, cwd=tmp_path, pythonpath=unpacked)
    assert Path(out.strip()).resolve().is_relative_to(unpacked.resolve())


#: The agent adapters: each needs its optional extra, so they are imported by name only and
#: never by the library (localmem.compat.*, the MCP server and the hub, localmem.hub, on psycopg;
#: the `localmem mcp` and `localmem hub` command modules import them only when they run).
ADAPTERS = ("localmem.mcp_server", "localmem.compat.", "localmem.hub")
#: What the core must never pull in: the TUI's toolkit and the adapters' frameworks.
OPTIONAL = ("textual", "rich", "tui", "mcp", "langgraph", "langchain", "langchain_core", "langmem", "mem0",
            "psycopg")


def test_importing_localmem_does_not_import_the_tui_toolkit_or_the_adapters(tmp_path: Path) -> None:
    """Every core module of the library, the command line's included, loads neither textual nor rich,
    nor mcp, langgraph, langchain or psycopg (the adapter modules are left out of the walk)."""
    code = f"""
import importlib, json, pkgutil, sys
import localmem
names = [m.name for m in pkgutil.walk_packages(localmem.__path__, "localmem.")
         if not m.name.endswith("__main__")]
core = [n for n in names if not n.startswith({ADAPTERS!r})]
for name in core:
    importlib.import_module(name)
print(json.dumps([names, sorted(m for m in sys.modules if m.split(".")[0] in {OPTIONAL!r})]))
"""
    names, loaded = json.loads(_python(code, cwd=tmp_path))
    assert {"localmem.store", "localmem.cli.app", "localmem.cli.mcp", "localmem.time.resolver"} <= set(names)
    assert {"localmem.mcp_server", "localmem.compat.mem0", "localmem.compat.langgraph"} <= set(names)
    assert {"localmem.hub.ingest", "localmem.hub.reads", "localmem.cli.hub"} <= set(names)
    assert loaded == []


def test_each_adapter_imports_by_name(tmp_path: Path) -> None:
    """With the extras installed, each adapter module imports and names its entry point."""
    code = """
import json
from localmem.compat.langgraph import LocalmemStore
from localmem.compat.mem0 import Memory
from localmem.mcp_server import build_server
from localmem.hub.ingest import ingest
print(json.dumps([LocalmemStore.__name__, Memory.__name__, build_server.__name__, ingest.__name__]))
"""
    assert json.loads(_python(code, cwd=tmp_path)) == ["LocalmemStore", "Memory", "build_server", "ingest"]


WALL_CLOCK = re.compile(
    r"datetime\.now\s*\(|datetime\.utcnow\s*\(|date\.today\s*\(|time\.time(_ns)?\s*\(")


CLOCK_MODULE = "localmem/time/clock.py"


def test_only_the_clock_module_reads_the_wall_clock() -> None:
    """datetime.now, utcnow, date.today and time.time appear in localmem/time/clock.py and in no other
    module of the library or the TUI, at any depth."""
    hits = {
        path.relative_to(REPO).as_posix(): [
            n for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
            if WALL_CLOCK.search(line)]
        for package in ("localmem", "tui") for path in sorted((REPO / package).rglob("*.py"))
    }
    assert len(hits) > 40 and any(name.startswith("tui/screens/") for name in hits)
    strays = {name: lines for name, lines in hits.items() if lines and name != CLOCK_MODULE}
    assert strays == {}
    assert hits[CLOCK_MODULE], f"{CLOCK_MODULE} should be where the wall clock is read"
