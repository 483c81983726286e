"""The model backend protocol: a chat model takes OpenAI-style messages and returns text."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from ..types import Message, ModelReply

__all__ = [
    "STOP_SEQUENCES", "ChatModel", "Message", "ModelReply", "estimate_tokens", "fresh_state",
]

STOP_SEQUENCES = ("\nObservation", '\n{"thought"', "\n(the tool result", "\nUser:")
"""Where generation stops: small models go on to invent the observation and the next step after
their first JSON object (in the shapes of the prompt's examples). The parser would ignore that
text; stopping keeps it out of the history and saves its tokens and time. (The OpenAI API takes
at most four stop sequences.)"""


@runtime_checkable
class ChatModel(Protocol):
    """What the agent needs from a model. Any object with this method works.

    ``complete`` returns the reply to ``messages`` (a list of ``{"role", "content"}`` dicts, no
    ``tools=``) and raises :class:`react_agent.errors.ModelError` when the backend fails after its
    own retries.

    Optional methods the agent uses when present:

    - ``stream(messages) -> Iterator[str | ModelReply]``: the reply's text pieces as they are
      generated, then one :class:`ModelReply` for the whole reply (with usage);
    - ``acomplete(messages)`` / ``astream(messages)``: the same for asyncio;
    - ``count_tokens(text) -> int``: exact token counts (else characters / 4 is assumed);
    - ``reset()``: forget state carried between requests (a KV cache), so the next reply is a
      freshly loaded model's; `run --tasks` and `eval` call it before each task or item;
    - ``accepts_schema = True``: ``complete``/``stream`` take ``schema=`` (the JSON Schema of a
      valid reply, see :mod:`react_agent.engine`) and ``strict=`` (fail rather than fall back
      to plain prompting when the backend cannot constrain decoding);
    - ``accepts_answer_floor = True``: ``complete``/``stream`` take ``answer_floor=`` (a
      probability: the reply gives the final answer where the model gives that branch at least
      this much, see :mod:`react_agent.models._answer_floor`) and report what happened in
      ``ModelReply.answer_probability`` / ``answer_taken``;
    - ``accepts_choices = True``: ``choose(messages, choices)`` gives how likely the reply
      begins with each of ``choices`` (one word each), normalised over them, in
      ``ModelReply.choices``, without decoding a reply (a policy's yes-or-no question,
      ``Query.choices``);
    - ``small_model = True``: a small model that gets every small-model policy by default
      (:func:`react_agent.policies.default_policies`).
    """

    @property
    def name(self) -> str:
        """The model's name, for messages and traces (read-only: a plain attribute works too)."""

    def complete(self, messages: Sequence[Message]) -> ModelReply: ...


def fresh_state(model: object) -> None:
    """Call ``model.reset()`` when the model has one (the embedded model forgets its KV cache),
    so its next reply is the one a freshly loaded model gives; other models are left alone."""
    reset = getattr(model, "reset", None)
    if callable(reset):
        reset()


def estimate_tokens(text: str) -> int:
    """A rough token count for a backend that reports none: ASCII characters / 4 plus one per
    other character (CJK text runs about one token per character in common tokenizers)."""
    other = sum(1 for c in text if ord(c) > 127)
    return (len(text) - other + 3) // 4 + other
