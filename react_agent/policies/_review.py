"""When a draft final answer is worth a second, focused call: cheap checks on the draft.

Small models often write a final answer that drops the values the tools returned ("Yes, bring
an umbrella" without the rain), that switches language (a Chinese task answered in English,
copying an English tool result), or that restates a value wrongly (a tool's ``02:22`` as
"2:22 PM", ``-2.8`` as "2.8"). :func:`gaps` and :func:`~._restated.misstated` find these
faults without a model; the loop then asks for the answer again in a focused call
(:class:`Review`). The idea of checking a draft before accepting it follows Self-Refine
(Madaan et al., 2023), with the feedback computed by rules instead of the model.
"""

from __future__ import annotations

import contextlib
import functools
import re
import unicodedata
from collections import Counter
from collections.abc import Generator
from dataclasses import dataclass
from typing import Any, ClassVar

from .. import _lexical as lexical
from .. import prompts
from .._json import text_json
from .._persist import loads
from ..engine import FINAL_ANSWER_SCHEMA, Policy, Query, Request, Run, defang, frame
from ..errors import ConfigError, ModelError, OutputParseError
from ..events import FinalAnswer, ParseFailed, ReplyParsed
from ..types import Message, Reply, Step, ToolResult
from ._announced import announcement
from ._grounding import strings
from ._restated import Misstated, Told, misstated, read_told

REVIEW_MODES = ("auto", "always")
"""``auto``: a focused call rewrites the draft when :func:`gaps` or
:func:`~._restated.misstated` finds a fault; ``always``: after every draft in a run that
called tools."""

LOOP_REASON = "repeated calls whose results it already had, after being told so"
"""The review reason of a focused final-answer call made instead of ``loop_detected``."""


@dataclass(frozen=True)
class Review(Policy):
    """A focused second call for the final answer: the system prompt, then the tools' results
    and the task (``prompts/policies/review.md``), not the history and not the draft (a small
    model shown its draft copies it), under the final-answer schema where the backend
    constrains decoding. A usable answer replaces the draft; anything else (a tool
    call, an unusable reply, a model error, an answer with a fault the draft lacks by
    :func:`gaps` or :func:`~._restated.misstated`) keeps the draft. In a run that called
    tools only; the draft is not streamed as answer tokens there, since it may be replaced.

    Also breaks a loop: when the model goes on repeating calls whose results it already has
    after being warned, the answer is asked for in the same focused call instead of ending
    with ``loop_detected``.

    The review call is a step with ``origin="review"`` and
    ``records["review"] = {"reasons": [...]}``, plus ``"restated": [{"kind", "stated",
    "returned", "tool"}, ...]`` when the draft restated values wrongly
    (:meth:`~._restated.Misstated.to_dict`); notes on the draft's step.

    Args:
        mode: ``"auto"``: review a draft written in another script than the task or stating
            none of the values the tools returned (:func:`gaps`), or restating one wrongly
            (``restated``); ``"always"``: every draft.
        restated: review a draft that restates a value of a tool result wrongly: a time in
            the other half of the day, a date with month and day swapped or one of them
            changed, a number with the other sign, a quantity with another unit of its kind
            (:func:`~._restated.misstated`); ``False`` leaves this check out.

    A run with an output type (``output_type``) is not reviewed: its final answer is data,
    validated against the type (and sent back when it does not fit) instead.

    Raises:
        ConfigError: an unknown ``mode``.
    """

    name: ClassVar[str] = "review"
    runs_in_serve: ClassVar[bool] = False
    mode: str = "auto"
    restated: bool = True

    def __post_init__(self) -> None:
        if self.mode not in REVIEW_MODES:
            raise ConfigError(f"Review mode must be one of {', '.join(REVIEW_MODES)}.")

    def before_query(self, run: Run, query: Query) -> None:
        if query.step.origin is None and run.called_tools:
            query.answer_tokens = False  # a draft that may be replaced

    def on_final_answer(self, run: Run, step: Step) -> Generator[Request, Any, Step]:
        answer = run.result.final_answer or ""
        if not run.called_tools or run.setup.output is not None:
            return step  # a typed answer is data, checked against its type instead
        values = returned(run.task, run.facts.results)
        told = read_told(run.facts.results, run.facts.user) if self.restated else None
        wrong: list[Misstated] = []
        if self.mode == "always":
            reasons = ["is reviewed every time (Review(mode='always'))"]
        else:
            wrong = misstated(answer, told) if told is not None else []
            reasons = gaps(run.task, answer, run.facts.results, values) + [
                m.reason for m in wrong]
        if not reasons:
            return step
        yield FinalAnswer(step, answer, draft=True, reasons=tuple(reasons))
        return (yield from self.ask_again(run, reasons, "Review", "the draft answer " +
                                          " and ".join(reasons) + "; asking again in a "
                                          "focused call", values, told, wrong))

    def on_loop(self, run: Run, step: Step) -> Generator[Request, Any, Step | None]:
        if not all(run.succeeded(call) for call in step.tool_calls):
            return None
        return (yield from self.ask_again(run, [LOOP_REASON], "Loop", "the model repeats calls "
                                          "whose results it already has; asking for the final "
                                          "answer in a focused call"))

    def ask_again(self, run: Run, reasons: list[str], label: str, why: str,
                  values: Returned | None = None, told: Told | None = None,
                  wrong: list[Misstated] | None = None) -> Generator[Request, Any, Step]:
        """The focused call, noted as ``label: why`` on its step; returns the step (not in
        ``run.steps`` if the model failed: the step before it is noted with why). ``values``:
        :func:`returned` of the run, when already known; ``told``: what the run was told, read
        for :func:`~._restated.misstated` (``None``: that check is off); ``wrong``: the values
        the draft restated wrongly."""
        focused: list[Message] = [*run.messages[:1], {"role": "user", "content": prompts.render(
            "policies/review", task=run.task,
            facts=facts(run.facts.results, run.setup.framed))}]
        step = Step(index=len(run.steps) + 1, origin=self.name, in_history=False)
        step.records[self.name] = {"reasons": reasons}
        if wrong:
            step.records[self.name]["restated"] = [m.to_dict() for m in wrong]
        run.note(step, self.name, label, why)
        yield from run.flush()
        draft = run.messages[-1]
        try:
            reply = yield from run.ask(focused, step, schema=FINAL_ANSWER_SCHEMA)
        except ModelError as exc:  # the draft stands; its step says why
            step.error = f"the review call failed ({exc}); the draft answer stands"
            run.note(run.steps[-1], self.name, label, step.error)
            yield from run.flush()
            return step
        yield run.answered(step, reply, keep=False)
        try:
            read: Reply | None = run.read(step, reply)
            for policy in run.setup.policies:  # (e.g. an answer copied from a tool result)
                if read is None:
                    break
                read = policy.after_reply(run, step, read)
        except OutputParseError as exc:
            yield ParseFailed(step, str(exc))
            return step
        if read is None:  # a policy took the reply: the draft stands
            step.tool_calls = []
            return step
        parsed = read
        yield ReplyParsed(step, parsed)
        result = run.result
        if parsed.final_answer and parsed.final_answer.strip() \
                and not _worse(run, parsed.final_answer, result.final_answer, values, told):
            result.final_answer = parsed.final_answer
        else:
            run.messages[-1] = draft
        step.tool_calls = []  # a tool asked for here is not run: the draft stands
        return step


def _worse(run: Run, answer: str, draft: str | None, values: Returned | None = None,
           told: Told | None = None) -> bool:
    """Whether the focused ``answer`` has a fault by :func:`gaps` (or, with ``told``, by
    :func:`~._restated.misstated`; or it announces an action a tool could take,
    :func:`~._announced.announcement`) that the ``draft`` it would replace does not have: trading
    one fault for another is no repair, and the draft came with the model's own reasoning.
    With no draft (a broken loop) it is never worse."""
    if draft is None:
        return False
    values = values if values is not None else returned(run.task, run.facts.results)
    gapped = functools.partial(gaps, run.task, results=run.facts.results, values=values)

    said = " ".join(run.facts.user)

    def faults(text: str) -> set[str]:
        wrong = misstated(text, told) if told is not None else []
        announced = announcement(text, run.setup.toolbox, said)
        return set(gapped(text)) | {m.reason for m in wrong} | (
            {"announces an action instead of reporting it"} if announced else set())

    return bool(faults(answer) - faults(draft))

_NUMBER = re.compile(r"\d+(?:\.\d+)?")
_NUMBER_LIKE = re.compile(r"[\d\s.,:%+\-]*")  # "40%", "-1.5%", "09:30", "" (not words)
_LONG_WORD = re.compile(r"[^\W\d_]{4,}")


Returned = dict[str, tuple[set[str], set[str]]]
"""For each tool, the numbers (not in the task) and the words (:func:`_words`) its successful
results returned that an answer should state."""


def gaps(task: str, answer: str, results: list[ToolResult], values: Returned | None = None
         ) -> list[str]:
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
      an argument (:func:`_handed_on`: a contact's address handed to a tool that sends) was a
      means to the task, not part of the answer, and is not checked.

    ``values``: :func:`returned` of ``task`` and ``results``, when already known (checking
    several answers against the same results).
    """
    found = []
    task_script, answer_script = main_script(task), main_script(answer)
    if task_script and answer_script and task_script != answer_script:
        found.append(f"is written in {answer_script} script, the task in {task_script}")
    stated, said = _numbers(answer), answer.casefold()
    values = values if values is not None else returned(task, results)
    found += [f"states none of the values {tool} returned"
              for tool, (numbers, words) in values.items()
              if numbers and not numbers & stated and not any(w in said for w in words)]
    return found


def returned(task: str, results: list[ToolResult]) -> Returned:
    """What the successful ``results`` returned that an answer to ``task`` should state, by
    tool (see :func:`gaps`): each result's numbers not in the task and its words
    (:func:`_words`), except a result handed on to a later call (:func:`_handed_on`)."""
    given, asked = _numbers(task), task.casefold()
    values: Returned = {}
    handed = _handed_on(results, asked)
    for n, r in enumerate(results):
        if r.ok and not any(m > n and value in r.observation for m, value in handed):
            numbers, words = values.setdefault(r.call.name, (set(), set()))
            numbers.update(_numbers(r.observation) - given)
            words.update(_words(r.observation, asked))
    return values


def main_script(text: str) -> str | None:
    """The Unicode script most of ``text``'s letters belong to (the first word of their
    Unicode names: ``LATIN``, ``CJK``, ``CYRILLIC``, ``HANGUL``...), ``None`` without
    letters."""
    counts: Counter[str] = Counter()
    for char, n in Counter(text).items():  # (each distinct character named once)
        if char.isalpha():
            counts[_script(char)] += n
    return counts.most_common(1)[0][0] if counts else None


def _script(letter: str) -> str:
    """The script of one letter; Japanese kana count as ``CJK`` (Japanese mixes them with
    CJK ideographs)."""
    script = unicodedata.name(letter, "?").split(" ")[0]
    return "CJK" if script in ("HIRAGANA", "KATAKANA") else script


def facts(results: list[ToolResult], framed: bool = True) -> str:
    """The successful ``results`` for the focused call (``(none)`` without any): lines
    ``- <tool> <args as JSON>:`` each followed by its observation framed as data
    (:func:`~react_agent.engine.frame`, as the loop's observations are), or, unframed,
    ``- <tool> <args as JSON>: <observation>``."""
    if framed:
        lines = [f"{defang(f'- {r.call.name} {text_json(r.call.args)}')}:\n"
                 f"{frame(r.observation, text_json(r.call.to_dict()))}"
                 for r in results if r.ok]
    else:
        lines = [f"- {r.call.name} {text_json(r.call.args)}: {r.observation}"
                 for r in results if r.ok]
    return "\n".join(lines) or "(none)"


def _handed_on(results: list[ToolResult], asked: str) -> list[tuple[int, str]]:
    """The string arguments of 4+ characters that the task does not hold, of each successful
    call, with the call's index in ``results``: a result whose observation holds one of a later
    call's was a means to the task (an address or a phone number looked up, then sent to; a
    price cleaned to a number is no string). Each call's arguments are read once. ``asked``:
    the task, case-folded."""
    return [(n, value) for n, r in enumerate(results) if r.ok for _, value in strings(r.args)
            if len(value.strip()) >= 4 and value.casefold() not in asked]


def _words(observation: str, asked: str) -> set[str]:
    """The words a result states that the task (``asked``, case-folded) does not, lower-cased:
    the string values of a JSON result that are not numbers (``"overcast"``, ``"packed"``, an
    address), or the words of 4+ letters of a plain-text result that are not stop words."""
    data = None
    if observation.lstrip()[:1] in ("{", "["):  # (only an object or a list is read as JSON)
        with contextlib.suppress(ValueError):  # (not JSON, or nested too deeply to walk)
            data = loads(observation)
    if isinstance(data, (dict, list)):
        found = {v for _, v in strings(data) if not _NUMBER_LIKE.fullmatch(v)}
    else:
        found = {w for w in _LONG_WORD.findall(observation) if lexical.terms(w)}
    return {w.casefold() for w in found if w.casefold() not in asked}


def _numbers(text: str) -> set[str]:
    """The numbers written in ``text``, without signs or thousands separators."""
    return set(_NUMBER.findall(re.sub(r"(?<=\d),(?=\d{3})", "", text)))
