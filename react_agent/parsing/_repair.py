"""The repairs: near-JSON (the dialects models write) read as the JSON value it means.

:func:`load_or_repair` loads a candidate as JSON and, failing that, rewrites it with
:func:`repair_json` (Python-dict quotes and literals, trailing commas, comments, bare keys, missing
commas or colons, doubled braces, fullwidth punctuation, raw backslashes, unescaped inner quotes,
tuples, ...) and loads the result. Only rewrites whose meaning is certain are made; anything else
is left invalid.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from typing import Any

from ..tools.builtin._calculator import evaluate
from ..types import JSON_NUMBER
from ._scan import KEY_AHEAD, STRING_BODY, VALUE_START, prev_significant, string_end

FAIL: Any = object()
"""What :func:`load_json` and :func:`load_or_repair` give for text that is not JSON (``None`` is
a JSON value)."""


# A string that starts with a drive letter and an escape of a control character: JSON would read
# "C:\new" as C: and a line break, so such text is read by the repair, which keeps a raw path's
# backslashes (see _raw_words).
_RAW_PATH_AHEAD = re.compile(r"""["'][A-Z]:\\(?:[bfnrt0-7av]|x[01]|u00[01])""")


def _has_raw_path(text: str) -> bool:
    # (most text has no backslash at all: that test costs next to nothing)
    return "\\" in text and ":\\" in text and _RAW_PATH_AHEAD.search(text) is not None


def load_json(text: str) -> Any:
    """``text`` as strict JSON (control characters allowed in strings), else :data:`FAIL`."""
    if _has_raw_path(text):
        return FAIL
    try:
        return json.loads(text, strict=False)
    except (ValueError, RecursionError):
        return FAIL


def load_or_repair(raw: str) -> tuple[Any, tuple[str, ...], str]:
    """Load ``raw`` as JSON, else repair its dialect and load it -> (value, repairs, error)."""
    error = "a Windows path with raw backslashes"
    try:
        if not _has_raw_path(raw):
            return json.loads(raw, strict=False), (), ""
    except RecursionError:
        return FAIL, (), "it is nested too deeply"
    except json.JSONDecodeError as exc:
        before = json.dumps(" ".join(raw[max(0, exc.pos - 30):exc.pos].split()),
                            ensure_ascii=False)
        error = f"{exc.msg} (line {exc.lineno}, column {exc.colno}, right after {before})"
    except ValueError as exc:  # e.g. an integer too long to convert
        error = str(exc)
    try:
        fixed, repairs = repair_json(raw)
        return json.loads(fixed, strict=False), tuple(repairs), ""
    except (ValueError, RecursionError):
        return FAIL, (), error


_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_ARITHMETIC = re.compile(r"[-+(\d.][\d.\s()+\-*/%]*[\d.)]")
_OPERATOR = re.compile(r"[\d.)]\s*(?:[-+*/%])")
_NOT_ARITHMETIC = re.compile(r"\d-\d|[\d.)]\s+[-+][\d.(]")  # 2030-01-02, 10-20; [1 -2]
_NUMBER = JSON_NUMBER
_LITERALS = {"true": "true", "false": "false", "null": "null", "none": "null"}
_CLOSERS = {"{": "}", "[": "]", "(": ")"}
_QUOTED_KEY_AHEAD = re.compile(r"""\s*["'“][^"'”\n]{0,64}["'”]\s*[:：]""")
_NEXT_LINE_VALUE = re.compile(  # a line break, then what can only start a JSON value
    r"""[ \t\r]*\n\s*(?:["'“{\[(\d-]|(?:true|false|null|True|False|None)\b)"""
)
_JSON_ESCAPES = frozenset('"\\/bfnrtu')


def repair_json(raw: str) -> tuple[str, list[str]]:
    """Rewrite a JSON-ish value into strict JSON in one linear pass that follows the structure
    (which brackets are open, whether a key, a colon, a value or a comma comes next).

    Read, because their meaning is certain: single and curly quotes, ``True/False/None`` and
    other letter cases of the literals, unquoted keys, trailing commas, comments, fullwidth
    ``：`` ``，``, a missing comma between members or a missing colon after a key, doubled braces
    (``{{ }}`` from ``str.format`` templates), ``.25`` / ``1.`` / ``+1``, Python tuples as lists,
    a trailing ``...`` in a list, unescaped quotes inside a string whose end is still
    unambiguous, raw backslashes (see :func:`_json_string`), arithmetic on numbers written as a
    value (see :func:`_arithmetic`), a ``]`` or ``)`` inside a value where no ``[`` or ``(`` is
    open (a call first written as a list, then as one object: ``{"name": ..., "args": {}}]}``).

    Raises:
        ValueError: anything else (bare words, placeholders, unclosed strings or comments, two
            readings of the quotes).
    """
    repairs: dict[str, None] = {}
    raw = _undouble_braces(raw, repairs)
    out: list[str | tuple[str, str]] = []  # strings stay (content, quote) until the end
    stack: list[str] = []  # the open brackets
    last = "start"  # what came last: start, open, comma, key, colon, value
    comma = -1  # where in ``out`` the last comma is (dropped if a trailing one)
    i, n = 0, len(raw)
    while i < n:
        c = raw[i]
        if c.isspace():
            out.append(c)
            i += 1
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
            out.append(":")
            last = "colon"
            repairs["missing colons"] = None
        container = stack[-1] if stack else ""
        if container == "{" and last in ("open", "comma"):
            i = _read_key(raw, i, out, repairs)
            last = "key"
            continue
        if c in "\"'“”":
            end = _value_string_end(raw, i, container)
            out.append((raw[i + 1:end - 1], c))
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
        t if isinstance(t, str) else _json_string(t[0], t[1], repairs, python) for t in out
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


def _read_key(raw: str, i: int, out: list[str | tuple[str, str]], repairs: dict[str, None]) -> int:
    """Read the key at ``i`` into ``out``; the index after it. A quoted key ends at its first
    closing quote; a bare identifier is a key too (JSON5)."""
    c = raw[i]
    if c in STRING_BODY:
        m = STRING_BODY[c].match(raw, i + 1)
        close = m.end() if m else i + 1
        if close >= len(raw):
            raise ValueError("unclosed key")
        out.append((raw[i + 1:close], c))
        return close + 1
    m = _IDENT.match(raw, i)
    if m is None:
        raise ValueError(f"unexpected character {c!r} where a key belongs")
    out.append((m.group(), '"'))
    repairs["unquoted keys"] = None
    return m.end()


def _value_string_end(raw: str, start: int, container: str) -> int:
    """The end of the string value at ``start``: the first quote after which the structure can
    go on (``, } ] )``, a comment, the end; in an object also the next ``"key":``, and at the end
    of a line the next value, when the comma is missing). Other quotes are content, except a
    quote followed by another quote: that is ambiguous (``["a" "b"]``: two items, or one with
    inner quotes?).

    Raises:
        ValueError: unclosed, or ambiguous.
    """
    body, n, pos = STRING_BODY[raw[start]], len(raw), start + 1
    while True:
        m = body.match(raw, pos)
        close = m.end() if m else pos
        if close >= n:
            raise ValueError("unclosed string")
        j = close + 1
        while j < n and raw[j].isspace():
            j += 1
        follow = raw[j] if j < n else ""
        if follow in ("", ",", "}", "]", ")", "，", "#") or raw.startswith(("//", "/*"), j):
            return close + 1
        if container == "{" and _QUOTED_KEY_AHEAD.match(raw, close + 1):
            return close + 1
        if _NEXT_LINE_VALUE.match(raw, close + 1):  # a missing comma at the end of a line
            return close + 1
        if follow in "\"'“”":
            raise ValueError("ambiguous quotes: one string or two?")
        pos = close + 1


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
    if raw[end:].lstrip()[:1] not in ("", ",", "}", "]"):
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


_PY_ESCAPES = {"a": "\\u0007", "v": "\\u000b"}
_PY_ESCAPE = re.compile(r"x[0-9a-fA-F]{2}|[0-7]{1,3}|U[0-9a-fA-F]{8}|[av]")
_WORD = re.compile(r"\S+")
_PATH = re.compile(r'[A-Z]:\\(?!\\)[^<>:"|?*\n]*')  # C:\... and nothing a path cannot hold


def _raw_words(content: str, python: bool) -> list[tuple[int, int]]:
    """The spans of a string whose backslashes were written raw: all of it when it is a Windows
    path (a drive letter and one backslash, nothing a path cannot hold, ``C:\\Program
    Files\\new``) whose escapes would give a control character or are unknown; else each
    word (run without whitespace) with an escape JSON does not know (``\\d``, ``\\p``). In
    those, ``\\n`` ``\\r`` ``\\t`` are a backslash and a letter too: ``D:\\reports\\new`` is a
    path, not a line break."""
    if _PATH.fullmatch(content) and any(
        not known or _escapes_a_control(content, i, python)
        for i, _, known in _escapes(content, python)
    ):
        return [(0, len(content))]
    return [
        m.span() for m in _WORD.finditer(content)
        if "\\" in m.group() and _has_unknown_escape(m.group(), python)
    ]


def _escapes(text: str, python: bool) -> Iterator[tuple[int, str, bool]]:
    """``(position, letter, known)`` for each backslash escape in ``text`` (JSON's, and
    Python's in Python-style replies)."""
    i = text.find("\\")
    while 0 <= i < len(text) - 1:
        letter = text[i + 1]
        known = (
            letter in "\\\"'/bfnrt"
            or (letter == "u" and _is_hex4(text, i + 2))
            or (python and _PY_ESCAPE.match(text, i + 1) is not None)
        )
        yield i, letter, known
        i = text.find("\\", i + 2)


def _escapes_a_control(text: str, i: int, python: bool) -> bool:
    """True if the escape at ``text[i]`` decodes to a control character (``\\n``, ``\\u001f``,
    and in Python style ``\\0``, ``\\x07``, ``\\a``...)."""
    letter = text[i + 1]
    if letter in "bfnrt":
        return True
    if letter == "u" and _is_hex4(text, i + 2):
        return _is_control(int(text[i + 2:i + 6], 16))
    py = _PY_ESCAPE.match(text, i + 1) if python else None
    if py is None:
        return False
    code = py.group()
    if code in ("a", "v"):
        return True
    return _is_control(int(code[1:], 16) if code[0] in "xU" else int(code, 8))


def _is_control(codepoint: int) -> bool:
    return codepoint < 0x20 or 0x7F <= codepoint < 0xA0


def _has_unknown_escape(word: str, python: bool) -> bool:
    return any(not known for _, _, known in _escapes(word, python))


def _json_string(content: str, quote: str, repairs: dict[str, None], python: bool) -> str:
    """The JSON literal for the string ``content`` that was delimited by ``quote``.

    Valid JSON escapes stay; in Python-style replies Python's own escapes (``\\xHH``, octal,
    ``\\UHHHHHHHH``, ``\\a``, ``\\v``) are decoded. Any other backslash is kept literally
    (Python's rule for unknown escapes), and so is every backslash of a word that shows it was
    written raw (see :func:`_raw_words`), so regexes and Windows paths survive.
    """
    if quote == "'":
        repairs["single-quoted strings"] = None
    elif quote in "“”":
        repairs["curly quotes as delimiters"] = None
    raw_words = _raw_words(content, python) if "\\" in content else []
    if raw_words:
        repairs["raw backslashes kept"] = None
    word = 0
    out: list[str] = ['"']
    i, n = 0, len(content)
    while i < n:
        c = content[i]
        if c == "\\" and i + 1 < n:
            nxt = content[i + 1]
            while word < len(raw_words) and raw_words[word][1] <= i:
                word += 1
            raw = word < len(raw_words) and raw_words[word][0] <= i
            py = _PY_ESCAPE.match(content, i + 1) if python and not raw else None
            if nxt in "'\"" and (raw or nxt == "'"):
                out.append("'" if nxt == "'" else '\\"')
            elif raw:
                out.append("\\\\")
                i += 1
                continue
            elif py:
                code = py.group()
                char = _PY_ESCAPES.get(code) or json.dumps(
                    chr(int(code[1:], 16) if code[0] in "xU" else int(code, 8))
                )[1:-1]
                out.append(char)
                i = py.end()
                continue
            elif nxt in _JSON_ESCAPES and not (nxt == "u" and not _is_hex4(content, i + 2)):
                out.append(c + nxt)
            else:
                out.append("\\\\" + nxt)
                repairs["invalid escapes kept as backslashes"] = None
            i += 2
            continue
        if c == "\\":
            out.append("\\\\")
        elif c == '"':
            out.append('\\"')
            if quote == '"':
                repairs["unescaped quotes inside a string"] = None
        elif c == "\n":
            out.append("\\n")
        elif c == "\t":
            out.append("\\t")
        elif c == "\r":
            out.append("\\r")
        else:
            out.append(c)
        i += 1
    out.append('"')
    return "".join(out)


def _is_hex4(s: str, i: int) -> bool:
    return len(s) >= i + 4 and all(ch in "0123456789abcdefABCDEF" for ch in s[i:i + 4])
