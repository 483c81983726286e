"""Tests for react_agent.events: the events of a run, its callbacks and last_result."""

from __future__ import annotations

import json

import pytest

from react_agent import Agent, ScriptedModel
from react_agent.events import Event, FinalAnswer, RunFinished, RunStarted, last_result

FINAL = json.dumps({"thought": "t", "action": {"final_answer": "x"}})


def test_callbacks_get_each_event_that_iter_yields_in_the_same_order() -> None:
    seen: list[Event] = []
    events = list(Agent(ScriptedModel([FINAL]), callbacks=[seen.append]).iter("task"))
    assert seen == events
    assert isinstance(events[0], RunStarted) and isinstance(events[-1], RunFinished)
    assert [e.text for e in events if isinstance(e, FinalAnswer)] == ["x"]


def test_an_exception_in_a_callback_propagates_out_of_the_run() -> None:
    def broken(event: Event) -> None:
        raise ValueError("the printer broke")

    with pytest.raises(ValueError, match="the printer broke"):
        Agent(ScriptedModel([FINAL]), callbacks=[broken]).run("task")


def test_last_result() -> None:
    events = list(Agent(ScriptedModel([FINAL])).iter("task"))
    assert last_result(iter(events)).final_answer == "x"
    with pytest.raises(ValueError, match="no RunFinished event"):
        last_result(events[:-1])
