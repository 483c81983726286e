"""The parser against the shared catalogue of real-world replies, our own cases, and properties."""

from __future__ import annotations

import contextlib
import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st
from strategies import SHAPING_KEYS, actions, calls, fuzz_replies, json_values

from react_agent import OutputParseError, Reply, ToolCall, parse_reply

DATA = Path(__file__).parents[1] / "data"
CASES_FILE = DATA / "parser_cases.jsonl"  # the shared catalogue, copied as it is
LOCAL_CASES_FILE = DATA / "parser_cases_local.jsonl"  # ours, in the same format


def read_cases(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]


CASES = read_cases(CASES_FILE) + read_cases(LOCAL_CASES_FILE)


def as_expected(reply: Reply, expected: Any) -> Any:
    """The reply in the catalogue's ``expected`` shape."""
    if reply.final_answer is not None:
        assert reply.tool_calls == []
        return {"final_answer": reply.final_answer}
    calls = [c.to_dict() for c in reply.tool_calls]
    if isinstance(expected, list):
        return calls
    assert len(calls) == 1, calls
    return calls[0]


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_catalogue_case(case: dict[str, Any]) -> None:
    if case["expected"] == "error":
        with pytest.raises(OutputParseError) as info:
            parse_reply(case["output"])
        assert info.value.problem and info.value.problem in str(info.value)
        assert '"action"' in str(info.value)  # the message shows the shape to send
        return
    reply = parse_reply(case["output"])
    assert as_expected(reply, case["expected"]) == case["expected"]
    if case["thought"] is not None:
        assert reply.thought == case["thought"]
    assert reply.stage in ("direct", "fenced", "fallback", "repaired")


# Our own cases for kinds the catalogue covers thinly: (id, reply, expected, stage or None).
OWN_CASES = [
    ("tool-call-tags", '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Oslo"}}\n'
     "</tool_call>", {"name": "get_weather", "args": {"city": "Oslo"}}, None),
    ("action-call-syntax", 'Thought: weather first\nAction: get_weather({"city": "Oslo"})',
     {"name": "get_weather", "args": {"city": "Oslo"}}, "fallback"),
    ("curly-quote-delimiters", "{“thought”: “Check Oslo.”, “action”: {“name”: “get_weather”, "
     "“args”: {“city”: “Oslo”}}}", {"name": "get_weather", "args": {"city": "Oslo"}}, "repaired"),
    ("fence-then-plain-direct", '{"thought": "x", "action": {"final_answer": "42"}}',
     {"final_answer": "42"}, "direct"),
    ("fenced-stage", '```json\n{"thought": "x", "action": {"final_answer": "42"}}\n```',
     {"final_answer": "42"}, "fenced"),
    ("prose-stage", 'Sure.\n{"thought": "x", "action": {"final_answer": "42"}}',
     {"final_answer": "42"}, "fallback"),
    ("truncated-two-braces-missing", '{"thought": "x", "action": {"name": "a", "args": {"b": 1}',
     "error", None),
    ("truncated-in-key", '{"thought": "x", "act', "error", None),
    ("final-answer-false", '{"thought": "x", "action": {"final_answer": false}}',
     {"final_answer": "false"}, "direct"),
    ("only-think", "<think>hmm</think>", "error", None),
    ("args-list", '{"thought": "x", "action": {"name": "a", "args": [1, 2]}}', "error", None),
    ("name-not-string", '{"thought": "x", "action": {"name": 3, "args": {}}}', "error", None),
    ("empty-action-list", '{"thought": "x", "action": []}', "error", None),
    ("object-with-name-is-not-a-call", 'The user is {"name": "Ann", "age": 3}.', "error", None),
]


@pytest.mark.parametrize(("reply_text", "expected", "stage"),
                         [c[1:] for c in OWN_CASES], ids=[c[0] for c in OWN_CASES])
def test_own_case(reply_text: str, expected: Any, stage: str | None) -> None:
    if expected == "error":
        with pytest.raises(OutputParseError):
            parse_reply(reply_text)
        return
    reply = parse_reply(reply_text)
    assert as_expected(reply, expected) == expected
    if stage:
        assert reply.stage == stage


def test_errors_differ_by_defect() -> None:
    kinds = {}
    for text in ["", "just prose", '{"thought": "x", "action": {"final_answer": "cut',
                 '{"thought": "only a thought"}', "```python\nprint(1)\n```",
                 '{"thought": "x", "action": {"name": "a", "args": "text"}}',
                 '{"units": "metric"}', '{"tool_calls": [{}]}']:
        with pytest.raises(OutputParseError) as info:
            parse_reply(text)
        kinds[info.value.kind] = info.value.problem
    assert set(kinds) == {
        "empty", "no_json", "truncated", "no_action", "code", "bad_args", "unknown_shape",
        "bad_call",
    }
    assert len(set(kinds.values())) == len(kinds)


def test_valid_json_of_another_shape_is_not_called_no_json() -> None:
    """The model is told its JSON had the wrong shape, never that it held none."""
    reply = '{"tool_use": {"tool": "web_search", "query": "tide times"}}'
    with pytest.raises(OutputParseError) as info:
        parse_reply(reply)
    assert info.value.kind == "unknown_shape"
    assert "no JSON" not in str(info.value) and "is not an action" in info.value.problem
    assert '{"thought": "...", "action": {"name": "<tool name>"' in str(info.value)


def test_a_bad_action_names_its_tool() -> None:
    with pytest.raises(OutputParseError) as info:
        parse_reply('{"thought": "t", "action": {"name": "search", "args": [1]}}')
    assert (info.value.kind, info.value.tool) == ("bad_args", "search")


@pytest.mark.parametrize(
    ("reply_text", "args"),
    [
        ('{"thought": "t", "action": {"calculate": "(17 * 2)"}}', {"expression": "(17 * 2)"}),
        ('{"thought": "t", "action": {"name": "calculate", "args": "17 * 2"}}',
         {"expression": "17 * 2"}),
        ('{"action": "calculate", "action_input": "17 * 2"}', {"expression": "17 * 2"}),
    ],
    ids=["tool-as-key", "args-text", "langchain-text"],
)
def test_a_bare_value_is_named_by_the_callers_namer(reply_text: str, args: Any) -> None:
    seen = []

    def namer(tool: str, value: Any) -> str | None:
        seen.append((tool, value))
        return "expression" if tool == "calculate" else None

    reply = parse_reply(reply_text, name_value=namer)
    assert reply.tool_calls == [ToolCall("calculate", args)]
    assert seen == [("calculate", args["expression"])]
    assert any("only required argument of calculate" in r for r in reply.repairs)
    with pytest.raises(OutputParseError) as info:  # without a namer: the catalogue's error
        parse_reply(reply_text)
    assert (info.value.kind, info.value.tool) == ("bad_args", "calculate")
    with pytest.raises(OutputParseError):  # a namer that declines
        parse_reply(reply_text, name_value=lambda tool, value: None)


def test_repairs_are_recorded() -> None:
    reply = parse_reply("{'thought': 'x', 'action': {'name': 'a', 'args': {'b': True,},},}")
    assert reply.stage == "repaired"
    assert "single-quoted strings" in reply.repairs
    assert "trailing commas" in reply.repairs
    assert reply.tool_calls[0].args == {"b": True}


def test_arithmetic_values_are_computed_and_recorded() -> None:
    reply = parse_reply('{"thought": "x", "action": {"name": "a", "args": {"n": 0.1 * 3, '
                        '"m": [1 -2]}}}')
    assert reply.tool_calls[0].args == {"n": 0.3, "m": [1, -2]}  # [1 -2]: a comma missing
    assert "arithmetic computed (0.1 * 3 = 0.3)" in reply.repairs


def test_arithmetic_is_read_at_most_the_calculators_length_at_each_value() -> None:
    """Hostile input: ``[1+1+...+1]`` of 100 KB took 134 s (each value's scan ran to the end
    of the run, quadratic in its length). Each value reads at most the calculator's
    expression length, so the work is linear."""
    from react_agent.parsing._repair import _ARITHMETIC
    from react_agent.tools.builtin import MAX_EXPRESSION_CHARS

    run = "+".join(["1"] * 5000)
    assert _ARITHMETIC.match(run, 0).end() <= MAX_EXPRESSION_CHARS  # type: ignore[union-attr]
    short = parse_reply('{"thought": "x", "action": {"name": "a", "args": {"n": 1+1+1}}}')
    assert short.tool_calls[0].args == {"n": 3}


def test_invalid_json_errors_quote_where_the_json_broke() -> None:
    with pytest.raises(OutputParseError) as info:
        parse_reply('{"thought": "x", "action": {"name": "a", "args": {"n": 3 * one}}}')
    spot = json.dumps('{"name": "a", "args": {"n": 3')  # the 30 characters before the break
    assert info.value.problem.endswith(f"right after {spot}).")


# -- properties: valid envelopes survive the wrappers models put around them ------------------
_text = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=30
).filter(lambda t: not re.match(r"[A-Z]:[\x00-\x1f\x7f-\x9f]", t))
# (a drive letter, a colon and a control character is read as a Windows path written raw:
# "C:\new" is C:\new, never C: and a line break; see test_a_windows_path_written_raw...)


def _looks_like_placeholder(text: str) -> bool:
    """What the parser refuses as a template placeholder ("...", "<the answer>")."""
    text = text.strip()
    return text in ("...", "…") or (text.startswith("<") and text.endswith(">"))


_plain_text = _text.filter(lambda t: not _looks_like_placeholder(t))
_value = st.recursive(
    st.none() | st.booleans() | st.integers(-10**6, 10**6) | _plain_text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_text, inner, max_size=3),
    max_leaves=6,
)
_name = st.from_regex(r"[a-z_][a-z0-9_]{0,15}", fullmatch=True)
_call = st.fixed_dictionaries({"name": _name, "args": st.dictionaries(_name, _value, max_size=3)})
_action = _call | st.lists(_call, min_size=1, max_size=3) | st.fixed_dictionaries(
    {"final_answer": _plain_text.filter(str.strip)}
)
_wrappers = [
    lambda s: s,
    lambda s: f"```json\n{s}\n```",
    lambda s: f"Sure, here it is:\n{s}\nHope this helps!",
    lambda s: f"<think>\nLet me think {{ about ' it \"\n</think>\n{s}",
    lambda s: f"~~~\n{s}\n~~~",
    lambda s: f"{s}\nObservation: invented\n" + '{"thought": "x", "action": {"final_answer": "y"}}',
]


@settings(max_examples=300, deadline=None)
@given(
    thought=_text, action=_action, wrap=st.sampled_from(_wrappers),
    indent=st.sampled_from([None, 2]), ascii_only=st.booleans(),
)
def test_wrapped_envelope_roundtrips(
    thought: str, action: Any, wrap: Any, indent: int | None, ascii_only: bool
) -> None:
    envelope = {"thought": thought, "action": action}
    reply = parse_reply(wrap(json.dumps(envelope, indent=indent, ensure_ascii=ascii_only)))
    if isinstance(action, dict) and "final_answer" in action:
        assert reply.final_answer == action["final_answer"]
        assert reply.tool_calls == []
    else:
        calls = action if isinstance(action, list) else [action]
        assert [c.to_dict() for c in reply.tool_calls] == calls
        assert reply.final_answer is None
    assert reply.thought == (thought.strip() or None)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=200))
def test_arbitrary_text_never_crashes(text: str) -> None:
    try:
        reply = parse_reply(text)
    except OutputParseError:
        return
    assert bool(reply.tool_calls) != (reply.final_answer is not None)


# -- corruptions: the intended action or an error, never a different action --------------------
SLIPS = [
    "python", "trailing-commas", "comments", "literal-case", "doubled-braces", "missing-commas",
    "tuples", "unquoted-keys",
]


def emit(value: Any, slip: str) -> str:
    """Serialise like json.dumps, with one family of dialect slips applied outside strings."""
    if isinstance(value, dict):
        items = [f"{_key(k, slip)}: {emit(v, slip)}" for k, v in value.items()]
        braces = ("{{", "}}") if slip == "doubled-braces" else ("{", "}")
        return braces[0] + _join(items, slip) + braces[1]
    if isinstance(value, list):
        brackets = ("(", ")") if slip == "tuples" else ("[", "]")
        return brackets[0] + _join([emit(v, slip) for v in value], slip) + brackets[1]
    if slip == "python" and (isinstance(value, str) or value is None or isinstance(value, bool)):
        return repr(value)
    if slip == "literal-case" and (value is None or isinstance(value, bool)):
        return {None: "Null", True: "TRUE", False: "False"}[value]
    return json.dumps(value, ensure_ascii=False)


def _key(key: str, slip: str) -> str:
    if slip == "unquoted-keys" and key.isidentifier() and key.isascii():
        return key
    return emit(key, slip)


def _join(items: list[str], slip: str) -> str:
    if slip == "comments":
        return ", // note\n".join(items) + ("\n" if items else "")
    if slip == "trailing-commas" and items:
        return ", ".join(items) + ","
    if slip == "missing-commas":
        return "\n".join(items)
    return ", ".join(items)


def intended(envelope: dict[str, Any]) -> Any:
    action = envelope["action"]
    if isinstance(action, dict) and "final_answer" in action:
        return {"final_answer": action["final_answer"]}
    return action if isinstance(action, list) else [action]


def got(reply: Reply) -> Any:
    if reply.final_answer is not None:
        return {"final_answer": reply.final_answer}
    return [c.to_dict() for c in reply.tool_calls]


@settings(max_examples=400, deadline=None)
@given(
    thought=_text, action=_action,
    slip=st.sampled_from([*SLIPS, "none"]),
    cut=st.one_of(st.none(), st.integers(min_value=1, max_value=400)),
)
# Python's repr writes a key with an apostrophe in double quotes; after an empty string value
# the comma was not taken as the end of the member, and the repair guessed a wrong string
@example(thought="", action={"name": "_", "args": {"_": {"": "", "0';": ["0"]}}}, slip="python",
         cut=None)
def test_corrupted_envelope_is_intended_action_or_error(
    thought: str, action: Any, slip: str, cut: int | None
) -> None:
    envelope = {"thought": thought, "action": action}
    text = emit(envelope, slip)
    if cut is not None:
        text = text[: max(0, len(text) - cut)]
    try:
        reply = parse_reply(text)
    except OutputParseError:
        assert cut is not None or slip != "none", "a clean envelope must parse"
        return
    assert got(reply) == intended(envelope)


@pytest.mark.parametrize("slip", SLIPS)
def test_each_slip_is_repaired(slip: str) -> None:
    envelope = {"thought": "t", "action": [
        {"name": "f", "args": {"a": True, "b": None, "c": "x", "d": [1, 2], "e": {}}},
        {"name": "g", "args": {"q": 'say "hi": now'}},
    ]}
    reply = parse_reply(emit(envelope, slip))
    assert got(reply) == intended(envelope)
    assert reply.stage == "repaired"


@pytest.mark.parametrize(
    "text",
    [
        "{'thought': '', 'action': [{'name': '_', 'args': {'_': {'[0': None}}}, "
        "{'name': '_', 'args': {}}",
        '{"thought": "", // note\n"action": [{"name": "_", // note\n"args": {"_": {"": null, '
        '// note\n"[0": null\n}\n}\n}, // note\n{"name": "_", // note\n"args": {}\n}\n',
    ],
    ids=["bracket-in-python-key", "bracket-in-key-after-comment"],
)
def test_a_call_inside_a_cut_off_action_list_is_not_taken(text: str) -> None:
    """Found by the corruption property test: a bracket inside a string key hid the
    truncation of the action list, and the second call was taken as the whole action."""
    with pytest.raises(OutputParseError) as info:
        parse_reply(text)
    assert info.value.kind == "truncated"


def test_react_text_on_one_line() -> None:
    reply = parse_reply("Thought: add. Action: calculate Action Input: {'expression': '1+1',}")
    assert reply.tool_calls == [ToolCall("calculate", {"expression": "1+1"})]
    assert reply.thought == "add." and reply.stage == "fallback"


def test_action_word_inside_prose_is_not_a_react_marker() -> None:
    with pytest.raises(OutputParseError):
        parse_reply("The next Action: calculate might help, but I am not sure.")


def test_tool_name_as_the_action_key() -> None:
    reply = parse_reply('{"thought": "t", "action": {"calculate": {"expression": "1 + 1"}}}')
    assert reply.tool_calls == [ToolCall("calculate", {"expression": "1 + 1"})]
    assert "read {tool: args} action" in reply.repairs
    with pytest.raises(OutputParseError, match="names 'calculate' but gives no args object"):
        parse_reply('{"thought": "t", "action": {"calculate": "1 + 1"}}')


# -- structure-aware fuzzing: random JSON values built from agent keys, written any way --------
def _check_reply(reply: Reply) -> None:
    assert bool(reply.tool_calls) != (reply.final_answer is not None)
    assert reply.final_answer is None or isinstance(reply.final_answer, str)
    for call in reply.tool_calls:
        assert isinstance(call.name, str) and call.name.strip() and isinstance(call.args, dict)
    assert reply.stage in ("direct", "fenced", "fallback", "repaired")
    assert reply.source


@settings(max_examples=1500, deadline=None)
@given(text=fuzz_replies(), name=st.booleans())
def test_any_json_reply_gives_a_reply_or_an_output_parse_error(text: str, name: bool) -> None:
    """Odd shapes ([{"action": 5}], {"tool_calls": [{}]}, ...) used to raise TypeError,
    AttributeError, StopIteration; nothing but OutputParseError may leave parse_reply."""
    namer = (lambda tool, value: "value") if name else None
    try:
        reply = parse_reply(text, name_value=namer)
    except OutputParseError as exc:
        assert exc.kind and exc.problem and exc.problem in str(exc)
        return
    _check_reply(reply)


def _envelope(action: Any, thought: str = "The real step.") -> str:
    return json.dumps({"thought": thought, "action": action}, ensure_ascii=False)


@settings(max_examples=200, deadline=None)
@given(quoted=calls, real=actions, where=st.sampled_from(["thought", "sentence"]),
       fenced=st.booleans())
def test_a_call_quoted_in_prose_never_wins(
    quoted: Any, real: Any, where: str, fenced: bool
) -> None:
    q = json.dumps(quoted, ensure_ascii=False)
    line = (f"Thought: a call would look like {q} but not yet." if where == "thought"
            else f"I could call {q} directly, but first this.")
    envelope = _envelope(real)
    reply = parse_reply(line + "\n" + (f"```json\n{envelope}\n```" if fenced else envelope))
    assert got(reply) == intended({"action": real})
    with pytest.raises(OutputParseError):  # and alone it is not an action either
        parse_reply(line)


PLACEHOLDERS = [
    ("name", "<tool name>"), ("name", "tool_name"), ("name", "..."), ("arg", "<value>"),
    ("arg", "..."), ("final", "<the answer for the user>"), ("final", "..."), ("final", "<answer>"),
]


@settings(max_examples=200, deadline=None)
@given(call=calls, placeholder=st.sampled_from(PLACEHOLDERS), real=actions,
       layout=st.sampled_from(["alone", "then real", "text fence then json fence"]))
def test_a_placeholder_skeleton_is_never_an_action(
    call: Any, placeholder: tuple[str, str], real: Any, layout: str
) -> None:
    where, text = placeholder
    if where == "name":
        skeleton: Any = {**call, "name": text}
    elif where == "arg":
        skeleton = {**call, "args": {**call["args"], "city": text}}
    else:
        skeleton = {"final_answer": text}
    echo = _envelope(skeleton, "<one short sentence>")
    if layout == "alone":
        with pytest.raises(OutputParseError):
            parse_reply(echo)
        return
    if layout == "then real":
        reply = parse_reply(f"The format is:\n{echo}\nMy reply:\n{_envelope(real)}")
    else:
        reply = parse_reply(f"```text\n{echo}\n```\n```json\n{_envelope(real)}\n```")
    assert got(reply) == intended({"action": real})


@settings(max_examples=200, deadline=None)
@given(a=actions, b=actions, words=st.sampled_from([
    "Hmm, let me reconsider.", "For your question:", "Actually:", "Or maybe this one:"]))
def test_two_different_actions_are_never_resolved_silently(a: Any, b: Any, words: str) -> None:
    assume(intended({"action": a}) != intended({"action": b}))
    with pytest.raises(OutputParseError) as info:
        parse_reply(f"{_envelope(a)}\n{words}\n{_envelope(b)}")
    assert info.value.kind == "ambiguous"


@settings(max_examples=200, deadline=None)
@given(a=actions, b=actions, observation=st.sampled_from([
    "Observation: 42", "Observation 1: done", "Tool result: ok", "<tool_response>x</tool_response>",
]))
def test_after_an_invented_observation_the_first_action_is_the_step(
    a: Any, b: Any, observation: str
) -> None:
    reply = parse_reply(f"{_envelope(a)}\n{observation}\n{_envelope(b)}")
    assert got(reply) == intended({"action": a})
    assert reply.source == _envelope(a)


# Path segments; a segment that starts like an escape of a printable character (\u0041, and in
# Python style \x41, \101, \U0001F600) is read as that escape, like JSON and Python do.
_segment = st.from_regex(r"[A-Za-z0-9_][A-Za-z0-9_ .$-]{0,8}", fullmatch=True).map(
    str.rstrip
).filter(lambda s: not re.match(r"u[0-9a-fA-F]{4}|x[0-9a-fA-F]{2}|U[0-9a-fA-F]{8}|[0-7]", s))


@settings(max_examples=300, deadline=None)
@given(drive=st.sampled_from("CDEZ"), segments=st.lists(_segment, min_size=1, max_size=5),
       quote=st.sampled_from(['"', "'"]), fenced=st.booleans())
def test_a_windows_path_written_raw_is_read_exactly_as_typed(
    drive: str, segments: list[str], quote: str, fenced: bool
) -> None:
    """\\n, \\t, \\r, \\b, \\f, \\u... inside a raw path are backslashes, never control
    characters or other letters."""
    path = drive + ":\\" + "\\".join(segments)
    text = f'{{"thought": "Read it.", "action": {{"name": "read_file", "args": {{"path": ' \
        f'{quote}{path}{quote}}}}}}}'
    if fenced:
        text = f"```json\n{text}\n```"
    reply = parse_reply(text)
    assert reply.tool_calls == [ToolCall("read_file", {"path": path})]


@settings(max_examples=300, deadline=None)
@given(value=json_values)
def test_valid_json_that_is_not_an_action_is_told_so(value: Any) -> None:
    text = json.dumps(value, ensure_ascii=False)
    try:
        parse_reply(text)
    except OutputParseError as exc:
        assert exc.kind != "no_json" or not any(c in text for c in "{[")


LEAVES = [None, True, 0, "", "x", "Final Answer", [], [True], [{}], ["x"], {}, {"name": "a"},
          [{"name": "a"}], [{"action": "x"}], {"x": 1}]


@pytest.mark.parametrize("outer", SHAPING_KEYS)
def test_every_two_level_shape_of_agent_keys_is_read_or_refused(outer: str) -> None:
    """Every {outer: {inner: leaf}} and {outer: [{inner: leaf}]} with the keys that shape an
    action and small odd leaves: a Reply or an OutputParseError, nothing else (the fuzz
    benchmark found {"tool_call": {"call": [true]}} raising AttributeError)."""
    for inner in SHAPING_KEYS:
        for leaf in LEAVES:
            for value in ({outer: {inner: leaf}}, {outer: [{inner: leaf}]},
                          {"thought": "t", outer: {inner: leaf}}):
                with contextlib.suppress(OutputParseError):
                    _check_reply(parse_reply(json.dumps(value)))


def test_an_integer_too_long_for_python_is_a_parse_error_for_the_model_not_a_crash() -> None:
    reply = '{"thought": "x", "action": {"name": "f", "args": {"n": ' + "9" * 5000 + "}}}"
    with pytest.raises(OutputParseError) as info:
        parse_reply(reply)
    assert "digits" in info.value.problem


@pytest.mark.parametrize("text", ['["A:\\u001f"]', '["A:\\n"]', '{"path": "C:\\new"}'])
def test_json_with_a_drive_letter_escape_is_not_an_action_rather_than_no_json(text: str) -> None:
    """A string starting like a raw Windows path ("A:\\n") once made valid JSON read as "no JSON
    object" (found by the hypothesis test above)."""
    with pytest.raises(OutputParseError) as caught:
        parse_reply(text)
    assert caught.value.kind == "unknown_shape"


def test_a_null_final_answer_is_the_answer_null_only_when_asked() -> None:
    """A typed answer whose type allows null (``int | None``): the prompt asks for the value as
    JSON, so ``"final_answer": null`` is that value; otherwise it stays an error."""
    reply = '{"thought": "None found.", "action": {"final_answer": null}}'
    parsed = parse_reply(reply, null_answer=True)
    assert (parsed.final_answer, parsed.thought) == ("null", "None found.")
    with pytest.raises(OutputParseError) as raised:
        parse_reply(reply)  # the flag does not outlive its call
    assert raised.value.kind == "bad_final"
