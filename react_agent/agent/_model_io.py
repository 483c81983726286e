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
import time
from collections.abc import AsyncIterator, Callable, Generator, Iterator
from dataclasses import dataclass
from typing import Any

from ..errors import ModelError
from ..events import AnswerToken, Event, ModelToken
from ..models.base import ChatModel
from ..parsing._stream import FinalAnswerStream
from ..types import Message, ModelReply, Step


@dataclass
class Query:
    """The loop needs the model's reply to ``messages`` (recorded on ``step``), constrained to
    ``schema`` where the backend can; ``answer_tokens``: stream a final answer in the reply as
    ``AnswerToken`` events (not for a draft that a review call may replace); ``answer_floor``:
    take the final answer when the model gives it this probability (backends with
    ``accepts_answer_floor``, see :mod:`react_agent.models._answer_floor`)."""

    messages: list[Message]
    step: Step
    schema: dict[str, Any] | None = None
    answer_tokens: bool = True
    answer_floor: float | None = None


class ModelCall:
    """What the sync and async edges share: the call's options, its token events, and the
    reply's timing and token usage recorded on the step."""

    def __init__(self, model: ChatModel, query: Query, constrained: str) -> None:
        self.model, self.step, self.messages = model, query.step, query.messages
        accepts = query.schema is not None and getattr(model, "accepts_schema", False)
        self.options: dict[str, Any] = (
            {"schema": query.schema, "strict": constrained == "on"} if accepts else {})
        if query.answer_floor is not None and getattr(model, "accepts_answer_floor", False):
            self.options["answer_floor"] = query.answer_floor
        self.answer = FinalAnswerStream() if query.answer_tokens else None
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
        self.step.answer_probability = reply.answer_probability
        self.step.answer_taken = reply.answer_taken
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
    model: ChatModel, request: Query, *, stream: bool, constrained: str,
    notify: Callable[[Event], Any],
) -> Generator[Event, None, ModelReply]:
    """Ask the model, yielding token events (each passed to ``notify`` first); returns the reply.

    Raises:
        ModelError: the backend failed, or its stream ended without a whole reply.
    """
    call = ModelCall(model, request, constrained)
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
    model: ChatModel, request: Query, *, stream: bool, constrained: str
) -> AsyncIterator[Event | ModelReply]:
    """:func:`query` for asyncio: token events, then the reply (last)."""
    call = ModelCall(model, request, constrained)
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
        if streaming is None:
            yield call.model.complete(call.messages, **call.options)
        else:
            yield from streaming(call.messages, **call.options)
    except Exception as exc:
        raise call.failed(exc) from exc


async def _apieces(call: ModelCall, stream: bool) -> AsyncIterator[str | ModelReply]:
    astream = getattr(call.model, "astream", None) if stream else None
    acomplete = getattr(call.model, "acomplete", None)
    model, messages, options = call.model, call.messages, call.options
    try:
        if astream is not None:
            async for piece in astream(messages, **options):
                yield piece
        elif acomplete is not None:
            yield await acomplete(messages, **options)
        else:
            yield await asyncio.to_thread(lambda: model.complete(messages, **options))
    except Exception as exc:
        raise call.failed(exc) from exc


def model_name(model: ChatModel) -> str:
    """The backend's ``name``, or its class name."""
    return str(getattr(model, "name", type(model).__name__))
