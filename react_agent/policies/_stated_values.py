"""Does the request give the values of a first call? A focused question per value.

A small model that calls a tool no request fits fills its arguments from whatever is at hand:
a number the request gives for something else, a round amount the user never gave, a zero.
Asked about the tools alone, the model says they fit (the topic is close);
asked about one value at a time (the tool, the task, the value), it says less often that the
request gives it. The questions of one tool share their prefix, so a backend that keeps its
prompt cache (llama.cpp) evaluates only each value's last lines after the first.
Verification question by question, as in Chain-of-Verification (Dhuliawala et al., 2023), read
from the model's own probabilities as Relevance does.
"""

from __future__ import annotations

import json
import math
from collections.abc import Generator
from dataclasses import dataclass
from typing import Any, ClassVar

from .. import prompts
from ..engine import Policy, Request, Run
from ..errors import ConfigError, ModelError
from ..tools import Toolbox
from ..types import Message, Reply, Step, ToolCall
from ._made_up import COMPOSED
from ._relevance import CHOICES, answer_instead, ask_yes_or_no, cut_task

MAX_VALUE_CHARS = 200
"""A longer string value is not asked about (a text the model composed, not a value given)."""

CHECKED_TYPES = ("string", "number", "integer")
"""The schema types of the arguments asked about."""


_COMBINING = ("$ref", "allOf", "anyOf", "oneOf", "not", "if")
"""Schema keywords whose options :func:`asked_values` does not follow: an argument written
with them is not asked about (its options may be fixed behind them)."""


def asked_values(tool_schema: dict[str, Any], args: dict[str, Any]) -> list[str]:
    """The arguments of ``args`` a question is asked about, in their order: listed as required
    in ``tool_schema`` (a tool's JSON Schema of its arguments), of a type in
    :data:`CHECKED_TYPES` (alone or with ``"null"``, or no type), without ``enum`` or
    ``const`` (a choice among fixed options may be a default the model takes) or a keyword of
    :data:`_COMBINING`, and holding a finite number or a non-empty string of at most
    :data:`MAX_VALUE_CHARS` characters as written (a number as JSON), a string with no
    character of :data:`~react_agent.policies._made_up.COMPOSED` (a command, a path, a URL or
    a date the model wrote in a format is composed, not given as it stands)."""
    properties = tool_schema.get("properties")
    required = tool_schema.get("required")
    if not isinstance(properties, dict) or not isinstance(required, list):
        return []
    wanted = {r for r in required if isinstance(r, str)}
    names = []
    for name, value in args.items():
        spec = properties.get(name) if name in wanted else None
        if not isinstance(spec, dict) or "enum" in spec or "const" in spec \
                or any(k in spec for k in _COMBINING) or not _checked_type(spec.get("type")):
            continue
        if isinstance(value, bool) or not isinstance(value, str | int | float) \
                or (isinstance(value, float) and not math.isfinite(value)):
            continue
        text = value if isinstance(value, str) else json.dumps(value)
        if not 0 < len(text.strip()) <= MAX_VALUE_CHARS or (
                isinstance(value, str) and COMPOSED.search(value)):
            continue
        names.append(name)
    return names


def _checked_type(kind: Any) -> bool:
    """Whether a schema's ``type`` is one of :data:`CHECKED_TYPES`, alone or with ``"null"``
    (``["string", "null"]``, as an optional value is often written), or absent."""
    if kind is None:
        return True
    if isinstance(kind, list):
        kinds = [k for k in kind if k != "null"]
        return len(kinds) == 1 and kinds[0] in CHECKED_TYPES
    return kind in CHECKED_TYPES


def value_question(tool_text: str, tool_schema: dict[str, Any], call: ToolCall, arg: str,
                   task: str) -> list[Message]:
    """The question whether ``task`` gives ``call``'s value of ``arg``
    (``prompts/policies/stated_values_system.md`` and ``stated_values.md``): ``tool_text``
    (the called tool described, :func:`~react_agent.prompts.tools_text`), the task (its head
    and tail when long: :func:`~react_agent.policies._relevance.cut_task`), the
    argument's name (one line, no backticks) and description (from ``tool_schema``, at most
    300 characters) and the value, each :func:`~react_agent.prompts.defang`-ed."""
    spec = tool_schema["properties"][arg]
    description = " ".join(str(spec.get("description", "")).split())[:300]
    name = " ".join(arg.replace("`", "'").split())[:100]
    return [
        {"role": "system", "content": prompts.render("policies/stated_values_system")},
        {"role": "user", "content": prompts.render(
            "policies/stated_values", tool=tool_text, task=prompts.defang(cut_task(task)),
            arg=prompts.defang(name), description=prompts.defang(description) or "no description",
            value=prompts.defang(json.dumps(call.args[arg], ensure_ascii=False)))},
    ]


@dataclass(frozen=True)
class StatedValues(Policy):
    """Before a run's first tool call, asks the model whether the request gives each value
    the call sets, one focused question per value (``prompts/policies/stated_values_system.md``
    and ``stated_values.md``: the called tool's description, the task, the argument, its
    description and the value; nothing else of the run). A value is asked about when
    :func:`asked_values` picks it (required, a number or a short string, no fixed options), at
    most ``max_values`` of the call. Only a reply of one call is asked about: in a reply of
    several, each call holds a part of a longer request, and the model's "yes" falls for the
    values of right calls too (BFCL's parallel tuning items, the docs' measurements page).
    When the mean probability of "yes" over the values asked is below ``threshold`` (a
    backend with ``accepts_choices``; any other answers in words, read as 1 or 0), the call
    does not run: the step is asked again after a note naming the value with the least "yes"
    (``prompts/policies/stated_values_answer.md``: ask the user for what the call needs, or
    answer), held to the final answer, as :class:`Relevance` does; an answer that does not
    come leaves the call to run.

    Asks once per run, on the loop's own first reply that calls a tool of the run before any
    call has succeeded, and not in a conversation that already has tool results; in
    ``serve``, not in a turn whose request requires a call (``sets_calls_aside``).

    Each question is a step with ``origin="stated_values"`` and ``records["stated_values"] =
    {"yes": p, "tools": [name], "arg": arg}`` (``p`` 0-1, or ``None`` when the answer was
    neither yes nor no: that value is left out of the mean); a note on the reply's step says
    what came of it.

    Args:
        threshold: the least mean probability (0-1] of "yes" that lets the call run; tuned
            on BFCL's tuning split (the docs' measurements page).
        max_values: the most values of the call asked about (the first ones).

    Raises:
        ConfigError: ``threshold`` is not a number in (0, 1] or ``max_values`` not a whole
            number of at least 1.
    """

    name: ClassVar[str] = "stated_values"
    sets_calls_aside: ClassVar[bool] = True
    choices: ClassVar[tuple[str, str]] = CHOICES
    threshold: float = 0.58
    max_values: int = 6

    def __post_init__(self) -> None:
        if isinstance(self.threshold, bool) or not isinstance(self.threshold, int | float) \
                or not 0 < self.threshold <= 1:
            raise ConfigError("StatedValues' threshold must be a probability in (0, 1].")
        if isinstance(self.max_values, bool) or not isinstance(self.max_values, int) \
                or self.max_values < 1:
            raise ConfigError("StatedValues' max_values must be a whole number, at least 1.")

    def for_run(self, run: Run) -> dict[str, bool]:
        asked = any(s.origin == self.name for s in run.steps)  # a resumed run: asked already
        return {"asked": asked or bool(run.facts.results or run.facts.earlier)}

    def on_action(self, run: Run, step: Step, reply: Reply) -> Generator[Request, Any, Reply]:
        state = run.state(self)
        if len(reply.tool_calls) != 1 or state["asked"] or step.origin is not None \
                or any(r.ok for r in run.facts.results):
            return reply  # several calls: each a part of a longer request (see the docstring)
        call = reply.tool_calls[0]
        if call.name not in run.setup.toolbox:
            return reply  # an unknown tool: the invoker says so
        tool = Toolbox([run.setup.toolbox[call.name]])  # built once: a Toolbox checks schemas
        schema = tool[call.name].parameters
        asked = asked_values(schema, call.args)[:self.max_values]
        if not asked:
            return reply
        state["asked"] = True
        text = prompts.tools_text(tool)
        answers: list[tuple[float, str]] = []
        for arg in asked:
            try:
                yes = yield from ask_yes_or_no(run, self.name, tool,
                                               value_question(text, schema, call, arg, run.task),
                                               self.choices)
            except ModelError as exc:
                run.note(step, self.name, "Stated values",
                         f"the question about {call.name}'s {arg} failed ({exc}); the call runs")
                return reply
            run.steps[-1].records[self.name]["arg"] = arg
            if yes is not None:
                answers.append((yes, arg))
        mean = sum(a[0] for a in answers) / len(answers) if answers else None
        if mean is None or mean >= self.threshold:
            said = "no answer was yes or no" if mean is None else \
                f"{mean:.0%} 'yes' on average, at least {self.threshold:.0%}"
            run.note(step, self.name, "Stated values", f"asked whether the request gives "
                     f"{len(asked)} value(s) of the call: {said}; the call runs")
            return reply
        yes, arg = min(answers)
        value = json.dumps(call.args[arg], ensure_ascii=False)
        run.note(step, self.name, "Stated values", f"asked whether the request gives "
                 f"{len(asked)} value(s) of the call: {mean:.0%} 'yes' on average, below "
                 f"{self.threshold:.0%} (the least, {yes:.0%}, for {call.name}'s {arg} = "
                 f"{value}); asking for the final answer instead")
        yield from run.flush()
        note = prompts.render("policies/stated_values_answer", tool=prompts.defang(call.name),
                              arg=prompts.defang(arg), value=prompts.defang(value))
        return (yield from answer_instead(run, step, reply, self.name, "Stated values", note))
