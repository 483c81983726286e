"""Streaming helpers: the final answer's characters as the model writes them.

Peers' users ask for an answer-only stream (the text of the final answer without the JSON around
it) so that a chat UI can show it as it is generated. :class:`FinalAnswerStream` is fed the raw
reply piece by piece; it reads the reply's JSON object as far as it is written (``jiter``'s
partial mode, which also decodes escapes only once they are whole) and returns the new
characters of the string at the answer's place in the envelope, ``action.final_answer``. A key
of that name anywhere else (a tool argument, a nested object) is not the answer and streams
nothing.
"""

from __future__ import annotations

import json
from typing import Any

import jiter

_DECODER = json.JSONDecoder()


class FinalAnswerStream:
    """Incremental reader of ``{"thought": ..., "action": {"final_answer": "..."}}`` replies.

    ``feed(delta) -> str`` returns the newly known answer characters (often ``""``). The JSON
    object starts at the reply's first ``{`` that begins valid JSON (prose or a Markdown fence
    before it is skipped); text after the object is ignored. Only the canonical envelope is
    streamed: other shapes the parser accepts (aliases, Python-style quotes, ReAct text) yield
    nothing here, and the parsed ``RunResult.final_answer`` stays the authoritative text.

    Attributes:
        text: everything fed so far.
        answer: the answer characters returned so far.
        done: the JSON object is complete; further pieces return ``""``.
    """

    def __init__(self) -> None:
        self.text = ""
        self.answer = ""
        self.done = False
        self._start: int | None = None  # where the JSON object begins
        self._search = 0  # where to look for it

    def feed(self, delta: str) -> str:
        self.text += delta
        if self.done:
            return ""
        answer = _answer_in(self._envelope())
        if answer is None or not answer.startswith(self.answer):
            return ""
        piece = answer[len(self.answer):]
        self.answer = answer
        return piece

    def _envelope(self) -> Any:
        """The reply's JSON object as far as it is written (``None`` before its ``{``)."""
        while True:
            start = self.text.find("{", self._search) if self._start is None else self._start
            if start < 0:
                return None
            self._start, body = start, self.text[start:]
            try:
                value, _ = _DECODER.raw_decode(body)
            except ValueError:
                pass
            else:
                self.done = True
                return value
            try:
                return jiter.from_json(body.encode(), partial_mode="trailing-strings")
            except ValueError:  # this brace opens no JSON (prose): try the next one
                self._start, self._search = None, start + 1


def _answer_in(envelope: Any) -> str | None:
    """The string at ``action.final_answer``, if the envelope has one there."""
    action = envelope.get("action") if isinstance(envelope, dict) else None
    answer = action.get("final_answer") if isinstance(action, dict) else None
    return answer if isinstance(answer, str) else None
