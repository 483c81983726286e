"""Cheap lexical matching, shared by memory recall and tool routing: words without stop words,
CJK text as single characters, and a word matching its longer forms (live ~ lives); and the
"did you mean" of a name that is not one of the known names."""

from __future__ import annotations

import difflib
import itertools
import math
import re
from collections.abc import Iterable, Sequence

import regex

_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_CJK = regex.compile(r"(?=\w)[\p{scx=Han}\p{scx=Hiragana}\p{scx=Katakana}\p{scx=Hangul}]")
_STOPWORDS = frozenset({
    "a", "an", "the", "is", "are", "was", "were", "be", "been", "of", "in", "on", "at", "to",
    "for", "and", "or", "but", "what", "which", "who", "whom", "where", "when", "why", "how",
    "do", "does", "did", "i", "me", "my", "you", "your", "it", "its", "this", "that", "these",
    "those", "there", "can", "could", "please", "with", "from", "by", "as", "get", "give",
})


def is_cjk(char: str) -> bool:
    """Whether ``char`` (its first character) is a letter of a CJK script: Han, Hiragana,
    Katakana or Hangul, by Unicode's script extensions (so ``ー`` and ``々`` are; ``。`` and
    full-width Latin letters are not). CJK is written without spaces between words."""
    return _CJK.match(char) is not None


def terms(text: str) -> set[str]:
    """Lower-cased words of ``text`` without stop words; CJK runs split into characters;
    ``snake_case`` and ``dotted.names`` split into their words."""
    found: set[str] = set()
    for word in _WORD.findall(text.lower().replace("_", " ")):
        if any(is_cjk(c) for c in word):
            found.update(c for c in word if is_cjk(c))
            found.update(re.findall(r"[a-z0-9]+", word))
        elif (len(word) > 1 or word.isdigit()) and word not in _STOPWORDS:
            found.add(word)
    return found


def matches(term: str, words: set[str]) -> bool:
    """``term`` is in ``words``, or (4+ letters) is a prefix of one of them or the reverse."""
    if term in words:
        return True
    return len(term) >= 4 and any(
        len(w) >= 4 and (w.startswith(term) or term.startswith(w)) for w in words
    )


def overlap(query: set[str], words: set[str]) -> int:
    """How many query terms match ``words``."""
    return sum(1 for q in query if matches(q, words))


def rank(query: str, documents: Sequence[str]) -> list[float]:
    """A score per document: the sum over matching query terms of their inverse document
    frequency, ``log(1 + N / df)`` for ``N`` documents of which ``df`` match the term (rare
    words weigh more). Plain idf: unlike BM25, how often a term occurs in a document and how
    long the document is do not count."""
    docs = [terms(d) for d in documents]
    query_terms = terms(query)
    scores = [0.0] * len(docs)
    for term in query_terms:
        hits = [i for i, d in enumerate(docs) if matches(term, d)]
        if not hits:
            continue
        weight = math.log(1 + len(docs) / len(hits))
        for i in hits:
            scores[i] += weight
    return scores


MAX_NAME_CHARS = 128
"""Names longer than this are never suggested or matched (no real name is that long)."""

MAX_OPTIONS = 256
"""The most options :func:`did_you_mean` compares a name with (the first ones)."""


def did_you_mean(name: str, options: Iterable[object]) -> str:
    """`` (did you mean 'x'?)`` for the option closest to ``name``, or ``""``; at most the
    first :data:`MAX_OPTIONS` options are compared, and no name over :data:`MAX_NAME_CHARS`.
    Names made of words (``get_current_time``) are matched on the words they share first, so
    ``get_time`` is taken for ``get_current_time``, not for ``convert_time``; then on their
    spelling."""
    if not isinstance(name, str) or len(name) > MAX_NAME_CHARS:
        return ""
    words = _name_words(name)
    candidates = [o for o in itertools.islice(options, MAX_OPTIONS)
                  if isinstance(o, str) and len(o) <= MAX_NAME_CHARS]
    scored = sorted(((len(words & _name_words(o)), difflib.SequenceMatcher(None, name, o).ratio(),
                      o) for o in candidates), reverse=True)
    if scored and scored[0][0] >= max(1, len(words) - 1) and scored[0][1] >= 0.4:
        return f" (did you mean {scored[0][2]!r}?)"
    close = difflib.get_close_matches(name, candidates, n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _name_words(name: str) -> set[str]:
    """The lower-case words of a name: ``get_current-Time.v2`` -> get, current, time, v2."""
    return {w for w in re.split(r"[^0-9a-z]+", name.lower()) if w}
