"""The repairs: near-JSON (the dialects models write) rewritten as the JSON value it means.

:func:`repair_json` rewrites a candidate (Python-dict quotes and literals, curly quotes, trailing
commas, comments, bare keys, missing commas or colons, doubled braces, fullwidth punctuation,
literal ``\\n`` between members, raw backslashes, unescaped inner quotes, tuples, ...) for
:func:`~._load.load_or_repair` to load. Only rewrites whose meaning is certain are made; anything
else is left invalid, and a fault the repair recognises (a stray word between members, a string
that swallows the next key) is described in words for the model (:class:`RepairError`). The
rewrite is one pass over the structure, with the reading of a string (where it ends, which inner
quotes are text) in :class:`_StringReader`; a string's escapes are :mod:`._escapes`'. The string
reader stays with the pass: where a string ends depends on the container and the key the pass
is in (a quote closes it only where that container can go on).
"""

from __future__ import annotations

import json
import math
import re

from .._lexical import is_cjk
from ..tools.builtin import MAX_EXPRESSION_CHARS, evaluate
from ..types import JSON_NUMBER
from ._escapes import json_string
from ._scan import KEY_AHEAD, QUOTES, STRING_BODY, VALUE_START, prev_significant, string_end


class RepairError(ValueError):
    """A fault the repair recognised and will not guess past (a string that runs into the next
    key, a stray word where a key belongs, an inner quote that leaves two readings); its text
    says so in words for the model."""


_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_ARITHMETIC = re.compile(r"[-+(\d.][\d.\s()+\-*/%]{0,"  # at most the calculator's length
                         + str(MAX_EXPRESSION_CHARS - 2) + r"}[\d.)]")
_SPACES = re.compile(r"\s*")
_OPERATOR = re.compile(r"[\d.)]\s*(?:[-+*/%])")
_NOT_ARITHMETIC = re.compile(r"\d-\d|[\d.)]\s+[-+][\d.(]")  # 2030-01-02, 10-20; [1 -2]
_NUMBER = JSON_NUMBER
_LITERALS = {"true": "true", "false": "false", "null": "null", "none": "null"}
_CLOSERS = {"{": "}", "[": "]", "(": ")"}
_QUOTED_KEY_AHEAD = re.compile(r"""\s*["'“][^"'”\n]{0,64}["'”]\s*[:：]""")
_NEXT_LINE_VALUE = re.compile(  # a line break, then what can only start a JSON value
    r"""[ \t\r]*\n\s*(?:["'“{\[(\d-]|(?:true|false|null|True|False|None)\b)"""
)


def repair_json(raw: str) -> tuple[str, list[str]]:
    """Rewrite a JSON-ish value into strict JSON in one linear pass that follows the structure
    (which brackets are open, whether a key, a colon, a value or a comma comes next).

    Read, because their meaning is certain: single and curly quotes (“…”, ‘…’, „…“),
    ``True/False/None`` and other letter cases of the literals, unquoted keys (a bare word
    followed by a colon), a key's quote written twice or missing at its start (``"name"":``,
    ``""name":``, ``name":``), trailing commas, comments, fullwidth ``：`` ``，``, a missing comma
    between members or a missing colon after a quoted key, a literal ``\\n`` / ``\\r`` / ``\\t``
    (backslash and letter) between members, doubled braces (``{{ }}`` from ``str.format``
    templates), ``.25`` / ``1.`` / ``+1``, Python tuples as lists, a trailing ``...`` in a list,
    unescaped quotes inside a string whose end is still unambiguous and an opening quote
    written twice (see :class:`_StringReader`), raw backslashes (see :func:`json_string`),
    arithmetic on numbers written as a value (see :func:`_arithmetic`), a ``]`` or ``)`` inside
    a value where no ``[`` or ``(`` is open (a call first written as a list, then as one
    object: ``{"name": ..., "args": {}}]}``).

    Raises:
        RepairError: a fault recognised and refused, with what to fix in words: a stray word
            between members (``{"a": 1, NOTE "b": 2}``), a string that lost its closing quote
            and would swallow the next member, doubled quotes with two readings.
        ValueError: anything else (bare words as values, placeholders, unclosed strings or
            comments, two readings of the quotes).
    """
    repairs: dict[str, None] = {}
    raw = _undouble_braces(raw, repairs)
    out: list[str | tuple[str, str]] = []  # strings stay (content, quote) until the end
    stack: list[str] = []  # the open brackets
    last = "start"  # what came last: start, open, comma, key, colon, value
    comma = -1  # where in ``out`` the last comma is (dropped if a trailing one)
    i, n = 0, len(raw)
    key = ""  # the last key read
    while i < n:
        c = raw[i]
        if c.isspace():
            out.append(c)
            i += 1
            continue
        if c == "\\" and raw[i + 1:i + 2] in ("n", "r", "t"):  # a literal \n between members
            out.append(" ")
            repairs["literal \\n between members read as line breaks"] = None
            i += 2
            continue
        if c == "#" or raw.startswith("//", i) or raw.startswith("/*", i):
            i = _comment_end(raw, i)
            repairs["comments"] = None
            continue
        if c in "，：":
            repairs["fullwidth punctuation"] = None
            c = "," if c == "，" else ":"
        if c in "])" and stack and not any(_CLOSERS[b] == c for b in stack):
            repairs[f"a stray {c} dropped"] = None  # nothing it could close is open
            i += 1
            continue
        if c in "}])":
            if not stack or _CLOSERS[stack[-1]] != c:
                raise ValueError("unmatched bracket")
            if last == "comma":
                out[comma] = ""
                repairs["trailing commas"] = None
            elif last not in ("open", "value"):
                raise ValueError("a member without a value")
            out.append("}" if c == "}" else "]")
            stack.pop()
            last, i = "value", i + 1
            continue
        if c == ",":
            if last != "value" or not stack:
                raise ValueError("misplaced comma")
            out.append(c)
            comma, last, i = len(out) - 1, "comma", i + 1
            continue
        if c == ":":
            if last != "key":
                raise ValueError("misplaced colon")
            out.append(c)
            last, i = "colon", i + 1
            continue
        if last == "value":  # two values with nothing between: a missing comma
            if not stack or (stack[-1] == "{" and not KEY_AHEAD.match(raw, i)):
                raise ValueError("text after a value")
            out.append(",")
            comma, last = len(out) - 1, "comma"
            repairs["missing commas"] = None
        elif last == "key":  # a key and then a value: a missing colon
            if c in QUOTES and _QUOTED_KEY_AHEAD.match(raw, i):  # "NOTE" "b": 1
                raise RepairError(
                    f"the word {_shown(key)} stands where a key belongs but no colon and value "
                    f"follow it, only the next key {_shown(_key_text(raw, i))} (write every "
                    'member as "key": value, with commas between them)'
                )
            out.append(":")
            last = "colon"
            repairs["missing colons"] = None
        container = stack[-1] if stack else ""
        if container == "{" and last in ("open", "comma"):
            i, key = _read_key(raw, i, out, repairs)
            last = "key"
            continue
        if c in QUOTES:
            end, doubled = _value_string_end(raw, i, container, key if container == "{" else None)
            if doubled:
                repairs["a doubled opening quote dropped"] = None
            out.append((raw[i + (2 if doubled else 1):end - 1], c))
            i = end
        elif (arithmetic := _arithmetic(raw, i)) is not None:
            out.append(arithmetic[0])
            i, repairs[arithmetic[2]] = arithmetic[1], None
        elif c in "{[(":
            if c == "(":
                repairs["Python tuples as lists"] = None
            stack.append(c)
            out.append("[" if c == "(" else c)
            last, i = "open", i + 1
            continue
        elif raw.startswith("...", i) or c == "…":
            i = _skip_trailing_ellipsis(raw, i, stack, last)
            out[comma] = ""
            repairs["a trailing ... dropped from a list"] = None
        elif c in "+-." or c.isdigit():
            m = _NUMBER.match(raw, i)
            if m is None:
                raise ValueError("bad number")
            out.append(_json_number(m.group(), repairs))
            i = m.end()
        else:
            m = _IDENT.match(raw, i)
            if m is None:
                raise ValueError(f"unexpected character {c!r}")
            out.append(_json_literal(m.group(), repairs))
            i = m.end()
        last = "value"
    if stack or last != "value":
        raise ValueError("the value is not closed")
    # Python-dict style (a single-quoted string or True/False/None) decodes Python's escapes.
    python = "Python literals True/False/None" in repairs or any(
        isinstance(t, tuple) and t[1] == "'" for t in out
    )
    text = "".join(
        t if isinstance(t, str) else json_string(t[0], t[1], repairs, python) for t in out
    )
    return text, list(repairs)


def _comment_end(raw: str, i: int) -> int:
    if raw.startswith("/*", i):
        close = raw.find("*/", i + 2)
        if close == -1:
            raise ValueError("unclosed comment")
        return close + 2
    nl = raw.find("\n", i)
    return len(raw) if nl == -1 else nl


def _read_key(
    raw: str, i: int, out: list[str | tuple[str, str]], repairs: dict[str, None]
) -> tuple[int, str]:
    """Read the key at ``i`` into ``out`` -> (the index after it, the key). A quoted key ends at
    its first closing quote; a bare identifier is a key too (JSON5), when a colon follows it: a
    bare word without one is a stray word between members (``{"a": 1, NOTE "b": 2}``), never a
    key that takes the next member as its value."""
    c = raw[i]
    doubled_first = _DOUBLED_BEFORE_KEY.match(raw, i)
    if doubled_first:  # ""name": ... : the key's opening quote written twice
        out.append((doubled_first.group(2), '"'))
        repairs["a doubled quote before a key dropped"] = None
        return doubled_first.end() - 1, doubled_first.group(2)
    if c in STRING_BODY:
        m = STRING_BODY[c].match(raw, i + 1)
        close = m.end() if m else i + 1
        if close >= len(raw):
            raise ValueError("unclosed key")
        out.append((raw[i + 1:close], c))
        doubled = _DOUBLED_AFTER_KEY.match(raw, close + 1)
        if doubled:  # "name"": ... : the key's closing quote written twice
            repairs["a doubled quote after a key dropped"] = None
            return doubled.end() - 1, raw[i + 1:close]
        return close + 1, raw[i + 1:close]
    m = _IDENT.match(raw, i)
    if m is not None and (half := _HALF_QUOTED_KEY.match(raw, m.end())):
        out.append((m.group(), '"'))  # name": ... : the key's opening quote is missing
        repairs["a key's missing opening quote supplied"] = None
        return half.end() - 1, m.group()
    if m is None:
        stray = _STRAY_WORD.match(raw, i)
        if stray:
            raise RepairError(
                f"the word {_shown(stray.group(1))} stands between two members with the next key "
                f"{_shown(stray.group(2))} after it (write every member as \"key\": value, with "
                "commas between them, and no other words outside the strings)"
            )
        raise ValueError(f"unexpected character {c!r} where a key belongs")
    if not _COLON_AHEAD.match(raw, m.end()):
        after = _KEY_OR_WORD.match(raw, m.end())
        what = f"the next key {_shown(after.group(1))}" if after else "no colon"
        raise RepairError(
            f"the bare word {_shown(m.group())} stands between two members with {what} after "
            'it (write every member as "key": value, with commas between them, and no other '
            "words outside the strings)"
        )
    out.append((m.group(), '"'))
    repairs["unquoted keys"] = None
    return m.end(), m.group()


_COLON_AHEAD = re.compile(r"(?:\s|\\[nrt])*[:：]")
_DOUBLED_AFTER_KEY = re.compile(r"""["'“”’][ \t]*[:：]""")  # (from the second quote to the colon)
_DOUBLED_BEFORE_KEY = re.compile(  # ""name": (the key's first quote twice)
    r"""(["'])\1([^"'“”‘’\s:,{}\[\]][^"'“”‘’\n:,{}\[\]]{0,63})["'”’][ \t]*[:：]"""
)
_HALF_QUOTED_KEY = re.compile(r"""["'“”’][ \t]*[:：]""")  # a bare word, then a quote and a colon
_STRAY_WORD = re.compile(  # a word where a key belongs, then the next key
    r"""([^\s"'“”‘’„:,{}\[\]]{1,40})(?:\s|\\[nrt])+["'“”‘’„]([^"'“”‘’\n]{0,64})["'“”’]\s*[:：]"""
)
_KEY_OR_WORD = re.compile(r"""\s*["'“”‘’„]([^"'“”‘’\n]{0,64})["'“”’]\s*[:：]""")


_QUOTED_WORD = re.compile(r"""\s*["'“”‘’„]([^"'“”‘’\n]{0,64})["'“”’]""")


def _key_text(raw: str, i: int) -> str:
    """The quoted word at ``i`` (a key or an item), without its quotes."""
    m = _QUOTED_WORD.match(raw, i)
    return m.group(1) if m else raw[i:i + 20]


def _excerpt(raw: str, start: int, end: int) -> str:
    """``raw[start:end]`` as written, on one line, its middle cut when long (for a message)."""
    text = " ".join(raw[start:end].split())
    return text if len(text) <= 50 else f"{text[:24]}…{text[-24:]}"


def _shown(text: str, limit: int = 40) -> str:
    """``text`` as a short JSON string for a message."""
    text = " ".join(text.split())
    return json.dumps(text if len(text) <= limit else text[:limit - 1] + "…", ensure_ascii=False)


def _value_string_end(
    raw: str, start: int, container: str, key: str | None = None
) -> tuple[int, bool]:
    """The end of the string value at ``start`` (one linear pass, see :class:`_StringReader`),
    and whether its opening quote was written twice (``""text"``: the first is dropped).

    Read first with brackets inside the text counted (a quote followed by ``,`` ``}`` inside
    ``{"x": 1, "y": 2}`` written unescaped in an answer is content); if that finds no end and the
    text held a bracket, once more without (a lone ``{`` in the text: ``"smile :{"``).

    Raises:
        RepairError: a fault recognised (a string that runs into the next key, an inner
            quotation left open where the string ends, doubled quotes).
        ValueError: unclosed, or ambiguous.
    """
    reader = _StringReader(raw, start, container, key, nested=True)
    try:
        return reader.end()
    except ValueError:
        if not reader.saw_bracket:
            raise
    return _StringReader(raw, start, container, key, nested=False).end()


# A quote inside a string opens a quotation after one of these (or a space, or a CJK character,
# whose texts put no space before a quotation: 他说"你好").
_OPENING_PUNCTUATION = frozenset("([{<（「『【《:：,，=")
_STRUCTURE_AFTER = frozenset("}])#")
# What follows a comma when the comma ends a member: the next key (or the object's end); in a
# list the next value. Anything else (words) shows the quote before the comma is content:
# "He said "hi", then left".
_MEMBER_AFTER_COMMA = re.compile(  # (a stray word before the next key counts: it is an error)
    r"""(?:\s|\\[nrt])*(?:["'“”‘’„][^"'“”‘’\n]{0,64}["'“”’]\s*(?:[:：{\[\d"'“”‘’„-]|(?:true|false|null)\b)"""
    r"""|"[^"\n]{0,64}"\s*[:：]"""  # a double-quoted key with an apostrophe: Python's repr
    r"""|["'“”‘’„]{2}[^"'“”‘’\n]{1,64}["'“”’]\s*[:：]|[A-Za-z_$][\w$]*["'”’]?(?:\s|\\[nrt])*[:：]"""
    r"""|[}\]]|//|/\*|\#|$"""
    r"""|[^\s"'“”‘’„:,{}\[\]]{1,40}(?:\s|\\[nrt])+["'“”‘’„][^"'“”‘’\n]{0,64}["'“”’]\s*[:：])"""
)
_ITEM_AFTER_COMMA = re.compile(
    r"""(?:\s|\\[nrt])*(?:["'“”‘’„{\[(\d.+\-…]|(?:true|false|null|none|nan|infinity)\b|[}\])]"""
    r"""|//|/\*|\#|$)""",
    re.IGNORECASE,
)
# The end of a string's text that is a member it swallowed: "key": then a value to the end.
_SCALAR = re.compile(r"""["'“”‘’„][^"'“”‘’\n]*|-?\d[\d.eE+-]*|true|false|null|True|False|None""")
_KEY_BEFORE = re.compile(r"""["'“”‘’„]([^"'“”‘’\n]{1,64})["'“”’]\s*\Z""")
_QUOTED_ITEM_AHEAD = re.compile(r"""["'“”‘’„][^"'“”‘’\n]{0,64}["'”’]\s*[,，\]]""")
# Where a string may end or hold an inner quote, by the quote that opened it.
_STOPS = {
    '"': re.compile(r'[^"\\]*(?:\\.[^"\\]*)*', re.DOTALL),
    "'": re.compile(r"[^'\\]*(?:\\.[^'\\]*)*", re.DOTALL),
    "“": re.compile(r'[^"“”„\\]*(?:\\.[^"“”„\\]*)*', re.DOTALL),
    "‘": re.compile(r"[^'‘’\\]*(?:\\.[^'‘’\\]*)*", re.DOTALL),
}
_STOPS["”"] = _STOPS["„"] = _STOPS["“"]
_STOPS["’"] = _STOPS["‘"]
_CLOSERS_OF = {'"': '"', "'": "'", "“": '"”', "”": '"”', "„": '"“”', "‘": "'’", "’": "'’"}


class _StringReader:
    """Finds where a string value ends in a JSON-ish text whose inner quotes may be unescaped.

    A quote ends the string when the structure can go on after it (``, } ] )``, a comment, the
    end; in an object also the next ``"key":``, and at the end of a line the next value). A
    comma counts only when what follows it can start the next member (in an object a key, maybe
    after a stray word), so ``"He said "hi", then left"`` is one string. Other quotes are
    content; the reader follows the quotations they open and close (a quote after a space, an
    opening bracket or a CJK character opens one; the next quote after a non-space closes it).
    Two quotes in a row close a quotation and then the string (``"他说"你好""``) when one is
    open; otherwise they are ambiguous (``["a" "b"]``: two items, or one with inner quotes?).
    An inner quote left unpaired is content, as written (``"Ana says "urgent", "floor": 3``).

    Faults it refuses to guess past, each a :class:`RepairError` whose text tells the model what
    to fix:

    - a quote after a comma or a line break that starts ``"key":`` (``"hello, "b": "x"``), or a
      string whose text ends with ``"key": value`` (``"hello "b": "x"``): the string lost its
      closing quote and would swallow the next member;
    - in a list, an unpaired inner quote where the string could end (``["a "b", "c"]``: two
      items or three?);
    - doubled quotes around the whole text (``""text""``), or an opening quote written twice
      before a space (``"" text"``). An opening quote written twice before the text, with no
      other quote in it (``""text"``), is dropped: that string has no other reading.

    In a single-quoted string a quote after a space is as often an apostrophe ('90s, rock 'n'
    roll) as a quotation, so only a quote written first in it opens one there.
    """

    def __init__(self, raw: str, start: int, container: str, key: str | None, *, nested: bool):
        self.raw, self.start, self.container, self.nested = raw, start, container, nested
        self.what = f"the value of {_shown(key)}" if key is not None else "a string in a list"
        self.saw_bracket = False
        # Inside a single-quoted string a lone quote after a space is an apostrophe as often as
        # a quotation ('90s, rock 'n' roll): only its first character can open one there.
        self.apostrophes = raw[start] in "'‘’"

    def end(self) -> tuple[int, bool]:
        raw, start, n = self.raw, self.start, len(self.raw)
        stops, closers = _STOPS[raw[start]], _CLOSERS_OF[raw[start]]
        depth = 0  # brackets open in the text so far (nested mode)
        inner = 0  # quotes taken as content
        open_at: int | None = None  # the quote that opened the current quotation
        lead_closed_at: int | None = None  # where a quotation opened first thing in it closed
        pos = start + 1
        while True:
            m = stops.match(raw, pos)
            q = m.end() if m else pos
            if q >= n:
                raise ValueError("unclosed string")
            if self.nested:
                depth = self._depth(depth, pos, q)
            j = q + 1
            while j < n and raw[j].isspace():
                j += 1
            follow = raw[j] if j < n else ""
            if raw[q] in closers and self._ends_here(q, j, follow, depth):
                if open_at is not None and follow == ")" and self.container != "(":
                    open_at, inner, pos = None, inner + 1, q + 1  # print("a")
                    continue
                self._check_no_member_inside(q)
                if open_at == start + 1 and inner == 1:  # ""text": the opening quote twice
                    return q + 1, True
                if open_at is not None and self.container != "{":  # ["a "b", "c"]: 2 items or 3?
                    raise RepairError(
                        f"{self.what} ({_excerpt(raw, start, q + 1)}) has an inner quote that "
                        "is never closed, so it is unclear where the item ends (write a quote "
                        'inside a string as \\", and end every string with a quote)'
                    )
                return self._closed(q, lead_closed_at)  # (an unpaired inner quote is content)
            if follow in QUOTES:
                if j == q + 1 and raw[j] in closers and open_at is not None:  # "你好"" : the
                    if open_at == start + 1:  # quotation closes, then the string
                        lead_closed_at = q
                    open_at, inner, pos = None, inner + 1, q + 1
                    continue
                raise RepairError(
                    f"{self.what} has two quotes in a row where it could end "
                    f"({_excerpt(raw, start, j + 1)}): one string or two? (write a quote inside "
                    'a string as \\", and put a comma between two strings)'
                )
            after_space = self.apostrophes and raw[q - 1].isspace()
            if (depth == 0 and self._after_member_break(q, after_space) and (
                    _QUOTED_KEY_AHEAD.match(raw, q) if self.container == "{"
                    else _QUOTED_ITEM_AHEAD.match(raw, q))):
                what = "next key" if self.container == "{" else "next item"
                raise RepairError(
                    f"{self.what} ({_excerpt(raw, start, q).rstrip()} …) has no closing "
                    f"quote, so it runs into the {what} {_shown(_key_text(raw, q))} (end every "
                    'string with a quote, and write a quote inside a string as \\")'
                )
            prev = raw[q - 1]
            if open_at is not None and not prev.isspace():
                if open_at == start + 1:
                    lead_closed_at = q
                open_at = None
            elif open_at is None and self._opens(q):
                open_at = q
            inner += 1
            pos = q + 1

    def _check_no_member_inside(self, q: int) -> None:
        """Raise if the string's text ends with ``"key": value`` (``"hello "b": "x"``): the
        string lost its closing quote (and a comma) and swallowed the next member."""
        raw, start = self.raw, self.start
        colon = max(raw.rfind(":", start + 1, q), raw.rfind("：", start + 1, q))
        if colon == -1 or not _SCALAR.fullmatch(raw[colon + 1:q].strip()):
            return
        key = _KEY_BEFORE.search(raw, max(start + 1, colon - 70), colon)
        if key is None or key.start() == start + 1:
            return
        raise RepairError(
            f"{self.what} ({_excerpt(raw, start, q + 1)}) ends with {_shown(key.group(1))} and a "
            "value: the string lost its closing quote (and a comma) before that key and "
            'swallowed it (end every string with a quote, and write a quote inside a string '
            'as \\")'
        )

    def _closed(self, q: int, lead_closed_at: int | None) -> tuple[int, bool]:
        """The end at ``q``, unless the text starts with a quote that shows doubled quotes."""
        raw, start = self.raw, self.start
        if q > start + 1 and raw[start + 1] in _CLOSERS_OF[raw[start]]:
            if lead_closed_at == q - 1:  # ""text"": the quotes doubled, or part of the value?
                raise RepairError(
                    f"{self.what} has doubled quotes at both ends ({_excerpt(raw, start, q + 1)}"
                    f"; write {_shown(raw[start + 2:q - 1])}, or "
                    f"{json.dumps(raw[start + 1:q], ensure_ascii=False)} if the quotes "
                    "belong to the value)"
                )
            if lead_closed_at is None:  # "" text": a quote, then a space
                raise RepairError(
                    f"{self.what} opens with two quotes ({_excerpt(raw, start, q + 1)}; write "
                    'one quote at each end of a string, and a quote inside it as \\")'
                )
        return q + 1, False

    def _ends_here(self, q: int, j: int, follow: str, depth: int) -> bool:
        """The quote at ``q`` can end the string: what follows it (``follow``, at ``j``) goes
        on with the structure."""
        raw, container = self.raw, self.container
        if follow == "":
            return True
        if depth > 0:  # inside brackets of the text itself: {"x": 1} in an answer
            return False
        if follow in _STRUCTURE_AFTER or raw.startswith(("//", "/*"), j):
            return True
        if follow in ",，":
            after = _MEMBER_AFTER_COMMA if container == "{" else _ITEM_AFTER_COMMA
            return after.match(raw, j + 1) is not None
        if container == "{" and _QUOTED_KEY_AHEAD.match(raw, q + 1):
            return True
        return _NEXT_LINE_VALUE.match(raw, q + 1) is not None  # a comma missing at a line end

    def _depth(self, depth: int, pos: int, q: int) -> int:
        """``depth`` after the text ``raw[pos:q]`` (brackets opened minus closed, never < 0)."""
        segment = self.raw[pos:q]
        opened = segment.count("{") + segment.count("[")
        closed = segment.count("}") + segment.count("]")
        if opened or closed:
            self.saw_bracket = True
            depth = max(0, depth + opened - closed)
        return depth

    def _after_member_break(self, q: int, after_space: bool) -> bool:
        """The text before the quote at ``q`` ends with a comma or a line break (then spaces),
        where the next member of the structure would start (or with a space, ``after_space``:
        in a single-quoted string, where quotations are not followed)."""
        raw, i = self.raw, q - 1
        if after_space:
            return True
        while i > self.start and raw[i] in " \t\r":
            i -= 1
        return i > self.start and raw[i] in ",，\n"

    def _opens(self, q: int) -> bool:
        """The quote at ``q`` opens a quotation: after the string's start, a space, an opening
        bracket or a CJK character, and before a character that is neither a space nor a
        quote."""
        raw = self.raw
        nxt = raw[q + 1] if q + 1 < len(raw) else ""
        if not nxt or nxt.isspace() or nxt in QUOTES or (self.apostrophes and q != self.start + 1):
            return False
        prev = raw[q - 1]
        return (q - 1 == self.start or prev.isspace() or prev in _OPENING_PUNCTUATION
                or is_cjk(prev))


def _skip_trailing_ellipsis(raw: str, i: int, stack: list[str], last: str) -> int:
    """Past a ``...`` that ends a list after at least one item (``[1, 2, ...]``)."""
    end = i + (1 if raw[i] == "…" else 3)
    j = end
    while j < len(raw) and raw[j].isspace():
        j += 1
    if not stack or stack[-1] == "{" or last != "comma" or raw[j:j + 1] != _CLOSERS[stack[-1]]:
        raise ValueError("a ... placeholder")
    return j


def _arithmetic(raw: str, i: int) -> tuple[str, int, str] | None:
    """A value written as arithmetic on numbers (``3 * 1000``, ``(40 + 2.5) * 4``) at
    ``i``, computed by the calculator's ``evaluate`` (floats to 12 significant
    digits, so ``0.1 * 3`` is 0.3): ``(JSON number, end, the repair in words)``.

    ``None`` for a plain number, for anything that does not end where a value ends (``,``
    ``}`` ``]``), for a ``-`` between digits without spaces (a date ``2030-01-02`` or a range
    ``10-20`` is not a subtraction) and for a sign glued to the next number only (``[1 -2]``
    is two values with a comma missing).
    """
    m = _ARITHMETIC.match(raw, i)
    if m is None or not _OPERATOR.search(m.group()) or _NOT_ARITHMETIC.search(m.group()):
        return None
    end = m.end()
    spaces = _SPACES.match(raw, end)
    after = spaces.end() if spaces else end
    if raw[after:after + 1] not in ("", ",", "}", "]"):
        return None
    try:
        value = evaluate(m.group())
    except (ValueError, ArithmeticError):
        return None
    if isinstance(value, float):
        if not math.isfinite(value):
            return None
        value = float(f"{value:.12g}")
    return json.dumps(value), end, f"arithmetic computed ({m.group().strip()} = {value})"


def _json_number(text: str, repairs: dict[str, None]) -> str:
    sign = "-" if text[0] == "-" else ""
    body = text.lstrip("+-")
    mantissa, e, exponent = body.partition("e") if "e" in body else body.partition("E")
    fixed = mantissa
    if fixed.startswith("."):
        fixed = "0" + fixed
    if fixed.endswith("."):
        fixed += "0"
    if fixed != mantissa or text[0] == "+":
        repairs["numbers written .5, 5. or +5"] = None
    return sign + fixed + e + exponent


def _json_literal(word: str, repairs: dict[str, None]) -> str:
    if word in ("true", "false", "null", "NaN", "Infinity"):
        return word
    literal = _LITERALS.get(word.lower())
    if literal is None:
        raise ValueError(f"bare word {word!r}")
    if word in ("True", "False", "None"):
        repairs["Python literals True/False/None"] = None
    else:
        repairs["literals in another letter case (TRUE, Null)"] = None
    return literal


_BRACE_RUN = re.compile(r"""\{+|\}+|["'“”]""")


def _undouble_braces(raw: str, repairs: dict[str, None]) -> str:
    """``{{"a": {{}}}}`` -> ``{"a": {}}`` when every run of braces outside strings is doubled
    (a ``str.format`` template copied as written); otherwise ``raw`` unchanged."""
    if not raw.startswith("{{"):
        return raw
    out, pos = [], 0
    while True:
        m = _BRACE_RUN.search(raw, pos)
        if m is None:
            out.append(raw[pos:])
            break
        out.append(raw[pos:m.start()])
        token, pos = m.group(), m.end()
        if token[0] in "{}":
            if len(token) % 2:
                return raw
            out.append(token[: len(token) // 2])
        elif prev_significant(raw, m.start()) in VALUE_START:
            end = string_end(raw, m.start())
            if end is None:
                return raw
            out.append(raw[m.start():end])
            pos = end
        else:
            out.append(token)
    repairs["doubled braces"] = None
    return "".join(out)
