"""Events of a run, yielded by :meth:`Agent.iter` in the order they happen and passed to every
callback of ``Agent(callbacks=[...])``.

The CLI printer, the trace writer and user code all consume the same events; the library itself
never prints. In order, a run gives::

    RunStarted
    (ModelCallStarted [ModelToken... AnswerToken...] ModelCallFinished
        (ReplyParsed [ToolStarted... ToolFinished... ObservationSent
                      | OutputRejected | OutputReady FinalAnswer | FinalAnswer] | ParseFailed)
    )...
    RunFinished

with a ``PolicyNote`` wherever a policy acted (after the ``ReplyParsed`` or ``ParseFailed`` of
the step it acted on, or before the extra model call it makes).

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
from typing import Any

from .types import Reply, RunResult, Step, ToolCall, ToolResult


@dataclass(frozen=True)
class RunStarted:
    """The run began. ``system_prompt`` is the rendered system message; ``tools`` the names of
    the tools the model may call; ``resumed_steps`` how many earlier steps a resumed run
    continues (0 for a new run); ``framed`` whether tool results go to the model framed as
    data (``AgentConfig.frame_observations``)."""

    task: str
    system_prompt: str
    tools: tuple[str, ...] = ()
    resumed_steps: int = 0
    framed: bool = True


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
    """The model's reply held no usable action; ``message`` goes back to the model, ``kind``
    names the defect (``OutputParseError.kind``)."""

    step: Step
    message: str
    kind: str = ""


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
    ``draft``: a policy asks again and may replace it, for the ``reasons`` given in words,
    see :class:`~react_agent.policies.Review`)."""

    step: Step
    text: str
    best_effort: bool = False
    draft: bool = False
    reasons: tuple[str, ...] = ()


@dataclass(frozen=True)
class OutputReady:
    """The final answer fits the run's output type: ``value`` is the typed value (also
    ``RunResult.output``); comes before the ``FinalAnswer`` of that step, and never for an
    answer that does not fit."""

    step: Step
    value: Any


@dataclass(frozen=True)
class OutputRejected:
    """The final answer does not fit the run's output type: ``problems``, one per field in
    words, go back to the model in ``message`` (or, past ``output_retries``, the run ends
    with status ``output_invalid``)."""

    step: Step
    problems: tuple[str, ...]
    message: str


@dataclass(frozen=True)
class PolicyNote:
    """A policy (:mod:`react_agent.policies`) did something at ``step``: ``policy`` is its name,
    ``label`` and ``text`` say what in words (printed as ``label: text``). ``label`` is a short
    fixed name that holds no value of the run; ``text`` may quote the run (a call's
    arguments). Also kept on the step as ``step.notes``."""

    step: Step
    policy: str
    label: str
    text: str


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
    | ParseFailed | ToolStarted | ToolFinished | ObservationSent | OutputReady | OutputRejected
    | FinalAnswer | PolicyNote | HistoryCompressed | RunFinished
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
