"""The words and marks of a reply that both readers know: :func:`~react_agent.parsing.parse_reply`
and the streamed :class:`~react_agent.parsing.FinalAnswerStream` decide with these where a
reply's reasoning ends and whether a JSON value stands where an action may stand, so that the
stream hands out only what the parser then reads.
"""

from __future__ import annotations

import re

THINK_OPEN, THINK_CLOSE = "<think>", "</think>"
"""The tags around a reasoning block (matched case-insensitively)."""

TAG = re.compile(r"<[^<>\n]{1,40}>")
"""A tag on the line of a value (``<tool_call>``): no prose, removed before the line is read."""

DECORATION = " \t*_`>#•-"
"""Markdown around a value on its line (bullets, emphasis, a quote mark, a code span's backtick):
no prose, stripped from both ends of what stands before it."""

SENTENCE_END = (".", "!", "?", "。", "！", "？")
"""What ends a sentence: a value after one is not quoted inside it."""

LABEL_END = (":", "：", *SENTENCE_END)
"""What ends the words before a value that may be the action (a label such as ``Action:``, or
a sentence)."""

THOUGHT_LABEL = re.compile(r"Thought[ \t]*[:：]", re.IGNORECASE)
"""A ``Thought:`` line's label: a value on that line is quoted in the thought, never the
action (``match`` at the start of what stands before the value)."""

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def without_lone_surrogates(text: str) -> str:
    """``text`` with each half of a UTF-16 surrogate pair (what an escape such as ``"\\ud800"``
    decodes to, and no text can be encoded with) replaced by U+FFFD."""
    return _LONE_SURROGATE.sub("\ufffd", text)
