"""The protocol between the loop and the model, as data: what the loop asks for and what a
valid reply and an observation look like.

- :class:`Query` and :class:`Invoke`: the requests of the I/O-free loop (a model reply; the
  results of tool calls), answered by its sync and async edges.
- :func:`reply_schema`: the JSON Schema of one valid reply ``{"thought": str, "action": A}``,
  where ``A`` is one tool call (``{"name": <const>, "args": <that tool's schema>}``), a list of
  such calls, or ``{"final_answer": str}`` (or, with an output type, ``{"final_answer": V}``,
  ``V`` the output's schema). Backends that can constrain decoding to a schema
  (llama.cpp's grammar from a JSON Schema; servers' ``response_format``) then produce nothing
  else; the tolerant parser still reads the reply.
- :func:`observation_message`: the user message that carries a step's observations.
"""

from __future__ import annotations

import copy
import functools
from dataclasses import dataclass
from typing import Any

from .. import prompts
from .._json import sorted_json, text_json
from ..tools import Toolbox
from ..types import Message, Step, ToolCall, ToolResult
from ._framing import defang, frame


@dataclass
class Query:
    """The loop needs the model's reply to ``messages`` (recorded on ``step``).

    Attributes:
        messages: the messages to send.
        step: the step the reply is recorded on.
        schema: the JSON Schema the reply must follow, where the backend can constrain
            decoding (``accepts_schema``); ``None``: unconstrained.
        strict: fail rather than fall back to plain prompting when the backend cannot
            constrain decoding to ``schema``.
        answer_tokens: stream a final answer in the reply as ``AnswerToken`` events (not for a
            draft that a policy may replace).
        answer_floor: take the final answer when the model gives it at least this probability
            where the reply chooses its action (backends with ``accepts_answer_floor``).
        choices: a question answered with one of these words (``("yes", "no")``): a backend
            with ``accepts_choices`` gives each word's probability (``ModelReply.choices``)
            without decoding a reply; any other writes a short reply, held to the words where
            it constrains decoding.
    """

    messages: list[Message]
    step: Step
    schema: dict[str, Any] | None = None
    strict: bool = False
    answer_tokens: bool = True
    answer_floor: float | None = None
    choices: tuple[str, ...] | None = None


@dataclass
class Invoke:
    """The loop needs the results of ``calls``, one :class:`~react_agent.ToolResult` each, in
    order; the calls at the positions in ``approve`` go to the run's approver first whatever
    their tool says (a policy asked for it: :meth:`Run.approve`)."""

    calls: list[ToolCall]
    approve: tuple[int, ...] = ()


def reply_schema(toolbox: Toolbox, output: dict[str, Any] | None = None, *,
                 final_answer: bool = True) -> dict[str, Any]:
    """The JSON Schema of one valid reply for ``toolbox`` (``thought`` first, then ``action``).

    With no tools, the action can only be a final answer; ``output``: the JSON Schema the final
    answer is held to (a run's output type), else a string. ``final_answer=False``: a reply
    that calls tools only (ignored with no tools: a reply must be possible).
    """
    answer: dict[str, Any] = {"type": "string"} if output is None else _answer_schema(output)
    final = {
        "type": "object",
        "properties": {"final_answer": answer},
        "required": ["final_answer"],
        "additionalProperties": False,
    }
    calls = [
        {
            "type": "object",
            "properties": {"name": {"const": tool.name}, "args": _args_schema(tool.parameters)},
            "required": ["name", "args"],
            "additionalProperties": False,
        }
        for tool in toolbox.values()
    ]
    options: list[dict[str, Any]] = [*calls, final] if final_answer or not calls else [*calls]
    if calls:
        options.insert(len(calls), {"type": "array", "items": {"anyOf": calls}, "minItems": 1})
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {"thought": {"type": "string"}, "action": {"anyOf": options}},
        "required": ["thought", "action"],
        "additionalProperties": False,
    }
    definitions = answer.pop("$defs", None)
    if definitions is not None:
        schema["$defs"] = definitions
    return schema


def _args_schema(parameters: dict[str, Any]) -> dict[str, Any]:
    """A tool's parameters schema without the parts grammar converters choke on (``default``,
    ``description``, ``title``, ``examples``); closed to unknown arguments unless the tool takes
    ``**kwargs``."""
    schema: dict[str, Any] = _strip(copy.deepcopy(parameters))
    schema.setdefault("additionalProperties", False)
    return schema


def _answer_schema(output: dict[str, Any]) -> dict[str, Any]:
    """An output schema as the final answer's part of the reply schema, without annotations
    (its ``$defs`` are moved to the reply schema's root by :func:`reply_schema`, where its
    references ``#/$defs/...`` then lead).

    A reference to anything else in the output schema (``#`` itself, a recursive type;
    ``#/properties/...``, ``#/definitions/...``) would lead into the reply schema once the
    output schema sits under ``final_answer``: the output schema is then kept whole under
    ``$defs`` (as :data:`_OUTPUT_DEF`, or a free name like it), those references are rewritten
    to lead there, and the final answer's part is a reference to it."""
    schema: dict[str, Any] = dict(_strip(copy.deepcopy(output)))
    if not any(_leaves_defs(ref) for ref in _refs(schema)):
        return schema
    definitions = schema.get("$defs")
    taken = definitions if isinstance(definitions, dict) else {}
    name = _OUTPUT_DEF
    while name in taken:
        name += "_"
    target = f"#/$defs/{name}"
    for node in _ref_holders(schema):
        ref = node["$ref"]
        if _leaves_defs(ref):
            node["$ref"] = target + ref[1:]
    moved = {k: v for k, v in schema.items() if k != "$defs"}
    return {"$ref": target, "$defs": {**taken, name: moved}}


_OUTPUT_DEF = "final_answer"
"""The name under the reply schema's ``$defs`` of an output schema that refers to itself."""


def _leaves_defs(ref: Any) -> bool:
    """Whether ``ref`` is a reference within the schema to anything but one of its ``$defs``."""
    return isinstance(ref, str) and (ref == "#" or ref.startswith("#/")) \
        and not ref.startswith("#/$defs/")


def _refs(schema: Any) -> list[Any]:
    return [node["$ref"] for node in _ref_holders(schema)]


def _ref_holders(schema: Any) -> list[dict[str, Any]]:
    """Every schema within ``schema`` (itself included) that has a ``$ref``, following only
    where JSON Schema holds schemas (a ``"$ref"`` in ``enum`` or ``const`` data is data).
    Without recursion; the schema was bounded when the output type was made."""
    found: list[dict[str, Any]] = []
    stack = [schema]
    while stack:
        node = stack.pop()
        if not isinstance(node, dict):
            continue
        if "$ref" in node:
            found.append(node)
        for key, value in node.items():
            how = _SUBSCHEMAS.get(key)
            if how == "one":
                stack.append(value)
            elif how == "list" and isinstance(value, list):
                stack.extend(value)
            elif how == "map" and isinstance(value, dict):
                stack.extend(value.values())
    return found


_ANNOTATIONS = frozenset({"default", "description", "title", "examples"})
# Where JSON Schema (2020-12) holds schemas: keyword -> how (one schema, a list of schemas, or a
# map of names to schemas). Everything else is data (enum, const, required, ...) and is kept
# as it is, so an argument *named* "title" or "description" survives.
_SUBSCHEMAS = {
    **dict.fromkeys(
        ("items", "additionalProperties", "not", "contains", "propertyNames", "if", "then",
         "else", "unevaluatedItems", "unevaluatedProperties", "additionalItems"),
        "one",
    ),
    **dict.fromkeys(("anyOf", "allOf", "oneOf", "prefixItems"), "list"),
    **dict.fromkeys(
        ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas"), "map"
    ),
}


def _strip(schema: Any, annotations: frozenset[str] = _ANNOTATIONS) -> Any:
    """``schema`` without ``annotations`` (keywords), removed only where they are keywords (in
    a schema), never where they are names (of properties or definitions) or data."""
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key in annotations:
            continue
        how = _SUBSCHEMAS.get(key)
        if how == "one":
            out[key] = _strip(value, annotations)
        elif how == "list" and isinstance(value, list):
            out[key] = [_strip(v, annotations) for v in value]
        elif how == "map" and isinstance(value, dict):
            out[key] = {name: _strip(v, annotations) for name, v in value.items()}
        else:
            out[key] = value
    return out


FINAL_ANSWER_SCHEMA = reply_schema(Toolbox())
"""The reply schema of a reply that may only give the final answer."""


def observation_message(results: list[ToolResult], task: str, framed: bool = True) -> str:
    """The user message carrying the observations of one step (numbered when several), with a
    reminder of the task: small models lose track of a task that is far up the context.

    ``framed``: each result between ``<data ID>`` and ``</data ID>`` lines, defanged
    (:func:`~react_agent.engine._framing.frame`; ``prompts/agent/observation_data.md``);
    else as it is (``prompts/agent/observation.md``)."""
    if framed:
        parts = [frame(r.observation, text_json(r.call.to_dict())) for r in results]
        if len(results) == 1:
            text = parts[0]
        else:
            text = "\n".join(f"{defang(f'[{i}] {r.call.name} {text_json(r.call.args)}')}:\n{part}"
                             for i, (r, part) in enumerate(zip(results, parts, strict=True), 1))
        return prompts.render("agent/observation_data", observation=text, task=task)
    if len(results) == 1:
        text = results[0].observation
    else:
        text = "\n".join(
            f"[{i}] {r.call.name} {text_json(r.call.args)}: {r.observation}"
            for i, r in enumerate(results, 1)
        )
    return prompts.render("agent/observation", observation=text, task=task)


@functools.cache
def _observation_heads() -> tuple[str, ...]:
    mark = "\x00"
    heads = tuple(prompts.render(name, observation=mark, task=mark).split(mark)[0]
                  for name in ("agent/observation_data", "agent/observation"))
    return heads


def observation_framing(content: str) -> bool | None:
    """Whether ``content`` (a user message's) carries observations framed as data (``True``),
    unframed (``False``), or none (``None``), by how :func:`observation_message` begins."""
    framed, plain = _observation_heads()
    return True if content.startswith(framed) else False if content.startswith(plain) else None


def is_observation_message(message: Message) -> bool:
    """``message`` is a user message that carries observations, framed or not, of any step or
    turn (it starts as :func:`observation_message` writes one, whatever its task). A person's
    message that happens to start so is counted as observations too: what it says is then
    not taken as the user's word, which fails safe for the policies that trace values."""
    return message["role"] == "user" and message["content"].startswith(_observation_heads())


def signature(call: ToolCall) -> tuple[str, str]:
    """What makes two calls the same call: the tool and the arguments (as sorted JSON).
    Computed once per call object (a call's arguments are not changed once parsed)."""
    known: tuple[str, str] | None = call.__dict__.get("_signature")
    if known is None:
        known = (call.name, sorted_json(call.args))
        object.__setattr__(call, "_signature", known)
    return known
