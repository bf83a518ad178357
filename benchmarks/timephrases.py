"""Time-phrase benchmark: localmem's resolver next to dateparser, on the shared dev set.

    python benchmarks/timephrases.py [--data DIR] [--tz UTC] [--show-misses N] [--fp]

Runs ``localmem.time.resolver.find_times`` and the dateparser baseline of the
reference scorer (``score.dateparser_resolver``: ``search_dates``, each phrase
re-read for its period) and prints, side by side, with the targets:

* accuracy on ``DIR/dev.jsonl`` (default DIR: ``../shared/timephrases`` from the
  repo root, or ``../../shared/timephrases`` from a worktree): n, coverage, exact,
  overlap and precision-label accuracy, on all rows and on the rows marked
  ``"relative": true``. ``DIR/score.py`` does the scoring itself (``load_rows``,
  ``normalise_candidates``, ``score_row``, ``summarise``): day granularity,
  half-open intervals, gold alternatives count as exact;
* false positives on ``benchmarks/data/phrase_free.txt``, chat messages with no
  date or time in them, each read as sent at FREE_SENT_AT: every mention (or
  dateparser candidate) returned is a false positive. Mentions per 100 messages,
  and the share of messages with any;
* speed over the dev texts, in messages per second of wall time and of CPU time
  (``process_time``, which a loaded machine disturbs less): ``find_times`` alone, best
  of ``--repeat`` passes; dateparser's baseline, one pass (it is slow). Each is
  warmed up on one message first (dateparser loads its language data then).
  ``find_times`` is also timed on the phrase-free messages (the mix a store
  mostly sees: chat with no time in it), best of ``--repeat`` passes.

The localmem adapter turns each TimeMention into a ``(start, end, precision)``
candidate, the precision in the scorer's units: the scorer works in days and its
golds say day, weekend, week, month, season or year, so a clock time or a part of
a day counts as "day" and a decade or century as "year" (``SCORER_UNIT``); the
label figure with localmem's own names is printed too. ``sent_at`` is the row's
naive datetime with the ``--tz`` zone
(default UTC) attached. An open end ("since January", end None) becomes the
later of start + 1 day and sent_at: the interval runs up to the moment of
writing. An open start ("until Friday", start None) becomes sent_at. A mention
with neither bound is dropped. ``--ranges exclusive`` scores "from X to Y" the
dev set's way, without Y's last day, month or year (ours include it). dateparser is optional (``pip install -e
'.[bench]'``); without it its column reads n/a.

``--show-misses N`` prints N dev rows without an exact localmem match, spread
evenly over all the misses, with the gold and what localmem found; ``--fp``
prints every phrase-free message where localmem found something. It never
asserts a figure; the last line is JSON.
"""

from __future__ import annotations

import argparse
import collections
import importlib.metadata
import importlib.util
import json
import os
import re
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from pathlib import Path
from types import ModuleType
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from provenance import git_commit  # benchmarks/ is on sys.path when a script here runs

ROOT = Path(__file__).resolve().parent.parent
#: ../shared/timephrases from the checkout; a worktree one level deeper (wt/NAME) looks one more up.
DEFAULT_DATA = next(
    (d / "shared" / "timephrases" for d in (ROOT.parent, ROOT.parent.parent)
     if (d / "shared" / "timephrases").is_dir()),
    ROOT.parent / "shared" / "timephrases",
)
PHRASE_FREE = ROOT / "benchmarks" / "data" / "phrase_free.txt"
#: When the phrase-free messages were "sent": a Wednesday in May, around noon.
FREE_SENT_AT = datetime(2024, 5, 15, 12, 0)  # noqa: DTZ001 - the zone is --tz, attached later
ONE_DAY = timedelta(days=1)

# Targets, printed next to the figures they judge (always localmem's figures): issue 14's.
TARGET_EXACT = 0.75
TARGET_EXACT_RELATIVE = 0.85
TARGET_OVERLAP = 0.93
TARGET_LABEL = 0.85
TARGET_FP_PER_100 = 1.0  # "near zero": at most one false mention per 100 messages
TARGET_SPEEDUP = 10.0  # localmem messages/s over dateparser's
TARGET_RATE = 20_000.0  # issue 19: localmem messages/s on the dev mix

#: A candidate as score.py reads it: (start, end, precision).
Candidate = tuple[Any, Any, str]
#: The raw output of one call (TimeMentions, or candidates) and its candidates.
Call = Callable[[str, datetime], tuple[list[Any], list[Candidate]]]


@dataclass
class Run:
    """One resolver over one list of messages."""

    name: str
    outputs: list[list[Any]] = field(default_factory=list)  # raw, per message
    cands: list[list[tuple[date, date, str]]] = field(default_factory=list)  # normalised
    errors: collections.Counter[str] = field(default_factory=collections.Counter)
    first_error: str = ""
    seconds: float = 0.0  # time inside the resolver calls

    def rate(self) -> float:
        return len(self.outputs) / self.seconds if self.seconds else 0.0


# --------------------------------------------------------------------------
# The resolvers
# --------------------------------------------------------------------------

def load_scorer(data: Path) -> ModuleType:
    """DIR/score.py, imported from its path."""
    path = data / "score.py"
    spec = importlib.util.spec_from_file_location("timephrases_score", path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"cannot import the reference scorer {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def resolver_build() -> str:
    """How the imported resolver was built: "compiled (mypyc)" when its modules are extension
    modules (a wheel from ``LOCALMEM_COMPILE=1 pip install .``; hatch_build.py), else "pure
    Python" (an editable install, a plain ``pip install .``, or a build that could not compile),
    with where it was loaded from."""
    import localmem.time.resolver.find as core  # find_times' work (its package __init__ stays pure)

    modules = [m for name, m in sys.modules.items() if name.startswith("localmem.time")]
    native = [m for m in modules if not str(getattr(m, "__file__", "")).endswith(".py")]
    how = "compiled (mypyc)" if not str(core.__file__).endswith(".py") else "pure Python"
    return f"{how}, {len(native)} of {len(modules)} localmem.time modules native, from {core.__file__}"


def find_times_function() -> Callable[..., list[Any]]:
    try:
        from localmem.time.resolver import find_times
    except ImportError as exc:
        raise SystemExit(f"cannot import localmem.time.resolver.find_times ({exc}): "
                         "is localmem/resolver.py written and the package installed?") from exc
    return find_times


_CONNECTOR = re.compile(r"\s(?:to|till|til|until|through|thru|and)\s|[-~–]", re.IGNORECASE)


def _drop_last_unit(end: datetime, precision: str) -> datetime:
    """The end of a range without its last named day, month or year (the dev set's convention)."""
    if precision == "month":
        return end.replace(year=end.year - (end.month == 1), month=(end.month - 2) % 12 + 1)
    if precision in ("year", "decade"):
        return end.replace(year=end.year - 1)
    return end - ONE_DAY


#: localmem's precisions the scorer has no word for, as the scorer's units: it scores days, so a
#: clock time or a part of a day is its day; a decade or a century is a span of whole years.
SCORER_UNIT = {"instant": "day", "minute": "day", "hour": "day", "part_of_day": "day", "decade": "year"}


def candidate(mention: Any, sent_at: datetime, exclusive_ranges: bool = False,
              own_labels: bool = False) -> Candidate | None:
    """A TimeMention as a scorer candidate; open bounds closed as the module docstring says, the
    precision in the scorer's units (``SCORER_UNIT``) unless ``own_labels``."""
    start, end = mention.start, mention.end
    if start is None and end is None:
        return None
    if start is None:
        start = sent_at
    if end is None:
        end = max(start + ONE_DAY, sent_at)
    elif exclusive_ranges and mention.kind == "range" and _CONNECTOR.search(mention.phrase) \
            and "to date" not in mention.phrase.lower():
        shorter = _drop_last_unit(end, str(mention.precision))
        end = shorter if shorter > start else end
    precision = str(mention.precision)
    return start, end, precision if own_labels else SCORER_UNIT.get(precision, precision)


def localmem_call(tz: ZoneInfo, exclusive_ranges: bool = False, own_labels: bool = False) -> Call:
    find_times = find_times_function()

    def call(text: str, sent_at: datetime) -> tuple[list[Any], list[Candidate]]:
        sent = sent_at.replace(tzinfo=tz)
        mentions = find_times(text, sent_at=sent, tz=tz)
        cands = [c for m in mentions
                 if (c := candidate(m, sent, exclusive_ranges, own_labels)) is not None]
        return mentions, cands

    return call


def dateparser_call(scorer: ModuleType) -> Call:
    def call(text: str, sent_at: datetime) -> tuple[list[Any], list[Candidate]]:
        cands = list(scorer.dateparser_resolver(text, sent_at))
        return cands, cands

    return call


def dateparser_missing(skip: bool) -> str:
    """Why the dateparser column is empty, or "" if it can run."""
    if skip:
        return "n/a (--skip-dateparser)"
    if importlib.util.find_spec("dateparser") is None:
        return "n/a (pip install dateparser)"
    return ""


# --------------------------------------------------------------------------
# Running and measuring
# --------------------------------------------------------------------------

def run(name: str, call: Call, texts: Sequence[str], sent_ats: Sequence[datetime],
        scorer: ModuleType, tz: ZoneInfo) -> Run:
    """Call the resolver on every message, timing the calls; a crash counts as nothing found."""
    out = Run(name)
    try:
        call(texts[0], sent_ats[0])  # warm-up, untimed
    except Exception:  # counted below, on the same message
        pass
    for text, sent_at in zip(texts, sent_ats, strict=True):
        t0 = time.perf_counter()
        try:
            raw, cands = call(text, sent_at)
        except Exception as exc:  # the scorer's rule: a crash returns nothing
            out.errors[type(exc).__name__] += 1
            out.first_error = out.first_error or f"{type(exc).__name__}: {exc}"
            raw, cands = [], []
        out.seconds += time.perf_counter() - t0
        out.outputs.append(raw)
        out.cands.append(scorer.normalise_candidates(cands, tz))
    return out


def best_rate(texts: Sequence[str], sent_ats: Sequence[datetime], tz: ZoneInfo,
              repeat: int) -> tuple[float, float]:
    """find_times alone over all messages: the best of `repeat` passes, in messages/s of wall
    time and of this process's CPU time (the figure a loaded machine disturbs least)."""
    find_times = find_times_function()
    aware = [s.replace(tzinfo=tz) for s in sent_ats]
    best = best_cpu = float("inf")
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        for text, sent_at in zip(texts, aware, strict=True):
            try:
                find_times(text, sent_at=sent_at, tz=tz)
            except Exception:  # counted by run(); timing only here
                continue
        best = min(best, time.perf_counter() - t0)
        best_cpu = min(best_cpu, time.process_time() - c0)
    return len(texts) / best, len(texts) / max(best_cpu, 1e-9)


def accuracy(scorer: ModuleType, rows: list[dict[str, Any]], r: Run) -> dict[str, dict[str, Any]]:
    """score.py's summary on all rows and on the relative rows."""
    results = [scorer.score_row(row, c) for row, c in zip(rows, r.cands, strict=True)]
    rel = [i for i, row in enumerate(rows) if row.get("relative") is True]
    return {"all": scorer.summarise(rows, results),
            "relative": scorer.summarise([rows[i] for i in rel], [results[i] for i in rel])}


def false_positives(r: Run) -> dict[str, float]:
    n = len(r.outputs)
    return {"messages": n,
            "per_100": 100.0 * sum(map(len, r.outputs)) / n,
            "pct_any": 100.0 * sum(1 for o in r.outputs if o) / n}


def load_phrase_free(path: Path) -> list[str]:
    """The messages: one a line, # comments and blank lines skipped."""
    lines = path.read_text(encoding="utf-8").splitlines()
    return [s.strip() for s in lines if s.strip() and not s.lstrip().startswith("#")]


# --------------------------------------------------------------------------
# Printing
# --------------------------------------------------------------------------

def verdict(ok: bool) -> str:
    return "ok" if ok else "MISSED"


def row(label: str, mine: str, theirs: str, target: str = "") -> None:
    print(f"  {label:<30}{mine:>12}{theirs:>14}   {target}")


def print_accuracy(acc: dict[str, dict[str, dict[str, Any]]], na: str) -> None:
    print("Accuracy on the dev set (fraction of rows)")
    row("", "localmem", "dateparser", "target")
    targets = {("all", "exact"): TARGET_EXACT, ("relative", "exact"): TARGET_EXACT_RELATIVE,
               ("all", "overlap"): TARGET_OVERLAP, ("all", "precision_label"): TARGET_LABEL}
    for subset, title in (("all", "all rows"), ("relative", "relative rows")):
        mine = acc["localmem"][subset]
        theirs = acc["dateparser"][subset] if "dateparser" in acc else None
        row(f"{title}: n", f"{mine['n']}", f"{theirs['n']}" if theirs else "n/a")
        for metric, label in (("coverage", "coverage"), ("exact", "exact"), ("overlap", "overlap"),
                              ("precision_label", "precision label")):
            goal = targets.get((subset, metric))
            target = f">= {goal:.2f}  {verdict(mine[metric] >= goal)}" if goal is not None else ""
            row(f"  {label}", f"{mine[metric]:.3f}", f"{theirs[metric]:.3f}" if theirs else "n/a",
                target)
        if "localmem_own_labels" in acc:
            own = acc["localmem_own_labels"][subset]["precision_label"]
            row("  label, localmem's own names", f"{own:.3f}", "", "(decade, hour... as they are)")
    if na:
        print(f"  dateparser: {na}")


def print_false_positives(fps: dict[str, dict[str, float]], na: str) -> None:
    mine, theirs = fps["localmem"], fps.get("dateparser")
    print(f"False positives on {PHRASE_FREE.name} ({mine['messages']:.0f} messages, "
          "no time in them)")
    row("", "localmem", "dateparser", "target")
    row("mentions per 100 messages", f"{mine['per_100']:.1f}",
        f"{theirs['per_100']:.1f}" if theirs else "n/a",
        f"<= {TARGET_FP_PER_100:.0f} (near zero)  {verdict(mine['per_100'] <= TARGET_FP_PER_100)}")
    row("messages with any mention", f"{mine['pct_any']:.1f}%",
        f"{theirs['pct_any']:.1f}%" if theirs else "n/a")
    if na:
        print(f"  dateparser: {na}")


def print_speed(n: int, mine: tuple[float, float], theirs: float | None, na: str, n_free: int,
                free: tuple[float, float]) -> None:
    print(f"Speed on the dev texts ({n} messages)")
    row("", "localmem", "dateparser", "target")
    row("messages/s", f"{mine[0]:,.0f}", f"{theirs:,.1f}" if theirs else "n/a",
        f">= {TARGET_RATE:,.0f}  {verdict(mine[0] >= TARGET_RATE)}")
    row("messages/s of CPU time", f"{mine[1]:,.0f}", "",
        f">= {TARGET_RATE:,.0f}  {verdict(mine[1] >= TARGET_RATE)}")
    row(f"phrase-free mix ({n_free}), msg/s", f"{free[0]:,.0f}", "", "")
    row("... of CPU time", f"{free[1]:,.0f}", "", "")
    if theirs:
        ratio = mine[0] / theirs
        row("localmem / dateparser", f"{ratio:,.0f}x", "",
            f">= {TARGET_SPEEDUP:.0f}x  {verdict(ratio >= TARGET_SPEEDUP)}")
    else:
        row("localmem / dateparser", "n/a", "", f">= {TARGET_SPEEDUP:.0f}x  n/a")


def describe(mention: Any) -> str:
    """A TimeMention on one line: phrase, span, bounds, precision."""
    def bound(d: datetime | None) -> str:
        return "open" if d is None else d.isoformat(timespec="minutes")

    vague = ", vague" if getattr(mention, "vague", False) else ""
    return (f"{mention.phrase!r} {tuple(mention.span)} [{bound(mention.start)}, {bound(mention.end)})"
            f" {mention.precision}{vague}")


def print_misses(rows: list[dict[str, Any]], r: Run, scorer: ModuleType, n: int) -> None:
    misses = [i for i, (row_, c) in enumerate(zip(rows, r.cands, strict=True))
              if not scorer.score_row(row_, c)["exact"]]
    if not misses or n <= 0:
        return
    shown = misses if n >= len(misses) else [misses[k * len(misses) // n] for k in range(n)]
    print(f"\nlocalmem misses: {len(shown)} of {len(misses)} rows without an exact match")
    for i in shown:
        g = rows[i]
        print(f"\n- {g['id']}  sent {g['sent_at']}{'  relative' if g.get('relative') else ''}")
        print(f"  text: {g['text'][:200]}")
        print(f"  gold: {g['span']!r} [{g['gold_start']}, {g['gold_end']}) {g['gold_precision']}"
              + (f"  alts={g['gold_alternatives']}" if g.get("gold_alternatives") else ""))
        found = [describe(m) for m in r.outputs[i]] or ["nothing"]
        print("  got:  " + "\n        ".join(found))
        if r.cands[i]:
            print("  days: " + ", ".join(f"[{s}, {e}) {p}" for s, e, p in r.cands[i]))


def print_fp(texts: list[str], r: Run) -> None:
    hits = [(t, o) for t, o in zip(texts, r.outputs, strict=True) if o]
    print(f"\nlocalmem on {PHRASE_FREE.name}: {len(hits)} messages with a mention")
    for text, found in hits:
        print(f"- {text}\n    " + "\n    ".join(describe(m) for m in found))


# --------------------------------------------------------------------------

def dateparser_version() -> str:
    try:
        return importlib.metadata.version("dateparser")
    except importlib.metadata.PackageNotFoundError:
        return "(not installed)"


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA,
                        help="directory holding dev.jsonl and score.py (default %(default)s)")
    parser.add_argument("--tz", default="UTC", help="IANA zone attached to sent_at (default UTC)")
    parser.add_argument("--show-misses", type=int, default=0, metavar="N",
                        help="print N dev rows without an exact localmem match")
    parser.add_argument("--ranges", choices=("inclusive", "exclusive"), default="inclusive",
                        help="score localmem's ranges as they are (inclusive: 'from July to September' "
                             "ends October 1st), or cut to the dev set's convention that drops the last "
                             "named unit, to see how much of the gap is that convention")
    parser.add_argument("--fp", action="store_true",
                        help="print every phrase-free message where localmem found a mention")
    parser.add_argument("--repeat", type=int, default=3,
                        help="timed passes of find_times over the dev texts (default 3)")
    parser.add_argument("--skip-dateparser", action="store_true",
                        help="leave the (slow) dateparser baseline out")
    args = parser.parse_args(argv)
    for name in ("dev.jsonl", "score.py"):
        if not (args.data / name).is_file():
            parser.error(f"{args.data / name} is missing: --data must name the time-phrase "
                         "dev set directory (dev.jsonl and score.py)")
    try:
        args.zone = ZoneInfo(args.tz)
    except (ZoneInfoNotFoundError, ValueError):
        parser.error(f"--tz {args.tz!r} is not an IANA zone")
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    tz: ZoneInfo = args.zone
    scorer = load_scorer(args.data)
    rows: list[dict[str, Any]] = scorer.load_rows(str(args.data / "dev.jsonl"))
    texts = [r["text"] for r in rows]
    sent_ats = [datetime.fromisoformat(r["sent_at"]) for r in rows]
    free = load_phrase_free(PHRASE_FREE)
    free_sent = [FREE_SENT_AT] * len(free)
    na = dateparser_missing(args.skip_dateparser)

    calls: dict[str, Call] = {"localmem": localmem_call(tz, args.ranges == "exclusive")}
    if not na:
        calls["dateparser"] = dateparser_call(scorer)
    dev_runs: dict[str, Run] = {}
    free_runs: dict[str, Run] = {}
    acc: dict[str, dict[str, dict[str, Any]]] = {}
    fps: dict[str, dict[str, float]] = {}
    rates: dict[str, float] = {}
    for name, call in calls.items():
        print(f"[{time.strftime('%H:%M:%S')}] {name}...", file=sys.stderr, flush=True)
        dev_runs[name] = run(name, call, texts, sent_ats, scorer, tz)
        free_runs[name] = run(name, call, free, free_sent, scorer, tz)
        acc[name] = accuracy(scorer, rows, dev_runs[name])
        fps[name] = false_positives(free_runs[name])
        rates[name] = dev_runs[name].rate()
    own = run("localmem", localmem_call(tz, args.ranges == "exclusive", own_labels=True), texts, sent_ats,
              scorer, tz)
    acc["localmem_own_labels"] = accuracy(scorer, rows, own)
    rates["localmem"], cpu_rate = best_rate(texts, sent_ats, tz, args.repeat)
    free_rate, free_cpu = best_rate(free, free_sent, tz, args.repeat)

    n_rel = acc["localmem"]["relative"]["n"]
    print(f"\nlocalmem {git_commit()} vs dateparser {dateparser_version()} on {args.data / 'dev.jsonl'}"
          f" ({len(rows)} rows, {n_rel} relative), tz {args.tz}")
    print(f"resolver: {resolver_build()}\n")
    print_accuracy(acc, na)
    for name, r in dev_runs.items():
        if r.errors:
            print(f"  {name} raised on {r.errors.total()} rows {dict(r.errors)}; first: {r.first_error}")
    print()
    print_false_positives(fps, na)
    print()
    print_speed(len(rows), (rates["localmem"], cpu_rate), rates.get("dateparser"), na, len(free),
                (free_rate, free_cpu))

    print_misses(rows, dev_runs["localmem"], scorer, args.show_misses)
    if args.fp:
        print_fp(free, free_runs["localmem"])
    print()
    print(json.dumps({"benchmark": "localmem.timephrases", "commit": git_commit(), "tz": args.tz,
                      "ranges": args.ranges, "data": os.fspath(args.data), "resolver": resolver_build(),
                      "accuracy": acc,
                      "false_positives": fps,
                      "messages_per_s": {k: round(v, 1) for k, v in rates.items()},
                      "cpu_messages_per_s": {"localmem": round(cpu_rate, 1)},
                      "phrase_free_messages_per_s": {"localmem": round(free_rate, 1)},
                      "phrase_free_cpu_messages_per_s": {"localmem": round(free_cpu, 1)}}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
