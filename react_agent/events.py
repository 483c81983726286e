"""Events of a run, yielded by :meth:`Agent.iter` in the order they happen and passed to every
callback of ``Agent(callbacks=[...])``.

The CLI printer, the trace writer and user code all consume the same events; the library itself
never prints. In order, a run gives::

    RunStarted
    (ModelCallStarted [ModelToken... AnswerToken...] ModelCallFinished
        (ReplyParsed [ToolStarted... ToolFinished... ObservationSent | FinalAnswer] | ParseFailed)
    )...
    RunFinished

A conversation gives a ``HistoryCompressed`` before a turn whose history it summarised.
Each callback is called with an event before it is yielded; an exception a callback raises
(other than ``KeyboardInterrupt``, which ends the run as ``interrupted``) propagates out of
``run``/``iter``: the run does not go on, so a callback that must not stop it catches its own
errors.
``ModelToken``/``AnswerToken`` come only when streaming (``AgentConfig(stream=True)`` and a
backend with ``stream``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from .types import Reply, RunResult, Step, ToolCall, ToolResult


@dataclass(frozen=True)
class RunStarted:
    """The run began. ``system_prompt`` is the rendered system message; ``tools`` the names of
    the tools the model may call; ``resumed_steps`` how many earlier steps a resumed run
    continues (0 for a new run)."""

    task: str
    system_prompt: str
    tools: tuple[str, ...] = ()
    resumed_steps: int = 0


@dataclass(frozen=True)
class ModelCallStarted:
    """The model is being asked for step ``index`` (1-based; counts every model call), with
    ``message_count`` messages of ``message_chars`` characters in all."""

    index: int
    message_count: int = 0
    message_chars: int = 0


@dataclass(frozen=True)
class ModelToken:
    """A piece of the model's reply to step ``index``, as it streams in."""

    index: int
    text: str


@dataclass(frozen=True)
class AnswerToken:
    """New characters of the ``final_answer`` string, decoded, as they stream in (see
    :class:`react_agent.parsing._stream.FinalAnswerStream`)."""

    index: int
    text: str


@dataclass(frozen=True)
class ModelCallFinished:
    """The model replied: ``step.raw_output``, ``step.model_seconds`` and token usage are set."""

    step: Step


@dataclass(frozen=True)
class ReplyParsed:
    """The model replied and the parser found an action."""

    step: Step
    reply: Reply


@dataclass(frozen=True)
class ParseFailed:
    """The model's reply held no usable action; ``message`` goes back to the model."""

    step: Step
    message: str


@dataclass(frozen=True)
class ToolStarted:
    """A tool call is about to run."""

    step: Step
    call: ToolCall


@dataclass(frozen=True)
class ToolFinished:
    """A tool call finished (or failed, timed out, or was refused): ``result.observation``."""

    step: Step
    result: ToolResult


@dataclass(frozen=True)
class ObservationSent:
    """The step's observations went back to the model as this user ``message``."""

    step: Step
    message: str


@dataclass(frozen=True)
class FinalAnswer:
    """The model gave its final answer (``best_effort``: asked for after ``max_steps``;
    ``draft``: a review call follows that may rewrite it, see ``AgentConfig.review_answer``,
    for the ``reasons`` given in words)."""

    step: Step
    text: str
    best_effort: bool = False
    draft: bool = False
    reasons: tuple[str, ...] = ()


@dataclass(frozen=True)
class LoopBroken:
    """The model went on repeating calls whose results it already had, after being told so
    (``step``: the repeat); instead of ending with ``loop_detected`` the loop asks for the final
    answer from those results in a focused call (``AgentConfig.review_answer`` not ``"off"``)."""

    step: Step


@dataclass(frozen=True)
class RepeatSetAside:
    """``step`` only asked again for calls whose results the run already had: they are not run,
    and the next reply is asked for as a final answer (``AgentConfig.answer_on_repeat``)."""

    step: Step


@dataclass(frozen=True)
class HistoryCompressed:
    """A conversation summarised its oldest ``turns`` turns before the next one, shrinking the
    history from ``tokens_before`` to ``tokens_after`` (``error`` set if summarising failed and
    the history was kept as it was)."""

    turns: int
    tokens_before: int
    tokens_after: int
    summary: str
    error: str | None = None


@dataclass(frozen=True)
class RunFinished:
    """The run ended; ``result.status`` says how."""

    result: RunResult


Event = (
    RunStarted | ModelCallStarted | ModelToken | AnswerToken | ModelCallFinished | ReplyParsed
    | ParseFailed | ToolStarted | ToolFinished | ObservationSent | FinalAnswer | LoopBroken
    | RepeatSetAside | HistoryCompressed | RunFinished
)


def last_result(events: Iterable[Event]) -> RunResult:
    """The :class:`RunResult` carried by the ``RunFinished`` event that ends ``events`` (a run's
    events, e.g. ``agent.iter(task)``), consuming them.

    Raises:
        ValueError: ``events`` ended without a ``RunFinished`` event.
    """
    for event in events:
        if isinstance(event, RunFinished):
            return event.result
    raise ValueError("These events hold no RunFinished event; pass all the events of a run.")
