"""Does the tool fit the request? A focused yes-or-no question before a run's first call.

A small model offered tools calls one even when none fits the question ("what's 2+2?" answered
with a weather lookup), shaping the arguments to fit; asked directly whether that tool can do
what the user asks, the same model says no more often than its greedy reply shows. The
question goes in a call of its own (the tools the reply calls and the task, nothing else): a
judgement asked apart from the generation it judges, as in LLM-as-a-judge verification
(Zheng et al., 2023), with the yes-or-no read from the model's own probabilities where the
backend gives them (the answer floor's idea, Toolformer: Schick et al., 2023).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Generator
from dataclasses import dataclass
from typing import Any, ClassVar

from .. import prompts
from ..engine import Policy, Request, Run, reply_schema
from ..errors import ConfigError, ModelError, OutputParseError
from ..events import ReplyParsed
from ..tools import Toolbox
from ..types import Message, Reply, Step

CHOICES = ("yes", "no")
"""The words of the question's answer."""

MAX_TASK_CHARS = 4_000
"""The task is cut to this many characters in the question (its head and tail kept)."""


def question_messages(toolbox: Toolbox, task: str) -> list[Message]:
    """The focused question (``prompts/policies/relevance*.md``): the tools of ``toolbox``
    described and the ``task``, both :func:`~react_agent.prompts.defang`-ed; nothing else."""
    if len(task) > MAX_TASK_CHARS:
        half = MAX_TASK_CHARS // 2
        task = f"{task[:half]}\n[...]\n{task[-half:]}"
    return [
        {"role": "system", "content": prompts.render("policies/relevance_system")},
        {"role": "user", "content": prompts.render(
            "policies/relevance", tools=prompts.defang(toolbox.describe()),
            task=prompts.defang(task))},
    ]


@dataclass(frozen=True)
class Relevance(Policy):
    """Before a run's first tool call, asks the model in a focused call whether the tools the
    reply calls can do what the user asks (``prompts/policies/relevance.md``: those tools'
    descriptions and the task). When "yes" gets less than ``threshold`` of the probability
    (a backend with ``accepts_choices``; any other answers in words, read as 1 or 0), the
    calls do not run: the step is asked again after a note that no tool fits
    (``prompts/policies/relevance_answer.md``), held to the final answer (the reply schema's
    final-answer branch, where the backend constrains decoding), and that answer replaces the
    reply. An answer that does not come (a tool call again, an unusable reply, a model error)
    leaves the calls to run and the history as it was.

    Acts once per run, on the loop's own first reply that calls tools, and not in a
    conversation that already has tool results (their tools were chosen already).

    The question is a step with ``origin="relevance"`` and ``records["relevance"] =
    {"yes": p, "tools": [names]}`` (``p`` 0-1); the answer asked again is another, whose
    reply replaces the calls' in the history; notes on the reply's step.

    Args:
        threshold: the least probability (0-1] of "yes" that lets the calls run; the default
            was tuned on BFCL's tuning split (the docs' measurements page).

    Raises:
        ConfigError: ``threshold`` is not in (0, 1].
    """

    name: ClassVar[str] = "relevance"
    sets_calls_aside: ClassVar[bool] = True
    choices: ClassVar[tuple[str, str]] = CHOICES
    threshold: float = 0.6

    def __post_init__(self) -> None:
        if not 0 < self.threshold <= 1:
            raise ConfigError("Relevance's threshold must be a probability in (0, 1].")

    def for_run(self, run: Run) -> dict[str, bool]:
        return {"asked": bool(run.facts.results or run.facts.earlier)}

    def on_calls(self, run: Run, step: Step, reply: Reply) -> Generator[Request, Any, Reply]:
        state = run.state(self)
        if state["asked"] or step.origin is not None or run.called_tools:
            return reply
        state["asked"] = True
        names = list(dict.fromkeys(c.name for c in reply.tool_calls))
        chosen = Toolbox([t for t in (run.setup.toolbox.get(n) for n in names) if t is not None])
        if not len(chosen):
            return reply  # an unknown tool: the invoker says so
        question = Step(index=len(run.steps) + 1, origin=self.name, in_history=False)
        try:
            answer = yield from run.ask(question_messages(chosen, run.task), question,
                                        choices=self.choices, answer_tokens=False)
        except ModelError as exc:
            question.error = f"the relevance question failed ({exc}); the calls run"
            run.note(step, self.name, "Relevance", question.error)
            return reply
        yield run.answered(question, answer, keep=False)
        yes = yes_probability(answer.choices, answer.text)
        question.records[self.name] = {"yes": yes, "tools": chosen.names}
        if yes is None or yes >= self.threshold:
            return reply
        run.note(step, self.name, "Relevance", f"the model gives {', '.join(chosen.names)} "
                 f"{yes:.0%} of 'yes' to fitting the task; asking for the final answer instead")
        yield from run.flush()
        return (yield from self._answer_instead(run, step, reply))

    def _answer_instead(self, run: Run, step: Step, reply: Reply
                        ) -> Generator[Request, Any, Reply]:
        """The step asked again, held to the final answer, after a note that no tool fits
        (``prompts/policies/relevance_answer.md``: answer from what the model knows, and say
        what it cannot do; without it, a small model makes up the result the tool would have
        given); ``reply`` if no answer comes, the history as it was."""
        kept = run.messages.pop()  # the calls' reply, put back if no answer comes
        run.messages.append({"role": "user",
                             "content": prompts.render("policies/relevance_answer")})
        again = Step(index=len(run.steps) + 1, origin=self.name)
        try:
            output = run.setup.output
            answer = yield from run.ask(
                run.messages, again, answer_tokens=False,
                schema=reply_schema(Toolbox([]), output.schema if output else None))
        except ModelError as exc:
            again.error = f"asking for the final answer failed ({exc}); the calls run"
            run.messages[-1] = kept
            run.note(step, self.name, "Relevance", again.error)
            return reply
        yield run.answered(again, answer)
        try:
            read = run.read(again, answer)
        except OutputParseError as exc:
            read, again.error = None, exc.problem
        if read is None or read.final_answer is None:
            del run.messages[-2:]
            run.messages.append(kept)
            again.in_history = False
            run.note(step, self.name, "Relevance", "no final answer came; the calls run")
            return reply
        yield ReplyParsed(again, read)
        step.in_history, step.tool_calls = False, []
        return dataclasses.replace(read, tool_calls=[])


def yes_probability(choices: dict[str, float] | None, text: str) -> float | None:
    """The probability of "yes": from ``choices`` where the backend gave them, else 1 or 0 by
    the reply's first word; ``None`` when the reply is neither."""
    if choices is not None:
        return choices.get("yes")
    words = text.strip().strip('"').split()
    first = words[0].strip(".,!:;\"'").lower() if words else ""
    return {"yes": 1.0, "no": 0.0}.get(first)

