"""Tool schemas from outside are bounded, self-contained, and never
make the process open a URL or a file."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator
from probes import CountingListener, opened

from react_agent import Toolbox, ToolCall
from react_agent.errors import ToolDefinitionError
from react_agent.harness._evaluation import toolbox_from_specs
from react_agent.tools import check_args, invoke
from react_agent.tools import schema as json_schema
from react_agent.tools.schema import _validation


def nested(levels: int) -> dict[str, Any]:
    """An object schema ``levels`` properties deep (the shape of the hostile serve request)."""
    node: dict[str, Any] = {"type": "string"}
    for _ in range(levels):
        node = {"type": "object", "properties": {"a": node}}
    return node


@pytest.fixture
def listener() -> Iterator[CountingListener]:
    counting = CountingListener()
    yield counting
    counting.close()


@pytest.fixture
def fifo(tmp_path: Path) -> Iterator[Path]:
    """A named pipe: whoever opens it to read holds it open, blocked, so :func:`opened` sees
    it; a plain read of it would hang the reader."""
    path = tmp_path / "secret.json"
    os.mkfifo(path)
    yield path


def test_a_schema_nested_past_the_limit_is_refused_naming_the_place() -> None:
    json_schema.check(nested(json_schema.MAX_DEPTH // 2 - 1))
    with pytest.raises(ToolDefinitionError, match=r"tools\[0\]\.function\.parameters.*deeper"):
        json_schema.check(nested(30), "tools[0].function.parameters")


def test_a_schema_with_too_many_values_is_refused() -> None:
    wide = {"type": "object", "properties": {
        f"p{i}": {"type": "string"} for i in range(json_schema.MAX_NODES)}}
    with pytest.raises(ToolDefinitionError, match="more than"):
        json_schema.check(wide)


@pytest.mark.parametrize("reference", [
    "http://127.0.0.1:{port}/schema.json", "https://example.com/s.json#/x", "file://{file}",
    "{file}", "other.json", "//127.0.0.1:{port}/x",
])
def test_references_outside_the_schema_are_refused_before_any_connection_or_read(
    reference: str, listener: CountingListener, fifo: Path
) -> None:
    ref = reference.format(port=listener.port, file=fifo)
    spec = {"name": "lookup", "description": "Look it up.", "parameters": {
        "type": "object", "properties": {"key": {"$ref": ref}}}}
    with pytest.raises(ToolDefinitionError, match="refers outside the schema"):
        toolbox_from_specs([spec])
    toolbox = Toolbox()
    with pytest.raises(ToolDefinitionError, match="refers outside the schema"):
        toolbox.add(lambda key: key, name="lookup", description="Look it up.",
                    parameters=spec["parameters"])
    assert listener.connections == 0 and not opened(fifo)


def test_the_validator_never_retrieves_a_reference(
    listener: CountingListener, fifo: Path
) -> None:
    for ref in (f"http://127.0.0.1:{listener.port}/s.json", f"file://{fifo}"):
        validator = json_schema.validator({"properties": {"a": {"$ref": ref}}})
        with pytest.raises(json_schema.UnresolvedReference):
            validator.is_valid({"a": 1})
    assert listener.connections == 0 and not opened(fifo)


def test_local_references_resolve_and_validate() -> None:
    parameters = {
        "type": "object", "$defs": {"unit": {"enum": ["C", "F"]}},
        "properties": {"unit": {"$ref": "#/$defs/unit"}}, "required": ["unit"],
    }
    toolbox = Toolbox()
    toolbox.add(lambda unit: unit, name="temp", description="A unit.", parameters=parameters)
    assert invoke(toolbox, ToolCall("temp", {"unit": "C"})).ok
    bad = invoke(toolbox, ToolCall("temp", {"unit": "K"}))
    assert bad.error == "invalid_args" and '"C", "F"' in bad.observation


def test_a_local_reference_that_leads_nowhere_is_refused() -> None:
    with pytest.raises(ToolDefinitionError, match="leads nowhere"):
        json_schema.check({"type": "object", "properties": {"a": {"$ref": "#/$defs/none"}}})


def test_normalize_is_linear_and_keeps_names() -> None:
    schema = nested(json_schema.MAX_DEPTH // 2 - 1)
    # a property named like a keyword keeps its schema, normalised
    schema["properties"]["type"] = {"type": "float"}
    out = json_schema.normalize(schema)
    assert out["properties"]["type"] == {"type": "number"}
    assert json.dumps(out).count('"properties"') == json.dumps(schema).count('"properties"')


@pytest.mark.parametrize("loose, strict", [
    ({"type": "dict"}, {"type": "object"}), ({"type": "any"}, {}),
    ({"type": ["int", "any", 5]}, {"type": ["integer", 5]}),
    ({"type": {"x": 1}}, {"type": {"x": 1}}),
])
def test_normalize_maps_loose_type_names_and_keeps_the_rest(
    loose: dict[str, Any], strict: dict[str, Any]
) -> None:
    assert json_schema.normalize(loose) == strict


def test_a_schema_object_gets_one_validator_and_another_object_its_own() -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}}
    first = json_schema.validator(schema)
    assert json_schema.validator(schema) is first
    twin = json.loads(json.dumps(schema))
    assert json_schema.validator(twin) is not first
    assert first.is_valid({"n": 1}) and not first.is_valid({"n": "x"})


# -- surely_valid: the validator's answer without the validator, where it is sure ----------------

TYPES = ("string", "integer", "number", "boolean", "object", "array", "null")
NAMES = ("a", "b", "city", "n")


def plain_schemas() -> st.SearchStrategy[dict[str, Any]]:
    """Schemas of the keywords :func:`surely_valid` decides, plus now and then one it does not
    (``minimum``, ``const``, ``prefixItems``, a boolean subschema)."""
    def node(children: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
        return st.fixed_dictionaries({}, optional={
            "type": st.sampled_from(TYPES) | st.lists(st.sampled_from(TYPES), max_size=3),
            "enum": st.lists(st.sampled_from(["x", "X", "y", 1, 1.0, True, None]), max_size=4),
            "properties": st.dictionaries(st.sampled_from(NAMES), children, max_size=3),
            "required": st.lists(st.sampled_from(NAMES), max_size=3, unique=True),
            "additionalProperties": st.booleans() | children,
            "items": children,
            "description": st.text(max_size=5),
            "default": st.integers(),
            "minimum": st.integers(-2, 2),
            "const": st.sampled_from(["x", 1]),
            "prefixItems": st.lists(children, max_size=2),
        })
    leaf = node(st.just({"type": "string"}) | st.booleans())
    return st.recursive(leaf, node, max_leaves=8)


values = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 3) | st.sampled_from([1.0, 2.5, -0.0])
    | st.sampled_from(["x", "X", "y", ""]),
    lambda inner: st.lists(inner, max_size=3)
    | st.dictionaries(st.sampled_from(NAMES), inner, max_size=3),
    max_leaves=10,
)


@st.composite
def fitting(draw: st.DrawFn, schema: Any, depth: int = 0) -> Any:
    """A value made to fit ``schema`` most of the time (random ones seldom fit an object)."""
    if not isinstance(schema, dict) or depth > 4 or draw(st.integers(0, 9)) == 0:
        return draw(values)
    if schema.get("enum"):
        return draw(st.sampled_from(schema["enum"]))
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = draw(st.sampled_from(kind)) if kind else None
    if kind == "object" or "properties" in schema:
        props = schema.get("properties") or {}
        names = draw(st.lists(st.sampled_from(NAMES), max_size=4, unique=True))
        return {n: draw(fitting(props.get(n), depth + 1)) for n in names}
    if kind == "array" or "items" in schema:
        return [draw(fitting(schema.get("items"), depth + 1))
                for _ in range(draw(st.integers(0, 3)))]
    return draw({"string": st.sampled_from(["x", "y"]), "integer": st.integers(-3, 3),
                 "number": st.sampled_from([1, 2.5]), "boolean": st.booleans(),
                 "null": st.none()}.get(kind, values))


@settings(max_examples=600, deadline=None)
@given(data=st.data(), schema=plain_schemas())
def test_surely_valid_is_never_true_where_the_validator_refuses(
    data: st.DataObject, schema: dict[str, Any]
) -> None:
    value = data.draw(fitting(schema))
    if json_schema.surely_valid(schema, value):
        assert json_schema.validator(schema).is_valid(value), (schema, value)


@settings(max_examples=200, deadline=None)
@given(data=st.data(), schema=plain_schemas())
def test_check_args_says_the_same_with_and_without_the_shortcut(
    data: st.DataObject, schema: dict[str, Any]
) -> None:
    args = data.draw(st.dictionaries(st.sampled_from(NAMES), values, max_size=3)
                     | fitting(schema).filter(lambda v: isinstance(v, dict)))
    shortcut = check_args(schema, args)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(json_schema, "surely_valid", lambda schema, value: False)
        assert check_args(schema, args) == shortcut


@pytest.mark.parametrize(("schema", "value"), [
    ({"type": "object", "properties": {"city": {"type": "string", "description": "A city."},
                                       "unit": {"enum": ["C", "F"], "type": "string"}},
      "required": ["city"]}, {"city": "Oslo", "unit": "C"}),
    ({"type": "object", "properties": {"n": {"type": "integer"}, "x": {"type": "number"}},
      "additionalProperties": False}, {"n": 3, "x": 2.5}),
    ({"type": "object", "properties": {"tags": {"type": "array", "items": {"type": "string"}}},
      "additionalProperties": {"type": "boolean"}}, {"tags": ["a", "b"], "on": True}),
    ({"type": ["string", "null"]}, None),
])
def test_surely_valid_decides_the_common_tool_schemas(schema: dict[str, Any], value: Any) -> None:
    assert json_schema.surely_valid(schema, value)


@pytest.mark.parametrize(("schema", "value"), [
    ({"type": "object", "required": ["city"]}, {}),  # invalid
    ({"type": "integer"}, True),  # invalid: a boolean is no integer
    ({"type": "object", "additionalProperties": False}, {"x": 1}),  # invalid
    ({"enum": ["C", "F"]}, "c"),  # invalid
    ({"type": "integer"}, 2.0),  # valid, but left to the validator
    ({"enum": [1, 2]}, 1),  # valid, but left to the validator (1 == True, 1.0...)
    ({"type": "integer", "minimum": 0}, 5),  # a keyword it does not decide
    ({"type": "object", "properties": {"a": {"$ref": "#/$defs/a"}}, "$defs": {"a": {}}}, {}),
    ({"type": "object", "properties": "no"}, {}),  # not a schema at all
])
def test_surely_valid_leaves_the_rest_to_the_validator(schema: dict[str, Any], value: Any) -> None:
    assert not json_schema.surely_valid(schema, value)


# -- bounded validation: whatever the schema and the arguments, one check costs at most the budget

@pytest.fixture
def short_budget(monkeypatch: pytest.MonkeyPatch) -> float:
    """A validation budget of 0.2 s (the default, 1 s, made short to keep the tests short)."""
    monkeypatch.setattr(_validation, "VALIDATION_SECONDS", 0.2)
    return 0.2


SLOW = "^(a|a)*$"
"""A pattern that backtracks: each character of a value it does not match doubles the work."""
LONG = "a" * 27 + "!"
"""A value on which ``re`` would search SLOW for about 2**27 steps (tens of seconds)."""


@pytest.mark.parametrize(("schema", "value"), [
    ({"properties": {"a": {"type": "string", "pattern": SLOW}}}, {"a": LONG}),
    ({"patternProperties": {SLOW: {"type": "string"}}}, {LONG: "x"}),
    ({"properties": {"b": {}}, "patternProperties": {SLOW: {}},
      "additionalProperties": False}, {LONG: "x"}),
    ({"patternProperties": {SLOW: {}}, "unevaluatedProperties": False}, {LONG: "x"}),
    ({"propertyNames": {"pattern": SLOW}}, {LONG: "x"}),
    ({"properties": {"a": {"type": "array", "items": {"pattern": SLOW}}}},
     {"a": ["b", "c", LONG]}),
])
def test_a_backtracking_pattern_is_cut_at_the_budget_wherever_it_runs(
    short_budget: float, schema: dict[str, Any], value: Any
) -> None:
    """Hostile input (issue 38, item 1): ``re`` ran a client's pattern for as long as the
    pattern and the argument made it (doubling with each character), on the event loop."""
    with pytest.raises(json_schema.Unchecked, match="takes too long") as caught:
        json_schema.validator(schema).errors(value)
    assert SLOW in caught.value.reason
    problems = check_args({"type": "object", **schema}, value)
    assert len(problems) == 1 and "could not be checked" in problems[0] \
        and "the call was not run" in problems[0]


def test_a_pattern_keeps_its_meaning() -> None:
    schema = {"type": "object", "properties": {"code": {"type": "string", "pattern": r"^\d{3}$"}},
              "patternProperties": {"^x-": {"type": "integer"}}, "additionalProperties": False}
    checker = json_schema.validator(schema)
    assert checker.is_valid({"code": "123", "x-a": 1})
    assert [e.message for e in checker.errors({"code": "12a", "x-a": "1", "y": 0})] == [
        e.message for e in Draft202012Validator(schema).iter_errors(
            {"code": "12a", "x-a": "1", "y": 0})]


def test_a_pattern_too_large_to_compile_is_not_compiled() -> None:
    """The ``regex`` package writes counted repeats out when it compiles: ``a{1000000000}``
    would take gigabytes. A pattern heavier than the bound is refused, not compiled."""
    heavy = f"^a{{{json_schema.MAX_PATTERN_WEIGHT * 10}}}$"
    with pytest.raises(json_schema.Unchecked, match="too large to run"):
        json_schema.validator({"pattern": heavy}).is_valid("a")
    assert json_schema.validator({"pattern": r"^(?:\d{4}-){3}\d{4}$"}).is_valid(
        "1234-5678-9012-3456")


UNIQUE_CASES = [
    [1, 1.0], [True, 1], [False, 0], [None, None], ["1", 1], [[1], [1.0]], [[1], [True]],
    [{"a": 1, "b": 2}, {"b": 2, "a": 1}], [{"a": [1, {"b": True}]}, {"a": [1.0, {"b": True}]}],
    [{"a": [1, {"b": True}]}, {"a": [1, {"b": 1}]}], [{"a": 1}, {"a": 1, "b": None}],
    [[], {}], [[], []], [{}, {}], ["", None, 0, False, [], {}], [0.5, 0.25, 0.5],
    [10**30, 10**30 + 1, float(10**30)], [-0.0, 0], [[[[]]], [[[]]]], ["a", "b", "a"],
]


@pytest.mark.parametrize("items", UNIQUE_CASES)
def test_unique_items_agrees_with_jsonschema(items: list[Any]) -> None:
    schema = {"uniqueItems": True}
    assert json_schema.validator(schema).is_valid(items) == \
        Draft202012Validator(schema).is_valid(items), items


class Counted(dict):  # type: ignore[type-arg]
    """An object (a dict) that counts how often its members are read."""

    reads = 0

    def items(self) -> Any:
        Counted.reads += 1
        return super().items()


def test_unique_items_reads_each_object_once_not_once_per_pair() -> None:
    """Hostile input (issue 38, item 1): ``uniqueItems`` over a few thousand objects took
    ~45 s: jsonschema compares every pair of items that do not sort (objects)."""
    items = [Counted(k=i, n={"v": [i]}) for i in range(600)]
    Counted.reads = 0
    assert json_schema.validator({"uniqueItems": True}).is_valid(items)
    assert Counted.reads <= len(items)
    assert not json_schema.validator({"uniqueItems": True}).is_valid(
        [*items, {"n": {"v": [5.0]}, "k": 5}])


def branching(levels: int) -> dict[str, Any]:
    """A schema whose check tries 2**levels branches: ``anyOf`` of two references to the next
    level, down to a type no string has."""
    defs = {f"d{i}": {"anyOf": [{"$ref": f"#/$defs/d{i + 1}"}, {"$ref": f"#/$defs/d{i + 1}"}]}
            for i in range(levels)}
    defs[f"d{levels}"] = {"type": "integer"}
    return {"$defs": defs, "$ref": "#/$defs/d0"}


@pytest.mark.parametrize("schema", [
    branching(22),
    {"type": "array", "$defs": branching(8)["$defs"], "contains": {"$ref": "#/$defs/d0"}},
    {"type": "array", "items": {"enum": [[i] for i in range(2000)]}},
])
def test_a_combinatorial_schema_is_cut_at_the_budget(
    short_budget: float, schema: dict[str, Any]
) -> None:
    json_schema.check(schema)
    value = ["x"] * 2000 if schema.get("type") == "array" else "x"
    with pytest.raises(json_schema.Unchecked, match="time ran out"):
        json_schema.validator(schema).errors(value)


@pytest.mark.parametrize("schema", [
    {"$ref": "#"},
    {"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"allOf": [{"$ref": "#/$defs/a"}]}},
     "$ref": "#/$defs/a"},
    {"$defs": {"a": {"$ref": "#/$defs/a"}}, "unevaluatedProperties": False,
     "allOf": [{"$ref": "#/$defs/a"}]},
])
def test_a_reference_cycle_is_refused_not_a_crash(schema: dict[str, Any]) -> None:
    with pytest.raises(json_schema.Unchecked, match=r"\$ref cycle"):
        json_schema.validator(schema).is_valid({"a": 1})


def test_a_check_that_fails_in_jsonschema_refuses_the_arguments() -> None:
    """``multipleOf`` of a float divides: an integer past a float's range made the check
    raise OverflowError (a 500 in serve) instead of answering."""
    schema = {"type": "object", "properties": {"n": {"type": "integer", "multipleOf": 0.5}}}
    problems = check_args(schema, {"n": 10**400})
    assert len(problems) == 1 and "OverflowError" in problems[0]
    assert check_args(schema, {"n": 4}) == []


def test_checks_in_one_budget_share_its_deadline(monkeypatch: pytest.MonkeyPatch) -> None:
    """A budget spent by one check leaves none for the next one in it (the invoker's hint of
    other tools that would fit shares the call's budget), and a new budget starts afresh."""
    monkeypatch.setattr(_validation, "VALIDATION_SECONDS", 0.0)
    with json_schema.budget(), pytest.raises(json_schema.Unchecked):
        json_schema.validator({"type": "string"}).is_valid("x")
    monkeypatch.setattr(_validation, "VALIDATION_SECONDS", 60.0)
    with json_schema.budget():
        assert json_schema.validator({"type": "string"}).is_valid("x")


def test_a_pattern_too_long_to_compile_cheaply_is_refused_before_anything_compiles_it() -> None:
    """Hostile input: a 3.9 MB ``pattern`` of one character class weighs 1, so it passed the
    weight bound, and compiling it took 25 s before any timeout applied."""
    from react_agent.errors import ToolDefinitionError
    from react_agent.tools import schema as json_schema

    long = "[" + "a" * 5000 + "]"
    with pytest.raises(ToolDefinitionError, match="a pattern longer than 4096 characters"):
        json_schema.check({"type": "string", "pattern": long})
    with pytest.raises(ToolDefinitionError, match="patternProperties"):
        json_schema.check({"type": "object", "patternProperties": {long: {}}})
    with pytest.raises(json_schema.Unchecked, match="too long to run"):
        json_schema.search(long, "a")
    json_schema.check({"type": "string", "pattern": "[" + "a" * 4000 + "]"})  # long enough
