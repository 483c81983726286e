"""One model turn for ``react-agent serve``: the library's engine, stopping at the first usable
action. No tool is ever run here.

:func:`take_turn` runs the loop core (:func:`react_agent.engine.react`) on a
:class:`~react_agent.engine.Run` made from the request (the client's tools, its conversation in
react-agent's protocol, and the calls and results of its history as earlier steps), with the
same model I/O and the policies that apply to a single turn. When the loop asks to run tool
calls, the turn ends: they are the client's to run. Until then the loop does what it does in
the library, unseen by the client: a reply that cannot be used (nothing parsable, a break of the
request's ``tool_choice``, an unknown tool, arguments that do not fit the tool's schema after
cleaning) is sent back to the model with what was wrong, up to ``max_retries`` times; a call a
policy refuses (an email address from nowhere) gets its refusal as an observation; a reply that
only repeats calls whose results the history holds is set aside and the final answer asked for.
With an output type (the request's ``response_format`` json_schema), the final answer is read
into a value of its schema (one that does not fit is sent back, up to ``max_retries`` times) and
handed out as that value's JSON; it is not streamed piece by piece, since only a value that
validates is announced.
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncGenerator, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from .._json import text_json
from ..agent import advance, aquery
from ..engine import Invoke, Query, Run, Setup, react
from ..errors import OutputParseError
from ..events import AnswerToken, ParseFailed, RunFinished
from ..models.base import ChatModel, estimate_tokens
from ..parsing import parse_error
from ..policies import Policy, default_policies
from ..tools import prepare
from ..tools import schema as json_schema
from ..types import ModelReply, Reply, RunResult, Step, ToolCall, ToolResult
from ._openai import TurnPlan


@dataclass
class Call:
    """A tool call for the client: ``name`` and the cleaned ``args`` (a JSON object);
    ``cleaning`` lists what the cleaning changed, in words."""

    name: str
    args: dict[str, Any]
    cleaning: list[str] = field(default_factory=list)


@dataclass
class TurnResult:
    """The outcome of one turn.

    Attributes:
        calls: the tool calls, in order (empty for a final answer or an unusable reply).
        answer: the final answer, or ``None``.
        thought: the model's thought, or ``None``.
        text: the model's last raw reply.
        error: why the last reply could not be used, when no usable one came within the
            budget (then ``calls`` is empty and ``answer`` is ``None``).
        attempts: model calls made (1 + internal retries and policy calls).
        prompt_tokens, completion_tokens: summed over the attempts (reported by the backend, or
            estimated by :func:`~react_agent.models.base.estimate_tokens` when it reports none).
        streamed: answer characters already handed out while the model wrote them.
        stage, repairs: the parser's stage and repairs for the usable reply.
    """

    calls: list[Call]
    answer: str | None
    thought: str | None
    text: str
    error: OutputParseError | None
    attempts: int
    prompt_tokens: int
    completion_tokens: int
    streamed: str = ""
    stage: str | None = None
    repairs: tuple[str, ...] = ()


@dataclass(frozen=True)
class ToolChoiceCheck(Policy):
    """The request's ``tool_choice`` and ``parallel_tool_calls``, and the arguments cleaned and
    checked against the client's schemas: a reply that breaks them is unusable (the model is
    told why and asked again). Records the cleaning of each call
    (``step.records["tool_choice"]``, by call)."""

    name: ClassVar[str] = "tool_choice"
    plan: TurnPlan | None = None

    def before_query(self, run: Run, query: Query) -> None:
        if self.plan is not None and self.plan.choice.mode in ("required", "function"):
            query.answer_tokens = False  # a final answer would not be used

    def after_reply(self, run: Run, step: Step, reply: Reply) -> Reply | None:
        assert self.plan is not None
        calls = check_reply(reply, self.plan)
        if reply.final_answer is not None:
            return reply
        step.records[self.name] = [dataclasses.asdict(c) for c in calls]
        return dataclasses.replace(reply, tool_calls=[ToolCall(c.name, c.args) for c in calls])


def check_reply(reply: Reply, plan: TurnPlan) -> list[Call]:
    """The reply's calls, cleaned and checked against the plan (only the first one when
    parallel calls are off); ``[]`` for a final answer.

    Raises:
        OutputParseError: the reply breaks ``tool_choice``, or a call names an unknown tool or
            has invalid arguments (the message is the one the invoker would give the model),
            or arguments that could not be checked within
            :data:`~react_agent.tools.schema.VALIDATION_SECONDS` (for all the calls together).
    """
    choice = plan.choice
    if reply.final_answer is not None:
        if choice.mode == "required":
            raise parse_error("tool_choice", "It gave a final answer, but this reply must call "
                              f"one of the tools ({', '.join(plan.toolbox.names)}).")
        if choice.mode == "function":
            raise parse_error("tool_choice", f"It gave a final answer, but this reply must call "
                              f"{choice.name}.")
        return []
    if choice.mode == "none":
        raise parse_error("tool_choice", "It called a tool, but no tool may be called now: give "
                          "the final answer.")
    calls = reply.tool_calls if plan.parallel else reply.tool_calls[:1]
    if choice.mode == "function" and any(c.name != choice.name for c in calls):
        other = next(c.name for c in calls if c.name != choice.name)
        raise parse_error("tool_choice", f"It called {other}, but this reply must call "
                          f"{choice.name}.")
    ready: list[Call] = []
    failed: list[ToolResult] = []
    with json_schema.budget():  # one for all the calls of the reply, however many
        prepared_calls = [prepare(plan.toolbox, call) for call in calls]
    for call, prepared in zip(calls, prepared_calls, strict=True):
        if isinstance(prepared, ToolResult):
            failed.append(prepared)
        else:
            ready.append(Call(call.name, prepared.args, prepared.cleaning))
    if failed:
        problems = " ".join(r.observation.removeprefix("Error: ") for r in failed)
        raise parse_error(str(failed[0].error), problems)
    return ready


def turn_policies(
    plan: TurnPlan, policies: Sequence[Policy] | None = None, model: ChatModel | None = None,
) -> tuple[Policy, ...]:
    """The policies of a turn: ``policies``, by default the library's that run in ``serve``
    (``Policy.runs_in_serve``: not those that replace a final answer the client could then not
    stream, or need a step budget a turn does not have); with the request's
    :class:`ToolChoiceCheck` placed before the first policy that may set calls aside
    (``Policy.sets_calls_aside``: it compares the cleaned calls with those of the history).
    Calls are not set aside when the request requires a call, and a final answer is not
    replaced with calls (``Policy.gives_calls``) when it lets no tool be called."""
    if policies is None:
        policies = [p for p in default_policies(model) if p.runs_in_serve]
    chosen = [p for p in policies if p.name != ToolChoiceCheck.name]
    if plan.choice.mode in ("required", "function"):
        chosen = [p for p in chosen if not p.sets_calls_aside]
    if plan.choice.mode == "none":
        chosen = [p for p in chosen if not p.gives_calls]
    at = next((n for n, p in enumerate(chosen) if p.sets_calls_aside), len(chosen))
    return (*chosen[:at], ToolChoiceCheck(plan), *chosen[at:])


async def take_turn(
    model: ChatModel, plan: TurnPlan, *, max_retries: int = 3, stream: bool = False,
    policies: Sequence[Policy] | None = None,
) -> AsyncGenerator[str | TurnResult, None]:
    """Run one turn: yields the final answer's text pieces as the model writes them (only with
    ``stream``, and only where a final answer is allowed), then one :class:`TurnResult`.

    A reply whose answer was already partly handed out is not retried (the client has seen
    it): if it then turns out unusable, the result carries the error. The engine's own steps
    (parsing, policies, checking the arguments against the client's schemas, each check
    bounded by :data:`~react_agent.tools.schema.VALIDATION_SECONDS`) run in a worker thread,
    so that the server answers other requests meanwhile.

    Raises:
        ModelError: the backend failed (its own retries are done); any other exception of the
            backend is wrapped in one.
    """
    earlier = len(plan.steps)
    result = RunResult(plan.task, "max_steps", None, list(plan.steps),
                       messages=list(plan.messages), tools=plan.toolbox.names)
    setup = Setup(plan.toolbox, plan.toolbox, plan.messages[0]["content"],
                  turn_policies(plan, policies, model), max_parse_retries=max_retries,
                  output=plan.output, output_retries=max_retries, framed=plan.framed)
    run = Run(setup, result)
    loop = react(run, budget=max_retries + 1)
    streamed, usage, error = "", [0, 0], None
    value: Any = None
    try:
        while True:
            ended, item = await advance(loop, value)  # in a worker thread: the event loop
            value = None  # answers other clients while a reply is parsed and checked
            if ended:  # pragma: no cover - the loop always ends with RunFinished
                break
            if isinstance(item, Query):
                async for piece in aquery(model, item, stream=stream):
                    if isinstance(piece, ModelReply):
                        value = piece
                        usage[0] += piece.prompt_tokens if piece.prompt_tokens is not None \
                            else sum(estimate_tokens(m["content"]) for m in item.messages)
                        usage[1] += piece.completion_tokens \
                            if piece.completion_tokens is not None \
                            else estimate_tokens(piece.text)
                    elif isinstance(piece, AnswerToken) and plan.output is None:
                        streamed += piece.text
                        yield piece.text
            elif isinstance(item, ParseFailed):
                error = parse_error(item.kind or "unusable", item.step.error or "")
                if streamed:  # the client has seen part of this reply: no second try
                    break
            elif isinstance(item, Invoke):
                yield _result(run, earlier, usage, streamed, None, _calls(run, item.calls))
                return
            elif isinstance(item, RunFinished):
                break
    finally:
        loop.close()
    answer = result.final_answer if result.status == "final_answer" else None
    if answer is not None and plan.output is not None:
        answer = text_json(result.to_dict()["output"])
    elif result.status == "output_invalid":
        error = parse_error("output_invalid", result.error or "")
    if answer is None and error is None:
        error = parse_error("no_action", result.error or "The model gave no usable action.")
    yield _result(run, earlier, usage, streamed, None if answer is not None else error, [],
                  answer)


def _calls(run: Run, calls: list[ToolCall]) -> list[Call]:
    """The calls to hand out, with the cleaning :class:`ToolChoiceCheck` recorded for each."""
    recorded: list[dict[str, Any]] = next(
        (s.records[ToolChoiceCheck.name] for s in reversed(run.steps)
         if ToolChoiceCheck.name in s.records), [])
    out = []
    for call in calls:
        cleaning: list[str] = next((r["cleaning"] for r in recorded
                         if r["name"] == call.name and r["args"] == call.args), [])
        out.append(Call(call.name, call.args, list(cleaning)))
    return out


def _result(
    run: Run, earlier: int, usage: list[int], streamed: str, error: OutputParseError | None,
    calls: list[Call], answer: str | None = None,
) -> TurnResult:
    steps = run.steps[earlier:]
    # the last reply the conversation keeps, not a policy's question about it
    last = next((s for s in reversed(steps) if s.in_history), steps[-1] if steps else Step(0))
    used = next((s for s in reversed(steps) if s.reply is not None and s.in_history), None) \
        or next((s for s in reversed(steps) if s.reply is not None), None)
    return TurnResult(
        calls, answer, used.thought if used else None, last.raw_output, error, len(steps),
        usage[0], usage[1], streamed, used.stage if used else None,
        tuple(used.repairs) if used else (),
    )


