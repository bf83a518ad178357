"""The README's walkthroughs, run as printed: each ``sh`` block through the console script.

Each walkthrough's ``sh`` blocks run in order in one bash (so ``FEE=$(...)``
carries over), in a temp dir with its own data dir; the output block printed
right after an ``sh`` block must match what it printed, modulo ids (any
26-character ULID matches any other) and ``...`` lines (any lines, or none).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

README = Path(__file__).resolve().parents[1] / "README.md"
ULID = "[0-9A-HJKMNP-TV-Z]{26}"
MARK = "@@ block done @@"
FENCE = re.compile(r"^```(\w*)\n(.*?)^```\n", re.S | re.M)


def sections(text: str) -> dict[str, str]:
    """The README's ``## `` sections by title (subsections stay inside theirs)."""
    parts = re.split(r"^## (.+)\n", text, flags=re.M)
    return dict(zip(parts[1::2], parts[2::2], strict=True))


def blocks(section: str) -> list[tuple[str, str | None]]:
    """Each ``sh`` block with the output block printed right after it (None when there is none)."""
    found = list(FENCE.finditer(section))
    out: list[tuple[str, str | None]] = []
    for i, m in enumerate(found):
        if m.group(1) != "sh":
            continue
        nxt = found[i + 1] if i + 1 < len(found) else None
        follows = nxt is not None and nxt.group(1) == "" and section[m.end():nxt.start()].strip() == ""
        out.append((m.group(2), nxt.group(2) if follows and nxt else None))
    return out


def pattern(shown: str) -> re.Pattern[str]:
    """What a shown output block allows: ids are any ids, a ``...`` line any lines."""
    parts = []
    for line in shown.splitlines():
        if line.strip() == "...":
            parts.append(r"(?:.*\n)*?")
        else:
            parts.append(re.escape(line) + r"\n")
    return re.compile("".join(parts).replace("X" * 26, ULID))


def with_ids_open(shown: str) -> str:
    """The shown block with every id replaced by a placeholder that :func:`pattern` opens up."""
    return re.sub(ULID, "X" * 26, shown)


def run(section: str, cwd: Path) -> list[tuple[str, str | None, str]]:
    """Run a walkthrough's blocks in one bash; each block with its shown and its real output."""
    steps = blocks(section)
    script = "set -e\n" + "".join(f"{code}\necho '{MARK}'\n" for code, _ in steps)
    bindir = str(Path(sys.executable).parent)
    env = {k: v for k, v in os.environ.items() if k != "LOCALMEM_DB"}
    env.update(PATH=bindir + os.pathsep + env.get("PATH", ""), XDG_DATA_HOME=str(cwd / "data-home"))
    done = subprocess.run(["bash", "-c", script], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    outputs = done.stdout.split(MARK + "\n")
    assert len(outputs) == len(steps) + 1 and outputs[-1] == ""
    return [(code, shown, got) for (code, shown), got in zip(steps, outputs, strict=False)]


@pytest.mark.parametrize("title", ["Walkthrough: one fee, two answers",
                                   "Walkthrough: Sam and the Stride coach app"])
def test_walkthrough_runs_as_printed(title: str, tmp_path: Path) -> None:
    """Every block of the walkthrough runs without an error, and prints what the README shows."""
    section = sections(README.read_text(encoding="utf-8"))[title]
    results = run(section, tmp_path)
    assert sum(shown is not None for _, shown, _ in results) >= 3
    for code, shown, got in results:
        if shown is not None:
            assert pattern(with_ids_open(shown)).fullmatch(got), f"$ {code}\n--- shown\n{shown}--- got\n{got}"


def test_the_hub_walkthrough_runs_as_printed(hub_dsn: str, tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """The hub's walkthrough, against an empty hub on the suite's own PostgreSQL cluster."""
    monkeypatch.setenv("LOCALMEM_HUB_DSN", hub_dsn)
    section = sections(README.read_text(encoding="utf-8"))["The hub"]
    results = run(section, tmp_path)
    assert sum(shown is not None for _, shown, _ in results) >= 6
    for code, shown, got in results:
        if shown is not None:
            assert pattern(with_ids_open(shown)).fullmatch(got), f"$ {code}\n--- shown\n{shown}--- got\n{got}"


def test_the_pattern_reads_ids_and_ellipses() -> None:
    """A shown block matches output with other ids and with lines where it says `...`."""
    shown = "01KJPWF17085VQF65E16DRFSEY  fee = 4\n    ...\nend\n"
    assert pattern(with_ids_open(shown)).fullmatch("01KJPWF1702AV86GHMNV1QFHQ5  fee = 4\n a\n b\nend\n")
    assert not pattern(with_ids_open(shown)).fullmatch("01KJPWF1702AV86GHMNV1QFHQ5  fee = 7\nend\n")


def test_the_schema_version_the_readme_names_is_the_codes() -> None:
    """The README's Storage section names the schema version doctor and migrations use."""
    from localmem.core.db import SCHEMA_VERSION

    stated = re.findall(r"the schema version \((\d+)\)", README.read_text(encoding="utf-8"))
    assert stated == [str(SCHEMA_VERSION)]
