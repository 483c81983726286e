"""The agent's model I/O: one model call for a step, written once (:class:`ModelCall`) with thin
sync and async edges (:func:`query`, :func:`aquery`).

A call streams when the run asks for it and the backend can (``stream``/``astream``), otherwise
it waits for the whole reply (``complete``/``acomplete``, or ``complete`` in a worker thread).
Text pieces become :class:`~react_agent.events.ModelToken` and
:class:`~react_agent.events.AnswerToken` events; any backend failure becomes a
:class:`~react_agent.errors.ModelError`, which ends the run with status ``model_error``.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import AsyncIterator, Callable, Generator, Iterator
from typing import Any

from ..engine import Query
from ..errors import ModelError
from ..events import AnswerToken, Event, ModelToken
from ..models.base import ChatModel
from ..parsing import FinalAnswerStream
from ..tools import in_worker
from ..types import ModelReply


class ModelCall:
    """What the sync and async edges share: the call's options, its token events, and the
    reply's timing and token usage recorded on the step."""

    def __init__(self, model: ChatModel, query: Query) -> None:
        self.model, self.step, self.messages = model, query.step, query.messages
        self.choices = query.choices if getattr(model, "accepts_choices", False) else None
        self.chooser: Callable[..., ModelReply] = getattr(model, "choose", None) or (
            lambda *_: ModelReply(""))
        schema = query.schema
        if query.choices and self.choices is None:  # a short reply, held to the words
            schema = {"type": "string", "enum": list(query.choices)}
        accepts = schema is not None and getattr(model, "accepts_schema", False)
        self.options: dict[str, Any] = (
            {"schema": schema, "strict": query.strict} if accepts else {})
        if query.answer_floor is not None and getattr(model, "accepts_answer_floor", False):
            self.options["answer_floor"] = query.answer_floor
        self.answer = FinalAnswerStream() if query.answer_tokens and not query.choices else None
        self.started = time.perf_counter()

    def events(self, piece: str) -> list[Event]:
        """The events of a streamed text piece: the token, and the answer's part of it."""
        events: list[Event] = [ModelToken(self.step.index, piece)]
        answer_piece = self.answer.feed(piece) if self.answer else None
        if answer_piece:
            events.append(AnswerToken(self.step.index, answer_piece))
        return events

    def finish(self, reply: ModelReply) -> ModelReply:
        """Record the whole reply on the step."""
        self.step.raw_output = reply.text
        self.step.prompt_tokens = reply.prompt_tokens
        self.step.completion_tokens = reply.completion_tokens
        self.step.finish_reason = reply.finish_reason
        return reply

    def timed(self) -> None:
        self.step.model_seconds = time.perf_counter() - self.started

    def incomplete(self) -> ModelError:
        return ModelError(f"The stream of {model_name(self.model)} ended without a whole reply.")

    def failed(self, exc: Exception) -> ModelError:
        """A backend's own ModelError as is; any other exception (a backend bug) wrapped, so
        that it ends the run with ``model_error`` instead of losing the trajectory."""
        if isinstance(exc, ModelError):
            return exc
        return ModelError(
            f"The model backend {model_name(self.model)} failed: {type(exc).__name__}: {exc}",
            cause="other",
        )


def query(
    model: ChatModel, request: Query, *, stream: bool,
    notify: Callable[[Event], Any],
) -> Generator[Event, None, ModelReply]:
    """Ask the model, yielding token events (each passed to ``notify`` first); returns the reply.

    Raises:
        ModelError: the backend failed, or its stream ended without a whole reply.
    """
    call = ModelCall(model, request)
    try:
        for piece in _pieces(call, stream):
            if isinstance(piece, ModelReply):
                return call.finish(piece)
            for event in call.events(piece):
                notify(event)
                yield event
    finally:
        call.timed()
    raise call.incomplete()


async def aquery(
    model: ChatModel, request: Query, *, stream: bool
) -> AsyncIterator[Event | ModelReply]:
    """:func:`query` for asyncio: token events, then the reply (last)."""
    call = ModelCall(model, request)
    try:
        async for piece in _apieces(call, stream):
            if isinstance(piece, ModelReply):
                yield call.finish(piece)
                return
            for event in call.events(piece):
                yield event
    finally:
        call.timed()
    raise call.incomplete()


def _pieces(call: ModelCall, stream: bool) -> Iterator[str | ModelReply]:
    streaming = getattr(call.model, "stream", None) if stream else None
    try:
        if call.choices:
            yield call.chooser(call.messages, call.choices)
        elif streaming is None:
            yield call.model.complete(call.messages, **call.options)
        else:
            yield from streaming(call.messages, **call.options)
    except Exception as exc:
        raise call.failed(exc) from exc


async def _apieces(call: ModelCall, stream: bool) -> AsyncIterator[str | ModelReply]:
    """The reply's pieces for asyncio: ``astream``/``acomplete`` when the backend has them; a
    synchronous ``stream`` or ``complete`` (the embedded model, the scripted one) runs in a
    worker thread."""
    astream = getattr(call.model, "astream", None) if stream else None
    sync_stream = getattr(call.model, "stream", None) if stream else None
    acomplete = getattr(call.model, "acomplete", None)
    model, messages, options = call.model, call.messages, call.options
    try:
        if call.choices:
            choose, choices = call.chooser, call.choices
            yield await asyncio.to_thread(lambda: choose(messages, choices))
        elif astream is not None:
            async for piece in astream(messages, **options):
                yield piece
        elif sync_stream is not None:
            async for piece in in_thread(lambda: sync_stream(messages, **options)):
                yield piece
        elif acomplete is not None:
            yield await acomplete(messages, **options)
        else:
            yield await asyncio.to_thread(lambda: model.complete(messages, **options))
    except Exception as exc:
        raise call.failed(exc) from exc


async def in_thread(make: Callable[[], Iterator[Any]]) -> AsyncIterator[Any]:
    """Iterate a synchronous iterator in one worker thread; stop it (in that thread) when the
    consumer stops early: a generator given up early is closed in its thread, which ends its
    ``with`` blocks (the embedded model's lock) and stops the generation."""
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
                close()

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


async def advance(
    loop: Generator[Any, Any, Any], value: Any = None, error: BaseException | None = None
) -> tuple[bool, Any]:
    """Send ``value`` (or throw ``error``) into the loop, in a worker thread: parsing a reply,
    the policies and the check of the arguments are CPU work (a costly tool schema takes up to
    :data:`~react_agent.tools.schema.VALIDATION_SECONDS`), and the event loop answers others
    meanwhile. Returns ``(False, what the loop yielded)``, or ``(True, None)`` once it has ended.
    A cancellation lets the step finish (it is bounded), then is raised."""

    def step() -> tuple[bool, Any]:
        try:
            return False, (loop.throw(error) if error is not None else loop.send(value))
        except StopIteration:  # (it cannot cross a future)
            return True, None

    return await in_worker(step)


def model_name(model: ChatModel) -> str:
    """The backend's ``name``, or its class name."""
    return str(getattr(model, "name", type(model).__name__))
