"""In a reply calling several different tools, a call that waits for the results it needs."""

from __future__ import annotations

import dataclasses
import json
import re
from dataclasses import dataclass
from typing import Any, ClassVar

from .. import prompts
from ..engine import Each, Facts, Gathered, Policy, Run
from ..types import Reply, Step, ToolCall
from ._grounding import unstated

_NUMBER = re.compile(r"-?\d+(?:,\d{3})*(?:\.\d+)?")


class Said:
    """What the user said and the tools returned in one run, read from its
    :class:`~react_agent.engine.Facts` as they grow, each text once, when a check first needs
    it."""

    def __init__(self, facts: Facts) -> None:
        fold = str.casefold
        self._user = Each(facts.user, fold)
        self._ok = Each(facts.ok_observations, fold)
        self._numbers = Gathered([facts.user, facts.ok_observations], numbers, set())
        self._said: tuple[int, int, str] = (0, 0, "")

    @property
    def text(self) -> str:
        """The user's messages and the successful results, one text, case-folded."""
        user, ok = self._user(), self._ok()
        if self._said[:2] != (len(user), len(ok)):
            self._said = (len(user), len(ok), "\n".join([*user, *ok]))
        return self._said[2]

    @property
    def numbers(self) -> set[float]:
        """The numbers in :attr:`text`, as floats (thousands separators dropped)."""
        found: set[float] = self._numbers()
        return found


def numbers(text: str) -> set[float]:
    """The numbers in ``text``, as floats (thousands separators dropped)."""
    return {float(n.replace(",", "")) for n in _NUMBER.findall(text)}


@dataclass(frozen=True)
class HoldDependentCalls(Policy):
    """In a reply that calls several different tools at once, a call with an argument value
    that neither the user's messages nor any result so far states (:func:`unstated`: an amount
    made up before the lookup that gives it, an address written as a description) is not run
    yet: the other calls run, the reply is kept in the history without it, and the observation
    says it was not run (``prompts/policies/held.md``), so the model is not shown the made-up
    values to copy. If every call would wait, all run.

    Records ``step.records["held_calls"] = [{"name", "args"}, ...]``; a note per held call.
    Its state for a run: :class:`Said`.
    A capable model's reply of independent calls can hold a value the task does not state
    (a name it inferred): this policy then holds a call that was right to send.
    """

    name: ClassVar[str] = "held_calls"

    def for_run(self, run: Run) -> Said:
        return Said(run.facts)

    def after_reply(self, run: Run, step: Step, reply: Reply) -> Reply | None:
        calls = reply.tool_calls
        if len({c.name for c in calls}) < 2:
            return reply
        said: Said = run.state(self)
        held = [c for c in calls
                if unstated(c, said.text, said.numbers, _parameters(run, c))]
        if not held or len(held) == len(calls):
            return reply
        keep = [c for c in calls if c not in held]
        action: Any = [c.to_dict() for c in keep] if len(keep) > 1 else keep[0].to_dict()
        source = json.dumps({"thought": reply.thought or "", "action": action},
                            ensure_ascii=False)
        run.messages[-1] = {"role": "assistant", "content": source}
        step.records[self.name] = [c.to_dict() for c in held]
        for call in held:
            run.note(step, self.name, "Held", f"{call.name} "
                     f"{json.dumps(call.args, ensure_ascii=False)} (values stated neither by "
                     "the user nor by a result yet; not run)")
        step.reply = dataclasses.replace(reply, tool_calls=keep, source=source)
        return step.reply

    def after_observation(self, run: Run, step: Step, text: str) -> str:
        held = step.records.get(self.name)
        if not held:
            return text
        names = ", ".join(dict.fromkeys(call["name"] for call in held))
        return text + "\n" + prompts.render("policies/held", names=names)


def _parameters(run: Run, call: ToolCall) -> dict[str, Any] | None:
    tool = run.setup.toolbox.get(call.name)
    return tool.parameters if tool else None
