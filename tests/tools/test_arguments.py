"""A tool call's arguments against its tool's schema (react_agent.tools._arguments): the hints
for the model (the argument of a bare value, an example call), the control characters no
argument means, and the bound on the problems told. The cleaning and the checks as a call sees
them are tested through the invoker (tests/tools/test_invoker.py)."""

from __future__ import annotations

import json
from typing import Literal

from react_agent import Toolbox
from react_agent.tools import argument_for_bare_value, call_example, check_args
from react_agent.tools._arguments import control_character_problems


def test_argument_for_bare_value() -> None:
    tb = Toolbox()

    @tb.tool
    def search(query: str, limit: int = 5) -> str:
        """Search."""
        return query

    @tb.tool
    def average(numbers: list[float]) -> float:
        """Average."""
        return sum(numbers) / len(numbers)

    @tb.tool
    def add(a: int, b: int) -> int:
        """Add."""
        return a + b

    assert argument_for_bare_value(tb, "search", "tide times") == "query"
    assert argument_for_bare_value(tb, "average", [1, 2.5]) == "numbers"
    assert argument_for_bare_value(tb, "search", 3) is None  # not a string
    assert argument_for_bare_value(tb, "average", "1, 2") is None
    assert argument_for_bare_value(tb, "add", 3) is None  # two required arguments
    assert argument_for_bare_value(tb, "nope", "x") is None


def test_call_example_uses_the_real_argument_names() -> None:
    tb = Toolbox()

    @tb.tool
    def weather(city: str, unit: Literal["celsius", "fahrenheit"] = "celsius") -> str:
        """Weather."""
        return city

    @tb.tool
    def clock(zone: str = "UTC") -> str:
        """Clock."""
        return zone

    assert json.loads(call_example(tb["weather"])) == {
        "thought": "...", "action": {"name": "weather", "args": {"city": "<string>"}}
    }
    assert json.loads(call_example(tb["clock"]))["action"]["args"] == {"zone": "<string>"}


def test_control_characters_are_found_at_any_depth() -> None:
    problems = control_character_problems(
        {"ok": "fine", "rows": [{"cell": "\x08bold"}], "k\x01ey": 1, "del": "x\x7f"}
    )
    assert [p.split(":")[0] for p in problems] == ["del", "k\x01ey (the name)", "rows.0.cell"]


def test_only_the_first_problems_are_found_and_told() -> None:
    """Each problem costs the showing of its value; a value with thousands of wrong items
    (each a problem) is told by its first :data:`MAX_PROBLEMS`."""
    from react_agent.tools._arguments import MAX_PROBLEMS

    schema = {"type": "object", "properties": {"a": {"type": "array",
                                                     "items": {"type": "string"}}}}
    problems = check_args(schema, {"a": list(range(10_000))})
    assert len(problems) == MAX_PROBLEMS
    assert problems[0] == "a.0: expected string, got 0"


def test_unknown_argument_names_are_reported_within_bounds() -> None:
    """Hostile input: 400 property names of 3,000 characters and a call with unknown names made
    every reply cost 31 s of "did you mean" (each unknown name against every property, the
    list of names joined again each time)."""
    from react_agent._lexical import MAX_NAME_CHARS, did_you_mean
    from react_agent.tools import MAX_PROBLEMS, check_args

    long = {f"{'p' * 3000}{n}": {"type": "string"} for n in range(400)}
    assert did_you_mean("p" * 3000 + "1", long) == ""  # names this long are never compared
    assert did_you_mean("x" * (MAX_NAME_CHARS + 1), {"x": 1}) == ""
    assert did_you_mean(1, {"city": 1}) == ""  # type: ignore[arg-type]  # not a name at all
    assert did_you_mean("citi", {"city": 1}) == " (did you mean 'city'?)"
    schema = {"type": "object", "properties": {f"name{n}": {"type": "string"} for n in range(100)},
              "additionalProperties": False}
    problems = check_args(schema, {f"extra{n}": 1 for n in range(MAX_PROBLEMS + 20)})
    assert len(problems) <= MAX_PROBLEMS + 1
    assert problems[MAX_PROBLEMS] == "(args): 20 more unknown arguments"
    assert "... (100 in all)" in problems[0]
