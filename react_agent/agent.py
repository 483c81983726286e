"""The ReAct loop: ask the model, parse its reply, run the tools, feed back observations.

The loop shape (run -> step -> query -> execute, format errors fed back and bounded) follows
mini-swe-agent's ``DefaultAgent``; the JSON ``{thought, action}`` protocol follows the seed
tutorial "百行代码从零手搓Agent".
"""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import functools
import json
import time
from collections.abc import AsyncIterator, Callable, Generator, Iterator, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from . import prompts
from .config import AgentConfig
from .config import routed_tools as select_tools
from .constrain import reply_schema
from .conversation import Conversation
from .errors import ConfigError, ModelError, OutputParseError
from .events import (
    AnswerToken,
    Event,
    FinalAnswer,
    ModelCallFinished,
    ModelCallStarted,
    ModelToken,
    ObservationSent,
    ParseFailed,
    ReplyParsed,
    RunFinished,
    RunStarted,
    ToolFinished,
    ToolStarted,
    last_result,
)
from .invoker import (
    Approver,
    ainvoke_all,
    argument_for_bare_value,
    call_example,
    invoke_all,
)
from .models.base import ChatModel
from .parser import Reply, parse_reply, strip_reasoning
from .stream import FinalAnswerStream
from .toolbox import Toolbox
from .types import Message, ModelReply, RunResult, Step, ToolCall, ToolResult


class Agent:
    """A JSON ReAct agent: ``Agent(model, toolbox).run("task") -> RunResult``.

    Args:
        model: any :class:`ChatModel` (``ScriptedModel``, ``OpenAIChatModel``, ``LlamaCppModel``).
        toolbox: the tools the model may call.
        max_steps: shortcut for ``config.max_steps``.
        config: budgets and options; see :class:`AgentConfig`.
        approver: asked before each call of a tool marked ``requires_approval``:
            ``approver(tool, args) -> bool``; ``False`` is told to the model as the user declining.
        **options: any :class:`AgentConfig` field, overriding ``config``.

    Raises:
        ConfigError: an unknown option, a bad budget, or tools that require approval and no
            ``approver``.
    """

    def __init__(
        self,
        model: ChatModel,
        toolbox: Toolbox | None = None,
        max_steps: int | None = None,
        config: AgentConfig | None = None,
        approver: Approver | None = None,
        callbacks: Sequence[Callable[[Event], Any]] = (),
        **options: Any,
    ) -> None:
        if max_steps is not None:
            options["max_steps"] = max_steps
        try:
            config = AgentConfig(**{**asdict(config or AgentConfig()), **options})
        except TypeError as exc:
            raise ConfigError(f"Unknown Agent option: {exc}; see AgentConfig.") from exc
        self.model, self.toolbox, self.config = model, toolbox or Toolbox(), config
        guarded = [t.name for t in self.toolbox.values() if t.requires_approval]
        if guarded and approver is None:
            raise ConfigError(
                f"{', '.join(guarded)} require approval: pass approver=... to Agent, a function "
                "(tool, args) -> bool (approver=lambda tool, args: True approves everything)."
            )
        if config.constrained == "on" and not getattr(model, "accepts_schema", False):
            raise ConfigError(
                f"constrained='on' needs a backend that takes a reply schema; "
                f"{getattr(model, 'name', type(model).__name__)} does not (use 'auto' or 'off')."
            )
        self.approver, self.callbacks = approver, list(callbacks)
        self.system_prompt = prompts.render_system_prompt(self.toolbox, config.instructions)

    @functools.cached_property
    def reply_schema(self) -> dict[str, Any]:
        """The JSON Schema of a valid reply for the whole toolbox (built on first use: only
        constrained runs need it); see :func:`react_agent.constrain.reply_schema`."""
        return reply_schema(self.toolbox)

    def run(self, task: str) -> RunResult:
        """Run ``task`` to the end and return the result (see :meth:`iter` for the events)."""
        return last_result(self.iter(task))

    def iter(self, task: str, *, history: Sequence[Message] = ()) -> Iterator[Event]:
        """Run ``task``, yielding an :mod:`~react_agent.events` event as each thing happens (and
        passing it to each callback first).

        Args:
            task: the user's task.
            history: earlier messages of a conversation (system prompt first) to continue; see
                :class:`~react_agent.conversation.Conversation`.

        The last event is always :class:`RunFinished` carrying the :class:`RunResult`;
        ``KeyboardInterrupt`` during a model call, a tool or a callback ends the run with status
        ``interrupted`` (the trajectory so far is kept).
        """
        return self._drive(self._loop(task, list(history), [], self.config.max_steps))

    def resume(self, result: RunResult, max_steps: int | None = None) -> RunResult:
        """Continue a run that stopped without a final answer; see :meth:`iter_resume`."""
        return last_result(self.iter_resume(result, max_steps))

    def iter_resume(self, result: RunResult, max_steps: int | None = None) -> Iterator[Event]:
        """Continue ``result`` (e.g. loaded with :meth:`RunResult.load`) with ``max_steps`` more
        steps (default: ``config.max_steps``). The earlier steps and messages are kept; a
        best-effort answer is set aside, and a step cut short by Ctrl-C is asked again.

        Raises:
            ConfigError: the run already ended with a final answer.
        """
        if result.status == "final_answer":
            raise ConfigError("This run already has a final answer; there is nothing to resume.")
        messages, steps = _resumable(result, self.system_prompt)
        budget = max_steps or self.config.max_steps
        return self._drive(self._loop(result.task, messages, steps, budget, resumed=True))

    def stream_answer(self, task: str) -> Iterator[str]:
        """Run ``task`` and yield only the final answer's text, piece by piece as the model
        writes it (streaming when the backend can; otherwise the whole answer at the end).
        Use :meth:`iter` with ``stream=True`` to get the answer pieces and the result."""
        streamed: dict[int, str] = {}
        agent = self if self.config.stream else self._with(stream=True)
        for event in agent.iter(task):
            if isinstance(event, AnswerToken):
                streamed[event.index] = streamed.get(event.index, "") + event.text
                yield event.text
            elif isinstance(event, FinalAnswer):
                sent = streamed.get(event.step.index, "")
                if event.text.startswith(sent):
                    rest = event.text[len(sent):]
                    if rest:
                        yield rest

    def chat(self, **options: Any) -> Conversation:
        """A :class:`~react_agent.conversation.Conversation` with this agent: several turns
        sharing one history (``options``: ``max_history_tokens``, ``keep_last``)."""
        from .conversation import Conversation

        return Conversation(self, **options)

    async def arun(self, task: str) -> RunResult:
        """:meth:`run` for asyncio. Cancelling the task ends the run (status ``interrupted``,
        seen by :meth:`aiter` consumers) and re-raises ``CancelledError``."""
        result: RunResult | None = None
        async for event in self.aiter(task):
            if isinstance(event, RunFinished):
                result = event.result
        assert result is not None, "aiter() always ends with RunFinished"
        return result

    async def aiter(self, task: str, *, history: Sequence[Message] = ()) -> AsyncIterator[Event]:
        """:meth:`iter` for asyncio: the model is awaited (``acomplete``/``astream`` if the
        backend has them, e.g. :class:`OpenAIChatModel` with ``AsyncOpenAI``; else ``complete``
        in a worker thread) and tools run with :func:`~react_agent.invoker.ainvoke_all`
        (``async def`` tools on the event loop). On cancellation the last event is
        ``RunFinished`` with status ``interrupted``, then ``CancelledError`` is re-raised."""
        loop = self._loop(task, list(history), [], self.config.max_steps)
        value: Any = None
        error: BaseException | None = None
        cancelled = False
        while True:
            try:
                item = loop.throw(error) if error else loop.send(value)
            except StopIteration:
                break
            value, error = None, None
            try:
                if isinstance(item, _Query):
                    async for piece in self._aquery(item):
                        if isinstance(piece, ModelReply):
                            value = piece
                        else:
                            self._notify(piece)
                            yield piece
                elif isinstance(item, _Invoke):
                    value = await ainvoke_all(self.toolbox, item.calls, **self._invoke_options())
                else:
                    self._notify(item)
                    yield item
            except BaseException as exc:
                cancelled = cancelled or isinstance(exc, asyncio.CancelledError)
                error = exc
        if cancelled:
            raise asyncio.CancelledError

    def _drive(self, loop: Generator[Any, Any, None]) -> Iterator[Event]:
        """Run the I/O-free loop: answer its model and tool requests, pass its events on."""
        value: Any = None
        error: BaseException | None = None
        while True:
            try:
                item = loop.throw(error) if error else loop.send(value)
            except StopIteration:
                return
            value, error = None, None
            try:
                if isinstance(item, _Query):
                    value = yield from self._query(item)
                elif isinstance(item, _Invoke):
                    value = invoke_all(self.toolbox, item.calls, **self._invoke_options())
                else:
                    self._notify(item)
                    yield item
            except BaseException as exc:  # handed to the loop, which ends the run cleanly
                error = exc

    def _loop(
        self, task: str, history: list[Message], steps: list[Step], budget: int,
        resumed: bool = False,
    ) -> Generator[Event | _Query | _Invoke, Any, None]:
        """The ReAct loop without I/O: yields events for the caller, and ``_Query``/``_Invoke``
        requests that :meth:`_drive`/:meth:`aiter` answer (with a reply or tool results) or throw
        into (model errors, interrupts). One loop serves the sync and the async API."""
        shown = self.toolbox if resumed else select_tools(self.toolbox, task, self.config)
        system = self._system_prompt(shown)
        schema = None if self.config.constrained == "off" else self._schema(shown)
        earlier = history[1:] if history and history[0]["role"] == "system" else history
        messages = history if resumed else [
            {"role": "system", "content": system}, *earlier, {"role": "user", "content": task}
        ]
        run = RunResult(task, "max_steps", None, steps, messages=messages, tools=[*shown.names])
        actions = failures = 0
        yield RunStarted(task, system, tuple(shown.names), resumed_steps=len(steps))
        try:
            while actions < budget:
                step = Step(index=len(run.steps) + 1)
                reply = yield from self._ask(run, step, schema)
                try:
                    parsed = self._parse(reply.text)
                except OutputParseError as exc:
                    failures += 1
                    yield from self._parse_failed(run, step, exc, failures)
                    if run.status == "parse_errors":
                        break
                    continue
                except Exception as exc:  # a bug of ours: end the run, keep the trajectory
                    _internal_error(run, step, exc)
                    break
                failures, actions = 0, actions + 1
                _take(run, step, parsed)
                yield ReplyParsed(step, parsed)
                if step.final_answer is not None:
                    run.status, run.final_answer = "final_answer", step.final_answer
                    yield FinalAnswer(step, step.final_answer)
                    break
                yield from self._act(run, step, parsed.tool_calls)
                if run.status == "loop_detected":
                    break
            else:
                used = f"{budget} step" if budget == 1 else f"all {budget} steps"
                run.error = f"The run used {used} without a final answer."
                if self.config.best_effort_answer:
                    yield from self._best_effort(run, schema)
        except ModelError as exc:
            run.status, run.error = "model_error", str(exc)
        except (KeyboardInterrupt, asyncio.CancelledError):
            run.status, run.final_answer = "interrupted", None
            run.error = "The run was interrupted (Ctrl-C)."
        yield RunFinished(run)

    def _parse(self, text: str) -> Reply:
        """:func:`parse_reply`, with the toolbox naming a value given without an argument name
        (a tool with exactly one required argument, which the value fits)."""
        return parse_reply(
            text, name_value=functools.partial(argument_for_bare_value, self.toolbox)
        )

    def _parse_failed(
        self, run: RunResult, step: Step, exc: OutputParseError, failures: int
    ) -> Iterator[Event]:
        step.error = exc.problem
        feedback = str(exc)
        if failures > 1 and len(run.steps) > 1 and run.steps[-2].error == exc.problem:
            feedback = self._parse_error_again(exc, failures)  # the same problem: a new message
        yield ParseFailed(step, feedback)
        if failures > self.config.max_parse_retries:
            run.status = "parse_errors"
            run.error = f"The model's last {failures} replies held no usable action; the last " \
                f"problem: {exc.problem}"
        else:
            run.messages.append({"role": "user", "content": feedback})

    def _parse_error_again(self, exc: OutputParseError, failures: int) -> str:
        """The message for an unusable reply that got the same message last time: it shows a
        complete call of the tool the reply named (with its real argument names), or the forms
        of a reply with the tools there are."""
        tool = self.toolbox.get(exc.tool) if exc.tool else None
        if tool is not None:
            hint = f"A complete call of {tool.name}, with its real argument names: " \
                f"{call_example(tool)}"
        else:
            names = ", ".join(self.toolbox.names) or "none: give the final answer"
            hint = f"The tools you can call: {names}. A tool call looks like " \
                '{"thought": "...", "action": {"name": "<tool name>", "args": {"<argument>": ' \
                '<value>}}}; the final answer looks like {"thought": "...", "action": ' \
                '{"final_answer": "<the answer>"}}.'
        return prompts.render("parse_error_again", count=str(failures), problem=exc.problem,
                              hint=hint)

    def _act(self, run: RunResult, step: Step, calls: list[ToolCall]) -> Generator[Any, Any, None]:
        """Run the step's calls (or answer a repeated call from before) and send observations."""
        step.tool_calls = list(calls)
        earlier = repeated_results(run.steps, self.config.max_repeats)
        if earlier is not None and any(r.error == "repeated" for s in run.steps for r in s.results):
            run.status = "loop_detected"
            run.error = "The model kept repeating the same tool calls after being told so."
            return
        for call in step.tool_calls:
            yield ToolStarted(step, call)
        if earlier is not None:
            step.results = [_repeat_warning(r) for r in earlier]
        else:
            step.results = yield _Invoke(step.tool_calls)
        for result in step.results:
            yield ToolFinished(step, result)
        observations = observation_message(step.results, run.task)
        run.messages.append({"role": "user", "content": observations})
        yield ObservationSent(step, observations)

    def _ask(
        self, run: RunResult, step: Step, schema: dict[str, Any] | None
    ) -> Generator[Any, Any, ModelReply]:
        """One model call: request it, record the step and the assistant message."""
        chars = sum(len(m["content"]) for m in run.messages)
        yield ModelCallStarted(step.index, len(run.messages), chars)
        reply: ModelReply = yield _Query(run.messages, step, schema)
        run.steps.append(step)
        run.messages.append({"role": "assistant", "content": strip_reasoning(reply.text)})
        yield ModelCallFinished(step)
        return reply

    def _best_effort(
        self, run: RunResult, schema: dict[str, Any] | None
    ) -> Generator[Any, Any, None]:
        """With the steps used up, ask once more for a final answer only (prompts/final_answer.md).
        The status stays ``max_steps``; a usable answer is kept with ``best_effort=True``."""
        ask = prompts.render("final_answer", task=run.task)
        run.messages.append({"role": "user", "content": ask})
        step = Step(index=len(run.steps) + 1, best_effort=True)
        try:
            reply = yield from self._ask(run, step, schema)
        except ModelError as exc:
            run.error = f"{run.error} Asking for a best-effort answer failed: {exc}"
            return
        try:
            parsed = self._parse(reply.text)
        except OutputParseError as exc:
            step.error = exc.problem
            yield ParseFailed(step, str(exc))
            return
        except Exception as exc:  # a bug of ours: end the run, keep the trajectory
            _internal_error(run, step, exc)
            return
        _take(run, step, parsed)
        yield ReplyParsed(step, parsed)
        if step.final_answer is not None:
            run.final_answer, run.best_effort = step.final_answer, True
            run.error = f"{run.error} The final answer is a best effort from what was observed."
            yield FinalAnswer(step, step.final_answer, best_effort=True)
        else:
            run.error = f"{run.error} Asked for a final answer from what it had observed, " \
                "the model asked for a tool instead (not run)."
        step.tool_calls = []  # no tool runs after the budget

    def _invoke_options(self) -> dict[str, Any]:
        return {
            "max_chars": self.config.max_observation_chars,
            "max_workers": self.config.max_parallel_calls,
            "approver": self.approver,
        }

    def _with(self, **changes: Any) -> Agent:
        """A copy of this agent with some :class:`AgentConfig` fields changed."""
        twin = copy.copy(self)
        twin.config = dataclasses.replace(self.config, **changes)
        return twin

    def _notify(self, event: Event) -> None:
        for callback in self.callbacks:
            callback(event)

    def _query(self, query: _Query) -> Generator[Event, None, ModelReply]:
        """Ask the model (streaming when configured and possible), yielding token events."""
        step, started = query.step, time.perf_counter()
        answer = FinalAnswerStream()
        try:
            for piece in self._pieces(query.messages, query.schema):
                if isinstance(piece, ModelReply):
                    return _record(step, piece)
                for event in _token_events(step.index, piece, answer):
                    self._notify(event)
                    yield event
        finally:
            step.model_seconds = time.perf_counter() - started
        raise ModelError(f"The stream of {self._name} ended without a whole reply.")

    def _pieces(
        self, messages: list[Message], schema: dict[str, Any] | None
    ) -> Iterator[str | ModelReply]:
        stream = getattr(self.model, "stream", None) if self.config.stream else None
        extra = self._schema_options(schema)
        try:
            if stream is None:
                yield self.model.complete(messages, **extra)
            else:
                yield from stream(messages, **extra)
        except Exception as exc:
            raise self._model_error(exc) from exc

    async def _aquery(self, query: _Query) -> AsyncIterator[Event | ModelReply]:
        """:meth:`_query` for asyncio: token events, then the reply."""
        step, started = query.step, time.perf_counter()
        answer = FinalAnswerStream()
        try:
            async for piece in self._apieces(query.messages, query.schema):
                if isinstance(piece, ModelReply):
                    yield _record(step, piece)
                    return
                for event in _token_events(step.index, piece, answer):
                    yield event
        finally:
            step.model_seconds = time.perf_counter() - started
        raise ModelError(f"The stream of {self._name} ended without a whole reply.")

    async def _apieces(
        self, messages: list[Message], schema: dict[str, Any] | None
    ) -> AsyncIterator[str | ModelReply]:
        astream = getattr(self.model, "astream", None) if self.config.stream else None
        acomplete = getattr(self.model, "acomplete", None)
        extra = self._schema_options(schema)
        try:
            if astream is not None:
                async for piece in astream(messages, **extra):
                    yield piece
            elif acomplete is not None:
                yield await acomplete(messages, **extra)
            else:
                yield await asyncio.to_thread(lambda: self.model.complete(messages, **extra))
        except Exception as exc:
            raise self._model_error(exc) from exc

    def _schema_options(self, schema: dict[str, Any] | None) -> dict[str, Any]:
        if schema is None or not getattr(self.model, "accepts_schema", False):
            return {}
        return {"schema": schema, "strict": self.config.constrained == "on"}

    def _system_prompt(self, shown: Toolbox) -> str:
        if shown is self.toolbox:
            return self.system_prompt
        return prompts.render_system_prompt(shown, self.config.instructions)

    def _schema(self, shown: Toolbox) -> dict[str, Any]:
        return self.reply_schema if shown is self.toolbox else reply_schema(shown)

    @property
    def _name(self) -> str:
        return str(getattr(self.model, "name", type(self.model).__name__))

    def _model_error(self, exc: Exception) -> ModelError:
        """A backend's own ModelError as is; any other exception (a backend bug) wrapped, so
        that it ends the run with ``model_error`` instead of losing the trajectory."""
        if isinstance(exc, ModelError):
            return exc
        return ModelError(
            f"The model backend {self._name} failed: {type(exc).__name__}: {exc}", cause="other"
        )


@dataclass
class _Query:
    """The loop needs the model's reply to ``messages`` (recorded on ``step``), constrained to
    ``schema`` where the backend can."""

    messages: list[Message]
    step: Step
    schema: dict[str, Any] | None = None


@dataclass
class _Invoke:
    """The loop needs the results of ``calls``."""

    calls: list[ToolCall]


def _record(step: Step, reply: ModelReply) -> ModelReply:
    step.raw_output = reply.text
    step.prompt_tokens, step.completion_tokens = reply.prompt_tokens, reply.completion_tokens
    return reply


def _internal_error(run: RunResult, step: Step, exc: Exception) -> None:
    """A bug in react-agent itself (the parser failed on a reply) ends the run with status
    ``internal_error``; the reply stays in ``step.raw_output`` for the bug report."""
    step.error = f"react-agent failed to read this reply ({type(exc).__name__}: {exc})"
    run.status, run.final_answer = "internal_error", None
    run.error = (
        f"{step.error}. This is a bug in react-agent, not in the model: please report it with "
        f"the reply (steps[{len(run.steps) - 1}].raw_output)."
    )


def _take(run: RunResult, step: Step, parsed: Reply) -> None:
    """Record the parsed reply on the step, and keep in the history only the part of the reply
    the step acts on (``parsed.source``): prose around it and steps the model invented after it
    (an ``Observation:`` of its own, a second step) would contradict the real observation.
    The raw reply stays in ``step.raw_output``."""
    step.thought, step.stage, step.repairs = parsed.thought, parsed.stage, [*parsed.repairs]
    step.final_answer = parsed.final_answer
    if parsed.source and run.messages and run.messages[-1]["role"] == "assistant":
        run.messages[-1] = {"role": "assistant", "content": parsed.source}


def _token_events(index: int, piece: str, answer: FinalAnswerStream) -> list[Event]:
    events: list[Event] = [ModelToken(index, piece)]
    answer_piece = answer.feed(piece)
    if answer_piece:
        events.append(AnswerToken(index, answer_piece))
    return events


def _resumable(result: RunResult, system_prompt: str) -> tuple[list[Message], list[Step]]:
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
    calls = [_signature(s) for s in steps if s.tool_calls]
    if not calls or len(calls) < 2:
        return None
    last = calls[-1]
    same_in_a_row = len(calls) >= max_repeats and all(c == last for c in calls[-max_repeats:])
    cycle = len(calls) >= 4 and calls[-1] == calls[-3] and calls[-2] == calls[-4] != last
    if not (same_in_a_row or cycle):
        return None
    previous = [s for s in steps if s.tool_calls and s.results and _signature(s) == last]
    return previous[-1].results if previous else None


def _signature(step: Step) -> tuple[tuple[str, str], ...]:
    return tuple((c.name, json.dumps(c.args, sort_keys=True)) for c in step.tool_calls)


def _repeat_warning(earlier: ToolResult) -> ToolResult:
    text = prompts.render("repeated", call=earlier.call.name, observation=earlier.observation)
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
