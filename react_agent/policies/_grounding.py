"""Is a tool call tied to the task? A check on the values a call carries, before it runs.

Small models make contact details up: an email sent to a guessed address, a text to a number
from nowhere. :func:`ungrounded` finds an address or phone number that neither the task nor any
tool result holds, so the loop refuses the call until the value is looked up.
:func:`unstated` finds any argument value the user's messages and the results do not state, so
a call sent beside the lookup it depends on waits for that lookup's result.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from ..engine import Each, Facts, Gathered, Policy, Run
from ..types import Step, ToolCall, ToolResult

_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_MAX_LOCAL, _MAX_DOMAIN = 64, 255  # RFC 5321's limits on the two parts of an address
_PHONE = re.compile(r"\+?\d[\d ()-]{5,}\d")
_DATE = re.compile(r"\d{4}-\d{1,2}-\d{1,2}|\d{1,2}-\d{1,2}-\d{4}")
UNGROUNDED = "ungrounded"
"""The error of a refusal of :class:`GroundContacts`."""


def ungrounded(
    call: ToolCall, known: Callable[[], str], known_digits: Callable[[], Sequence[str]],
    found: Callable[[], str] = str,
) -> ToolResult | None:
    """A refusal to run ``call`` when one of its string arguments holds an email address or a
    phone number (7 digits or more) found nowhere in ``known()`` (the task, the system prompt
    and the tool results so far, case-folded; ``known_digits()``: the digits of each phone
    number in it): a small model makes such values up instead of looking them up. The refusal
    names the addresses or numbers that ``found()`` holds (the task and the successful tool
    results), closest first, so a model that looked the value up but kept its guess sees which
    one to use. ``None`` when every such value is grounded. The three are called only for a
    call that holds an address or a number.

    Each argument is scanned once, in time linear in its length."""
    for where, text in strings(call.args):
        for mail in _emails(text):
            if mail.casefold() not in known():
                return _not_grounded(call, where, mail, "address", _emails(found()))
        for phone in _PHONE.findall(text):
            digits = re.sub(r"\D", "", phone)
            seen = any(digits in k or k in digits for k in known_digits() if len(k) >= 7)
            if len(digits) >= 7 and not _DATE.search(phone) and not seen:
                numbers = [p.strip() for p in _PHONE.findall(found())
                           if len(re.sub(r"\D", "", p)) >= 7 and not _DATE.search(p)]
                return _not_grounded(call, where, phone, "number", numbers)
    return None


def unstated(
    call: ToolCall, said: str, numbers: set[float], parameters: dict[str, Any] | None = None,
) -> list[str]:
    """The argument values of ``call`` that ``said`` (what the user said and the tools returned,
    case-folded; ``numbers``: the numbers in it) does not state: a string of 4 characters or
    more that it does not hold, as written or with every run of characters other than letters
    and digits as one space (``pet_friendly`` where ``said`` holds ``pet friendly``), a number
    it does not hold other than a whole number up to 10 (a count or an option such as
    ``days=3``), unless the value is one the argument's schema in ``parameters`` (the tool's
    JSON Schema) lists (its or its items' ``enum``, its ``default``); for example an amount to
    convert made up before the lookup that gives it, or an address written as a
    description."""
    props = (parameters or {}).get("properties", {})
    missing = []
    for name, value in call.args.items():
        spec = props.get(name)
        allowed = _listed(spec)
        for _, leaf in leaves(value):
            if leaf in allowed or isinstance(leaf, bool):
                continue
            if isinstance(leaf, (int, float)):
                if float(leaf) not in numbers and not (float(leaf).is_integer() and
                                                       abs(leaf) <= 10):
                    missing.append(str(leaf))
            elif len(leaf.strip()) > 3 and leaf.strip().casefold() not in said \
                    and " ".join(re.sub(r"[\W_]+", " ", leaf.casefold()).split()) not in said:
                missing.append(leaf)
    return missing


def _listed(spec: Any) -> list[Any]:
    """The values an argument's schema lists: its ``enum``, its items' ``enum`` (an array of
    listed values), and its ``default``."""
    if not isinstance(spec, dict):
        return []
    items = spec.get("items")
    listed = [*(spec.get("enum") or []),
              *((items.get("enum") or []) if isinstance(items, dict) else [])]
    if "default" in spec:
        listed.append(spec["default"])
    return [v for v in listed if isinstance(v, (str, int, float))]


def _emails(text: str) -> list[str]:
    """The email addresses in ``text``, in order, as ``_EMAIL.findall`` finds them, in linear
    time: each ``@`` is widened to the address around it, at most :data:`_MAX_LOCAL` characters
    before it and :data:`_MAX_DOMAIN` after (``findall`` alone takes time quadratic in the
    length of a long run of word characters)."""
    found: list[str] = []
    done = 0  # where the last address ended: findall does not look inside a match
    at = text.find("@")
    while at != -1:
        start = at
        while start > done and at - start < _MAX_LOCAL and _in_local(text[start - 1]):
            start -= 1
        end = at + 1
        while end < len(text) and end - at <= _MAX_DOMAIN and _in_domain(text[end]):
            end += 1
        match = _EMAIL.match(text, start, end)
        if match:
            found.append(match.group())
            done = match.end()
        at = text.find("@", max(at + 1, done))
    return found


def _in_local(char: str) -> bool:
    return char.isalnum() or char in "_.+-"


def _in_domain(char: str) -> bool:
    return char.isalnum() or char in "_.-"


def _not_grounded(
    call: ToolCall, where: str, value: str, kind: str, candidates: list[str]
) -> ToolResult:
    article = "an" if kind[0] in "aeiou" else "a"
    text = (f"Error: {call.name} was not run: the {kind} {value!r} in {where} is in neither the "
            f"task nor any tool result. Do not make up {article} {kind}: take it from the task, or "
            "look it up with a tool first, then call again with the value it returns.")
    close = sorted(dict.fromkeys(candidates),
                   key=lambda c: -difflib.SequenceMatcher(None, value, c).ratio())[:3]
    if close:
        text += (f" The task and the tool results hold: {', '.join(map(repr, close))}; use "
                 "the one that belongs to whom the task means.")
    return ToolResult(call, text, ok=False, error=UNGROUNDED)


def strings(value: Any, where: str = "") -> Iterator[tuple[str, str]]:
    """Each string in ``value`` (parsed JSON, at any depth) with where it is: ``to``,
    ``cc[1]``, ``a.b``."""
    return ((at, leaf) for at, leaf in leaves(value, where) if isinstance(leaf, str))


def leaves(value: Any, where: str = "") -> Iterator[tuple[str, Any]]:
    """Each string and number in ``value`` (parsed JSON, at any depth) with where it is."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield from leaves(item, f"{where}.{key}" if where else str(key))
    elif isinstance(value, list):
        for n, item in enumerate(value):
            yield from leaves(item, f"{where}[{n}]")
    elif isinstance(value, (str, int, float)):
        yield where, value


class Known:
    """What grounds a contact detail in one run, read from its :class:`~react_agent.engine.Facts`
    as they grow, each text once, when a check first needs it: the system prompt, the user's
    messages and every tool result except a refusal that quotes the made-up value."""

    def __init__(self, facts: Facts) -> None:
        self._facts = facts
        self._grounding = list(facts.earlier)  # the observations that ground a contact detail
        self._read = 0  # the results looked at so far
        fold = str.casefold
        self._system = Each(facts.system, fold)
        self._user = Each(facts.user, fold)
        self._results = Each(self._grounding, fold)
        self._digits = Gathered([facts.system, facts.user, self._grounding], phone_digits, [])
        self._known: tuple[int, int, int, str] = (0, 0, 0, "")

    def _sync(self) -> None:
        results = self._facts.results
        self._grounding.extend(r.observation for r in results[self._read:]
                               if r.error not in (UNGROUNDED, MADE_UP))
        self._read = len(results)

    @property
    def text(self) -> str:
        """The texts that ground a contact detail, case-folded, one text."""
        self._sync()
        system, user, results = self._system(), self._user(), self._results()
        if self._known[:3] != (len(system), len(user), len(results)):
            self._known = (len(system), len(user), len(results),
                           "\n".join([*system, *user, *results]))
        return self._known[3]

    @property
    def digits(self) -> list[str]:
        """The digits of each phone-like number in :attr:`text`."""
        self._sync()
        digits: list[str] = self._digits()
        return digits


def phone_digits(text: str) -> list[str]:
    """The digits of each phone-like number in ``text``."""
    return [re.sub(r"\D", "", m) for m in _PHONE.findall(text)]


@dataclass(frozen=True)
class GroundContacts(Policy):
    """Do not run a call whose arguments hold an email address or phone number found in neither
    the task, the system prompt nor any tool result so far (:func:`ungrounded`): the model is
    told to look it up. The refusal is the call's result (error ``"ungrounded"``); the call
    is checked again when the model sends it again. Its state for a run: :class:`Known`."""

    name: ClassVar[str] = "ground_contacts"

    def for_run(self, run: Run) -> Known:
        return Known(run.facts)

    def before_call(self, run: Run, step: Step, call: ToolCall) -> ToolResult | None:
        known: Known = run.state(self)
        return ungrounded(call, lambda: known.text, lambda: known.digits,
                          lambda: "\n".join([run.task, *run.facts.ok_observations]))


MADE_UP = "made_up"
"""The error of a refusal of :class:`~react_agent.policies.GroundValues` (a made-up value;
its refusal quotes the value, so it grounds no contact detail either)."""
