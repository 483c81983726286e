"""Tests for react_agent.policies._routing: showing only the tools that match the task."""

from __future__ import annotations

import json

import pytest

from react_agent import Agent, Toolbox
from react_agent.models import ScriptedModel
from react_agent.policies import Constrained, Routing, default_policies
from react_agent.policies._routing import select_tools

FINAL = json.dumps({"thought": "done", "action": {"final_answer": "ok"}})


def many_tools() -> Toolbox:
    tb = Toolbox()
    specs = {
        "get_weather": "Current weather and temperature for a city.",
        "get_stock_price": "Latest stock price for a ticker symbol.",
        "convert_currency": "Convert an amount of money between currencies.",
        "translate_text": "Translate text into another language.",
        "send_email": "Send an email to a recipient.",
        "search_web": "Search the web for pages about a query.",
        "set_alarm": "Set an alarm clock for a time.",
        "play_music": "Play a song or playlist.",
        "book_flight": "Book a flight between two airports.",
    }
    for name, text in specs.items():
        tb.add(lambda **kw: "ok", name=name, description=text,
               parameters={"type": "object", "properties": {"query": {"type": "string"}}})
    return tb


@pytest.mark.parametrize(
    ("task", "top_k", "shown"),
    [
        ("What's the temperature in Paris today?", 3, ["get_weather"]),
        ("Please translate 'hello' into French", 3, ["translate_text"]),
        # both tools the task asks for, in registration order, and nothing else matches
        ("Wake me at 7 with an alarm and play some music", 3, ["set_alarm", "play_music"]),
        # the two tools the task names outrank one that shares only an incidental word
        ("Book a flight and send an email about the price", 2, ["send_email", "book_flight"]),
    ],
)
def test_routing_shows_the_tools_the_task_names(task: str, top_k: int, shown: list[str]) -> None:
    assert select_tools(many_tools(), task, mode="auto", top_k=top_k).names == shown


def test_routing_never_shows_more_than_top_k_nor_a_tool_without_a_shared_word() -> None:
    task = "Book a flight and send an email about the price"
    for top_k in range(1, 10):
        shown = select_tools(many_tools(), task, mode="lexical", top_k=top_k).names
        assert 1 <= len(shown) <= top_k
        assert not {"get_weather", "set_alarm", "play_music", "translate_text"} & set(shown)


def test_routing_keeps_every_tool_when_nothing_matches_or_few_tools() -> None:
    tools = many_tools()
    assert select_tools(tools, "北京天气怎么样", mode="auto") is tools
    assert select_tools(tools, "weather", mode="off") is tools
    assert select_tools(tools, "weather", mode="auto", threshold=20) is tools
    two = select_tools(tools, "weather stock email", mode="lexical", top_k=2)
    assert len(two) == 2 and set(two.names) <= {"get_weather", "get_stock_price", "send_email"}


def test_the_agent_routes_with_its_config() -> None:
    model = ScriptedModel([FINAL, FINAL])
    Agent(model, many_tools()).run("Weather in Oslo? temperature")  # routing is off by default
    routing = default_policies(use=[Routing(mode="auto")])
    Agent(model, many_tools(), policies=routing).run("Weather in Oslo? temperature")
    unrouted, routed = (call[0]["content"] for call in model.calls)
    assert "- play_music:" in unrouted and "- play_music:" not in routed
    assert "- get_weather:" in routed


def test_a_routed_run_shows_only_the_chosen_tools_but_can_call_any() -> None:
    call_hidden = json.dumps({"thought": "t", "action": {"name": "play_music",
                                                         "args": {"query": "x"}}})
    model = ScriptedModel([call_hidden, FINAL])
    policies = default_policies(use=[Constrained(mode="auto"), Routing(mode="auto", top_k=2)])
    result = Agent(model, many_tools(), policies=policies).run("Weather in Oslo? temperature")
    assert result.tools == ["get_weather"]
    system = model.calls[0][0]["content"]
    assert "- get_weather:" in system and "- play_music:" not in system
    schema_tools = json.dumps(model.schemas[0])
    assert '"get_weather"' in schema_tools and '"play_music"' not in schema_tools
    assert result.steps[0].observations == ["ok"]  # a tool not shown still runs if named


def test_lexical_routing_filters_small_toolboxes_too() -> None:
    tb = Toolbox([many_tools()[n] for n in ("get_weather", "get_stock_price", "set_alarm")])
    shown = select_tools(tb, "weather in Tokyo and London", mode="lexical")
    assert shown.names == ["get_weather"]
    assert select_tools(tb, "weather", mode="auto") is tb  # under the threshold
