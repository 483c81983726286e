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
