"""The final answer taken when the model itself gives it enough probability (embedded model)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..engine import Policy, Query, Run
from ..errors import ConfigError
from ..types import ModelReply, Step


@dataclass(frozen=True)
class AnswerFloor(Policy):
    """Until the run has called a tool, a reply gives the final answer when the model gives
    that branch at least ``floor`` probability where the reply chooses its action, even if a
    tool call is more likely: for small models that call a tool where none fits or none is
    needed. Only backends with ``accepts_answer_floor`` (the embedded model, through
    :mod:`react_agent.models._answer_floor`) can; others ignore it. The idea is Toolformer's
    threshold on the probability of a call (Schick et al., 2023).

    Records ``step.records["answer_floor"] = {"probability": p, "taken": bool}`` where the
    backend measured it; a note when it took the final answer.

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

    def after_query(self, run: Run, step: Step, reply: ModelReply) -> None:
        if reply.answer_probability is None:
            return
        step.records[self.name] = {"probability": reply.answer_probability,
                                   "taken": reply.answer_taken}
        if reply.answer_taken:
            run.note(step, self.name, "Answer floor", "the model gave the final answer "
                     f"{reply.answer_probability:.0%} of the probability where it chose its "
                     "action; taking it instead of a tool call")
