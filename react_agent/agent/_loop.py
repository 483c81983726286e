"""The ReAct loop without I/O: ask the model, read its reply, run the tools, send observations.

:func:`react` is a generator that yields events for the caller and two kinds of requests,
:class:`Query` (answered with a :class:`ModelReply`) and :class:`Invoke`
(answered with the tools' results); errors of the model or an interrupt are thrown into it. So one
loop serves the sync and the async API of :class:`~react_agent.Agent`. Where a run ends, a
:class:`_Stop` carrying its status and error is raised and caught once.

The loop shape (ask, parse, act; format errors fed back and bounded; control flow carried by an
exception) follows mini-swe-agent's ``DefaultAgent``; the JSON ``{thought, action}`` protocol
follows the seed tutorial "百行代码从零手搓Agent".
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import json
from collections.abc import Generator, Iterator
from dataclasses import dataclass
from typing import Any

from .. import prompts
from .._protocol import reply_schema
from ..config import AgentConfig
from ..errors import ModelError, OutputParseError
from ..events import (
    Event,
    FinalAnswer,
    LoopBroken,
    ModelCallFinished,
    ModelCallStarted,
    ObservationSent,
    ParseFailed,
    RepeatSetAside,
    ReplyParsed,
    RunFinished,
    RunStarted,
    ToolFinished,
    ToolStarted,
)
from ..parsing._reply import parse_error, parse_reply, strip_reasoning
from ..policies import _review as review
from ..policies._grounding import ungrounded, unstated
from ..tools._invoker import argument_for_bare_value, call_example
from ..tools._toolbox import Toolbox
from ..types import Message, ModelReply, Reply, RunResult, Status, Step, ToolCall, ToolResult
from ._model_io import Query


@dataclass
class Invoke:
    """The loop needs the results of ``calls``."""

    calls: list[ToolCall]


@dataclass(frozen=True)
class Setup:
    """What a run is given: the whole ``toolbox`` (for reading replies and hints), the tools
    ``shown`` in the ``system`` prompt, the reply ``schema`` (``None``: unconstrained) and the
    ``config``."""

    toolbox: Toolbox
    shown: Toolbox
    system: str
    schema: dict[str, Any] | None
    config: AgentConfig


class _Stop(Exception):
    """The run ends here with ``status`` and ``error``: raised where that is decided, caught once
    in :func:`react`."""

    def __init__(self, status: Status, error: str | None = None) -> None:
        super().__init__(status, error)
        self.status, self.error = status, error


Request = Event | Query | Invoke

CUT_BY_TOKEN_LIMIT = "Your reply was cut off by the token limit (finish_reason \"length\") " \
    "before it was complete: write a shorter reply."
"""Put before the problem of an unusable reply that the backend cut at its token limit."""


def react(setup: Setup, run: RunResult, budget: int) -> Generator[Request, Any, None]:
    """Run ``run`` (its task, messages and earlier steps) for up to ``budget`` more actions."""
    yield RunStarted(run.task, setup.system, tuple(setup.shown.names),
                     resumed_steps=len(run.steps))
    try:
        actions = failures = 0
        while actions < budget:
            step = Step(index=len(run.steps) + 1)
            may_review = setup.config.review_answer != "off" and bool(run.tool_calls)
            schema = setup.schema if not failures else _retry_schema(setup)
            if run.steps and run.steps[-1].repeat:  # set aside: ask for the final answer
                schema = FINAL_ANSWER_SCHEMA
            floor = setup.config.answer_floor if not run.tool_calls else None
            reply = yield from _ask(run, step, schema, not may_review, floor)
            try:
                parsed = _read(setup, run, step, reply)
            except OutputParseError as exc:
                failures += 1
                yield from _send_parse_error(setup, run, step, exc, failures)
                continue
            failures, actions = 0, actions + 1
            step.repeat = (earlier := _repeated(setup, run, parsed)) is not None
            parsed = parsed if earlier else _hold_back(setup, run, step, parsed)
            yield ReplyParsed(step, parsed)
            if parsed.final_answer is not None:
                run.final_answer = parsed.final_answer
                if may_review and (reasons := _review_reasons(setup, run)):
                    yield FinalAnswer(step, parsed.final_answer, draft=True,
                                      reasons=tuple(reasons))
                    step = yield from _review(setup, run, reasons)
                yield FinalAnswer(step, run.final_answer)
                raise _Stop("final_answer")
            if earlier is not None:
                yield from _set_aside(run, step, earlier)
                continue
            yield from _act(setup, run, step, parsed.tool_calls)
        used = f"{budget} step" if budget == 1 else f"all {budget} steps"
        run.error = f"The run used {used} without a final answer."
        if setup.config.best_effort_answer:
            yield from _ask_best_effort(setup, run)
    except _Stop as stop:
        run.status, run.error = stop.status, stop.error
    except ModelError as exc:
        run.status, run.error = "model_error", str(exc)
    except (KeyboardInterrupt, asyncio.CancelledError):
        run.status, run.final_answer = "interrupted", None
        run.error = "The run was interrupted (Ctrl-C)."
    yield RunFinished(run)


def _ask(
    run: RunResult, step: Step, schema: dict[str, Any] | None, answer_tokens: bool = True,
    answer_floor: float | None = None,
) -> Generator[Request, Any, ModelReply]:
    """One model call: request it, record the step and the assistant message."""
    reply = yield from _query(run.messages, step, schema, answer_tokens, answer_floor)
    run.steps.append(step)
    run.messages.append({"role": "assistant", "content": strip_reasoning(reply.text)})
    yield ModelCallFinished(step)
    return reply


def _query(
    messages: list[Message], step: Step, schema: dict[str, Any] | None, answer_tokens: bool = True,
    answer_floor: float | None = None,
) -> Generator[Request, Any, ModelReply]:
    """Announce a model call on ``messages`` and request it; the reply (errors thrown in)."""
    yield ModelCallStarted(step.index, len(messages), sum(len(m["content"]) for m in messages))
    reply: ModelReply = yield Query(messages, step, schema, answer_tokens, answer_floor)
    return reply


def _read(setup: Setup, run: RunResult, step: Step, reply: ModelReply) -> Reply:
    """The parsed reply, recorded on the step; the history keeps only the part of the reply the
    step acts on (``parsed.source``): prose around it and steps the model invented after it would
    contradict the real observation (the raw reply stays in ``step.raw_output``).

    Raises:
        OutputParseError: the reply holds no usable action (the model's mistake).
        _Stop: the parser failed (a bug of ours): status ``internal_error``.
    """
    name_value = functools.partial(argument_for_bare_value, setup.toolbox)
    try:
        parsed = parse_reply(reply.text, name_value=name_value)
    except OutputParseError as exc:
        if reply.finish_reason == "length":  # the token limit cut the reply: say so
            exc = parse_error(exc.kind, f"{CUT_BY_TOKEN_LIMIT} {exc.problem}", exc.position,
                              exc.tool)
        step.error = exc.problem
        raise exc from None
    except Exception as exc:
        step.error = f"react-agent failed to read this reply ({type(exc).__name__}: {exc})"
        raise _Stop("internal_error", (
            f"{step.error}. This is a bug in react-agent, not in the model: please report it "
            f"with the reply (steps[{len(run.steps) - 1}].raw_output).")) from exc
    step.reply = parsed
    if parsed.source and run.messages and run.messages[-1]["role"] == "assistant":
        run.messages[-1] = {"role": "assistant", "content": parsed.source}
    return parsed


def _retry_schema(setup: Setup) -> dict[str, Any]:
    """The reply schema of the reply after an unusable one, even with ``constrained="off"``:
    where the backend can enforce it, a model that broke the format (seen: a thought with no
    action, four times in a row, until ``parse_errors``) is held to it for that reply."""
    return setup.schema or reply_schema(setup.shown)


def _send_parse_error(
    setup: Setup, run: RunResult, step: Step, exc: OutputParseError, failures: int
) -> Iterator[Event]:
    """Tell the model what was wrong with its reply; too many in a row end the run."""
    feedback = str(exc)
    if failures > 1 and len(run.steps) > 1 and run.steps[-2].error == exc.problem:
        feedback = _parse_error_again(setup.toolbox, exc, failures)
    yield ParseFailed(step, feedback)
    if failures > setup.config.max_parse_retries:
        raise _Stop("parse_errors", f"The model's last {failures} replies held no usable "
                    f"action; the last problem: {exc.problem}")
    run.messages.append({"role": "user", "content": feedback})


def _parse_error_again(toolbox: Toolbox, exc: OutputParseError, failures: int) -> str:
    """The message for an unusable reply that got the same message last time: it shows a
    complete call of the tool the reply named (with its real argument names), or the forms
    of a reply with the tools there are."""
    tool = toolbox.get(exc.tool) if exc.tool else None
    if tool is not None:
        hint = f"A complete call of {tool.name}, with its real argument names: " \
            f"{call_example(tool)}"
    else:
        names = ", ".join(toolbox.names) or "none: give the final answer"
        hint = f"The tools you can call: {names}. A tool call looks like " \
            '{"thought": "...", "action": {"name": "<tool name>", "args": {"<argument>": ' \
            '<value>}}}; the final answer looks like {"thought": "...", "action": ' \
            '{"final_answer": "<the answer>"}}.'
    return prompts.render("parse_error_again", count=str(failures), problem=exc.problem,
                          hint=hint)


def _act(
    setup: Setup, run: RunResult, step: Step, calls: list[ToolCall]
) -> Generator[Request, Any, None]:
    """Run the step's calls (or answer a repeated call from before) and send observations. A
    call that failed before with exactly these arguments is not run again: the model is told to
    change them; a call holding an email address or phone number from nowhere is not run either
    (``ground_contacts``)."""
    step.tool_calls = list(calls)
    looping = repeated_results(run.steps, setup.config.max_repeats)
    if looping is not None and any(r.error == "repeated" for s in run.steps for r in s.results):
        if setup.config.review_answer != "off" and all(_succeeded(run, c) for c in calls):
            yield LoopBroken(step)  # it has what it asked for: ask for the answer instead
            review_step = yield from _review(setup, run, [LOOP_REASON])
            if run.final_answer is not None:
                yield FinalAnswer(review_step, run.final_answer)
                raise _Stop("final_answer")
        raise _Stop("loop_detected",
                    "The model kept repeating the same tool calls after being told so.")
    ready: list[ToolResult | None]  # per call, what answers it instead of running it (None: run)
    if looping:
        ready = [_repeat_warning(r) for r in looping]
    else:
        known, found = _grounds(run)
        ready = [_refusal(setup, run, call, known, found) for call in step.tool_calls]
    for call in step.tool_calls:
        yield ToolStarted(step, call)
    fresh = [call for call, r in zip(step.tool_calls, ready, strict=True) if r is None]
    ran = iter((yield Invoke(fresh)) if fresh else [])
    step.results = [r or next(ran) for r in ready]
    for result in step.results:
        yield ToolFinished(step, result)
    observations = observation_message(step.results, run.task)
    if step.held_calls:
        names = ", ".join(dict.fromkeys(c.name for c in step.held_calls))
        observations += "\n" + prompts.render("held", names=names)
    run.messages.append({"role": "user", "content": observations})
    yield ObservationSent(step, observations)


FINAL_ANSWER_SCHEMA = reply_schema(Toolbox())
"""The reply schema of the focused call: a final answer only. Backends that constrain decoding
(the embedded model's grammar, a server's ``response_format``) are held to it even when
``constrained`` is ``"off"``; the others are asked in words."""

LOOP_REASON = "repeated calls whose results it already had, after being told so"
"""The review reason of a focused final-answer call made instead of ``loop_detected``."""


def _succeeded(run: RunResult, call: ToolCall) -> ToolResult | None:
    """The latest successful result of exactly ``call`` in the run so far, or ``None``."""
    key = _signature(call)
    return next((r for r in reversed(run.tool_results) if r.ok and _signature(r.call) == key),
                None)


def _repeated(setup: Setup, run: RunResult, parsed: Reply) -> list[ToolResult] | None:
    """The results the run already has for each call of ``parsed`` if it is a repeat to set
    aside (``AgentConfig.answer_on_repeat``; once per run), else ``None``."""
    if not setup.config.answer_on_repeat or any(s.repeat for s in run.steps):
        return None
    earlier = [_succeeded(run, c) for c in parsed.tool_calls]
    return [r for r in earlier if r] if earlier and all(earlier) else None


def _set_aside(run: RunResult, step: Step, earlier: list[ToolResult]) -> Iterator[Event]:
    """Keep the repeat ``step`` with the results the run already had (``earlier``, one per
    call; here with error ``"set_aside"``) without running its calls, and leave it out of the
    history. Seen on the embedded 1.5B model: after a result it needs, it copies its previous
    reply, and after a repeat warning copies it again until ``loop_detected``; asked once more
    in the same context for a final answer (the next reply, under
    :data:`FINAL_ANSWER_SCHEMA`), it answers from the result."""
    step.tool_calls = [r.call for r in earlier]
    step.results = [dataclasses.replace(r, ok=False, error="set_aside", seconds=0.0)
                    for r in earlier]
    run.messages.pop()
    yield RepeatSetAside(step)


def _hold_back(setup: Setup, run: RunResult, step: Step, parsed: Reply) -> Reply:
    """``parsed`` without the calls that wait for results (``AgentConfig.hold_dependent_calls``):
    in a reply calling several different tools, those with argument values that neither the
    user's messages nor any result so far states (:func:`unstated`).
    They are kept on ``step.held_calls``; the reply as run replaces it in the history, so the
    model is not shown the made-up values to copy. Seen on the embedded 1.5B model: a lookup
    sent together with the conversion of a value it guessed, a record lookup together with an
    email to a description of the address it was to find."""
    calls = parsed.tool_calls
    if not setup.config.hold_dependent_calls or len({c.name for c in calls}) < 2:
        return parsed
    said = "\n".join([*_said(run, ("user",)), *(r.observation for r in run.tool_results if r.ok)])
    held = [c for c in calls if unstated(c, said, _parameters(setup.toolbox, c.name))]
    if not held or len(held) == len(calls):
        return parsed
    keep = [c for c in calls if c not in held]
    action: Any = [c.to_dict() for c in keep] if len(keep) > 1 else keep[0].to_dict()
    source = json.dumps({"thought": parsed.thought or "", "action": action}, ensure_ascii=False)
    run.messages[-1] = {"role": "assistant", "content": source}
    step.held_calls, step.reply = held, dataclasses.replace(parsed, tool_calls=keep,
                                                            source=source)
    return step.reply


def _parameters(toolbox: Toolbox, name: str) -> dict[str, Any] | None:
    tool = toolbox.get(name)
    return tool.parameters if tool else None


def _said(run: RunResult, roles: tuple[str, ...]) -> list[str]:
    """The messages of ``roles`` without the observation messages: those echo the calls,
    "[2] <tool> {<arguments>}", made-up values included (a note may follow the echo)."""
    echoed = tuple(observation_message(s.results, run.task) for s in run.steps if s.results)
    return [m["content"] for m in run.messages
            if m["role"] in roles and not m["content"].startswith(echoed)]


def _grounds(run: RunResult) -> tuple[str, str]:
    """What grounds an address or number (the system prompt, the user's messages and the tool
    results; neither a refusal quoting a made-up value nor the calls an observation message
    echoes, "[2] <tool> {<arguments>}", does), and where the refusal looks for the real ones (the
    task and the successful results)."""
    said = _said(run, ("system", "user"))
    known = "\n".join([*said, *(r.observation for r in run.tool_results
                                 if r.error != "ungrounded")])
    found = "\n".join([run.task, *(r.observation for r in run.tool_results if r.ok)])
    return known, found


def _refusal(
    setup: Setup, run: RunResult, call: ToolCall, known: str, found: str
) -> ToolResult | None:
    """Why ``call`` is not run (``None``: run it): it failed before with exactly these
    arguments, or it holds a made-up address or number (checked again each time: the model may
    have looked it up since; ``known`` and ``found`` from :func:`_grounds`)."""
    failed = failed_before(run.steps[:-1], call)
    if failed is not None and failed.error != "ungrounded":
        return _repeat_warning(failed)
    return ungrounded(call, known, found) if setup.config.ground_contacts else None


def _review_reasons(setup: Setup, run: RunResult) -> list[str]:
    """Why the draft final answer gets a focused review call (empty: it stands)."""
    if setup.config.review_answer == "always":
        return ["is reviewed every time (review_answer='always')"]
    return review.gaps(run.task, run.final_answer or "", run.tool_results)


def _worse(run: RunResult, answer: str, draft: str | None) -> bool:
    """Whether the focused ``answer`` has a fault by :func:`review.gaps` that the ``draft`` it
    would replace does not have: trading one fault for another is no repair, and the draft
    came with the model's own reasoning (seen: a correct draft in the wrong script rewritten in
    the task's script, without its values and with the wrong side of a comparison). With no
    draft (a broken loop) it is never worse."""
    if draft is None:
        return False
    faults = functools.partial(review.gaps, run.task, results=run.tool_results)
    return bool(set(faults(answer)) - set(faults(draft)))


def _review(setup: Setup, run: RunResult, reasons: list[str]) -> Generator[Request, Any, Step]:
    """Ask for the final answer once more in a focused call: the system prompt and one message
    with the tools' results and the task (``prompts/review.md``), without the history or the
    draft (a 1.5B model asked to check its own draft copies it), under
    :data:`FINAL_ANSWER_SCHEMA` where the backend constrains decoding. A usable final answer
    replaces the draft (in the result and as the history's last reply); anything else (a tool
    call, an unusable reply, a model error, an answer with a fault the draft lacks) keeps
    the draft. ``reasons`` (why the draft was reviewed) are kept on the step. Returns the review
    step."""
    focused: list[Message] = [*run.messages[:1], {"role": "user", "content": prompts.render(
        "review", task=run.task, facts=review.facts(run.tool_results))}]
    step, draft = Step(index=len(run.steps) + 1, review=True), run.messages[-1]
    step.review_reasons = reasons
    try:
        reply = yield from _query(focused, step, FINAL_ANSWER_SCHEMA)
    except ModelError as exc:
        step.error = f"the review call failed ({exc}); the draft answer stands"
        return step
    run.steps.append(step)
    yield ModelCallFinished(step)
    try:
        parsed = _read(setup, run, step, reply)
    except OutputParseError as exc:
        yield ParseFailed(step, str(exc))
        return step
    yield ReplyParsed(step, parsed)
    if parsed.final_answer and parsed.final_answer.strip() \
            and not _worse(run, parsed.final_answer, run.final_answer):
        run.final_answer = parsed.final_answer
    else:
        run.messages[-1] = draft
    step.tool_calls = []  # a tool asked for here is not run: the draft stands
    return step


def _ask_best_effort(setup: Setup, run: RunResult) -> Generator[Request, Any, None]:
    """With the steps used up, ask once more for a final answer only (prompts/final_answer.md).
    The status stays ``max_steps``; a usable answer is kept with ``best_effort=True``."""
    run.messages.append({"role": "user", "content": prompts.render("final_answer", task=run.task)})
    step = Step(index=len(run.steps) + 1, best_effort=True)
    try:
        reply = yield from _ask(run, step, setup.schema)
    except ModelError as exc:
        run.error = f"{run.error} Asking for a best-effort answer failed: {exc}"
        return
    try:
        parsed = _read(setup, run, step, reply)
    except OutputParseError as exc:
        yield ParseFailed(step, str(exc))
        return
    yield ReplyParsed(step, parsed)
    if parsed.final_answer is not None:
        run.final_answer, run.best_effort = parsed.final_answer, True
        run.error = f"{run.error} The final answer is a best effort from what was observed."
        yield FinalAnswer(step, parsed.final_answer, best_effort=True)
    else:
        run.error = f"{run.error} Asked for a final answer from what it had observed, " \
            "the model asked for a tool instead (not run)."
    step.tool_calls = []  # no tool runs after the budget


def resumable(result: RunResult, system_prompt: str) -> tuple[list[Message], list[Step]]:
    """The messages and steps to continue ``result`` from: the best-effort question and answer
    are set aside, and a step whose tools were cut short (Ctrl-C) is dropped to be asked again."""
    messages, steps = [dict(m) for m in result.messages], list(result.steps)
    if steps and steps[-1].best_effort:
        steps.pop()
        ask = prompts.render("final_answer", task=result.task)
        cut = max((i for i, m in enumerate(messages) if m["content"] == ask), default=len(messages))
        del messages[cut:]
    if messages and messages[-1]["role"] == "assistant":
        messages.pop()
        if steps:
            steps.pop()
    if messages and messages[0]["role"] == "system":
        messages[0] = {"role": "system", "content": system_prompt}
    return messages, steps


def repeated_results(steps: list[Step], max_repeats: int) -> list[ToolResult] | None:
    """The earlier results of the last step's calls if the steps so far end in a loop: the same
    calls ``max_repeats`` times in a row, or an A-B-A-B cycle. ``None`` otherwise."""
    calls = [_step_signature(s) for s in steps if s.tool_calls]
    if len(calls) < 2:
        return None
    last = calls[-1]
    same_in_a_row = len(calls) >= max_repeats and all(c == last for c in calls[-max_repeats:])
    cycle = len(calls) >= 4 and calls[-1] == calls[-3] and calls[-2] == calls[-4] != last
    if not (same_in_a_row or cycle):
        return None
    previous = [s for s in steps if s.tool_calls and s.results and not s.repeat
                and _step_signature(s) == last]
    return previous[-1].results if previous else None


def failed_before(steps: list[Step], call: ToolCall) -> ToolResult | None:
    """The result of the latest earlier run of exactly this call (same tool, same arguments) in
    ``steps`` if that run failed (a small model retries a failed call unchanged); a call that
    timed out may run again. ``None`` otherwise."""
    key = _signature(call)
    for step in reversed(steps):
        for result in step.results:
            if _signature(result.call) == key and result.error not in ("repeated", "set_aside"):
                return result if result.error not in (None, "timeout") else None
    return None


def _step_signature(step: Step) -> tuple[tuple[str, str], ...]:
    return tuple(_signature(c) for c in step.tool_calls)


def _signature(call: ToolCall) -> tuple[str, str]:
    return call.name, json.dumps(call.args, sort_keys=True)


def _repeat_warning(earlier: ToolResult) -> ToolResult:
    template = "repeated" if earlier.ok else "repeated_error"
    text = prompts.render(template, call=earlier.call.name, observation=earlier.observation)
    return ToolResult(earlier.call, text, ok=False, error="repeated", args=earlier.args)


def observation_message(results: list[ToolResult], task: str) -> str:
    """The user message carrying the observations of one step (numbered when several), with a
    reminder of the task: small models lose track of a task that is far up the context."""
    if len(results) == 1:
        text = results[0].observation
    else:
        text = "\n".join(
            f"[{i}] {r.call.name} {json.dumps(r.call.args, ensure_ascii=False)}: {r.observation}"
            for i, r in enumerate(results, 1)
        )
    return prompts.render("observation", observation=text, task=task)
