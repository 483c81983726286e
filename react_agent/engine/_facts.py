"""What a run knows so far (:class:`Facts`), kept up to date as messages and results come in,
and two helpers that derive values from lists that only grow, each item once
(:class:`Each`, :class:`Gathered`): a policy's state uses them to stay incremental too.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..types import Message, Step, ToolResult
from ._protocol import signature


class Each:
    """``derive`` applied to each item of a list that only grows, each item once, when first
    asked for: what no check of a step needs is never computed.

    Calling it returns the derived values, one per item, in order (the same list each time,
    grown)."""

    def __init__(self, items: Sequence[Any], derive: Callable[[Any], Any]) -> None:
        self._items, self._derive = items, derive
        self._done: list[Any] = []

    def __call__(self) -> list[Any]:
        done, items = self._done, self._items
        done.extend(self._derive(item) for item in items[len(done):])
        return done


class Gathered:
    """The values ``derive`` finds in each item of lists that only grow, gathered into one set
    or list (``into``): each item read once, when the collection is first asked for after it
    came. Calling it returns ``into``."""

    def __init__(self, sources: Sequence[Sequence[Any]], derive: Callable[[Any], Iterable[Any]],
                 into: set[Any] | list[Any]) -> None:
        self._sources, self._derive, self._into = sources, derive, into
        self._add = into.update if isinstance(into, set) else into.extend
        self._read = [0] * len(sources)

    def __call__(self) -> Any:
        for n, items in enumerate(self._sources):
            for item in items[self._read[n]:]:
                self._add(self._derive(item))
            self._read[n] = len(items)
        return self._into


@dataclass
class Facts:
    """What the run has been told so far, kept up to date as it grows (never recomputed from
    the whole history): the words of the system prompt and the user (not the observation
    messages, which echo the calls, made-up values included), the tools' results and the
    calls of each step.

    Attributes:
        system: the system prompt messages.
        user: the user's messages (the task, earlier turns, feedback; not observations).
        feedback: the run's own feedback among them (what was wrong with a reply, which may
            quote the reply's values), as :meth:`Run.send <react_agent.engine.Run.send>` was
            told.
        results: every tool result so far, in order (those a policy set aside included).
        ok_observations: the observations of the successful results, in order.
        earlier: the observation messages of the history this run starts from that are not of
            its own steps (earlier turns of a conversation, a ``serve`` request's tool
            messages), whole: tool results, never the user's word.
        succeeded: the latest successful result of each call (by :func:`signature`).
        latest: the latest result of each call that ran or was refused (not a repeat answered
            from before, nor a result set aside: ``ToolResult.skipped``).
        step_calls: the calls of each step that made any, in order (as signatures).
        step_results: the results of the latest step (kept in the history) of each set of
            calls.
        warned: the model was told it repeats a call (error ``"repeated"``).
        calls_made: the tool calls of the steps so far (run, refused or answered from before).
    """

    system: list[str] = field(default_factory=list)
    user: list[str] = field(default_factory=list)
    feedback: list[str] = field(default_factory=list)
    results: list[ToolResult] = field(default_factory=list)
    ok_observations: list[str] = field(default_factory=list)
    earlier: list[str] = field(default_factory=list)
    succeeded: dict[tuple[str, str], ToolResult] = field(default_factory=dict)
    latest: dict[tuple[str, str], ToolResult] = field(default_factory=dict)
    step_calls: list[tuple[tuple[str, str], ...]] = field(default_factory=list)
    step_results: dict[tuple[tuple[str, str], ...], list[ToolResult]] = field(
        default_factory=dict)
    warned: bool = False
    calls_made: int = 0

    def told(self, message: Message) -> None:
        """A system or user message that is not an observation message."""
        (self.system if message["role"] == "system" else self.user).append(message["content"])

    def observed(self, results: Sequence[ToolResult]) -> None:
        """The results of a step's calls (those answered from before included)."""
        for result in results:
            self.results.append(result)
            key = signature(result.call)
            if result.ok:
                self.succeeded[key] = result
                self.ok_observations.append(result.observation)
            if result.error != "repeated" and not result.skipped:
                self.latest[key] = result

    def calling(self, step: Step) -> None:
        """``step`` calls its ``tool_calls`` (run now, refused, or answered from before)."""
        if step.tool_calls:
            self.step_calls.append(tuple(signature(c) for c in step.tool_calls))
            self.calls_made += len(step.tool_calls)

    def stepped(self, step: Step) -> None:
        """``step``'s calls have their results (the loop calls this once per such step)."""
        self.observed(step.results)
        if step.tool_calls and step.results and step.in_history:
            self.step_results[tuple(signature(c) for c in step.tool_calls)] = step.results
        self.warned = self.warned or any(r.error == "repeated" for r in step.results)
