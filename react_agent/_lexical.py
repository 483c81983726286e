"""Cheap lexical matching, shared by memory recall and tool routing: words without stop words,
CJK text as single characters, and a word matching its longer forms (live ~ lives)."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_STOPWORDS = frozenset({
    "a", "an", "the", "is", "are", "was", "were", "be", "been", "of", "in", "on", "at", "to",
    "for", "and", "or", "but", "what", "which", "who", "whom", "where", "when", "why", "how",
    "do", "does", "did", "i", "me", "my", "you", "your", "it", "its", "this", "that", "these",
    "those", "there", "can", "could", "please", "with", "from", "by", "as", "get", "give",
})


def terms(text: str) -> set[str]:
    """Lower-cased words of ``text`` without stop words; CJK runs split into characters;
    ``snake_case`` and ``dotted.names`` split into their words."""
    found: set[str] = set()
    for word in _WORD.findall(text.lower().replace("_", " ")):
        if any("\u3040" <= c <= "\u9fff" for c in word):
            found.update(c for c in word if not c.isascii())
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
