"""Conversations: several user turns that share one history (``agent.chat()``).

Each turn is a normal run whose messages start with the whole history so far, so a later
question can rely on earlier questions, tool results and answers. When the history grows past
a token budget, the older turns are summarised by the model
(``prompts/conversation/summarize.md``) and replaced by that summary; the system prompt and the
last ``keep_last`` turns stay verbatim. The idea is LangChain's ``ConversationSummaryBufferMemory``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Annotated, Any, Protocol

from pydantic import Field

from .. import prompts
from .._persist import Count, Shape, check_shape, read_json, write_atomically
from ..errors import ConfigError
from ..events import Event, HistoryCompressed, RunFinished, last_result
from ..models.base import ChatModel, estimate_tokens
from ..types import Message, MessageShape, RunResult

SUMMARY_ACK = "conversation/summary_ack"
"""The template of the assistant message after a summary: it keeps the roles alternating, in
the protocol's form."""


class ConversationAgent(Protocol):
    """What a conversation needs from its agent; an :class:`~react_agent.Agent` has it all."""

    @property
    def model(self) -> ChatModel:
        """Answers each turn and writes the summaries."""

    @property
    def system_prompt(self) -> str:
        """The first message of the history."""

    @property
    def callbacks(self) -> Sequence[Callable[[Event], Any]]:
        """Given each event, ``HistoryCompressed`` included, as it happens."""

    def iter(self, task: str, *, history: Sequence[Message] = ()) -> Iterator[Event]:
        """Run ``task`` on top of ``history``, one event at a time."""


class Conversation:
    """A multi-turn conversation with one agent.

    Args:
        agent: the agent that answers each turn (its model also writes the summaries).
        max_history_tokens: when the history is longer than this before a turn, older turns are
            summarised; ``None`` never summarises.
        keep_last: turns kept verbatim when summarising (at least 1).

    Attributes:
        messages: the history: system prompt, then every turn's messages (and a summary).
        turns: the :class:`RunResult` of every turn, in order (kept when summarising).
        compressions: one :class:`HistoryCompressed` per summary made.
    """

    def __init__(
        self, agent: ConversationAgent, *, max_history_tokens: int | None = 6000, keep_last: int = 2
    ) -> None:
        if keep_last < 1:
            raise ConfigError("keep_last must be at least 1.")
        self.agent, self.max_history_tokens, self.keep_last = agent, max_history_tokens, keep_last
        self.messages: list[Message] = []
        self.turns: list[RunResult] = []
        self.compressions: list[HistoryCompressed] = []
        self._starts: list[int] = []  # index in messages of each verbatim turn's user message
        self.reset()

    def ask(self, text: str) -> RunResult:
        """Run one user turn on top of the history; returns that turn's :class:`RunResult`."""
        return last_result(self.iter(text))

    def iter(self, text: str) -> Iterator[Event]:
        """:meth:`ask`, one event at a time (a :class:`HistoryCompressed` event first when the
        history was summarised)."""
        compressed = self._compress()
        if compressed is not None:
            for callback in self.agent.callbacks:
                callback(compressed)
            yield compressed
        start = len(self.messages)
        for event in self.agent.iter(text, history=self.messages):
            if isinstance(event, RunFinished):
                self.messages = list(event.result.messages)
                self.turns.append(event.result)
                self._starts.append(start)
            yield event

    def reset(self) -> None:
        """Forget everything: back to the system prompt alone."""
        self.messages = [{"role": "system", "content": self.agent.system_prompt}]
        self.turns, self._starts, self.compressions = [], [], []

    def history_tokens(self) -> int:
        """The history's size in tokens: exact if the model has ``count_tokens``, else
        estimated (ASCII characters / 4, other characters 1 each)."""
        counter = getattr(self.agent.model, "count_tokens", None) or estimate_tokens
        return sum(counter(m["content"]) for m in self.messages)

    def to_dict(self) -> dict[str, Any]:
        return {
            "messages": self.messages, "turn_starts": self._starts,
            "turns": [t.to_dict() for t in self.turns],
        }

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the conversation (history and turns) to a JSON file, atomically."""
        write_atomically(Path(path), json.dumps(self.to_dict(), ensure_ascii=False, indent=2))

    @classmethod
    def load(
        cls, agent: ConversationAgent, path: str | os.PathLike[str], **options: Any
    ) -> Conversation:
        """A conversation saved with :meth:`save`, continued with ``agent`` (whose system prompt
        replaces the saved one).

        Raises:
            ConfigError: the file is missing or not a saved conversation.
        """
        saved = check_shape(_SavedConversation, read_json(Path(path)),
                            f"{path}: conversation")
        conversation = cls(agent, **options)
        conversation.messages = [{"role": m.role, "content": m.content} for m in saved.messages]
        conversation.messages[0] = {"role": "system", "content": agent.system_prompt}
        conversation._starts = list(saved.turn_starts)
        conversation.turns = [RunResult.from_dict(t, f"{path}: turns[{n}]")
                              for n, t in enumerate(saved.turns)]
        return conversation

    def _compress(self) -> HistoryCompressed | None:
        """Summarise the turns before the last ``keep_last`` if the history is over budget."""
        if self.max_history_tokens is None or len(self._starts) <= self.keep_last:
            return None
        before = self.history_tokens()
        if before <= self.max_history_tokens:
            return None
        cut = self._starts[-self.keep_last]
        old = self.messages[1:cut]
        request = [{"role": "user", "content": prompts.render(
            "conversation/summarize", conversation=transcript(old))}]
        try:
            summary = self.agent.model.complete(request).text.strip()
        except Exception as exc:  # ModelError or a backend bug: keep the history as it is
            event = HistoryCompressed(0, before, before, "", error=f"{type(exc).__name__}: {exc}")
            self.compressions.append(event)
            return event
        turns = len(self._starts) - self.keep_last
        kept = self.messages[cut:]
        self.messages = [
            self.messages[0],
            {"role": "user", "content": prompts.render("conversation/summary", summary=summary)},
            {"role": "assistant", "content": prompts.render(SUMMARY_ACK)},
            *kept,
        ]
        self._starts = [i - cut + 3 for i in self._starts[-self.keep_last:]]
        event = HistoryCompressed(turns, before, self.history_tokens(), summary)
        self.compressions.append(event)
        return event


def transcript(messages: list[Message]) -> str:
    """Messages as plain ``User:``/``Assistant:`` lines, for the summarising prompt."""
    names = {"user": "User", "assistant": "Assistant", "system": "System"}
    return "\n".join(f"{names.get(m['role'], m['role'])}: {m['content']}" for m in messages)


class _SavedConversation(Shape):
    """A file written by :meth:`Conversation.save`."""

    messages: Annotated[list[MessageShape], Field(min_length=1)]
    turn_starts: list[Count]
    turns: list[dict[str, Any]]
