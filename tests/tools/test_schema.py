"""Tool schemas from outside are bounded, self-contained, and never
make the process open a URL or a file."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from probes import CountingListener, opened

from react_agent import Toolbox, ToolCall
from react_agent.errors import ToolDefinitionError
from react_agent.harness._evaluation import toolbox_from_specs
from react_agent.tools import _schema as json_schema
from react_agent.tools._invoker import invoke


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
