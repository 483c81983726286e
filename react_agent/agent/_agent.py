"""The agent: ``Agent(model, toolbox).run("task") -> RunResult``, a thin facade over the loop.

:class:`Agent` holds the model, the toolbox and the options, and runs the I/O-free loop of
the loop core with sync (:meth:`Agent.run`, :meth:`Agent.iter`, :meth:`Agent.resume`)
or async (:meth:`Agent.arun`, :meth:`Agent.aiter`) edges: it answers the loop's model requests
(model I/O) and tool requests (the invoker) and passes its events
to the callbacks and the caller. :meth:`Agent.chat` starts a multi-turn conversation.
"""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import inspect
from collections.abc import AsyncIterator, Callable, Generator, Iterator, Sequence
from typing import Any

from .. import prompts
from ..config import AgentConfig
from ..engine import Invoke, Output, Query, Request, Run, Setup, output_spec, react, resumable
from ..errors import ConfigError
from ..events import AnswerToken, Event, FinalAnswer, RunFinished, last_result
from ..models.base import ChatModel
from ..policies import Policy, default_policies
from ..tools import Approver, Toolbox, ainvoke_all, invoke_all
from ..types import Message, ModelReply, RunResult, Step
from ._conversation import Conversation
from ._model_io import advance, aquery, query


class Agent:
    """A JSON ReAct agent: ``Agent(model, toolbox).run("task") -> RunResult``.

    Args:
        model: any :class:`ChatModel` (``ScriptedModel``, ``OpenAIChatModel``, ``LlamaCppModel``).
        toolbox: the tools the model may call.
        max_steps: shortcut for ``config.max_steps``.
        config: budgets and options; see :class:`AgentConfig`.
        approver: asked before each call of a tool marked ``requires_approval``:
            ``approver(tool, args) -> bool``; ``False`` is told to the model as the user declining.
        **options: any :class:`AgentConfig` field, overriding ``config`` (``output_type=...``:
            a typed final answer in ``RunResult.output``).

    Raises:
        ConfigError: an unknown option, a bad budget, tools that require approval and no
            ``approver``, or an ``output_type`` that is not a type or a bounded, valid JSON
            Schema.
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
            config = dataclasses.replace(config or AgentConfig(), **options)
        except TypeError as exc:
            raise ConfigError(f"Unknown Agent option: {exc}; see AgentConfig.") from exc
        self.model, self.toolbox, self.config = model, toolbox or Toolbox(), config
        self.policies: tuple[Policy, ...] = tuple(
            default_policies(model) if config.policies is None else config.policies)
        """The policies of this agent's runs (``config.policies``, or the defaults)."""
        for policy in self.policies:
            policy.check_model(model)
        guarded = [t.name for t in self.toolbox.values() if t.requires_approval]
        if guarded and approver is None:
            raise ConfigError(
                f"{', '.join(guarded)} require approval: pass approver=... to Agent, a function "
                "(tool, args) -> bool (approver=lambda tool, args: True approves everything)."
            )
        self.approver, self.callbacks = approver, list(callbacks)
        self.output: Output | None = None if config.output_type is None else \
            output_spec(config.output_type)
        """The output type of this agent's runs (``config.output_type``), or ``None``."""
        self.system_prompt = self._system_prompt(self.toolbox)

    def run(self, task: str) -> RunResult:
        """Run ``task`` to the end and return the result (see :meth:`iter` for the events)."""
        return last_result(self.iter(task))

    def iter(self, task: str, *, history: Sequence[Message] = ()) -> Iterator[Event]:
        """Run ``task``, yielding an :mod:`~react_agent.events` event as each thing happens (and
        passing it to each callback first).

        Args:
            task: the user's task.
            history: earlier messages of a conversation (system prompt first) to continue; see
                :class:`~react_agent.agent._conversation.Conversation`.

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
        messages, steps = resumable(result, self.system_prompt, self.policies)
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
            elif isinstance(event, FinalAnswer) and not event.draft:
                sent = streamed.get(event.step.index, "")
                if event.text.startswith(sent):
                    rest = event.text[len(sent):]
                    if rest:
                        yield rest

    def chat(self, **options: Any) -> Conversation:
        """A :class:`~react_agent.agent._conversation.Conversation` with this agent: several turns
        sharing one history (``options``: ``max_history_tokens``, ``keep_last``)."""
        from ._conversation import Conversation

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
        in a worker thread) and tools run with :func:`~react_agent.tools._invoker.ainvoke_all`
        (``async def`` tools on the event loop). On cancellation the last event is
        ``RunFinished`` with status ``interrupted``, then ``CancelledError`` is re-raised.
        The loop's own steps (parsing, policies, checking the arguments) run in a worker
        thread, so that the event loop is not held by them."""
        loop = self._loop(task, list(history), [], self.config.max_steps)
        value: Any = None
        error: BaseException | None = None
        cancelled = False
        while True:
            try:
                ended, item = await advance(loop, value, error)
            except asyncio.CancelledError as exc:  # raised once the step it came during ended
                cancelled = True
                if inspect.getgeneratorstate(loop) == inspect.GEN_CLOSED:
                    break
                value, error = None, exc
                continue
            if ended:
                break
            value, error = None, None
            try:
                if isinstance(item, Query):
                    async for piece in aquery(self.model, item, stream=self.config.stream):
                        if isinstance(piece, ModelReply):
                            value = piece
                        else:
                            self._notify(piece)
                            yield piece
                elif isinstance(item, Invoke):
                    value = await ainvoke_all(self.toolbox, item.calls, approve=item.approve,
                                              **self._invoke_options())
                else:
                    self._notify(item)
                    yield item
            except BaseException as exc:
                cancelled = cancelled or isinstance(exc, asyncio.CancelledError)
                error = exc
        if cancelled:
            raise asyncio.CancelledError

    def _drive(self, loop: Generator[Request, Any, None]) -> Iterator[Event]:
        """Run the I/O-free loop: answer its model and tool requests, pass its events on (to
        the callbacks first). An exception of a callback is thrown into the loop: Ctrl-C ends
        the run with status ``interrupted``; any other is raised to the caller."""
        value: Any = None
        error: BaseException | None = None
        while True:
            try:
                item = loop.throw(error) if error else loop.send(value)
            except StopIteration:
                return
            value, error = None, None
            try:
                if isinstance(item, Query):
                    value = yield from query(self.model, item, stream=self.config.stream,
                                             notify=self._notify)
                elif isinstance(item, Invoke):
                    value = invoke_all(self.toolbox, item.calls, approve=item.approve,
                                       **self._invoke_options())
                else:
                    self._notify(item)
                    yield item
            except BaseException as exc:
                error = exc

    def _loop(
        self, task: str, history: list[Message], steps: list[Step], budget: int,
        resumed: bool = False,
    ) -> Generator[Request, Any, None]:
        """The loop (:func:`~react_agent.engine.react`) for ``task``, set up with this
        agent's tools, prompt and policies; ``history``: earlier messages (or, ``resumed``, all
        of them)."""
        config, shown = self.config, self.toolbox
        if not resumed:
            for policy in self.policies:
                shown = policy.tools(task, shown)
        system = self.system_prompt if shown is self.toolbox else self._system_prompt(shown)
        earlier = history[1:] if history and history[0]["role"] == "system" else history
        messages = history if resumed else [
            {"role": "system", "content": system}, *earlier, {"role": "user", "content": task}
        ]
        result = RunResult(task, "max_steps", None, steps, messages=messages,
                           tools=[*shown.names])
        setup = Setup(self.toolbox, shown, system, self.policies, config.max_parse_retries,
                      config.max_repeats, config.max_calls_per_step, config.max_tool_calls,
                      self.output, config.output_retries, config.frame_observations,
                      can_approve=self.approver is not None)
        return react(Run(setup, result), budget)

    def _system_prompt(self, shown: Toolbox) -> str:
        """The system prompt showing the tools ``shown`` (and the output type's schema)."""
        config = self.config
        system = prompts.render_system_prompt(shown, config.instructions, config.system_prompt)
        if self.output is not None:
            system += "\n\n" + prompts.render("agent/output", schema=self.output.shape())
        return system

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
