"""Tests for react_agent.engine._run: a :class:`Run` keeps each policy's state, made by its
``for_run`` when the run starts (after the history it resumes is in its facts), and hands it
back to that policy only."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import pytest

from react_agent import ConfigError, RunResult, Toolbox
from react_agent.engine import Policy, Run, Setup
from react_agent.types import Step, ToolCall, ToolResult


@dataclass(frozen=True)
class Remembers(Policy):
    name: ClassVar[str] = "remembers"

    def for_run(self, run: Run) -> dict[str, Any]:
        return {"results_at_start": len(run.facts.results), "steps": len(run.steps)}


@dataclass(frozen=True)
class Other(Policy):
    name: ClassVar[str] = "other"


def run_of(*policies: Policy, steps: list[Step] | None = None) -> Run:
    result = RunResult("t", "max_steps", None, steps or [])
    return Run(Setup(Toolbox(), Toolbox(), "", policies), result)


def test_each_run_gets_its_own_state_made_after_the_history_is_read() -> None:
    policy = Remembers()
    call = ToolCall("lookup", {"key": "a"})
    earlier = Step(1, tool_calls=[call], results=[ToolResult(call, "x", ok=True)])
    resumed, fresh = run_of(policy, steps=[earlier]), run_of(policy)
    assert resumed.state(policy) == {"results_at_start": 1, "steps": 1}
    assert fresh.state(policy) == {"results_at_start": 0, "steps": 0}
    fresh.state(policy)["mine"] = True
    assert "mine" not in resumed.state(policy) and fresh.state(policy)["mine"]


def test_a_policy_without_state_has_none_and_one_not_in_the_run_is_an_error() -> None:
    run = run_of(Other())
    assert run.state(Other()) is None
    with pytest.raises(ConfigError, match="is not a policy of this run"):
        run.state(Remembers())
