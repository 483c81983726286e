"""Tests for react_agent.stream: the final answer's characters from a streamed reply."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from react_agent.stream import FinalAnswerStream


def feed_all(text: str, cuts: list[int]) -> tuple[str, FinalAnswerStream]:
    stream, out, last = FinalAnswerStream(), "", 0
    for cut in [*sorted({c for c in cuts if 0 < c < len(text)}), len(text)]:
        out += stream.feed(text[last:cut])
        last = cut
    return out, stream


@settings(max_examples=300, deadline=None)
@given(
    answer=st.text(max_size=60),
    thought=st.text(max_size=30),
    ascii_only=st.booleans(),
    cuts=st.lists(st.integers(min_value=0, max_value=400), max_size=40),
)
def test_any_answer_under_any_chunking_streams_exactly(
    answer: str, thought: str, ascii_only: bool, cuts: list[int]
) -> None:
    reply = json.dumps({"thought": thought, "action": {"final_answer": answer}},
                       ensure_ascii=ascii_only)
    out, stream = feed_all(reply, cuts)
    assert out == answer == stream.answer
    assert stream.done


def test_a_tool_call_streams_no_answer() -> None:
    reply = '{"thought": "the \\"final_answer\\": comes later", ' \
        '"action": {"name": "f", "args": {}}}'
    out, stream = feed_all(reply, list(range(0, len(reply), 3)))
    assert out == "" and not stream.done


def test_text_after_the_answer_is_ignored() -> None:
    out, _ = feed_all('{"action": {"final_answer": "yes"}}\n{"final_answer": "no"}', [5, 30])
    assert out == "yes"
