"""The words of a query: which ones say what it is about, and which forms each may take.

Search matches words through the full-text index, whose tokenizer (Porter stemming
over unicode61, see schema.sql) folds case, accents and regular endings ("runs",
"running" and "run" are one token). What it cannot fold are irregular forms: "ran"
is not "run", "ate" is not "eat", "children" is not "child". Journals are mostly
past tense, so a question in the present ("when did I run?") must find an answer
in the past ("I ran 5k").

Decision: **query-time expansion from a table of irregular forms**, not an
index-time lemmatizer. Each query word becomes a group of the forms of its lemma
("ran" → run OR ran), matched and counted as one term. The index stays as it is:

- no schema change and no migration, and the file stays readable by any SQLite
  (an index built with a Python tokenizer registered through apsw fails with "no
  such tokenizer" in the sqlite3 shell and in Python's sqlite3, and so would an
  erase run from them);
- erase's guarantee is untouched: the index holds the tokens of the text and
  nothing else, so there is no derived token (a lemma) left to scrub;
- the table is small, reviewed and dependency-free, and measured as well as the
  alternatives. On LoCoMo's development half (recall@10 overall, one run each, ranking of
  commit 7bcb65b): no expansion 0.636, this table 0.641, lemminflect's full inflection
  tables at query time 0.642 once forms sharing a Porter stem are merged (0.645 before:
  the stemmer folds "supports"/"supported" into one token, so OR-ing them counts each
  occurrence several times, which only inflates the weight of words with many forms),
  and simplemma lemmatizing index and query alike 0.646, which needs a tokenizer or a
  second normalised column in the index, with the costs above, for +0.005. lemminflect
  and simplemma would also be new runtime dependencies (lemminflect brings numpy).
- a group is one term: its forms' counts are summed and its df is the memories holding
  any form, so "ran run" holds "run" twice; scoring each form apart and keeping the best
  did worse (0.633 against 0.639 in an earlier run).

Forms that are mostly another word in chat are left out ("left", "saw", "found",
"rose", "lay", "fell", "ground", "wound", "spoke", "bit", "lead"): expanding them
would bring in more unrelated memories than the forms would find.
"""

from __future__ import annotations

import re

__all__ = ["STOPWORDS", "IRREGULAR", "content_words", "forms", "fts_phrase"]

#: Words too common to say what a memory is about: a standard English stop list (the one
#: NLTK ships, which bare FTS5 baselines use). A query of only these finds nothing by text.
STOPWORDS = frozenset(
    """
a about above after again against all am an and any are aren't as at be because been
before being below between both but by can can't cannot could couldn't did didn't do
does doesn't doing don't down during each few for from further had hadn't has hasn't
have haven't having he he'd he'll he's her here here's hers herself him himself his how
how's i i'd i'll i'm i've if in into is isn't it it's its itself let's me more most
mustn't my myself no nor not of off on once only or other ought our ours ourselves out
over own same shan't she she'd she'll she's should shouldn't so some such than that
that's the their theirs them themselves then there there's these they they'd they'll
they're they've this those through to too under until up very was wasn't we we'd we'll
we're we've were weren't what what's when when's where where's which while who who's
whom why why's with won't would wouldn't you you'd you'll you're you've your yours
yourself yourselves also get got likely might may
""".split()
)

# Irregular verbs (base, past, participle) and nouns (singular, plural), one lemma between
# bars or line ends; regular endings are left to the stemmer. Lemmas that are stop words
# (be, do, have, get) are left out: their forms would match nearly every memory.
_TABLE = """
arise arose arisen|awake awoke awoken|beat beaten|become became|begin began begun|bend bent
bite bitten|bleed bled|blow blew blown|break broke broken|breed bred|bring brought|build built
burn burnt|buy bought|catch caught|choose chose chosen|cling clung|come came|creep crept
deal dealt|dig dug|draw drew drawn|dream dreamt|drink drank drunk|drive drove driven
eat ate eaten|feed fed|feel felt|fight fought|flee fled|fly flew flown|forbid forbade forbidden
forget forgot forgotten|forgive forgave forgiven|freeze froze frozen|give gave given
go went gone|grow grew grown|hang hung|hear heard|hide hid hidden|hold held|keep kept
kneel knelt|know knew known|learn learnt|lend lent|lie lain|light lit|lose lost|make made
mean meant|meet met|pay paid|ride rode ridden|ring rang rung|rise risen|run ran|say said
see seen|seek sought|sell sold|send sent|sew sewn|shake shook shaken|shine shone|shoot shot
show shown|shrink shrank shrunk|sing sang sung|sink sank sunk|sit sat|sleep slept|slide slid
speak spoken|speed sped|spend spent|spill spilt|spin spun|spring sprang sprung|stand stood
steal stole stolen|stick stuck|sting stung|stink stank stunk|strike struck|string strung
swear swore sworn|sweep swept|swim swam swum|swing swung|take took taken|teach taught
tear tore torn|tell told|think thought|throw threw thrown|understand understood
wake woke woken|wear wore worn|weave wove woven|weep wept|win won|write wrote written
child children|man men|woman women|person people|foot feet|tooth teeth|mouse mice
goose geese|knife knives|wife wives|wolf wolves|half halves|shelf shelves|loaf loaves
thief thieves|calf calves|self selves
"""

#: Each irregular form, and each lemma with one, mapped to all the forms of its lemma.
IRREGULAR: dict[str, tuple[str, ...]] = {}
for _line in _TABLE.replace("\n", "|").split("|"):
    _forms = tuple(_line.split())
    if len(_forms) > 1:
        for _form in _forms:
            IRREGULAR.setdefault(_form, _forms)

_WORD = re.compile(r"[^\W_]+", re.UNICODE)


def content_words(text: str) -> list[str]:
    """The words of ``text`` that say what it is about, in order, each once.

    Lower-cased runs of letters and digits, without stop words and without single letters
    (the "s" of "Caroline's"); digits are kept ("5" in "5k" is its own token).
    """
    kept = (w for w in _WORD.findall(text.lower()) if w not in STOPWORDS and (len(w) > 1 or w.isdigit()))
    return list(dict.fromkeys(kept))


def forms(word: str) -> tuple[str, ...]:
    """The forms ``word`` is searched under: itself, and the other forms of its lemma if irregular."""
    return IRREGULAR.get(word, (word,))


def fts_phrase(word: str) -> str:
    """``word`` as a quoted FTS5 phrase, so FTS5 syntax in user text is only ever words."""
    return '"' + word.replace('"', '""') + '"'
