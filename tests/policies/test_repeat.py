"""Tests for react_agent.policies._repeat: a reply that only asks again for results the run
already has is set aside, and the final answer asked for in the same context
(:class:`~react_agent.policies.RepeatSetAside`)."""

from __future__ import annotations

import json

from helpers import call_lookup, counting_toolbox, final

from react_agent import Agent, RunResult, Step
from react_agent.engine import FINAL_ANSWER_SCHEMA
from react_agent.events import PolicyNote
from react_agent.models import ScriptedModel
from react_agent.policies import default_policies


def set_aside(result: RunResult) -> list[bool]:
    """For each step, whether it was set aside as a repeat."""
    return [s.records.get("repeat", False) for s in result.steps]


def test_a_repeat_is_set_aside_and_the_final_answer_asked_for_in_the_same_context() -> None:
    toolbox, runs = counting_toolbox()
    answer = '{"thought": "I have it.", "action": {"final_answer": "value of a"}}'
    model = ScriptedModel([call_lookup('{"key": "a"}')] * 2 + [answer])
    events = list(Agent(model, toolbox).iter("task"))
    result = events[-1].result
    assert (result.status, result.final_answer, runs) == ("final_answer", "value of a", ["a"])
    repeat = result.steps[1]
    assert set_aside(result) == [False, True, False] and not repeat.in_history
    assert [r.error for r in repeat.results] == ["set_aside"]
    assert repeat.results[0].observation == "value of a" and not repeat.results[0].ok
    notes = [e for e in events if isinstance(e, PolicyNote)]
    assert [(e.step, e.policy, e.label) for e in notes] == [(repeat, "repeat", "Repeat")]
    assert repeat.notes == [["repeat", "Repeat", notes[0].text]]
    assert notes[0].text.startswith("the run already has the results of 1 call")
    assert model.calls[2] == model.calls[1]  # the copy is not in the history the model sees
    assert model.schemas == [None, None, FINAL_ANSWER_SCHEMA]  # Constrained(mode="off") else
    assert [m["role"] for m in result.messages] == ["system", "user", "assistant", "user",
                                                    "assistant"]
    saved = Step.from_dict(repeat.to_dict())
    assert saved.records["repeat"] is True and not saved.in_history
    assert "repeat" not in result.steps[2].records
    assert result.usage["tool_calls"] == 1  # the set-aside call is no call


def test_a_repeat_is_set_aside_once_per_run_and_only_when_every_call_repeats() -> None:
    toolbox, runs = counting_toolbox()
    done = final("value of a")
    both = '{"thought": "t", "action": [{"name": "lookup", "args": {"key": "a"}}, ' \
        '{"name": "lookup", "args": {"key": "b"}}]}'
    result = Agent(ScriptedModel([call_lookup('{"key": "a"}'), both, done]), toolbox).run("task")
    assert runs == ["a", "a", "b"] and not any(set_aside(result))
    toolbox, runs = counting_toolbox()  # the next reply is no final answer: it runs as usual
    model = ScriptedModel([call_lookup('{"key": "a"}')] * 3 + [done])
    result = Agent(model, toolbox).run("task")
    assert set_aside(result) == [False, True, False, False]
    assert runs == ["a"] and result.final_answer == "value of a"  # the 3rd time: warned
    assert "Do not repeat it" in model.calls[3][-1]["content"]
    toolbox, runs = counting_toolbox()
    model = ScriptedModel([call_lookup('{"key": "a"}')] * 2 + [done])
    result = Agent(model, toolbox, policies=default_policies(off=["repeat"])).run("task")
    assert runs == ["a", "a"] and not any(set_aside(result))


def test_a_call_set_aside_is_skipped_by_the_repeat_policy_and_a_resumed_run_remembers_it(
) -> None:
    toolbox, runs = counting_toolbox()
    done = final("value of a")
    model = ScriptedModel([call_lookup('{"key": "a"}')] * 2 + [done])
    result = Agent(model, toolbox).run("task")
    [skipped] = result.steps[1].results
    assert (skipped.skipped, skipped.origin, skipped.error) == (True, "repeat", "set_aside")
    # resumed from a file (the final answer's step cut off): the set-aside is not done twice
    saved = RunResult.from_dict(json.loads(result.to_json()))
    saved.steps, saved.messages = saved.steps[:2], saved.messages[:4]
    saved.status, saved.final_answer = "max_steps", None
    again = ScriptedModel([call_lookup('{"key": "a"}'), done])
    resumed = Agent(again, toolbox).resume(saved)
    assert set_aside(resumed) == [False, True, False, False] and runs == ["a"]
    assert "Do not repeat it" in again.calls[1][-1]["content"]  # the loop's warning instead
