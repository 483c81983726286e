"""Task checks: did a run make the calls a task needs and give an answer that holds?

A check spec is the JSON object of one task (or one turn of a conversation) in a tasks file::

    {"expected_calls": [{"name": str, "args": {...}, "args_match": {arg: {rule: value}},
                         "required": bool}],
     "call_order": [[0], [1, 2]], "parallel_allowed": bool,
     "forbidden_tools": ["<tool name>", ...] | ["*"],
     "final_answer": {"must_contain": [str], "must_contain_any": [[str]],
                      "must_not_contain": [str], "non_empty": bool},
     "memory": {"model_input_must_contain": [str]}}

Every key is optional. Arguments are compared exactly unless ``args_match`` names the key, with
the rules ``evaluates_to`` (plain arithmetic equal to the number within 1e-9), ``icontains``,
``contains``, ``one_of`` and ``optional``. Extra calls are allowed; ``call_order`` lists groups of
indices into ``expected_calls`` that happen in that order; answer substrings are case-sensitive.
The format and its rules are those of the seed acceptance scenarios
(``tests/data/seed_scenarios.json``, "how_to_use"), with ``must_not_contain`` added.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from ..tools.builtin._calculator import evaluate
from ..types import RunResult, ToolCall

Spec = dict[str, Any]

CHECK_KEYS = ("expected_calls", "call_order", "parallel_allowed", "forbidden_tools",
              "final_answer", "memory")
"""The keys of a task line that are checks."""


def check_run(result: RunResult, spec: Spec) -> list[str]:
    """What is wrong with ``result`` under the checks of ``spec``, in words (``[]``: it passed).

    The run must end with a final answer, make every required call (in ``call_order``), call no
    forbidden tool, and give an answer that passes ``final_answer``; a later turn of a
    conversation must have had the earlier turns in the model's input (``memory``).
    """
    problems = call_problems(result, spec)
    forbidden = spec.get("forbidden_tools", [])
    problems += [
        f"forbidden tool called: {_show(call.name, call.args)}"
        for call in result.tool_calls
        if "*" in forbidden or call.name in forbidden
    ]
    if result.status != "final_answer":
        problems.append(f"the run ended with status {result.status!r}: {result.error}")
    return problems + memory_problems(result, spec) + answer_problems(
        result.final_answer, spec.get("final_answer", {})
    )


def has_checks(spec: Spec) -> bool:
    """Whether ``spec`` holds any check (a task without checks is run but not scored)."""
    return any(key in spec for key in CHECK_KEYS)


def validate(spec: Spec) -> None:
    """Check that the checks of ``spec`` are well formed, before any task runs.

    Raises:
        ValueError: a check of the wrong shape (a list that is not a list, a call without a
            name, an unknown rule, an index of ``call_order`` out of range, ...); the message
            names the key at fault.
    """
    calls = _typed(spec, "expected_calls", list, [])
    for n, call in enumerate(calls):
        if not isinstance(call, dict) or not isinstance(call.get("name"), str):
            raise ValueError(f"expected_calls[{n}] needs a name")
        _typed(call, "args", dict, {}, f"expected_calls[{n}].")
        for key, rule in _typed(call, "args_match", dict, {}, f"expected_calls[{n}].").items():
            if not isinstance(rule, dict):
                raise ValueError(f"expected_calls[{n}].args_match.{key} must be an object")
            unknown = set(rule) - {*RULES, "optional"}
            if unknown:
                raise ValueError(f"expected_calls[{n}].args_match.{key}: unknown rule "
                                 f"{sorted(unknown)[0]!r} (known: {', '.join(RULES)}, optional)")
    for group in _typed(spec, "call_order", list, []):
        if not isinstance(group, list) or not all(
                isinstance(i, int) and 0 <= i < len(calls) for i in group):
            raise ValueError(f"call_order group {group!r} names a call that is not expected")
    _typed(spec, "parallel_allowed", bool, False)
    rules = _typed(spec, "final_answer", dict, {})
    for key in ("must_contain", "must_not_contain"):
        if not all(isinstance(s, str) for s in _typed(rules, key, list, [], "final_answer.")):
            raise ValueError(f"final_answer.{key} must be a list of strings")
    if not all(isinstance(g, list) and g and all(isinstance(s, str) for s in g)
               for g in _typed(rules, "must_contain_any", list, [], "final_answer.")):
        raise ValueError("final_answer.must_contain_any must be a list of non-empty lists of "
                         "strings")
    if not all(isinstance(s, str) for s in _typed(spec, "forbidden_tools", list, [])):
        raise ValueError("forbidden_tools must be a list of tool names")
    memory = _typed(spec, "memory", dict, {})
    if not all(isinstance(s, str)
               for s in _typed(memory, "model_input_must_contain", list, [], "memory.")):
        raise ValueError("memory.model_input_must_contain must be a list of strings")


def _typed(spec: Spec, key: str, kind: type, default: Any, prefix: str = "") -> Any:
    """``spec[key]`` when it is a ``kind`` (``default`` when absent).

    Raises:
        ValueError: it is of another type.
    """
    value = spec.get(key, default)
    if not isinstance(value, kind) or (kind is not bool and isinstance(value, bool)):
        name = "an object" if kind is dict else f"a {kind.__name__}"
        raise ValueError(f"{prefix}{key} must be {name}, not {type(value).__name__}")
    return value


def call_problems(result: RunResult, spec: Spec) -> list[str]:
    """Missing required calls and ``call_order`` violations.

    Each expected call takes the first unused matching call made after the previous group's
    steps; calls of one group may share a step (a parallel action) only if ``parallel_allowed``.
    Expected calls that ``call_order`` does not list may come at any time.
    """
    expected = spec.get("expected_calls", [])
    made = [(step.index, call) for step in result.steps for call in step.tool_calls]
    order = spec.get("call_order", [])
    in_order = {i for group in order for i in group}
    unordered = [[i] for i in range(len(expected)) if i not in in_order]
    problems: list[str] = []
    used: set[int] = set()
    after = 0  # the last step of the previous group
    for number, group in enumerate([*order, *unordered]):
        if number >= len(order):
            after = 0
        steps = []
        for i in group:
            want = expected[i]
            found = [
                n for n, (_, call) in enumerate(made) if n not in used and call_matches(want, call)
            ]
            later = [n for n in found if made[n][0] > after]
            if not found:
                if want.get("required", True):
                    problems.append(f"missing call {_show(want['name'], want.get('args', {}))}")
                continue
            if not later:
                problems.append(f"call {_show(want['name'], want.get('args', {}))} came out of "
                                "order")
            n = (later or found)[0]
            used.add(n)
            steps.append(made[n][0])
        if len(set(steps)) < len(steps) and not spec.get("parallel_allowed"):
            problems.append(f"expected calls {group} came as one parallel step; not allowed here")
        after = max(steps, default=after)
    return problems


def call_matches(want: Spec, call: ToolCall) -> bool:
    """``call`` is the expected call ``want`` (its name; its arguments by :func:`args_match`)."""
    return bool(want["name"] == call.name and args_match(want, call.args))


def args_match(want: Spec, args: dict[str, Any]) -> bool:
    """``args`` equal ``want["args"]``, except keys with an ``args_match`` rule."""
    rules: dict[str, Spec] = want.get("args_match", {})
    expected = want.get("args", {})
    keys = set(expected) | set(rules)
    if set(args) - keys:
        return False
    for key in keys:
        rule = rules.get(key, {})
        if key not in args:
            if rule.get("optional"):
                continue
            return False
        tests = [RULES[kind](args[key], arg) for kind, arg in rule.items() if kind != "optional"]
        if not (all(tests) if tests else args[key] == expected.get(key, args[key])):
            return False
    return True


def evaluates_to(value: Any, number: float) -> bool:
    """``value`` is plain arithmetic (or a number) equal to ``number`` within 1e-9."""
    if isinstance(value, str):
        try:
            value = evaluate(value)
        except (ValueError, ArithmeticError):
            return False
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    return abs(value - number) <= 1e-9


RULES: dict[str, Callable[[Any, Any], bool]] = {
    "evaluates_to": evaluates_to,
    "contains": lambda value, text: isinstance(value, str) and text in value,
    "icontains": lambda value, text: isinstance(value, str) and text.lower() in value.lower(),
    "one_of": lambda value, options: value in options,
}
"""The ``args_match`` rules: ``rule(value, argument of the rule) -> bool``."""


def answer_problems(answer: str | None, rules: Spec) -> list[str]:
    """What the final answer breaks of ``non_empty``, ``must_contain``, ``must_contain_any`` and
    ``must_not_contain``."""
    text = answer or ""
    problems = ["the final answer is empty"] if rules.get("non_empty") and not text.strip() else []
    problems += [
        f"the final answer lacks {s!r}" for s in rules.get("must_contain", []) if s not in text
    ]
    problems += [
        f"the final answer has none of {group}"
        for group in rules.get("must_contain_any", [])
        if not any(s in text for s in group)
    ]
    problems += [
        f"the final answer contains {s!r}" for s in rules.get("must_not_contain", []) if s in text
    ]
    return problems


def memory_problems(result: RunResult, spec: Spec) -> list[str]:
    """A later turn of a conversation: the model's input must hold the earlier turns."""
    needed = spec.get("memory", {}).get("model_input_must_contain", [])
    asked = [i for i, m in enumerate(result.messages)
             if m["role"] == "user" and m["content"] == result.task]
    earlier = result.messages[: asked[-1] + 1] if asked else []
    seen = "\n".join(m["content"] for m in earlier if m["role"] != "system")
    return [f"the model's input lacks {s!r} (the earlier turns)" for s in needed if s not in seen]


def _show(name: str, args: dict[str, Any]) -> str:
    return f"{name} {json.dumps(args, ensure_ascii=False)}"
