"""Tests for react_agent.policies._unknown_args: a call valid but for arguments its tool does not
take runs without them (:class:`~react_agent.policies.DropUnknownArgs`)."""

from __future__ import annotations

import pytest
from helpers import act, final, weather_and_units

from react_agent import Agent, Step, ToolCall
from react_agent.models import ScriptedModel
from react_agent.policies import DropUnknownArgs, default_policies


def _agent(replies: list[str], *, drop: bool = True) -> tuple[Agent, ScriptedModel, list[str]]:
    toolbox, ran = weather_and_units()
    model = ScriptedModel(replies)
    use = [DropUnknownArgs()] if drop else []
    return Agent(model, toolbox, policies=default_policies(use=use, off=["review"])), model, ran


def test_a_call_with_an_argument_its_tool_does_not_take_runs_without_it() -> None:
    agent, model, ran = _agent([act("get_weather", city="Oldtown", unit="celsius"),
                                final("33.1 °C in Oldtown.")])
    result = agent.run("Weather in Oldtown?")
    assert ran == ["weather Oldtown"]
    first = result.steps[0]
    assert first.tool_calls == [ToolCall("get_weather", {"city": "Oldtown"})]
    assert first.records["unknown_args"] == [{"name": "get_weather", "dropped": ["unit"]}]
    assert [note[:2] for note in first.notes] == [["unknown_args", "Dropped"]]
    observation = model.calls[1][-1]["content"]
    assert "33.1" in observation and "unit" in observation.split("33.1", 1)[1]
    assert '"unit"' in first.raw_output  # the reply as written stays on the step
    assert Step.from_dict(first.to_dict()).records == first.records


def test_without_the_policy_the_same_call_is_refused() -> None:
    agent, _, ran = _agent([act("get_weather", city="Oldtown", unit="celsius"),
                            final("I could not.")], drop=False)
    result = agent.run("Weather in Oldtown?")
    assert ran == []
    assert result.steps[0].results[0].error == "invalid_args"


@pytest.mark.parametrize(
    ("args", "why"),
    [
        ({"cty": "Oldtown"}, "a misspelt required argument: invalid without it"),
        ({"city": "Oldtown", "citi": "Newtown"}, "looks like a misspelling of an argument"),
        ({"city": ["a", "b"], "unit": "celsius"}, "still invalid without it"),
    ],
    ids=["required-misspelt", "close-name", "invalid-anyway"],
)
def test_a_call_with_another_fault_is_refused_as_sent(args: dict[str, object], why: str) -> None:
    agent, _, ran = _agent([act("get_weather", **args), final("I could not.")])
    result = agent.run("Weather in Oldtown?")
    assert ran == [], why
    assert "unknown_args" not in result.steps[0].records
    assert result.steps[0].results[0].error == "invalid_args"


def test_a_tool_that_takes_extra_arguments_is_left_alone() -> None:
    from react_agent import Toolbox

    seen: list[dict[str, object]] = []
    toolbox = Toolbox()

    @toolbox.tool(parameters={"type": "object", "properties": {"q": {"type": "string"}},
                              "required": ["q"], "additionalProperties": True})
    def search(**kwargs: object) -> str:
        """Search."""
        seen.append(kwargs)
        return "found"

    model = ScriptedModel([act("search", q="x", extra=1), final("found")])
    Agent(model, toolbox, policies=[DropUnknownArgs()]).run("Search x")
    assert seen == [{"q": "x", "extra": 1}]
