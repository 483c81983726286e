"""Flattening a tool's parameters schema from outside (react_agent.tools.schema): schemas as
MCP servers write them, and schemas built to make the flattening costly (definitions referred to
many times, each with a large enum, default and examples), whose work and result stay within
the bounds."""

from __future__ import annotations

import json
from typing import Any

import pytest
from helpers import bomb, no_refs, values, wide
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from react_agent import Toolbox
from react_agent.errors import ToolDefinitionError
from react_agent.tools import Tool, check_args, clean_args
from react_agent.tools import schema as json_schema
from react_agent.tools.schema._flatten import (
    CUT_TEXT,
    MAX_ARGUMENTS,
    MAX_CHARS,
    MAX_NOTES,
    MAX_TEXT_CHARS,
    MAX_VALUES,
    MAX_WORK,
    _Flattener,
    _Notes,
    flatten,
)

VALUES_BOUND = MAX_VALUES + 200
"""What a flattened schema holds at most: the budget, and a cut marker per level open when it
ran out."""
JSON_BOUND = MAX_CHARS + 4_000 + VALUES_BOUND * 25
"""Its size as JSON at most: its strings, and a keyword and punctuation per value."""


def size(value: Any) -> int:
    """The characters of ``value`` as JSON."""
    return len(json.dumps(value, ensure_ascii=False))


def work(schema: dict[str, Any]) -> int:
    """The schemas the flattening of ``schema`` visited (each $ref expansion counted)."""
    flattener = _Flattener(json_schema.normalize(schema), _Notes())
    flattener.top()
    return flattener.work


def expanded_size(schema: dict[str, Any]) -> int:
    """The values a flattening that copies each reference's target in full would produce
    (no cycles in ``schema``); computed, not built."""
    sizes: dict[str, int] = {}

    def size(node: Any) -> int:
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str):
                if ref not in sizes:
                    target: Any = schema
                    for part in ref[2:].split("/"):
                        target = target[part]
                    sizes[ref] = size(target)
                return sizes[ref]
            return 1 + sum(size(v) for k, v in node.items() if k != "$defs")
        if isinstance(node, list):
            return 1 + sum(size(v) for v in node)
        return 1

    return size(schema)


# -- schemas as servers write them -------------------------------------------------------------
NODE = {
    "type": "object", "title": "Node",
    "properties": {"value": {"type": "integer"},
                   "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}}},
    "required": ["value"],
}


def test_a_schema_that_refers_to_itself_is_cut_at_a_depth_and_says_so() -> None:
    schema = {"$defs": {"Node": NODE}, "type": "object",
              "properties": {"root": {"$ref": "#/$defs/Node"}}, "required": ["root"]}
    params, notes = flatten(schema)
    json_schema.check_valid(params)
    assert no_refs(params) and "$defs" not in params
    assert any("Node refers to itself" in n and "cut after 3 levels" in n for n in notes)
    node, depth = params["properties"]["root"], 0
    while "children" in node.get("properties", {}):
        node, depth = node["properties"]["children"]["items"], depth + 1
    assert depth == 3
    assert "not shown further" in node["description"] and node["type"] == "object"
    tree = {"value": 1, "children": [{"value": 2, "children": [{"value": 3}]}]}
    assert check_args(params, {"root": tree}) == []
    assert check_args(params, {"root": {"children": []}})  # value is still required


def test_optional_enum_nested_and_const_as_fastmcp_writes_them() -> None:
    schema = {
        "$defs": {
            "Order": {"enum": ["newest", "oldest"], "title": "Order", "type": "string"},
            "Filters": {"type": "object", "title": "Filters", "properties": {
                "author": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None},
                "year": {"type": "integer"}}},
        },
        "type": "object", "title": "searchArguments",
        "properties": {
            "query": {"type": "string", "title": "Query"},
            "limit": {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": None},
            "order": {"$ref": "#/$defs/Order", "default": "newest"},
            "filters": {"$ref": "#/$defs/Filters", "description": "Narrow the search."},
            "mode": {"const": "fast"},
            "either": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
        },
        "required": ["query"],
    }
    params, notes = flatten(schema)
    json_schema.check_valid(params)
    assert notes == [] and no_refs(params) and "title" not in json.dumps(params)
    props = params["properties"]
    assert props["limit"] == {"type": ["integer", "null"], "default": None}
    assert props["order"] == {"enum": ["newest", "oldest"], "type": "string", "default": "newest"}
    assert props["mode"] == {"enum": ["fast"]}
    assert props["either"] == {"type": ["string", "integer"]}
    assert props["filters"]["description"] == (
        "Narrow the search. An object with fields author (string or null), year (integer)")
    rendered = Tool("search", "Search.", params, lambda **a: a).describe()
    assert "limit (integer or null, optional, default null)" in rendered
    assert 'order (string, optional, default "newest"): one of "newest", "oldest"' in rendered
    assert clean_args(params, {"query": "x", "order": "OLDEST"})[0] == {
        "query": "x", "order": "oldest", "limit": None}


def test_draft_07_and_draft_04_keywords_are_rewritten() -> None:
    schema = {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "definitions": {"isbn": {"type": "string", "pattern": "^[0-9-]{10,17}$"}},
        "type": "object",
        "properties": {
            "isbn": {"$ref": "#/definitions/isbn"},
            "copies": {"type": "number", "minimum": 0, "exclusiveMinimum": True},
            "pair": {"type": "array", "items": [{"type": "string"}, {"type": "integer"}],
                     "additionalItems": False},
            "price": {"type": "number", "nullable": True},
        },
        "dependencies": {"isbn": ["copies"]},
        "additionalProperties": False,
    }
    params, notes = flatten(schema)
    json_schema.check_valid(params)
    assert notes == [] and "$schema" not in params and "definitions" not in params
    props = params["properties"]
    assert props["isbn"] == {"type": "string", "pattern": "^[0-9-]{10,17}$"}
    assert props["copies"] == {"type": "number", "exclusiveMinimum": 0}
    assert props["pair"] == {"type": "array", "prefixItems": [{"type": "string"},
                                                              {"type": "integer"}],
                             "items": {"not": {}}}
    assert props["price"]["type"] == ["number", "null"]
    assert params["dependentRequired"] == {"isbn": ["copies"]}
    assert check_args(params, {"isbn": "978-3-16", "copies": 0})  # too short, not > 0
    assert check_args(params, {"isbn": "978-3-16-148410-0", "copies": 2}) == []


@pytest.mark.parametrize(("schema", "expected"), [
    (None, {"type": "object", "properties": {}}),
    ({}, {"type": "object", "properties": {}}),
    ({"type": "object"}, {"type": "object", "properties": {}}),
    ({"properties": {"a": {"type": "string"}}, "required": ["a", "b"]},
     {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]}),
    ({"type": "object", "properties": {"a": True, "b": False}},
     {"type": "object", "properties": {"a": {}}}),
])
def test_missing_parts_are_filled_in(schema: Any, expected: dict[str, Any]) -> None:
    params, _ = flatten(schema)
    assert params == expected
    json_schema.check_valid(params)


def test_what_cannot_be_checked_is_dropped_with_a_note() -> None:
    schema = {"type": "object", "properties": {
        "x": {"type": "string", "default": None},
        "word": {"type": "string", "pattern": "^\\p{L}+$"},
        "spec": {"$ref": "https://example.com/schema.json"},
        "here": {"$ref": "#/nowhere"},
    }, "anyOf": [{"required": ["x"]}, {"required": ["word"]}]}
    params, notes = flatten(schema)
    json_schema.check_valid(params)
    assert params["properties"] == {"x": {"type": "string"}, "word": {"type": "string"},
                                    "spec": {}, "here": {}}
    assert "anyOf" not in params
    text = "\n".join(notes)
    for words in ("default of x does not fit", "'^\\\\p{L}+$' is not one Python can check",
                  "'https://example.com/schema.json' leads outside", "'#/nowhere' leads",
                  "top-level anyOf was left out"):
        assert words in text


def test_schemas_too_large_deep_or_explosive_stay_bounded() -> None:
    deep: dict[str, Any] = {"type": "string"}
    for _ in range(150):
        deep = {"type": "object", "properties": {"a": deep}}
    params, notes = flatten(deep)
    assert params["additionalProperties"] is True and "too large or too deep" in notes[0]
    with pytest.raises(ToolDefinitionError, match="required arguments cannot be shown"):
        flatten({**deep, "required": ["a"]})  # a tool the model could not call

    # each definition refers to the next one twice: 2**30 nodes if expanded naively
    defs = {f"D{i}": {"type": "object", "properties": {"l": {"$ref": f"#/$defs/D{i + 1}"},
                                                       "r": {"$ref": f"#/$defs/D{i + 1}"}}}
            for i in range(30)}
    defs["D30"] = {"type": "integer"}
    schema = {"$defs": defs, "type": "object", "properties": {"t": {"$ref": "#/$defs/D0"}}}
    assert expanded_size(schema) > 2**30
    params, notes = flatten(schema)
    json_schema.check_valid(params)
    assert no_refs(params) and notes
    assert values(params) <= VALUES_BOUND and work(schema) <= MAX_WORK


_SCHEMA_KEYS = ["type", "properties", "items", "anyOf", "oneOf", "allOf", "$ref", "$defs",
                "definitions", "required", "enum", "const", "default", "pattern", "nullable",
                "exclusiveMinimum", "minimum", "additionalProperties", "not", "dependencies",
                "prefixItems", "title", "description", "format", "examples"]
_LEAVES = st.one_of(
    st.none(), st.booleans(), st.integers(-5, 5), st.text(max_size=8),
    st.sampled_from(["string", "integer", "number", "object", "array", "null", "boolean", "dict",
                     "float", "any", "#", "#/$defs/A", "#/definitions/B", "#/properties/a",
                     "#/$defs/A/properties/x", "http://example.com/s.json", "[", "^a+$"]),
)
_SCHEMAS = st.recursive(
    _LEAVES,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.sampled_from([*_SCHEMA_KEYS, "A", "B", "a", "x"]), inner, max_size=6),
    ),
    max_leaves=40,
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_SCHEMAS)
def test_any_schema_a_server_sends_becomes_a_usable_one(schema: Any) -> None:
    problem = check_once("any", schema)
    assert problem is None, problem


# -- schemas built to be costly ------------------------------------------------------------------
def test_definitions_referred_to_many_times_are_cut_not_copied_again_and_again() -> None:
    """The naive expansion grows with the product of the definitions' sizes and the number of
    references (and doubles with each definition that refers to the earlier ones); the
    flattened schema and the work stay under the same bound at every scale."""
    naive = []
    for defs, refs, count in ((2, 4, 10), (6, 40, 100), (12, 200, 400)):
        schema = bomb(defs, refs, count)
        params, _ = flatten(schema)
        json_schema.check_valid(params)
        assert no_refs(params)
        assert values(params) <= VALUES_BOUND and size(params) <= JSON_BOUND
        assert work(schema) <= MAX_WORK
        naive.append(expanded_size(schema))
    assert naive[0] < VALUES_BOUND < 1000 * MAX_VALUES < naive[2]
    assert size(bomb(12, 200, 400)) < 300_000  # the size of the tools/list in issue 38


def test_one_definition_referred_to_thousands_of_times_is_copied_out_once() -> None:
    """Each reference costs some 30 bytes to send and copies the definition's enum and
    examples: copied out per reference, the result grows with the square of the input's size
    (before the bound, flattening these took 0.1, 0.4, 1.7, 5.9 and 17 s on a busy machine,
    ``benchmarks/flatten_cost.py``); here it stays under the bound."""
    naive = []
    for refs, count in ((250, 100), (500, 200), (1000, 400), (2000, 800), (5000, 2000)):
        schema = wide(refs, count)
        params, _ = flatten(schema)
        json_schema.check_valid(params)
        assert values(params) <= VALUES_BOUND and size(params) <= JSON_BOUND
        assert work(schema) <= MAX_WORK
        naive.append((size(schema), expanded_size(schema)))
    (small, small_out), *_, (large, large_out) = naive
    assert large / small < 25 and large_out / small_out > 300  # the square of the growth
    fields = params["properties"]["fields"]
    assert fields["description"] == f"The fields. {CUT_TEXT}"
    assert fields["properties"]["f0"] == {"type": "string", "enum": wide(1, 2000)["$defs"]["E"][
        "enum"], "default": "value-0", "examples": ["value-0"]}
    assert "enum" not in fields["properties"]["f1"]  # did not fit twice: cut, any string


def test_a_cut_says_so_in_the_argument_and_keeps_every_argument_name() -> None:
    schema = bomb(12, 60, 400)
    params, notes = flatten(schema)
    props = params["properties"]
    assert list(props) == [f"arg{i}" for i in range(60)]  # every name, in order
    assert params["required"] == ["arg0"]
    cut = [name for name, spec in props.items() if spec.get("description", "").endswith(CUT_TEXT)]
    assert cut and "arg59" in cut
    assert any("parts were cut" in n for n in notes)
    rendered = Tool("t", "A tool.", params, lambda **a: a).describe()
    assert f"arg59 (any JSON value, optional): {CUT_TEXT}" in rendered or \
        f"arg59 (object, optional): Definition 11. {CUT_TEXT}" in rendered
    assert check_args(params, {"arg0": {"choice": "value-3"}, "arg59": {"anything": 1}}) == []


@pytest.mark.parametrize(("spec", "accepted"), [
    # the enum does not fit: "not" of what is left would refuse everything
    ({"not": {"enum": [f"w{i}" for i in range(MAX_VALUES)]}}, "w1"),
    # a oneOf whose options were cut may match twice
    ({"oneOf": [{"enum": [f"w{i}" for i in range(MAX_VALUES)]}, {"type": "integer"}]}, "w1"),
    # an if whose schema was cut matches more, and its then then refuses more
    ({"if": {"enum": [f"w{i}" for i in range(MAX_VALUES)]}, "then": {"type": "integer"}}, "w1"),
    # properties cut beside additionalProperties: false
    ({"type": "object", "additionalProperties": False,
      "properties": {f"p{i}": {"enum": [f"w{j}" for j in range(50)]} for i in range(200)}},
     {"p199": "w1"}),
    # options of an anyOf cut off
    ({"anyOf": [{"enum": [f"w{i}" for i in range(MAX_VALUES)]}, {"type": "integer"}]}, 5),
])
def test_a_cut_never_refuses_what_the_server_takes(spec: dict[str, Any], accepted: Any) -> None:
    params, notes = flatten({"type": "object", "properties": {"x": spec}})
    json_schema.check_valid(params)
    assert any("parts were cut" in n for n in notes)
    assert check_args(params, {"x": accepted}) == []
    assert params["properties"]["x"]["description"].endswith(CUT_TEXT)


def test_arguments_beyond_the_limit() -> None:
    many = {f"a{i}": {"type": "string"} for i in range(MAX_ARGUMENTS + 50)}
    params, notes = flatten({"type": "object", "properties": many, "required": ["a140"],
                             "additionalProperties": False})
    assert len(params["properties"]) == MAX_ARGUMENTS and "a140" in params["properties"]
    assert "a0" in params["properties"] and f"a{MAX_ARGUMENTS + 49}" not in params["properties"]
    assert "additionalProperties" not in params  # the ones left out are not refused
    assert any("50 of its 178 arguments (optional ones) were left out" in n for n in notes)
    with pytest.raises(ToolDefinitionError, match=f"more than {MAX_ARGUMENTS} required"):
        flatten({"type": "object", "properties": many, "required": list(many)})
    with pytest.raises(ToolDefinitionError, match="names of its 100 arguments alone exceed"):
        flatten({"type": "object", "properties": {f"{i}{'n' * 400}": {} for i in range(100)}})


def test_a_default_is_checked_without_its_pattern() -> None:
    """A pattern that backtracks for ever on the default (2**40 steps) is not run at start;
    the invoker's validator checks it when the model's arguments come."""
    spec = {"type": "string", "pattern": "^(a+)+$", "default": "a" * 40 + "!"}
    params, _ = flatten({"type": "object", "properties": {"s": spec}})
    assert params["properties"]["s"] == spec
    wrong = {"type": "integer", "pattern": "^(a+)+$", "default": "a" * 40 + "!"}
    params, notes = flatten({"type": "object", "properties": {"s": wrong}})
    assert "default" not in params["properties"]["s"] and "default of s does not fit" in notes[0]


def test_texts_and_notes_are_bounded() -> None:
    long = "word " * 1000
    params, _ = flatten({"type": "object", "properties": {"x": {"description": long,
                                                                 "examples": [1, 2, 3]}}})
    assert params["properties"]["x"] == {"description": long[:MAX_TEXT_CHARS].rstrip() +
                                         " [...]", "examples": [1]}
    bad = {f"p{i}": {"type": "string", "pattern": f"\\p{{L}}{i}"} for i in range(100)}
    _, notes = flatten({"type": "object", "properties": bad})
    assert len(notes) == MAX_NOTES + 1 and notes[-1] == "... and 80 more notes"


def _twisted(schema: dict[str, Any], twist: str | None) -> dict[str, Any]:
    """A costly schema with keywords a cut must respect."""
    for spec in schema["$defs"].values():
        if twist == "nullable":
            spec["properties"]["choice"]["nullable"] = True
        elif twist == "not":
            spec["properties"]["not_one"] = {"not": {"$ref": "#/$defs/D0"}}
        elif twist == "oneOf":
            spec["properties"]["one"] = {"oneOf": [{"$ref": "#/$defs/D0"}, {"type": "null"}]}
        elif twist == "closed":
            spec["additionalProperties"] = False
    return schema


_COSTLY = st.builds(_twisted, st.builds(bomb, defs=st.integers(1, 14), refs=st.integers(1, 150),
                                        values=st.integers(0, 500)),
                    st.sampled_from([None, "nullable", "not", "oneOf", "closed"]))

KINDS = ("any", "costly")
"""Schemas as anything a server may send (small), and built to be costly to flatten."""

SCHEMAS = {"any": _SCHEMAS, "costly": _COSTLY}


def check_once(kind: str, schema: Any) -> str | None:
    """Flatten ``schema``; what is wrong with the result, or ``None``: it must pass
    check_valid, hold no reference, stay within the bounds (costly ones: the work too), render,
    and take arguments."""
    try:
        params, _ = flatten(schema)
    except ToolDefinitionError as exc:  # only a tool with required arguments is refused
        return None if _has_required(schema) else f"refused: {exc}"
    except BaseException as exc:  # the bug this property exists to find
        return f"flatten raised {type(exc).__name__}: {exc}"
    try:
        json_schema.check_valid(params)
    except ToolDefinitionError as exc:
        return f"not a valid schema: {exc}"
    if params.get("type") != "object" or not isinstance(params.get("properties"), dict):
        return "not an object schema"
    if not no_refs(params):
        return "a reference is left"
    if values(params) > VALUES_BOUND or size(params) > JSON_BOUND:
        return f"too large: {values(params)} values, {size(params)} characters"
    if kind == "costly" and work(schema) > MAX_WORK:
        return f"too much work: {work(schema)}"
    try:
        Toolbox([Tool("t", "A tool.", params, lambda **a: a)]).describe()
        args, _ = clean_args(params, {"a": "1", "x": [1]})
        check_args(params, args)
    except Exception as exc:
        return f"unusable: {type(exc).__name__}: {exc}"
    return None


def _has_required(schema: Any) -> bool:
    return isinstance(schema, dict) and bool(schema.get("required"))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_COSTLY)
def test_any_costly_schema_stays_within_the_bounds(schema: dict[str, Any]) -> None:
    problem = check_once("costly", schema)
    assert problem is None, problem
