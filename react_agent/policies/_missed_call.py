"""An answer given without a tool where a tool fits: the focused question, the other way round.

A small model offered a tool that computes, looks up or defines what the user asks sometimes
answers from memory instead (a product of two large numbers worked out wrongly), or says it
did what no tool did. Asked directly, in a call of its own, whether one of the tools shown can
do what the user asks (as :class:`~react_agent.policies.Relevance` asks about the tools a reply
calls), the same model says yes with more confidence than where no tool fits; above a high
threshold, the reply is asked again held to a call.
"""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass
from typing import Any, ClassVar

from .. import prompts
from .._lexical import rank
from ..engine import Policy, Query, Request, Run, reply_schema
from ..errors import ConfigError, ModelError, OutputParseError
from ..events import ReplyParsed
from ..tools import Toolbox
from ..types import Reply, Step
from ._relevance import CHOICES, ask_yes_or_no, question_messages
from ._routing import tool_text

MAX_TOOLS_UNRANKED = 32
"""The most tools the question shows when none shares a word with the task (the first ones):
a bound on its prompt, whatever the toolbox."""

QUESTION = ("policies/missed_call_system", "policies/missed_call_question")
"""The question's templates: whether one of the tools can do what the user asks (the whole of
it; Relevance asks whether the request needs what a called tool does, even as one step)."""


@dataclass(frozen=True)
class MissedCall(Policy):
    """When a run's first reply gives the final answer without a tool while tools are shown, a
    focused question asks whether one of them can do what the user asks
    (``prompts/policies/missed_call_system.md`` and ``missed_call_question.md``: the tools'
    descriptions and the task, defanged; nothing of the run). Where the model gives "yes" at
    least ``threshold`` of the probability (or answers "yes" in words, with backends that give
    no probabilities), the answer is set aside and the step asked again after a note that a tool
    fits (``prompts/policies/missed_call_note.md``), held to a reply that calls tools where the
    backend takes a schema. Calls that come pass the other policies' ``after_reply`` and run,
    the answer they replace left out of the history; anything else (a final answer again, an
    unusable reply, a model error, an interrupt) keeps the first answer and the history as it
    was.

    Asks once per run: on the loop's own first reply, before any tool was called, not in a
    conversation that already has tool results, not in a resumed run that asked. While it
    may still ask, a final answer is not streamed as answer tokens (it may be taken back).

    Records ``records["missed_call"] = {"yes": p, "tools": [names]}`` on the question's step
    (``origin="missed_call"``, ``p`` 0-1 or ``None`` when the answer was neither yes nor no);
    the reply asked again is a step of the same origin; a note on the answer's step says what
    came of it.

    Args:
        threshold: the least probability (0-1] of "yes" that sets the answer aside; high,
            because a final answer where no tool fits must stay (tuned on the docs'
            measurements page).
        max_tools: the most tools the question shows: with more shown, those whose words
            match the task best (:func:`~react_agent._lexical.rank`, as routing does); when
            none does, the first :data:`MAX_TOOLS_UNRANKED` shown.

    Raises:
        ConfigError: ``threshold`` is not in (0, 1] or ``max_tools`` is less than 1.
    """

    name: ClassVar[str] = "missed_call"
    gives_calls: ClassVar[bool] = True
    choices: ClassVar[tuple[str, str]] = CHOICES
    threshold: float = 0.8
    max_tools: int = 8

    def __post_init__(self) -> None:
        if not 0 < self.threshold <= 1:
            raise ConfigError("MissedCall's threshold must be a probability in (0, 1].")
        if self.max_tools < 1:
            raise ConfigError("MissedCall's max_tools must be at least 1.")

    def for_run(self, run: Run) -> dict[str, bool]:
        asked = any(s.origin == self.name for s in run.steps)  # a resumed run: asked already
        return {"asked": asked or bool(run.facts.results or run.facts.earlier)}

    def _may_ask(self, run: Run, step: Step) -> bool:
        return (not run.state(self)["asked"] and step.origin is None and not run.called_tools
                and len(run.setup.shown) > 0)

    def before_query(self, run: Run, query: Query) -> None:
        if self._may_ask(run, query.step):
            query.answer_tokens = False  # an answer that may be set aside

    def on_action(self, run: Run, step: Step, reply: Reply) -> Generator[Request, Any, Reply]:
        if reply.final_answer is None or reply.tool_calls or not self._may_ask(run, step):
            return reply
        run.state(self)["asked"] = True
        chosen = self._tools(run)
        try:
            yes = yield from ask_yes_or_no(run, self.name, chosen,
                                           question_messages(chosen, run.task, *QUESTION),
                                           self.choices)
        except ModelError as exc:
            run.note(step, self.name, "Missed call",
                     f"the question whether a tool fits failed ({exc}); the answer stays")
            return reply
        tools = ", ".join(chosen.names) if len(chosen) == 1 else \
            f"one of {', '.join(chosen.names)}"
        if yes is None or yes < self.threshold:
            said = "neither yes nor no" if yes is None else \
                f"{yes:.0%} 'yes', below {self.threshold:.0%}"
            run.note(step, self.name, "Missed call", f"asked whether {tools} fits the task: "
                     f"{said}; the answer stays")
            return reply
        run.note(step, self.name, "Missed call", f"asked whether {tools} fits the task: "
                 f"{yes:.0%} 'yes', at least {self.threshold:.0%}; asking for the call instead "
                 "of the answer")
        yield from run.flush()
        return (yield from self._call_instead(run, step, reply))

    def _tools(self, run: Run) -> Toolbox:
        """The tools shown, at most :attr:`max_tools` of them: those that match the task
        best, in the order they are shown; when no tool shares a word with the task (bare
        arithmetic), the first :data:`MAX_TOOLS_UNRANKED`."""
        tools = list(run.setup.shown.values())
        if len(tools) <= self.max_tools:
            return run.setup.shown
        scores = rank(run.task, [tool_text(t) for t in tools])
        if max(scores) <= 0:
            return Toolbox(tools[:MAX_TOOLS_UNRANKED])
        best = sorted(range(len(tools)), key=lambda i: (-scores[i], i))[:self.max_tools]
        return Toolbox([tools[i] for i in sorted(best)])

    def _call_instead(self, run: Run, step: Step, reply: Reply
                      ) -> Generator[Request, Any, Reply]:
        """The step asked again after the note, held to calls; ``reply`` if no call comes,
        the history as it was."""
        history = list(run.messages)
        run.messages[-1] = {"role": "user",
                            "content": prompts.render("policies/missed_call_note")}
        again = Step(index=len(run.steps) + 1, origin=self.name)
        read: Reply | None = None
        problem = "no call came; the answer stays"
        try:
            output = run.setup.output
            answer = yield from run.ask(
                run.messages, again, answer_tokens=False,
                schema=reply_schema(run.setup.shown, output.schema if output else None,
                                    final_answer=False))
            yield run.answered(again, answer)
            read = run.read(again, answer)
            for policy in run.setup.policies:  # (serve's check of the client's schemas, say)
                if read is None:
                    break
                read = policy.after_reply(run, again, read)
        except ModelError as exc:
            problem = f"asking for the call failed ({exc}); the answer stays"
        except OutputParseError as exc:
            read, again.reply, again.error = None, None, exc.problem
            problem = f"the call asked for was unusable ({exc.problem}); the answer stays"
        finally:  # an interrupt too leaves the history as it was
            if read is not None and any(c.name not in run.setup.toolbox
                                        for c in read.tool_calls):
                problem = "the call asked for names a tool the run does not have; the answer stays"
                read = None
            if read is None or not read.tool_calls:
                run.messages[:] = history
                again.in_history = False
        if read is None or not read.tool_calls:
            run.note(step, self.name, "Missed call", problem)
            return reply
        step.in_history = False  # (before the event: an interrupt there keeps it so)
        yield ReplyParsed(again, read)
        return read
