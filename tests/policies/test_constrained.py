"""Tests for react_agent.policies._constrained: how the agent sends the reply schema
(:class:`~react_agent.policies.Constrained`; the schema itself: tests/engine/test_protocol.py)
and how the OpenAI-compatible backend uses it."""

from __future__ import annotations

import json
from typing import Any, Literal

import pytest
from helpers import BAD_REPLY, act, final, run
from helpers import weather_toolbox as temperatures

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
