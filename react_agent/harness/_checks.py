"""Task checks: did a run make the calls a task needs and give an answer that holds?

A check spec is the JSON object of one task (or one turn of a conversation) in a tasks file::

    {"expected_calls": [{"name": str, "args": {...}, "args_match": {arg: {rule: value}},
                         "required": bool}],
     "call_order": [[0], [1, 2]], "parallel_allowed": bool,
     "forbidden_tools": ["<tool name>", ...] | ["*"],
     "final_answer": {"must_contain": [str], "must_contain_any": [[str]],
                      "must_not_contain": [str], "non_empty": bool},
     "memory": {"model_input_must_contain": [str]}}

Every key is optional; a key not named here is an error that suggests the closest known one
(:class:`Checks`), except the annotations no check reads: ``note`` (in an expected call,
``final_answer`` and ``memory``) and the seed format's ``observation`` and ``expected_by_seed``
(in an expected call). Arguments are compared exactly unless ``args_match`` names the key, with
the rules ``evaluates_to`` (plain arithmetic equal to the number within 1e-9), ``icontains``,
``contains``, ``one_of`` and ``optional``. Extra calls are allowed; ``call_order`` lists groups of
indices into ``expected_calls`` that happen in that order; answer substrings are case-sensitive.
The format and its rules are those of the seed acceptance scenarios
(``tests/data/seed_scenarios.json``, "how_to_use"), with ``must_not_contain`` added.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Annotated, Any

from pydantic import Field, ValidationError, model_validator
from pydantic_core import PydanticCustomError

from .._persist import ClosedShape, Count, problem_in_words
from ..tools.builtin import evaluate
from ..types import RunResult, ToolCall

Spec = dict[str, Any]

CHECK_KEYS = ("expected_calls", "call_order", "parallel_allowed", "forbidden_tools",
              "final_answer", "memory")
"""The keys of a task line that are checks (those of :class:`Checks`)."""


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


class _Rule(ClosedShape):
    """An ``args_match`` rule (the defaults are never read: a rule names what it checks)."""

    evaluates_to: Annotated[float, Field(allow_inf_nan=False)] = 0.0
    contains: str = ""
    icontains: str = ""
    one_of: list[Any] = Field(default_factory=list)
    optional: bool = False


class _ExpectedCall(ClosedShape):
    """An ``expected_calls`` entry; ``note``, ``observation`` and ``expected_by_seed`` are the
    seed acceptance format's annotations, which no check reads."""

    name: str
    args: dict[str, Any] = Field(default_factory=dict)
    args_match: dict[str, _Rule] = Field(default_factory=dict)
    required: bool = True
    note: Any = None
    observation: Any = None
    expected_by_seed: Any = None


class _AnswerRules(ClosedShape):
    must_contain: list[str] = Field(default_factory=list)
    must_contain_any: list[Annotated[list[str], Field(min_length=1)]] = Field(
        default_factory=list)
    must_not_contain: list[str] = Field(default_factory=list)
    non_empty: bool = False
    note: Any = None


class _Memory(ClosedShape):
    model_input_must_contain: list[str] = Field(default_factory=list)
    note: Any = None


class Checks(ClosedShape):
    """The checks of a task or of one turn of a conversation (see the module docs): every key
    known, every value of its type, ``call_order`` naming expected calls."""

    expected_calls: list[_ExpectedCall] = Field(default_factory=list)
    call_order: list[list[Count]] = Field(default_factory=list)
    parallel_allowed: bool = False
    forbidden_tools: list[str] = Field(default_factory=list)
    final_answer: _AnswerRules = Field(default_factory=_AnswerRules)
    memory: _Memory = Field(default_factory=_Memory)

    @model_validator(mode="after")
    def _order_names_expected_calls(self) -> Checks:
        for group in self.call_order:
            if any(i >= len(self.expected_calls) for i in group):
                raise PydanticCustomError(
                    "call_order", "call_order: the group {group} names a call that is not "
                    "expected (expected_calls has {n})",
                    {"group": str(group)[:80], "n": len(self.expected_calls)})
        return self


def validate(spec: Spec) -> None:
    """Check that the checks of ``spec`` are well formed, before any task runs.

    Raises:
        ValueError: an unknown key (the message suggests the closest known one), a check of
            the wrong shape (a list that is not a list, a call without a name, an index of
            ``call_order`` out of range, ...); the message names the key at fault.
    """
    try:
        Checks.model_validate(spec)
    except ValidationError as exc:
        raise ValueError(problem_in_words(exc)) from None


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
