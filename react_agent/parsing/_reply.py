"""The tolerant parser: a raw model reply -> :class:`Reply` (thought, tool calls or final answer).

Stages, tried in order (the stage that succeeded is recorded on the Reply):

1. ``direct``: the whole reply (after removing a BOM and ``<think>`` reasoning) is one JSON value.
2. ``fenced``: the action is the content of a Markdown fence (```json, ```, ~~~), also an
   inline one on a line of its own or of prose (```` ```json {...}``` ````).
3. ``fallback``: the action was found in prose, or ReAct text (``Action:`` / ``Action Input:``,
   ``Final Answer:``).
4. ``repaired``: the action needed a dialect repair (see :func:`._repair.repair_json`:
   Python-dict quotes and literals, curly quotes, trailing commas, comments, bare keys, missing
   commas or colons, doubled braces, fullwidth punctuation, literal ``\\n`` between members, raw
   backslashes, unescaped inner quotes, tuples, ...), or was written as the text of a JSON
   string (``"{\\"thought\\": ...}"``), or only its final ``}`` was missing.

Candidates are found by one linear scan that matches brackets with a stack, reading strings only
where JSON can hold one, so prose apostrophes, braces inside strings and thousands of unmatched
braces cost no more than their length. Each candidate is placed: fenced or on its own line (a
whole envelope also beside a sentence) outranks a bare call beside prose, and an object quoted
inside a sentence or a ``Thought:`` line (set apart by spaces: an envelope with prose glued to
both sides, ``Sure{...}Thanks``, was written beside it), a placeholder skeleton (``<tool name>``,
``...``) or a copy of the system prompt's worked examples is never an action. The first of the
best placed candidates is the action; text after an invented ``Observation:`` (or a call's next
step written at once after it) is ignored, but a second, different action with words between
them is an error that names both. Anything that cannot be honestly recovered raises
:class:`OutputParseError` with a message written for the model; any text gives a Reply or that
error. The policies are those of the shared parser catalogue
(``tests/data/parser_cases.jsonl``, our own cases in ``tests/data/parser_cases_local.jsonl``);
the docs' parser page lists them.

The stages stay in one module because they rank one list of candidates against each other (the
scan's); where a value stands is :mod:`._placement`'s, the words both readers know
:mod:`._vocabulary`'s, loading and repairing :mod:`._load`'s and :mod:`._repair`'s.
"""

from __future__ import annotations

import dataclasses
import json
import re
from dataclasses import dataclass, field
from typing import Any

from .. import prompts
from ..errors import OutputParseError
from ..types import Reply as Reply  # its import path stays react_agent.parsing._reply.Reply
from ..types import ToolCall
from ._envelope import (
    ARGS_KEYS as ARGS_KEYS,
)
from ._envelope import (
    FINAL_KEYS as FINAL_KEYS,
)
from ._envelope import (
    NAME_KEYS as NAME_KEYS,
)
from ._envelope import (
    NULL_ANSWER,
    Reading,
    Shape,
    bare_value,
    checked_args,
    interpret,
    quoted,
    show_value,
)
from ._envelope import (
    WRAPPER_KEYS as WRAPPER_KEYS,
)
from ._envelope import (
    ValueNamer as ValueNamer,
)
from ._load import FAIL, load_json, load_or_repair
from ._placeholders import never_an_action, never_problem
from ._placement import FENCE, JSON_FENCES, fence_language, placement
from ._scan import (
    VALUE_START,
    Scan,
    could_be_envelope,
    inside_unclosed_structure,
    opens_structure,
    prev_significant,
    scan_text,
)
from ._vocabulary import (
    THINK_CLOSE,
    THINK_OPEN,
    without_lone_surrogates,
)


def parse_error(
    kind: str, problem: str, position: int | None = None, tool: str | None = None
) -> OutputParseError:
    """The :class:`OutputParseError` for ``problem``, rendered from
    ``prompts/agent/parse_error.md``."""
    return OutputParseError(
        prompts.render("agent/parse_error", problem=problem), kind=kind, problem=problem,
        position=position, tool=tool,
    )


def parse_reply(text: str, *, name_value: ValueNamer | None = None,
                null_answer: bool = False) -> Reply:
    """Parse one raw model reply.

    Args:
        text: the model's reply exactly as returned.
        name_value: ``name_value(tool, value) -> argument name or None``, for a value the model
            gave a tool without an argument name (``{"calculate": "17 * 2"}``, ``"args": "Lyon"``):
            the parser has no schema, the agent does (a tool with exactly one required argument
            whose type the value fits). Without it, or when it returns ``None``, such a reply is
            a ``bad_args`` error.
        null_answer: a ``null`` final answer is the answer ``"null"`` (for a typed answer whose
            type allows ``null``); by default it is a ``bad_final`` error.

    Returns:
        The :class:`Reply` of the first complete envelope.

    Raises:
        OutputParseError: nothing usable; ``str(err)`` tells the model what was wrong and what
            to send instead, ``err.kind`` names the defect. Any text gives a Reply or this error.
    """
    body, repairs = _reply_body(text)
    token = NULL_ANSWER.set(null_answer)
    try:
        return _parse_body(body, repairs, name_value)
    except RecursionError:  # a value nested deeper than Python's stack, in any consumer
        raise parse_error(
            "too_deep", "Its JSON was nested too deeply to read; send a flatter object."
        ) from None
    finally:
        NULL_ANSWER.reset(token)


def _parse_body(body: str, repairs: tuple[str, ...], namer: ValueNamer | None) -> Reply:
    """The stages, in order; the first that yields an action wins."""
    whole = _whole_reply(body, repairs, namer)  # 1. the whole reply is one JSON value
    if whole.reply is not None:
        return whole.reply
    found = _collect(body, repairs, namer, whole)  # 2-4. every candidate found in it, placed
    chosen = _choose(body, found, repairs, namer)  # the first of the best placed ones
    if chosen is None:
        chosen = _complete_truncated(body, found, repairs, namer)  # only the final "}" missing
    if chosen is None:
        raise _nothing_usable(body, found)
    return chosen


def _reply_body(text: str) -> tuple[str, tuple[str, ...]]:
    """The reply without a BOM and ``<think>`` reasoning -> (body, repairs); an error if
    nothing is left."""
    cleaned, repairs = _strip_reasoning(text)
    if not cleaned.strip():
        if repairs:
            raise parse_error(
                "no_action", "It held only reasoning (a <think> block) and no JSON object."
            )
        raise parse_error("empty", "It was empty.")
    return cleaned.strip(), repairs


@dataclass
class _Whole:
    """What stage 1 learned from the whole reply read as one JSON value."""

    reply: Reply | None = None  # the action, when the whole reply is it
    is_json: bool = False  # the whole reply is valid JSON
    pending: Shape | None = None  # it is an envelope with a thought and no action


def _whole_reply(body: str, repairs: tuple[str, ...], namer: ValueNamer | None) -> _Whole:
    """Stage 1 (``direct``): the whole body read as one JSON value; raises for an envelope
    that is there but malformed, or an action that is never one (a placeholder, an example)."""
    value = load_json(body)
    if value is FAIL:
        return _Whole()
    try:
        reply = interpret(value, "direct", repairs, namer)
    except Shape as shape:
        if shape.kind != "no_action":
            raise parse_error(shape.kind, shape.problem, tool=shape.tool) from None
        return _Whole(is_json=True, pending=shape)
    if reply is not None:
        never = never_an_action(reply)
        if never:
            raise parse_error(never[0], never_problem(body, 0, len(body), never[1]), 0)
        return _Whole(_finish(reply, body, 0, len(body)), is_json=True)
    return _Whole(is_json=True)


@dataclass
class _Candidate:
    """A value in the reply that may be the action, and where it stands."""

    start: int
    end: int
    reply: Reply | None = None  # a usable action
    shape: Shape | None = None  # an action that is there but malformed
    rank: int = 2  # 2: fenced or on its own; 1: beside prose; 0: never an action
    never: tuple[str, str] = ("", "")  # for rank 0: (error kind, why it is never the action)


@dataclass
class _Found:
    scan: Scan
    candidates: list[_Candidate] = field(default_factory=list)
    pending: Shape | None = None  # an envelope with a thought and no action
    failure: tuple[int, str] | None = None  # the first value that is not valid JSON, and why
    broken: tuple[int, str] | None = None  # the first of them that is an envelope, placed
    unknown: int | None = None  # the first valid JSON value that is not an action


def _collect(
    body: str, repairs: tuple[str, ...], namer: ValueNamer | None, whole: _Whole
) -> _Found:
    """Stages 2-4 (``fenced``, ``fallback``, ``repaired``): every candidate the scan finds
    (first string-aware, then bracket-only), loaded or repaired, read and placed (fenced, on
    its own, beside prose, quoted); what stage 1 learned counts first."""
    scan = scan_text(body, string_aware=True)
    found = _Found(scan, pending=whole.pending,
                   unknown=0 if whole.is_json and whole.pending is None else None)
    seen: set[tuple[int, int]] = set()
    truncated = inside_unclosed_structure(body, scan)
    for current in (scan, None):
        current = current or scan_text(body, string_aware=False)
        in_current = truncated if current is scan else inside_unclosed_structure(body, current)
        for start, end in current.spans:
            if (start, end) in seen or not could_be_envelope(body, start, end):
                continue
            if any(start in sc.nested and inside(sc.nested[start])
                   for sc, inside in ((current, in_current), (scan, truncated))):
                continue  # a value inside a JSON object or list that never closed (truncation);
                # the string-aware scan's view counts in the second pass too, where a bracket
                # inside a string ('[0') can hide the truncation
            seen.add((start, end))
            value, fixes, error = load_or_repair(body[start:end])
            if value is FAIL:
                found.failure = found.failure or (start, error)
                if found.broken is None and _broken_envelope(body, start, end):
                    found.broken = (start, error)
                continue
            fence = fence_language(body, start, end)
            stage = "repaired" if fixes else ("fallback" if fence is None else "fenced")
            rank, never = placement(body, start, end, value, fence, current.spans)
            try:
                reply = interpret(value, stage, (*repairs, *fixes), namer)
            except Shape as shape:
                if shape.kind == "no_action":
                    found.pending = found.pending or shape
                else:
                    found.candidates.append(_Candidate(start, end, None, shape, rank, never))
                continue
            if reply is None:
                found.unknown = start if found.unknown is None else found.unknown
                continue
            never = never_an_action(reply) or never
            found.candidates.append(_Candidate(start, end, reply, None, 0 if never[0] else rank,
                                               never))
        if any(c.rank for c in found.candidates):
            break
    found.candidates.sort(key=lambda c: c.start)
    return found


def _choose(
    body: str, found: _Found, repairs: tuple[str, ...], namer: ValueNamer | None
) -> Reply | None:
    """The action among the candidates: the first of the best placed ones, unless another
    one after it disagrees without an invented observation between them (then an error)."""
    usable = [c for c in found.candidates if c.rank]
    before = usable[0].start if usable else len(body)
    # ReAct text before the first JSON action shows as its Action Input (JSON that is not an
    # action) before it; "Final Answer:" only counts when nothing else is there.
    if not usable or (found.unknown is not None and found.unknown < before):
        react = _react_text(body, found.scan.spans, repairs, namer)
        if react is not None and react.rank and react.start < before:
            usable = [react, *(c for c in usable if c.start >= react.end)]
    if not usable:
        return None
    top = max(c.rank for c in usable)
    pool = [c for c in usable if c.rank == top]
    first = pool[0]
    if first.shape is not None:
        shape = first.shape
        raise parse_error(shape.kind, shape.problem, first.start, shape.tool)
    assert first.reply is not None
    if found.broken is not None and found.broken[0] < first.start:
        pos, error = found.broken  # a broken action first: what follows it is not the step
        raise parse_error(
            "invalid_json",
            f"The JSON object at character {pos} ({quoted(body[pos:pos + 40])}...) is not valid "
            f"JSON: {error}. The action written after it was not used.",
            pos,
        )
    cut = _cut_envelope_after(body, found.scan, first.end)
    _check_no_other_action(body, first, [*pool[1:], *([cut] if cut else [])])
    return _finish(first.reply, body, first.start, first.end)


def _check_no_other_action(body: str, first: _Candidate, later: list[_Candidate]) -> None:
    """Raise ``ambiguous`` if an action after ``first`` disagrees with it: two final answers,
    an answer then something else, or a call then another action with words between them
    ("for example ... for your question ..."). An invented observation between them ends the
    search (what follows it was written without a real observation), and so does a call
    followed at once by the next step written ahead."""
    assert first.reply is not None
    previous = first.end
    for other in sorted(later, key=lambda c: c.start):
        between = body[previous:other.start]
        if _INVENTED_OBSERVATION.search(between):
            return
        if other.reply is not None and _same_action(first.reply, other.reply):
            previous = other.end
            continue
        if first.reply.final_answer is None and not _LAYOUT.sub("", between).strip():
            return
        raise parse_error(
            "ambiguous",
            f"It held two different actions, {_describe(first)} and {_describe(other)}, with no "
            "observation between them. Send only the one you mean.",
            other.start,
        )


def _complete_truncated(
    body: str, found: _Found, repairs: tuple[str, ...], namer: ValueNamer | None
) -> Reply | None:
    """The action of a reply cut off just before its envelope's final ``}`` (not inside a
    string), with that ``}`` supplied; else ``None``."""
    scan = found.scan
    if scan.in_string_at is None and scan.last_unclosed is not None:
        return _close_truncated(body, scan.last_unclosed, repairs, namer)
    return None


def _nothing_usable(body: str, found: _Found) -> OutputParseError:
    """The error for a reply with no usable action, the most telling defect first."""
    scan = found.scan
    if scan.in_string_at is not None:  # truncation: only the envelope's final "}" is supplied
        pos = scan.in_string_at
        return parse_error(
            "truncated",
            f"It was cut off (the reply ended inside the string that starts at character {pos}: "
            f"{quoted(body[pos:pos + 40])}...); nothing of a cut reply is used. Send a shorter "
            "reply: a short thought, and the action.",
            pos,
        )
    if scan.last_unclosed is not None:
        pos = scan.last_unclosed
        return parse_error(
            "truncated",
            f"It was cut off (the reply ended before the JSON object that starts at character "
            f"{pos} was closed: {quoted(body[pos:pos + 40])}...); nothing of a cut reply is "
            "used. Send a shorter reply: a short thought, and the action.",
            pos,
        )
    never = next((c for c in found.candidates if not c.rank), None)
    if never is not None:
        why = never_problem(body, never.start, never.end, never.never[1])
        return parse_error(never.never[0], why, never.start)
    if found.pending is not None:
        return parse_error(found.pending.kind, found.pending.problem)
    if found.failure is not None:
        pos, error = found.failure
        return parse_error(
            "invalid_json",
            f"The JSON object at character {pos} ({quoted(body[pos:pos + 40])}...) is not "
            f"valid JSON: {error}.",
            pos,
        )
    fence = FENCE.search(body)
    if fence and fence.group(2).lower() not in JSON_FENCES:
        return parse_error(
            "code",
            f"It held a {fence.group(2)} code block instead of the JSON object. Code is never run.",
            fence.start(),
        )
    unknown = found.unknown
    if unknown is None and _is_plain_json(body):  # e.g. ["A:\n"], which the repair kept
        unknown = len(body) - len(body.lstrip())
    if unknown is not None:
        pos = unknown
        return parse_error(
            "unknown_shape",
            f"Its JSON {quoted(body[pos:pos + 60])} is not an action: it has no "
            '"action" (a tool call with "name" and "args", or a "final_answer").',
            pos,
        )
    return parse_error("no_json", f"It held no JSON object: {quoted(body[:60])}.")


_ACTION_KEY = re.compile(r"""["'“”‘’„]?(?:action|name|final_answer|tool_calls)["'“”’]?\s*[:：]""")
_SKELETON = re.compile(r"<[^<>\n]{1,80}>|\.\.\.|…")


def _broken_envelope(body: str, start: int, end: int) -> bool:
    """The value at ``body[start:end]``, which is not valid JSON even repaired, was meant as the
    action: it has an action's keys, no placeholder of the reply format (a skeleton with
    ``<tool name>`` or ``{...}`` is an example, skipped), and stands where an action stands
    (not quoted in a sentence). An action after it is then not the step."""
    text = body[start:end]
    if not _ACTION_KEY.search(text) or _SKELETON.search(text):
        return False
    rank, _ = placement(body, start, end, {"action": None}, fence_language(body, start, end))
    return rank > 0


def _is_plain_json(body: str) -> bool:
    """``body`` is one JSON array or object as it is (strict JSON, control characters
    allowed)."""
    text = body.strip()
    if not text.startswith(("[", "{")):
        return False
    try:
        json.loads(text, strict=False)
    except ValueError:
        return False
    return True


def strip_reasoning(text: str) -> str:
    """``text`` without ``<think>…</think>`` reasoning (what the agent sends back as history)."""
    return _strip_reasoning(text)[0].strip()


# -- reasoning, fences, thought lines ----------------------------------------------------------
_THOUGHT_LINE = re.compile(r"^[ \t]*Thought[ \t]*:[ \t]*(\S[^\n]*)$", re.MULTILINE | re.IGNORECASE)
_ACTION_LINE = re.compile(  # at a line start, or after a sentence ("Thought: x. Action: y")
    r"(?:^|(?<=[.!?。]))[ \t]*Action[ \t]*:[ \t]*([A-Za-z_][\w.-]*)[ \t]*(\()?",
    re.MULTILINE | re.IGNORECASE,
)
_ACTION_INPUT = re.compile(  # on its own line or on the Action line
    r"(?:^|(?<=[ \t]))[ \t]*Action[ \t]+Input[ \t]*:", re.MULTILINE | re.IGNORECASE
)
_FINAL_LINE = re.compile(r"^[ \t]*Final[ \t]+Answer[ \t]*:[ \t]*", re.MULTILINE | re.IGNORECASE)
_ORPHAN_CLOSE = re.compile(r"^[ \t]*" + re.escape(THINK_CLOSE), re.MULTILINE | re.IGNORECASE)


def _strip_reasoning(text: str) -> tuple[str, tuple[str, ...]]:
    """Remove a BOM and the reasoning block (``<tool_call>`` tags need no removal: the scan
    finds the JSON between them as it finds JSON in prose).

    Reasoning is a ``<think>`` block that opens the reply (closed: removed whole; unclosed: only
    the tag goes), or everything before a ``</think>`` on its own line with no opening tag (chat
    templates that pre-fill ``<think>``). Tags elsewhere, e.g. inside an answer, stay.
    """
    repairs: list[str] = []
    text = text.lstrip("\ufeff")
    body = text.lstrip()
    if body[:len(THINK_OPEN)].lower() == THINK_OPEN:
        close = body.lower().find(THINK_CLOSE)
        text = body[len(THINK_OPEN):] if close == -1 else body[close + len(THINK_CLOSE):]
        repairs.append("removed <think> reasoning")
    elif "<" in text and "</" in text:  # (cheap tests before the regex: ~10 ms per MB)
        orphan = _ORPHAN_CLOSE.search(text)
        if orphan:
            text = text[orphan.end():]
            repairs.append("removed reasoning before </think>")
    return text, tuple(repairs)


def _react_text(
    text: str, spans: list[tuple[int, int]], repairs: tuple[str, ...], namer: ValueNamer | None
) -> _Candidate | None:
    """ReAct text: ``Action: tool`` + ``Action Input: {...}``, ``Action: tool({...})``, or
    ``Final Answer: ...``. The first marker wins; what follows it was written without an
    observation and is ignored."""
    action = _ACTION_LINE.search(text)
    final = _FINAL_LINE.search(text)
    if action and (final is None or action.start() < final.start()):
        after = action.end()
        if not action.group(2):
            marker = _ACTION_INPUT.search(text, after)
            if marker is None or text[after:marker.start()].strip():
                return None
            after = marker.end()
        name = action.group(1)
        span = next(((s, e) for s, e in spans if s >= after), None)
        if span is None or text[after:span[0]].strip():
            if action.group(2):
                return None
            return _react_plain_input(text, name, action.start(), after, repairs, namer)
        value, fixes, _ = load_or_repair(text[span[0]:span[1]])
        if not isinstance(value, dict):
            return None
        end = span[1] + (1 if action.group(2) and text[span[1]:span[1] + 1] == ")" else 0)
        reading = Reading([*repairs, "read ReAct text", *fixes])
        try:
            call = ToolCall(name, checked_args(value, name))
        except Shape as shape:
            return _Candidate(action.start(), end, None, shape)
        reply = Reply(None, [call], None, "fallback", tuple(reading.fixes))
        return _candidate(reply, action.start(), end)
    if final:
        answer = text[final.end():].strip()
        if not answer:
            return None
        reply = Reply(None, [], answer, "fallback", (*repairs, "read ReAct text"))
        return _candidate(reply, final.start(), len(text))
    return None


def _react_plain_input(
    text: str, name: str, start: int, after: int, repairs: tuple[str, ...],
    namer: ValueNamer | None,
) -> _Candidate | None:
    """``Action Input: tide times``: a value without an argument name (the rest of the line,
    decoded if it is a JSON scalar or list), named by the agent's namer or a ``bad_args``."""
    line_end = text.find("\n", after)
    line_end = len(text) if line_end == -1 else line_end
    written = text[after:line_end].strip()
    if not written:
        return None
    value = load_json(written)
    if value is FAIL or isinstance(value, dict):
        value = written
    reading = Reading([*repairs, "read ReAct text"], namer)
    problem = (
        f"Its Action Input for {name} was {show_value(value)}, not a JSON object; write the "
        'arguments by name: Action Input: {"<argument>": <value>}.'
    )
    try:
        args = bare_value(name, value, problem, reading)
    except Shape as shape:
        return _Candidate(start, line_end, None, shape)
    return _candidate(Reply(None, [ToolCall(name, args)], None, "fallback", tuple(reading.fixes)),
                      start, line_end)


def _candidate(reply: Reply, start: int, end: int) -> _Candidate:
    never = never_an_action(reply)
    return _Candidate(start, end, reply, None, 0 if never else 2, never or ("", ""))


# -- what may stand between a call and the next step ------------------------------------------
_INVENTED_OBSERVATION = re.compile(
    r"^[ \t>*_#(-]*(?:the[ \t]+)?(?:Observations?|Tool[ _]?(?:result|output|response)s?"
    r"|Function[ _]?(?:result|output|response)s?|Results?|Output)\b[^\n:：]{0,30}[:：]"
    r"|<(?:tool_response|tool_result|observation|function_results?)>|^[ \t]*<data [0-9a-f]{8}>"
    r"|^[ \t]*Observation \(tool results are data"
    r"|^[ \t]*\(the tool results? comes? back",
    re.IGNORECASE | re.MULTILINE,
)
_LAYOUT = re.compile(  # what may stand between a call and the next step written at once
    r"^[ \t]*(?:```|~~~)[ \t]*[A-Za-z0-9_+.-]*[ \t]*$"  # a fence line
    r"|(?:```|~~~)(?:json5?|jsonc)?|`"  # an inline fence or code span
    r"|<[^<>\n]{1,40}>|^[ \t]*-{3,}[ \t]*$",
    re.MULTILINE | re.IGNORECASE,
)


def _cut_envelope_after(body: str, scan: Scan, after: int) -> _Candidate | None:
    """A JSON value that starts after ``after`` and was cut off (another action begun)."""
    for start, count in scan.unclosed:
        if start >= after and opens_structure(body, start + count - 1):
            return _Candidate(start, len(body))
    return None


def _same_action(a: Reply, b: Reply) -> bool:
    return a.final_answer == b.final_answer and [c.to_dict() for c in a.tool_calls] == [
        c.to_dict() for c in b.tool_calls
    ]


def _describe(candidate: _Candidate) -> str:
    where = f"(character {candidate.start})"
    reply = candidate.reply
    if reply is None:
        what = "an unusable action" if candidate.shape else "another action that was cut off"
        return f"{what} {where}"
    if reply.final_answer is not None:
        return f"the final answer {quoted(reply.final_answer[:50])} {where}"
    calls = ", ".join(f"{c.name} {show_value(c.args)}" for c in reply.tool_calls)
    return f"{calls} {where}"


def _finish(reply: Reply, body: str, start: int, end: int) -> Reply:
    """The reply with the text it was read from (``source``) and, when the JSON has no thought,
    the thought of a ``Thought:`` line before it."""
    thought, source_start = reply.thought, start
    if thought is None:
        m = _THOUGHT_LINE.search(body, 0, start)
        if m is not None:
            thought, source_start = m.group(1).strip(), m.start()
    reply = Reply(thought, reply.tool_calls, reply.final_answer, reply.stage, reply.repairs,
                  body[source_start:end])
    if body.find("\\", start, end) != -1 and (  # an escape \\udXXX (or \\U in Python style)
        body.find("\\u", start, end) != -1 or body.find("\\U", start, end) != -1
    ):
        reply = _without_lone_surrogates(reply)
    return reply


def _without_lone_surrogates(reply: Reply) -> Reply:
    """An escape of half a UTF-16 pair (``"\\ud800"``) decodes to a character no text can hold
    (encoding it, to send it on or to write a trace, fails); it becomes U+FFFD, recorded."""
    def clean(value: Any) -> Any:
        if isinstance(value, str):
            return without_lone_surrogates(value)
        if isinstance(value, dict):
            return {clean(k): clean(v) for k, v in value.items()}
        if isinstance(value, list):
            return [clean(v) for v in value]
        return value

    fixed = dataclasses.replace(
        reply, thought=clean(reply.thought), final_answer=clean(reply.final_answer),
        tool_calls=[ToolCall(clean(c.name), clean(c.args)) for c in reply.tool_calls],
    )
    if fixed == reply:
        return reply
    return dataclasses.replace(fixed, repairs=(*reply.repairs, "half surrogate pairs -> U+FFFD"))


def _close_truncated(
    text: str, start: int, repairs: tuple[str, ...], namer: ValueNamer | None
) -> Reply | None:
    """Supply a missing final ``}`` for the outermost object at ``start``, if that alone
    completes an envelope whose action is whole."""
    if text[start] != "{" or prev_significant(text, start) in VALUE_START:
        return None  # nested in another unclosed value: more than one bracket is missing
    value, fixes, _ = load_or_repair(text[start:] + "}")
    if not isinstance(value, dict) or "action" not in value:
        return None
    try:
        reply = interpret(value, "repaired", (*repairs, *fixes, "added the missing final }"),
                           namer)
    except Shape:
        return None
    if reply is None or never_an_action(reply):
        return None
    return _finish(reply, text + "}", start, len(text) + 1)


