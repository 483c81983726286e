"""A conformance suite for reading replies, modelled on vLLM's tool-parser tests
(``tests/tool_parsers/common_tests.py``: no calls, one call, parallel calls, typed arguments, empty
arguments, surrounding text, escaped strings, malformed input, and the same result however a
streamed reply is cut into chunks), written for this protocol.

Each table row is a reply and what it is: ``Calls(...)`` (the tool calls, in order),
``Answer(text)`` (the final answer, no calls) or ``ERROR`` (an ``OutputParseError`` whose message
tells the model what to send). Every row of every table is checked twice:

- by :func:`parse_reply` (the non-streaming reader);
- streamed through :class:`FinalAnswerStream` cut every way (the whole reply at once, one
  character at a time, every cut into two pieces, and seeded random cuts): it must never raise,
  hand out the same text however the reply is cut, hand out nothing of a reply that is a tool
  call, and hand out exactly the final answer ``parse_reply`` finds (``stream="prefix"`` marks
  the rows whose envelope only the repair can read: the stream stops at the first JSON error,
  so what it hands out is a beginning of the answer, possibly empty, and the agent sends the
  rest once the reply is whole).

Differences from vLLM's protocol: a reply without an action is an error fed back to the model,
not content returned to the user (``NO_ACTION``); calls carry no ids.
"""

from __future__ import annotations

import json
import random
import zlib
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import actions, fuzz_replies

from react_agent import OutputParseError, parse_reply
from react_agent.parsing import FinalAnswerStream


@dataclass(frozen=True)
class Calls:
    calls: tuple[tuple[str, dict[str, Any]], ...]

    def __init__(self, *calls: tuple[str, dict[str, Any]]) -> None:
        object.__setattr__(self, "calls", tuple(calls))


@dataclass(frozen=True)
class Answer:
    text: str
    stream: str = "exact"  # or "prefix": only a beginning (maybe nothing) is streamed


@dataclass(frozen=True)
class Error:
    kind: str | None = None  # the OutputParseError kind, when the row pins it


ERROR = Error()


@dataclass
class Table:
    rows: list[tuple[str, str, Any]] = field(default_factory=list)

    def add(self, id: str, reply: str, expected: Any) -> None:
        self.rows.append((id, reply, expected))


def env(action: Any, thought: str | None = "Next step.") -> str:
    body = {"thought": thought, "action": action} if thought is not None else {"action": action}
    return json.dumps(body, ensure_ascii=False)


PART = {"name": "lookup_part", "args": {"part": "M6 bolt"}}
SHELF = {"name": "shelf_stock", "args": {"aisle": 4, "bin": "B-12"}}
LIST = {"name": "list_shelves", "args": {}}

# -- no action: plain content is an error for the model to fix (vLLM: "no tool calls") ---------
NO_ACTION = Table()
NO_ACTION.add("prose", "The bolts are usually in the second aisle.", Error("no_json"))
NO_ACTION.add("prose-cjk", "螺栓通常放在第二排货架上。", Error("no_json"))
NO_ACTION.add("markdown-list", "- check aisle 4\n- then bin B-12", ERROR)
NO_ACTION.add("python-code", "```python\nshelf_stock(aisle=4)\n```", Error("code"))
NO_ACTION.add("json-data", '{"aisle": 4, "bin": "B-12"}', Error("unknown_shape"))
NO_ACTION.add("thought-only", '{"thought": "I should look at aisle 4."}', Error("no_action"))
NO_ACTION.add("empty", "", Error("empty"))
NO_ACTION.add("whitespace", " \n\t ", Error("empty"))
NO_ACTION.add("think-only", "<think>aisle 4, maybe</think>", Error("no_action"))
NO_ACTION.add("prose-with-braces", "Fill in {part} and {bin} later.", ERROR)

# -- the final answer (no tool calls) ----------------------------------------------------------
FINAL = Table()
FINAL.add("canonical", env({"final_answer": "Bin B-12 holds 40 bolts."}),
          Answer("Bin B-12 holds 40 bolts."))
FINAL.add("fenced", "```json\n" + env({"final_answer": "Forty."}) + "\n```", Answer("Forty."))
FINAL.add("after-prose", "Here you go:\n" + env({"final_answer": "Forty."}), Answer("Forty."))
FINAL.add("after-think", "<think>count {them} \"twice\"</think>\n" + env({"final_answer": "40"}),
          Answer("40"))
FINAL.add("multiline-unicode", env({"final_answer": "Aisle 4:\n- B-12: 40 × M6\n- B-13: 約十件"}),
          Answer("Aisle 4:\n- B-12: 40 × M6\n- B-13: 約十件"))
FINAL.add("pretty", json.dumps({"thought": "t", "action": {"final_answer": "Forty."}}, indent=2),
          Answer("Forty."))
FINAL.add("number", env({"final_answer": 40.5}), Answer("40.5"))
FINAL.add("object", env({"final_answer": {"bin": "B-12", "count": 40}}),
          Answer('{"bin": "B-12", "count": 40}'))
FINAL.add("alias-answer", env({"answer": "Forty."}), Answer("Forty."))
FINAL.add("top-level", '{"thought": "t", "final_answer": "Forty."}', Answer("Forty."))
FINAL.add("react-marker", "Thought: counted.\nFinal Answer: Forty bolts.",
          Answer("Forty bolts.", stream="prefix"))
FINAL.add("python-dict", "{'thought': 't', 'action': {'final_answer': 'Forty.'}}",
          Answer("Forty.", stream="prefix"))
FINAL.add("glued-cjk", '好的{"thought": "数好了。", "action": {"final_answer": "四十个。"}}谢谢',
          Answer("四十个。", stream="prefix"))

# -- one call, simple arguments ----------------------------------------------------------------
SINGLE = Table()
P = Calls(("lookup_part", {"part": "M6 bolt"}))
SINGLE.add("canonical", env(PART), P)
SINGLE.add("no-thought", env(PART, thought=None), P)
SINGLE.add("fenced", "```json\n" + env(PART) + "\n```", P)
SINGLE.add("tilde-fence", "~~~\n" + env(PART) + "\n~~~", P)
SINGLE.add("tags", "<tool_call>\n" + json.dumps(PART) + "\n</tool_call>",
           P)
SINGLE.add("action-label", "Thought: find it.\nAction: " + json.dumps(PART),
           P)
SINGLE.add("react-text",
           'Thought: find it.\nAction: lookup_part\nAction Input: {"part": "M6 bolt"}', P)
SINGLE.add("python-dict", "{'thought': 't', 'action': {'name': 'lookup_part', 'args': "
           "{'part': 'M6 bolt'}}}", P)
SINGLE.add("aliases", '{"thought": "t", "action": {"tool": "lookup_part", "arguments": '
           '{"part": "M6 bolt"}}}', P)
SINGLE.add("openai-function", '{"function": {"name": "lookup_part", "arguments": '
           '"{\\"part\\": \\"M6 bolt\\"}"}}', P)
SINGLE.add("langchain", '{"action": "lookup_part", "action_input": {"part": "M6 bolt"}}',
           P)
SINGLE.add("doubled-braces", '{{"thought": "t", "action": {{"name": "lookup_part", "args": '
           '{{"part": "M6 bolt"}}}}}}', P)
SINGLE.add("json-string-reply", json.dumps(env(PART)), P)
SINGLE.add("curly-quotes", env(PART).replace('"', "\x00").replace("\x00", "“", 1)
           .replace("\x00", "”"), P)

# -- parallel calls (an explicit list, in order) -------------------------------------------------
PARALLEL = Table()
PARALLEL.add("action-list", env([SHELF, LIST]),
             Calls(("shelf_stock", {"aisle": 4, "bin": "B-12"}), ("list_shelves", {})))
PARALLEL.add("three-tools", env([PART, SHELF, LIST]), Calls(
    ("lookup_part", {"part": "M6 bolt"}), ("shelf_stock", {"aisle": 4, "bin": "B-12"}),
    ("list_shelves", {})))
PARALLEL.add("same-tool-twice", env([PART, {"name": "lookup_part", "args": {"part": "M8 nut"}}]),
             Calls(("lookup_part", {"part": "M6 bolt"}), ("lookup_part", {"part": "M8 nut"})))
PARALLEL.add("one-item-list", env([PART]), Calls(("lookup_part", {"part": "M6 bolt"})))
PARALLEL.add("top-level-array", json.dumps([PART, LIST]),
             Calls(("lookup_part", {"part": "M6 bolt"}), ("list_shelves", {})))
PARALLEL.add("array-of-envelopes", json.dumps([json.loads(env(PART)), json.loads(env(LIST))]),
             Calls(("lookup_part", {"part": "M6 bolt"}), ("list_shelves", {})))
PARALLEL.add("openai-tool-calls", json.dumps({"tool_calls": [
    {"id": "c1", "type": "function", "function": {"name": "lookup_part",
                                                  "arguments": '{"part": "M6 bolt"}'}},
    {"id": "c2", "type": "function", "function": {"name": "list_shelves", "arguments": "{}"}}]}),
    Calls(("lookup_part", {"part": "M6 bolt"}), ("list_shelves", {})))
PARALLEL.add("pretty-missing-commas", '{"thought": "Both."\n"action": [{"name": "lookup_part", '
             '"args": {"part": "M6 bolt"}}\n{"name": "list_shelves", "args": {}}]}',
             Calls(("lookup_part", {"part": "M6 bolt"}), ("list_shelves", {})))

# -- typed arguments: every JSON type comes back as that type ----------------------------------
TYPED_ARGS = {"string_field": "B-12", "int_field": 40, "float_field": 2.5, "bool_field": True,
              "null_field": None, "array_field": [1, "two", False], "object_field": {"k": [0.5]}}
TYPED = Table()
TYPED.add("json", env({"name": "file_ticket", "args": TYPED_ARGS}),
          Calls(("file_ticket", TYPED_ARGS)))
TYPED.add("python-dict", repr({"thought": "t", "action": {"name": "file_ticket",
                                                           "args": TYPED_ARGS}}),
          Calls(("file_ticket", TYPED_ARGS)))
TYPED.add("bare-keys-trailing-commas", '{thought: "t", action: {name: "file_ticket", args: '
          '{string_field: "B-12", int_field: 40, float_field: 2.5, bool_field: true, '
          'null_field: null, array_field: [1, "two", false,], object_field: {k: [0.5]},},},}',
          Calls(("file_ticket", TYPED_ARGS)))
TYPED.add("fenced-pretty", "```json\n" + json.dumps(
    {"thought": "t", "action": {"name": "file_ticket", "args": TYPED_ARGS}}, indent=2) + "\n```",
    Calls(("file_ticket", TYPED_ARGS)))
BIG = {"big": 12345678901234567890, "neg": -7, "exp": 1.5e-7, "zero": 0, "neg_float": -0.25}
TYPED.add("numbers", env({"name": "measure_room", "args": BIG}), Calls(("measure_room", BIG)))

# -- empty arguments: {} -------------------------------------------------------------------------
EMPTY = Table()
EMPTY.add("empty-object", env({"name": "list_shelves", "args": {}}), Calls(("list_shelves", {})))
EMPTY.add("null", env({"name": "list_shelves", "args": None}), Calls(("list_shelves", {})))
EMPTY.add("missing", env({"name": "list_shelves"}), Calls(("list_shelves", {})))
EMPTY.add("json-string", env({"name": "list_shelves", "args": "{}"}), Calls(("list_shelves", {})))
EMPTY.add("openai", '{"function": {"name": "list_shelves", "arguments": "{}"}}',
          Calls(("list_shelves", {})))
EMPTY.add("python", "{'thought': 't', 'action': {'name': 'list_shelves', 'args': {}}}",
          Calls(("list_shelves", {})))
EMPTY.add("parallel", env([LIST, LIST]), Calls(("list_shelves", {}), ("list_shelves", {})))

# -- surrounding text ----------------------------------------------------------------------------
AROUND = Table()
AROUND.add("prose-both-sides", "Let me check.\n" + env(SHELF) + "\nI will wait for the count.",
           Calls(("shelf_stock", {"aisle": 4, "bin": "B-12"})))
AROUND.add("fence-and-prose", "Sure:\n```json\n" + env(SHELF) + "\n```\nDone.",
           Calls(("shelf_stock", {"aisle": 4, "bin": "B-12"})))
AROUND.add("think-with-braces", "<think>maybe {bin} or \"B-13\" }</think>\n" + env(SHELF),
           Calls(("shelf_stock", {"aisle": 4, "bin": "B-12"})))
AROUND.add("thought-line", "Thought: count bin B-12.\n" + json.dumps(SHELF),
           Calls(("shelf_stock", {"aisle": 4, "bin": "B-12"})))
AROUND.add("glued", "Sure" + env(SHELF) + "Thanks",
           Calls(("shelf_stock", {"aisle": 4, "bin": "B-12"})))
AROUND.add("inline-fences", "```json " + env(SHELF) + "``` ```json " +
           env({"final_answer": "Forty."}) + "```",
           Calls(("shelf_stock", {"aisle": 4, "bin": "B-12"})))
AROUND.add("inline-fence-then-words", "```json " + env({"final_answer": "Forty."}) +
           " as you asked.", Error("quoted"))
AROUND.add("invented-observation", env(SHELF) + "\nObservation: 40\n" +
           env({"final_answer": "Forty."}), Calls(("shelf_stock", {"aisle": 4, "bin": "B-12"})))
AROUND.add("quoted-call-then-real", 'I could call {"name": "list_shelves", "args": {}} first, '
           "but no.\n" + env(SHELF), Calls(("shelf_stock", {"aisle": 4, "bin": "B-12"})))
AROUND.add("skeleton-then-answer", "The format is:\n" +
           env({"final_answer": "<the answer for the user>"}, "<one short sentence>") +
           "\nMy reply:\n" + env({"final_answer": "Forty."}), Answer("Forty."))
AROUND.add("data-then-envelope", 'Counts so far: {"B-12": 40}.\nNow:\n' +
           env({"final_answer": "Forty."}), Answer("Forty."))
AROUND.add("react-then-invented-json", 'Action: shelf_stock\nAction Input: {"aisle": 4, '
           '"bin": "B-12"}\nObservation: 40\n' + env({"final_answer": "Forty."}),
           Calls(("shelf_stock", {"aisle": 4, "bin": "B-12"})))
AROUND.add("draft-in-think", "<think>" + env({"final_answer": "DRAFT"}) + "</think>\n" + env(SHELF),
           Calls(("shelf_stock", {"aisle": 4, "bin": "B-12"})))

# -- escaped strings -----------------------------------------------------------------------------
ESC_ARGS = {"quote": 'say "hi"', "backslash": "a\\b", "newline": "one\ntwo", "tab": "a\tb",
            "slash": "a/b", "accent": "é", "emoji": "😀", "cjk": "螺栓"}
ESCAPED = Table()
ESCAPED.add("json-escapes", env({"name": "file_ticket", "args": ESC_ARGS}),
            Calls(("file_ticket", ESC_ARGS)))
ESCAPED.add("ascii-escapes", json.dumps({"thought": "t", "action": {"name": "file_ticket",
                                                                     "args": ESC_ARGS}}),
            Calls(("file_ticket", ESC_ARGS)))
ESCAPED.add("escaped-slash", '{"thought": "t", "action": {"name": "open_file", "args": '
            '{"path": "\\/srv\\/parts.csv"}}}', Calls(("open_file", {"path": "/srv/parts.csv"})))
ESCAPED.add("raw-control-characters", '{"thought": "t", "action": {"final_answer": '
            '"B-12\t40\nB-13\t12"}}', Answer("B-12\t40\nB-13\t12"))
ESCAPED.add("regex-backslashes", '{"thought": "t", "action": {"name": "grep_log", "args": '
            '{"pattern": "\\d+ bolts?\\b"}}}', Calls(("grep_log", {"pattern": "\\d+ bolts?\b"})))
ESCAPED.add("raw-windows-path", '{"thought": "t", "action": {"name": "open_file", "args": '
            '{"path": "E:\\parts\\new\\bins.csv"}}}',
            Calls(("open_file", {"path": "E:\\parts\\new\\bins.csv"})))
ESCAPED.add("json-text-in-arg", env({"name": "file_ticket", "args": {"body": '{"bin": "B-12"}'}}),
            Calls(("file_ticket", {"body": '{"bin": "B-12"}'})))
ESCAPED.add("answer-escapes", env({"final_answer": 'He said "40"\\n, then\tleft. 😀 é'}),
            Answer('He said "40"\\n, then\tleft. 😀 é'))
ESCAPED.add("answer-ascii-escapes", json.dumps({"thought": "t", "action": {
    "final_answer": 'He said "40" 😀 é\n螺栓'}}), Answer('He said "40" 😀 é\n螺栓'))
ESCAPED.add("answer-raw-backslash-word", '{"thought": "t", "action": {"final_answer": '
            '"Use \\d+\\n for digits, then \\n a line."}}',
            Answer("Use \\d+\\n for digits, then \n a line."))
ESCAPED.add("answer-windows-path", '{"thought": "t", "action": {"final_answer": '
            '"C:\\new\\bins.csv"}}', Answer("C:\\new\\bins.csv"))
ESCAPED.add("answer-lone-surrogate", '{"thought": "t", "action": {"final_answer": '
            '"half \\ud800 whole \\ud83d\\ude00"}}', Answer("half \ufffd whole 😀"))
ESCAPED.add("unescaped-inner-quotes", '{"thought": "t", "action": {"final_answer": '
            '"The label says "B-12", so look there."}}',
            Answer('The label says "B-12", so look there.', stream="prefix"))
ESCAPED.add("unescaped-cjk-quotation", '{"thought": "他说"好"", "action": {"name": '
            '"file_ticket", "args": {"title": "他说"坏了""}}}',
            Calls(("file_ticket", {"title": '他说"坏了"'})))

# -- malformed input: an error the model can act on, never a call, never a crash ---------------
MALFORMED = Table()
MALFORMED.add("truncated-in-string", '{"thought": "t", "action": {"final_answer": "Bin B-1',
              Error("truncated"))
MALFORMED.add("truncated-in-args", '{"thought": "t", "action": {"name": "shelf_stock", "args": '
              '{"aisle": 4', Error("truncated"))
MALFORMED.add("two-different-calls", env(PART) + "\nOr rather:\n" + env(SHELF), Error("ambiguous"))
MALFORMED.add("two-different-answers", env({"final_answer": "40"}) + "\nHmm, no:\n" +
              env({"final_answer": "41"}), Error("ambiguous"))
MALFORMED.add("call-and-answer", env({"name": "list_shelves", "args": {}, "final_answer": "x"}),
              Error("ambiguous"))
MALFORMED.add("placeholder-call", env({"name": "<tool name>", "args": {}}), Error("placeholder"))
MALFORMED.add("stray-word", '{"thought": "t", "action": {"name": "shelf_stock", "args": '
              '{"aisle": 4, NOTE "bin": "B-12"}}}', Error("invalid_json"))
MALFORMED.add("open-string", '{"thought": "t", "action": {"name": "file_ticket", "args": '
              '{"title": "Jam, "floor": 3}}}', Error("invalid_json"))
MALFORMED.add("doubled-quotes", '{"thought": "t", "action": {"name": "rename_label", "args": '
              '{"new": ""B-13""}}}', Error("invalid_json"))
MALFORMED.add("unclosed-bracket", '{"thought": "t", "action": {"name": "sort_cards", "args": '
              '{"cards": [1, 2}}}', ERROR)  # (told "cut off": see the report)
MALFORMED.add("args-text", env({"name": "lookup_part", "args": "M6 bolt"}), Error("bad_args"))
MALFORMED.add("args-list", env({"name": "lookup_part", "args": ["M6"]}), Error("bad_args"))
MALFORMED.add("final-null", env({"final_answer": None}), Error("bad_final"))
MALFORMED.add("name-number", env({"name": 7, "args": {}}), Error("bad_call"))
MALFORMED.add("yaml", "thought: count\naction:\n  name: shelf_stock", ERROR)
MALFORMED.add("unmatched-braces", "{" * 5000 + "}" * 4000, ERROR)
MALFORMED.add("deep-args", '{"thought": "t", "action": {"name": "f", "args": ' + '{"a": ' * 100 +
              "1" + "}" * 100 + "}}", Error("too_deep"))
MALFORMED.add("broken-then-continuation", '{"thought": "t", "action": {"name": "shelf_stock", '
              '"args": {"bin": "B-12, "aisle": 4}}}\nObservation: 40\n' +
              env({"final_answer": "Forty."}), Error("invalid_json"))
MALFORMED.add("quoted-only", 'You could send {"name": "list_shelves", "args": {}} next time.',
              Error("quoted"))

TABLES = {
    "no_action": NO_ACTION, "final": FINAL, "single": SINGLE, "parallel": PARALLEL,
    "typed": TYPED, "empty": EMPTY, "around": AROUND, "escaped": ESCAPED,
    "malformed": MALFORMED,
}
ROWS = [(f"{name}/{id}", reply, expected)
        for name, table in TABLES.items() for id, reply, expected in table.rows]


def read(reply: str) -> Any:
    """What parse_reply makes of ``reply``, in the tables' terms."""
    try:
        parsed = parse_reply(reply)
    except OutputParseError as err:
        assert err.problem and err.problem in str(err)
        assert '"action"' in str(err)  # the message shows the shape to send
        return Error(err.kind)
    if parsed.final_answer is not None:
        assert parsed.tool_calls == []
        return Answer(parsed.final_answer)
    return Calls(*((c.name, c.args) for c in parsed.tool_calls))


# -- the non-streaming reader --------------------------------------------------------------------
@pytest.mark.parametrize(("reply", "expected"), [r[1:] for r in ROWS], ids=[r[0] for r in ROWS])
def test_parse_reply(reply: str, expected: Any) -> None:
    got = read(reply)
    if isinstance(expected, Error):
        assert isinstance(got, Error), got
        assert expected.kind is None or got.kind == expected.kind
    elif isinstance(expected, Answer):
        assert got == Answer(expected.text)
    else:
        assert got == expected


@pytest.mark.parametrize("reply", [r[1] for r in TABLES["typed"].rows],
                         ids=[r[0] for r in TABLES["typed"].rows])
def test_typed_arguments_keep_their_types(reply: str) -> None:
    """vLLM's check: each value has exactly its JSON type (a bool is no int, an int no float),
    nested values too (``==`` alone would take ``True`` for ``1`` and ``2.0`` for ``2``)."""
    args = parse_reply(reply).tool_calls[0].args
    expected = next(e for _, r, e in TABLES["typed"].rows if r == reply).calls[0][1]

    def same_types(a: Any, b: Any) -> bool:
        if type(a) is not type(b):
            return False
        if isinstance(a, dict):
            return a.keys() == b.keys() and all(same_types(a[k], b[k]) for k in a)
        if isinstance(a, list):
            return len(a) == len(b) and all(map(same_types, a, b))
        return bool(a == b)

    assert same_types(args, expected), args


@pytest.mark.parametrize("reply", [r[1] for r in TABLES["parallel"].rows],
                         ids=[r[0] for r in TABLES["parallel"].rows])
def test_parallel_calls_keep_their_order(reply: str) -> None:
    calls = parse_reply(reply).tool_calls
    expected = next(e for _, r, e in TABLES["parallel"].rows if r == reply)
    assert [c.name for c in calls] == [name for name, _ in expected.calls]


# -- the streamed reader: the same result however the reply is cut -------------------------------
RANDOM_CHUNKINGS = 40


def chunkings(text: str) -> list[list[int]]:
    """Cut positions: none (one piece), every character, every cut into two pieces (every
    fifth one past 400 characters), and seeded random pieces of 1 to 12 characters."""
    n = len(text)
    cuts: list[list[int]] = [[], list(range(1, n))]
    step = 1 if n <= 400 else 5
    cuts += [[k] for k in range(1, n, step)]
    rng = random.Random(zlib.crc32(text.encode("utf-8", "surrogatepass")))
    for _ in range(RANDOM_CHUNKINGS):
        pos, one = 0, []
        while True:
            pos += rng.randint(1, 12)
            if pos >= n:
                break
            one.append(pos)
        cuts.append(one)
    return cuts


def streamed(text: str, cuts: list[int]) -> str:
    stream, out, last = FinalAnswerStream(), [], 0
    for cut in [*cuts, len(text)]:
        out.append(stream.feed(text[last:cut]))
        last = cut
    assert "".join(out) == stream.answer
    assert stream.feed("") == ""
    return stream.answer


def check_stream(reply: str, expected: Any) -> None:
    outs = {streamed(reply, cuts) for cuts in chunkings(reply)}
    assert len(outs) == 1, f"the stream depends on how the reply is cut: {sorted(outs)[:4]}"
    out = outs.pop()
    got = read(reply)
    if isinstance(got, Calls):
        assert out == "", "a tool call streams nothing"
    elif isinstance(got, Answer):
        assert got.text.startswith(out), (out, got.text)
        if isinstance(expected, Answer) and expected.stream == "exact":
            assert out == got.text


@pytest.mark.parametrize(("reply", "expected"), [r[1:] for r in ROWS], ids=[r[0] for r in ROWS])
def test_stream_is_split_invariant_and_agrees_with_parse_reply(reply: str, expected: Any) -> None:
    check_stream(reply, expected)


@settings(max_examples=150, deadline=None)
@given(text=fuzz_replies())
def test_stream_of_any_reply(text: str) -> None:
    """Random JSON values wrapped the ways models write them (fences, prose, think blocks, ReAct
    text, a second value, cut anywhere): never a crash, never text that does not begin the
    parsed answer, never a piece of a tool call, the same however it is cut."""
    outs = {streamed(text, cuts) for cuts in chunkings(text)[:1] + chunkings(text)[-8:]}
    assert len(outs) == 1
    check_stream_prefix(text, outs.pop())


def check_stream_prefix(text: str, out: str) -> None:
    got = read(text)
    if isinstance(got, Calls):
        assert out == ""
    elif isinstance(got, Answer):
        assert got.text.startswith(out)


WRAPS = ["{}", "```json\n{}\n```", "Sure:\n{}\nBye.", "<think>hm {{ \"</think>\n{}",
         "<tool_call>{}</tool_call>", "{}\nObservation: 3\n" + env({"final_answer": "later"})]


@settings(max_examples=300, deadline=None)
@given(action=actions, thought=st.text(max_size=20), wrap=st.sampled_from(WRAPS),
       indent=st.sampled_from([None, 2]), ascii_only=st.booleans(),
       cuts=st.lists(st.integers(1, 400), max_size=30))
def test_stream_of_a_whole_envelope_is_exactly_the_parsed_answer(
    action: Any, thought: str, wrap: str, indent: int | None, ascii_only: bool, cuts: list[int]
) -> None:
    reply = wrap.replace("{}", json.dumps({"thought": thought, "action": action}, indent=indent,
                                          ensure_ascii=ascii_only), 1)
    out = streamed(reply, sorted({c for c in cuts if c < len(reply)}))
    got = read(reply)
    assert out == (got.text if isinstance(got, Answer) else "")
