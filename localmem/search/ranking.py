"""Search: full-text relevance (FTS5 BM25) with temporal reranking, read as of a time.

The rules:

- **As of known_at.** Candidates are the user's memories as known at known_at
  (each memory's newest revision recorded by then), with the same hiding as a
  read: current-only by default, expired and retracted ones dropped, erased
  ones never. A search with a fixed ``as_of`` returns the same hits whatever
  the clock says and whatever is written later.
- **Text relevance.** The query's words (outside its time phrases, and without
  a few function words) are each quoted into an FTS5 phrase, so FTS5 syntax in
  user text ("NEAR", quotes, ``*``, ``-``) is only ever words. FTS5 finds which
  memories hold each word; the BM25 score is computed here, from statistics read
  as of known_at (how many memories were searched, how many held the word, how
  long each is), because FTS5's own statistics count every revision ever
  written. Scores are scaled to [0, 1] within the candidates (the best is 1).
- **Temporal reranking.** Time phrases in the query are resolved against
  as_of in the user's zone. Only phrases about the past or present count: one
  that starts after as_of ("suggest a workout for *next week*", "dinner *this
  weekend*" asked on a Wednesday) is the subject of a request and is ignored. A
  memory's fit is how much of its valid time lies in the phrase's window (1 when
  inside, falling with distance when outside), weighed by its precision; a
  memory whose valid time was only assumed is placed on its observed_at day.
  The score is ``text + fit`` (plus usage, below): time ranks up, never filters out. Memories
  that sit in the window join the candidates even without a matching word
  ("what did I feel on 30 July?" finds "tempo run felt easy" said that day),
  scored by fit alone: those with a bounded valid time or placed by their
  observed_at, not open-ended facts that merely overlap everything later.
- **Current knowledge.** ``current_only`` keeps memories begun by valid_at and
  not superseded, expired or retracted: a search must still find an event that
  ended ("the 10K last weekend", "the knee injury in July"), which a read's
  "valid at valid_at" would hide, while a fact that was replaced drops out.
- **Usage.** Every search (unless ``log=False``) appends which memories it
  returned, when (the store's recorded time) and for which run. Ranking adds a
  base-level activation of that usage, ACT-R style: ``ln sum t_j ** -0.5`` over
  the memory's creation and each use recorded before known_at, ages in days (at
  least an hour), squashed to (0, 1). A memory retrieved often stays reachable,
  one never retrieved drifts down as it ages, never out; a strong word match
  still brings it back. Read as of known_at, the usage a replay sees is exactly
  what had happened by then (a replay's own log lands at the time it runs).
- **Filters** narrow the candidates (see :mod:`localmem.filters`).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

import apsw

from ..core.embedding import Embedder, nearest
from ..core.revision import Revision, revision_from_row
from ..errors import InvalidInputError
from ..time.clock import from_micros, to_micros
from ..time.resolver import TimeMention, find_times
from . import sql as queries
from .sql import Scope

__all__ = [
    "USAGE_WEIGHT",
    "activation",
    "squash",
    "Hit",
    "Scope",
    "run_search",
    "TIME_ONLY_FLOOR",
    "bm25",
    "fuse",
    "query_terms",
    "query_window",
    "time_fit",
    "windows_of",
    "word_count",
]

#: A query that is only a time phrase keeps the memories whose fit reaches this.
TIME_ONLY_FLOOR = 0.05
#: How much usage counts next to text (0..1) and time (0..1).
USAGE_WEIGHT = 0.5
#: ACT-R's decay: how fast the weight of one use fades with its age.
DECAY = 0.5
_DAY_US = 86_400_000_000

#: Words too common to say what a memory is about; a query of only these finds nothing by text.
STOPWORDS = frozenset(
    "a an and are as at be but by did do does for from had has have how i i'm im in is it its me my of on "
    "or our so that the their them then there these they this to was we were what when where which who "
    "why will with you your".split()
)
_WORD = re.compile(r"\w+", re.UNICODE)
#: How much a memory's time counts, by the precision of its valid time.
PRECISION_WEIGHT = {
    "instant": 1.0,
    "minute": 1.0,
    "hour": 1.0,
    "part_of_day": 1.0,
    "day": 1.0,
    "weekend": 0.9,
    "week": 0.9,
    "month": 0.7,
    "season": 0.6,
    "year": 0.5,
    "decade": 0.4,
    "unknown": 0.3,
}


@dataclass(frozen=True, slots=True)
class Hit:
    """One search result, with the parts of its score so a person can see why it ranked there.

    ``text`` is the BM25 relevance scaled to [0, 1] among the candidates (0 for
    a memory found only by its time); with an embedder it is the reciprocal-rank
    fusion of the BM25 and the similarity rankings, scaled the same way. ``time``
    is the temporal fit in [0, 1] (None when the query has no usable time
    phrase), ``usage`` the squashed activation of its past retrievals in (0, 1);
    ``score`` = text + time + 0.5 * usage.
    """

    revision: Revision
    score: float
    text: float
    time: float | None
    bm25: float | None  # the raw as-of BM25 (higher is better); None when its words did not match
    usage: float = 0.0
    semantic: float | None = None  # cosine similarity to the query, with an embedder; None otherwise

    # The score parts by names that cannot be taken for the memory's text or time
    # (``hit.text`` is a number; the words are ``hit.revision.text``).
    @property
    def text_score(self) -> float:
        """The text relevance part of the score (the same as ``text``)."""
        return self.text

    @property
    def time_score(self) -> float | None:
        """The temporal fit part of the score (the same as ``time``; None without a time phrase)."""
        return self.time

    @property
    def usage_score(self) -> float:
        """The usage activation part of the score (the same as ``usage``)."""
        return self.usage

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: ``score`` and its parts (``text_score``, ``time_score``, ``usage_score``,
        ``bm25``, ``semantic``), and the memory as ``revision`` (:meth:`Revision.to_dict`)."""
        return {
            "score": self.score, "text_score": self.text, "time_score": self.time,
            "usage_score": self.usage, "bm25": self.bm25, "semantic": self.semantic,
            "revision": self.revision.to_dict(),
        }


@dataclass(frozen=True, slots=True)
class _Candidate:
    """What ranking needs of a memory found by its words; a full Revision is built only for hits."""

    seq: int
    memory_id: str
    text: str | None
    valid_from: int  # UTC microseconds, as stored
    valid_to: int | None
    precision: str
    valid_source: str
    observed_at: int
    tz: str


def _candidate(row: tuple[Any, ...]) -> _Candidate:
    return _Candidate(*row)


def query_terms(text: str) -> list[str]:
    """The words of ``text`` worth searching for, each as a safe FTS5 phrase ("knee", quoted)."""
    kept = [w for w in _WORD.findall(text.lower()) if w not in STOPWORDS]
    return ['"' + w.replace('"', '""') + '"' for w in dict.fromkeys(kept)]


def bm25(
    matches: dict[str, set[str]], lengths: dict[str, int], n: int, df: dict[str, int] | None = None
) -> dict[str, float]:
    """BM25 with binary term frequency, from statistics read as of the search's time.

    ``matches`` maps each term to the memories holding it, ``lengths`` gives each
    candidate's length in words, ``n`` the number of documents the statistics count
    and ``df`` how many of them hold each term (default: the matches themselves).
    """
    k1, b = 1.2, 0.75
    avgdl = sum(lengths.values()) / len(lengths) if lengths else 1.0
    scores: dict[str, float] = {}
    for term, ids in matches.items():
        held = len(ids) if df is None else df[term]
        idf = math.log(1 + (max(n, held) - held + 0.5) / (held + 0.5))
        for memory_id in ids:
            norm = 1 - b + b * lengths[memory_id] / max(avgdl, 1.0)
            scores[memory_id] = scores.get(memory_id, 0.0) + idf * (k1 + 1) / (1 + k1 * norm)
    return scores


def word_count(text: str | None) -> int:
    """A memory's length in words, for BM25's length normalisation."""
    return len(_WORD.findall(text or "")) or 1


def query_window(query: str, at: datetime, tz: ZoneInfo) -> tuple[list[TimeMention], str]:
    """The query's time phrases that refer to the past or present, and the query without them."""
    used, rest, pos = [], [], 0
    for m in find_times(query, sent_at=at, tz=tz):
        if m.start is not None and m.start > at:
            continue  # about the future: the subject of a request, not a reference
        used.append(m)
        rest.append(query[pos : m.span[0]])
        pos = m.span[1]
    rest.append(query[pos:])
    return used, " ".join(rest)


def _memory_span(c: _Candidate, known: int) -> tuple[int, int]:
    """Where a memory sits in time (µs): its valid interval, or its observed_at day when assumed."""
    if c.valid_source == "assumed":
        local = from_micros(c.observed_at).astimezone(ZoneInfo(c.tz))
        start = to_micros(local.replace(hour=0, minute=0, second=0, microsecond=0))
        return start, start + _DAY_US
    end = c.valid_to if c.valid_to is not None else max(known, c.valid_from + _DAY_US)
    return c.valid_from, end


def time_fit(c: _Candidate, windows: list[tuple[int, int]], known: int) -> float:
    """How well a memory's time fits the query's windows (µs), in [0, 1] (the best window counts).

    Inside: the share of the memory in the window, times how specific it is (a fact
    true for months fits "last week" less than an event of that week). Outside: it
    falls with the distance from the memory's middle to the window, e^-1 at a sixth
    of the window's length (at least an hour), so the day before "last week" is not
    as good as a day in it.
    """
    start, end = _memory_span(c, known)
    length = max(end - start, 1)
    middle = start + (end - start) // 2
    best = 0.0
    for lo, hi in windows:
        width = max(hi - lo, 1)
        overlap = min(end, hi) - max(start, lo)
        if lo <= middle < hi or (overlap > 0 and length > width):
            fit = (overlap / min(length, width)) * min(1.0, width / length)
        else:
            gap = min(abs(middle - lo), abs(middle - hi))
            fit = math.exp(-gap / max(width / 6, 3_600_000_000))
        best = max(best, min(fit, 1.0))
    precision = c.precision if c.valid_source != "assumed" else "day"
    return best * PRECISION_WEIGHT.get(precision, 0.3)


def windows_of(mentions: list[TimeMention], at: int) -> list[tuple[int, int]]:
    """The closed windows (µs) of the used phrases ("since X" runs to ``at``, "until X" from 1970)."""
    out = []
    for m in mentions:
        lo = 0 if m.start is None else to_micros(m.start)
        hi = at if m.end is None else to_micros(m.end)
        if hi > lo:
            out.append((lo, hi))
    return out


#: How many matching revisions each term contributes, newest first (and, for a query with a
#: time phrase, as many recorded from the window's start on): the work of a search is bounded
#: whatever the store's size. A common word finds its newest matches; a rare one all of them.
CANDIDATES_PER_TERM = 100
#: BM25's statistics (how many revisions, how many hold each word) are read from the user's
#: newest this-many revisions as of known_at: exact for a store of that size, a recent
#: sample of a larger one, and either way fixed once known_at is.
STATS_WINDOW = 5_000
#: Memories found by time alone: this many on each side of a window's middle.
CANDIDATES_BY_TIME = 50
#: With an embedder: the memories nearest the query's meaning (at least five per hit asked for).
CANDIDATES_BY_MEANING = 100
#: Reciprocal-rank fusion's constant (the usual 60): how little a rank's first places count
#: over its next ones.
RRF_K = 60


def _owner(user_id: str) -> str:
    return f'owner : "u{user_id.encode("utf-8").hex()}"'


def _top_seq(conn: apsw.Connection, known: int) -> int | None:
    row = conn.execute(queries.TOP_SEQ, (known,)).fetchone()
    return None if row is None else int(row[0])


def _by_words(
    conn: apsw.Connection,
    terms: list[str],
    scope: Scope,
    top: int,
    windows: list[tuple[int, int]],
    limit: int,
) -> dict[str, tuple[_Candidate, float]]:
    """The memories holding the terms, each with its as-of BM25 score (see CANDIDATES_PER_TERM)."""
    cap = max(CANDIDATES_PER_TERM, 2 * limit)
    owner = _owner(scope.user_id)
    found: dict[str, _Candidate] = {}
    matches: dict[str, set[str]] = {t: set() for t in terms}

    def gather(fts: str, holds: list[str], bottom: int = 0, newest: bool = True) -> None:
        q = queries.search_as_of(
            scope, f"{owner} AND text : ({fts})", top=top, bottom=bottom, newest=newest, cap=cap
        )
        for row in conn.execute(q.sql, q.params):
            c = _candidate(row)
            found[c.memory_id] = c
            for term in holds:
                matches[term].add(c.memory_id)

    starts = [conn.execute(queries.FIRST_SEQ_FROM, (lo,)).fetchone() for lo, _ in windows]
    for term in terms:
        gather(term, [term])
        for start in starts:  # what was said about the window is recorded during or after it
            if start is not None and start[0] <= top:
                gather(term, [term], bottom=start[0], newest=False)
    if len(terms) > 1:  # memories holding every word, however common each is alone
        gather(" AND ".join(terms), terms)
    if not found:
        return {}
    nth = conn.execute(queries.FTS_NTH_NEWEST, (owner, top, STATS_WINDOW - 1)).fetchone()
    if nth is None:  # fewer than STATS_WINDOW: count them all
        bottom, n = 0, int(conn.execute(queries.FTS_COUNT, (owner, 0, top)).get)
    else:
        bottom, n = int(nth[0]), STATS_WINDOW
    held = {t: conn.execute(queries.FTS_COUNT, (f"{owner} AND text : {t}", bottom, top)).get for t in terms}
    df = {t: int(v) for t, v in held.items()}
    scores = bm25(matches, {k: word_count(c.text) for k, c in found.items()}, n, df)
    return {k: (c, scores[k]) for k, c in found.items() if k in scores}


def _by_time(
    conn: apsw.Connection, windows: list[tuple[int, int]], scope: Scope
) -> list[_Candidate]:
    """Memories placed in the query's windows, whatever their words: those starting nearest each
    window's middle, at most four window lengths (and four days) before it."""
    out: list[_Candidate] = []
    for lo, hi in windows:
        reach = 4 * max(hi - lo, _DAY_US)
        q = queries.near_in_time(
            scope, mid=lo + (hi - lo) // 2, lo=lo, hi=hi, reach=reach, day=_DAY_US, cap=CANDIDATES_BY_TIME
        )
        out.extend(_candidate(row) for row in conn.execute(q.sql, q.params))
    return out


def _by_meaning(
    conn: apsw.Connection, embedder: Embedder, text: str, scope: Scope, limit: int
) -> dict[str, tuple[_Candidate, float]]:
    """The memories in scope nearest the query's meaning, each with its cosine similarity.

    Only those more similar than the embedder's ``min_similarity`` (if it has one; else 0)
    count: the nearest of unrelated memories is still unrelated.
    """
    k = max(CANDIDATES_BY_MEANING, 5 * limit)
    floor = float(getattr(embedder, "min_similarity", 0.0))
    near = [
        (seq, memory_id, distance)
        for seq, memory_id, distance in nearest(
            conn, embedder, user_id=scope.user_id, known=scope.known, query=text, k=k
        )
        if 1.0 - distance > floor
    ]
    if not near:
        return {}
    q = queries.in_scope(scope, [seq for seq, _, _ in near])
    kept = {c.seq: c for c in map(_candidate, conn.execute(q.sql, q.params))}
    return {memory_id: (kept[seq], 1.0 - distance) for seq, memory_id, distance in near if seq in kept}


def fuse(rankings: list[dict[str, float]]) -> dict[str, float]:
    """Reciprocal-rank fusion: each ranking (higher is better; ties by id) gives a memory
    1 / (RRF_K + its rank); the sums are scaled so the best memory has 1."""
    fused: dict[str, float] = {}
    for scores in rankings:
        for rank, memory_id in enumerate(sorted(scores, key=lambda m: (-scores[m], m)), 1):
            fused[memory_id] = fused.get(memory_id, 0.0) + 1 / (RRF_K + rank)
    best = max(fused.values(), default=1.0)
    return {memory_id: v / best for memory_id, v in fused.items()}


def run_search(
    conn: apsw.Connection,
    query: str,
    scope: Scope,
    tz: ZoneInfo,
    limit: int,
    embedder: Embedder | None = None,
) -> list[Hit]:
    """Search ``scope`` for ``query`` (the rules are the module docstring's); best first."""
    at = from_micros(scope.known)
    mentions, rest = query_window(query, at, tz)
    windows = windows_of(mentions, scope.known)
    terms = query_terms(rest)
    meaning = rest.strip() if embedder is not None and _WORD.search(rest) else None
    if not terms and not windows and meaning is None:
        raise InvalidInputError(f"query={query!r:.80} has no words to search for")
    newest = _top_seq(conn, scope.known)
    if newest is None:
        return []
    items: dict[str, _Candidate] = {}
    bm25s: dict[str, float] = {}
    for memory_id, (item, relevance) in _by_words(conn, terms, scope, newest, windows, limit).items():
        items[memory_id], bm25s[memory_id] = item, relevance
    similar: dict[str, float] = {}
    if embedder is not None and meaning is not None:
        for memory_id, (item, similarity) in _by_meaning(conn, embedder, meaning, scope, limit).items():
            items.setdefault(memory_id, item)
            similar[memory_id] = similarity
    if windows:
        for item in _by_time(conn, windows, scope):
            items.setdefault(item.memory_id, item)
    if embedder is None:
        best = max(bm25s.values(), default=0.0)
        texts = {m: (bm / best if best > 0 else 1.0) for m, bm in bm25s.items()}
    else:
        texts = fuse([bm25s, similar])
    ranked: list[tuple[_Candidate, float, float, float | None, float | None, float | None]] = []
    for memory_id, item in items.items():
        text = texts.get(memory_id, 0.0)
        fit = time_fit(item, windows, scope.known) if windows else None
        if memory_id not in texts and (fit or 0.0) < TIME_ONLY_FLOOR:
            continue  # found only by time, and not near it after all
        sim = similar.get(memory_id)
        ranked.append((item, text + (fit or 0.0), text, fit, bm25s.get(memory_id), sim))
    # Usage adds at most USAGE_WEIGHT: a candidate that cannot reach the limit-th best base
    # score even with it is dropped before its usage is read.
    if len(ranked) > limit:
        floor = sorted((r[1] for r in ranked), reverse=True)[limit - 1]
        ranked = [r for r in ranked if r[1] + USAGE_WEIGHT >= floor]
    uses = _usage(conn, [r[0].memory_id for r in ranked], scope.known)
    final = []
    for item, score, text, fit, bm, sim in ranked:
        u = squash(activation(*uses[item.memory_id], scope.known))
        final.append((score + USAGE_WEIGHT * u, text, item.memory_id, item, fit, bm, u, sim))
    final.sort(key=lambda f: (-f[0], -f[1], f[2]))
    top = final[:limit]
    light = [f[3].seq for f in top]
    full = {}
    if light:
        q = queries.by_seq(light)
        full = {
            rev.memory_id: rev
            for rev in (revision_from_row(row, scope.valid) for row in conn.execute(q.sql, q.params))
        }
    return [
        Hit(full[item.memory_id], score, text, fit, bm, u, sim)
        for score, text, _, item, fit, bm, u, sim in top
    ]


def _usage(conn: apsw.Connection, memory_ids: list[str], known: int) -> dict[str, tuple[int, list[int]]]:
    """Per memory: when it was created and when it was retrieved before ``known``.

    Strictly before: a search records its own hits at its own time, so a replay as of that
    very instant ranks as the search did.
    """
    out: dict[str, tuple[int, list[int]]] = {}
    for start in range(0, len(memory_ids), 500):
        chunk = memory_ids[start : start + 500]
        marks = ", ".join("?" * len(chunk))
        for memory_id, created in conn.execute(
            f"SELECT memory_id, created_at FROM memories WHERE memory_id IN ({marks})", chunk
        ):
            out[memory_id] = (created, [])
        for memory_id, used_at in conn.execute(
            f"SELECT memory_id, used_at FROM usage WHERE memory_id IN ({marks}) AND used_at < ?",
            (*chunk, known),
        ):
            out[memory_id][1].append(used_at)
    return out


def activation(created: int, uses: list[int], known: int) -> float:
    """ACT-R base-level activation: ln of the summed, decayed weight of the creation and each use."""
    total = 0.0
    for at in (created, *uses):
        age_days = max((known - at) / _DAY_US, 1 / 24)
        total += age_days**-DECAY
    return math.log(total)


def squash(a: float) -> float:
    """An activation as a usage score in (0, 1)."""
    return 1 / (1 + math.exp(-a))
