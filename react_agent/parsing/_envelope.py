"""Reading an envelope: a decoded JSON value -> a :class:`Reply`, or why it is no action.

The keys models use for the same thing are read as one (``NAME_KEYS``, ``ARGS_KEYS``,
``FINAL_KEYS``; wrappers such as ``{"tool_call": ...}``); a call's args may be an object, JSON
text, or a bare value that the agent's :data:`ValueNamer` names; a list is parallel calls. An
envelope that is there but unusable raises :class:`Shape` with the problem in words for the model.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from ..types import Reply, ToolCall
from ._load import DuplicateKey, loads_lenient

NAME_KEYS = ("name", "tool", "tool_name", "function")
ARGS_KEYS = ("args", "arguments", "parameters", "tool_input", "action_input", "input")
FINAL_KEYS = ("final_answer", "answer", "final", "response")
WRAPPER_KEYS = ("tool_call", "function_call", "call")  # {"tool_call": <an action>}
_CALL_KEYS = {*NAME_KEYS, *ARGS_KEYS, "thought", "id", "type"}


class Shape(Exception):
    """An envelope that is there but unusable (conflicting or malformed action); ``tool`` is
    the tool it names, if any."""

    def __init__(self, kind: str, problem: str, tool: str | None = None):
        super().__init__(problem)
        self.kind, self.problem, self.tool = kind, problem, tool


TOOL_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]{0,63}")
"""What a tool's name looks like (a name given as a bare key or a ReAct ``Action:``)."""

ValueNamer = Callable[[str, Any], "str | None"]
"""``namer(tool, value) -> argument name or None``: the name to give a value the model wrote for
``tool`` without an argument name (the agent passes one that knows the toolbox)."""

NULL_ANSWER: ContextVar[bool] = ContextVar("null_answer", default=False)
"""Whether a ``null`` final answer is a value (``parse_reply(null_answer=True)``: a run whose
output type allows ``null``) rather than an error; its text is then ``"null"``."""

_MAX_ARGS_DEPTH = 64  # deeper args are refused: nothing real nests so deep, and they break
# every recursive consumer (JSON encoders, schema validators) further down the loop


@dataclass
class Reading:
    """What reading one JSON value collects: the repairs made, and the agent's namer."""

    fixes: list[str]
    namer: ValueNamer | None = None


def interpret(
    value: Any, stage: str, repairs: tuple[str, ...], namer: ValueNamer | None = None
) -> Reply | None:
    """Turn a JSON value into a Reply; ``None`` if it is not an envelope at all.

    Every JSON value is accepted: odd shapes are ``None`` or a :class:`Shape`, never another
    exception.

    Raises:
        Shape: an envelope whose action is missing, contradictory or malformed.
    """
    reading = Reading(list(repairs), namer)
    if isinstance(value, list):
        calls = _read_list(value, reading, top=True)
        return None if calls is None else Reply(None, calls, None, stage, tuple(reading.fixes))
    if not isinstance(value, dict):
        return None
    read = _read_envelope(value, reading)
    if read is None:
        return None
    calls, final = read
    return Reply(_thought_of(value), calls, final, stage, tuple(reading.fixes))


def _thought_of(value: dict[str, Any]) -> str | None:
    thought = value.get("thought")
    return (thought.strip() or None) if isinstance(thought, str) else None


def _read_envelope(
    value: dict[str, Any], reading: Reading
) -> tuple[list[ToolCall], str | None] | None:
    """An object -> (calls, final answer); ``None`` if it is not an envelope or an action."""
    wrapped = _wrapped(value)
    if wrapped is not None:  # {"tool_call": {...}}, maybe with a thought beside it
        key, inner = wrapped
        reading.fixes.append(f"read the action inside {key!r}")
        if "action" in inner or "tool_calls" in inner:
            return _read_envelope(inner, reading) if _wrapped(inner) is None else None
        return _read_action_value(inner, reading)
    if isinstance(value.get("tool_calls"), list) and "action" not in value:
        if not value["tool_calls"]:
            raise Shape("no_action", "Its tool_calls list was empty.")
        return [_read_call(item, reading) for item in value["tool_calls"]], None
    if "action" in value:
        action = value["action"]
        if action in (None, "", {}, []) and any(k in value for k in FINAL_KEYS):
            reading.fixes.append("read the final answer beside an empty action")
            return _one_action({k: value[k] for k in FINAL_KEYS if k in value}, reading)
        if isinstance(action, str):  # LangChain: {"action": "tool" | "Final Answer", ...}
            action = _langchain_action(value, action, reading)
        return _read_action_value(action, reading)
    keys = set(value)
    if any(k in value for k in NAME_KEYS):
        return _one_action(value, reading) if keys <= _CALL_KEYS else None
    if "final_answer" in value or (
        any(k in value for k in FINAL_KEYS) and keys <= {"thought", *FINAL_KEYS}
    ):
        return _one_action(value, reading)
    if _thought_of(value) is not None:
        raise Shape(
            "no_action",
            'It had a "thought" but no "action"; every reply needs an action: a tool call or '
            "the final answer.",
        )
    return None


def _read_action_value(action: Any, reading: Reading) -> tuple[list[ToolCall], str | None]:
    """The value of an ``action`` (or of a wrapper key) -> (calls, final answer)."""
    action = _unwrap_action(action, reading)
    if isinstance(action, list):
        return _read_list(action, reading, top=False) or [], None
    if not isinstance(action, dict):
        raise Shape(
            "no_action",
            'Its "action" must be an object like {"name": ..., "args": {...}} or '
            '{"final_answer": ...}.',
        )
    return _one_action(action, reading)


def _wrapped(value: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
    """``(key, inner)`` for ``{"tool_call": {...}}`` (a thought may stand beside it)."""
    keys = [k for k in value if k != "thought"]
    if len(keys) == 1 and keys[0] in WRAPPER_KEYS and isinstance(value[keys[0]], dict):
        return keys[0], value[keys[0]]
    return None


def _unwrap_action(action: Any, reading: Reading) -> Any:
    """The action inside ``{"action": {...}}`` or a wrapper key (``{"tool_call": {...}}``), and
    LangChain's ``{"action": "tool", "action_input": ...}`` as an action object."""
    for _ in range(_MAX_ARGS_DEPTH):
        if not isinstance(action, dict):
            return action
        if isinstance(action.get("action"), str) and set(action) <= {"action", "action_input"}:
            return _langchain_action(action, action["action"], reading)
        if len(action) == 1:
            (key, inner), = action.items()
            if key in ("action", *WRAPPER_KEYS) and isinstance(inner, (dict, list)):
                reading.fixes.append(f"read the action inside {key!r}")
                action = inner
                continue
        return action
    raise Shape("too_deep", "Its action was wrapped in too many objects.")


def _langchain_action(value: dict[str, Any], name: str, reading: Reading) -> dict[str, Any]:
    """``{"action": "tool", "action_input": ...}`` -> an action object. Without an
    ``action_input`` (or a thought showing it is an envelope) a lone text is not a call."""
    if "action_input" not in value and _thought_of(value) is None:
        raise Shape(
            "bad_call",
            f'Its "action" was only the text {quoted(name[:40])}; write a tool call as '
            '{"name": "<tool name>", "args": {...}}.',
        )
    reading.fixes.append("read LangChain action/action_input")
    payload = value.get("action_input")
    if name.strip().lower() in ("final answer", "final_answer", "finish"):
        return {"final_answer": payload}
    return {"name": name, "args": payload}


def _one_action(action: dict[str, Any], reading: Reading) -> tuple[list[ToolCall], str | None]:
    call, final = _read_action(action, reading)
    return ([call] if call else []), final


def _looks_like_action(item: dict[str, Any]) -> bool:
    return any(k in item for k in ("action", "tool_calls", *NAME_KEYS, *FINAL_KEYS, *WRAPPER_KEYS))


def _read_list(items: list[Any], reading: Reading, *, top: bool) -> list[ToolCall] | None:
    """A list of calls (an action list, or a top-level array of envelopes or calls). At the top
    level a list that holds no action-like object is ``None`` (not an envelope)."""
    if top and not any(isinstance(i, dict) and _looks_like_action(i) for i in items):
        return None
    if not items:
        raise Shape("no_action", 'Its "action" list held no tool calls.')
    calls = []
    for item in items:
        if not isinstance(item, dict):
            raise Shape(
                "bad_call",
                "A list of actions may hold only tool calls like "
                f'{{"name": ..., "args": {{...}}}}, not {show_value(item)}.',
            )
        action: Any = item
        if "action" in item:
            action = item["action"]
            if isinstance(action, str):
                action = _langchain_action(item, action, reading)
        action = _unwrap_action(action, reading)
        if isinstance(action, list):
            raise Shape("ambiguous", "A list of actions cannot hold another list.")
        if not isinstance(action, dict):
            raise Shape(
                "bad_call",
                f"Each action in a list must be a tool call like "
                f'{{"name": ..., "args": {{...}}}}, not {show_value(action)}.',
            )
        call, _ = _read_action(action, reading)
        if call is None:
            raise Shape(
                "ambiguous",
                "A list of actions may hold only tool calls; give the final answer alone, "
                "after the observations.",
            )
        calls.append(call)
    return calls


def _read_action(action: dict[str, Any], reading: Reading) -> tuple[ToolCall | None, str | None]:
    """One action object -> (call, None) or (None, final answer)."""
    finals = [k for k in FINAL_KEYS if k in action]
    has_call = any(k in action for k in NAME_KEYS)
    if finals and has_call:
        raise Shape(
            "ambiguous",
            "Its action both calls a tool and gives a final answer; do one of them per reply "
            "(the answer must wait for the observation).",
        )
    if finals:
        answers = {json.dumps(action[k], sort_keys=True) for k in finals} if finals[1:] else ()
        if len(answers) > 1:
            raise Shape("ambiguous", f"Its action holds several different answers ({finals}).")
        if finals[0] != "final_answer":
            reading.fixes.append(f"read {finals[0]!r} as final_answer")
        answer = action[finals[0]]
        if answer is None and not NULL_ANSWER.get():
            raise Shape("bad_final", 'Its "final_answer" was null; write the answer as text.')
        if not isinstance(answer, str):
            answer = json.dumps(answer, ensure_ascii=False)
        return None, answer
    if has_call:
        return _read_call(action, reading), None
    if len(action) == 1:  # {"word_count": {"text": "a b"}}: the tool name as the key
        (name, args), = action.items()
        if TOOL_NAME.fullmatch(name):
            if isinstance(args, dict):
                reading.fixes.append("read {tool: args} action")
                return ToolCall(name, checked_args(args, name)), None
            problem = (
                f"Its action {show_value(action)} names {name!r} but gives no args object; "
                f'write {{"name": "{name}", "args": {{"<argument>": ...}}}}.'
            )
            return ToolCall(name, bare_value(name, args, problem, reading)), None
    raise Shape(
        "no_action",
        f'Its action {show_value(action)} has neither a tool "name" nor a "final_answer".',
    )


def _read_call(action: Any, reading: Reading) -> ToolCall:
    """A call object -> ToolCall, accepting the aliases and OpenAI's ``function`` object."""
    if not isinstance(action, dict):
        raise Shape("bad_call", "Each tool call must be an object with a name and args.")
    names: dict[str, Any] = {}
    args_given: dict[str, Any] = {}
    for key in NAME_KEYS:
        if key not in action:
            continue
        v = action[key]
        if key == "function" and isinstance(v, dict):  # OpenAI: {"function": {name, arguments}}
            names[key] = v.get("name")
            if "arguments" in v:
                args_given["function.arguments"] = v["arguments"]
            reading.fixes.append("read the OpenAI function object")
        else:
            names[key] = v
    for key in ARGS_KEYS:
        if key in action:
            args_given[key] = action[key]
    if not names:
        raise Shape("bad_call", f'The tool call {show_value(action)} has no tool "name".')
    if len(names) > 1 and len(_distinct(names.values())) > 1:
        raise Shape(
            "ambiguous",
            f"Its action names more than one tool ({', '.join(map(str, names.values()))}); "
            "call one tool per action, or use a list of actions.",
        )
    name = next(iter(names.values()))
    if not isinstance(name, str) or not name.strip():
        raise Shape("bad_call", 'The tool "name" must be a non-empty string.')
    name = name.strip()
    for key in names:
        if key != "name" and key != "function":
            reading.fixes.append(f"read {key!r} as name")
    if len(args_given) > 1 and len(_distinct(args_given.values())) > 1:
        raise Shape(
            "ambiguous", f"Its action gives the arguments twice ({list(args_given)}).", name
        )
    key, args = next(iter(args_given.items()), ("args", None))
    if key not in ("args", "function.arguments", "arguments"):
        reading.fixes.append(f"read {key!r} as args")
    return ToolCall(name, _read_args(args, name, reading))


def _distinct(values: Iterable[Any]) -> set[str]:
    """The different ``values`` (as sorted JSON)."""
    return {json.dumps(v, sort_keys=True, default=str) for v in values}


def _read_args(args: Any, name: str, reading: Reading) -> dict[str, Any]:
    if args is None:
        return {}
    for _ in range(2):  # a JSON-encoded string, at most twice
        if not isinstance(args, str):
            break
        try:
            decoded = loads_lenient(args)
        except DuplicateKey as exc:
            raise Shape("bad_args", f'The "args" of {name}: {exc}.', name) from None
        except (ValueError, RecursionError):
            problem = (
                f'The "args" of {name} was the text {quoted(args[:40])}, not an object; send '
                f'the arguments by name, like "args": {{"<argument>": "<value>"}}.'
            )
            return bare_value(name, args, problem, reading)
        reading.fixes.append("decoded args given as a JSON string")
        args = decoded
    if args is None:
        return {}
    if not isinstance(args, dict):
        problem = (
            f'The "args" of {name} must be an object with the argument names as keys, '
            f"not {_json_type_name(args)}."
        )
        return bare_value(name, args, problem, reading)
    return checked_args(args, name)


def bare_value(name: str, value: Any, problem: str, reading: Reading) -> dict[str, Any]:
    """Args for a value given without an argument name: named by the agent's namer (which
    knows the tool), else the ``bad_args`` error ``problem``."""
    arg = reading.namer(name, value) if reading.namer is not None else None
    if arg is None:
        raise Shape("bad_args", problem, name)
    reading.fixes.append(f"gave the bare value to {arg!r}, the only required argument of {name}")
    return {arg: value}


def checked_args(args: dict[str, Any], name: str) -> dict[str, Any]:
    """``args`` unless nested too deeply."""
    if _deeper_than(args, _MAX_ARGS_DEPTH):
        raise Shape(
            "too_deep",
            f"The args of {name} are nested more than {_MAX_ARGS_DEPTH} levels deep; send them "
            "flatter.",
            name,
        )
    return args


def _deeper_than(value: Any, limit: int) -> bool:
    stack = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if depth > limit:
            return True
        if isinstance(item, dict):
            stack.extend((v, depth + 1) for v in item.values())
        elif isinstance(item, list):
            stack.extend((v, depth + 1) for v in item)
    return False


def _json_type_name(value: Any) -> str:
    names = {bool: "a boolean", int: "a number", float: "a number", list: "a list", str: "text"}
    return names.get(type(value), type(value).__name__)


def show_value(value: Any) -> str:
    """A value as short one-line JSON text for a message."""
    try:
        text = json.dumps(value, ensure_ascii=False, default=str)
    except (ValueError, RecursionError):
        return f"(a deeply nested {type(value).__name__})"
    text = " ".join(text.split())
    return text if len(text) <= 60 else text[:59] + "…"


def quoted(s: str) -> str:
    """``s`` on one line, as a JSON string (for quoting the reply in a message)."""
    s = " ".join(s.split())
    return json.dumps(s, ensure_ascii=False)
