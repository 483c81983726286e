"""Hypothesis strategies for hostile requests to ``react-agent serve``: tool schemas and whole
Chat Completions bodies built from the keys OpenAI clients and JSON Schema use (every JSON
type, nested, references, loose type names), so that most examples get past the first check;
tool schemas whose check is costly (a backtracking pattern, ``uniqueItems``, ``$ref`` cycles,
``anyOf`` nested through references) with the model's arguments that make them so
(:data:`replies`); fields of every JSON type where a string is expected.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import strategies as st

SCHEMA_KEYS = (
    "type", "properties", "required", "items", "enum", "anyOf", "oneOf", "allOf", "$ref",
    "$defs", "definitions", "$id", "default", "description", "additionalProperties", "const",
    "format", "pattern", "minimum", "maxLength", "prefixItems", "not", "if", "then", "$schema",
)
TYPES = ("object", "string", "integer", "number", "boolean", "array", "null", "dict", "float",
         "tuple", "any", "int", "str", "Object", "")
REFS = ("#", "#/$defs/a", "#/definitions/x", "#/properties/a", "http://127.0.0.1:9/s.json",
        "file:///etc/passwd", "other.json", "#/nowhere", "#a")

scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-2**70, 2**70), st.floats(allow_nan=False),
    st.sampled_from(TYPES), st.sampled_from(REFS), st.text(max_size=10),
)
schema_nodes = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.one_of(st.sampled_from(SCHEMA_KEYS), st.text(max_size=6)), inner,
                        max_size=5),
    ),
    max_leaves=30,
)


def nested(depth: int) -> dict[str, Any]:
    node: dict[str, Any] = {"type": "string"}
    for _ in range(depth):
        node = {"type": "object", "properties": {"a": node}}
    return node


parameters = st.one_of(
    schema_nodes,
    st.fixed_dictionaries({"type": st.just("object"),
                           "properties": st.dictionaries(st.text(max_size=6), schema_nodes,
                                                         max_size=4)}),
    st.integers(0, 60).map(nested),
)
SLOW = "^(a|a)*$"


def branching(levels: int) -> dict[str, Any]:
    """``anyOf`` of two references to the next level, ``levels`` deep: 2**levels branches."""
    defs = {f"d{i}": {"anyOf": [{"$ref": f"#/$defs/d{i + 1}"}, {"$ref": f"#/$defs/d{i + 1}"}]}
            for i in range(levels)}
    defs[f"d{levels}"] = {"type": "integer"}
    return {"type": "object", "$defs": defs, "properties": {"a": {"$ref": "#/$defs/d0"}}}


COSTLY = (
    {"type": "object", "properties": {"a": {"type": "string", "pattern": SLOW}}},
    {"type": "object", "patternProperties": {SLOW: {}}, "additionalProperties": False},
    {"type": "object", "patternProperties": {SLOW: {}}, "unevaluatedProperties": False},
    {"type": "object", "propertyNames": {"pattern": SLOW}},
    {"type": "object", "properties": {"a": {"pattern": "^a{200000}$"}}},
    {"type": "object", "properties": {"a": {"pattern": "(" * 3000 + ")" * 3000}}},
    {"type": "object", "properties": {"a": {"type": "array", "uniqueItems": True}}},
    {"type": "object", "properties": {"a": {"type": "array", "items": {"enum": [[i] for i in
                                                                          range(500)]}}}},
    {"type": "object", "properties": {"a": {"type": "integer", "multipleOf": 0.5}}},
    {"type": "object", "properties": {"a": {"$ref": "#"}}},
    {"type": "object", "$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}},
     "properties": {"a": {"$ref": "#/$defs/a"}}},
    {"$ref": "#"},
    branching(20),
)
"""Tool schemas (of the tool ``f``) whose check costs what the arguments make it cost."""

COSTLY_ARGS = (
    {"a": "a" * 40 + "!"}, {"a" * 40 + "!": 1}, {"a": [{"k": i} for i in range(3000)]},
    {"a": [[i] for i in range(3000)]}, {"a": 10**400}, {"a": {"a": {"a": "x"}}}, {"a": "x"},
)
"""Arguments the model sends ``f`` that make the schemas of :data:`COSTLY` costly."""

replies = st.lists(st.one_of(
    st.sampled_from(COSTLY_ARGS).map(
        lambda args: json.dumps({"thought": "t", "action": {"name": "f", "args": args}})),
    st.just(json.dumps({"thought": "t", "action": {"final_answer": "done"}})),
), min_size=1, max_size=4)
"""What the scripted model answers, in order: calls of ``f`` with costly arguments, or the
final answer."""

texts = st.one_of(st.none(), st.text(max_size=20), scalars, schema_nodes)
"""A field that should be a string, as anything."""

functions = st.fixed_dictionaries(
    {"name": st.one_of(st.sampled_from(("f", "get_weather", "a.b-c")), st.text(max_size=8),
                       scalars)},
    optional={"description": texts, "parameters": st.one_of(parameters, st.sampled_from(COSTLY)),
              "strict": scalars},
)
tools = st.lists(
    st.one_of(st.fixed_dictionaries({"type": st.just("function"), "function": functions}),
              st.fixed_dictionaries({"type": st.just("function"), "function": st.fixed_dictionaries(
                  {"name": st.just("f"), "parameters": st.sampled_from(COSTLY)})}),
              schema_nodes),
    max_size=4,
)
arguments = st.one_of(st.text(max_size=20), st.sampled_from(('{"a": 1}', "{}", "[1]", "null",
                                                              "[" * 300 + "]" * 300)))
messages = st.lists(st.one_of(
    st.fixed_dictionaries({"role": st.sampled_from(("user", "system", "developer")),
                           "content": st.one_of(st.text(max_size=20), st.none(), schema_nodes)}),
    st.fixed_dictionaries({"role": st.just("assistant"), "content": st.none(),
                           "tool_calls": st.lists(st.fixed_dictionaries({
                               "id": st.one_of(st.sampled_from(("c1", "c2")), scalars),
                               "type": st.one_of(st.just("function"), scalars),
                               "function": st.fixed_dictionaries({
                                   "name": st.one_of(st.sampled_from(("f", "get_weather")),
                                                     scalars),
                                   "arguments": st.one_of(arguments, scalars)})}),
                               max_size=2)}),
    st.fixed_dictionaries({"role": st.just("tool"),
                           "tool_call_id": st.one_of(st.sampled_from(("c1", "c2", "zz")),
                                                     scalars),
                           "content": st.text(max_size=10)}),
    schema_nodes,
), max_size=5)
bodies = st.fixed_dictionaries(
    {"messages": messages},
    optional={
        "model": st.text(max_size=5), "tools": tools,
        "tool_choice": st.one_of(st.sampled_from(("auto", "none", "required", "x")), schema_nodes,
                                 st.fixed_dictionaries({"type": st.just("function"),
                                                        "function": st.fixed_dictionaries(
                                                            {"name": st.text(max_size=5)})})),
        "parallel_tool_calls": scalars, "stream": st.booleans(), "n": scalars,
        "stream_options": schema_nodes,
    },
)
costly_bodies = st.fixed_dictionaries({
    "messages": st.just([{"role": "user", "content": "Do it."}]),
    "tools": st.lists(st.fixed_dictionaries({"type": st.just("function"),
                                             "function": st.fixed_dictionaries({
                                                 "name": st.just("f"),
                                                 "description": texts,
                                                 "parameters": st.sampled_from(COSTLY)})}),
                      min_size=1, max_size=1),
}, optional={"stream": st.booleans(), "parallel_tool_calls": st.booleans(),
             "tool_choice": st.sampled_from(("auto", "required"))})
"""Valid requests but for a costly tool schema (and now and then its description), so that
the model's arguments (:data:`replies`) reach its check."""
requests = st.one_of(bodies, costly_bodies)
"""Any request: mostly malformed, often costly to check."""
