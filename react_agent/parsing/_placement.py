"""Where a JSON value stands in a reply, which decides whether it may be the action: in a fence,
on a line of its own, beside prose, or quoted inside a sentence or a ``Thought:`` line."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from ._envelope import WRAPPER_KEYS
from ._vocabulary import DECORATION, SENTENCE_END, TAG, THOUGHT_LABEL

FENCE = re.compile(r"^[ \t]*(```|~~~)[ \t]*([A-Za-z0-9_+.-]*)[ \t]*$", re.MULTILINE)
JSON_FENCES = ("", "json", "json5", "jsonc")
_TRAILING_PUNCTUATION = " \t.,;:!?)]}\"'*_`"
_ACTION_LABEL = re.compile(r"\bAction(?:[ \t]+Input)?[ \t]*[:：]$", re.IGNORECASE)
_INLINE_FENCE_OPEN = re.compile(r"(?:```|~~~)[ \t]*([A-Za-z0-9_+.-]*)[ \t]*$")
_INLINE_FENCE_CLOSE = re.compile(r"[ \t]*(?:```|~~~|$)")
_CONTEXT = 200  # characters of the line around a candidate that decide how it is placed
_FENCE_LINE = 80  # no fence line (```json) is longer


def placement(
    body: str, start: int, end: int, value: Any, fence: str | None,
    spans: Sequence[tuple[int, int]] = (),
) -> tuple[int, tuple[str, str]]:
    """How a value stands in the reply: ``(2, no)`` fenced as JSON or on its own line (after a
    label such as ``Action:`` at most); ``(1, no)`` with prose on one side of it on its line
    (2 for a whole envelope); ``(0, (kind, why))`` inside a ``Thought:`` line or inside a
    sentence that quotes it (words before it that do not end a sentence, and words after it),
    which is never an action. Another JSON value on the line (``spans``: the scan's values) is
    no prose: two values side by side stand equally, so that they are compared."""
    if fence is not None and fence.lower() in JSON_FENCES:
        return 2, ("", "")
    line_start = body.rfind("\n", max(0, start - _CONTEXT), start) + 1
    if line_start == 0 and start > _CONTEXT:
        line_start = start - _CONTEXT
    line_end = body.find("\n", end, end + _CONTEXT)
    stop = line_end if line_end != -1 else min(len(body), end + _CONTEXT)
    before = TAG.sub("", _without_values(body, line_start, start, spans)).strip(DECORATION)
    after = TAG.sub("", _without_values(body, end, stop, spans))
    after = after.strip(_TRAILING_PUNCTUATION)
    if _ACTION_LABEL.search(before):
        return (1 if after else 2), ("", "")
    if THOUGHT_LABEL.match(before):
        return 0, ("quoted", "it sits inside a Thought line")
    prose_before = bool(before) and not before.endswith((":", "："))
    if prose_before and after and not before.endswith(SENTENCE_END):
        if is_envelope(value) and _glued(body, start, end):
            return 2, ("", "")  # Sure{...}Thanks, 好的{...}请稍等: written beside, not quoted
        return 0, ("quoted", "it is quoted inside a sentence")
    if prose_before or after:
        return (2 if is_envelope(value) else 1), ("", "")
    return 2, ("", "")


def _without_values(body: str, start: int, end: int, spans: Sequence[tuple[int, int]]) -> str:
    """``body[start:end]`` without the JSON values (``spans``) that lie wholly inside it."""
    inside = [(a, b) for a, b in spans if start <= a and b <= end]
    if not inside:
        return body[start:end]
    parts, at = [], start
    for a, b in inside:
        parts.append(body[at:a])
        at = b
    parts.append(body[at:end])
    return " ".join(parts)


_GLUE = frozenset("!?.,;:。，！？；：、…")


def _glued(body: str, start: int, end: int) -> bool:
    """Prose touches the value on both sides, with no space, bracket or quote between (a
    sentence that quotes a value sets it apart; CJK text has no spaces to set it apart with)."""
    if start == 0 or end >= len(body):
        return False
    before, after = body[start - 1], body[end]
    return ((before.isalnum() or before in _GLUE) and (after.isalnum() or after in _GLUE))


def is_envelope(value: Any) -> bool:
    """A whole reply (thought and action, a tool_calls list, a list of calls), as opposed to a
    bare call or answer object."""
    if isinstance(value, list):
        return True
    return isinstance(value, dict) and any(
        k in value for k in ("thought", "action", "tool_calls", *WRAPPER_KEYS)
    )


def fence_language(text: str, start: int, end: int) -> str | None:
    """The language tag of the fence the value at ``start`` opens ('' for none), or ``None``
    if it is not the first thing after a fence line, nor alone inside an inline fence
    (```` ```json {...}``` ```` on one line)."""
    line_start = text.rfind("\n", 0, start)
    if line_start == -1 or text[line_start + 1:start].strip():
        inline = _INLINE_FENCE_OPEN.search(text, max(line_start + 1, start - _FENCE_LINE), start)
        if inline and _INLINE_FENCE_CLOSE.match(text, end):
            return inline.group(1)
        return None
    prev_start = text.rfind("\n", max(0, line_start - _FENCE_LINE), line_start) + 1
    if prev_start == 0 and line_start > _FENCE_LINE:
        return None  # the line before is longer than any fence line
    m = FENCE.fullmatch(text, prev_start, line_start)
    return m.group(2) if m else None
