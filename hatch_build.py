"""The wheel's build hook: the modules named in pyproject.toml, compiled to C extensions by mypyc.

``LOCALMEM_COMPILE=1 pip install .`` builds a wheel and this hook compiles the modules listed under
``[tool.hatch.build.targets.wheel.hooks.custom] mypyc`` (a directory stands for every ``.py``
file under it) into the wheel, next to their sources: an extension module is imported before
the ``.py`` file of the same name, so the sources stay readable and the compiled code runs.
The compiled and the pure modules behave the same; the compiled resolver is faster.

What a user can expect:

- Compiling is asked for, never the default: ``LOCALMEM_COMPILE`` set to anything but empty or
  ``0``. A plain ``pip install .`` makes the pure-Python wheel (``py3-none-any``) in seconds; the
  compile takes a minute or more of C on a 2-core machine, with pip showing nothing, for a
  resolver ~1.3-1.4x faster and writes no faster beyond noise (README, "Time phrases").
- No compiler, headers or platform mypyc supports: the build prints why and makes the ordinary
  pure-Python wheel. Compiling never fails an install.
- An editable install (``pip install -e .``) is always pure: what a developer edits is what
  runs, and no ``.so`` file lands in the tree to shadow an edited ``.py`` file.
- Nothing is written to the source tree: mypy's cache, the C sources and the objects are built
  in a temporary directory, removed afterwards.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

#: The environment variable that asks for the compiled wheel.
COMPILE_ENV = "LOCALMEM_COMPILE"
#: What mypyc needs at build time (the hook asks for them only when it will compile).
COMPILE_REQUIRES = ["mypy>=2.4", "setuptools>=65"]
#: mypyc's group: the one shared library holding every compiled module's code,
#: localmem_compiled__mypyc.*.so beside the package. Top-level, as mypyc derives each compiled
#: module's __file__ and a package's __path__ from where its group library lies.
GROUP = "localmem_compiled"

#: The script run in a subprocess (so a compiler's crash or a missing module is its exit code):
#: mypyc's setuptools extensions, built into BUILD_LIB, with C sources and objects in WORK.
_SETUP = """
import sys
from setuptools import setup
from mypyc.build import mypycify
work, lib, group, *paths = sys.argv[1:]
# mypy checks what it compiles with the project's config (pyproject.toml) but only reports on it
# (the library's other modules import apsw and orjson, absent from the build environment) and keeps
# its cache in the temporary directory, so a build never depends on, nor writes, the tree's cache.
flags = ["--follow-imports=silent", "--ignore-missing-imports", "--no-warn-unused-ignores",
         "--cache-dir", work + "/mypy_cache"]
setup(
    name="localmem-compiled", packages=[], py_modules=[],
    ext_modules=mypycify(flags + paths, opt_level="3", group_name=group, target_dir=work),
    script_args=["build_ext", "--build-lib", lib, "--build-temp", work],
)
"""


def compile_requested() -> bool:
    """Whether the environment asks for the compiled wheel (``LOCALMEM_COMPILE``)."""
    return os.environ.get(COMPILE_ENV, "") not in ("", "0")


def compiled_sources(root: Path, entries: list[str]) -> list[str]:
    """The ``.py`` files the configuration's entries name (a directory: every one under it; an entry
    starting with ``!`` leaves out what it names), relative to ``root``, sorted."""
    found: set[str] = set()
    for entry in (e for e in entries if not e.startswith("!")):
        path = root / entry
        if path.is_dir():
            found.update(p.relative_to(root).as_posix() for p in path.rglob("*.py"))
        elif path.suffix == ".py" and path.is_file():
            found.add(entry)
        else:
            raise ValueError(f"mypyc entry {entry!r} is neither a directory nor a .py file under {root}")
    for entry in (e[1:] for e in entries if e.startswith("!")):
        if entry not in found:
            raise ValueError(f"mypyc entry '!{entry}' leaves out a file no other entry names")
        found.discard(entry)
    return sorted(found)


class CustomBuildHook(BuildHookInterface):  # type: ignore[type-arg]
    """Compiles the configured modules into a standard (non-editable) wheel, or says why not."""

    PLUGIN_NAME = "custom"

    def dependencies(self) -> list[str]:
        """mypy (which ships mypyc) and setuptools (its extension builder), when compiling is asked for."""
        return list(COMPILE_REQUIRES) if compile_requested() else []

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        """Compile into a temporary directory and add the extensions to the wheel; on any failure
        leave ``build_data`` as it is (the pure wheel) and say why."""
        self._work: str | None = None
        if self.target_name != "wheel" or version != "standard":
            return  # editable installs, sdists: pure
        if not compile_requested():
            return  # the pure wheel, as asked (set LOCALMEM_COMPILE=1 to compile)
        sources = compiled_sources(Path(self.root), list(self.config.get("mypyc", [])))
        self._work = tempfile.mkdtemp(prefix="localmem-mypyc-")
        lib = os.path.join(self._work, "lib")
        self._say(f"compiling {len(sources)} modules with mypyc (about a minute)")
        began = time.monotonic()
        try:
            result = subprocess.run(
                [sys.executable, "-c", _SETUP, os.path.join(self._work, "c"), lib, GROUP, *sources],
                cwd=self.root, capture_output=True, text=True, check=False,
            )
        except OSError as exc:
            result = None
            why = str(exc)
        if result is None or result.returncode != 0:
            if result is not None:
                tail = (result.stderr or result.stdout).strip().splitlines()[-12:]
                why = "\n    ".join(tail) or f"exit code {result.returncode}"
            self._say(f"could not compile ({why});\n  building the pure-Python wheel instead "
                      f"(the same behaviour, a slower time-phrase resolver)")
            return
        built = sorted(Path(lib).rglob("*.so")) + sorted(Path(lib).rglob("*.pyd"))
        if not built:
            self._say("mypyc built no extension module: building the pure-Python wheel instead")
            return
        for path in built:
            build_data["force_include"][str(path)] = path.relative_to(lib).as_posix()
        build_data["pure_python"] = False
        build_data["infer_tag"] = True
        self._say(f"compiled {len(built)} extension modules in {time.monotonic() - began:.0f} s")

    def finalize(self, version: str, build_data: dict[str, Any], artifact_path: str) -> None:
        """Remove the temporary build directory."""
        if getattr(self, "_work", None):
            shutil.rmtree(self._work, ignore_errors=True)  # type: ignore[arg-type]

    def _say(self, message: str) -> None:
        print(f"localmem build: {message}", file=sys.stderr, flush=True)
