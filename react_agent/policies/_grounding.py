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
import unicodedata
from collections.abc import Callable, Generator, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from .. import prompts
from ..engine import Each, Facts, Gathered, Policy, Request, Run
from ..types import Reply, Step, ToolCall, ToolResult
from ._relevance import answer_instead

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
"""The error of a refusal of :class:`GroundValues`."""

MAX_VALUE_WORDS = 64
"""The most words of one argument value that are looked for (its first ones)."""

MAX_DESCRIPTION_CHARS = 2_000
"""The start of an argument's description where a value may be quoted as an option."""

_VALUE_CHARS = 32 * MAX_VALUE_WORDS  # the start of a value whose words are read
_MIN_WORD = 4  # shorter words ("the", "new") ground nothing
_PREFIX = 5  # words that share their first 5 letters are one word ("Germany", "German")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")
_CODE = re.compile(r"[A-Z0-9.°/_\-]{1,12}|[\d\s:./,+\-]+")  # USD, TSLA, °C, 600519.SS, 2024-05-12
_EXAMPLE = re.compile(r"(?:e\.g\.|i\.e\.|for example|for instance|such as|example)[^'\"`]{0,20}$")
_QUOTED = 80  # the characters of a value a refusal quotes
_COMPOSED = re.compile(r"[\\/:;=(){}\[\]<>|&*$#@]")  # a command, an expression, a path, a URL


def _fold(text: str) -> str:
    """``text`` case-folded, without accents ("Zürich" as "zurich"; CJK as it is)."""
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def _words(text: str) -> list[str]:
    return re.findall(rf"[^\W\d_]{{{_MIN_WORD},}}", _fold(text))


def _word_keys(text: str) -> set[str]:
    """Each word of ``text`` (4 letters or more, case-folded, not CJK) and its first
    :data:`_PREFIX` letters, as ``"=word"`` and ``"<prefix"``."""
    keys: set[str] = set()
    for word in _words(text):
        if not _CJK.match(word):
            keys.update((f"={word}", f"<{word[:_PREFIX]}"))
    return keys


def _bigrams(text: str) -> set[str]:
    """Each pair of neighbouring CJK characters of ``text`` (CJK is written without spaces)."""
    return {text[i:i + 2] for i in range(len(text) - 1)
            if _CJK.match(text[i]) and _CJK.match(text[i + 1])}


def _spaced(text: str) -> str:
    """The letters and digits of ``text`` (folded) as words with one space around each."""
    return " " + " ".join(re.findall(r"[^\W_]+", _fold(text))) + " "


class Stated:
    """What grounds an argument value in one run, read from its
    :class:`~react_agent.engine.Facts` as they grow, each text once: the words, their first
    letters and the CJK character pairs of the user's messages (not the run's feedback on a
    reply, which quotes the reply), every successful tool result, and the system prompt
    without the words of
    ``excluded`` (the prompt's own text and the tools' descriptions: a value that only copies a
    description's words is still made up)."""

    def __init__(self, facts: Facts, excluded: str = "") -> None:
        self._facts = facts
        self._grounding = list(facts.earlier)
        self._said_texts: list[str] = []
        self._read = self._read_user = 0
        sources = [self._said_texts, self._grounding]
        self._keys = Gathered(sources, _word_keys, set())
        self._bigrams = Gathered(sources, _bigrams, set())
        self._system_keys = Gathered([facts.system], _word_keys, set())
        self._system_bigrams = Gathered([facts.system], _bigrams, set())
        self._excluded_keys, self._excluded_bigrams = _word_keys(excluded), _bigrams(excluded)
        self._spaced = Each(self._grounding, _spaced)
        self._said = Each(self._said_texts, _spaced)
        self.refused = sum(1 for r in facts.results if r.error == MADE_UP)
        """Calls of the run refused as made up so far (a resumed run's included)."""

    def _sync(self) -> None:
        facts = self._facts
        self._grounding.extend(facts.ok_observations[self._read:])
        self._read = len(facts.ok_observations)
        feedback = set(facts.feedback)
        self._said_texts.extend(t for t in facts.user[self._read_user:] if t not in feedback)
        self._read_user = len(facts.user)

    def _has(self, key: str) -> bool:
        return key in self._keys() or (key in self._system_keys()
                                       and key not in self._excluded_keys)

    def states(self, value: str) -> bool:
        """Whether the run's texts state ``value``: the user's messages or a successful tool
        result as written (its letters and digits, as whole words, without accents), or any of
        these texts by a word of 4 letters or more (or one with the same first 5 letters:
        "German" for "Germany"), or, for CJK, by a pair of its characters; of its words,
        at most the first :data:`MAX_VALUE_WORDS` in its first 2,048 characters are read."""
        self._sync()
        spaced = _spaced(value)
        if spaced.strip() and any(spaced in text for text in (*self._said(), *self._spaced())):
            return True
        words = [w for w in _words(value[:_VALUE_CHARS]) if not _CJK.match(w)][:MAX_VALUE_WORDS]
        for word in words:
            if self._has(f"={word}") or (len(word) >= _PREFIX and self._has(f"<{word[:_PREFIX]}")):
                return True
        pairs = _bigrams(value[:_VALUE_CHARS])
        return bool(pairs & self._bigrams()
                    or pairs & (self._system_bigrams() - self._excluded_bigrams))


def _cut(value: str) -> str:
    return value if len(value) <= _QUOTED else value[:_QUOTED] + "..."


def made_up(call: ToolCall, parameters: dict[str, Any], stated: Stated) -> list[tuple[str, str]]:
    """The ``(argument, value)`` pairs of ``call`` that look made up: a required argument of
    type string, without an ``enum`` (nor the value quoted in its description as an option),
    whose value is more than 4 characters, not a code
    (``USD``, ``°C``, ``2024-05-12``), not composed from the request (a command, an expression,
    a path or a URL: it holds one of ``\\ / : ; = ( ) { } [ ] < > | & * $ # @``) and not stated
    by the run (:meth:`Stated.states`)."""
    props = parameters.get("properties") if isinstance(parameters, dict) else None
    required = parameters.get("required") if isinstance(parameters, dict) else None
    if not isinstance(props, dict) or not isinstance(required, list):
        return []
    found = []
    for name in required:
        if not isinstance(name, str):
            continue
        spec, value = props.get(name), call.args.get(name)
        if not isinstance(spec, dict) or spec.get("type") != "string" or "enum" in spec:
            continue
        if not isinstance(value, str) or value in (spec.get("default"), spec.get("const")):
            continue
        short = len(value.strip()) <= 4 and len(_bigrams(value)) == 0  # (2 CJK: checked)
        if short or _CODE.fullmatch(value.strip()) or _COMPOSED.search(value):
            continue
        if _quoted(value.strip(), spec.get("description")) or stated.states(value):
            continue
        found.append((name, value))
    return found


def _quoted(value: str, description: Any) -> bool:
    """Whether ``description`` (an argument's) lists ``value`` in quotes, as an option written
    out in words ("Can be 'melting', 'freezing', 'vaporization'")."""
    if not isinstance(description, str):
        return False
    folded, value = description[:MAX_DESCRIPTION_CHARS].casefold(), value.casefold()
    for quote in ("'", '"', "`"):
        at = folded.find(f"{quote}{value}{quote}")
        while at != -1:
            if not _EXAMPLE.search(folded[max(0, at - 40):at]):  # an example is no option
                return True
            at = folded.find(f"{quote}{value}{quote}", at + 1)
    return False


@dataclass(frozen=True)
class GroundValues(Policy):
    """Do not run a call whose required free-text argument holds a value that neither the
    user's messages, any tool result so far nor the system prompt's own instructions state
    (:func:`made_up`; the tools' descriptions in the system prompt do not count):
    a bus search from "New York" to "Los Angeles" for "I'm looking for a bus", a player's
    statistics for a question that names no player. A small model offered a tool that does not
    fit the request fills its arguments with values of its own; the refusal
    (``prompts/policies/made_up.md``, error ``"made_up"``) asks it to take the values from the
    request, look them up with a tool, or give the final answer (asking the user for what is
    missing, or answering from what it knows). Strings with an ``enum``, codes and short
    values are not checked, nor optional arguments. A later reply of the run that again calls
    with made-up values is set aside and the final answer asked for in its place
    (``prompts/policies/made_up_answer.md``; a small model refused sends the same values
    again). Its state for a run: :class:`Stated`. The idea is :class:`GroundContacts`'s, for
    any value."""

    name: ClassVar[str] = "ground_values"

    def for_run(self, run: Run) -> Stated:
        return Stated(run.facts, prompts.render_system_prompt(run.setup.shown))

    def _made_up(self, run: Run, call: ToolCall) -> str:
        tool = run.setup.toolbox.get(call.name)
        found = made_up(call, tool.parameters, run.state(self)) if tool is not None else []
        return ", ".join(f"{_cut(value)!r} ({name})" for name, value in found)

    def on_action(self, run: Run, step: Step, reply: Reply) -> Generator[Request, Any, Reply]:
        stated: Stated = run.state(self)
        if not reply.tool_calls or step.origin is not None or not stated.refused:
            return reply
        values = ", ".join(v for v in (self._made_up(run, c) for c in reply.tool_calls) if v)
        if not values:
            return reply
        run.note(step, self.name, "Made up", f"made up again: {values}; asking for the final "
                 "answer instead")
        yield from run.flush()
        return (yield from answer_instead(run, step, reply, self.name, "Made up",
                                          prompts.render("policies/made_up_answer",
                                                         values=values)))

    def before_call(self, run: Run, step: Step, call: ToolCall) -> ToolResult | None:
        values = self._made_up(run, call)
        if not values:
            return None
        run.state(self).refused += 1
        run.note(step, self.name, "Made up", f"{call.name}: {values} stated nowhere in the "
                 "request or the tool results; not run")
        return ToolResult(call, prompts.render("policies/made_up", tool=call.name,
                                               values=values), ok=False, error=MADE_UP)
