"""Tests for react_agent.policies._missed_call: a run's first answer given without a tool, a
focused question whether a tool shown fits, and the call asked for instead
(:class:`~react_agent.policies.MissedCall`)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import pytest
from helpers import act, final, weather_and_units

from react_agent import (
    Agent,
    AgentConfig,
    ConfigError,
    ModelError,
    ModelReply,
    ScriptedModel,
    Step,
    Toolbox,
)
from react_agent.engine import Policy, Run
from react_agent.events import AnswerToken, PolicyNote
from react_agent.parsing import parse_error
from react_agent.policies import MissedCall, Relevance, default_policies
from react_agent.types import Reply

YES = ModelReply("yes", choices={"yes": 0.9, "no": 0.1})
DOUBT = ModelReply("yes", choices={"yes": 0.6, "no": 0.4})  # "yes", but below the threshold


def _agent(replies: Sequence[Any], toolbox: Toolbox | None = None, **options: Any
           ) -> tuple[Agent, ScriptedModel, list[str]]:
    tools, ran = weather_and_units()
    model = ScriptedModel(replies)
    policies = default_policies(use=[MissedCall(**options)], off=["review"])
    return Agent(model, toolbox or tools, policies=policies), model, ran


def test_an_answer_from_memory_where_a_tool_fits_becomes_the_call() -> None:
    answer = final("It is sunny in Paris.")
    call = act("get_weather", city="Paris")
    agent, model, ran = _agent([answer, YES, call, final("33.1 °C in Paris.")])
    events = list(agent.iter("Weather in Paris?"))
    result = events[-1].result
    assert ran == ["weather Paris"]
    assert result.status == "final_answer" and result.final_answer == "33.1 °C in Paris."
    first, question, again, last = result.steps
    assert (first.origin, first.in_history, first.final_answer) == (None, False,
                                                                    "It is sunny in Paris.")
    assert (question.origin, question.in_history) == ("missed_call", False)
    assert question.records["missed_call"] == {"yes": 0.9,
                                               "tools": ["get_weather", "convert"]}
    assert (again.origin, again.in_history) == ("missed_call", True)
    assert [c.name for c in again.tool_calls] == ["get_weather"] and again.results[0].ok
    assert last.origin is None
    # the question shows the tools and the task, nothing of the run
    asked = model.calls[1]
    assert [m["role"] for m in asked] == ["system", "user"]
    assert "get_weather" in asked[1]["content"] and "Weather in Paris?" in asked[1]["content"]
    assert "sunny" not in asked[1]["content"]
    # asked again without the answer in the history, told a tool fits, held to a call
    assert model.calls[2][:2] == model.calls[0]
    assert model.calls[2][2]["role"] == "user" and "Call the tool" in model.calls[2][2]["content"]
    branches = model.schemas[2]["properties"]["action"]["anyOf"]  # type: ignore[index]
    assert all("final_answer" not in b.get("properties", {}) for b in branches)
    assert [m["role"] for m in result.messages][:4] == ["system", "user", "user", "assistant"]
    assert "sunny" not in str(result.messages)
    notes = [e for e in events if isinstance(e, PolicyNote)]
    assert [(n.step, n.policy) for n in notes] == [(first, "missed_call")]
    assert "one of get_weather, convert fits the task: 90% 'yes', at least 80%" in notes[0].text
    # the answer set aside was never streamed as the answer
    assert not [e for e in events if isinstance(e, AnswerToken) and "sunny" in e.text]


def test_an_answer_the_question_doubts_stays() -> None:
    agent, model, ran = _agent([final("2 + 2 = 4."), DOUBT])
    result = agent.run("What is 2 + 2?")
    assert ran == [] and result.final_answer == "2 + 2 = 4."
    assert [s.origin for s in result.steps] == [None, "missed_call"]
    assert result.steps[0].in_history
    assert len(model.calls) == 2
    notes = [n for s in result.steps for n in s.notes]
    assert any("60% 'yes', below 80%; the answer stays" in n[2] for n in notes)


@pytest.mark.parametrize("again", [
    final("It is sunny in Paris."),  # a final answer again (a backend without schemas)
    "no action at all",  # an unusable reply
])
def test_no_call_asked_for_keeps_the_first_answer_and_the_history(again: str) -> None:
    answer = final("It is sunny in Paris.")
    agent, _, ran = _agent([answer, YES, again])
    result = agent.run("Weather in Paris?")
    assert ran == [] and result.final_answer == "It is sunny in Paris."
    assert [m["role"] for m in result.messages] == ["system", "user", "assistant"]
    assert result.messages[-1]["content"] == answer and result.steps[0].in_history
    assert [s.in_history for s in result.steps[1:]] == [False, False]


def test_a_model_error_or_an_interrupt_keeps_the_answer() -> None:
    def broken(messages: Any) -> str:
        raise ModelError("the server went away")

    agent, _, ran = _agent([final("It is sunny."), broken])
    result = agent.run("Weather in Paris?")
    assert result.final_answer == "It is sunny." and ran == []
    assert any("failed (the server went away); the answer stays" in n[2]
               for n in result.steps[0].notes)

    def interrupted(messages: Any) -> str:
        raise KeyboardInterrupt

    answer = final("It is sunny.")
    agent, _, ran = _agent([answer, YES, interrupted])
    result = agent.run("Weather in Paris?")
    assert result.status == "interrupted" and ran == []
    assert result.messages[-1]["content"] == answer and result.steps[0].in_history


def test_asked_only_before_the_first_call_once_and_with_tools() -> None:
    # a final answer after a call: not asked
    agent, model, _ = _agent([act("get_weather", city="Paris"), final("33.1 °C.")])
    assert agent.run("Weather in Paris?").final_answer == "33.1 °C."
    assert len(model.calls) == 2
    # no tools: not asked
    model = ScriptedModel([final("Hello!")])
    agent = Agent(model, Toolbox([]),
                  policies=default_policies(use=[MissedCall()], off=["review"]))
    assert agent.run("Hi").final_answer == "Hello!" and len(model.calls) == 1
    # in a conversation that already has tool results: not asked
    tools, _ = weather_and_units()
    history = [{"role": "user", "content": "Weather in Paris?"},
               {"role": "assistant", "content": act("get_weather", city="Paris")},
               {"role": "user", "content": "Observation: 33.1 °C"},
               {"role": "assistant", "content": final("33.1 °C.")}]
    model = ScriptedModel([final("It was 33.1 °C.")])
    agent = Agent(model, tools, policies=default_policies(use=[MissedCall()], off=["review"]))
    events = list(agent.iter("And before?", history=history))
    assert events[-1].result.final_answer == "It was 33.1 °C."
    assert len(model.calls) == 1


def test_a_yes_in_words_from_a_backend_without_probabilities_counts() -> None:
    agent, _, ran = _agent([final("It is sunny."), "Yes.", act("get_weather", city="Paris"),
                            final("33.1 °C.")])
    assert agent.run("Weather in Paris?").final_answer == "33.1 °C."
    assert ran == ["weather Paris"]


def test_with_many_tools_the_question_shows_those_that_match_the_task() -> None:
    toolbox = Toolbox()
    for n, topic in enumerate(["parcels", "meeting rooms", "recipes", "tides", "stocks"]):
        toolbox.add(lambda: "none", name=f"tool_{n}", description=f"Look up {topic}.")
    toolbox.add(lambda city: "rain", name="get_forecast",
                description="The weather forecast for a city.",
                parameters={"type": "object", "properties": {"city": {"type": "string"}},
                            "required": ["city"]})
    model = ScriptedModel([final("Sunny."), DOUBT])
    agent = Agent(model, toolbox, policies=default_policies(use=[MissedCall(max_tools=2)],
                                                            off=["review"]))
    result = agent.run("What is the weather forecast for Paris?")
    shown = result.steps[1].records["missed_call"]["tools"]
    assert len(shown) == 2 and "get_forecast" in shown
    assert "get_forecast" in model.calls[1][1]["content"]
    assert sum(f"tool_{n}" in model.calls[1][1]["content"] for n in range(5)) == 1


def test_with_many_tools_and_no_word_in_common_the_question_shows_them_all_up_to_a_bound(
) -> None:
    from react_agent.policies._missed_call import MAX_TOOLS_UNRANKED

    for count, asked in ((6, 6), (MAX_TOOLS_UNRANKED + 5, MAX_TOOLS_UNRANKED)):
        toolbox = Toolbox()
        for n in range(count):
            toolbox.add(lambda: "none", name=f"tool_{n}", description=f"Look up topic {n}.")
        model = ScriptedModel([final("4,000,000"), DOUBT])
        agent = Agent(model, toolbox, policies=default_policies(
            use=[MissedCall(max_tools=2)], off=["review"]))
        result = agent.run("2718 * 1414 = ?")
        assert len(result.steps[1].records["missed_call"]["tools"]) == asked


def test_it_comes_after_relevance_and_calls_it_gives_are_not_asked_about_again() -> None:
    tools, ran = weather_and_units()
    model = ScriptedModel([final("Sunny."), YES, act("get_weather", city="Paris"),
                           final("33.1 °C.")])
    policies = default_policies(use=[Relevance(), MissedCall()], off=["review"])
    assert [p.name for p in policies].index("relevance") < \
        [p.name for p in policies].index("missed_call")
    result = Agent(model, tools, policies=policies).run("Weather in Paris?")
    assert result.final_answer == "33.1 °C." and ran == ["weather Paris"]
    assert len(model.calls) == 4  # no relevance question about the call it asked for


def test_a_resumed_run_asks_about_the_answer_given_again() -> None:
    tools, _ = weather_and_units()
    config = AgentConfig(output_type=int, output_retries=0,
                         policies=default_policies(use=[MissedCall()], off=["review"]))
    first = Agent(ScriptedModel([final("four"), DOUBT]), tools, config=config).run("2 + 2?")
    assert first.status == "output_invalid"
    assert [s.origin for s in first.steps] == [None, "missed_call"]
    # the answer that ended the run is asked again, and the question about it with it
    again = ScriptedModel([final("4"), DOUBT])
    resumed = Agent(again, tools, config=config).resume(first, max_steps=2)
    assert resumed.output == 4 and len(again.calls) == 2
    assert [s.origin for s in resumed.steps] == [None, "missed_call"]
    assert resumed.steps[0].final_answer == "4"


def test_a_resumed_run_whose_call_ran_is_not_asked() -> None:
    tools, ran = weather_and_units()
    config = AgentConfig(max_steps=1, policies=default_policies(use=[MissedCall()],
                                                                off=["review"]))
    first = Agent(ScriptedModel([final("Sunny."), YES, act("get_weather", city="Paris")]),
                  tools, config=config).run("Weather in Paris?")
    assert first.status == "max_steps" and ran == ["weather Paris"]
    again = ScriptedModel([final("33.1 °C.")])
    assert Agent(again, tools, config=config).resume(first).final_answer == "33.1 °C."
    assert len(again.calls) == 1


@pytest.mark.parametrize("options", [{"threshold": 0}, {"threshold": 1.5}, {"max_tools": 0}])
def test_bad_options_are_the_developers_error(options: dict[str, Any]) -> None:
    with pytest.raises(ConfigError):
        MissedCall(**options)


def test_the_calls_asked_for_are_held_to_the_calls_a_step_may_make() -> None:
    tools, ran = weather_and_units()
    three = json.dumps(
        {"thought": "t", "action": [{"name": "get_weather", "args": {"city": c}}
                                    for c in ("Paris", "Rome", "Oslo")]})
    model = ScriptedModel([final("Sunny."), YES, three, final("done")])
    agent = Agent(model, tools, max_calls_per_step=1,
                  policies=default_policies(use=[MissedCall()], off=["review"]))
    result = agent.run("Weather in Paris, Rome and Oslo?")
    assert ran == ["weather Paris"]
    assert result.steps[2].records["budget"] == {"calls_asked": 3, "calls_kept": 1}


def test_calls_asked_for_that_name_no_tool_of_the_run_keep_the_answer() -> None:
    agent, _, ran = _agent([final("Sunny."), YES, act("get_forecast", city="Paris")])
    result = agent.run("Weather in Paris?")
    assert ran == [] and result.final_answer == "Sunny." and result.steps[0].in_history
    assert any("names a tool the run does not have" in n[2] for n in result.steps[0].notes)


@dataclass(frozen=True)
class _NoEmail(Policy):
    name: ClassVar[str] = "no_email"

    def after_reply(self, run: Run, step: Step, reply: Reply) -> Reply | None:
        if any(c.name == "send_email" for c in reply.tool_calls):
            raise parse_error("no_email", "Emails are not sent here.")
        return reply


def test_a_call_asked_for_that_another_policy_refuses_keeps_the_answer_and_says_why() -> None:
    tools, sent = weather_and_units()
    tools.add(lambda to: sent.append(to) or "sent", name="send_email",
              description="Send an email.")
    model = ScriptedModel([final("Done."), YES, act("send_email", to="x@example.com")])
    policies = [*default_policies(use=[MissedCall()], off=["review"]), _NoEmail()]
    result = Agent(model, tools, policies=policies).run("Email my landlord.")
    assert result.final_answer == "Done." and sent == []
    again = result.steps[2]
    assert again.reply is None and again.error and not again.in_history
    assert any("unusable (Emails are not sent here.)" in n[2] for n in result.steps[0].notes)


def test_an_interrupt_at_the_event_of_the_calls_asked_for_leaves_consistent_steps() -> None:
    from react_agent.events import ReplyParsed, RunFinished

    agent, _, ran = _agent([final("Sunny."), YES, act("get_weather", city="Paris")])
    events = agent.iter("Weather in Paris?")
    finished = None
    for event in events:
        if isinstance(event, ReplyParsed) and event.step.origin == "missed_call":
            finished = events.throw(KeyboardInterrupt())
            break
    while not isinstance(finished, RunFinished):
        finished = next(events)
    result = finished.result
    assert result.status == "interrupted" and ran == []
    in_history = [s for s in result.steps if s.in_history]
    assert [s.origin for s in in_history] == ["missed_call"]
    assert "Sunny" not in str(result.messages)
