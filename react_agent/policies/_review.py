"""When a draft final answer is worth a second, focused call: cheap checks on the draft.

Small models often write a final answer that drops the values the tools returned ("Yes, bring
an umbrella" without the rain) or that switches language (a Chinese task answered in English,
copying an English tool result). :func:`gaps` finds these faults without a model; the loop
then asks for the answer again in a focused call (``AgentConfig.review_answer="auto"``,
``prompts/review.md``). The idea of checking a draft before accepting it follows Self-Refine
(Madaan et al., 2023), with the feedback computed by rules instead of the model.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections import Counter

from .. import _lexical as lexical
from ..types import ToolResult
from ._grounding import strings

REVIEW_MODES = ("off", "auto", "always")
"""``off``: the draft is the final answer; ``auto``: a focused call rewrites it when
:func:`gaps` finds a fault; ``always``: after every draft in a run that called tools."""

_NUMBER = re.compile(r"\d+(?:\.\d+)?")
_NUMBER_LIKE = re.compile(r"[\d\s.,:%+\-]*")  # "40%", "-1.5%", "09:30", "" (not words)
_LONG_WORD = re.compile(r"[^\W\d_]{4,}")


def gaps(task: str, answer: str, results: list[ToolResult]) -> list[str]:
    """What is wrong with the draft final ``answer`` to ``task``, each as words that follow
    "the draft answer ..." (empty: nothing found). Two checks, both language-neutral:

    - *script*: the answer is mostly written in another script than the task (Unicode script
      of the letters, e.g. ``LATIN`` against ``CJK``);
    - *values*: the successful results of a tool hold numbers that are not in the task, and
      the answer states none of them (thousands separators ignored) and none of the result's
      words that the task does not hold (:func:`_words`: "It is overcast" states a result
      ``"...: overcast, 12 degrees"`` unless the task says "overcast" itself);
      checked for each tool, so an answer that gives a computed value but not the value it
      was computed from is faulted too. A result whose text a later successful call took as
      an argument (:func:`_passed_on`: a contact's address handed to a tool that sends) was a
      means to the task, not part of the answer, and is not checked.
    """
    found = []
    task_script, answer_script = main_script(task), main_script(answer)
    if task_script and answer_script and task_script != answer_script:
        found.append(f"is written in {answer_script} script, the task in {task_script}")
    given, stated, said = _numbers(task), _numbers(answer), answer.casefold()
    observed: dict[str, tuple[set[str], set[str]]] = {}
    for n, r in enumerate(results):
        if r.ok and not _passed_on(r, results[n + 1:], task):
            numbers, words = observed.setdefault(r.call.name, (set(), set()))
            numbers.update(_numbers(r.observation) - given)
            words.update(_words(r.observation, task))
    found += [f"states none of the values {tool} returned"
              for tool, (numbers, words) in observed.items()
              if numbers and not numbers & stated and not any(w in said for w in words)]
    return found


def main_script(text: str) -> str | None:
    """The Unicode script most of ``text``'s letters belong to (the first word of their
    Unicode names: ``LATIN``, ``CJK``, ``CYRILLIC``, ``HANGUL``...), ``None`` without
    letters."""
    counts = Counter(_script(ch) for ch in text if ch.isalpha())
    return counts.most_common(1)[0][0] if counts else None


def _script(letter: str) -> str:
    """The script of one letter; Japanese kana count as ``CJK`` (Japanese mixes them with
    CJK ideographs)."""
    script = unicodedata.name(letter, "?").split(" ")[0]
    return "CJK" if script in ("HIRAGANA", "KATAKANA") else script


def facts(results: list[ToolResult]) -> str:
    """The successful ``results`` as lines ``- <tool> <args as JSON>: <observation>`` for the
    focused call (``(none)`` without any)."""
    lines = [f"- {r.call.name} {json.dumps(r.call.args, ensure_ascii=False)}: {r.observation}"
             for r in results if r.ok]
    return "\n".join(lines) or "(none)"


def _passed_on(result: ToolResult, later: list[ToolResult], task: str) -> bool:
    """Whether a successful call of ``later`` (the calls after ``result``) took a string
    argument of 4+ characters that ``result``'s observation holds and the task does not (an
    address or a phone number looked up, then sent to; a price cleaned to a number is no
    string)."""
    asked = task.casefold()
    return any(len(value.strip()) >= 4 and value in result.observation
               and value.casefold() not in asked
               for r in later if r.ok for _, value in strings(r.args))


def _words(observation: str, task: str) -> set[str]:
    """The words a result states that the task does not, lower-cased: the string values of a
    JSON result that are not numbers (``"overcast"``, ``"packed"``, an address), or the
    words of 4+ letters of a plain-text result that are not stop words."""
    try:
        data = json.loads(observation)
    except ValueError:
        data = None
    if isinstance(data, (dict, list)):
        found = {v for _, v in strings(data) if not _NUMBER_LIKE.fullmatch(v)}
    else:
        found = {w for w in _LONG_WORD.findall(observation) if lexical.terms(w)}
    asked = task.casefold()
    return {w.casefold() for w in found if w.casefold() not in asked}


def _numbers(text: str) -> set[str]:
    """The numbers written in ``text``, without signs or thousands separators."""
    return set(_NUMBER.findall(re.sub(r"(?<=\d),(?=\d{3})", "", text)))
