"""Is a value of a tool call stated anywhere? A check of the values a model makes up.

A small model offered a tool that does not fit the request, or that needs what the user did
not say, fills the arguments with values of its own: a ferry booking from "Lakeview, OR" for "I need
a ferry ticket". :func:`made_up` finds a required free-text value that no text of the run
states; :class:`GroundValues` refuses the call, then asks for the final answer when the values
come again.
"""

from __future__ import annotations

import functools
import json
import re
import unicodedata
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import regex

from .. import prompts
from .._lexical import is_cjk
from ..engine import Each, Facts, Gathered, Policy, Request, Run
from ..tools import Toolbox
from ..types import Message, Reply, Step, ToolCall, ToolResult
from ._grounding import MADE_UP
from ._relevance import answer_instead

MAX_VALUE_WORDS = 64
"""The most words of one argument value that are looked for (its first ones)."""

MAX_ANSWER_CHARS = 8_000
"""The start of an earlier turn's final answer that grounds values."""

MAX_REPLY_CHARS = 64_000
"""The longest earlier JSON reply read for its final answer (a longer one grounds nothing)."""

MAX_DESCRIPTION_CHARS = 2_000
"""The start of an argument's description where a value may be quoted as an option."""

_VALUE_CHARS = 32 * MAX_VALUE_WORDS  # the start of a value whose words are read
_MIN_WORD = 4  # shorter words ("the", "new") ground nothing
_MAX_ACRONYM = 6  # capitals of a word that abbreviates words ("SLC")
_ACRONYM = re.compile(r"\b[A-Z]{2,6}\b")
_ACRONYM_WORD = re.compile(r"\b[A-Za-z]")  # the first letter of each Latin word
_MIN_IDENTIFIER = 6  # letters and digits of an identifier matched however it is spaced
_MAX_IDENTIFIER = 64  # (an IBAN has at most 34)
_PREFIX = 5  # words that share their first 5 letters are one word ("Germany", "German")
_CODE = re.compile(r"[A-Z0-9.°/_\-]{1,12}|[\d\s:./,+\-]+")  # USD, TSLA, °C, 600519.SS, 2024-05-12
# an example, or one in a list of examples ("e.g. 'Lakeview, OR' or 'Millbrook, NY'")
_EXAMPLE = re.compile(r"(?:e\.g\.|i\.e\.|for example|for instance|such as|example|like)"
                      r"[^'\"`]{0,20}(?:(['\"`])[^'\"`]{1,80}\1\s*(?:,|/|or|and)?\s*(?:or|and)?\s*)"
                      r"{0,5}$")
_UNQUOTED_EXAMPLE = re.compile(r"(?:e\.g\.|i\.e\.|for example|for instance|such as),? \x00"
                               r"(?:$|[.;)]|,? or\b)")  # the value written where \x00 stands
_EXAMPLE_REACH = 600  # the characters before a quoted value where its "e.g." is looked for
_QUOTED = 80  # the characters of a value a refusal quotes
# two letters in a row of a script other than Latin (not µ, π, ʻ: one letter, or Common)
_LATIN = regex.compile(r"\p{Latin}{2}")
_OTHER_SCRIPT = regex.compile(r"(?:(?![\p{Latin}\p{Common}\p{Inherited}])\p{L}){2}")
COMPOSED = re.compile(r"[\\/:;=(){}\[\]<>|&*$#@]")
"""A character of a value composed rather than given: a command, an expression, a path, a URL,
a date or time in a format."""
_NAME_WORD = regex.compile(r"\b\p{Lu}")  # a word that begins with a capital ("Lake", "OR")
_PLACE_OR_PERSON = re.compile(
    r"\b(?:city|cities|town|village|location|place|address|country|region|area|destination|"
    r"venue|neighbou?rhood|person|people|recipient|contact|author|artist|player|customer|"
    r"employee|attendee|passenger|guest|user's name|full name|first name|last name)\b")
"""The words of an argument's name or description that say it holds a place or a person."""


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
        if not is_cjk(word):
            keys.update((f"={word}", f"<{word[:_PREFIX]}"))
    return keys


def _bigrams(text: str) -> set[str]:
    """Each pair of neighbouring CJK characters of ``text`` (CJK is written without spaces)."""
    return {text[i:i + 2] for i in range(len(text) - 1)
            if is_cjk(text[i]) and is_cjk(text[i + 1])}


def _scripts(text: str) -> set[str]:
    """Of ``"latin"`` and ``"other"`` (CJK, Cyrillic, ...), the scripts ``text`` writes two
    letters in a row of (a lone µ or π is no script of its own)."""
    found = {"other"} if _OTHER_SCRIPT.search(text) else set()
    return found | {"latin"} if _LATIN.search(text) else found


def _acronyms(text: str) -> set[str]:
    """The words of ``text`` written in 2 to 6 capital letters ("SLC", "BA")."""
    return set(_ACRONYM.findall(text))


def _compact(text: str) -> str:
    """The letters and digits of ``text`` (folded), ``|`` between its words and around them."""
    return "|" + "|".join(re.findall(r"[^\W_]+", _fold(text))) + "|"


def _spaced(text: str) -> str:
    """The letters and digits of ``text`` (folded) as words with one space around each."""
    return " " + " ".join(re.findall(r"[^\W_]+", _fold(text))) + " "


class Stated:
    """What grounds an argument value in one run, read from its
    :class:`~react_agent.engine.Facts` as they grow, each text once: the words, their first
    letters and the CJK character pairs of the user's messages (not the run's feedback on a
    reply, which quotes the reply), every successful tool result, ``answers`` (the final
    answers of a conversation's earlier turns, :func:`earlier_answers`), and the system
    messages without ``tools`` (the tools' descriptions as the system prompt writes them: a
    value that only copies a description's words is still made up) and without the words of
    ``excluded`` (the prompt's own text; a system message without ``tools`` in it loses the
    words of ``tools`` as well). The agent's instructions and a client's own system message
    ground values. ``excluded`` and ``tools`` may be functions, called once when a system
    message is first looked at."""

    def __init__(self, facts: Facts, excluded: str | Callable[[], str] = "",
                 answers: Sequence[str] = (), tools: str | Callable[[], str] = "") -> None:
        self._facts = facts
        self._excluded_source, self._tools_source = excluded, tools
        self._grounding = [*facts.earlier, *answers]
        self._said_texts: list[str] = []
        self._read = self._read_user = 0
        sources = [self._said_texts, self._grounding]
        self._keys = Gathered(sources, _word_keys, set())
        self._bigrams = Gathered(sources, _bigrams, set())
        self._system_keys = Gathered([facts.system], lambda t: self._cut(t, _word_keys), set())
        self._system_bigrams = Gathered([facts.system], lambda t: self._cut(t, _bigrams), set())
        self._spaced = Each(self._grounding, _spaced)
        self._compact = Each(self._grounding, _compact)
        self._said_compact = Each(self._said_texts, _compact)
        self._acronyms = Gathered([self._said_texts], _acronyms, set())  # the user's only
        self._said = Each(self._said_texts, _spaced)
        self._scripts = Gathered([self._said_texts], _scripts, set())
        self.refused = sum(1 for r in facts.results if r.error == MADE_UP)
        """Calls of the run refused as made up so far (a resumed run's included)."""

    def _sync(self) -> None:
        facts = self._facts
        self._grounding.extend(facts.ok_observations[self._read:])
        self._read = len(facts.ok_observations)
        feedback = set(facts.feedback)
        self._said_texts.extend(t for t in facts.user[self._read_user:] if t not in feedback)
        self._read_user = len(facts.user)

    @functools.cached_property
    def _excluded(self) -> tuple[str, set[str], set[str]]:
        """The tools' text, and the words and CJK pairs of the prompt's own text."""
        excluded, tools = (s() if callable(s) else s
                           for s in (self._excluded_source, self._tools_source))
        return tools, _word_keys(excluded), _bigrams(excluded)

    def _cut(self, system: str, keys: Callable[[str], set[str]]) -> set[str]:
        """The ``keys`` of a system message without the tools' descriptions: blanked out where
        it holds them whole, else without the ``keys`` of their text."""
        tools = self._excluded[0]
        if not tools:
            return keys(system)
        if tools in system:
            return keys(system.replace(tools, " "))
        return keys(system) - keys(tools)

    @property
    def _excluded_keys(self) -> set[str]:
        return self._excluded[1]

    @property
    def _excluded_bigrams(self) -> set[str]:
        return self._excluded[2]

    def _has(self, key: str) -> bool:
        return key in self._keys() or (key in self._system_keys()
                                       and key not in self._excluded_keys)

    def states(self, value: str) -> bool:
        """Whether the run's texts state ``value``: the user's messages or a successful tool
        result as written (its letters and digits, as whole words, without accents), or any of
        these texts by a word of 4 letters or more (or one with the same first 5 letters:
        "German" for "Germany"), or, for CJK, by a pair of its characters; of its words,
        at most the first :data:`MAX_VALUE_WORDS` in its first 2,048 characters are read.
        An identifier (6 to 64 letters and digits, a digit among them) is stated where its
        letters and digits stand in a text in that order with only spaces or marks between
        them ("de89370400" for "DE89 3704 00"), beginning and ending with words of the text
        (a cut identifier is not stated). A value whose words' first letters (or those of its
        part before a comma) begin a word of 2 to 6 capitals of the user's messages is what
        that acronym stands for ("Salt Lake City, UT" for "SLC"), and one that holds such a
        word is stated by it ("Lakeview, KY" for "KY"). A value in another script than the
        user's words (the user wrote two letters in a row of a script the value has none of:
        Chinese for a value in Latin letters, Latin for one in Chinese, not a lone µ or π)
        counts as stated: it may be a translation."""
        self._sync()
        scripts = _scripts(value)
        if scripts and self._scripts() - scripts:
            return True  # a translation ("Geneva" for 日内瓦) or a spelling in another script
        spaced = _spaced(value)
        if spaced.strip() and any(spaced in text for text in (*self._said(), *self._spaced())):
            return True
        compact = _compact(value[:_VALUE_CHARS]).replace("|", "")
        if _MIN_IDENTIFIER <= len(compact) <= _MAX_IDENTIFIER and any(map(str.isdigit, compact)):
            # its letters and digits, from the start of a word to the end of one
            whole = re.compile(r"\|" + r"\|?".join(map(re.escape, compact)) + r"\|")
            if any(whole.search(t) for t in (*self._said_compact(), *self._compact())):
                return True  # an identifier written otherwise ("DE89 3704" as "de893704")
        acronyms = self._acronyms()
        for part in {value[:_VALUE_CHARS], value[:_VALUE_CHARS].split(",")[0]}:
            initials = "".join(w[0] for w in _ACRONYM_WORD.findall(part)).upper()
            if 2 <= len(initials) <= _MAX_ACRONYM and any(a.startswith(initials) for a in acronyms):
                return True  # what an acronym stands for ("Salt Lake City, UT" for "SLC")
        if _acronyms(value[:_VALUE_CHARS].replace(".", "")) & acronyms:
            return True  # the user's acronym written in the value ("Lakeview, KY" for "KY")
        words = [w for w in _words(value[:_VALUE_CHARS]) if not is_cjk(w)][:MAX_VALUE_WORDS]
        for word in words:
            if self._has(f"={word}") or (len(word) >= _PREFIX and self._has(f"<{word[:_PREFIX]}")):
                return True
        pairs = _bigrams(value[:_VALUE_CHARS])
        return bool(pairs & self._bigrams()
                    or pairs & (self._system_bigrams() - self._excluded_bigrams))


def earlier_answers(messages: Sequence[Message], task: str) -> list[str]:
    """The final answers of the earlier turns in ``messages`` (those before the last user
    message that is ``task``): what the user read and may point back to ("a ferry there"). An
    assistant message that is a JSON reply gives its ``final_answer`` (a call gives nothing:
    its values may be made up); one in plain text (a ``serve`` client's history) is the
    answer. At most :data:`MAX_ANSWER_CHARS` characters of each; a JSON reply longer than
    :data:`MAX_REPLY_CHARS`, or one nested too deep to read, gives nothing."""
    last = max((n for n, m in enumerate(messages)
                if m.get("role") == "user" and m.get("content") == task), default=0)
    answers = []
    for message in messages[:last]:
        content = message.get("content")
        if message.get("role") != "assistant" or not isinstance(content, str):
            continue
        text = content[:MAX_ANSWER_CHARS]
        if not text.lstrip().startswith("{"):
            answers.append(text)
            continue
        if len(content) > MAX_REPLY_CHARS:
            continue  # (a reply this long is not read: the work stays bounded)
        try:
            reply = json.loads(content)
        except (ValueError, RecursionError):  # (nested past the interpreter's depth)
            continue
        action = reply.get("action") if isinstance(reply, dict) else None
        answer = action.get("final_answer") if isinstance(action, dict) else None
        if isinstance(answer, str):
            answers.append(answer[:MAX_ANSWER_CHARS])
    return answers


def _cut(value: str) -> str:
    return value if len(value) <= _QUOTED else value[:_QUOTED] + "..."


def made_up(call: ToolCall, parameters: dict[str, Any], stated: Stated,
            examples_only: bool = False) -> list[tuple[str, str]]:
    """The ``(argument, value)`` pairs of ``call`` that look made up: a required argument of
    type string, without an ``enum`` (nor the value quoted in its description as an option),
    whose value is more than 4 characters, not a code
    (``USD``, ``°C``, ``2024-05-12``), not composed from the request (a command, an expression,
    a path or a URL: it holds one of ``\\ / : ; = ( ) { } [ ] < > | & * $ # @``) and not stated
    by the run (:meth:`Stated.states`). With ``examples_only``, only such values that its
    description quotes as an example ("such as 'Lakeview, OR'") and that look like a name
    (two words or more that begin with a capital): the schema's own example place or person
    copied into a call the request gave no value for (an example unit or language, "celsius",
    "English", is a default a model may rightly take)."""
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
        if short or _CODE.fullmatch(value.strip()) or COMPOSED.search(value):
            continue
        quoted = _quoted(value.strip(), spec.get("description"))
        if "option" in quoted or (examples_only and not (
                "example" in quoted and len(_NAME_WORD.findall(value)) >= 2
                and _about_place_or_person(name, spec.get("description")))):
            continue
        if not stated.states(value):
            found.append((name, value))
    return found


def _about_place_or_person(name: str, description: Any) -> bool:
    """Whether an argument (its ``name`` and ``description``) holds a place or a person
    ("location", "The city and state"), not a sort order, a category or a language."""
    text = f"{name.replace('_', ' ')} {description if isinstance(description, str) else ''}"
    return bool(_PLACE_OR_PERSON.search(text[:MAX_DESCRIPTION_CHARS].casefold()))


def _quoted(value: str, description: Any) -> set[str]:
    """How ``description`` (an argument's) quotes ``value``: ``"option"`` where it lists it in
    quotes as an option written out in words ("Can be 'standard', 'express', 'overnight'"),
    ``"example"`` where it gives it as an example ("e.g. 'standard'", "such as ...", or
    unquoted, ending the sentence: "e.g. Lakeview, OR"); empty where it does neither."""
    if not isinstance(description, str):
        return set()
    folded, value = description[:MAX_DESCRIPTION_CHARS].casefold(), value.casefold()
    kinds = set()
    for quote in ("'", '"', "`"):
        at = folded.find(f"{quote}{value}{quote}")
        while at != -1:
            before = folded[max(0, at - _EXAMPLE_REACH):at]
            kinds.add("example" if _EXAMPLE.search(before) else "option")
            at = folded.find(f"{quote}{value}{quote}", at + 1)
    if _UNQUOTED_EXAMPLE.search(folded.replace("\x00", "").replace(value, "\x00")):
        kinds.add("example")  # "The city and state, e.g. Lakeview, OR"
    return kinds


@dataclass(frozen=True)
class GroundValues(Policy):
    """Do not run a call whose required free-text argument holds a value that neither the
    user's messages, any tool result so far nor the system prompt's own instructions state
    (:func:`made_up`; the tools' descriptions in the system prompt do not count):
    a ferry booking from "Lakeview" to "Millbrook" for "I need a ferry ticket", a lookup of an
    order number for a question that names no order. A small model offered a tool that does
    not fit the request fills its arguments with values of its own; the refusal
    (``prompts/policies/made_up.md``, error ``"made_up"``) asks it to take the values from the
    request, look them up with a tool, or give the final answer (asking the user for what is
    missing, or answering from what it knows). Strings with an ``enum``, codes and short
    values are not checked, nor optional arguments. A later reply of the run that again calls
    with made-up values is set aside and the final answer asked for in its place
    (``prompts/policies/made_up_answer.md``; a small model refused sends the same values
    again). Its state for a run: :class:`Stated`. The idea is :class:`GroundContacts`'s, for
    any value.

    Args:
        examples_only: check only values that the argument's description quotes as an example
            ("such as 'Lakeview, OR'") and that look like a name (two words or more that
            begin with a capital): a small model copies the schema's example place or person
            into a call the request gave no value for. The default set of a small model has this
            narrow check; the whole check is opt-in (``GroundValues()``: it also refuses short
            forms and paraphrases a user would accept).
    """

    name: ClassVar[str] = "ground_values"
    examples_only: bool = False

    def for_run(self, run: Run) -> Stated:
        shown = run.setup.shown
        return Stated(run.facts, lambda: prompts.render_system_prompt(Toolbox()),
                      earlier_answers(run.result.messages, run.task),
                      lambda: prompts.tools_text(shown))

    def _made_up(self, run: Run, call: ToolCall) -> str:
        tool = run.setup.toolbox.get(call.name)
        found = made_up(call, tool.parameters, run.state(self), self.examples_only) \
            if tool is not None else []
        return ", ".join(f"{_cut(value)!r} ({name})" for name, value in found)

    def on_action(self, run: Run, step: Step, reply: Reply) -> Generator[Request, Any, Reply]:
        stated: Stated = run.state(self)
        if not reply.tool_calls or step.origin is not None or not stated.refused:
            return reply
        values = ", ".join(v for v in (self._made_up(run, c) for c in reply.tool_calls) if v)
        if not values:
            return reply
        run.note(step, self.name, "Made up", f"sent again: {values}; asking for the final "
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
