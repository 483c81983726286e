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
import math
import re
from collections.abc import Generator
from dataclasses import dataclass
from typing import Any, ClassVar

from .. import prompts
from ..engine import Policy, Request, Run, reply_schema
from ..errors import ConfigError, ModelError, OutputParseError
from ..events import ReplyParsed
from ..parsing import strip_reasoning
from ..tools import Toolbox
from ..types import Message, Reply, Step

CHOICES = ("yes", "no")
"""The words of the question's answer."""

MAX_TASK_CHARS = 4_000
"""The task is cut to this many characters in the question (its head and tail kept)."""


def question_messages(toolbox: Toolbox, task: str, system: str = "policies/relevance_system",
                      user: str = "policies/relevance") -> list[Message]:
    """A focused question, by default Relevance's (``prompts/policies/relevance*.md``): the
    ``system`` template, then the ``user`` template of the tools of ``toolbox`` described
    (``$tools``) and the ``task`` (``$task``, its head and tail when longer than
    :data:`MAX_TASK_CHARS`), both :func:`~react_agent.prompts.defang`-ed; nothing else."""
    return [
        {"role": "system", "content": prompts.render(system)},
        {"role": "user", "content": prompts.render(
            user, tools=prompts.tools_text(toolbox), task=prompts.defang(cut_task(task)))},
    ]


def cut_task(task: str) -> str:
    """``task`` as a focused question shows it: its head and tail, ``[...]`` between them, when
    longer than :data:`MAX_TASK_CHARS`."""
    if len(task) <= MAX_TASK_CHARS:
        return task
    half = MAX_TASK_CHARS // 2
    return f"{task[:half]}\n[...]\n{task[-half:]}"


@dataclass(frozen=True)
class Relevance(Policy):
    """Before a run's first tool call, asks the model in a focused call whether the request needs
    what the tools the reply calls return or do, as the whole answer or as one step of it
    (``prompts/policies/relevance.md``: those tools' descriptions and the task). When "yes" gets
    less than ``threshold`` of the probability (a backend with ``accepts_choices``; any other
    answers in words, read as 1 or 0), the calls do not run: the step is asked again after a
    note that no tool fits (``prompts/policies/relevance_answer.md``), held to the final answer
    (the reply schema's final-answer branch, where the backend constrains decoding), and that
    answer replaces the reply. An answer that does not come (a tool call again, an unusable
    reply, a model error) leaves the calls to run and the history as it was.

    Asks once per run (a resumed run that asked does not ask again), on the loop's own first
    reply that calls a tool of the run before any call has succeeded, and not in a
    conversation that already has tool results (their tools were chosen already). The answer
    asked again goes through the other policies' ``after_reply`` (an answer that announces
    an action is no answer here).

    The question is a step with ``origin="relevance"`` and ``records["relevance"] =
    {"yes": p, "tools": [names]}`` (``p`` 0-1, or ``None`` when the answer was neither yes
    nor no: the calls run); the answer asked again is another, whose reply replaces the
    calls' in the history; a note on the reply's step says what came of it.

    Args:
        threshold: the least probability (0-1] of "yes" that lets the calls run; the default
            was tuned on BFCL's tuning split (the docs' measurements page).

    Raises:
        ConfigError: ``threshold`` is not in (0, 1].
    """

    name: ClassVar[str] = "relevance"
    sets_calls_aside: ClassVar[bool] = True
    choices: ClassVar[tuple[str, str]] = CHOICES
    threshold: float = 0.7

    def __post_init__(self) -> None:
        if not 0 < self.threshold <= 1:
            raise ConfigError("Relevance's threshold must be a probability in (0, 1].")

    def for_run(self, run: Run) -> dict[str, bool]:
        asked = any(s.origin == self.name for s in run.steps)  # a resumed run: asked already
        return {"asked": asked or bool(run.facts.results or run.facts.earlier)}

    def on_action(self, run: Run, step: Step, reply: Reply) -> Generator[Request, Any, Reply]:
        state = run.state(self)
        if not reply.tool_calls or state["asked"] or step.origin is not None \
                or any(r.ok for r in run.facts.results):
            return reply
        names = list(dict.fromkeys(c.name for c in reply.tool_calls))
        chosen = Toolbox([t for t in (run.setup.toolbox.get(n) for n in names) if t is not None])
        if not len(chosen):
            return reply  # only unknown tools: the invoker says so, and a later reply is asked
        state["asked"] = True
        try:
            yes = yield from ask_yes_or_no(run, self.name, chosen,
                                           question_messages(chosen, run.task), self.choices)
        except ModelError as exc:
            run.note(step, self.name, "Relevance",
                     f"the relevance question failed ({exc}); the calls run")
            return reply
        if yes is None:
            run.note(step, self.name, "Relevance", "the answer to whether "
                     f"{', '.join(chosen.names)} fits the task was neither yes nor no; the "
                     "calls run")
            return reply
        if yes >= self.threshold:
            run.note(step, self.name, "Relevance", f"the model gives {', '.join(chosen.names)} "
                     f"{yes:.0%} of 'yes' to fitting the task (at least {self.threshold:.0%}); "
                     "the calls run")
            return reply
        run.note(step, self.name, "Relevance", f"the model gives {', '.join(chosen.names)} "
                 f"{yes:.0%} of 'yes' to fitting the task (below {self.threshold:.0%}); asking "
                 "for the final answer instead")
        yield from run.flush()
        return (yield from answer_instead(run, step, reply, self.name, "Relevance",
                                          prompts.render("policies/relevance_answer")))


def ask_yes_or_no(run: Run, name: str, chosen: Toolbox, messages: list[Message],
                  choices: tuple[str, str] = CHOICES) -> Generator[Request, Any, float | None]:
    """Ask the focused question ``messages`` about the tools ``chosen`` on a step of its own
    (``origin=name``, not in the history), recorded there as ``records[name] = {"yes": p,
    "tools": [names]}``: the probability of "yes" (:func:`yes_probability`), ``None`` when the
    answer was neither yes nor no.

    Raises:
        ModelError: the backend failed (the question's step is not recorded).
    """
    question = Step(index=len(run.steps) + 1, origin=name, in_history=False)
    answer = yield from run.ask(messages, question, choices=choices, answer_tokens=False)
    yield run.answered(question, answer, keep=False)
    yes = yes_probability(answer.choices, answer.text)
    question.records[name] = {"yes": yes, "tools": chosen.names}
    return yes


_YES_OR_NO = re.compile(r"\b(yes|no)\b", re.IGNORECASE)
_UNFINISHED_REASONING = re.compile(r"\s*<think>", re.IGNORECASE)


def yes_probability(choices: Any, text: str) -> float | None:
    """The probability of "yes": from ``choices`` where the backend gave them (a number in
    [0, 1] under ``"yes"``), else 1 or 0 by the first "yes" or "no" in the first 200
    characters of the reply after any reasoning (``<think>...</think>``); ``None`` when there
    is neither, when the reply opens reasoning and never closes it, or when ``choices`` is not
    such a mapping (a backend's bug: the calls run)."""
    if choices is not None:
        yes = choices.get("yes") if isinstance(choices, dict) else None
        if isinstance(yes, bool) or not isinstance(yes, int | float) \
                or not 0 <= yes <= 1 or not math.isfinite(yes):  # (range first: 10**400)
            return None
        return float(yes)
    text = str(text)
    if _UNFINISHED_REASONING.match(text) and "</think>" not in text.lower():
        return None  # the reasoning never ended: no answer was given
    found = _YES_OR_NO.search(strip_reasoning(text)[:200])
    return None if found is None else 1.0 if found[1].lower() == "yes" else 0.0


def answer_instead(run: Run, step: Step, reply: Reply, name: str, label: str, note: str
                   ) -> Generator[Request, Any, Reply]:
    """``step``, whose ``reply`` calls tools, asked again held to the final answer after
    ``note`` (in place of the reply in the history; for :class:`Relevance`
    ``prompts/policies/relevance_answer.md``: answer from what the model knows, and say what it
    cannot do; without it, a small model makes up the result the tool would have given), on a
    step of origin ``name``: the answer, or ``reply`` if no answer comes, the history as it
    was (a note of ``name`` with ``label`` says why)."""
    history = list(run.messages)  # put back whenever no answer replaces the calls
    run.messages[-1] = {"role": "user", "content": note}
    again = Step(index=len(run.steps) + 1, origin=name)
    read: Reply | None = None
    try:
        output = run.setup.output
        answer = yield from run.ask(
            run.messages, again, answer_tokens=False,
            schema=reply_schema(Toolbox([]), output.schema if output else None))
        yield run.answered(again, answer)
        read = run.read(again, answer)
        for policy in run.setup.policies:  # (an answer that announces an action, say)
            if read is None:
                break
            read = policy.after_reply(run, again, read)
    except ModelError as exc:
        again.error = f"asking for the final answer failed ({exc}); the calls run"
    except OutputParseError as exc:
        read, again.reply, again.error = None, None, exc.problem
    finally:  # an interrupt too leaves the history as it was
        if read is None or read.final_answer is None:
            run.messages[:] = history
            again.in_history = False
    if read is None or read.final_answer is None:
        run.note(step, name, label, again.error if again.error and
                 again.error.startswith("asking") else "no final answer came; the calls "
                 "run")
        return reply
    step.in_history, step.tool_calls = False, []  # (before the event: an interrupt there)
    yield ReplyParsed(again, read)
    return dataclasses.replace(read, tool_calls=[])
