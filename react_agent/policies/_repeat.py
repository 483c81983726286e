"""A reply that only asks again for results the run already has is set aside."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import ClassVar

from ..engine import FINAL_ANSWER_SCHEMA, Policy, Query, Run
from ..types import Reply, Step, ToolResult

SET_ASIDE = "set_aside"
"""The error of a result set aside (with ``skipped``): the earlier result, not run again."""


@dataclass
class _Once:
    """The state of one run: whether a reply was set aside yet."""

    done: bool = False


@dataclass(frozen=True)
class RepeatSetAside(Policy):
    """A reply whose every call the run has already made successfully (a small model copies
    its previous reply after the result it needed) is set aside: its calls are not run, it is
    left out of the history, and the next reply is asked for in the same context as a final
    answer (under the final-answer schema where the backend constrains decoding). Once per
    run; after that, repeats get the loop's warnings, then ``loop_detected``.

    Records ``step.records["repeat"] = True`` on the step set aside, whose ``results`` hold
    the earlier results, ``skipped``, with error ``"set_aside"``; a note.
    """

    name: ClassVar[str] = "repeat"
    sets_calls_aside: ClassVar[bool] = True

    def for_run(self, run: Run) -> _Once:
        return _Once(any(r.error == SET_ASIDE for s in run.steps for r in s.results))

    def before_query(self, run: Run, query: Query) -> None:
        if query.step.origin is None and run.steps and run.steps[-1].records.get(self.name):
            query.schema = FINAL_ANSWER_SCHEMA

    def after_reply(self, run: Run, step: Step, reply: Reply) -> Reply | None:
        once: _Once = run.state(self)
        if once.done:  # once a run: then the loop's warnings take over
            return reply
        earlier = [run.succeeded(c) for c in reply.tool_calls]
        found = [r for r in earlier if r is not None]
        if not earlier or len(found) < len(earlier):
            return reply
        self.set_aside(run, step, found)
        return None

    def set_aside(self, run: Run, step: Step, earlier: list[ToolResult]) -> None:
        """Keep ``step`` with the results the run already had, without running its calls, and
        take its reply out of the history."""
        step.tool_calls = [r.call for r in earlier]
        step.results = [dataclasses.replace(r, ok=False, error=SET_ASIDE, seconds=0.0,
                                            origin=self.name, skipped=True)
                        for r in earlier]
        step.in_history = False
        step.records[self.name] = True
        run.state(self).done = True
        run.messages.pop()
        calls = "1 call" if len(earlier) == 1 else f"{len(earlier)} calls"
        run.note(step, self.name, "Repeat", f"the run already has the results of {calls}; not "
                 "run again, asking for the final answer instead")
