"""Parameters schemas in JSON Schema's own words (react_agent.tools.schema, normalising): the
one nullable merge, local references, and the sources that go through them."""

from __future__ import annotations

from typing import Any

import pytest

from react_agent.errors import ToolDefinitionError
from react_agent.tools import schema as json_schema

STRING_OR_NULL = {"anyOf": [{"type": "string", "enum": ["a"]}, {"type": "null"}],
                  "description": "d"}
MERGED = {"type": ["string", "null"], "enum": ["a", None], "description": "d"}


@pytest.mark.parametrize(("spec", "loose", "merged"), [
    (STRING_OR_NULL, False, MERGED),
    (STRING_OR_NULL, True, MERGED),
    # several plain types: one type list from outside, pydantic's form kept for a signature
    ({"anyOf": [{"type": "string"}, {"type": "integer"}, {"type": "null"}]}, True,
     {"type": ["string", "integer", "null"]}),
    ({"anyOf": [{"type": "string"}, {"type": "integer"}, {"type": "null"}]}, False, None),
    ({"oneOf": [{"type": "string"}, {"type": "null"}]}, True, {"type": ["string", "null"]}),
    ({"oneOf": [{"type": "string"}, {"type": "null"}]}, False, None),
    ({"anyOf": [{"type": "string"}, {"type": "integer"}]}, False, None),
    ({"type": "string"}, True, None),
])
def test_merge_nullable(spec: dict[str, Any], loose: bool, merged: dict[str, Any] | None) -> None:
    assert json_schema.merge_nullable(dict(spec), loose=loose) == (merged or spec)


@pytest.mark.parametrize(("ref", "found"), [
    ("#", "root"), ("#/$defs/a~1b", 1), ("#/$defs/c%20d", 2), ("#/list/1", "y"),
    ("#/list/2", None), ("#/$defs/none", None), ("other.json#/a", None),
    ("https://example.com/s.json", None), ("#anchor", None),
])
def test_resolve_local_follows_only_places_inside(ref: str, found: Any) -> None:
    root = {"$defs": {"a/b": 1, "c d": 2}, "list": ["x", "y"]}
    assert json_schema.resolve_local(root, ref) == (root if found == "root" else found)


def test_a_signature_schema_is_flat_without_titles() -> None:
    schema = {"$defs": {"P": {"title": "P", "type": "object", "properties": {
        "x": {"title": "X", "type": "integer"}}}},
        "anyOf": [{"$ref": "#/$defs/P"}, {"type": "null"}], "title": "p"}
    assert json_schema.from_signature(schema, "f(p)") == {
        "type": ["object", "null"], "properties": {"x": {"type": "integer"}}}


@pytest.mark.parametrize(("schema", "message"), [
    ({"$defs": {"N": {"properties": {"n": {"$ref": "#/$defs/N"}}}}, "$ref": "#/$defs/N"},
     "N refers to itself"),
    ({"$ref": "#/$defs/Gone"}, "leads nowhere"),
])
def test_a_signature_schema_that_cannot_be_flat_names_the_parameter(schema: dict[str, Any],
                                                                    message: str) -> None:
    with pytest.raises(ToolDefinitionError, match=rf"^f\(p\): .*{message}"):
        json_schema.from_signature(schema, "f(p)")


@pytest.mark.parametrize(("parameters", "out"), [
    (None, {"type": "object"}),
    ({}, {"type": "object"}),
    ({"properties": {"n": {"type": "float"}}},
     {"type": "object", "properties": {"n": {"type": "number"}}}),
    ({"type": "dict"}, {"type": "object"}),
])
def test_openai_parameters_are_normalised(parameters: Any, out: dict[str, Any]) -> None:
    assert json_schema.from_openai(parameters, "t: parameters") == out


@pytest.mark.parametrize(("parameters", "message"), [
    (["not", "an", "object"], "must be a JSON Schema object"),
    ({"$ref": "https://example.com/s.json"}, "refers outside the schema"),
])
def test_unusable_openai_parameters_are_refused_naming_the_place(parameters: Any,
                                                                  message: str) -> None:
    with pytest.raises(ToolDefinitionError, match=rf"^t: parameters.*{message}"):
        json_schema.from_openai(parameters, "t: parameters")
