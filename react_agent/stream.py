"""Streaming helpers: the final answer's characters as the model writes them.

Peers' users ask for an answer-only stream (the text of ``final_answer`` without the JSON around
it) so that a chat UI can show it as it is generated. :class:`FinalAnswerStream` is fed the raw
reply piece by piece and returns the decoded characters of the ``"final_answer": "..."`` string
as soon as they are known (JSON escapes included, even when split across pieces).
"""

from __future__ import annotations

import re

_KEY = re.compile(r'"final_answer"\s*:\s*"')
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", '"': '"', "\\": "\\", "/": "/"}


class FinalAnswerStream:
    """Incremental extractor of the ``final_answer`` string from a streamed JSON reply.

    ``feed(delta) -> str`` returns the newly known answer characters (often ``""``). Only the
    canonical ``"final_answer": "..."`` form is streamed; other shapes the parser accepts
    (aliases, Python-style quotes) yield nothing here, and the parsed ``RunResult.final_answer``
    stays the authoritative text.
    """

    def __init__(self) -> None:
        self.text = ""
        self.answer = ""
        self.done = False
        self._cursor: int | None = None

    def feed(self, delta: str) -> str:
        self.text += delta
        if self.done:
            return ""
        if self._cursor is None:
            # the key can straddle pieces: look back a little before the new piece
            match = _KEY.search(self.text, max(0, len(self.text) - len(delta) - 32))
            if match is None:
                return ""
            self._cursor = match.end()
        out: list[str] = []
        text, i = self.text, self._cursor
        while i < len(text):
            char = text[i]
            if char == '"':
                self.done = True
                break
            if char != "\\":
                out.append(char)
                i += 1
                continue
            if i + 1 >= len(text):
                break  # an escape cut by the piece boundary: wait for the rest
            code = text[i + 1]
            if code == "u":
                size = 12 if _high(text, i) else 6
                if i + size > len(text):
                    break  # wait for the whole \\uXXXX (or surrogate pair)
                out.append(_decode_u(text[i : i + size]))
                i += size
            else:
                out.append(_ESCAPES.get(code, code))
                i += 2
        self._cursor = i
        piece = "".join(out)
        self.answer += piece
        return piece


def _high(text: str, i: int) -> bool:
    """``text[i:]`` starts a ``\\uD800``-``\\uDBFF`` escape (the first half of a pair)."""
    return text[i + 2 : i + 4].lower() in ("d8", "d9", "da", "db")


def _decode_u(escape: str) -> str:
    try:
        return escape.encode("ascii").decode("unicode_escape").encode(
            "utf-16", "surrogatepass"
        ).decode("utf-16")
    except (UnicodeError, ValueError):
        return escape
