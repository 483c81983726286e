"""The loop core, without I/O: ask the model, read its reply, act, send the observations.

:func:`react` is a generator that yields events for the caller and two kinds of requests,
:class:`~react_agent.engine.Query` (answered with a :class:`~react_agent.ModelReply`) and
:class:`~react_agent.engine.Invoke` (answered with the tools' results); errors of the model
or an interrupt are thrown into it. So one loop serves the sync and the async API of
:class:`~react_agent.Agent` and the turns of ``react-agent serve``. It knows the protocol, its
budgets (``max_steps``, unusable replies, repeats) and the statuses a run ends with; every
heuristic for small models is a policy (:mod:`react_agent.policies`) called at the hook points
of :class:`~react_agent.engine.Policy`; it reads what a policy did only through generic fields
(a result's ``origin`` and ``skipped``), never a policy's name or error code.

The loop shape (ask, parse, act; format errors fed back and bounded; control flow carried by an
exception) follows mini-swe-agent's ``DefaultAgent``; the JSON ``{thought, action}`` protocol
follows the seed tutorial "百行代码从零手搓Agent".
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Generator, Iterator
from typing import Any

from .. import prompts
from ..errors import ModelError, OutputParseError
from ..events import (
    Event,
    FinalAnswer,
    ObservationSent,
    OutputReady,
    OutputRejected,
    ParseFailed,
    ReplyParsed,
    RunFinished,
    RunStarted,
    ToolFinished,
    ToolStarted,
)
from ..tools import Toolbox, call_example
from ..types import Message, Reply, RunResult, Step, ToolCall, ToolResult
from ._protocol import Invoke, Query, observation_message, signature
from ._run import Request, Run, StopRun

MAX_PROBLEMS_SHOWN = 20
"""A final answer sent back for not fitting its type lists at most this many problems..."""
MAX_PROBLEM_CHARS = 300
"""... each cut to this many characters, ..."""
MAX_SCHEMA_SHOWN = 4_000
"""... and repeats the output type's schema when its JSON is at most this long (else it points
to the system prompt's): a rejection stays small whatever the schema and the answer."""

LOOP = "loop"
"""The ``origin`` of a result the loop itself gives instead of running the call (a repeat
warning, a refusal past ``max_tool_calls``)."""


def react(run: Run, budget: int) -> Generator[Request, Any, None]:
    """Run ``run`` (its task, messages and earlier steps) for up to ``budget`` more actions:
    steps whose reply was usable (tool calls or the final answer)."""
    result = run.result
    yield RunStarted(result.task, run.setup.system, tuple(run.setup.shown.names),
                     resumed_steps=len(result.steps), framed=run.setup.framed)
    try:
        actions = 0
        while actions < budget:
            acted = yield from _step(run, Step(index=len(run.steps) + 1))
            if acted is None:
                continue
            step, reply = acted  # (a policy's question may have given the action)
            if reply.final_answer is not None:
                yield from _finish(run, step, reply.final_answer)
                continue  # it did not fit the output type: the model was told why
            actions += 1
            yield from _act(run, step, reply.tool_calls)
        used = f"{budget} step" if budget == 1 else f"all {budget} steps"
        result.error = f"The run used {used} without a final answer."
        for policy in run.setup.policies:
            yield from policy.on_out_of_steps(run)
            yield from run.flush()
    except StopRun as stop:
        result.status, result.error = stop.status, stop.error
    except ModelError as exc:
        result.status, result.error = "model_error", str(exc)
    except (KeyboardInterrupt, asyncio.CancelledError):
        result.status, result.final_answer = "interrupted", None
        result.error = "The run was interrupted (Ctrl-C)."
    yield from run.flush()
    yield from _late_output(run)
    yield RunFinished(result)


def _step(run: Run, step: Step) -> Generator[Request, Any, tuple[Step, Reply] | None]:
    """Ask for ``step`` and read its reply: the reply to act on and the step it comes from
    (``step``, or the step of a policy's question that replaced it), or ``None`` when it was
    unusable (the model is told why) or a policy handled it."""
    # a typed answer is not streamed as text: only a value that fits is announced (OutputReady)
    reply = yield from run.request(Query(run.messages, step,
                                         answer_tokens=run.setup.output is None))
    yield run.answered(step, reply)
    try:
        parsed = run.read(step, reply)
        acted: Reply | None = parsed
        for policy in run.setup.policies:  # a policy may find the reply unusable too
            acted = policy.after_reply(run, step, parsed)
            if acted is None:
                break
            parsed = acted
    except OutputParseError as exc:
        step.reply, step.error = None, exc.problem
        run.failures += 1
        yield from _feed_back(run, step, exc)
        return None
    run.failures, step.reply = 0, parsed
    yield ReplyParsed(step, parsed)
    yield from run.flush()
    if acted is None:  # a policy handled the reply: nothing runs
        run.facts.calling(step)
        run.facts.stepped(step)
        return None
    acting = step
    for policy in run.setup.policies:
        given = yield from policy.on_action(run, acting, acted)
        yield from run.flush()
        if given is not acted:  # another reply, from the step the policy asked last
            acting, acted = run.steps[-1], given
    acting.reply = acted
    return acting, acted


def _feed_back(run: Run, step: Step, exc: OutputParseError) -> Iterator[Event]:
    """Tell the model what was wrong with its reply; too many in a row end the run."""
    feedback = str(exc)
    steps = run.steps
    if run.failures > 1 and len(steps) > 1 and steps[-2].error == exc.problem:
        feedback = _parse_error_again(run.setup.toolbox, exc, run.failures)
    yield ParseFailed(step, feedback, exc.kind)
    yield from run.flush()
    if run.failures > run.setup.max_parse_retries:
        raise StopRun("parse_errors", f"The model's last {run.failures} replies held no usable "
                      f"action; the last problem: {exc.problem}")
    run.send(feedback, feedback=True)


def _parse_error_again(toolbox: Toolbox, exc: OutputParseError, failures: int) -> str:
    """The message for an unusable reply that got the same message last time: it shows a
    complete call of the tool the reply named (with its real argument names), or the forms
    of a reply with the tools there are."""
    tool = toolbox.get(exc.tool) if exc.tool else None
    if tool is not None:
        hint = prompts.render("agent/parse_error_hint_tool", tool=tool.name,
                              call=call_example(tool))
    else:
        hint = prompts.render("agent/parse_error_hint", names=", ".join(toolbox.names)
                              or "none: give the final answer")
    return prompts.render("agent/parse_error_again", count=str(failures), problem=exc.problem,
                          hint=hint)


def _finish(run: Run, step: Step, answer: str) -> Generator[Request, Any, None]:
    """The model gave its final answer at ``step``: the policies may check it; with an output
    type, it is read into the typed value; the run ends. Returns (the run goes on) when the
    answer does not fit the output type and the model was told why."""
    run.result.final_answer = answer
    for policy in run.setup.policies:
        step = yield from policy.on_final_answer(run, step)
        yield from run.flush()
    text = run.result.final_answer or ""
    output = run.setup.output
    if output is not None:
        value, problems = output.read(text)
        if problems:
            yield from _reject_output(run, step, text, problems)
            return
        run.result.output, run.result.has_output = value, True
        yield OutputReady(step, value)
    yield FinalAnswer(step, text)
    raise StopRun("final_answer")


def _reject_output(run: Run, step: Step, text: str, problems: list[str]) -> Iterator[Event]:
    """The final answer ``text`` does not fit the output type: the model is told why, field by
    field (``prompts/agent/output_invalid.md``); past ``output_retries`` the run ends with
    ``output_invalid``, the answer's text kept."""
    output = run.setup.output
    assert output is not None
    run.output_failures += 1
    step.records["output"] = {"problems": problems}
    shown = [p if len(p) <= MAX_PROBLEM_CHARS else f"{p[:MAX_PROBLEM_CHARS]}..."
             for p in problems[:MAX_PROBLEMS_SHOWN]]
    if len(problems) > MAX_PROBLEMS_SHOWN:
        shown.append(f"... and {len(problems) - MAX_PROBLEMS_SHOWN} more problems")
    schema = output.shape()
    if len(schema) > MAX_SCHEMA_SHOWN:
        schema = "(the JSON Schema of the system prompt)"
    message = prompts.render("agent/output_invalid", problems="\n".join(f"- {p}" for p in shown),
                             schema=schema)
    yield OutputRejected(step, tuple(problems), message)
    if run.output_failures > run.setup.output_retries:
        raise StopRun("output_invalid", f"The final answer did not fit the output type "
                      f"{run.output_failures} times; the last problem: {problems[0]}")
    run.result.final_answer = None
    run.send(message, feedback=True)


def _late_output(run: Run) -> Iterator[Event]:
    """A final answer a policy gave without the model's step (a best-effort answer, an
    answer instead of a loop) is read into the typed value too, without a retry; one that
    does not fit ends a run that had ended with it as ``output_invalid``."""
    result, output = run.result, run.setup.output
    if output is None or result.has_output or result.final_answer is None \
            or result.status == "output_invalid":
        return
    value, problems = output.read(result.final_answer)
    if not problems and run.steps:
        result.output, result.has_output = value, True
        yield OutputReady(run.steps[-1], value)
    elif problems and result.status == "final_answer":
        result.status = "output_invalid"
        result.error = f"The final answer did not fit the output type: {problems[0]}"


def _act(run: Run, step: Step, calls: list[ToolCall]) -> Generator[Request, Any, None]:
    """Run the step's calls and send their observations (saying so when the reply made more
    than ``max_calls_per_step``); a call past the run's ``max_tool_calls`` is refused. A loop
    (the same calls again after a warning) ends the run unless a policy answers instead; a
    call that failed before with exactly these arguments is not run again (the model is told
    to change them); a policy may answer any call without running it."""
    made = run.facts.calls_made  # by the earlier steps
    step.tool_calls = list(calls)
    run.facts.calling(step)
    looping = _repeated_results(run)
    if looping is not None and run.facts.warned:
        yield from _break_loop(run, step)
    ready: list[ToolResult | None]  # per call, what answers it instead of running it (None: run)
    if looping:
        ready = [_repeat_warning(r) for r in looping]
    else:
        left = run.setup.max_tool_calls - made
        ready = [_answer_before_running(run, step, call) if n < left
                 else _over_budget(call, run.setup.max_tool_calls)
                 for n, call in enumerate(step.tool_calls)]
    yield from run.flush()
    for call in step.tool_calls:
        yield ToolStarted(step, call)
    fresh = [call for call, r in zip(step.tool_calls, ready, strict=True) if r is None]
    approve = tuple(n for n, call in enumerate(fresh) if any(call is c for c in run.to_approve))
    run.to_approve.clear()
    ran = iter((yield Invoke(fresh, approve)) if fresh else [])
    step.results = [r or next(ran) for r in ready]
    run.facts.stepped(step)
    for result in step.results:
        yield ToolFinished(step, result)
    text = observation_message(step.results, run.task, run.setup.framed)
    budget = step.records.get("budget")
    if budget:
        text += "\n" + prompts.render("agent/calls_cut", count=str(budget["calls_asked"]),
                                      limit=str(budget["calls_kept"]))
    for policy in run.setup.policies:
        text = policy.after_observation(run, step, text)
    run.send(text, observation=True)
    yield from run.flush()
    yield ObservationSent(step, text)


def _break_loop(run: Run, step: Step) -> Generator[Request, Any, None]:
    """The model repeats itself after being warned: a policy may answer instead; else the run
    ends with ``loop_detected``."""
    for policy in run.setup.policies:
        answered = yield from policy.on_loop(run, step)
        yield from run.flush()
        if answered is not None and run.result.final_answer is not None:
            yield FinalAnswer(answered, run.result.final_answer)
            raise StopRun("final_answer")
    raise StopRun("loop_detected",
                  "The model kept repeating the same tool calls after being told so.")


def _answer_before_running(run: Run, step: Step, call: ToolCall) -> ToolResult | None:
    """What answers ``call`` without running it (``None``: run it): a warning when it failed
    before with exactly these arguments, or a policy's result (its ``origin`` the policy's
    name unless the policy set one)."""
    failed = _failed_before(run, call)
    if failed is not None:
        return _repeat_warning(failed)
    for policy in run.setup.policies:
        answer = policy.before_call(run, step, call)
        if answer is not None:
            return answer if answer.origin else dataclasses.replace(answer, origin=policy.name)
    return None


def _failed_before(run: Run, call: ToolCall) -> ToolResult | None:
    """The latest earlier result of exactly this call if it failed where it was sent to run (a
    small model retries a failed call unchanged); a call that timed out may run again, and a
    call a policy refused is put to the policies again (the refusal may no longer hold)."""
    latest = run.facts.latest.get(signature(call))
    if latest is None or latest.error in (None, "timeout") or latest.origin not in (None, LOOP):
        return None
    return latest


def _repeated_results(run: Run) -> list[ToolResult] | None:
    """The earlier results of the last step's calls if the steps so far end in a loop: the same
    calls ``max_repeats`` times in a row, or an A-B-A-B cycle. ``None`` otherwise."""
    calls, repeats = run.facts.step_calls, run.setup.max_repeats
    if len(calls) < 2:
        return None
    last = calls[-1]
    same_in_a_row = len(calls) >= repeats and all(c == last for c in calls[-repeats:])
    cycle = len(calls) >= 4 and calls[-1] == calls[-3] and calls[-2] == calls[-4] != last
    if not (same_in_a_row or cycle):
        return None
    return run.facts.step_results.get(last)


def _over_budget(call: ToolCall, limit: int) -> ToolResult:
    """The refusal of a call made after the run's ``max_tool_calls``."""
    text = prompts.render("agent/call_budget", call=call.name, limit=str(limit))
    return ToolResult(call, text, ok=False, error="call_budget", args=call.args, origin=LOOP)


def _repeat_warning(earlier: ToolResult) -> ToolResult:
    template = "agent/repeated" if earlier.ok else "agent/repeated_error"
    text = prompts.render(template, call=earlier.call.name, observation=earlier.observation)
    return ToolResult(earlier.call, text, ok=False, error="repeated", args=earlier.args,
                      origin=LOOP)


def resumable(run: RunResult, system_prompt: str, policies: tuple[Any, ...] = ()
              ) -> tuple[list[Message], list[Step]]:
    """The messages and steps to continue ``run`` from: each policy takes out what it added at
    the end (a best-effort question and answer), and the step of a last reply whose tools were
    cut short (Ctrl-C) or whose answer ended the run is dropped to be asked again, with any
    policy's question about it after it."""
    messages, steps = [dict(m) for m in run.messages], list(run.steps)
    for policy in policies:
        policy.on_resume(run.task, messages, steps)
    if messages and messages[-1]["role"] == "assistant":
        messages.pop()
        kept = [n for n, step in enumerate(steps) if step.in_history]
        if kept:
            del steps[kept[-1]:]
    if messages and messages[0]["role"] == "system":
        messages[0] = {"role": "system", "content": system_prompt}
    return messages, steps
