"""With the steps used up, the final answer asked for once more."""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass
from typing import Any, ClassVar

from .. import prompts
from ..engine import Policy, Request, Run
from ..errors import ModelError, OutputParseError
from ..events import FinalAnswer, ParseFailed, ReplyParsed
from ..types import Message, Step


@dataclass(frozen=True)
class BestEffortAnswer(Policy):
    """When ``max_steps`` is used up, ask the model once more for a final answer only, from
    what it has observed (``prompts/policies/final_answer.md``). The status stays
    ``max_steps``; a usable answer is kept with ``RunResult.best_effort`` set. A tool asked for
    here is not run. The extra step has ``origin="best_effort"``; a resumed run sets it aside.
    """

    name: ClassVar[str] = "best_effort"
    runs_in_serve: ClassVar[bool] = False

    def on_out_of_steps(self, run: Run) -> Generator[Request, Any, None]:
        result = run.result
        run.send(prompts.render("policies/final_answer", task=run.task))
        step = Step(index=len(run.steps) + 1, origin=self.name, in_history=False)
        try:
            reply = yield from run.ask(run.messages, step)
        except ModelError as exc:
            result.error = f"{result.error} Asking for a best-effort answer failed: {exc}"
            return
        yield run.answered(step, reply)
        try:
            parsed = run.read(step, reply)
        except OutputParseError as exc:
            yield ParseFailed(step, str(exc))
            return
        yield ReplyParsed(step, parsed)
        if parsed.final_answer is not None:
            result.final_answer, result.best_effort = parsed.final_answer, True
            result.error = f"{result.error} The final answer is a best effort from what was " \
                "observed."
            yield FinalAnswer(step, parsed.final_answer, best_effort=True)
        else:
            result.error = f"{result.error} Asked for a final answer from what it had " \
                "observed, the model asked for a tool instead (not run)."
        step.tool_calls = []  # no tool runs after the budget

    def on_resume(self, task: str, messages: list[Message], steps: list[Step]) -> None:
        if steps and steps[-1].origin == self.name:
            steps.pop()
            ask = prompts.render("policies/final_answer", task=task)
            cut = max((i for i, m in enumerate(messages) if m["content"] == ask),
                      default=len(messages))
            del messages[cut:]

