"""Tests for react_agent.engine._loop that look inside the loop core: which earlier result of a
call stops it from running again, and the ``origin`` of the results the loop and the policies
give instead of running a call (the loop through the Agent: tests/agent/test_agent.py)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import ClassVar

from helpers import act, final

from react_agent import Agent, RunResult, Toolbox
from react_agent.engine import LOOP, Policy, Run, Setup
from react_agent.engine._loop import _failed_before
from react_agent.models import ScriptedModel
from react_agent.types import Step, ToolCall, ToolResult


def after(result: ToolResult) -> Run:
    """A run (resumed) whose one step called ``result.call`` and got ``result``."""
    earlier = Step(1, tool_calls=[result.call], results=[result])
    return Run(Setup(Toolbox(), Toolbox(), ""), RunResult("t", "max_steps", None, [earlier]))


def test_only_a_call_that_failed_otherwise_than_by_timing_out_is_not_run_again() -> None:
    call = ToolCall("lookup", {"key": "a"})
    assert _failed_before(after(ToolResult(call, "Error: timed out", ok=False, error="timeout")),
                          call) is None
    assert _failed_before(after(ToolResult(call, "x", ok=True)), call) is None
    failed = ToolResult(call, "Error: no", ok=False, error="tool_error")
    assert _failed_before(after(failed), call) is failed
    assert _failed_before(after(failed), ToolCall("lookup", {"key": "b"})) is None
    over = ToolResult(call, "Error: budget", ok=False, error="call_budget", origin=LOOP)
    assert _failed_before(after(over), call) is over


def test_a_call_a_policy_refused_is_put_to_the_policies_again() -> None:
    call = ToolCall("lookup", {"key": "a"})
    refused = ToolResult(call, "Error: not now", ok=False, error="refused", origin="mine")
    assert _failed_before(after(refused), call) is None


@dataclass(frozen=True)
class NotTwice(Policy):
    """Refuses every call of ``lookup`` after the first (its own origin left unset)."""

    name: ClassVar[str] = "not_twice"

    def for_run(self, run: Run) -> list[str]:
        return []

    def before_call(self, run: Run, step: Step, call: ToolCall) -> ToolResult | None:
        seen: list[str] = run.state(self)
        seen.append(call.name)
        if seen.count("lookup") > 1:
            return ToolResult(call, "Error: lookup was called already.", ok=False,
                              error="refused")
        return None


def test_a_policys_answer_carries_its_name_and_is_asked_again_when_the_call_comes_back() -> None:
    toolbox, ran = Toolbox(), []

    @toolbox.tool
    def lookup(key: str) -> str:
        """Look a key up."""
        ran.append(key)
        return f"value of {key}"

    replies = [act("lookup", key="a"), act("lookup", key="b"), act("lookup", key="b"),
               final("done")]
    result = Agent(ScriptedModel(replies), toolbox, policies=[NotTwice()]).run("t")
    assert ran == ["a"]
    refusals = [s.results[0] for s in result.steps[1:3]]
    assert [(r.error, r.origin) for r in refusals] == [("refused", "not_twice")] * 2
    assert all(r.observation == "Error: lookup was called already." for r in refusals)
    assert result.steps[0].results[0].origin is None  # the tool ran


def test_a_typed_answer_sent_back_stays_small_whatever_the_schema_and_the_answer() -> None:
    """Attack (2026-12-06): an enum of long values and an answer breaking it in 50 places made
    each rejection ~50 times the schema, and the prompt grew with every retry."""
    from react_agent.events import OutputRejected

    schema = {"type": "array", "items": {"enum": ["x" * 100 + str(i) for i in range(400)]}}
    answer = json.dumps({"thought": "t", "action": {"final_answer": ["q"] * 60}})
    agent = Agent(ScriptedModel([answer] * 3), output_type=schema, output_retries=2)
    rejected = [e for e in agent.iter("Pick.") if isinstance(e, OutputRejected)]
    assert len(rejected) == 3 and len(rejected[0].problems) > 20
    message = rejected[0].message
    assert len(message) < 12_000 and "more problems" in message
    assert "(the JSON Schema of the system prompt)" in message  # 40 KB: not repeated


def test_a_null_final_answer_is_the_typed_value_none_of_a_type_that_allows_it() -> None:
    """A new user (2026-12-06): ``output_type=int | None`` and ``"final_answer": null`` was a
    parse error that asked for text."""
    reply = json.dumps({"thought": "None found.", "action": {"final_answer": None}})
    result = Agent(ScriptedModel([reply]), output_type=int | None).run("How many?")
    assert (result.status, result.has_output, result.output) == ("final_answer", True, None)
    refused = Agent(ScriptedModel([reply, final("3")]), output_type=int).run("How many?")
    assert refused.steps[0].error and "null" in refused.steps[0].error
    assert refused.output == 3
