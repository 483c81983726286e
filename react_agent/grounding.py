"""Is a tool call about the task at all? A check on the values a call carries.

A small model calls a tool where none fits: a haiku request answered by looking up the weather
in a city the task never names, a unit question sent to a contact search as "Time Converter".
What gives such calls away is that none of their values comes from anywhere: not the user's
messages, not an earlier observation. :func:`off_task` finds such a call so the loop can hold it
back once and say why; a call the model sends again unchanged runs (values legitimately not in
the task exist: a name the model translated, a code it knows).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from .toolbox import Tool
from .types import ToolCall

_WORD = re.compile(r"[^\W\d_]{3,}")
_CJK_RUN = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]+")
_NUMBER = re.compile(r"\d+(?:\.\d+)?")
_CODE = re.compile(r"[A-Z]{2,5}(?:[./-][A-Z0-9]{1,4})?")
_COMMON = frozenset((
    "the", "and", "for", "with", "from", "this", "that", "what", "how", "are", "you", "your",
    "can", "will", "not", "but", "all", "any", "was", "has", "have", "its", "our", "out", "who",
    "why",
))
"""English words too common to tie a value to the task."""


def off_task(call: ToolCall, tool: Tool | None, known: str) -> list[str]:
    """The values of ``call`` that tie it to nothing, when none of its values ties it to
    ``known`` (the user's messages and the observations so far); ``[]`` when the call is
    grounded or cannot be judged.

    A string value ties the call to ``known`` when it, one of its words (3 letters or more, not
    a common English word) or one of its two-character CJK pieces occurs there (case ignored);
    a number does when ``known`` writes it (thousands separators ignored). Values that say
    nothing either way are left out: enum choices (from ``tool``'s schema), short upper-case
    codes (``USD``, ``AAPL``), strings without 3 letters or 2 CJK characters, booleans and
    whole numbers up to 10. A call is judged only by its string values: numbers only ground it
    (a model may compute an amount in its head)."""
    folded = known.casefold()
    words = set(_WORD.findall(folded))
    numbers = _numbers(known)
    loose: list[str] = []
    enums = _enum_arguments(tool)
    for where, value in _values(call.args, ""):
        if isinstance(value, bool) or where.split(".")[0].split("[")[0] in enums:
            continue
        if isinstance(value, int | float):
            if _numbers(str(value)) & numbers and abs(value) > 10:
                return []
            continue
        text = str(value).strip()
        if _numbers(text) - {"0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10"} & numbers:
            return []
        if _CODE.fullmatch(text) or not _judgeable(text):
            continue
        if _ties(text, folded, words):
            return []
        loose.append(text)
    return loose


def _ties(text: str, folded: str, words: set[str]) -> bool:
    value = text.casefold()
    if value in folded:
        return True
    if any(w in words for w in _WORD.findall(value) if w not in _COMMON and not _CJK_RUN.match(w)):
        return True
    pieces = (run[i:i + 2] for run in _CJK_RUN.findall(value) for i in range(len(run) - 1))
    return any(piece in folded for piece in pieces)


def _judgeable(text: str) -> bool:
    return any(len(run) >= 2 for run in _CJK_RUN.findall(text)) or bool(
        [w for w in _WORD.findall(text) if not _CJK_RUN.match(w)])


def _enum_arguments(tool: Tool | None) -> set[str]:
    properties = (tool.parameters.get("properties") or {}) if tool else {}
    return {name for name, spec in properties.items()
            if isinstance(spec, dict) and ("enum" in spec or "const" in spec)}


def _values(value: Any, where: str) -> Iterator[tuple[str, Any]]:
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _values(item, f"{where}.{key}" if where else str(key))
    elif isinstance(value, list):
        for n, item in enumerate(value):
            yield from _values(item, f"{where}[{n}]")
    elif value is not None:
        yield where, value


def _numbers(text: str) -> set[str]:
    """The numbers written in ``text`` (thousands separators dropped, ``12.50`` as ``12.5``)."""
    found = _NUMBER.findall(re.sub(r"(?<=\d),(?=\d{3})", "", text))
    return {n.rstrip("0").rstrip(".") if "." in n else n.lstrip("0") or "0" for n in found}
