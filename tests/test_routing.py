"""Tests for react_agent.routing: showing only the tools that match the task."""

from __future__ import annotations

import json

from react_agent import Agent, AgentConfig, Toolbox
from react_agent.models import ScriptedModel
from react_agent.routing import select_tools

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


def test_routing_shows_the_best_matching_tools() -> None:
    config = AgentConfig(routing="auto", routing_top_k=3)
    shown = select_tools(many_tools(), "What's the temperature in Paris today?", config)
    assert shown.names == ["get_weather"]  # the only tool that matches at all
    shown = select_tools(many_tools(), "Book a flight and send an email about the price", config)
    assert shown.names == ["get_stock_price", "send_email", "book_flight"]
    shown = select_tools(many_tools(), "Please translate 'hello' into French", config)
    assert shown.names[0] == "translate_text" or "translate_text" in shown.names


def test_routing_keeps_every_tool_when_nothing_matches_or_few_tools() -> None:
    tools = many_tools()
    assert select_tools(tools, "北京天气怎么样", AgentConfig(routing="auto")) is tools
    assert select_tools(tools, "weather", AgentConfig()) is tools  # off by default
    assert select_tools(tools, "weather", AgentConfig(routing="auto",
                                                      routing_threshold=20)) is tools
    two = select_tools(tools, "weather stock email", AgentConfig(routing="lexical",
                                                                routing_top_k=2))
    assert len(two) == 2


def test_a_routed_run_shows_only_the_chosen_tools_but_can_call_any() -> None:
    call_hidden = json.dumps({"thought": "t", "action": {"name": "play_music",
                                                         "args": {"query": "x"}}})
    model = ScriptedModel([call_hidden, FINAL])
    result = Agent(model, many_tools(), routing="auto", routing_top_k=2, constrained="auto").run(
        "Weather in Oslo? temperature"
    )
    assert result.tools == ["get_weather"]
    system = model.calls[0][0]["content"]
    assert "- get_weather:" in system and "- play_music:" not in system
    schema_tools = json.dumps(model.schemas[0])
    assert '"get_weather"' in schema_tools and '"play_music"' not in schema_tools
    assert result.steps[0].observations == ["ok"]  # a tool not shown still runs if named


def test_lexical_routing_filters_small_toolboxes_too() -> None:
    tb = Toolbox([many_tools()[n] for n in ("get_weather", "get_stock_price", "set_alarm")])
    shown = select_tools(tb, "weather in Tokyo and London", AgentConfig(routing="lexical"))
    assert shown.names == ["get_weather"]
    assert select_tools(tb, "weather", AgentConfig(routing="auto")) is tb  # under the threshold
