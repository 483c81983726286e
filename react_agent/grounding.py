"""Is a tool call tied to the task? Checks on the values a call carries, before it runs.

Two faults of small models show in the values alone. They make contact details up: an email
sent to a guessed address, a text to a number from nowhere (:func:`ungrounded`, refused until
the value is looked up). And they call a tool where none fits: a haiku request answered by
looking up the weather in a city the task never names, a unit question sent to a contact search
as "Time Converter": none of the call's values comes from the user's messages or an earlier
observation (:func:`off_task`, held back once and said why; the same call sent again runs,
since values legitimately not in the task exist: a name the model translated, a code it knows).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterator
from typing import Any

from .toolbox import Tool
from .types import ToolCall, ToolResult

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


_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_PHONE = re.compile(r"\+?\d[\d ()-]{5,}\d")
_DATE = re.compile(r"\d{4}-\d{1,2}-\d{1,2}|\d{1,2}-\d{1,2}-\d{4}")


def ungrounded(call: ToolCall, known: str, found: str = "") -> ToolResult | None:
    """A refusal to run ``call`` when one of its string arguments holds an email address or a
    phone number (7 digits or more) found nowhere in ``known`` (the task, the system prompt and
    the tool results so far): a small model makes such values up instead of looking them up
    (seen: an email sent to a guessed address). The refusal names the addresses or numbers
    that ``found`` holds (the task and the successful tool results), closest first, so a model
    that looked the value up but kept its guess sees which one to use. ``None`` when every such
    value is grounded."""
    known_mail = known.casefold()
    known_digits = [re.sub(r"\D", "", m) for m in _PHONE.findall(known)]
    for where, text in _values(call.args, ""):
        if not isinstance(text, str):
            continue
        for mail in _EMAIL.findall(text):
            if mail.casefold() not in known_mail:
                return _not_grounded(call, where, mail, "address", _EMAIL.findall(found))
        for phone in _PHONE.findall(text):
            digits = re.sub(r"\D", "", phone)
            seen = any(digits in k or k in digits for k in known_digits if len(k) >= 7)
            if len(digits) >= 7 and not _DATE.search(phone) and not seen:
                numbers = [p.strip() for p in _PHONE.findall(found)
                           if len(re.sub(r"\D", "", p)) >= 7 and not _DATE.search(p)]
                return _not_grounded(call, where, phone, "number", numbers)
    return None


def _not_grounded(
    call: ToolCall, where: str, value: str, kind: str, candidates: list[str]
) -> ToolResult:
    text = (f"Error: {call.name} was not run: the {kind} {value!r} in {where} is in neither the "
            f"task nor any tool result. Do not make up an {kind}: take it from the task, or "
            "look it up with a tool first, then call again with the value it returns.")
    close = sorted(dict.fromkeys(candidates),
                   key=lambda c: -difflib.SequenceMatcher(None, value, c).ratio())[:3]
    if close:
        text += (f" The task and the tool results hold: {', '.join(map(repr, close))}; use "
                 "the one that belongs to whom the task means.")
    return ToolResult(call, text, ok=False, error="ungrounded")


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
