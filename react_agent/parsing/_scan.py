"""The scanner: one linear pass over a reply that finds the JSON-like values in it.

Brackets are matched with a stack, and strings are read only where JSON can hold one (after
``{ [ ( , :``), so prose apostrophes, braces inside strings and thousands of unmatched braces
cost no more than their length. :func:`scan_text` gives the outermost matched ``{...}`` /
``[...]`` spans, which of them sit inside an opener that never closed, and where the text ended
inside a string or an unclosed value (a truncated reply).
"""

from __future__ import annotations

import bisect
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass
class Scan:
    """What one pass over a text found (positions are character offsets into it)."""

    spans: list[tuple[int, int]]  # outermost matched {...} / [...] values, in order
    nested: dict[int, int]  # span start -> the unclosed opener it sits in (innermost)
    last_unclosed: int | None  # the innermost opener never closed
    in_string_at: int | None  # the text ended inside the string that starts here
    unclosed: list[tuple[int, int]]  # the openers never closed: (first position, run length)


_MATCHING = {"}": "{", "]": "["}
# The next bracket (or quote) worth a look. A pair with no bracket, quote or colon inside
# ({city}, [1]) can hold no envelope and no string: on Python >= 3.11 the regex engine skips
# such pairs itself (possessive quantifiers: no backtracking), so prose full of placeholders
# costs one C-level pass instead of a Python step per placeholder.
if sys.version_info >= (3, 11):
    _PLAIN = r"""[^{}\[\]"'“‘„:：]*+"""
    _PAIRS = rf"\{{{_PLAIN}\}}|\[{_PLAIN}\]"
    _NEXT_BRACKET = re.compile(rf"(?:[^{{}}\[\]]++|{_PAIRS})*+([{{}}\[\]])")
    _NEXT_BRACKET_OR_QUOTE = re.compile(rf"""(?:[^{{}}\[\]"'“‘„]++|{_PAIRS})*+([{{}}\[\]"'“‘„])""")
else:  # pragma: no cover - Python 3.10 has no possessive quantifiers: visit every bracket
    _NEXT_BRACKET = re.compile(r"[^{}\[\]]*([{}\[\]])")
    _NEXT_BRACKET_OR_QUOTE = re.compile(r"""[^{}\[\]"'“‘„]*([{}\[\]"'“‘„])""")
_RUN_OF = {c: re.compile(re.escape(c) + "+") for c in "{}[]"}
VALUE_START = frozenset("{[(,:，：")  # after these, a quote opens a JSON string
_STRING_FOLLOW = frozenset(",:}])，：/#{[")  # a closing quote is followed by one of these (or end)


def scan_text(text: str, *, string_aware: bool) -> Scan:
    """One pass over ``text`` matching brackets; strings are skipped only at JSON positions.

    Runs of one bracket are handled as a unit (the stack holds ``[start, count, char]`` runs),
    so thousands of unmatched braces cost about as much as one.
    """
    stack: list[list[Any]] = []  # [first position, how many, bracket] of contiguous openers
    spans: list[tuple[int, int]] = []
    nested: dict[int, int] = {}
    pos = 0
    while True:
        pattern = _NEXT_BRACKET_OR_QUOTE if (stack and string_aware) else _NEXT_BRACKET
        m = pattern.match(text, pos)
        if m is None:
            break
        i, c = m.start(1), m.group(1)
        pos = i + 1
        if c in _RUN_OF:
            pos = _RUN_OF[c].match(text, i).end()  # type: ignore[union-attr]
        if c in "{[":
            stack.append([i, pos - i, c])
        elif c in "}]":
            while stack and i < pos and stack[-1][2] == _MATCHING[c]:
                entry = stack[-1]
                taken = min(pos - i, entry[1])
                entry[1] -= taken
                opened = entry[0] + entry[1]  # the outermost opener these closers match
                if not entry[1]:
                    stack.pop()
                i += taken
                while spans and spans[-1][0] > opened:
                    spans.pop()
                spans.append((opened, i))
                if stack:
                    nested[opened] = stack[-1][0] + stack[-1][1] - 1
        elif prev_significant(text, i) in VALUE_START:
            end = string_end(text, i)
            if end is None:
                return Scan(spans, nested, _innermost(stack), i, [(e[0], e[1]) for e in stack])
            pos = end
    return Scan(spans, nested, _innermost(stack), None, [(e[0], e[1]) for e in stack])


def _innermost(stack: list[list[Any]]) -> int | None:
    return stack[-1][0] + stack[-1][1] - 1 if stack else None


def prev_significant(text: str, i: int) -> str:
    """The last non-space character before ``text[i]`` (``""`` if none)."""
    j = i - 1
    while j >= 0 and text[j].isspace():
        j -= 1
    return text[j] if j >= 0 else ""


def _next_significant(text: str, i: int, end: int) -> str:
    while i < end and text[i].isspace():
        i += 1
    return text[i] if i < end else ""


_CURLY_DOUBLE = re.compile(r'[^"”\\]*(?:\\.[^"”\\]*)*(?=["”]|$)', re.DOTALL)
_CURLY_SINGLE = re.compile(r"[^'’\\]*(?:\\.[^'’\\]*)*(?=['’]|$)", re.DOTALL)
STRING_BODY = {  # a string's text up to the quote that may close it; curly quotes (“…”, ‘…’,
    # German „…“) delimit strings as the straight ones do
    '"': re.compile(r'[^"\\]*(?:\\.[^"\\]*)*(?="|$)', re.DOTALL),
    "'": re.compile(r"[^'\\]*(?:\\.[^'\\]*)*(?='|$)", re.DOTALL),
    "“": _CURLY_DOUBLE,
    "”": _CURLY_DOUBLE,
    "„": re.compile(r'[^"“”\\]*(?:\\.[^"“”\\]*)*(?=["“”]|$)', re.DOTALL),
    "‘": _CURLY_SINGLE,
    "’": _CURLY_SINGLE,
}
QUOTES = frozenset(STRING_BODY)
"""The characters that open a string."""


def string_end(text: str, start: int, end: int | None = None) -> int | None:
    """Index just past the string opened at ``start``, or ``None`` if it never closes.

    A quote closes the string only when the next significant character can follow a JSON
    string (``, : } ]``, a comment, or the end), so unescaped inner quotes and apostrophes
    stay content.
    """
    end = len(text) if end is None else end
    body = STRING_BODY[text[start]]
    pos = start + 1
    while True:
        m = body.match(text, pos, end)
        close = m.end() if m else pos
        if close >= end:
            return None
        follow = _next_significant(text, close + 1, end)
        if follow == "" or follow in _STRING_FOLLOW:
            return close + 1
        pos = close + 1


KEY_AHEAD = re.compile(r"""\s*(?:["'“”‘’„][^"'“”‘’\n]{1,64}["'“”’]|[A-Za-z_]\w*)\s*[:：]""")


def inside_unclosed_structure(text: str, scan: Scan) -> Callable[[int], bool]:
    """A test for spans nested in the unclosed opener at a position: True when that opener, or
    any unclosed opener around it, starts JSON. Prefix flags and a binary search keep it
    O(log n) per span however deep the unclosed nesting."""
    starts = [start for start, _ in scan.unclosed]
    flags: list[bool] = []
    for start, count in scan.unclosed:
        flags.append(bool(flags and flags[-1]) or opens_structure(text, start + count - 1))

    def inside(opener: int) -> bool:
        k = bisect.bisect_right(starts, opener) - 1
        return k >= 0 and flags[k]

    return inside


def opens_structure(text: str, opener: int) -> bool:
    """True if the opener at ``opener`` starts JSON (a key follows ``{``, a value ``[``), as
    opposed to a stray brace in prose."""
    if text[opener] == "[":
        return _next_significant(text, opener + 1, len(text)) in ("{", "[", '"', "'")
    return KEY_AHEAD.match(text, opener + 1) is not None


def could_be_envelope(text: str, start: int, end: int) -> bool:
    """Cheap filter: an object needs a ':' and an array needs an object inside."""
    if text[start] == "[":
        return text.find("{", start + 1, end) != -1
    return text.find(":", start, end) != -1 or text.find("：", start, end) != -1
