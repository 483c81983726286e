"""Tests for react_agent._run: :class:`Facts`, what a run has been told, kept as the run grows
and read by the policies' checks."""

from __future__ import annotations

from typing import Any

import pytest

from react_agent import _run
from react_agent._run import Facts
from react_agent.types import Step, ToolCall, ToolResult


def result(text: str, ok: bool = True, error: str | None = None) -> ToolResult:
    return ToolResult(ToolCall("lookup", {"q": text[:8]}), text, ok=ok, error=error)


def test_what_the_checks_read_follows_texts_that_come_after_a_first_read() -> None:
    facts = Facts()
    facts.told({"role": "system", "content": "Support line +1 555 010 9999."})
    facts.told({"role": "user", "content": "Find Ann's Email, and the price of 1,250 apples."})
    assert facts.said == "find ann's email, and the price of 1,250 apples."
    assert facts.said_numbers == {1250.0}
    assert facts.known_digits == ["15550109999"]
    facts.observed([result("Ann: ANN@Example.com, +44 20 7946 0958"), result("Price 3.5")])
    facts.observed([result("Error: no such item 77", ok=False, error="raised")])
    facts.observed([result("Error: 555 123 4567 is made up", ok=False, error="ungrounded")])
    facts.told({"role": "user", "content": "And 12 pears."})
    assert facts.said.split("\n") == [
        "find ann's email, and the price of 1,250 apples.", "and 12 pears.",
        "ann: ann@example.com, +44 20 7946 0958", "price 3.5",
    ]  # the user's words, then the successful results; a failed result says nothing
    assert facts.said_numbers == {1250.0, 12.0, 3.5, 20.0, 7946.0, 958.0, 44.0}
    assert "ann@example.com" in facts.known and "no such item 77" in facts.known
    assert "made up" not in facts.known  # a refusal quoting a made-up value grounds nothing
    assert sorted(facts.known_digits) == ["15550109999", "442079460958"]
    assert facts.ok_observations == ["Ann: ANN@Example.com, +44 20 7946 0958", "Price 3.5"]


def test_each_text_is_read_once_however_often_the_checks_ask(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    read: list[str] = []

    def counted(text: str) -> Any:
        read.append(text)
        return set()

    monkeypatch.setattr(_run, "_numbers", counted)
    facts = Facts()
    facts.told({"role": "user", "content": "task"})
    for n in range(20):
        facts.observed([result(f"result {n}")])
        assert facts.said_numbers == set()
        assert facts.said_numbers == set()
    assert read == ["task", *(f"result {n}" for n in range(20))]


def test_nothing_is_derived_before_a_check_asks(monkeypatch: pytest.MonkeyPatch) -> None:
    read: list[str] = []
    monkeypatch.setattr(_run, "_phone_digits", lambda text: read.append(text) or [])
    facts = Facts()
    facts.told({"role": "system", "content": "a long system prompt"})
    step = Step(index=1, tool_calls=[ToolCall("lookup", {"q": "x"})])
    step.results = [result("x")]
    facts.calling(step)
    facts.stepped(step)
    assert read == []
    assert facts.known_digits == []
    assert read == ["a long system prompt", "x"]


def test_a_step_set_aside_or_warned_is_remembered_for_the_rest_of_the_run() -> None:
    facts = Facts()
    for error in (None, "set_aside", None, "repeated", None):
        step = Step(index=1, tool_calls=[ToolCall("lookup", {"q": "x"})])
        step.results = [result("x", ok=error is None, error=error)]
        before = (facts.set_aside, facts.warned)
        facts.calling(step)
        facts.stepped(step)
        assert facts.set_aside == (before[0] or error == "set_aside")
        assert facts.warned == (before[1] or error == "repeated")
    assert facts.set_aside and facts.warned
