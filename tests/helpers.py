"""Assertions shared by several test modules."""

from __future__ import annotations

from typing import Any

from react_agent import RunResult
from react_agent.events import AnswerToken, ModelToken
from react_agent.models import ScriptedModel


def assert_streamed(events: list[Any], result: RunResult, usage: bool = True) -> None:
    """Each step's streamed tokens add up to its raw output, arriving in many pieces; the answer
    stream adds up to the final answer; with ``usage``, token usage was reported too."""
    for step in result.steps:
        pieces = [e.text for e in events if isinstance(e, ModelToken) and e.index == step.index]
        assert "".join(pieces) == step.raw_output
        assert len(pieces) > 5
        if usage:
            assert step.prompt_tokens and step.completion_tokens
    answer = "".join(e.text for e in events if isinstance(e, AnswerToken))
    assert answer == result.final_answer


class ResettableModel(ScriptedModel):
    """A scripted model with the optional ``reset()`` of a model that keeps a cache; ``resets``
    holds how many calls had been made at each reset."""

    def __init__(self, replies: list[str]) -> None:
        super().__init__(replies)
        self.resets: list[int] = []

    def reset(self) -> None:
        self.resets.append(len(self.calls))
