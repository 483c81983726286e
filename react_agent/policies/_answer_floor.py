"""The final answer taken when the model itself gives it enough probability (embedded model)."""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass
from typing import Any, ClassVar

from ..engine import Policy, Query, Request, Run
from ..errors import ConfigError, ModelError, OutputParseError
from ..events import ReplyParsed
from ..types import ModelReply, Reply, Step
from ._announced import announcement


@dataclass(frozen=True)
class AnswerFloor(Policy):
    """Until the run has called a tool, a reply gives the final answer when the model gives
    that branch at least ``floor`` probability where the reply chooses its action, even if a
    tool call is more likely: for small models that call a tool where none fits or none is
    needed. Only backends with ``accepts_answer_floor`` (the embedded model, through
    :mod:`react_agent.models._answer_floor`) can; others ignore it. The idea is Toolformer's
    threshold on the probability of a call (Schick et al., 2023).

    An answer the floor took that announces an action one of the tools shown could take ("I
    will pay the bill for you.", :func:`~react_agent.policies._announced.announcement`) is no
    answer: the step is asked again without the floor, and the model's own choice, its tool
    calls, replaces it (the answer leaves the history); if no call comes, the answer stays.
    So a first answer is not streamed while the floor may take it.

    Records ``step.records["answer_floor"] = {"probability": p, "taken": bool}`` where the
    backend measured it, with ``"promise": sentence`` when the answer taken was set aside; a
    note when it took the final answer; the step asked again has ``origin="answer_floor"``.

    Args:
        floor: the probability in (0, 1]; the default lies between what the embedded model
            gives the final answer where a tool is needed and where none is (see the
            measurements page).

    Raises:
        ConfigError: ``floor`` is not in (0, 1].
    """

    name: ClassVar[str] = "answer_floor"
    floor: float = 0.035

    def __post_init__(self) -> None:
        if not 0 < self.floor <= 1:
            raise ConfigError("AnswerFloor's floor must be a probability in (0, 1].")

    def before_query(self, run: Run, query: Query) -> None:
        if query.step.origin is None and not run.called_tools:
            query.answer_floor = self.floor
            if len(run.setup.shown) > 0:
                query.answer_tokens = False  # an answer that may be set aside

    def after_query(self, run: Run, step: Step, reply: ModelReply) -> None:
        if reply.answer_probability is None:
            return
        step.records[self.name] = {"probability": reply.answer_probability,
                                   "taken": reply.answer_taken}
        if reply.answer_taken:
            run.note(step, self.name, "Answer floor", "the model gave the final answer "
                     f"{reply.answer_probability:.0%} of the probability where it chose its "
                     "action; taking it instead of a tool call")

    def on_action(self, run: Run, step: Step, reply: Reply) -> Generator[Request, Any, Reply]:
        record = step.records.get(self.name)
        if (reply.final_answer is None or reply.tool_calls or step.origin is not None
                or not isinstance(record, dict) or not record.get("taken")):
            return reply
        promise = announcement(reply.final_answer, run.setup.shown, " ".join(run.facts.user))
        if promise is None:
            return reply
        record["promise"] = promise
        return (yield from self._own_choice(run, step, reply, promise))

    def _own_choice(self, run: Run, step: Step, reply: Reply, promise: str
                    ) -> Generator[Request, Any, Reply]:
        """``step`` asked again without the floor: its calls, or ``reply`` (the history as it
        was) if none come."""
        history = list(run.messages)
        del run.messages[-1]  # the answer the floor took
        again = Step(index=len(run.steps) + 1, origin=self.name)
        read: Reply | None = None
        problem = "no call came; the answer stays"
        try:
            answer = yield from run.ask(run.messages, again, answer_tokens=False)
            yield run.answered(again, answer)
            read = run.read(again, answer)
            for policy in run.setup.policies:
                if read is None:
                    break
                read = policy.after_reply(run, again, read)
        except ModelError as exc:
            problem = f"asking again failed ({exc}); the answer stays"
        except OutputParseError as exc:
            read, again.reply, again.error = None, None, exc.problem
            problem = f"the reply asked again was unusable ({exc.problem}); the answer stays"
        finally:  # an interrupt too leaves the history as it was
            if read is None or not read.tool_calls:
                run.messages[:] = history
                again.in_history = False
        if read is None or not read.tool_calls:
            run.note(step, self.name, "Answer floor", f"the answer it took announces an "
                     f"action ({promise!r}); asked again without the floor: {problem}")
            return reply
        run.note(step, self.name, "Answer floor", f"the answer it took announces an action "
                 f"({promise!r}); set aside for the model's own choice, asked again without "
                 "the floor")
        step.in_history = False  # (before the event: an interrupt there keeps it so)
        yield ReplyParsed(again, read)
        return read
