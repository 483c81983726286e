"""The safe invoker: one tool call -> one observation string, whatever happens.

Unknown tools, invalid arguments, exceptions and timeouts all become ``Error: ...`` observations
for the model (as in simonw/llm's tool runner); nothing a tool does can crash the run.
"""

from __future__ import annotations

import asyncio
import difflib
import inspect
import json
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from jsonschema import Draft202012Validator

from .parser import ToolCall
from .toolbox import Tool, Toolbox

DEFAULT_MAX_OBSERVATION_CHARS = 8000
"""Observations longer than this (characters) are cut, with a marker saying how much was cut."""


@dataclass
class ToolResult:
    """The outcome of one tool call.

    Attributes:
        call: the call as the model wrote it.
        observation: the text the model gets back.
        ok: the tool ran and returned.
        error: ``None``, or the failure kind: ``"unknown_tool"``, ``"invalid_args"``,
            ``"tool_error"``, ``"timeout"``.
        args: the arguments after cleaning (what the tool was called with).
        cleaning: what the cleaning changed, in words (e.g. ``"stripped spaces from city"``).
        seconds: wall time of the tool call.
    """

    call: ToolCall
    observation: str
    ok: bool
    error: str | None = None
    args: dict[str, Any] = field(default_factory=dict)
    cleaning: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.call.name, "args": self.call.args, "cleaned_args": self.args,
            "observation": self.observation, "ok": self.ok, "error": self.error,
            "cleaning": self.cleaning, "seconds": round(self.seconds, 6),
        }


def invoke(
    toolbox: Toolbox, call: ToolCall, *, max_chars: int = DEFAULT_MAX_OBSERVATION_CHARS
) -> ToolResult:
    """Run one tool call safely and describe the outcome for the model.

    Never raises for anything the model or the tool did (``KeyboardInterrupt`` still passes).
    """
    started = time.perf_counter()
    tool = toolbox.get(call.name)
    if tool is None:
        return ToolResult(call, _unknown_tool(toolbox, call.name), ok=False, error="unknown_tool")
    args, cleaning = clean_args(tool.parameters, call.args)
    problems = check_args(tool.parameters, args)
    if problems:
        text = f"Error: invalid arguments for {tool.name}:\n" + "\n".join(
            f"- {p}" for p in problems
        ) + f"\nCall {tool.name} again with corrected args."
        return ToolResult(call, text, ok=False, error="invalid_args", args=args, cleaning=cleaning)
    outcome, value = _call_with_timeout(tool, args)
    seconds = time.perf_counter() - started
    if outcome == "timeout":
        text = (
            f"Error: {tool.name} did not finish within {tool.timeout:g} seconds and was "
            "abandoned. Try simpler arguments or another approach."
        )
        return ToolResult(call, text, False, "timeout", args, cleaning, seconds)
    if outcome == "raised":
        text = f"Error: {type(value).__name__}: {value}"
        return ToolResult(call, _cut(text, max_chars), False, "tool_error", args, cleaning, seconds)
    text = _cut(format_result(value), max_chars)
    return ToolResult(call, text, True, None, args, cleaning, seconds)


def invoke_all(
    toolbox: Toolbox,
    calls: Sequence[ToolCall],
    *,
    max_chars: int = DEFAULT_MAX_OBSERVATION_CHARS,
    max_workers: int = 4,
) -> list[ToolResult]:
    """Run independent calls concurrently (bounded thread pool); results in the order given."""
    if len(calls) == 1:
        return [invoke(toolbox, calls[0], max_chars=max_chars)]
    with ThreadPoolExecutor(max_workers=max(1, min(max_workers, len(calls)))) as pool:
        return list(pool.map(lambda c: invoke(toolbox, c, max_chars=max_chars), calls))


def clean_args(schema: dict[str, Any], args: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """Strip surrounding whitespace from string arguments. Returns (cleaned args, changes)."""
    cleaned: dict[str, Any] = {}
    changes: list[str] = []
    for key, value in args.items():
        if isinstance(value, str) and value != value.strip():
            value = value.strip()
            changes.append(f"stripped spaces from {key}")
        cleaned[key] = value
    return cleaned, changes


def check_args(schema: dict[str, Any], args: dict[str, Any]) -> list[str]:
    """Validate ``args`` against the tool's JSON Schema; one plain-words problem per field."""
    problems: list[str] = []
    props: dict[str, Any] = schema.get("properties", {})
    if schema.get("additionalProperties", False) is False:
        for extra in args:
            if extra not in props:
                hint = _did_you_mean(extra, props)
                known = ", ".join(props) or "none"
                problems.append(f"{extra}: unknown argument{hint} (arguments: {known})")
    for error in sorted(Draft202012Validator(schema).iter_errors(args), key=_error_key):
        if error.validator == "required":
            missing = [r for r in error.validator_value if r not in error.instance]
            for name in missing:
                expected = props.get(name, {}).get("type", "value")
                problems.append(f"{name}: missing (required {expected})")
        elif error.validator == "additionalProperties":
            continue  # reported above with a hint
        else:
            where = ".".join(str(p) for p in error.absolute_path) or "(args)"
            got = json.dumps(error.instance, ensure_ascii=False, default=repr)[:80]
            problems.append(f"{where}: {_expected(error)}, got {got}")
    return list(dict.fromkeys(problems))


def format_result(value: Any) -> str:
    """A tool's return value as observation text: strings as they are, ``None`` as a stated
    empty result, JSON where possible, ``repr`` otherwise."""
    if isinstance(value, str):
        return value if value.strip() else "(the tool returned an empty string)"
    if value is None:
        return "(the tool returned no result)"
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return repr(value)


def _cut(text: str, max_chars: int) -> str:
    if len(text) <= max_chars:
        return text
    cut = len(text) - max_chars
    return f"{text[:max_chars]}\n[... {cut} more characters cut; the result was too long]"


def _call_with_timeout(tool: Tool, args: dict[str, Any]) -> tuple[str, Any]:
    """Run the tool in a daemon thread; ("ok", value) | ("raised", exc) | ("timeout", None)."""
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            result = tool.func(**args)
            if inspect.isawaitable(result):
                result = asyncio.run(_await(result))
            box["value"] = result
        except BaseException as exc:  # the tool's failure is the model's observation
            box["error"] = exc

    worker = threading.Thread(target=target, name=f"tool:{tool.name}", daemon=True)
    worker.start()
    worker.join(tool.timeout)
    if worker.is_alive():
        return "timeout", None
    if "error" in box:
        return "raised", box["error"]
    return "ok", box.get("value")


async def _await(awaitable: Any) -> Any:
    return await awaitable


def _unknown_tool(toolbox: Toolbox, name: str) -> str:
    available = ", ".join(toolbox.names) or "none"
    return f"Error: there is no tool named {name!r}{_did_you_mean(name, toolbox.names)}. " \
        f"Available tools: {available}."


def _did_you_mean(name: str, options: Any) -> str:
    close = difflib.get_close_matches(name, list(options), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _error_key(error: Any) -> tuple[str, ...]:
    return tuple(str(p) for p in error.absolute_path)


def _expected(error: Any) -> str:
    v = error.validator
    if v == "type":
        return f"expected {error.validator_value}"
    if v == "enum":
        return "expected one of " + ", ".join(
            json.dumps(x, ensure_ascii=False) for x in error.validator_value
        )
    return error.message
