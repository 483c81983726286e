"""What is never an action: the instructions' skeleton (placeholders such as ``<tool name>``,
``...``, generic argument values) or one of the system prompt's worked examples copied back.
"""

from __future__ import annotations

import functools
import json
import re
from typing import Any, NamedTuple

from .. import prompts
from ..types import Reply
from ._envelope import Shape, interpret
from ._load import FAIL, load_json

_PLACEHOLDER = re.compile(r"<[^<>\n]{1,80}>|\.{2,}|…+")
_PLACEHOLDER_NAMES = frozenset({
    "tool_name", "toolname", "function_name", "your_tool", "your_tool_name", "name_of_tool",
    "name_of_the_tool", "action_name",
})
_GENERIC_VALUES = frozenset({
    "value", "argument", "arg", "args", "string", "str", "number", "int", "integer", "float",
    "bool", "boolean", "text", "input", "object", "array", "list", "answer", "final_answer",
    "response", "result",
})


def never_an_action(reply: Reply) -> tuple[str, str] | None:
    """``(kind, why)`` when the reply is the instructions' skeleton or one of their worked
    examples copied back (placeholders such as ``<tool name>`` or ``...``), else ``None``."""
    if reply.final_answer is not None:
        if len(reply.final_answer) > 1000:  # no placeholder and no example is that long
            return None
        if _is_placeholder(reply.final_answer, "answer"):
            return "placeholder", "its final answer is a placeholder of the reply format"
        if reply.final_answer in _prompt_examples().answers:
            return "placeholder", "its final answer is copied from the examples of the instructions"
        return None
    for call in reply.tool_calls:
        name = call.name.strip()
        if _PLACEHOLDER.fullmatch(name) or name.lower().replace(" ", "_") in _PLACEHOLDER_NAMES:
            return "placeholder", "its tool name is a placeholder of the reply format"
        if any(_is_placeholder_arg(k, v) for k, v in call.args.items()):
            return "placeholder", f"the args of {name} hold placeholders of the reply format"
    examples = _prompt_examples()
    if reply.thought in examples.thoughts and _example_key(reply) in examples.calls:
        return "placeholder", "it is copied from the examples of the instructions"
    return None


def never_an_answer(text: str) -> bool:
    """A final answer that is never one: a placeholder of the reply format or a worked example's
    answer copied back (what :func:`never_an_action` says of a final answer)."""
    return len(text) <= 1000 and (
        _is_placeholder(text, "answer") or text in _prompt_examples().answers
    )


def may_become_never_an_answer(prefix: str) -> bool:
    """The first characters of a final answer that may still turn out to be a placeholder or a
    worked example's answer (``<the answer``, ``..``, a prefix of an example): what a stream of
    the answer holds back until it knows."""
    if len(prefix) > 1000:
        return False
    text = prefix.lstrip()
    if not text.strip(".…") or any(a.startswith(prefix) for a in _prompt_examples().answers):
        return True  # (blank, dots only, or an example's first characters)
    if text[0] == "<" and len(text) <= 82 and "\n" not in text:
        close = text.find(">")
        if close == -1:
            return "<" not in text[1:]
        return not text[close + 1:].strip()
    return False


def _is_placeholder_arg(key: str, value: Any) -> bool:
    if _PLACEHOLDER.fullmatch(key.strip()):
        return True
    return isinstance(value, str) and _is_placeholder(value, key)


def _is_placeholder(text: str, name: str) -> bool:
    """``...``, or ``<...>`` around words a template uses (``<the answer for the user>``,
    ``<value>``, ``<city>`` for the argument ``city``); ``<br>`` or ``<0>`` are content."""
    text = text.strip()
    if text in ("...", "…"):
        return True
    if not (text.startswith("<") and text.endswith(">") and _PLACEHOLDER.fullmatch(text)):
        return False
    inner = text[1:-1].strip().lower()
    return " " in inner or inner in _GENERIC_VALUES or inner == name.strip().lower()


def _example_key(reply: Reply) -> str:
    calls = [c.to_dict() for c in reply.tool_calls]
    return json.dumps([reply.thought, calls], sort_keys=True, ensure_ascii=False, default=str)


class _Examples(NamedTuple):
    """The worked examples of the instructions: the keys of their calls (:func:`_example_key`),
    the thoughts of those calls (a reply with another thought is no copy) and their final
    answers."""

    calls: frozenset[str]
    thoughts: frozenset[str | None]
    answers: frozenset[str]


@functools.cache
def _prompt_examples() -> _Examples:
    """The worked examples of ``prompts/agent/system.md`` (its ``Assistant: {...}`` lines)."""
    calls: set[str] = set()
    thoughts: set[str | None] = set()
    answers: set[str] = set()
    for line in prompts.load_template("agent/system").template.splitlines():
        head, colon, rest = line.partition(":")
        value = load_json(rest.strip()) if colon and head.strip() == "Assistant" else FAIL
        try:
            reply = None if value is FAIL else interpret(value, "direct", ())
        except Shape:
            reply = None
        if reply is not None and reply.final_answer is not None:
            answers.add(reply.final_answer)
        elif reply is not None:
            calls.add(_example_key(reply))
            thoughts.add(reply.thought)
    return _Examples(frozenset(calls), frozenset(thoughts), frozenset(answers))


def never_problem(body: str, start: int, end: int, why: str) -> str:
    """The error text for ``body[start:end]``, an action that is never run, and ``why``."""
    shown = " ".join(body[start:min(end, start + 80)].split())
    return (
        f"Its only action, {shown}{'…' if end - start > 80 else ''}, is never run: {why}. Send "
        "your own action as the JSON object alone, with the real tool name, arguments or answer."
    )
