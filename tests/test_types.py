"""Tests for react_agent.types: a tool result says who gave it (``origin``) and whether it is a
call set aside (``skipped``), in files too; a file written before results had these fields
reads as the run it was."""

from __future__ import annotations

import json
from typing import Any

import pytest

from react_agent import RunResult, Step, ToolCall, ToolResult


def saved(error: str | None, ok: bool = False) -> dict[str, Any]:
    """A result as files held it before results had ``origin`` and ``skipped``."""
    return {"name": "lookup", "args": {"key": "a"}, "cleaned_args": {"key": "a"},
            "observation": "value of a", "ok": ok, "error": error, "cleaning": [],
            "seconds": 0.0, "cleaning_kinds": []}


@pytest.mark.parametrize(("error", "ok", "origin", "skipped"), [
    (None, True, None, False),
    ("tool_error", False, None, False),
    ("repeated", False, "loop", False),
    ("call_budget", False, "loop", False),
    ("ungrounded", False, "ground_contacts", False),
    ("set_aside", False, "repeat", True),
])
def test_an_old_result_gets_the_origin_its_error_meant(error: str | None, ok: bool,
                                                       origin: str | None, skipped: bool) -> None:
    result = ToolResult.from_dict(saved(error, ok))
    assert (result.error, result.ok, result.origin, result.skipped) == (error, ok, origin, skipped)


def test_origin_and_skipped_survive_a_save() -> None:
    result = ToolResult(ToolCall("lookup", {"key": "a"}), "x", ok=False, error="mine",
                        origin="my_policy", skipped=True)
    again = ToolResult.from_dict(json.loads(json.dumps(result.to_dict())))
    assert (again.origin, again.skipped, again.error) == ("my_policy", True, "mine")
    plain = ToolResult.from_dict(ToolResult(ToolCall("lookup"), "x", ok=False,
                                            error="set_aside").to_dict())
    assert (plain.origin, plain.skipped) == (None, False)  # written with the fields: as written


def test_a_skipped_result_is_no_tool_call_in_the_usage_of_an_old_file() -> None:
    step = {"index": 2, "tool_calls": [{"name": "lookup", "args": {"key": "a"}}],
            "results": [saved("set_aside")], "in_history": False}
    first = {"index": 1, "tool_calls": [{"name": "lookup", "args": {"key": "a"}}],
             "results": [saved(None, ok=True)]}
    result = RunResult.from_dict({"task": "t", "status": "final_answer", "final_answer": "a",
                                  "steps": [first, step]})
    assert result.usage["tool_calls"] == 1
    assert [r.skipped for s in result.steps for r in s.results] == [False, True]
    assert Step.from_dict(step).results[0].skipped
