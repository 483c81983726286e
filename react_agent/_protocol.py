"""Schema-constrained replies: the JSON Schema of a valid reply, built from the Toolbox.

A reply is ``{"thought": str, "action": A}`` where ``A`` is one tool call (``{"name": <const>,
"args": <that tool's schema>}``), a list of such calls, or ``{"final_answer": str}``. Backends
that can constrain decoding to a schema (llama.cpp's grammar from a JSON Schema; servers'
``response_format``) then produce nothing else; the tolerant parser still reads the reply.

``response_format`` spellings differ between servers, so :data:`RESPONSE_FORMATS` are tried in
order (the OpenAI form, then the llama.cpp / vLLM / LM Studio form) and the first one a server
accepts is kept for the session (see :class:`~react_agent.models.OpenAIChatModel`).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from .tools._toolbox import Toolbox

CONSTRAINED_MODES = ("auto", "on", "off")
"""``auto``: use a schema where the backend accepts one, else plain prompting; ``on``: require it
(a backend that rejects every form is a ModelError); ``off``: plain prompting."""


def reply_schema(toolbox: Toolbox) -> dict[str, Any]:
    """The JSON Schema of one valid reply for ``toolbox`` (``thought`` first, then ``action``).

    With no tools, the action can only be a final answer.
    """
    final = {
        "type": "object",
        "properties": {"final_answer": {"type": "string"}},
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
    options: list[dict[str, Any]] = [*calls, final]
    if calls:
        options.insert(len(calls), {"type": "array", "items": {"anyOf": calls}, "minItems": 1})
    return {
        "type": "object",
        "properties": {"thought": {"type": "string"}, "action": {"anyOf": options}},
        "required": ["thought", "action"],
        "additionalProperties": False,
    }


def _args_schema(parameters: dict[str, Any]) -> dict[str, Any]:
    """A tool's parameters schema without the parts grammar converters choke on (``default``,
    ``description``, ``title``, ``examples``); closed to unknown arguments unless the tool takes
    ``**kwargs``."""
    schema: dict[str, Any] = _strip(copy.deepcopy(parameters))
    schema.setdefault("additionalProperties", False)
    return schema


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


def _strip(schema: Any) -> Any:
    """``schema`` without annotation keywords, removed only where they are keywords (in a
    schema), never where they are names (of properties or definitions) or data."""
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key in _ANNOTATIONS:
            continue
        how = _SUBSCHEMAS.get(key)
        if how == "one":
            out[key] = _strip(value)
        elif how == "list" and isinstance(value, list):
            out[key] = [_strip(v) for v in value]
        elif how == "map" and isinstance(value, dict):
            out[key] = {name: _strip(v) for name, v in value.items()}
        else:
            out[key] = value
    return out


def _openai_form(schema: dict[str, Any]) -> dict[str, Any]:
    return {"type": "json_schema", "json_schema": {"name": "react_step", "schema": schema}}


def _llama_form(schema: dict[str, Any]) -> dict[str, Any]:
    return {"type": "json_object", "schema": schema}


RESPONSE_FORMATS: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
    "json_schema": _openai_form,
    "json_object+schema": _llama_form,
}
"""The ``response_format`` spellings tried in order, by name."""
