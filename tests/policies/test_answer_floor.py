"""Tests for react_agent.policies._answer_floor: until a tool is called, the final answer is
taken when the model gives it enough probability (:class:`~react_agent.policies.AnswerFloor`;
how the embedded model measures it is tested in tests/models/test_answer_floor.py)."""

from __future__ import annotations

import pytest
from helpers import TASK, FloorModel, act, final, weather_toolbox

from react_agent import Agent, AgentConfig, ConfigError, Step, Toolbox
from react_agent.events import PolicyNote
from react_agent.policies import AnswerFloor, default_policies


@pytest.fixture
def toolbox() -> Toolbox:
    return weather_toolbox()


def test_the_answer_floor_is_asked_for_until_a_tool_is_called(toolbox: Toolbox) -> None:
    model = FloorModel(["not json", act("get_weather", "Paris.", city="Paris"),
                        final("18 °C in Paris.")])
    events = list(Agent(model, toolbox, policies=default_policies(off=["review"])).iter(TASK))
    result = events[-1].result
    assert model.floors == [0.035, 0.035, None]  # the retry after an unusable reply too
    first, call, answer = result.steps
    assert first.records["answer_floor"] == {"probability": 0.2, "taken": True}
    assert "answer_floor" not in answer.records
    assert call.to_dict()["records"]["answer_floor"]["probability"] == 0.2
    assert Step.from_dict(call.to_dict()).records["answer_floor"]["taken"]
    notes = [e for e in events if isinstance(e, PolicyNote)]
    assert [(e.step, e.label) for e in notes] == [(first, "Answer floor"), (call, "Answer floor")]
    assert notes[0].text.startswith("the model gave the final answer 20% of the probability")


def test_the_answer_floor_can_be_set_or_turned_off(toolbox: Toolbox) -> None:
    model = FloorModel([final("Hello.")])
    Agent(model, toolbox, policies=default_policies(use=[AnswerFloor(floor=0.2)])).run("Hi!")
    assert model.floors == [0.2]
    model = FloorModel([final("Hello.")])
    Agent(model, toolbox, policies=default_policies(off=["answer_floor"])).run("Hi!")
    assert model.floors == [None]
    for floor in (1.5, 0.0):
        with pytest.raises(ConfigError, match="floor must be a probability in"):
            AnswerFloor(floor=floor)
    AgentConfig(policies=[AnswerFloor(floor=1.0)])
