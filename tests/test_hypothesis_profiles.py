"""The hypothesis profiles in conftest.py set every property's example count: `thorough` raises them all."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import examples
from hypothesis import settings

TESTS = Path(__file__).parent
KEYWORD = "max_examples"
# A count written anywhere but through examples(): a number, a name, an expression.
LITERAL_COUNT = re.compile(rf"\b{KEYWORD}\s*=\s*(?!examples\()")

# Prints {module::test: max_examples} for every property, under the profile HYPOTHESIS_PROFILE
# names. Hypothesis keeps a test's settings on it as _hypothesis_internal_use_settings; there is
# no public accessor.
COUNTS = """
import importlib, json, pathlib
import conftest
out = {}
for path in sorted(pathlib.Path(".").glob("test_*.py")):
    if "@given" in path.read_text(encoding="utf-8"):
        for name, fn in vars(importlib.import_module(path.stem)).items():
            chosen = getattr(fn, "_hypothesis_internal_use_settings", None)
            if name.startswith("test_") and chosen is not None:
                out[path.stem + "::" + name] = chosen.max_examples
print(json.dumps(out))
"""


def literal_counts(source: str) -> list[str]:
    """The lines of a module's source that set an example count of their own."""
    return [line.strip() for line in source.splitlines() if LITERAL_COUNT.search(line)]


def counts_under(profile: str) -> dict[str, int]:
    """Every property's example count when the suite runs under ``profile``."""
    env = {**os.environ, "HYPOTHESIS_PROFILE": profile}
    out = subprocess.run([sys.executable, "-c", COUNTS], cwd=TESTS, env=env, capture_output=True,
                         text=True, timeout=120, check=True).stdout
    counts: dict[str, int] = json.loads(out)
    return counts


def test_the_guard_flags_a_count_written_in_a_test() -> None:
    """A literal count, a named one and one with spaces are flagged; one through examples() is not."""
    source = "\n".join([
        f"@settings({KEYWORD}=40)",
        f"@settings(deadline=None, {KEYWORD} = MANY)",
        f"@settings({KEYWORD}=examples(40), deadline=None)",
    ])
    assert literal_counts(source) == [
        f"@settings({KEYWORD}=40)", f"@settings(deadline=None, {KEYWORD} = MANY)"]


def test_no_test_module_sets_an_example_count_of_its_own() -> None:
    """Outside conftest.py, every max_examples in the tests goes through examples()."""
    modules = [p for p in sorted(TESTS.rglob("*.py")) if p.name != "conftest.py"]
    assert Path(__file__) in modules
    offenders = {str(p.relative_to(TESTS)): found for p in modules
                 if (found := literal_counts(p.read_text(encoding="utf-8")))}
    assert offenders == {}


def test_examples_scales_a_ci_count_like_the_thorough_profile() -> None:
    """A property's ci count is raised by thorough's own factor, about 30x, whichever profile is active."""
    ci, thorough = settings.get_profile("ci").max_examples, settings.get_profile("thorough").max_examples
    assert thorough >= 30 * ci
    active = settings().max_examples
    assert examples(ci) == active  # a property asking for the profile's count gets the profile's count
    assert examples(3 * ci) == 3 * active


@pytest.mark.slow
def test_the_thorough_profile_raises_every_propertys_count() -> None:
    """Under HYPOTHESIS_PROFILE=thorough every property runs at least 30 times the examples it runs in ci."""
    ci, thorough = counts_under("ci"), counts_under("thorough")
    assert len(ci) >= 6 and ci.keys() == thorough.keys()
    assert {t: n for t, n in thorough.items() if n < 30 * ci[t]} == {}
