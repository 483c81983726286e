"""Streaming helpers: the final answer's characters as the model writes them.

Peers' users ask for an answer-only stream (the text of the final answer without the JSON around
it) so that a chat UI can show it as it is generated. :class:`FinalAnswerStream` is fed the raw
reply piece by piece and returns the new characters of the string at the answer's place in the
envelope, ``action.final_answer``, decoded as :func:`~react_agent.parsing.parse_reply` decodes
them. A key of that name anywhere else (a tool argument, a nested object) is not the answer and
streams nothing.

The reply is read one character at a time, each once (a value that turns out to be prose is
read again from its next brace, within a bound that keeps the cost linear), and what is handed
out depends only on the characters read so far: however the reply is cut into pieces, the
stream hands out the same text. It hands out only text that is certain to begin the answer
``parse_reply`` finds:

- the envelope must stand where the parser takes it: first on its line (also in a fence, after
  ``<tool_call>``, or after a label such as ``Action:`` or a finished sentence), not quoted in
  a sentence or a ``Thought:`` line (the words before a value are read with the parser's
  vocabulary, :mod:`~react_agent.parsing._vocabulary`); a leading ``<think>`` block is
  skipped; JSON data that is no envelope is passed over; nothing after a ReAct
  ``Action: tool`` line is read;
- in the answer, a word holding a backslash is held back until it ends (a raw ``\\d`` or a
  Windows path keeps its backslashes, as the parser keeps them), and so is an answer that may
  still turn out to be a placeholder (``<the answer ...>``, ``...``) or a worked example of the
  instructions copied back;
- a JSON error ends the stream where it stands (the parser may still repair the reply; the
  answer it finds then begins with what was handed out).

Once the envelope is whole it is read as the parser reads it (its envelope reading, its
placeholders), and the rest of that answer is handed out: so an answer under an alias key
(``"answer"``), a number or an object, or a top-level ``final_answer`` comes whole at that
point. Replies only the repair can read (Python-style quotes, unescaped inner quotes, ReAct
text) stream what comes before the first JSON error, possibly nothing; a reply that is cut off
or holds two answers may have streamed the first one's start. The parsed ``final_answer`` stays
the authoritative text (:meth:`~react_agent.Agent.stream_answer` sends what was not streamed
when the reply is whole).
"""

from __future__ import annotations

import json
import re
from typing import Any

from ._envelope import FINAL_KEYS, NAME_KEYS, Shape, interpret
from ._escapes import decode_string, has_unknown_escape
from ._load import FAIL, load_or_repair
from ._placeholders import may_become_never_an_answer, never_an_action, never_an_answer
from ._vocabulary import (
    DECORATION,
    LABEL_END,
    TAG,
    THINK_CLOSE,
    THINK_OPEN,
    THOUGHT_LABEL,
    without_lone_surrogates,
)

_THINK_CLOSE = re.compile(re.escape(THINK_CLOSE), re.IGNORECASE)
_REACT_LINE = re.compile(  # ReAct text the parser reads as the action ahead of any JSON after it
    r"(?:^|(?<=[.!?。]))[ \t]*(?:Action[ \t]*:[ \t]*[A-Za-z_]|Final[ \t]+Answer[ \t]*:)",
    re.IGNORECASE | re.MULTILINE,
)
_LINE_CONTEXT = 200  # characters before a brace that decide whether it starts its line
_QUOTE_CHARS = "\"'“”‘’„"
_WORK_PER_CHARACTER = 8  # reading again from later braces stops past this many reads a character
_DRIVE = re.compile(r"[A-Z](?::)?")  # what may begin "C:\\" (the answer is then a raw path)
_PATH_START = re.compile(r"[A-Z]:\\")
_LITERAL_RUN = re.compile(r"[-+.0-9A-Za-z]+")
_LITERAL = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?|true|false|null")
_STRING_RUN = re.compile(r'[^"\\]+')
_SPACE = re.compile(r"\s")


class FinalAnswerStream:
    """Incremental reader of ``{"thought": ..., "action": {"final_answer": "..."}}`` replies.

    ``feed(delta) -> str`` returns the newly known answer characters (often ``""``); any text,
    cut anywhere, gives the same characters in all, and never raises.

    Attributes:
        text: everything fed so far.
        answer: the answer characters returned so far.
        done: nothing more will be handed out (the envelope is whole, or the reply is a tool
            call, or the stream stopped); further pieces return ``""``.
    """

    def __init__(self) -> None:
        self._text = ""
        self._answer = ""
        self.done = False
        self._pos = 0  # the next character to look at
        self._mode = "start"  # start -> (think ->) seek <-> value
        self._checked = 0  # lines before this were checked for ReAct text
        self._value: _Value | None = None  # the JSON value being read
        self._final: str | None = None  # the answer, once its envelope is whole
        self._work = 0  # characters read by values, reading again included

    @property
    def text(self) -> str:
        return self._text

    @property
    def answer(self) -> str:
        return self._answer

    def feed(self, delta: str) -> str:
        # (the text grows in place: no other reference to it is kept between calls)
        text, self._text = self._text, ""
        text += delta
        self._text = text
        del text
        if self.done:
            return ""
        self._run()
        piece = self._new_characters()
        if piece:
            given, self._answer = self._answer, ""
            given += piece
            self._answer = given
        return piece

    def _new_characters(self) -> str:
        if self._final is not None:  # the whole envelope, read as the parser reads it
            given = self._answer
            return self._final[len(given):] if self._final.startswith(given) else ""
        answer = self._value.answer if self._value is not None else None
        return answer.take() if answer is not None else ""

    # -- finding the envelope ----------------------------------------------------------------
    def _run(self) -> None:
        while not self.done:
            if self._mode == "start":
                ready = self._start()
            elif self._mode == "think":
                ready = self._skip_think()
            elif self._mode == "seek":
                ready = self._seek()
            else:
                ready = self._read_value()
            if not ready:
                return

    def _start(self) -> bool:
        """Past a BOM and spaces; into a leading ``<think>`` block, if there is one."""
        text = self._text
        body = text.lstrip("\ufeff").lstrip()
        head = body[:len(THINK_OPEN)].lower()
        if not body or (len(body) < len(THINK_OPEN) and THINK_OPEN.startswith(head)):
            return False  # not yet known
        self._pos = len(text) - len(body)
        if head == THINK_OPEN:
            self._pos += len(THINK_OPEN)
            self._mode = "think"
        else:
            self._mode = "seek"
        self._checked = self._pos
        return True

    def _skip_think(self) -> bool:
        close = _THINK_CLOSE.search(self._text, self._pos)
        if close is None:
            self._pos = max(self._pos, len(self._text) - len(THINK_CLOSE))
            return False
        self._pos = self._checked = close.end()
        self._mode = "seek"
        return True

    def _seek(self) -> bool:
        """To the next ``{`` or ``[``; ``False`` to wait for more text."""
        text = self._text
        brace = _next_opener(text, self._pos)
        if brace == -1:
            self._pos = len(text)
            return False
        low = max(self._checked, brace - _LINE_CONTEXT)
        newline = text.rfind("\n", low, brace)
        # (no line break: the line began where reading began, or it is too long to tell)
        line_start = newline + 1 if newline != -1 else (low if low == self._checked else -1)
        if _REACT_LINE.search(text, self._checked, max(self._checked, line_start)):
            self.done = True  # the parser reads that ReAct text as the action
            return False
        self._checked = max(self._checked, line_start)
        # A value that does not start its line (prose before it) is read too, quietly: the
        # values inside it are never the action, and if it is one, it may be quoted.
        on_its_line = line_start >= 0 and _starts_its_line(text[line_start:brace])
        self._value = _Value(brace, quiet=not on_its_line)
        self._mode = "value"
        return True

    def _read_value(self) -> bool:
        value = self._value
        assert value is not None
        before = value.pos
        finished = value.read(self._text)
        self._work += value.pos - before
        if not finished:
            return False
        if value.failed:
            if (value.answer is not None and value.answer.size) or _opens_json(self._text,
                                                                              value.start):
                self.done = True  # JSON that broke: the parser may repair it; stop here
                return False
            self._restart(value.start + 1)  # a brace in prose
        else:
            outcome, final = _outcome(self._text[value.start:value.pos])
            if outcome == "skip":  # JSON data, a thought alone, a placeholder: search on
                self._restart(value.pos)
            else:  # the action (a tool call, an unusable one, or the final answer)
                self._final = None if value.quiet else final
                self.done = True
                return False
        if self._work > _WORK_PER_CHARACTER * len(self._text) + 10_000:
            self.done = True  # (only an adversarial reply reads this much again)
        return True

    def _restart(self, pos: int) -> None:
        self._value = None
        self._pos = pos
        self._mode = "seek"


def _outcome(raw: str) -> tuple[str, str | None]:
    """What the parser makes of the whole JSON value ``raw``: ``("skip", None)`` for one it
    passes over (no envelope, a thought alone, a placeholder or an example), ``("answer",
    text)``, or ``("stop", None)`` (a tool call, an unusable action)."""
    try:
        value, _, _ = load_or_repair(raw)
        reply = None if value is FAIL else interpret(value, "direct", ())
    except Shape as shape:
        return ("skip" if shape.kind == "no_action" else "stop"), None
    except RecursionError:
        return "stop", None
    if value is FAIL or reply is None or never_an_action(reply):  # (FAIL: nested too deeply)
        return "skip", None
    if reply.final_answer is None:
        return "stop", None
    answer = reply.final_answer
    if "\\u" in raw or "\\U" in raw:
        answer = without_lone_surrogates(answer)
    return "answer", answer


def _next_opener(text: str, pos: int) -> int:
    brace, bracket = text.find("{", pos), text.find("[", pos)
    if brace == -1 or (bracket != -1 and bracket < brace):
        return bracket
    return brace


def _next_significant(text: str, i: int) -> str:
    while i < len(text) and text[i].isspace():
        i += 1
    return text[i] if i < len(text) else ""


def _opens_json(text: str, brace: int) -> bool:
    """The value at ``brace`` began like JSON (a quote first), not like a brace in prose."""
    nxt = _next_significant(text, brace + 1)
    return nxt != "" and nxt in _QUOTE_CHARS


def _starts_its_line(before: str) -> bool:
    """The text before a value on its line lets the parser take the value as the action:
    nothing, a tag or decoration, or a label or sentence that ends before it (not a
    ``Thought:`` line, not JSON around it). A fence opened on the value's line is words before
    it (the parser may find the value quoted), so such a value streams nothing."""
    before = TAG.sub("", before).strip(DECORATION)
    if not before:
        return True
    return (before.endswith(LABEL_END) and not THOUGHT_LABEL.match(before)
            and not any(c in before for c in '{["'))


# -- reading one JSON value --------------------------------------------------------------------
class _Value:
    """A JSON value read as far as it is written (strict JSON, raw control characters and any
    backslash escape allowed in strings), whether its action is a call (``action``), and its
    answer string."""

    def __init__(self, start: int, *, quiet: bool = False) -> None:
        self.start = self.pos = start
        self.quiet = quiet  # read to find its end and what it is; no answer streams from it
        self.stack: list[list[Any]] = []  # [bracket, what comes next, key]
        self.string: _String | None = None  # the string being read
        self.failed = False
        self.action = ""  # "call" or "other" once the action is known not to be an answer
        self.answer: _Answer | None = None

    def read(self, text: str) -> bool:
        """Read on; ``True`` when the value is whole or broken (``failed``)."""
        n = len(text)
        while self.pos < n:
            if self.string is not None:
                if not self._read_string(text):
                    return False
                if not self.stack:
                    return True
                continue
            c = text[self.pos]
            if c.isspace():
                self.pos += 1
                continue
            frame = self.stack[-1] if self.stack else None
            expect = frame[1] if frame is not None else "value"
            if expect == "value" or expect == "value?":
                if c == "]" and expect == "value?":
                    self._close()
                elif not self._start_value(text, c):
                    return self.failed
            elif frame is not None and (
                (c == "}" and frame[0] == "{" and expect in ("key?", "next"))
                or (c == "]" and frame[0] == "[" and expect == "next")
            ):
                self._close()
            elif c == "," and expect == "next":
                assert frame is not None
                frame[1] = "key" if frame[0] == "{" else "value"
                self.pos += 1
            elif c == ":" and expect == "colon":
                assert frame is not None
                frame[1] = "value"
                self.pos += 1
            elif c == '"' and expect in ("key?", "key"):
                self.string = _String(self.pos + 1, key=True)
                self.pos += 1
            else:
                self.failed = True
                return True
            if not self.stack:
                return True
        return False

    def _start_value(self, text: str, c: str) -> bool:
        """Begin the value at ``pos``; ``False`` if it is not one yet (wait) or never (failed)."""
        depth = len(self.stack)
        role = self._role(depth, c)
        if c in "{[":
            self.stack.append([c, "key?" if c == "{" else "value?", None])
            self.pos += 1
        elif c == '"':
            answer = role == "answer" and not self.quiet
            if answer:
                self.answer = _Answer(self.pos + 1)
            self.string = _String(self.pos + 1, key=False, answer=self.answer if answer else None)
            self.pos += 1
        else:
            run = _LITERAL_RUN.match(text, self.pos)
            if run is None or not _LITERAL.fullmatch(run.group()):
                if run is not None and run.end() == len(text):
                    return False  # "tr", "-1" ...: more may come
                self.failed = True
                return False
            if run.end() == len(text):
                return False
            self.pos = run.end()
            self._after_value()
        return True

    def _role(self, depth: int, c: str) -> str:
        """What the value starting now is to the envelope; notes a call or another action."""
        stack = self.stack
        if depth == 1 and stack[0][2] == "action" and not self.action and self.answer is None:
            if c != "{":
                self.action = "other" if c != "[" else "call"
            return ""
        in_action = (depth == 2 and stack[0][2] == "action" and stack[1][0] == "{")
        if in_action and stack[1][2] in FINAL_KEYS and not self.action and c == '"':
            return "answer" if self.answer is None else ""
        return ""

    def _close(self) -> None:
        self.stack.pop()
        self.pos += 1
        self._after_value()

    def _after_value(self) -> None:
        if self.stack:
            self.stack[-1][1] = "next"

    def _read_string(self, text: str) -> bool:
        """Read the current string on; ``True`` once it is closed."""
        string = self.string
        assert string is not None
        end = string.read(text, self.pos)
        self.pos = string.pos
        if end is None:
            return False
        self.string = None
        if string.key:
            key = decode_string(text[string.start:end])
            frame = self.stack[-1]
            frame[1], frame[2] = "colon", key
            if (len(self.stack) == 2 and self.stack[0][2] == "action" and key in NAME_KEYS
                  and self.answer is None):
                self.action = "call"
        else:
            self._after_value()
        return True


class _String:
    """A JSON string being read: where its text starts, and where reading stands."""

    def __init__(self, start: int, *, key: bool, answer: _Answer | None = None) -> None:
        self.start = self.pos = start
        self.key = key
        self.answer = answer

    def read(self, text: str, pos: int) -> int | None:
        """Read from ``pos``; the index of the closing quote, or ``None`` (more is needed)."""
        n = len(text)
        while pos < n:
            run = _STRING_RUN.match(text, pos)
            if run is not None:
                pos = run.end()
                continue
            if text[pos] == "\\":
                if pos + 1 >= n:
                    break
                pos += 2
                continue
            self.pos = pos + 1  # past the closing quote
            if self.answer is not None:
                self.answer.extend(text, pos, closed=True)
            return pos
        self.pos = pos
        if self.answer is not None:
            self.answer.extend(text, pos, closed=False)
        return None


class _Answer:
    """The answer string's text as written so far, and the part of it decoded for certain.

    Text without backslashes is the answer as it stands (raw control characters included). A
    word holding a backslash is decoded once it ends: with JSON's escapes only, as JSON decodes
    it (half a surrogate pair becomes U+FFFD, as the parser makes it); with one JSON does not
    know (``\\d``, ``\\x41``) the parser keeps backslashes by rules that look at the whole
    reply, so the rest waits for the envelope to be whole. So does an answer that starts like a
    Windows path (``C:\\``).
    """

    def __init__(self, start: int) -> None:
        self.start = self.end = self.safe = start  # text[start:end] read; [start:safe] decoded
        self.closed = False
        self.hold = False  # the rest waits for the envelope to be whole
        self.pieces: list[str] = []  # the decoded text
        self.size = 0
        self.given = 0  # pieces handed out
        self.word_end_from = start  # where to look on for the end of the word being held

    def extend(self, text: str, end: int, *, closed: bool) -> None:
        self.end, self.closed = end, closed
        if self.hold:
            return
        if self.safe == self.start:
            head = text[self.start:min(end, self.start + 3)]
            if not closed and len(head) < 3 and _DRIVE.fullmatch(head):
                return  # "C", "C:" may begin a path
            if _PATH_START.match(text, self.start, end):
                self.hold = True
                return
        while True:
            slash = text.find("\\", self.safe, end)
            if slash == -1:
                self._add(text[self.safe:end])
                self.safe = end
                return
            space = _SPACE.search(text, max(slash, self.word_end_from), end)
            if space is None and not closed:
                self._add(text[self.safe:slash])
                self.safe, self.word_end_from = slash, end
                return  # the word goes on
            word_end = space.start() if space is not None else end
            word = text[slash:word_end]
            self._add(text[self.safe:slash])
            self.safe = slash
            if has_unknown_escape(word):
                self.hold = True
                return
            self._add(_decoded(word))
            self.safe = self.word_end_from = word_end

    def _add(self, piece: str) -> None:
        if piece:
            self.pieces.append(piece)
            self.size += len(piece)

    def take(self) -> str:
        """The decoded text not handed out yet, once it is certain (``""`` while it may still
        turn out to be a placeholder or an example, and for one)."""
        if self.size <= 1000:  # (no placeholder and no example is longer)
            text = "".join(self.pieces)
            if self.closed and not self.hold:
                if never_an_answer(text):
                    return ""
            elif may_become_never_an_answer(text):
                return ""
        piece = "".join(self.pieces[self.given:])
        self.given = len(self.pieces)
        return piece


def _decoded(raw: str) -> str:
    """A string's text as written (``raw``, JSON's escapes only), decoded as the parser
    decodes it (half a surrogate pair becomes U+FFFD)."""
    text: str = json.loads(f'"{raw}"', strict=False)
    if "\\u" in raw:
        text = without_lone_surrogates(text)
    return text
