"""One model turn for ``react-agent serve``: ask the model, read its reply as tool calls or a final
answer, and ask again when the reply cannot be used. No tool is ever run here.

A reply cannot be used when the parser finds no action in it, when it breaks the request's
``tool_choice`` (a final answer where a call is required, a call where none is allowed, another
tool than the one named), or when a call names an unknown tool or has arguments that do not fit
the tool's schema after the invoker's cleaning. Each time, the model is sent what was wrong, as
the agent does (``prompts/parse_error.md``), up to ``max_retries`` times; the client never sees
these retries. The arguments of the calls handed back are the cleaned ones.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import AsyncGenerator, Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import ModelError, OutputParseError
from ..models.base import ChatModel, Message, ModelReply
from ..parsing._reply import parse_error, parse_reply, strip_reasoning
from ..parsing._stream import FinalAnswerStream
from ..tools._invoker import prepare
from ..types import Reply, ToolResult
from ._openai import TurnPlan

log = logging.getLogger(__name__)


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
        attempts: model calls made (1 + internal retries).
        prompt_tokens, completion_tokens: summed over the attempts (reported by the backend, or
            estimated as characters / 4 when it reports none).
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


async def take_turn(
    model: ChatModel, plan: TurnPlan, *, max_retries: int = 3, stream: bool = False
) -> AsyncGenerator[str | TurnResult, None]:
    """Run one turn: yields the final answer's text pieces as the model writes them (only with
    ``stream``, and only where a final answer is allowed), then one :class:`TurnResult`.

    A reply whose answer was already partly handed out is not retried (the client has seen
    it): if it then turns out unusable, the result carries the error.

    Raises:
        ModelError: the backend failed (its own retries are done); any other exception of the
            backend is wrapped in one.
    """
    messages = list(plan.messages)
    live = stream and plan.choice.mode in ("auto", "none")
    prompt_tokens = completion_tokens = 0
    for attempt in range(1, max_retries + 2):
        answer = FinalAnswerStream() if live else None
        reply: ModelReply | None = None
        async for piece in model_pieces(model, messages, stream=stream):
            if isinstance(piece, ModelReply):
                reply = piece
            elif answer is not None and (new := answer.feed(piece)):
                yield new
        if reply is None:
            raise ModelError(f"The stream of {model.name} ended without a whole reply.")
        prompt, completion = reply_tokens(reply, messages)
        prompt_tokens, completion_tokens = prompt_tokens + prompt, completion_tokens + completion
        streamed = answer.answer if answer is not None else ""
        try:
            parsed = parse_reply(reply.text)
            calls = check_reply(parsed, plan)
        except OutputParseError as exc:
            if streamed or attempt > max_retries:
                yield TurnResult([], None, None, reply.text, exc, attempt, prompt_tokens,
                                 completion_tokens, streamed)
                return
            log.info("reply %d could not be used (%s: %s); asking again", attempt, exc.kind,
                     exc.problem)
            messages.append({"role": "assistant", "content": strip_reasoning(reply.text)})
            messages.append({"role": "user", "content": str(exc)})
            continue
        yield TurnResult(calls, parsed.final_answer, parsed.thought, reply.text, None, attempt,
                         prompt_tokens, completion_tokens, streamed, parsed.stage, parsed.repairs)
        return


def check_reply(reply: Reply, plan: TurnPlan) -> list[Call]:
    """The reply's calls, cleaned and checked against the plan (only the first one when
    parallel calls are off); ``[]`` for a final answer.

    Raises:
        OutputParseError: the reply breaks ``tool_choice``, or a call names an unknown tool or
            has invalid arguments (the message is the one the invoker would give the model).
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
    for call in calls:
        prepared = prepare(plan.toolbox, call)
        if isinstance(prepared, ToolResult):
            failed.append(prepared)
        else:
            ready.append(Call(call.name, prepared.args, prepared.cleaning))
    if failed:
        problems = " ".join(r.observation.removeprefix("Error: ") for r in failed)
        raise parse_error(str(failed[0].error), problems)
    return ready


async def model_pieces(
    model: ChatModel, messages: Sequence[Message], *, stream: bool = False
) -> AsyncGenerator[str | ModelReply, None]:
    """The model's reply to ``messages`` for asyncio: text pieces as they are generated (with
    ``stream``, where the backend can stream), then the whole :class:`ModelReply`.

    Uses the backend's ``astream``/``acomplete`` when it has them; a synchronous ``stream`` or
    ``complete`` (the embedded model, the scripted one) runs in a worker thread, and a stream
    given up early is closed in that thread, which stops the generation.

    Raises:
        ModelError: the backend's own, or any other exception of the backend wrapped in one.
    """
    try:
        if stream and hasattr(model, "astream"):
            async for piece in model.astream(messages):
                yield piece
        elif stream and hasattr(model, "stream"):
            async for piece in _in_thread(lambda: model.stream(messages)):
                yield piece
        elif hasattr(model, "acomplete"):
            yield await model.acomplete(messages)
        else:
            yield await asyncio.to_thread(model.complete, messages)
    except ModelError:
        raise
    except Exception as exc:
        raise ModelError(
            f"The model backend {model.name} failed: {type(exc).__name__}: {exc}", cause="other"
        ) from exc


async def _in_thread(make: Callable[[], Iterator[Any]]) -> AsyncGenerator[Any, None]:
    """Iterate a synchronous iterator in one worker thread; stop it (in that thread) when the
    consumer stops early."""
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
    stop = threading.Event()

    def put(kind: str, value: Any) -> None:
        try:
            loop.call_soon_threadsafe(queue.put_nowait, (kind, value))
        except RuntimeError:  # the event loop is gone: nobody is listening any more
            stop.set()

    def work() -> None:
        iterator = make()
        try:
            for item in iterator:
                put("item", item)
                if stop.is_set():
                    break
            else:
                put("end", None)
        except BaseException as exc:  # handed to the consumer
            put("error", exc)
        finally:
            close = getattr(iterator, "close", None)
            if close is not None:
                close()  # a generator stopped early: ends its `with` blocks (locks) here

    loop.run_in_executor(None, work)
    try:
        while True:
            kind, value = await queue.get()
            if kind == "end":
                break
            if kind == "error":
                raise value
            yield value
    finally:
        stop.set()  # the thread stops after the piece it is waiting for


def reply_tokens(reply: ModelReply, messages: Sequence[Message]) -> tuple[int, int]:
    """``(prompt tokens, completion tokens)`` of a reply to ``messages``: as the backend
    reported them, else estimated as characters / 4 (as the agent does)."""
    prompt, completion = reply.prompt_tokens, reply.completion_tokens
    if prompt is None:
        prompt = sum(len(m["content"]) for m in messages) // 4
    return prompt, completion if completion is not None else len(reply.text) // 4
