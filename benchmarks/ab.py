"""Run one benchmark script against two commits in one run, interleaved, and print the ratios.

    python benchmarks/ab.py REF -- benchmarks/store.py --revisions 100000
    python benchmarks/ab.py 131bb30 --rounds 3 -- benchmarks/search.py --revisions 100000

REF is checked out into a temporary git worktree; the working tree is the other side.
Each round runs the script once from each side (ABAB..., alternating which goes first),
each in its own process with that side's ``localmem`` first on ``sys.path`` and that
side's copy of the script, so a change of load hits both sides alike. Every numeric
figure of the JSON object the script prints last is collected; the table gives each
side's median and new / old. Timings are printed, never asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent


def flatten(obj: Any, prefix: str = "") -> dict[str, float]:
    """Every number in a JSON value, keyed by its path (``sizes.0.results.+ usage.ms``)."""
    out: dict[str, float] = {}
    if isinstance(obj, bool):
        return out
    if isinstance(obj, int | float):
        out[prefix] = float(obj)
    elif isinstance(obj, dict):
        for k, v in obj.items():
            out.update(flatten(v, f"{prefix}.{k}" if prefix else str(k)))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            out.update(flatten(v, f"{prefix}.{i}" if prefix else str(i)))
    return out


def run_side(tree: Path, script: str, args: list[str], script_tree: Path | None = None) -> dict[str, float]:
    """Run ``script`` (relative to the repository; from ``script_tree`` if given) with ``tree``'s
    localmem; its last line's JSON, flattened."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    done = subprocess.run([sys.executable, str((script_tree or tree) / script), *args], cwd=tree, env=env,
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{script} failed in {tree}:\n{done.stderr[-2000:]}")
    last = done.stdout.strip().splitlines()[-1]
    return flatten(json.loads(last))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("ref", help="the commit to compare against (the old side)")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--match", default="", help="only figures whose path contains this")
    parser.add_argument("--same-script", action="store_true",
                        help="run the working tree's copy of the script on both sides (for a script "
                             "that is newer than REF, or that REF's copy cannot run)")
    argv = sys.argv[1:] if argv is None else argv
    if "--" not in argv:
        parser.error("give the benchmark after --: ab.py REF -- SCRIPT [ARGS...]")
    cut = argv.index("--")
    args = parser.parse_args(argv[:cut])
    command = argv[cut + 1:]
    if not command:
        parser.error("give the benchmark after --")
    script, script_args = command[0], command[1:]
    with tempfile.TemporaryDirectory(prefix="localmem-ab-") as tmp:
        old_tree = Path(tmp) / "old"
        subprocess.run(["git", "worktree", "add", "--detach", str(old_tree), args.ref], cwd=REPO,
                       check=True, capture_output=True)
        try:
            sides: dict[str, list[dict[str, float]]] = {"old": [], "new": []}
            for r in range(args.rounds):
                order = [("old", old_tree), ("new", REPO)]
                for name, tree in order if r % 2 == 0 else order[::-1]:
                    print(f"round {r + 1}/{args.rounds}: {name} ...", file=sys.stderr, flush=True)
                    sides[name].append(run_side(tree, script, script_args,
                                                REPO if args.same_script else None))
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(old_tree)], cwd=REPO,
                           check=False, capture_output=True)
    keys = [k for k in sides["new"][0] if k in sides["old"][0] and args.match in k]
    print(f"{script} {' '.join(script_args)}: {args.ref} (old) vs the working tree (new), "
          f"{args.rounds} interleaved rounds, medians")
    print(f"{'figure':70} {'old':>12} {'new':>12} {'new/old':>8}")
    for k in keys:
        old = statistics.median(s[k] for s in sides["old"] if k in s)
        new = statistics.median(s[k] for s in sides["new"] if k in s)
        ratio = f"{new / old:.3f}" if old else "-"
        print(f"{k[:70]:70} {old:12.4g} {new:12.4g} {ratio:>8}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
