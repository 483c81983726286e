"""A deterministic model that replays given replies: for tests, demos and scripted tasks
(after mini-swe-agent's ``DeterministicModel`` and pydantic-ai's ``FunctionModel``)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from ..errors import ModelError
from ..types import Message, ModelReply

Responder = Callable[[Sequence[Message]], str]
"""A function ``messages -> reply text``."""


class ScriptedModel:
    """Replays ``replies`` in order, one per call.

    Each item is the reply text, a function ``messages -> text`` (to answer from what the agent
    sent, or to raise :class:`ModelError` and simulate a failing server), or a whole
    :class:`ModelReply` returned as is (e.g. one cut by the token limit,
    ``finish_reason="length"``). Every call's messages are kept in :attr:`calls` so tests can
    check what the model was shown.

    Token usage is estimated as characters / 4 (there is no tokenizer).

    Raises (from :meth:`complete`):
        ModelError: with ``cause="exhausted"`` when asked for more replies than were given.
    """

    name = "scripted"

    accepts_schema = True
    """The reply schema the agent sends is recorded in :attr:`schemas` (and not enforced)."""

    small_model = True
    """It replays small models' replies, so it gets the policies they get by default."""

    def __init__(
        self, replies: Iterable[str | Responder | ModelReply], *, chunk_chars: int = 5
    ) -> None:
        self.replies: list[str | Responder | ModelReply] = list(replies)
        self.calls: list[list[Message]] = []
        self.schemas: list[dict[str, Any] | None] = []
        self.chunk_chars = chunk_chars

    def complete(
        self, messages: Sequence[Message], schema: dict[str, Any] | None = None,
        strict: bool = False,
    ) -> ModelReply:
        self.calls.append([dict(m) for m in messages])
        self.schemas.append(schema)
        index = len(self.calls) - 1
        if index >= len(self.replies):
            raise ModelError(
                f"ScriptedModel has only {len(self.replies)} replies and was asked for reply "
                f"{index + 1}; add replies to the script.",
                cause="exhausted",
            )
        item = self.replies[index]
        if isinstance(item, ModelReply):
            return item
        text = item(messages) if callable(item) else item
        prompt_chars = sum(len(m["content"]) for m in messages)
        return ModelReply(text, prompt_chars // 4, len(text) // 4, "stop")

    def stream(
        self, messages: Sequence[Message], schema: dict[str, Any] | None = None,
        strict: bool = False,
    ) -> Iterator[str | ModelReply]:
        """The next reply in pieces of ``chunk_chars`` characters, then the whole
        :class:`ModelReply` (see :class:`~react_agent.models.base.ChatModel`)."""
        reply = self.complete(messages, schema, strict)
        for start in range(0, len(reply.text), self.chunk_chars):
            yield reply.text[start : start + self.chunk_chars]
        yield reply
