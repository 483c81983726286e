"""Tests for react_agent.harness._checks: call checks, their order and the answer rules (the seed
scenarios' own cases are in test_seed_scenarios.py)."""

from __future__ import annotations

from typing import Any

import pytest

from react_agent import RunResult, Step, ToolCall
from react_agent.harness._checks import answer_problems, call_problems, check_run, has_checks

A, B, C = (ToolCall("f", {"x": x}) for x in "abc")


def run_of(*steps: list[ToolCall], answer: str = "ok") -> RunResult:
    return RunResult(task="t", status="final_answer", final_answer=answer,
                     steps=[Step(n, tool_calls=calls) for n, calls in enumerate(steps, 1)])


def expect(*xs: str) -> list[dict[str, Any]]:
    return [{"name": "f", "args": {"x": x}} for x in xs]


@pytest.mark.parametrize(
    ("steps", "spec", "problems"),
    [
        ([[B], [A]], {"expected_calls": expect("a", "b")}, []),  # unlisted: any order
        ([[B], [A]], {"expected_calls": expect("a", "b"), "call_order": [[0], [1]]},
         ['call f {"x": "b"} came out of order']),
        ([[A, B]], {"expected_calls": expect("a", "b"), "call_order": [[0, 1]]},
         ["expected calls [0, 1] came as one parallel step; not allowed here"]),
        ([[A, B]], {"expected_calls": expect("a", "b"), "call_order": [[0, 1]],
                    "parallel_allowed": True}, []),
        ([[C], [A]], {"expected_calls": expect("a", "c"), "call_order": [[0]]}, []),
        ([[A]], {"expected_calls": [*expect("a"), {**expect("b")[0], "required": False}]}, []),
        ([[A]], {"expected_calls": expect("a", "b")}, ['missing call f {"x": "b"}']),
    ],
)
def test_call_order(steps: list[list[ToolCall]], spec: dict[str, Any],
                    problems: list[str]) -> None:
    assert call_problems(run_of(*steps), spec) == problems


def test_answer_rules() -> None:
    rules = {"must_contain": ["7.5"], "must_contain_any": [["rain", "Rain"]],
             "must_not_contain": ["no umbrella"], "non_empty": True}
    assert answer_problems("Rain, 7.5 C: take an umbrella.", rules) == []
    assert answer_problems("7.5 C, no umbrella.", rules) == [
        "the final answer has none of ['rain', 'Rain']", "the final answer contains 'no umbrella'"]
    assert answer_problems(None, rules)[0] == "the final answer is empty"


def test_forbidden_tools_and_status() -> None:
    result = run_of([A], answer="done")
    assert check_run(result, {"forbidden_tools": ["*"]}) == ['forbidden tool called: f {"x": "a"}']
    result.status, result.error = "max_steps", "ran out"
    assert check_run(result, {}) == ["the run ended with status 'max_steps': ran out"]
    assert not has_checks({"task": "t"}) and has_checks({"forbidden_tools": []})
