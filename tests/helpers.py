"""Assertions, replies, toolboxes and models shared by several test modules."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from react_agent import Agent, RunResult, Toolbox
from react_agent.events import AnswerToken, ModelToken
from react_agent.models import ScriptedModel
from react_agent.models.base import Message, ModelReply
from react_agent.policies import MissedCall, Relevance

QUESTIONS = (Relevance.name, MissedCall.name)
"""The origins of the steps of a policy's focused yes-or-no question (no reply decoded)."""


def assert_streamed(events: list[Any], result: RunResult, usage: bool = True) -> None:
    """Each step's streamed tokens add up to its raw output, arriving in many pieces; the answer
    stream adds up to the final answer; with ``usage``, token usage was reported too."""
    for step in result.steps:
        if step.origin in QUESTIONS:  # read from probabilities: nothing decoded to stream
            assert step.prompt_tokens and not step.completion_tokens
            continue
        pieces = [e.text for e in events if isinstance(e, ModelToken) and e.index == step.index]
        assert "".join(pieces) == step.raw_output
        assert len(pieces) > 5
        if usage:
            assert step.prompt_tokens and step.completion_tokens
    answer = "".join(e.text for e in events if isinstance(e, AnswerToken))
    assert answer == result.final_answer


_FRAME = re.compile(r"^<data ([0-9a-f]{8})>\n(.*?)\n</data \1>$", re.MULTILINE | re.DOTALL)


def observed(content: str) -> list[str]:
    """The tool results in an observation message's ``content``: the text inside each
    ``<data ID>`` ... ``</data ID>`` frame, in order, as sent (defanged); ``[]`` for a message
    that frames none. What a scripted model reads to answer from an observation."""
    return [match[2] for match in _FRAME.finditer(content)]


class ResettableModel(ScriptedModel):
    """A scripted model with the optional ``reset()`` of a model that keeps a cache; ``resets``
    holds how many calls had been made at each reset."""

    def __init__(self, replies: list[str]) -> None:
        super().__init__(replies)
        self.resets: list[int] = []

    def reset(self) -> None:
        self.resets.append(len(self.calls))


# -- scripted runs of the agent (tests/agent/test_agent.py, tests/policies/) ---------------------
TEMPERATURES = {"Paris": 18, "Rome": 24}
TASK = "Which is warmer, Paris or Rome?"
BAD_REPLY = "I think the weather is nice."


def act(name: str, thought: str = "I call a tool.", **args: Any) -> str:
    """A reply that calls ``name`` with ``args``."""
    return json.dumps({"thought": thought, "action": {"name": name, "args": args}})


def final(answer: str, thought: str = "I can answer now.") -> str:
    """A reply that gives the final answer."""
    return json.dumps({"thought": thought, "action": {"final_answer": answer}})


def several(*calls: str) -> str:
    """A reply of several calls, each given as its JSON text."""
    return '{"thought": "t", "action": [' + ", ".join(calls) + "]}"


def weather_toolbox() -> Toolbox:
    """``get_weather`` (Paris and Rome only; another city raises) and ``long_report``."""
    tb = Toolbox()

    @tb.tool
    def get_weather(city: str) -> str:
        """Get the current temperature of a city."""
        if city not in TEMPERATURES:
            raise ValueError(f"no data for {city}")
        return f"{TEMPERATURES[city]} °C in {city}"

    @tb.tool
    def long_report() -> str:
        """A very long report."""
        return "y" * 500

    return tb


def run(toolbox: Toolbox, replies: Sequence[Any], **options: Any
        ) -> tuple[RunResult, ScriptedModel]:
    """:data:`TASK` run by an agent with ``toolbox`` and ``options`` on ``replies``."""
    model = ScriptedModel(replies)
    return Agent(model, toolbox, **options).run(TASK), model


def call_lookup(args: str) -> str:
    """A reply that calls ``lookup`` (of :func:`counting_toolbox`) with ``args`` (JSON)."""
    return '{"thought": "again", "action": {"name": "lookup", "args": ' + args + "}}"


def counting_toolbox() -> tuple[Toolbox, list[str]]:
    """``lookup(key)``, which returns ``"value of <key>"``, and the keys it was run with."""
    runs: list[str] = []
    toolbox = Toolbox()

    @toolbox.tool
    def lookup(key: str) -> str:
        """Look a key up."""
        runs.append(key)
        return f"value of {key}"

    return toolbox, runs


WEATHER = '{"name": "get_weather", "args": {"city": "Oldtown"}}'
"""A call of ``get_weather`` of :func:`weather_and_units` with a city the task names."""


def weather_and_units() -> tuple[Toolbox, list[str]]:
    """``get_weather`` (33.1 °C anywhere) and ``convert``, and the calls that ran."""
    ran: list[str] = []
    toolbox = Toolbox()

    @toolbox.tool
    def get_weather(city: str) -> str:
        """Current weather."""
        ran.append(f"weather {city}")
        return '{"temperature_c": 33.1}'

    @toolbox.tool
    def convert(value: float, unit: str) -> str:
        """Convert a temperature."""
        ran.append(f"convert {value}")
        return f"{value * 9 / 5 + 32:.2f} {unit}"

    return toolbox, ran


def directory_and_mail() -> tuple[Toolbox, list[str]]:
    """A toolbox that finds an address and sends mail, and the list of addresses sent to."""
    tb = Toolbox()
    sent: list[str] = []

    @tb.tool
    def find_person(person: str) -> str:
        """A person's email address."""
        return '{"email": "ann.lee@corp.example"}'

    @tb.tool
    def send_email(to: str, body: str) -> str:
        """Send an email."""
        sent.append(to)
        return "sent"

    return tb, sent


class FloorModel(ScriptedModel):
    """A scripted backend that takes ``answer_floor=`` (as the embedded model does): each call's
    floor is kept in ``floors``; its replies report a measured probability when one was set."""

    accepts_answer_floor = True

    def __init__(self, replies: Sequence[str]) -> None:
        super().__init__(replies)
        self.floors: list[float | None] = []

    def complete(  # type: ignore[override]
        self, messages: Sequence[Message], schema: dict[str, Any] | None = None,
        strict: bool = False, answer_floor: float | None = None,
    ) -> ModelReply:
        self.floors.append(answer_floor)
        reply = super().complete(messages, schema, strict)
        if answer_floor is None:
            return reply
        return ModelReply(reply.text, reply.prompt_tokens, reply.completion_tokens,
                          reply.finish_reason, answer_probability=0.2, answer_taken=True)


def no_refs(value: Any) -> bool:
    """No reference (a ``$ref`` holding a string) left where a schema is (a property may be
    named "$ref", and an ``enum``, ``const``, ``default`` or ``examples`` value is data)."""
    stack = [(value, False)]
    while stack:
        node, names = stack.pop()
        if isinstance(node, dict):
            if not names and isinstance(node.get("$ref"), str):
                return False
            stack.extend((v, k in ("properties", "$defs", "definitions") and not names)
                         for k, v in node.items()
                         if names or k not in ("enum", "const", "default", "examples"))
        elif isinstance(node, list):
            stack.extend((v, False) for v in node)
    return True


def values(value: Any) -> int:
    """The values in ``value`` (as :func:`~react_agent.tools.schema.check` counts them)."""
    count, stack = 0, [value]
    while stack:
        node = stack.pop()
        count += 1
        if isinstance(node, dict):
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return count


def bomb(defs: int, refs: int, values: int) -> dict[str, Any]:
    """An arguments schema of ``refs`` arguments, each referring to one of ``defs``
    definitions, each definition an object with an enum, a default and examples of ``values``
    values, and referring to every earlier definition: some KB to send, and copying out every
    reference would make it grow with the product of all three (and double per definition)."""
    words = [f"value-{i}" for i in range(values)]
    definitions: dict[str, Any] = {}
    for d in range(defs):
        definitions[f"D{d}"] = {
            "type": "object",
            "description": f"Definition {d}.",
            "properties": {
                "choice": {"type": "string", "enum": words, "default": words[0] if words else ""},
                "many": {"type": "array", "items": {"type": "string"}, "default": words,
                         "examples": [words, words]},
                **{f"inner{e}": {"$ref": f"#/$defs/D{e}"} for e in range(d)},
            },
        }
    return {"$defs": definitions, "type": "object",
            "properties": {f"arg{i}": {"$ref": f"#/$defs/D{i % defs}"} for i in range(refs)},
            "required": ["arg0"]}


def wide(refs: int, values: int) -> dict[str, Any]:
    """An arguments schema whose one argument has ``refs`` fields, each referring to the same
    definition, a string with an enum and examples of ``values`` values: about 30 bytes to send
    per reference, and ``2 * values`` values to copy out per reference."""
    words = [f"value-{i}" for i in range(values)]
    return {"$defs": {"E": {"type": "string", "enum": words, "default": words[0] if words else "",
                            "examples": words}},
            "type": "object",
            "properties": {"fields": {"type": "object", "description": "The fields.",
                                      "properties": {f"f{i}": {"$ref": "#/$defs/E"}
                                                     for i in range(refs)}}},
            "required": ["fields"]}
