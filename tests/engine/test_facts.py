"""Tests for react_agent.engine._facts: :class:`Facts`, what a run has been told, kept as the
run grows, and :class:`Each` / :class:`Gathered`, which derive values from its growing lists,
each item once."""

from __future__ import annotations

from react_agent.engine import Each, Facts, Gathered
from react_agent.types import Step, ToolCall, ToolResult


def result(text: str, ok: bool = True, error: str | None = None,
           skipped: bool = False) -> ToolResult:
    return ToolResult(ToolCall("lookup", {"q": text[:8]}), text, ok=ok, error=error,
                      skipped=skipped)


def test_what_a_run_was_told_and_what_its_tools_returned() -> None:
    facts = Facts()
    facts.told({"role": "system", "content": "Support line +1 555 010 9999."})
    facts.told({"role": "user", "content": "Find Ann's Email."})
    ok, failed = result("Ann: ann@example.com"), result("Error: no", ok=False, error="raised")
    facts.observed([ok, failed])
    assert facts.system == ["Support line +1 555 010 9999."]
    assert facts.user == ["Find Ann's Email."]
    assert facts.results == [ok, failed]
    assert facts.ok_observations == ["Ann: ann@example.com"]
    assert list(facts.succeeded.values()) == [ok]
    assert list(facts.latest.values()) == [ok, failed]


def test_a_result_skipped_or_a_repeat_warning_is_not_the_latest_result_of_its_call() -> None:
    facts = Facts()
    first = result("x", ok=False, error="raised")
    facts.observed([first])
    facts.observed([result("x", ok=False, error="repeated")])
    facts.observed([result("x", ok=False, error="policy_code", skipped=True)])
    assert list(facts.latest.values()) == [first]
    assert len(facts.results) == 3


def test_a_warning_is_remembered_for_the_rest_of_the_run() -> None:
    facts = Facts()
    for error in (None, "set_aside", None, "repeated", None):
        step = Step(index=1, tool_calls=[ToolCall("lookup", {"q": "x"})])
        step.results = [result("x", ok=error is None, error=error)]
        before = facts.warned
        facts.calling(step)
        facts.stepped(step)
        assert facts.warned == (before or error == "repeated")
    assert facts.warned and facts.calls_made == 5 and len(facts.step_calls) == 5


def test_each_and_gathered_derive_each_item_once_when_asked() -> None:
    read: list[str] = []

    def words(text: str) -> list[str]:
        read.append(text)
        return text.split()

    first: list[str] = ["a b"]
    second: list[str] = []
    each = Each(first, str.upper)
    gathered = Gathered([first, second], words, set())
    assert read == []  # nothing is derived before it is asked for
    assert each() == ["A B"] and gathered() == {"a", "b"}
    first.append("c")
    second.append("b d")
    for _ in range(3):
        assert each() == ["A B", "C"] and gathered() == {"a", "b", "c", "d"}
    assert read == ["a b", "c", "b d"]
