"""The replay and audit commands: ``run``, ``decision``, ``derive``, ``stale``, ``compare``, ``knew``.

Thin like the rest of the command line: parse, call one library function,
print. ``decision show ID --prompt`` writes the prompt's exact bytes to stdout
and nothing else, so ``> prompt.txt`` gets them byte for byte.
"""

from __future__ import annotations

import argparse
import ast
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ..core.revision import Revision
from ..errors import InvalidInputError, NotFoundError
from ..present import marks, memory_text
from ..replay.compare import Comparison
from ..replay.derive import Provenance
from ..replay.knew import KnowledgeDiff
from ..replay.receipts import Decision
from ..replay.runs import Run, View
from ..store import Store
from .common import Command, filter_arg, json_arg, print_revision, print_revisions, revision_lines

__all__ = ["add_commands", "evaluate", "print_knew", "print_diff"]

# -- printing ------------------------------------------------------------------------


def _marks(rev: Revision) -> str:
    flags = marks(rev)
    return f"  [{flags}]" if flags else ""


def _print_run(run: Run, as_json: bool) -> None:
    events = run.events()
    decisions = run.decisions()
    if as_json:
        print(json.dumps({"run_id": run.run_id, "user_id": run.user_id,
                          "started_at": run.started_at.isoformat(),
                          "known_at": events[-1].known_at.isoformat(),
                          "events": [e.to_dict() for e in events],
                          "decisions": [d.to_dict() for d in decisions]}, ensure_ascii=False, indent=2))
        return
    print(f"run {run.run_id} · user {run.user_id} · cutoff {events[-1].known_at.isoformat()}")
    for e in events:
        label = e.kind if e.step is None else f"{e.kind} {e.step!r}"
        print(f"  {e.position:>3}. {label:<28} known_at {e.known_at.isoformat()}"
              f" · recorded {e.recorded_at.isoformat()}")
    for d in decisions:
        print(f"  decision {d.decision_id} at step {d.step!r} · known_at {d.known_at.isoformat()}"
              f" · {len(d.retrieved)} revisions cited")


def _print_decision(store: Store, d: Decision, as_json: bool, available: bool) -> None:
    cited = store.cited(d.decision_id)
    avail = store.available_at(d.decision_id) if available else None
    if as_json:
        out = d.to_dict(with_bytes=True)
        out["cited"] = [r.to_dict() for r in cited]
        if avail is not None:
            out["available"] = [r.to_dict() for r in avail]
        print(json.dumps(out, ensure_ascii=False, indent=2))
        return
    print(f"decision {d.decision_id} · run {d.run_id} · step {d.step!r} · user {d.user_id}")
    print(f"  known_at {d.known_at.isoformat()} · valid_at {d.valid_at.isoformat()}"
          f" · recorded {d.recorded_at.isoformat()}")
    print(f"  prompt sha256 {d.prompt_sha256} ({len(d.prompt)} bytes)")
    if d.output_sha256 is not None:
        print(f"  output sha256 {d.output_sha256} ({len(d.output or b'')} bytes)")
    if d.meta is not None:
        print(f"  meta {json.dumps(d.meta, ensure_ascii=False)}")
    print(f"  cited ({len(cited)}):")
    for rev in cited:
        now = store.get(rev.memory_id)
        since = ""
        if rev.erased:
            since = "  [erased: content destroyed]"
        elif now is not None and now.rev_id != rev.rev_id:
            since = f"  [since: v{now.version} {now.op} → {memory_text(now)}]"
        print(f"    {rev.rev_id}  v{rev.version} {memory_text(rev)}{since}")
    if avail is not None:
        print(f"  available at its cutoff ({len(avail)}):")
        for rev in avail:
            print(f"    {rev.memory_id}  v{rev.version} {memory_text(rev)}{_marks(rev)}")


def _print_provenance(items: Sequence[Provenance], as_json: bool) -> None:
    if as_json:
        print(json.dumps([p.to_dict() for p in items], ensure_ascii=False, indent=2))
        return
    if not items:
        print("(nothing stale)")
    for p in items:
        print(f"{p.revision.memory_id}  {memory_text(p.revision)}  [stale]")
        for s in p.staleness:
            newer = f" · newer revision {s.newer_rev}" if s.newer_rev else ""
            by = f" · replaced by {s.replaced_by}" if s.replaced_by else ""
            print(f"    source {s.source_rev} ({s.memory_id}) {s.reason} at "
                  f"{s.changed_at.isoformat()}{newer}{by}")


def _print_comparison(c: Comparison, as_json: bool) -> None:
    if as_json:
        print(json.dumps(c.to_dict(), ensure_ascii=False, indent=2))
        return
    print(c.render())
    print(f"  {c.header()}{'' if c.agree else ' · the perspectives disagree'}")


def print_knew(snapshot_memories: Sequence[Revision], user: str, at: str) -> None:
    print(f"what the app knew about {user} at {at}: {len(snapshot_memories)} memories")
    kinds: dict[str, list[Revision]] = {}
    for rev in snapshot_memories:
        kinds.setdefault(rev.kind, []).append(rev)
    for kind in sorted(kinds):
        print(f"{kind} ({len(kinds[kind])})")
        for rev in kinds[kind]:
            print(f"  {rev.memory_id}  {memory_text(rev)}  · valid {rev.valid}{_marks(rev)}")


def print_diff(diff: KnowledgeDiff, as_json: bool) -> None:
    """What `knew --diff` prints (a device's, or the hub's: `hub knew --diff`)."""
    if as_json:
        print(json.dumps(diff.to_dict(), ensure_ascii=False, indent=2))
        return
    print(f"what the app learned about {diff.user_id} after {diff.since.isoformat()} "
          f"and by {diff.until.isoformat()}: {len(diff.entries)} changes")
    if not diff.entries:
        print("(nothing)")
    for e in diff.entries:
        if e.before is None or e.change in ("learned", "derived"):
            what = memory_text(e.revision)
        else:
            what = f"{memory_text(e.before)} → {memory_text(e.revision)}"
        print(f"  {e.change:<10} {e.memory_id}  {what}  (recorded {e.at.isoformat()})")


# -- the calculator of `compare --expr` ----------------------------------------------


_OPS: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b,
    ast.Mult: lambda a, b: a * b, ast.Div: lambda a, b: a / b,
}


def evaluate(expr: str, values: dict[str, Any]) -> Any:
    """Arithmetic (``+ - * /``, parentheses, numbers) over keys' values, e.g. ``opening - purchase - fee``.

    Raises:
        InvalidInputError: anything else in the expression.
        KeyError: a key with no current value (the caller reports it as unknown).
    """
    try:
        tree = ast.parse(expr, mode="eval")
    except SyntaxError as exc:
        raise InvalidInputError(f"--expr {expr!r:.80} is not arithmetic over keys: {exc.msg}") from exc
    except (RecursionError, MemoryError, ValueError):  # nested past the parser's depth; a NUL
        raise InvalidInputError(f"--expr {expr!r:.80} is not arithmetic over keys") from None

    def walk(node: ast.AST) -> Any:
        if isinstance(node, ast.Expression):
            return walk(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, int | float) \
                and not isinstance(node.value, bool):
            return node.value
        if isinstance(node, ast.Name):
            v = values[node.id]
            if isinstance(v, bool) or not isinstance(v, int | float):
                raise InvalidInputError(f"key {node.id!r} holds {v!r}, not a number")
            return v
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return -walk(node.operand)
        if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
            left, right = walk(node.left), walk(node.right)
            try:
                return _OPS[type(node.op)](left, right)
            except ZeroDivisionError:
                raise InvalidInputError(
                    f"--expr {expr!r:.80}: {ast.unparse(node)!r:.80} divides by zero") from None
        raise InvalidInputError(
            f"--expr {expr!r}: {ast.unparse(node)!r} is not allowed "
            "(use numbers, keys, + - * / and parentheses)")

    try:
        return walk(tree)
    except RecursionError:
        raise InvalidInputError(f"--expr {expr!r:.80} nests too deeply") from None


def _expr_question(expr: str) -> Callable[[View], Any]:
    evaluate(expr, _AnyNumber())  # refuse a malformed expression before any read

    def question(view: View) -> Any:
        values = {r.key: r.value for r in view.read() if r.key is not None}
        try:
            return evaluate(expr, values)
        except KeyError as exc:
            return f"(no {exc.args[0]} known)"
        except ZeroDivisionError:
            return "(division by zero)"

    return question


class _AnyNumber(dict[str, Any]):
    def __missing__(self, key: str) -> Any:
        return 1


# -- commands -------------------------------------------------------------------------


def _run(store: Store, args: argparse.Namespace) -> Run:
    return store.run(args.run_id)


def cmd_run_start(store: Store, args: argparse.Namespace) -> None:
    _print_run(store.run(args.run_id, user_id=args.user, known_at=args.known_at), args.json)


def cmd_run_show(store: Store, args: argparse.Namespace) -> None:
    _print_run(_run(store, args), args.json)


def cmd_run_list(store: Store, args: argparse.Namespace) -> None:
    ids = store.run_ids(args.user)
    if args.json:
        print(json.dumps(ids))
        return
    for run_id in ids:
        run = store.run(run_id)
        print(f"{run_id}  user {run.user_id}  cutoff {run.known_at.isoformat()}")
    if not ids:
        print("(no runs)")


def cmd_run_step(store: Store, args: argparse.Namespace) -> None:
    run = _run(store, args)
    run.step(args.name)
    _print_run(run, args.json)


def cmd_run_advance(store: Store, args: argparse.Namespace) -> None:
    run = _run(store, args)
    run.advance(step=args.step, to=args.to)
    _print_run(run, args.json)


def cmd_run_read(store: Store, args: argparse.Namespace) -> None:
    run = _run(store, args)
    print_revisions(run.read(valid_at=args.valid_at, current_only=not args.history,
                              include_expired=args.include_expired,
                              include_retracted=args.include_retracted, kind=args.kind, key=args.key,
                              filters=filter_arg(args.filter)), args.json)


def cmd_run_search(store: Store, args: argparse.Namespace) -> None:
    hits = _run(store, args).search(args.query, valid_at=args.valid_at, limit=args.limit,
                                    log=not args.no_log)
    if args.json:
        print(json.dumps([h.to_dict() for h in hits], ensure_ascii=False, indent=2))
        return
    if not hits:
        print("(no memories)")
    for h in hits:
        for line in revision_lines(h.revision):
            print(line)


def _read_bytes(path: str) -> bytes:
    if path == "-":
        return sys.stdin.buffer.read()
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise InvalidInputError(f"cannot read {path!r}: {exc.strerror}") from exc


def cmd_run_decide(store: Store, args: argparse.Namespace) -> None:
    run = _run(store, args)
    prompt: bytes | str = _read_bytes(args.prompt_file) if args.prompt_file else args.prompt
    output = _read_bytes(args.output_file) if args.output_file else None
    meta = json_arg(args.meta, "--meta", 'an object such as {"model": "m1"}')
    d = run.record_decision(args.step, retrieved=args.retrieved or (), prompt=prompt, output=output,
                            meta=meta, valid_at=args.valid_at)
    _print_decision(store, d, args.json, False)


def cmd_decision_show(store: Store, args: argparse.Namespace) -> None:
    d = store.decision(args.decision_id)
    if args.prompt or args.output:
        data = d.prompt if args.prompt else d.output
        if data is None:
            raise NotFoundError(f"decision {d.decision_id!r} has no recorded output")
        sys.stdout.flush()
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
        return
    _print_decision(store, d, args.json, args.available)


def cmd_decision_list(store: Store, args: argparse.Namespace) -> None:
    citing = store.resolve_id(args.citing) if args.citing else None
    found = store.decisions(run_id=args.run, citing=citing)
    if args.json:
        print(json.dumps([d.to_dict() for d in found], ensure_ascii=False, indent=2))
        return
    if not found:
        print("(no decisions)")
    for d in found:
        print(f"{d.decision_id}  run {d.run_id} · step {d.step!r} · known_at {d.known_at.isoformat()}")


def cmd_derive(store: Store, args: argparse.Namespace) -> None:
    rev = store.derive(args.text, from_=args.sources, user_id=args.user, kind=args.kind,
                       value=json_arg(args.value, "--value"), reason=args.reason,
                       supersedes=store.resolve_id(args.supersedes) if args.supersedes else None)
    print_revision(rev, args)


def cmd_stale(store: Store, args: argparse.Namespace) -> None:
    _print_provenance(store.stale(args.user, known_at=args.known_at), args.json)


def cmd_compare(store: Store, args: argparse.Namespace) -> None:
    given = [x for x in (args.id, args.query, args.expr) if x is not None]
    if len(given) != 1:
        raise InvalidInputError("compare needs exactly one question: a memory ID, --query Q or --expr E")
    question: str | Callable[[View], Any]
    name = None
    if args.id is not None:
        question = store.resolve_id(args.id)
    elif args.query is not None:
        question = args.query
    else:
        question, name = _expr_question(args.expr), args.expr
    if not args.known_at:
        raise InvalidInputError("compare needs at least one --known-at")
    c = store.compare(question, known_at=args.known_at, valid_at=args.valid_at, user_id=args.user,
                      name=name)
    _print_comparison(c, args.json)


def cmd_knew(store: Store, args: argparse.Namespace) -> None:
    if args.diff is not None:
        print_diff(store.knowledge_diff(args.user, since=args.at, until=args.diff), args.json)
        return
    snap = store.snapshot(args.user, known_at=args.at)
    if args.json:
        print(json.dumps({"user_id": snap.user_id, "known_at": snap.known_at.isoformat(),
                          "memories": [r.to_dict() for r in snap.memories]}, ensure_ascii=False, indent=2))
        return
    print_knew(snap.memories, snap.user_id, snap.known_at.isoformat())


# -- the parser ----------------------------------------------------------------------


def add_commands(command: Command, common: argparse.ArgumentParser) -> None:
    """Add the replay commands through the parser's ``command`` helper (see :mod:`.app`)."""
    p = command("run", "runs pinned at a knowledge cutoff: start, step, advance, read, decide")
    actions = p.add_subparsers(dest="action", required=True, metavar="ACTION")

    def action(name: str, help_: str, mode: str = "read") -> argparse.ArgumentParser:
        a = actions.add_parser(name, help=help_, description=help_, parents=[common])
        a.set_defaults(mode=mode)
        if name != "list":
            a.add_argument("run_id", help="the run's id (a name you choose at start)")
        return a

    a = action("start", "start a run pinned at a cutoff (default: now)", "create")
    a.add_argument("--user", required=True, help="whose memories the run reads (a user id)")
    a.add_argument("--known-at", metavar="T", help="the cutoff (default: the store's recorded now)")
    a.set_defaults(func=cmd_run_start)
    action("show", "a run's record: its start, steps, advances and decisions").set_defaults(func=cmd_run_show)
    a = action("list", "every run")
    a.add_argument("--user", help="only this user's runs")
    a.set_defaults(func=cmd_run_list)
    a = action("step", "mark a step (the cutoff stays)", "write")
    a.add_argument("name", help="the step's name")
    a.set_defaults(func=cmd_run_step)
    a = action("advance", "move the run's cutoff forwards at a named step", "write")
    a.add_argument("--step", required=True, help="the step's name")
    a.add_argument("--to", metavar="T", help="the new cutoff (default: the store's recorded now)")
    a.set_defaults(func=cmd_run_advance)
    a = action("read", "the run's user's memories as known at its cutoff")
    a.add_argument("--valid-at", metavar="T", help="what was true at this time (default: the cutoff)")
    a.add_argument("--history", action="store_true", help="every valid interval, not just current ones")
    a.add_argument("--include-expired", action="store_true", help="keep expired memories (flagged)")
    a.add_argument("--include-retracted", action="store_true", help="keep retracted memories (flagged)")
    a.add_argument("--kind", help="only memories of this kind")
    a.add_argument("--key", help="only memories of this key")
    a.add_argument("--filter", metavar="JSON", help="a filter tree (as for read)")
    a.set_defaults(func=cmd_run_read)
    a = action("search", "search as known at the run's cutoff (hits logged under the run)", "write")
    a.add_argument("query", help="the question, in words")
    a.add_argument("--valid-at", metavar="T", help="what was true at this time (default: the cutoff)")
    a.add_argument("--limit", type=int, default=10, metavar="N", help="at most N hits (default 10)")
    a.add_argument("--no-log", action="store_true", help="do not append the hits to the usage log")
    a.set_defaults(func=cmd_run_search)
    a = action("decide", "record a decision receipt with its exact prompt bytes", "write")
    a.add_argument("--step", required=True, help="the step the decision was made at")
    g = a.add_mutually_exclusive_group(required=True)
    g.add_argument("--prompt", help="the prompt text (stored as UTF-8)")
    g.add_argument("--prompt-file", help="a file with the exact prompt bytes (- for stdin)")
    a.add_argument("--output-file", help="a file with the model's output bytes")
    a.add_argument("--retrieved", action="append", metavar="REV_ID", help="a revision used (repeatable)")
    a.add_argument("--meta", metavar="JSON", help="anything else to keep with the receipt (a JSON value)")
    a.add_argument("--valid-at", metavar="T", help="the valid time the decision read at")
    a.set_defaults(func=cmd_run_decide)

    p = command("decision", "decision receipts: show one, list them")
    actions = p.add_subparsers(dest="action", required=True, metavar="ACTION")
    a = actions.add_parser("show", help="a receipt, its cited revisions, or its exact prompt bytes",
                           parents=[common])
    a.add_argument("decision_id", help="the receipt's id")
    g = a.add_mutually_exclusive_group()
    g.add_argument("--prompt", action="store_true", help="write the exact prompt bytes to stdout")
    g.add_argument("--output", action="store_true", help="write the exact output bytes to stdout")
    g.add_argument("--available", action="store_true", help="also list the facts available at its cutoff")
    a.set_defaults(func=cmd_decision_show)
    a = actions.add_parser("list", help="receipts of a run, or citing a memory", parents=[common])
    a.add_argument("--run", help="only this run's receipts")
    a.add_argument("--citing", metavar="MEMORY_ID", help="only receipts that used this memory")
    a.set_defaults(func=cmd_decision_list)

    p = command("derive", "record a memory computed from revisions (a summary), with provenance")
    p.set_defaults(mode="write")
    p.add_argument("text", help="what the derived memory says")
    p.add_argument("--from", dest="sources", action="append", required=True, metavar="REV_ID",
                   help="a revision it was computed from (repeatable)")
    p.add_argument("--user", help="whom it is about (default: the sources' user)")
    p.add_argument("--kind", default="summary", help="a free label (default: summary)")
    p.add_argument("--value", metavar="JSON", help="a JSON value")
    p.add_argument("--reason", help="why this was recorded (kept in the history)")
    p.add_argument("--supersedes", metavar="ID", help="an earlier derived memory this one replaces")
    p.add_argument("--ids", action="store_true", help="print only the memory id")
    p.set_defaults(func=cmd_derive)

    p = command("stale", "derived memories whose sources were corrected, superseded, retracted or erased")
    p.add_argument("--user", required=True, help="whose derived memories (a user id)")
    p.add_argument("--known-at", metavar="T", help="as known at this time (default: now)")
    p.set_defaults(func=cmd_stale)

    p = command("compare", "one question under several knowledge cutoffs, side by side")
    p.add_argument("id", nargs="?", help="a memory id (or prefix)")
    p.add_argument("--query", help="a search query")
    p.add_argument("--expr", help="arithmetic over keys' values, e.g. 'opening - purchase - fee'")
    p.add_argument("--user", help="whose memories (needed with --query and --expr)")
    p.add_argument("--known-at", action="append", required=True, metavar="T",
                   help="a cutoff (repeat for each)")
    p.add_argument("--valid-at", metavar="T",
                   help="the valid time of every perspective (default: each cutoff)")
    p.set_defaults(func=cmd_compare)

    p = command("knew", "what the app knew about a user at a time, or what it learned between two")
    p.add_argument("--user", required=True, help="whose memories (a user id)")
    p.add_argument("--at", required=True, metavar="T", help="the time (a date is the start of that day)")
    p.add_argument("--diff", metavar="DATE2", help="list what was learned, corrected, retracted... by then")
    p.set_defaults(func=cmd_knew)
