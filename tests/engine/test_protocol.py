"""Tests for react_agent.engine._protocol: the JSON Schema of a valid reply
(:func:`~react_agent.engine.reply_schema`)."""

from __future__ import annotations

import json
from typing import Any, Literal

from jsonschema import Draft202012Validator
from pydantic import BaseModel

from react_agent import Toolbox
from react_agent.engine import output_spec, reply_schema


def weather_toolbox() -> Toolbox:
    tb = Toolbox()

    @tb.tool
    def get_weather(city: str, unit: Literal["c", "f"] = "c") -> str:
        """Current weather of a city.

        Args:
            city: the city name.
        """
        return f"sunny in {city}"

    @tb.tool
    def configure(name: str, **options: Any) -> str:
        """Configure anything."""
        return name

    return tb


def valid(schema: dict[str, Any], reply: Any) -> bool:
    return Draft202012Validator(schema).is_valid(reply)


def test_reply_schema_accepts_exactly_the_protocol() -> None:
    schema = reply_schema(weather_toolbox())
    Draft202012Validator.check_schema(schema)
    call = {"name": "get_weather", "args": {"city": "Oslo"}}
    assert valid(schema, {"thought": "t", "action": call})
    with_unit = {**call, "args": {"city": "Oslo", "unit": "f"}}
    assert valid(schema, {"thought": "t", "action": with_unit})
    assert valid(schema, {"thought": "t", "action": [call, {"name": "configure",
                                                            "args": {"name": "x", "any": 1}}]})
    assert valid(schema, {"thought": "t", "action": {"final_answer": "ok"}})
    for bad in [
        {"action": call},                                               # no thought
        {"thought": "t", "action": {"name": "get_wether", "args": {"city": "Oslo"}}},
        {"thought": "t", "action": {"name": "get_weather", "args": {}}},            # missing arg
        {"thought": "t", "action": {"name": "get_weather", "args": {"city": "O", "x": 1}}},
        {"thought": "t", "action": {"name": "get_weather", "args": {"city": "O", "unit": "k"}}},
        {"thought": "t", "action": []},
        {"thought": "t", "action": {"final_answer": 3}},
        {"thought": "t", "action": call, "extra": 1},
    ]:
        assert not valid(schema, bad), bad


def test_a_reply_schema_without_the_final_answer_holds_a_reply_to_calls() -> None:
    schema = reply_schema(weather_toolbox(), final_answer=False)
    json.dumps(schema)  # no branch refers to itself: it goes over the wire and into a grammar
    Draft202012Validator.check_schema(schema)
    call = {"name": "get_weather", "args": {"city": "Oslo"}}
    assert valid(schema, {"thought": "t", "action": call})
    assert valid(schema, {"thought": "t", "action": [call, call]})
    assert not valid(schema, {"thought": "t", "action": {"final_answer": "ok"}})
    assert not valid(schema, {"thought": "t", "action": [[call]]})
    assert reply_schema(weather_toolbox()) == reply_schema(weather_toolbox(), final_answer=True)
    assert valid(reply_schema(Toolbox([]), final_answer=False),  # no tools: an answer stays
                 {"thought": "t", "action": {"final_answer": "ok"}})


def test_reply_schema_leaves_out_what_grammars_choke_on() -> None:
    text = json.dumps(reply_schema(weather_toolbox()))
    assert '"default"' not in text and '"description"' not in text
    assert weather_toolbox()["get_weather"].parameters["properties"]["unit"]["default"] == "c"


def test_arguments_named_like_annotation_keywords_are_kept() -> None:
    """An argument called title, description, default or examples is a name, not a keyword:
    stripping it left it required with additionalProperties false, so no call was valid."""
    tb = Toolbox()

    @tb.tool
    def create_issue(title: str, description: str, default: bool = False,
                     examples: list[str] | None = None) -> str:
        """Create an issue.

        Args:
            title: a short title.
            description: what is wrong.
        """
        return title

    tb.add_openai_tool({"type": "function", "function": {
        "name": "tag", "description": "Tag things.", "parameters": {
            "type": "object", "title": "Tag args",
            "properties": {"items": {"type": "array", "description": "what to tag",
                                     "items": {"type": "object", "properties": {
                                         "title": {"type": "string", "title": "The title"}},
                                         "required": ["title"]}}},
            "required": ["items"], "$defs": {"description": {"type": "string"}}}}},
        lambda items: "ok")
    schema = reply_schema(tb)
    call = {"name": "create_issue", "args": {"title": "Crash", "description": "on start",
                                              "default": True, "examples": ["x"]}}
    assert valid(schema, {"thought": "t", "action": call})
    assert not valid(schema, {"thought": "t", "action": {"name": "create_issue",
                                                         "args": {"title": "Crash"}}})
    tag = {"name": "tag", "args": {"items": [{"title": "a"}]}}
    assert valid(schema, {"thought": "t", "action": tag})
    assert not valid(schema, {"thought": "t", "action": {"name": "tag", "args": {"items": [{}]}}})
    args = schema["properties"]["action"]["anyOf"][0]["properties"]["args"]
    assert set(args["properties"]) == {"title", "description", "default", "examples"}
    assert "description" not in args["properties"]["title"]  # the keyword inside is stripped
    tag_args = json.dumps(schema["properties"]["action"]["anyOf"][1]["properties"]["args"])
    assert '"The title"' not in tag_args and '"what to tag"' not in tag_args
    assert '"$defs": {"description": {"type": "string"}}' in tag_args


def test_reply_schema_without_tools_allows_only_a_final_answer() -> None:
    schema = reply_schema(Toolbox())
    assert valid(schema, {"thought": "t", "action": {"final_answer": "x"}})
    assert not valid(schema, {"thought": "t", "action": {"name": "x", "args": {}}})


class _Item(BaseModel):
    name: str
    count: int


class _Order(BaseModel):
    items: list[_Item]
    note: str | None = None


def test_the_final_answer_is_held_to_an_output_schema_with_its_references() -> None:
    output = output_spec(_Order).schema
    assert "$defs" in output  # pydantic writes the nested model as a reference
    schema = reply_schema(weather_toolbox(), output)
    Draft202012Validator.check_schema(schema)
    check = Draft202012Validator(schema)
    good = {"thought": "t", "action": {"final_answer": {"items": [{"name": "a", "count": 1}]}}}
    assert check.is_valid(good)
    for answer in ({"items": [{"name": "a"}]}, {"items": "a"}, "a text answer"):
        assert not check.is_valid({"thought": "t", "action": {"final_answer": answer}})
    assert check.is_valid({"thought": "t", "action": {"name": "get_weather",
                                                      "args": {"city": "Rome"}}})
    assert "title" not in json.dumps(schema["$defs"])  # annotations cut, as for arguments


def test_without_an_output_schema_the_final_answer_is_a_string() -> None:
    final = reply_schema(Toolbox())["properties"]["action"]["anyOf"][-1]
    assert final["properties"]["final_answer"] == {"type": "string"}
