"""What a benchmark's figures were measured on: the commit, so figures stay tied to code."""

from __future__ import annotations

import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def git_commit() -> str:
    """The checkout's commit (with -dirty for uncommitted changes), or "(no git)"."""
    try:
        out = subprocess.run(["git", "-C", str(ROOT), "describe", "--always", "--dirty"],
                             capture_output=True, text=True, timeout=10, check=True)
    except (OSError, subprocess.SubprocessError):
        return "(no git)"
    return out.stdout.strip()
