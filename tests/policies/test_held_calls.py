"""Tests for react_agent.policies._held_calls: in a reply that calls several tools, a call with
values nobody stated waits for the results of the others
(:class:`~react_agent.policies.HoldDependentCalls`)."""

from __future__ import annotations

import io
from typing import Any

import pytest
from helpers import WEATHER, final, several, weather_and_units

from react_agent import Agent, Step, ToolCall
from react_agent.harness._display import Printer
from react_agent.models import ScriptedModel
from react_agent.policies import default_policies


def test_a_call_with_values_nobody_stated_waits_for_the_results_of_the_others() -> None:
    toolbox, ran = weather_and_units()
    guessed = '{"name": "convert", "args": {"value": 36.9, "unit": "F"}}'
    model = ScriptedModel([several(WEATHER, guessed),
                           several('{"name": "convert", "args": {"value": 33.1, "unit": "F"}}'),
                           final("33.1 °C is 91.58 °F.")])
    printed = io.StringIO()
    result = Agent(model, toolbox, policies=default_policies(off=["review"]),
                   callbacks=[Printer(printed)]).run("Oldtown in Fahrenheit?")
    assert ran == ["weather Oldtown", "convert 33.1"]
    assert 'Held: convert {"value": 36.9, "unit": "F"} (values stated neither' in \
        printed.getvalue()
    first = result.steps[0]
    assert first.tool_calls == [ToolCall("get_weather", {"city": "Oldtown"})]
    assert first.records["held_calls"] == [{"name": "convert",
                                            "args": {"value": 36.9, "unit": "F"}}]
    assert [note[:2] for note in first.notes] == [["held_calls", "Held"]]
    assert "36.9" in first.raw_output  # the reply as written stays on the step
    sent = model.calls[1]
    assert "36.9" not in sent[2]["content"] and "get_weather" in sent[2]["content"]
    assert "Not run yet: convert" in sent[3]["content"]
    assert Step.from_dict(first.to_dict()).records == first.records


@pytest.mark.parametrize(
    ("calls", "off"),
    [
        ([WEATHER, '{"name": "get_weather", "args": {"city": "Nowhere Else"}}'], []),  # one tool
        (['{"name": "convert", "args": {"value": 36.9, "unit": "F"}}',
          '{"name": "get_weather", "args": {"city": "Guessed City"}}'], []),  # all would wait
        ([WEATHER, '{"name": "convert", "args": {"value": 36.9, "unit": "F"}}'],
         ["held_calls"]),
    ],
    ids=["same-tool", "all-unstated", "off"],
)
def test_no_call_waits_in_these_replies(calls: list[str], off: list[str]) -> None:
    toolbox, ran = weather_and_units()
    model = ScriptedModel([several(*calls), final("done")])
    result = Agent(model, toolbox, policies=default_policies(off=["review", *off])).run(
        "Oldtown in Fahrenheit?")
    assert len(ran) == 2 and "held_calls" not in result.steps[0].records
    assert "Not run yet" not in model.calls[1][-1]["content"]


@pytest.mark.parametrize(("task", "args"), [
    ("Invest $5000 at an annual rate of 5% for 7 years.", {"rate": 0.05}),
    ("Net income of $2 million on equity of $10 million.", {"income": 2000000}),
    ("营收3万元。", {"income": 30000}),
    ("Lawsuits filed after January 1, 2020.", {"since": "2020-01-01"}),
    ("Air quality on 25 December 2020, please.", {"since": "2020-12-25"}),
    ("Air quality on 2020/12/25, please.", {"since": "2020-12-25"}),
    ("A pet-friendly hotel, please.", {"features": ["pet_friendly"]}),
    ("The area under x^2, please.", {"function": "x**2"}),
])
def test_a_value_the_task_states_in_other_words_does_not_wait(task: str, args: dict[str, Any]
                                                               ) -> None:
    """Percentages, amounts with a scale, dates in other forms and words joined by other marks
    are stated: a right reply of independent calls runs whole (issue 41's misfire: BFCL's
    parallel_multiple items with the right calls, held back)."""
    from react_agent.engine import Facts
    from react_agent.policies._grounding import unstated
    from react_agent.policies._held_calls import Said

    facts = Facts()
    facts.told({"role": "user", "content": task})
    said = Said(facts)
    assert unstated(ToolCall("tool", args), said.text, said.numbers) == []
    made_up = {k: (v + 1 if isinstance(v, (int, float)) else f"{v}x") for k, v in args.items()
               if not isinstance(v, list)}
    if made_up:
        assert unstated(ToolCall("tool", made_up), said.text, said.numbers) != []


def test_a_value_the_schema_lists_does_not_wait() -> None:
    from react_agent.policies._grounding import unstated

    schema = {"type": "object", "properties": {
        "info": {"type": "array", "items": {"type": "string", "enum": ["Established Year"]}},
        "method": {"type": "string", "default": "most accepted"}}}
    call = ToolCall("park", {"info": ["Established Year"], "method": "most accepted"})
    assert unstated(call, "tell me about the park", set(), schema) == []
    assert unstated(call, "tell me about the park", set(), None) != []
