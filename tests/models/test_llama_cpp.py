"""The embedded llama.cpp model on real seed tasks (temperature 0; ~5-15 s per step here).

Assertions follow the scenarios' real-model tier: the tool calls made and the facts in the
answer, not the wording. One run per scenario (module fixtures), several assertions on it.
"""

from __future__ import annotations

import json

import pytest
from _common import check_run, seed_turns
from helpers import assert_streamed
from jsonschema import Draft202012Validator
from tools import SENT_MESSAGES, seed000, seed002, seed003, seed004

from react_agent import Agent, RunResult
from react_agent.constrain import reply_schema

pytestmark = pytest.mark.real_model


def spec(label: str) -> dict:
    return next(t.spec for t in seed_turns(label[4:7]) if t.label == label)


@pytest.fixture(scope="module")
def umbrella_run(gguf_path) -> RunResult:
    from react_agent.models import LlamaCppModel

    SENT_MESSAGES.clear()
    agent = Agent(LlamaCppModel(gguf_path), seed003, max_steps=5)
    return agent.run(spec("seed003-umbrella-beijing")["user"])


def test_seed003_umbrella_calls_the_weather_tool_and_sends_no_reminder(umbrella_run) -> None:
    assert umbrella_run.status == "final_answer"
    calls = [c.to_dict() for c in umbrella_run.tool_calls]
    assert calls[0] == {"name": "get_weather", "args": {"city": "北京"}}
    assert "send_message" not in [c["name"] for c in calls]
    assert SENT_MESSAGES == []


def test_seed003_umbrella_answer_takes_the_sunny_branch(umbrella_run) -> None:
    answer = umbrella_run.final_answer or ""
    assert any(s in answer for s in ("天气不错", "天气很好", "天气晴好"))
    assert "带伞" not in answer.replace("不带伞", "").replace("不用带伞", "")


def test_seed003_umbrella_answer_passes_every_scenario_check(umbrella_run) -> None:
    assert check_run(umbrella_run, spec("seed003-umbrella-beijing")) == []


def test_seed000_arithmetic_streamed(embedded_model) -> None:
    turn = spec("seed000-calculate-round")
    events = list(Agent(embedded_model, seed000, max_steps=10, stream=True).iter(turn["user"]))
    result = events[-1].result
    assert "calculate" in [c.name for c in result.tool_calls]
    assert check_run(result, turn) == []
    assert "118.67" in (result.final_answer or "")
    assert_streamed(events, result)


def test_seed000_umbrella_with_usage(embedded_model) -> None:
    turn = spec("seed000-beijing-umbrella")
    result = Agent(embedded_model, seed000, max_steps=5).run(turn["user"])
    assert check_run(result, turn) == []
    assert all(s.prompt_tokens and s.completion_tokens for s in result.steps)
    # the history is append-only: each step's prompt is longer than the previous one
    prompts = [s.prompt_tokens for s in result.steps]
    assert prompts == sorted(prompts) and len(set(prompts)) == len(prompts)


def test_seed004_conversation_remembers_earlier_turns(embedded_model) -> None:
    """Three turns on one Conversation: turn 2's input holds turn 1, turn 3 ("which city did I
    ask about at the start?") is answered from the history alone, with no tool call."""
    turns = [t.spec for t in seed_turns("004")]
    chat = Agent(embedded_model, seed004, max_steps=5).chat()
    results = [chat.ask(t["user"]) for t in turns]
    assert [check_run(r, t) for r, t in zip(results, turns, strict=True)] == [[], [], []]
    assert results[2].tool_calls == []
    assert "Tokyo" in (results[2].final_answer or "")


def test_constrained_replies_fit_the_reply_schema(embedded_model) -> None:
    """Under the grammar every reply is one JSON object of the schema (no fences, no prose)."""
    turn = spec("seed002-walkthrough-beijing")
    agent = Agent(embedded_model, seed002, max_steps=5, constrained="on")
    result = agent.run(turn["user"])
    validator = Draft202012Validator(reply_schema(seed002))
    assert result.steps and all(
        validator.is_valid(json.loads(s.raw_output)) for s in result.steps
    )
    assert all(s.stage == "direct" for s in result.steps)
    assert check_run(result, turn) == []
