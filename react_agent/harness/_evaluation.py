"""``react-agent eval``: how well a model picks the first action, on a JSON Lines suite.

Each line: ``{"id", "category", "question", "tools": [OpenAI tool specs], "expected": [calls]
| null}``. A call is ``{"name": str, "args": {arg: [acceptable values]}}``: each argument lists
the values accepted (a list value is written inside the list: ``[[1, 2]]``; ``""`` among them
means the argument may be left out). ``null`` means no tool fits: the model must answer
directly. Tool specs may use the loose type names of public function-calling benchmarks
(``dict``, ``float``, ``tuple``, ``any``, ``int``, ``str``, ``bool``, ``list``); they are
normalised to JSON Schema.

Only the first model turn runs; no tool is executed. A reply is correct when the parser finds
exactly the expected calls (in any order for parallel calls), with arguments that match after
the invoker's cleaning (strings compared ignoring case and surrounding spaces, numbers by
value), and no unexpected argument except one equal to its schema default. The scoring follows
the Berkeley Function-Calling Leaderboard's AST checker, simplified.
"""

from __future__ import annotations

import json
import os
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from pydantic import Field

from .._persist import (
    NameOrNumber,
    Seconds,
    Shape,
    append_json_lines,
    read_json_lines,
    write_json_line,
)
from ..agent import Agent
from ..errors import ConfigError, ModelError, ToolDefinitionError
from ..events import (
    FinalAnswer,
    OutputRejected,
    ParseFailed,
    ReplyParsed,
    RunFinished,
    RunStarted,
    ToolStarted,
)
from ..models.base import fresh_state
from ..tools import Toolbox, clean_args
from ..types import Step
from ._batch import read_records


@dataclass(frozen=True)
class EvalItem:
    """One question of a suite (see the module docs for the fields)."""

    id: str
    category: str
    question: str
    tools: tuple[dict[str, Any], ...]
    expected: tuple[dict[str, Any], ...] | None


def load_suite(path: str | os.PathLike[str]) -> list[EvalItem]:
    """The items of a suite file.

    Raises:
        ConfigError: unreadable file, or a line that is not an item (named by number).
    """
    items = []
    for number, data in read_json_lines(path, "suite"):
        try:
            expected = data["expected"]
            item = EvalItem(
                id=str(data.get("id", number)), category=str(data.get("category", "all")),
                question=data["question"], tools=tuple(data.get("tools") or ()),
                expected=None if expected is None else tuple(expected),
            )
            toolbox_from_specs(item.tools)
        except (ValueError, KeyError, TypeError, AttributeError, ToolDefinitionError) as exc:
            raise ConfigError(f"{path}, line {number}: not an eval item ({exc}).") from exc
        items.append(item)
    return items


def toolbox_from_specs(specs: Iterable[dict[str, Any]]) -> Toolbox:
    """A Toolbox of the specs with functions that are never run (eval stops before tools):
    :meth:`Toolbox.from_openai_specs(specs) <react_agent.tools.Toolbox.from_openai_specs>`.

    Raises:
        ToolDefinitionError: a spec is unusable.
    """
    return Toolbox.from_openai_specs(specs)


@dataclass
class FirstTurn:
    """The first model call of a run: its ``step``, the parsed ``calls`` (``[{name, args}]``)
    and the names of the tools the model was shown (after routing)."""

    step: Step
    calls: list[dict[str, Any]]
    tools_shown: list[str]


def first_turn(agent: Agent, question: str) -> FirstTurn:
    """Run ``question`` up to the first action the run takes, and stop there, before any
    tool: the first reply's calls as the model wrote them (held or not) or its final answer,
    or what a policy's question gave instead (a final answer for calls that do not fit, calls
    for an answer a tool should give), or the first reply's parse error.

    Raises:
        ModelError: the model backend failed (eval cannot score without a reply).
    """
    shown: list[str] = []
    first: FirstTurn | None = None
    events = agent.iter(question)
    try:
        for event in events:
            if isinstance(event, RunStarted):
                shown = list(event.tools)
            elif isinstance(event, ReplyParsed) and (first is None or event.step.origin):
                held = event.step.records.get("held_calls", [])
                calls = [*(c.to_dict() for c in event.reply.tool_calls), *held]
                first = FirstTurn(event.step, calls, shown)  # (or a policy's instead)
            elif isinstance(event, ParseFailed) and first is None:
                return FirstTurn(event.step, [], shown)
            elif isinstance(event, ToolStarted | FinalAnswer | OutputRejected | ReplyParsed
                            | RunFinished) and first is not None:
                return first
            elif isinstance(event, RunFinished):
                raise ModelError(event.result.error or "the run ended before a reply",
                                 cause="other")
    finally:
        close = getattr(events, "close", None)  # stop the run where it stands
        if close is not None:
            close()
    raise AssertionError("unreachable: a run ends with RunFinished")  # pragma: no cover


def score(step: Step, expected: tuple[dict[str, Any], ...] | None, toolbox: Toolbox,
          calls: list[dict[str, Any]]) -> tuple[bool, str]:
    """``(correct, reason)`` for the first reply, given the parsed ``calls``."""
    if step.stage is None:
        return False, f"format error: {step.error}"
    if expected is None:
        if not calls:
            return True, "answered directly"
        unknown = [c["name"] for c in calls if c["name"] not in toolbox]
        if unknown:
            return False, f"called {unknown[0]} (not one of the tools); none fits"
        return False, "called a tool; none fits"
    if not calls:
        return False, "answered without calling a tool"
    if len(calls) != len(expected):
        return False, f"{len(calls)} call(s); expected {len(expected)}"
    left = list(calls)
    for want in expected:
        problems = [_call_problem(want, got, toolbox) for got in left]
        if None not in problems:
            return False, problems[0] or "no matching call"
        left.pop(problems.index(None))
    return True, "correct"


def _call_problem(want: dict[str, Any], got: dict[str, Any], toolbox: Toolbox) -> str | None:
    if got["name"] != want["name"]:
        return f"called {got['name']}; expected {want['name']}"
    tool = toolbox.get(got["name"])
    schema = tool.parameters if tool else {}
    args, _ = clean_args(schema, got["args"])
    props = schema.get("properties") or {}
    for name, accepted in want.get("args", {}).items():
        accepted = accepted if isinstance(accepted, list) else [accepted]
        if name not in args:
            if "" not in accepted:
                return f"{got['name']}: missing {name}"
        elif not any(_same(args[name], a) for a in accepted if a != "" or args[name] == ""):
            return f"{got['name']}: {name}={json.dumps(args[name], ensure_ascii=False)}"
    for name, value in args.items():
        if name not in want.get("args", {}):
            default = (props.get(name) or {}).get("default", object())
            if not _same(value, default):
                return f"{got['name']}: unexpected argument {name}"
    return None


def _same(got: Any, want: Any) -> bool:
    if isinstance(got, str) and isinstance(want, str):
        return " ".join(got.split()).casefold() == " ".join(want.split()).casefold()
    if isinstance(got, bool) or isinstance(want, bool):
        return got is want
    if isinstance(got, (int, float)) and isinstance(want, (int, float)):
        return float(got) == float(want)
    if isinstance(got, list) and isinstance(want, list):
        return len(got) == len(want) and all(_same(g, w) for g, w in zip(got, want, strict=True))
    if isinstance(got, dict) and isinstance(want, dict):
        return got.keys() == want.keys() and all(_same(got[k], want[k]) for k in got)
    return bool(got == want)


class _EvalRecord(Shape):
    """A line of an eval results file (see :func:`run_eval`): the fields the report reads."""

    id: NameOrNumber
    category: str
    settings: dict[str, Any] = Field(default_factory=dict)
    correct: bool
    stage: str | None = None
    seconds: Seconds


def scored(
    items: Iterable[EvalItem], out: str | os.PathLike[str], settings: dict[str, Any]
) -> list[dict[str, Any]]:
    """The records already in ``out`` for these items, scored with the same settings.

    Raises:
        ConfigError: ``out`` exists but a line is not an eval record (the line and the field
            are named).
    """
    ids = {i.id for i in items}
    return [r for r in read_records(out, _EvalRecord)
            if r.get("id") in ids and r.get("settings", {}) == settings]


def run_eval(
    items: Iterable[EvalItem],
    out: str | os.PathLike[str],
    make_agent: Callable[[Toolbox], Agent],
    progress: Callable[[int, int, EvalItem, dict[str, Any] | None], Any] | None = None,
    settings: dict[str, Any] | None = None,
) -> list[dict[str, Any]]:
    """Score each item not yet in ``out`` with the same ``settings`` (e.g. model, constrained,
    routing) and append its record; returns every record of ``out`` for these items and
    settings (earlier runs included: a changed setting scores the items again). A record:
    ``id``, ``category``, ``question``, ``settings``, ``raw_output``, ``calls``,
    ``final_answer``, ``parse_error``, ``stage``, ``correct``, ``reason``, ``tools_shown``,
    ``prompt_tokens``, ``completion_tokens``, ``seconds``. The model is reset before each item
    (:func:`react_agent.models.base.fresh_state`), so an item scores the same in a whole run, a
    ``--category`` run or a resumed one."""
    items = list(items)
    settings = dict(settings or {})
    records = scored(items, out, settings)
    done = {r["id"] for r in records}
    todo = [i for i in items if i.id not in done]
    with append_json_lines(out) as sink:
        for number, item in enumerate(todo, 1):
            if progress:
                progress(number - 1, len(todo), item, None)
            toolbox = toolbox_from_specs(item.tools)
            started = time.perf_counter()
            agent = make_agent(toolbox)
            fresh_state(agent.model)  # each item as on a freshly loaded model, in any order
            turn = first_turn(agent, item.question)
            step, calls = turn.step, turn.calls
            correct, reason = score(step, item.expected, toolbox, calls)
            record = {
                "id": item.id, "category": item.category, "question": item.question,
                "settings": settings, "raw_output": step.raw_output, "calls": calls,
                "final_answer": step.final_answer, "parse_error": step.error,
                "stage": step.stage, "correct": correct, "reason": reason,
                "tools_shown": turn.tools_shown, "prompt_tokens": step.prompt_tokens,
                "completion_tokens": step.completion_tokens,
                "seconds": round(time.perf_counter() - started, 3),
            }
            write_json_line(sink, record)
            records.append(record)
            if progress:
                progress(number, len(todo), item, record)
    return records


def report(records: list[dict[str, Any]]) -> list[str]:
    """Accuracy overall and per category, format errors and mean seconds, as text lines."""
    by_category = Counter(r["category"] for r in records)
    lines = [f"{'category':<16}{'items':>6}{'correct':>9}{'accuracy':>10}{'format err':>12}"
             f"{'s/item':>8}"]
    for name in [*sorted(by_category), "all"]:
        group = [r for r in records if name == "all" or r["category"] == name]
        if not group:
            continue
        right = sum(1 for r in group if r["correct"])
        formats = sum(1 for r in group if r["stage"] is None)
        seconds = sum(r["seconds"] for r in group) / len(group)
        lines.append(f"{name:<16}{len(group):>6}{right:>9}{right / len(group):>10.0%}"
                     f"{formats:>12}{seconds:>8.1f}")
    return lines
