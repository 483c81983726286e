"""A JSON string's text as a model writes it: its backslash escapes (JSON's, Python's), and the
backslashes it meant raw (a Windows path, a regex's ``\\d``), kept as written."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

_JSON_ESCAPES = frozenset('"\\/bfnrtu')
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


def has_unknown_escape(word: str) -> bool:
    """``word`` (a string's text as written) holds a backslash escape JSON does not know."""
    return _has_unknown_escape(word, False)


def _has_unknown_escape(word: str, python: bool) -> bool:
    return any(not known for _, _, known in _escapes(word, python))


def decode_string(content: str) -> str:
    """The text of a double-quoted string whose raw content (between the quotes, escapes as
    written) is ``content``, decoded as the repair decodes it: JSON's escapes, raw control
    characters kept, and backslashes a model wrote raw (``\\d``, ``C:\\new``) kept."""
    value: str = json.loads(json_string(content, '"', {}, False), strict=False)
    return value


def json_string(content: str, quote: str, repairs: dict[str, None], python: bool) -> str:
    """The JSON literal for the string ``content`` that was delimited by ``quote``.

    Valid JSON escapes stay; in Python-style replies Python's own escapes (``\\xHH``, octal,
    ``\\UHHHHHHHH``, ``\\a``, ``\\v``) are decoded. Any other backslash is kept literally
    (Python's rule for unknown escapes), and so is every backslash of a word that shows it was
    written raw (see :func:`_raw_words`), so regexes and Windows paths survive.
    """
    if quote == "'":
        repairs["single-quoted strings"] = None
    elif quote in "“”„‘’":
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
