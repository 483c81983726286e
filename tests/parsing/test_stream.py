"""Tests for react_agent.parsing._stream: the final answer's characters from a streamed reply."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from react_agent import Agent, OutputParseError, ScriptedModel, Toolbox, parse_reply
from react_agent.parsing._stream import FinalAnswerStream
from react_agent.policies import default_policies


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
    try:  # exactly the answer the parser finds (none for a placeholder such as "...")
        parsed = parse_reply(reply).final_answer
    except OutputParseError:
        parsed = None
    assert out == (parsed or "") == stream.answer
    assert stream.done or parsed is None


@pytest.mark.parametrize("answer", ["...", "<the answer for the user>", " <answer> "])
def test_a_placeholder_answer_streams_nothing(answer: str) -> None:
    reply = json.dumps({"thought": "t", "action": {"final_answer": answer}})
    out, _ = feed_all(reply, list(range(len(reply))))
    assert out == ""
    with pytest.raises(OutputParseError):
        parse_reply(reply)


@pytest.mark.parametrize(
    ("reply", "answer"),
    [
        ('{"thought": "t", "action": {"final_answer": "Use \\d+ now"}}', "Use \\d+ now"),
        ('{"thought": "t", "action": {"final_answer": "x\\d\\n y\\n z"}}', "x\\d\\n y\n z"),
        ('{"thought": "t", "action": {"final_answer": "D:\\new\\x"}}', "D:\\new\\x"),
    ],
    ids=["unknown-escape", "raw-word-then-escape", "raw-path"],
)
def test_backslashes_stream_as_the_parser_reads_them(reply: str, answer: str) -> None:
    """A word with an escape JSON does not know keeps its backslashes (the parser's rule), so
    the stream holds such words back; the text was once cut differently at each chunking."""
    assert parse_reply(reply).final_answer == answer
    for step in (1, 2, 3, 7, len(reply)):
        out, _ = feed_all(reply, list(range(0, len(reply), step)))
        assert out == answer


def test_a_draft_answer_in_reasoning_never_streams() -> None:
    reply = ('<think>maybe {"thought": "x", "action": {"final_answer": "DRAFT"}}</think>\n'
             '{"thought": "t", "action": {"name": "f", "args": {}}}')
    out, stream = feed_all(reply, list(range(0, len(reply), 3)))
    assert out == "" and stream.done


def test_nesting_deeper_than_the_stack_is_no_crash() -> None:
    reply = "[" * 5000 + "]" * 5000 + '\n{"thought": "t", "action": {"final_answer": "ok"}}'
    out, _ = feed_all(reply, list(range(0, len(reply), 50)))
    assert out == "ok"


def test_a_tool_call_streams_no_answer() -> None:
    reply = '{"thought": "the \\"final_answer\\": comes later", ' \
        '"action": {"name": "f", "args": {}}}'
    out, stream = feed_all(reply, list(range(0, len(reply), 3)))
    assert out == "" and stream.answer == "" and stream.done  # the object closed, no answer


def test_text_after_the_answer_is_ignored() -> None:
    out, _ = feed_all('{"action": {"final_answer": "yes"}}\n{"final_answer": "no"}', [5, 30])
    assert out == "yes"


@pytest.mark.parametrize(
    "reply",
    [
        # a tool argument of that name is not the answer
        '{"thought": "t", "action": {"name": "save", "args": {"final_answer": "DRAFT"}}}',
        # nor is a key at the top level or in another object
        '{"thought": "t", "final_answer": "DRAFT", "action": {"name": "f", "args": {}}}',
        '{"thought": "t", "notes": {"final_answer": "DRAFT"}, "action": {"name": "f", "args": {}}}',
        # a list of actions holds tool calls only
        '{"thought": "t", "action": [{"final_answer": "DRAFT"}]}',
    ],
)
def test_only_the_answer_at_its_place_in_the_envelope_streams(reply: str) -> None:
    out, stream = feed_all(reply, list(range(0, len(reply), 4)))
    assert out == "" and stream.answer == ""


@pytest.mark.parametrize(
    "before", ["", "Sure! {not json} here it is:\n", "```json\n", "<think>x</think>\n"]
)
def test_the_envelope_may_follow_prose_or_a_fence(before: str) -> None:
    reply = before + '{"thought": "t", "action": {"final_answer": "Paris, 18 °C"}}\n```'
    out, stream = feed_all(reply, list(range(0, len(reply), 3)))
    assert out == "Paris, 18 °C" and stream.done


INLINE = '{"thought": "t", "action": {"final_answer": "Paris, 18 °C"}}'


@pytest.mark.parametrize(
    "reply",
    [
        "```json " + INLINE + " as you asked.",  # the parser: quoted in a sentence
        "~~~json " + INLINE + " as you asked.",
        "> ```json " + INLINE + " as you asked.",
        "```json " + INLINE + "```",  # the parser: fenced
        "```json " + INLINE + "\n```",
        "`" + INLINE + "` is the reply.",
    ],
    ids=["backticks-then-words", "tildes-then-words", "quoted-fence-then-words", "inline-fence",
         "fence-line", "code-span"],
)
def test_a_value_on_a_fence_line_streams_only_what_the_parser_reads(reply: str) -> None:
    """The stream and the parser read the words before a value with the same decoration: a
    fence opened on the value's line is words before it, and the parser may find the value
    quoted (the stream once handed out its answer as if the fence stood on a line of its own)."""
    try:
        parsed = parse_reply(reply).final_answer
    except OutputParseError:
        parsed = None
    out, _ = feed_all(reply, list(range(0, len(reply), 2)))
    assert (parsed or "").startswith(out)
    assert out == "" or parsed is not None


def test_stream_answer_skips_a_tool_argument_named_final_answer() -> None:
    toolbox = Toolbox()
    toolbox.add(lambda final_answer: "saved", name="save", description="Save a draft.")
    replies = ['{"thought": "t", "action": {"name": "save", "args": {"final_answer": "DRAFT"}}}',
               '{"thought": "t", "action": {"final_answer": "Saved it."}}']
    agent = Agent(ScriptedModel(replies, chunk_chars=3), toolbox,
                  policies=default_policies(off=["review"]))
    assert "".join(agent.stream_answer("save a draft")) == "Saved it."
