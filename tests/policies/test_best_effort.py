"""Tests for react_agent.policies._best_effort: with the steps used up, the final answer is asked
for once more (:class:`~react_agent.policies.BestEffortAnswer`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from helpers import BAD_REPLY, TASK, act, final, observed, run, weather_toolbox

from react_agent import Agent, ModelError, RunResult, Toolbox, prompts
from react_agent.events import FinalAnswer
from react_agent.models import ScriptedModel
from react_agent.models.base import Message


@pytest.fixture
def toolbox() -> Toolbox:
    return weather_toolbox()


def _server_down(messages: Sequence[Message]) -> str:
    raise ModelError("The model server at http://x/v1 failed with HTTP 500.", cause="server")


def test_max_steps_asks_once_more_for_a_best_effort_answer(toolbox: Toolbox) -> None:
    replies = [act("get_weather", city="Paris"), final("Paris: 18 °C; Rome unknown")]
    result, model = run(toolbox, replies, max_steps=1)
    assert result.status == "max_steps"
    assert result.final_answer == "Paris: 18 °C; Rome unknown"
    assert result.best_effort is True and result.to_dict()["best_effort"] is True
    assert len(result.steps) == 2 and result.steps[1].final_answer == result.final_answer
    assert result.steps[1].origin == "best_effort" and not result.steps[1].in_history
    last_ask = model.calls[1][-1]
    assert last_ask["role"] == "user"
    assert last_ask["content"] == prompts.render("policies/final_answer", task=TASK)
    assert "no steps left" in last_ask["content"]
    assert result.error.startswith("The run used 1 step without a final answer.")
    assert "best effort" in result.error


@pytest.mark.parametrize(
    "last",
    [act("get_weather", city="Rome"), BAD_REPLY],
    ids=["a-tool-call-instead", "unusable"],
)
def test_best_effort_without_an_answer_leaves_it_empty(toolbox: Toolbox, last: str) -> None:
    result, model = run(toolbox, [act("get_weather", city="Paris"), last], max_steps=1)
    assert result.status == "max_steps"
    assert result.final_answer is None and result.best_effort is False
    assert len(model.calls) == 2
    assert result.usage["tool_calls"] == 1, "no tool runs after the budget is used up"


def test_best_effort_model_error_keeps_max_steps(toolbox: Toolbox) -> None:
    result, _ = run(toolbox, [act("get_weather", city="Paris"), _server_down], max_steps=1)
    assert result.status == "max_steps"
    assert result.final_answer is None
    assert "Asking for a best-effort answer failed: The model server" in result.error
    assert len(result.steps) == 1


def test_best_effort_event_is_marked(toolbox: Toolbox) -> None:
    model = ScriptedModel([act("get_weather", city="Paris"), final("18")])
    events = list(Agent(model, toolbox, max_steps=1).iter(TASK))
    answers = [e for e in events if isinstance(e, FinalAnswer)]
    assert [(a.text, a.best_effort) for a in answers] == [("18", True)]


def test_best_effort_tool_call_is_explained(toolbox: Toolbox) -> None:
    result, _ = run(toolbox, [act("get_weather", city="Paris"), act("get_weather", city="Rome")],
                    max_steps=1)
    assert result.final_answer is None
    assert "the model asked for a tool instead (not run)" in (result.error or "")


def test_resume_after_max_steps_with_more_steps(
    toolbox: Toolbox, tmp_path: Any
) -> None:
    first = Agent(ScriptedModel([act("get_weather", city="Paris"), final("guess")]), toolbox,
                  max_steps=1).run(TASK)
    assert first.status == "max_steps" and first.best_effort
    first.save(tmp_path / "run.json")
    model = ScriptedModel([act("get_weather", city="Rome"), final("Rome is warmer")])
    resumed = Agent(model, toolbox, max_steps=5).resume(RunResult.load(tmp_path / "run.json"))
    assert resumed.status == "final_answer" and resumed.final_answer == "Rome is warmer"
    assert resumed.best_effort is False
    assert [s.index for s in resumed.steps] == [1, 2, 3]
    assert [s.observations for s in resumed.steps[:2]] == [["18 °C in Paris"], ["24 °C in Rome"]]
    sent = model.calls[0]
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "user"]
    assert observed(sent[-1]["content"]) == ["18 °C in Paris"]
    assert all("no steps left" not in m["content"] for m in sent), "best-effort ask set aside"
