"""A candidate loaded as JSON: strictly (control characters allowed in strings, a key given twice
with two values refused), else as the text of a JSON string when all its quotes are escaped
(``{\\"thought\\": ...}``), else rewritten by :func:`~._repair.repair_json` and loaded."""

from __future__ import annotations

import json
import re
from typing import Any

from ._repair import RepairError, repair_json

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


class DuplicateKey(ValueError):
    """A JSON object that gives one key twice with different values: JSON does not say which
    one counts (a decoder keeps the last), so neither is taken."""


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """An object's members as a dict; a key given twice must have the same value both times."""
    value = dict(pairs)
    if len(value) < len(pairs):
        first: dict[str, Any] = {}
        for key, item in pairs:
            if key in first and first[key] != item:
                raise DuplicateKey(
                    f'the key "{key[:40]}" appears twice in one object with different values '
                    "(JSON does not say which one counts); give each key once")
            first.setdefault(key, item)
    return value


_LENIENT = json.JSONDecoder(strict=False, object_pairs_hook=_object)


def loads_lenient(text: str) -> Any:
    """``json.loads(text, strict=False)`` (control characters allowed in strings), with one
    decoder for every call instead of a new one each time; a key given twice in one object
    with different values is an error, not the last one silently.

    Raises:
        json.JSONDecodeError: ``text`` is not JSON (or starts with a BOM, as for ``json.loads``).
        DuplicateKey: an object gives one key twice with different values.
        RecursionError: it is nested deeper than Python's stack.
    """
    if text.startswith("\ufeff"):
        raise json.JSONDecodeError("Unexpected UTF-8 BOM (decode using utf-8-sig)", text, 0)
    return _LENIENT.decode(text)


def decode_at(text: str, start: int) -> tuple[Any, int]:
    """The JSON value that starts at ``text[start]`` and where it ends -> ``(value, end)``,
    read like :func:`loads_lenient` (control characters allowed in strings, a key given twice
    with two values refused); text after the value is left alone.

    Raises:
        json.JSONDecodeError: no JSON value starts there.
        DuplicateKey: an object gives one key twice with different values.
        RecursionError: it is nested deeper than Python's stack.
    """
    value, end = _LENIENT.raw_decode(text, start)
    return value, end


def load_json(text: str) -> Any:
    """``text`` as strict JSON (control characters allowed in strings), else :data:`FAIL`."""
    if _has_raw_path(text):
        return FAIL
    try:
        return loads_lenient(text)
    except (ValueError, RecursionError):
        return FAIL


def load_or_repair(raw: str) -> tuple[Any, tuple[str, ...], str]:
    """Load ``raw`` as JSON, else repair its dialect and load it -> (value, repairs, error)."""
    error = "a Windows path with raw backslashes"
    try:
        if not _has_raw_path(raw):
            return loads_lenient(raw), (), ""
    except RecursionError:
        return FAIL, (), "it is nested too deeply"
    except json.JSONDecodeError as exc:
        before = json.dumps(" ".join(raw[max(0, exc.pos - 30):exc.pos].split()),
                            ensure_ascii=False)
        error = f"{exc.msg} (line {exc.lineno}, column {exc.colno}, right after {before})"
    except ValueError as exc:  # e.g. an integer too long to convert
        error = str(exc)
    escaped = _unescaped_envelope(raw)
    if escaped is not None:  # {\"thought\": ...}: an envelope written as a JSON string's text
        value, fixes, _ = load_or_repair(escaped)
        if value is not FAIL:
            return value, ("read an envelope written with escaped quotes (\\\")", *fixes), ""
    try:
        fixed, repairs = repair_json(raw)
        return loads_lenient(fixed), tuple(repairs), ""
    except (RepairError, DuplicateKey) as exc:  # a fault recognised: say which, not where
        return FAIL, (), str(exc)  # json.loads stopped
    except (ValueError, RecursionError):
        return FAIL, (), error


# An object or list whose first string is written escaped ({\"a\": 1}, {\n  \"a\": 1}): the text
# of a JSON string (an envelope the model encoded once more), read by decoding that string.
_ESCAPED_START = re.compile(r'[{\[](?:\s|\\[nrt])*\\"')


def _unescaped_envelope(raw: str) -> str | None:
    """``raw`` decoded as the text of a JSON string, when it starts like an object whose quotes
    are all escaped (``{\\"thought\\": ...}``); else ``None``."""
    if not _ESCAPED_START.match(raw):
        return None
    try:
        text = json.loads(f'"{raw}"', strict=False)
    except (ValueError, RecursionError):  # an unescaped quote in it: not one escaped string
        return None
    return text if isinstance(text, str) else None
