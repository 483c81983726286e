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
_SCALED = re.compile(r"(-?\d+(?:,\d{3})*(?:\.\d+)?)\s*(%|percent\b|per\s+cent\b|thousand\b|k\b|"
                     r"million\b|mn\b|m\b|billion\b|bn\b|b\b|trillion\b|万|亿)", re.IGNORECASE)
_SCALE = {"%": 0.01, "percent": 0.01, "per cent": 0.01, "thousand": 1e3, "k": 1e3, "million": 1e6,
          "mn": 1e6, "m": 1e6, "billion": 1e9, "bn": 1e9, "b": 1e9, "trillion": 1e12, "万": 1e4,
          "亿": 1e8}
_MONTHS = {m: n for n, names in enumerate((
    ("january", "jan"), ("february", "feb"), ("march", "mar"), ("april", "apr"), ("may",),
    ("june", "jun"), ("july", "jul"), ("august", "aug"), ("september", "sep", "sept"),
    ("october", "oct"), ("november", "nov"), ("december", "dec")), 1) for m in names}
_MONTH = "|".join(sorted(_MONTHS, key=len, reverse=True))
_DATES = (  # (pattern, the groups of year, month, day); a month by name or as a number
    (re.compile(rf"\b({_MONTH})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+(\d{{4}})\b", re.I),
     (3, 1, 2)),
    (re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?({_MONTH})\.?,?\s+(\d{{4}})\b",
                re.I), (3, 2, 1)),
    (re.compile(r"\b(\d{4})[/.](\d{1,2})[/.](\d{1,2})\b"), (1, 2, 3)),
    (re.compile(r"(\d{4})年(\d{1,2})月(\d{1,2})[日号]"), (1, 2, 3)),
    (re.compile(r"\b(\d{1,2})[/.](\d{1,2})[/.](\d{4})\b"), (3, 1, 2)),  # and (3, 2, 1) below
)


class Said:
    """What the user said and the tools returned in one run, read from its
    :class:`~react_agent.engine.Facts` as they grow, each text once, when a check first needs
    it."""

    def __init__(self, facts: Facts) -> None:
        self._user = Each(facts.user, stated_forms)
        self._earlier = Each(facts.earlier, stated_forms)
        self._ok = Each(facts.ok_observations, stated_forms)
        self._numbers = Gathered([facts.user, facts.earlier, facts.ok_observations], numbers,
                                 set())
        self._said: tuple[int, int, str] = (0, 0, "")

    @property
    def text(self) -> str:
        """The user's messages, earlier turns' observations and the successful results, one
        text, in the forms of :func:`stated_forms`."""
        user, ok = self._user(), self._ok()
        if self._said[:2] != (len(user), len(ok)):
            self._said = (len(user), len(ok), "\n".join([*user, *self._earlier(), *ok]))
        return self._said[2]

    @property
    def numbers(self) -> set[float]:
        """The numbers in :attr:`text`, as floats (thousands separators dropped)."""
        found: set[float] = self._numbers()
        return found


def numbers(text: str) -> set[float]:
    """The numbers in ``text``, as floats (thousands separators dropped), and the numbers they
    stand for with a scale after them: "5%" is also 0.05, "$2 million" also 2000000, "3万"
    also 30000."""
    found = {float(n.replace(",", "")) for n in _NUMBER.findall(text)}
    for number, scale in _SCALED.findall(text):
        found.add(float(number.replace(",", "")) * _SCALE[" ".join(scale.casefold().split())])
    return found


def stated_forms(text: str) -> str:
    """``text`` case-folded, then again with every run of characters other than letters and
    digits as one space (``pet-friendly`` also reads ``pet friendly``, so an argument value
    ``pet_friendly`` is stated), then each date it names in ISO form ("January 1, 2020",
    "1 Jan 2020", "2020/1/1", "2020年1月1日" also read ``2020-01-01``; "01/02/2020" both
    ``2020-01-02`` and ``2020-02-01``). Linear in the length of ``text``."""
    folded = text.casefold()
    return "\n".join([folded, squashed(folded), *_iso_dates(folded)])


def squashed(text: str) -> str:
    """``text`` with every run of characters other than letters and digits as one space."""
    return " ".join(re.sub(r"[\W_]+", " ", text).split())


def _iso_dates(text: str) -> list[str]:
    found: list[str] = []
    for pattern, (y, m, d) in _DATES:
        for match in pattern.finditer(text):
            month = match[m] if match[m].isdigit() else str(_MONTHS[match[m].casefold()])
            found.append(_iso(match[y], month, match[d]))
            if pattern is _DATES[-1][0]:
                found.append(_iso(match[y], match[d], match[m]))
    return [f for f in found if f]


def _iso(year: str, month: str, day: str) -> str:
    return f"{int(year):04d}-{int(month):02d}-{int(day):02d}" \
        if 1 <= int(month) <= 12 and 1 <= int(day) <= 31 else ""


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
