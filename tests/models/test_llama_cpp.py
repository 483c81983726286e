"""The embedded llama.cpp model on real seed tasks (temperature 0; ~5-15 s per step here).

Assertions follow the scenarios' real-model tier: the tool calls made and the facts in the
answer, not the wording.
"""

from __future__ import annotations

import pytest
from _common import check_run, seed_turns
from tools import SENT_MESSAGES, seed000, seed003

from react_agent import Agent

pytestmark = pytest.mark.real_model


def turn(label: str) -> dict:
    seed = label[4:7]
    return next(t.spec for t in seed_turns(seed) if t.label == label)


def test_seed003_umbrella_sunny_beijing(embedded_model) -> None:
    spec = turn("seed003-umbrella-beijing")
    SENT_MESSAGES.clear()
    result = Agent(embedded_model, seed003, max_steps=5).run(spec["user"])
    assert [c.to_dict() for c in result.tool_calls][:1] == [
        {"name": "get_weather", "args": {"city": "北京"}}
    ]
    assert "send_message" not in [c.name for c in result.tool_calls]
    assert SENT_MESSAGES == []
    assert check_run(result, spec) == []


def test_seed000_arithmetic(embedded_model) -> None:
    spec = turn("seed000-calculate-round")
    result = Agent(embedded_model, seed000, max_steps=10).run(spec["user"])
    assert "calculate" in [c.name for c in result.tool_calls]
    assert check_run(result, spec) == []
    assert "118.67" in (result.final_answer or "")


def test_trajectory_usage_is_reported(embedded_model) -> None:
    spec = turn("seed000-beijing-umbrella")
    result = Agent(embedded_model, seed000, max_steps=5).run(spec["user"])
    assert result.status == "final_answer"
    assert all(s.prompt_tokens and s.completion_tokens for s in result.steps)
    # the history is append-only: each step's prompt is longer than the previous one
    prompts = [s.prompt_tokens for s in result.steps]
    assert prompts == sorted(prompts) and len(set(prompts)) == len(prompts)
