"""Hypothesis strategies for structure-aware fuzzing of model replies.

Random *text* almost never builds the JSON shapes that break a parser, so these build random JSON
*values* from the keys agents and models use (every JSON type, nested), then write them the ways
models do: plain, pretty-printed, Python-style, fenced, in prose, after ``Action:`` markers, next
to a second value, and cut off at any point.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import strategies as st

from react_agent.parsing._reply import ARGS_KEYS, FINAL_KEYS, NAME_KEYS, WRAPPER_KEYS

AGENT_KEYS = (
    "action", "thought", "tool_calls", "type", "id", *NAME_KEYS, *ARGS_KEYS, *FINAL_KEYS,
    *WRAPPER_KEYS,
)
SHAPING_KEYS = (
    "action", "tool_calls", "function", "name", "args", "action_input", "final_answer",
    "thought", *WRAPPER_KEYS,
)
WORDS = (
    "get_time", "search", "x", "", " ", "Final Answer", "final_answer", "<tool name>", "...",
    "tool_name", "<the answer for the user>", "{", "}", "[", '"', "'", "\\", "C:\\new\\tab",
    "D:\\data\\x", "Observation: 3", "Action: search", "```", "北京", "Umeå", "\x00", "null",
    '{"city": "Oslo"}', "{{}}", "true",
)

scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-10**9, 10**9),
    st.floats(allow_nan=False, allow_infinity=False), st.sampled_from(WORDS),
    st.text(max_size=12),
)
keys = st.one_of(st.sampled_from(AGENT_KEYS), st.sampled_from(WORDS), st.text(max_size=8))
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(keys, inner, max_size=4),
    max_leaves=16,
) | st.recursive(  # small objects of the keys that shape an action: wrappers in wrappers,
    scalars,          # odd action lists, calls without names...
    lambda inner: st.lists(inner, max_size=2)
    | st.dictionaries(st.sampled_from(SHAPING_KEYS), inner, min_size=1, max_size=2),
    max_leaves=6,
)


def _python_style(value: Any) -> str:
    return repr(value)


@st.composite
def written(draw: st.DrawFn, value: Any) -> str:
    """``value`` as a model might write it: JSON (compact or indented, ASCII or not) or Python
    style."""
    style = draw(st.sampled_from(["compact", "indented", "ascii", "python"]))
    if style == "python":
        return _python_style(value)
    indent = 2 if style == "indented" else None
    return json.dumps(value, ensure_ascii=style == "ascii", indent=indent)


WRAPPERS = {
    "plain": "{}",
    "json fence": "```json\n{}\n```",
    "bare fence": "```\n{}\n```",
    "text fence": "```text\n{}\n```",
    "tilde fence": "~~~\n{}\n~~~",
    "prose around": "Sure, here it is:\n{}\nHope this helps!",
    "prose same line": "I will now do this {} and then wait.",
    "lead-in": "My reply: {}",
    "thought line": "Thought: I could send {} later.",
    "action marker": "Thought: next step.\nAction: {}",
    "react": "Thought: look.\nAction: search\nAction Input: {}",
    "tool_call tags": "<tool_call>\n{}\n</tool_call>",
    "think": "<think>\nmaybe {{ or }} or \"\n</think>\n{}",
}


@st.composite
def fuzz_replies(draw: st.DrawFn) -> str:
    """A reply built from one or two random JSON values, wrapped, maybe cut anywhere."""
    first = draw(written(draw(json_values)))
    text = draw(st.sampled_from(list(WRAPPERS.values()))).replace("{}", first, 1)
    if draw(st.booleans()):
        between = draw(st.sampled_from(["\n", "\nObservation: 42\n", "\nOr rather:\n", " "]))
        text += between + draw(written(draw(json_values)))
    if draw(st.integers(0, 3)) == 0:
        text = text[: draw(st.integers(0, len(text)))]
    return text


def _not_a_placeholder(text: str) -> bool:
    """Text the parser does not refuse as a template placeholder ("...", "<the answer>")."""
    text = text.strip()
    return text not in ("...", "…") and not (text.startswith("<") and text.endswith(">"))


# Well-formed actions, for properties about which action wins.
names = st.from_regex(r"[a-z][a-z0-9_]{0,10}", fullmatch=True).filter(
    lambda n: n not in ("tool_name", "toolname", "function_name", "action_name")
)
texts = st.text(max_size=10).filter(_not_a_placeholder)
simple_args = st.dictionaries(
    names, st.one_of(st.integers(-99, 99), texts, st.booleans()), max_size=3
)
calls = st.fixed_dictionaries({"name": names, "args": simple_args})
finals = st.fixed_dictionaries(
    {"final_answer": st.text(min_size=1, max_size=20).filter(str.strip).filter(_not_a_placeholder)}
)
actions = calls | finals
