"""Tests for react_agent.policies._constrained: the reply schema
(:func:`react_agent.engine.reply_schema`), how the agent sends it
(:class:`~react_agent.policies.Constrained`) and how the OpenAI-compatible backend uses it."""

from __future__ import annotations

import json
from typing import Any, Literal

import pytest
from helpers import BAD_REPLY, act, final, run
from helpers import weather_toolbox as temperatures
from jsonschema import Draft202012Validator

from react_agent import Agent, ConfigError, Toolbox
from react_agent.engine import reply_schema
from react_agent.models import OpenAIChatModel, ScriptedModel
from react_agent.policies import Constrained, Review, Routing, default_policies

FINAL = json.dumps({"thought": "done", "action": {"final_answer": "ok"}})
AUTO = default_policies(use=[Constrained(mode="auto")])
"""The default policies, with the reply schema sent to backends that take one."""


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


# -- the reply schema ---------------------------------------------------------------------------
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


# -- the agent sends it -------------------------------------------------------------------------
@pytest.mark.parametrize(("mode", "sent", "strict"), [("auto", True, False), ("on", True, True),
                                                      ("off", False, False)])
def test_agent_sends_the_schema_by_mode(mode: str, sent: bool, strict: bool) -> None:
    seen: list[Any] = []

    class Recording(ScriptedModel):
        def complete(self, messages: Any, schema: Any = None, strict: bool = False) -> Any:
            seen.append(strict)
            return super().complete(messages, schema, strict)

    model = Recording([FINAL])
    toolbox = weather_toolbox()
    Agent(model, toolbox, policies=default_policies(use=[Constrained(mode=mode)])).run("hi")
    assert (model.schemas[0] == reply_schema(toolbox)) is sent
    assert model.schemas[0] is None or sent
    assert seen == [strict]


def test_constrained_on_needs_a_backend_that_takes_a_schema() -> None:
    class Plain:
        name = "plain"

        def complete(self, messages: Any) -> Any:
            raise AssertionError

    with pytest.raises(ConfigError, match=r"Constrained\(mode='on'\) needs a backend"):
        Agent(Plain(), policies=default_policies(use=[Constrained(mode="on")]))
    Agent(Plain(), policies=default_policies(use=[Constrained(mode="auto")]))  # sends nothing


def test_bad_modes_are_config_errors() -> None:
    with pytest.raises(ConfigError, match="Constrained mode must be one of auto, on, off"):
        Constrained(mode="yes")
    with pytest.raises(ConfigError, match="Routing mode must be one of"):
        Routing(mode="groups")
    with pytest.raises(ConfigError, match="Review mode must be one of auto, always"):
        Review(mode="off")  # off: default_policies(off=["review"])


def test_the_reply_after_an_unusable_one_is_held_to_the_reply_schema() -> None:
    toolbox = temperatures()
    _, model = run(toolbox, [BAD_REPLY, BAD_REPLY, act("get_weather", city="Rome"),
                             final("Rome.")])  # Constrained(mode="off") by default
    assert model.schemas[0] is None and model.schemas[3] is None  # usable before: unconstrained
    assert model.schemas[1] == model.schemas[2] == reply_schema(toolbox)
    _, model = run(toolbox, [BAD_REPLY, final("Rome.")],
                   policies=default_policies(use=[Constrained(after_unusable=False)]))
    assert model.schemas == [None, None]


# -- response_format negotiation with a real HTTP server -----------------------------------------
def test_openai_model_falls_back_through_the_forms(fault_server: Any) -> None:
    fault_server.refuse_formats = {"json_schema"}
    fault_server.script = [f"reply:{FINAL}"]
    model = OpenAIChatModel(base_url=fault_server.url, max_retries=0)
    agent = Agent(model, weather_toolbox(), policies=AUTO)
    assert agent.run("hi").status == "final_answer"
    assert agent.run("again").status == "final_answer"
    assert [r["response_format"]["type"] for r in fault_server.refused] == ["json_schema"]
    used = [r["response_format"] for r in fault_server.requests]
    assert [u["type"] for u in used] == ["json_object", "json_object"]  # remembered
    assert used[0]["schema"] == reply_schema(agent.toolbox)
    assert model.constrained_form == "json_object+schema"


def test_openai_model_uses_plain_prompting_when_every_form_is_refused(fault_server: Any) -> None:
    fault_server.refuse_formats = {"json_schema", "json_object"}
    fault_server.script = [f"reply:{FINAL}"]
    model = OpenAIChatModel(base_url=fault_server.url, max_retries=0)
    agent = Agent(model, weather_toolbox(), policies=AUTO)
    assert agent.run("hi").status == "final_answer"
    assert agent.run("again").status == "final_answer"
    assert len(fault_server.refused) == 2, "tried once per form, then remembered"
    assert all("response_format" not in r for r in fault_server.requests)
    assert model.constrained_form == ""


def test_openai_model_strict_fails_when_every_form_is_refused(fault_server: Any) -> None:
    fault_server.refuse_formats = {"json_schema", "json_object"}
    model = OpenAIChatModel(base_url=fault_server.url, max_retries=0)
    result = Agent(model, weather_toolbox(),
                   policies=default_policies(use=[Constrained(mode="on")])).run("hi")
    assert result.status == "model_error"
    assert "rejected every response_format form" in (result.error or "")
    assert "--constrained auto" in (result.error or "")
    assert fault_server.requests == []


def test_openai_json_schema_form_is_sent_first(fault_server: Any) -> None:
    fault_server.script = [f"reply:{FINAL}"]
    model = OpenAIChatModel(base_url=fault_server.url, max_retries=0)
    Agent(model, weather_toolbox(), stream=True, policies=AUTO).run("hi")
    form = fault_server.requests[0]["response_format"]
    assert form["type"] == "json_schema" and form["json_schema"]["name"] == "react_step"
    assert fault_server.requests[0]["stream"] is True
    assert model.constrained_form == "json_schema"


def test_plain_prompting_is_the_default(fault_server: Any) -> None:
    fault_server.script = [f"reply:{FINAL}"]
    Agent(OpenAIChatModel(base_url=fault_server.url, max_retries=0), weather_toolbox()).run("hi")
    assert "response_format" not in fault_server.requests[0]


def test_a_500_that_names_response_format_is_a_refused_form(fault_server: Any) -> None:
    """llama-cpp-python's server answers 500 (a validation error) to the json_schema form."""
    fault_server.script = [
        "status:500:1 validation error: body.response_format.type: Input should be 'text' or "
        "'json_object'", f"reply:{FINAL}",
    ]
    model = OpenAIChatModel(base_url=fault_server.url, max_retries=0)
    result = Agent(model, weather_toolbox(), policies=AUTO).run("hi")
    assert result.status == "final_answer"
    assert [r["response_format"]["type"] for r in fault_server.requests] == [
        "json_schema", "json_object"]
    assert model.constrained_form == "json_object+schema"
