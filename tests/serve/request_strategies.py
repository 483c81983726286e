"""Hypothesis strategies for hostile requests to ``react-agent serve``: tool schemas and whole
Chat Completions bodies built from the keys OpenAI clients and JSON Schema use (every JSON
type, nested, references, loose type names), so that most examples get past the first check.
"""

from __future__ import annotations

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
functions = st.fixed_dictionaries(
    {"name": st.one_of(st.sampled_from(("f", "get_weather", "a.b-c")), st.text(max_size=8))},
    optional={"description": st.one_of(st.none(), st.text(max_size=20)),
              "parameters": parameters},
)
tools = st.lists(
    st.one_of(st.fixed_dictionaries({"type": st.just("function"), "function": functions}),
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
                               "id": st.sampled_from(("c1", "c2")),
                               "type": st.just("function"),
                               "function": st.fixed_dictionaries({
                                   "name": st.sampled_from(("f", "get_weather")),
                                   "arguments": arguments})}), max_size=2)}),
    st.fixed_dictionaries({"role": st.just("tool"), "tool_call_id": st.sampled_from(("c1", "c2",
                                                                                     "zz")),
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
