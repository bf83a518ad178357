"""Search: full-text relevance (FTS5 BM25) with temporal reranking, read as of a time.

The rules:

- **As of known_at.** Candidates are the user's memories as known at known_at
  (each memory's newest revision recorded by then), with the same hiding as a
  read: current-only by default, expired and retracted ones dropped, erased
  ones never. A search with a fixed ``as_of`` returns the same hits whatever
  the clock says and whatever is written later.
- **Text relevance: BM25 by FTS5's formula, lighter on length.** The query's content
  words (outside its time phrases, without stop words and single letters; see
  :mod:`.words`) each become a term: the word and, if irregular, the other forms of its
  lemma ("ran" → run OR ran), each quoted into an FTS5 phrase, so FTS5 syntax in user
  text ("NEAR", quotes, ``*``, ``-``) is only ever words. FTS5 finds the memories holding
  each term; the index's own tokenizer, run on each candidate's text, says how often and
  how long (in tokens: of the message as said, when the stored text rewrote its time
  phrases in dates, for the dates are not words anyone said and would make it look less
  focused than it was); the BM25
  score (FTS5's own formula: k1 1.2, ln((N - df + 0.5) / (df + 0.5)) floored at 1e-6, but
  b 0.3 for FTS5's 0.75, as :data:`B` says why) is computed here, from statistics read as
  of known_at, because FTS5's own count every revision ever written. Scores are scaled to
  [0, 1] within the candidates (the best is 1). With no time phrase the order is this text
  score plus usage, nothing else.
- **Time, among the memories holding the words.** The query's time phrases are read as
  :mod:`.when` says (calendar windows count fully, relative ones reorder the relevant,
  anchored ones are read against their anchor, vague recency leans, "When did ...?"
  prefers dated memories) and add ``time`` to the score. A memory with no content-word
  match enters the hits only when the query has no content words at all ("what did I do
  last weekend?"): then the memories placed in its windows are the candidates (those with
  a bounded valid time or placed by their observed_at, not open-ended facts that merely
  overlap everything later), scored by fit alone.
- **Ties** are broken by content-stable keys: the latest said first, then the text, then
  the arrival order — never the random ids, so two stores holding the same messages rank
  alike.
- **Current knowledge.** ``current_only`` keeps memories begun by valid_at and
  not superseded, expired or retracted: a search must still find an event that
  ended ("the 10K last weekend", "the knee injury in July"), which a read's
  "valid at valid_at" would hide, while a fact that was replaced drops out.
- **Usage.** Every search (unless ``log=False``) appends which memories it
  returned, when (the store's recorded time) and for which run. Ranking adds a
  base-level activation of that usage, ACT-R style: ``ln sum w_j t_j ** -0.5`` over
  each use recorded before known_at (w 1) and the memory's creation (w 0.05, see
  :data:`CREATION_WEIGHT`), ages in days (at least an hour), squashed to (0, 1). A
  memory retrieved often stays reachable, one never retrieved drifts down as it ages
  (a little: being new is not being relevant), never out; a strong word match still
  brings it back. Read as of known_at, the usage a replay sees is exactly
  what had happened by then (a replay's own log lands at the time it runs).
- **Filters** narrow the candidates (see :mod:`localmem.filters`).
"""

from __future__ import annotations

import functools
import heapq
import json
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple, cast
from zoneinfo import ZoneInfo

import apsw

from ..core.embedding import Embedder, nearest
from ..core.revision import Revision, revision_from_row
from ..errors import InvalidInputError
from ..time.clock import from_micros
from . import sql as queries
from .counts import counts_for
from .sql import Scope
from .when import read_query, time_fitter, time_score, when_bonus
from .words import content_words, forms, fts_phrase

__all__ = [
    "USAGE_WEIGHT",
    "activation",
    "squash",
    "CREATION_WEIGHT",
    "Hit",
    "Scope",
    "run_search",
    "TIME_ONLY_FLOOR",
    "bm25",
    "K1",
    "B",
    "fuse",
    "query_terms",
]

#: A query that is only a time phrase keeps the memories whose fit reaches this.
TIME_ONLY_FLOOR = 0.05
#: How much usage counts next to text (0..1) and time (0..1).
USAGE_WEIGHT = 0.5
#: ACT-R's decay: how fast the weight of one use fades with its age.
DECAY = 0.5
#: What a memory's creation weighs in its activation next to one retrieval (1). As a full use,
#: creation made usage a recency prior on every query: a memory said an hour ago gained up
#: to 0.39 over one said a year ago that nobody had retrieved either, enough to put a newer
#: memory holding one of the words over an older one holding them all. Ingesting LoCoMo's
#: development half with each turn recorded when it was said (as a live store is), recall@10
#: overall was 0.627 with creation as a full use, 0.654 at this weight, 0.654 without
#: usage; multi-hop 0.298, 0.348, 0.350. Unused memories still drift down, a tenth as far.
CREATION_WEIGHT = 0.05
_DAY_US = 86_400_000_000

_WORD = re.compile(r"\w+", re.UNICODE)


@dataclass(frozen=True, slots=True)
class Hit:
    """One search result, with the parts of its score so a person can see why it ranked there.

    ``text`` is the BM25 relevance scaled to [0, 1] among the candidates (0 for
    a memory found only by its time); with an embedder it is the reciprocal-rank
    fusion of the BM25 and the similarity rankings, scaled the same way. ``time``
    is what time adds (see :mod:`localmem.search.when`: the windows' fit, plus the
    "When did" bonus; None when the query has no usable time phrase and does not
    ask when), ``usage`` the squashed activation of its past retrievals in (0, 1);
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


class _Candidate(NamedTuple):
    """What ranking needs of a memory found by its words; a full Revision is built only for hits.
    A tuple: a search makes hundreds, and a tuple is made straight from its row."""

    seq: int
    memory_id: str
    text: str | None
    valid_from: int  # UTC microseconds, as stored
    valid_to: int | None
    precision: str
    valid_source: str
    observed_at: int
    tz: str
    said: str | None  # the message as said, when the stored text rewrote its time phrases


#: A candidate straight from its row, as NamedTuple's own ``_make`` builds one.
_candidate = cast(Callable[[tuple[Any, ...]], _Candidate], functools.partial(tuple.__new__, _Candidate))


def query_terms(text: str) -> list[tuple[str, ...]]:
    """The terms of ``text`` worth searching for: each content word with its irregular forms."""
    return [forms(w) for w in content_words(text)]


#: BM25's term-frequency saturation, FTS5's own.
K1 = 1.2
#: BM25's length normalisation: 0.3, not FTS5's 0.75. Chat and journal messages are short
#: and a long one is a story, not a diluted text: at 0.75 the short messages that only echo
#: a query's words ("You play any instruments?", "Hey Caroline!") outrank the long ones
#: that tell what happened. On LoCoMo's development half (recall@10, one run each) b 0.75
#: gives multi-hop 0.314 / temporal 0.835 / overall 0.645, 0.5 gives 0.330 / 0.841 / 0.647,
#: 0.4 0.340 / 0.845 / 0.650, 0.3 0.350 / 0.857 / 0.654, 0.2 0.360 / 0.857 / 0.655, 0 (no
#: normalisation) 0.356 / 0.845 / 0.650: a broad plateau from 0.2 to 0.4, better in each of
#: the five conversations; k1 from 0.6 to 1.2 changes little (at most 0.01).
B = 0.3


def bm25(
    tf: Mapping[str, Sequence[int]], lengths: Mapping[str, int], n: int, df: list[int]
) -> dict[str, float]:
    """Okapi BM25 with FTS5's ``bm25()`` formula and saturation (:data:`K1`) but a lighter length
    normalisation (:data:`B`), from statistics read as of the search's time.

    ``tf`` maps each memory to how often it holds each query term, ``lengths`` gives its
    length in tokens, ``n`` the number of memories the statistics count and ``df`` how many
    of them hold each term. A term's weight is ln((n - df + 0.5) / (df + 0.5)), floored at
    1e-6 as FTS5 does, so a word most memories hold counts next to nothing. The average
    length is the candidates' (the memories holding a query term), so it too is fixed once
    known_at is; on LoCoMo it ranks as well as the whole store's average.
    """
    k1, b = K1, B
    avgdl = max(sum(lengths.values()) / len(lengths), 1.0) if lengths else 1.0
    idf = [max(math.log((max(n, held) - held + 0.5) / (held + 0.5)), 1e-6) for held in df]
    scores: dict[str, float] = {}
    # A score depends only on the length and the counts, which most candidates share (short
    # messages holding one word once): each pair is scored once, by the same arithmetic.
    seen: dict[tuple[int, tuple[int, ...]], float] = {}
    for memory_id, counts in tf.items():
        length = lengths[memory_id]
        key = (length, tuple(counts))
        score = seen.get(key)
        if score is None:
            norm = 1 - b + b * length / avgdl
            terms = zip(idf, counts, strict=True)
            score = seen[key] = sum([w * c * (k1 + 1) / (c + k1 * norm) for w, c in terms if c])
        scores[memory_id] = score
    return scores


#: How many matching revisions each term contributes, newest first (and, for a query with a
#: time phrase, as many recorded from the window's start on): the work of a search is bounded
#: whatever the store's size. A common word finds its newest matches; a rare one all of them.
CANDIDATES_PER_TERM = 100
#: ... and how many all the seeks of a query contribute together: a query of n terms and w
#: time windows may seek each term's newest matches and, per window, those recorded from its
#: start, n * (1 + w) seeks, and each takes CANDIDATES_PER_QUERY // (n * (1 + w)) (at most
#: CANDIDATES_PER_TERM, at least twice the hits asked for; the all-words seek as many), so
#: the work is bounded however many words a query has, not n times over. With 100 a seek,
#: one user holding 100k chat lines, a two-word query with a time phrase scored ~470
#: candidates and a four-word one ~720; with this budget at most ~250 (the search benchmark's
#: chat queries, CPU time p95 best of three: 12.7-14.2 ms -> 5.1-7.2 ms with the changes of
#: the same day, interleaved, load 7-9). On LoCoMo's development half (questions of
#: five to eight content words) recall@10 overall is 0.655 with it and 0.653 without
#: (single-hop 0.688 -> 0.692, every other category equal; recall@5 0.583 -> 0.588); the
#: search benchmark's year of 10k revisions ranks the same (recall@5 of time queries 0.998).
CANDIDATES_PER_QUERY = 200
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


def _expression(term: tuple[str, ...]) -> str:
    """One term's FTS5 expression: its forms, each a quoted phrase, OR-ed."""
    return "(" + " OR ".join(fts_phrase(f) for f in term) + ")"


def _occurrences(words: list[str], phrase: tuple[str, ...]) -> int:
    """How often ``phrase`` (tokens) occurs in ``words`` (tokens), as FTS5 counts a phrase: each
    run of its tokens in a row; a phrase of no tokens matches nothing."""
    if len(phrase) == 1:
        return words.count(phrase[0])
    if not phrase:
        return 0
    n = len(phrase)
    return sum(1 for i in range(len(words) - n + 1) if tuple(words[i : i + n]) == phrase)


def _by_words(
    conn: apsw.Connection,
    terms: list[tuple[str, ...]],
    scope: Scope,
    top: int,
    windows: list[tuple[int, int]],
    limit: int,
) -> dict[str, tuple[_Candidate, float]]:
    """The memories holding the terms, each with its as-of BM25 score (see CANDIDATES_PER_TERM
    and CANDIDATES_PER_QUERY).

    FTS5 finds which revisions hold which terms (bounded seeks of seqs only); one query then
    keeps those in the search's scope, and each one's length and term counts are read from
    its text with the index's own tokenizer, so each candidate is decoded and counted once
    however many seeks found it.
    """
    tokenize = conn.fts5_tokenizer(*queries.FTS_TOKENIZER)
    seeks = max(len(terms), 1) * (1 + len(windows))  # at most: see CANDIDATES_PER_QUERY
    cap = max(min(CANDIDATES_PER_TERM, CANDIDATES_PER_QUERY // seeks), 2 * limit)
    kept = counts_for(conn)  # counts already read from this unchanged store
    user = scope.user_id

    def one(sql: str, args: tuple[object, ...]) -> Any:
        """The first row of a counting query, read once while the store is unchanged."""
        return kept.get((sql, *args), lambda: conn.execute(sql, args).fetchone())

    # Alone in the store (the usual local case), the user owns every indexed row: the owner
    # term, whose doclist is the whole index, only slows each MATCH down.
    alone = one(queries.OTHER_OWNER, (user,)) is None
    owner = "" if alone else f"{_owner(user)} AND "
    seqs: set[int] = set()

    def gather(fts: str, bottom: int = 0, newest: bool = True, most: int = cap) -> list[int]:
        """Add the seek's seqs (in its order) and return them."""
        seek = queries.FTS_NEWEST if newest else queries.FTS_OLDEST
        got = [row[0] for row in conn.execute(seek, (f"{owner}text : ({fts})", bottom, top, most))]
        seqs.update(got)
        return got

    if alone:
        nth = one(queries.CONTENT_NTH_NEWEST, (top, STATS_WINDOW - 1))
    else:
        nth = one(queries.FTS_NTH_NEWEST, (_owner(user), top, STATS_WINDOW - 1))
    if nth is None:  # fewer than STATS_WINDOW: count them all
        bottom = 0
        if alone:
            n = int(one(queries.CONTENT_COUNT, (0, top))[0])
        else:
            n = int(one(queries.FTS_COUNT, (_owner(user), 0, top))[0])
    else:
        bottom, n = int(nth[0]), STATS_WINDOW
    # Each term's newest matches, and how many revisions of the statistics' window hold it:
    # counted from the seek when it reached back to the window's bottom (or found fewer than
    # asked: every match), else by FTS5.
    newest: list[list[int]] = []
    df: list[int] = []
    for t in terms:
        got = gather(_expression(t))
        newest.append(got)
        if len(got) < cap or got[-1] <= bottom:
            df.append(sum(1 for seq in got if seq >= bottom))
        else:
            df.append(int(one(queries.FTS_COUNT, (f"{owner}text : {_expression(t)}", bottom, top))[0]))
    # When the statistics count the whole store, a term's df says whether its newest matches
    # are all of them: then no other gather can find more (none at all for a df of 0).
    whole = [bottom == 0 and held <= cap for held in df]
    starts = [conn.execute(queries.FIRST_SEQ_FROM, (lo,)).fetchone() for lo, _ in windows]
    for term, complete, got in zip(terms, whole, newest, strict=True):
        if complete or len(got) < cap:
            continue
        for start in starts:  # what was said about the window is recorded during or after it
            # Skipped when the newest seek reached back to the window's start: it holds them all.
            if start is not None and start[0] <= top and got[-1] > start[0]:
                gather(_expression(term), bottom=start[0], newest=False)
    # Memories holding every word, however common each is (unless some term's matches were
    # all read: they hold them already).
    if len(terms) > 1 and not any(whole) and all(len(got) == cap for got in newest):
        gather(" AND ".join(_expression(t) for t in terms))
    if not seqs:
        return {}
    phrases = [[tuple(_tokens(tokenize, f, apsw.FTS5_TOKENIZE_QUERY)) for f in term] for term in terms]
    # The usual case, each term one form of one token: its count is one list.count.
    flat = [term[0][0] for term in phrases] if all(len(t) == 1 and len(t[0]) == 1 for t in phrases) else None
    found: dict[str, _Candidate] = {}
    tf: dict[str, tuple[int, ...]] = {}
    lengths: dict[str, int] = {}
    q = queries.in_scope(scope, sorted(seqs))
    doc = apsw.FTS5_TOKENIZE_DOCUMENT
    for c in map(_candidate, conn.execute(q.sql, q.params)):
        # _tokens inline: this loop runs for every candidate
        words: list[str] = (
            tokenize(c.text.encode(), doc, None, include_offsets=False, include_colocated=False)  # type: ignore[assignment]
            if c.text else []
        )
        found[c.memory_id] = c
        if flat is not None:
            tf[c.memory_id] = tuple(map(words.count, flat))
        else:
            tf[c.memory_id] = tuple([sum(_occurrences(words, p) for p in term) for term in phrases])
        # the dates written into a resolved memory's text are not words said
        lengths[c.memory_id] = len(words) if c.said is None else len(_tokens(tokenize, c.said))
    scores = bm25(tf, lengths, n, df)
    return {k: (c, scores[k]) for k, c in found.items() if scores.get(k, 0.0) > 0}


def _tokens(
    tokenize: apsw.FTS5Tokenizer, text: str | None, reason: int = apsw.FTS5_TOKENIZE_DOCUMENT
) -> list[str]:
    """``text``'s tokens as the full-text index holds them (or, with FTS5_TOKENIZE_QUERY, as
    FTS5 reads a quoted phrase of a query)."""
    if not text:
        return []
    # Without offsets and colocated tokens each token is a plain string.
    tokens = tokenize(text.encode(), reason, None, include_offsets=False, include_colocated=False)
    return cast(list[str], tokens)


def _by_time(conn: apsw.Connection, windows: list[tuple[int, int]], scope: Scope) -> list[_Candidate]:
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


def fuse(rankings: list[dict[str, float]], key: dict[str, tuple[Any, ...]] | None = None) -> dict[str, float]:
    """Reciprocal-rank fusion: each ranking (higher is better; ties by ``key``, a content-stable
    order, else by id) gives a memory 1 / (RRF_K + its rank); the sums are scaled so the best
    memory has 1."""
    order = key or {}
    fused: dict[str, float] = {}
    for scores in rankings:
        ranked = sorted(scores, key=lambda m: (-scores[m], order.get(m, ()), m))
        for rank, memory_id in enumerate(ranked, 1):
            fused[memory_id] = fused.get(memory_id, 0.0) + 1 / (RRF_K + rank)
    best = max(fused.values(), default=1.0)
    return {memory_id: v / best for memory_id, v in fused.items()}


def _stable(c: _Candidate) -> tuple[int, str, int]:
    """A tie-break two stores holding the same memories share: the latest said first, then the
    text, then the arrival order (never the random ids)."""
    return (-c.observed_at, c.text or "", c.seq)


def run_search(
    conn: apsw.Connection,
    query: str,
    scope: Scope,
    tz: ZoneInfo,
    limit: int,
    embedder: Embedder | None = None,
) -> list[Hit]:
    """Search ``scope`` for ``query`` (the rules are the module docstring's); best first."""
    asked = read_query(query, from_micros(scope.known), tz)
    windows = asked.windows
    terms = query_terms(asked.rest)
    meaning = asked.rest.strip() if embedder is not None and _WORD.search(asked.rest) else None
    if not terms and not windows and meaning is None:
        raise InvalidInputError(f"query={query!r:.80} has no words to search for")
    newest = _top_seq(conn, scope.known)
    if newest is None:
        return []
    items: dict[str, _Candidate] = {}
    bm25s: dict[str, float] = {}
    spans = [(w.lo, w.hi) for w in windows]
    for memory_id, (item, relevance) in _by_words(conn, terms, scope, newest, spans, limit).items():
        items[memory_id], bm25s[memory_id] = item, relevance
    similar: dict[str, float] = {}
    if embedder is not None and meaning is not None:
        for memory_id, (item, similarity) in _by_meaning(conn, embedder, meaning, scope, limit).items():
            items.setdefault(memory_id, item)
            similar[memory_id] = similarity
    by_time_only = bool(windows) and not terms and meaning is None
    if by_time_only:  # only a query without content words ranks memories by time alone
        for item in _by_time(conn, spans, scope):
            items.setdefault(item.memory_id, item)
    if embedder is None:
        best = max(bm25s.values(), default=0.0)
        texts = {m: (bm / best if best > 0 else 1.0) for m, bm in bm25s.items()}
    else:
        texts = fuse([bm25s, similar], {m: _stable(c) for m, c in items.items()})
    timed = bool(windows) or asked.asks_when
    time_fit = time_fitter(windows, scope.known)
    ranked: list[tuple[_Candidate, float, float, float | None, float | None, float | None]] = []
    for memory_id, item in items.items():
        text = texts.get(memory_id, 0.0)
        fit = time_score(time_fit(item), text, not by_time_only) if windows else 0.0
        if memory_id not in texts and fit < TIME_ONLY_FLOOR:
            continue  # found only by time, and not near it after all
        if asked.asks_when and item.valid_source != "assumed":
            fit += when_bonus(text, bool(terms) or meaning is not None)
        time = fit if timed else None
        sim = similar.get(memory_id)
        ranked.append((item, text + fit, text, time, bm25s.get(memory_id), sim))
    # Usage adds at most USAGE_WEIGHT: a candidate that cannot reach the limit-th best base
    # score even with it is dropped before its usage is read.
    if len(ranked) > limit:
        floor = sorted((r[1] for r in ranked), reverse=True)[limit - 1]
        ranked = [r for r in ranked if r[1] + USAGE_WEIGHT >= floor]
    uses = _usage(conn, [r[0].memory_id for r in ranked], scope.known)
    final = []
    for item, score, text, shown, bm, sim in ranked:
        created, used = uses[item.memory_id]
        u = squash(activation(created, used, scope.known))
        final.append((score + USAGE_WEIGHT * u, text, _stable(item), item, shown, bm, u, sim))
    top = heapq.nsmallest(limit, final, key=lambda f: (-f[0], -f[1], f[2]))  # sorted(...)[:limit]
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
    """Per memory: its creation, and when it was retrieved before ``known`` (earliest first, so
    its activation sums them in one order).

    Strictly before: a search records its own hits at its own time, so a replay as of that
    very instant ranks as the search did.
    """
    out: dict[str, tuple[int, list[int]]] = {}
    for memory_id, created_at, used_at in conn.execute(queries.USES_BEFORE, (json.dumps(memory_ids), known)):
        got = out.get(memory_id)
        if got is None:
            got = out[memory_id] = (created_at, [])
        if used_at is not None:
            got[1].append(used_at)
    for _, used in out.values():
        used.sort()
    return out


def activation(created: int, uses: list[int], known: int) -> float:
    """ACT-R base-level activation: ln of the summed, decayed weight of each use and of the
    creation, which counts :data:`CREATION_WEIGHT` of a use."""
    total = CREATION_WEIGHT * max((known - created) / _DAY_US, 1 / 24) ** -DECAY
    for used in uses:
        total += max((known - used) / _DAY_US, 1 / 24) ** -DECAY
    return math.log(total)


def squash(a: float) -> float:
    """An activation as a usage score in (0, 1)."""
    return 1 / (1 + math.exp(-a))
