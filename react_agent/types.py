"""The plain data types every layer shares: tool calls, chat messages, model replies, tool
results, steps and the result of a run (with its :data:`Status`).

They hold data and convert to and from JSON; nothing here runs a model or a tool.
"""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, get_args

from pydantic import JsonValue
from pydantic_core import to_jsonable_python

from ._persist import Count, Probability, Seconds, Shape, check_shape, read_json, write_atomically

Status = Literal[
    "final_answer", "max_steps", "parse_errors", "model_error", "loop_detected", "interrupted",
    "internal_error", "output_invalid",
]
"""How a run can end (``RunResult.status``)."""

STATUSES: tuple[Status, ...] = get_args(Status)
"""Every :data:`Status`, in the order above."""

JSON_TYPES: dict[str, str] = {
    "str": "string", "int": "integer", "float": "number", "bool": "boolean", "list": "array",
    "tuple": "array", "dict": "object", "NoneType": "null",
    "double": "number", "long": "integer",  # loose names some function-calling specs use
}
"""JSON Schema type names by Python type name (``type(value).__name__``, or a type's name in a
loosely written tool spec)."""

JSON_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
"""A number as models write it (JSON's, plus a leading ``+``, ``.5`` and ``5.``): the one pattern
the parser and the invoker share."""

Message = dict[str, str]
"""One chat message: ``{"role": "system" | "user" | "assistant", "content": str}``."""


@dataclass(frozen=True)
class ToolCall:
    """One tool call requested by the model: ``name`` and its ``args`` (a JSON object)."""

    name: str
    args: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "args": self.args}


@dataclass(frozen=True)
class ModelReply:
    """One completion.

    Attributes:
        text: the raw reply text.
        prompt_tokens: tokens the backend counted in the prompt (``None`` if it did not say).
        completion_tokens: tokens generated (``None`` if unknown).
        finish_reason: the backend's stop reason (``"stop"``, ``"length"``, ...) if known.
        answer_probability: the probability (0-1) the model gave the final answer where the
            reply chose its action, when the request set an ``answer_floor``
            (:mod:`react_agent.models._answer_floor`); ``None`` if not measured.
        answer_taken: the floor chose the final answer against the most likely token.
        choices: for a request that asked a choice question (``Query.choices``) of a backend
            with ``accepts_choices``: each choice's probability (0-1, summing to 1);
            ``None`` otherwise (the choice is then read from ``text``).
    """

    text: str
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    finish_reason: str | None = None
    answer_probability: float | None = None
    answer_taken: bool = False
    choices: dict[str, float] | None = None


@dataclass
class ToolResult:
    """The outcome of one tool call.

    Attributes:
        call: the call as the model wrote it.
        observation: the text the model gets back.
        ok: the tool ran and returned.
        error: ``None``, or the failure kind: ``"unknown_tool"``, ``"invalid_args"``,
            ``"declined"``, ``"tool_error"``, ``"timeout"``, ``"repeated"``, ``"call_budget"``
            (past the run's ``max_tool_calls``), or the code of the policy that answered the
            call (``origin``; each policy documents its codes).
        args: the arguments after cleaning (what the tool was called with).
        cleaning: what the cleaning changed, in words (e.g. ``'days: "5" -> 5'``).
        seconds: wall time of the tool call.
        cleaning_kinds: the same changes without the values (``"days: string -> integer"``),
            for records that must hold no content (OpenTelemetry without content capture).
        origin: who gave the result: ``None`` for the invoker (the tool ran, or the invoker
            refused the call), ``"loop"`` for the loop (a repeat warning, a call past
            ``max_tool_calls``), else the name of the policy that answered the call without
            running it.
        skipped: the call was not run and the result not sent to the model, and that is no
            failure: not counted as a tool call, shown as a note (a repeat a policy set aside;
            ``observation`` is then the earlier result).
    """

    call: ToolCall
    observation: str
    ok: bool
    error: str | None = None
    args: dict[str, Any] = field(default_factory=dict)
    cleaning: list[str] = field(default_factory=list)
    seconds: float = 0.0
    cleaning_kinds: list[str] = field(default_factory=list)
    origin: str | None = None
    skipped: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.call.name, "args": self.call.args, "cleaned_args": self.args,
            "observation": self.observation, "ok": self.ok, "error": self.error,
            "cleaning": self.cleaning, "seconds": round(self.seconds, 6),
            "cleaning_kinds": self.cleaning_kinds, "origin": self.origin,
            "skipped": self.skipped,
        }

    @classmethod
    def from_dict(cls, data: Any, where: str = "result") -> ToolResult:
        """The inverse of :meth:`to_dict` (for saved runs and traces).

        Raises:
            ConfigError: ``data`` is not a saved tool result; the message names the field at
                fault under ``where``.
        """
        return check_shape(_ToolResultShape, data, where).value()


@dataclass(frozen=True)
class Reply:
    """What the parser found in one model reply.

    Exactly one of ``tool_calls`` (non-empty, in the order given) and ``final_answer`` is set.

    Attributes:
        thought: the model's thought (from the JSON, else from a ``Thought:`` line), or ``None``.
        tool_calls: the calls to run; several mean independent calls that may run concurrently.
        final_answer: the answer text (always a string), or ``None``.
        stage: ``"direct"``, ``"fenced"``, ``"fallback"`` or ``"repaired"``.
        repairs: what was cleaned or repaired on the way, in words (e.g. ``"trailing commas"``).
        source: the part of the reply the action was read from (the envelope as written, with
            the ``Thought:`` line that supplied the thought); the agent keeps only this in the
            history, not the prose or the invented steps around it.
    """

    thought: str | None
    tool_calls: list[ToolCall]
    final_answer: str | None
    stage: str
    repairs: tuple[str, ...] = ()
    source: str = ""


@dataclass
class Step:
    """One model call and what came of it.

    Attributes:
        index: 1-based number of the model call in the run.
        raw_output: the model's reply exactly as returned.
        reply: the parsed :class:`Reply`, or ``None`` when the reply was unusable; the step's
            ``thought``, ``final_answer``, ``stage`` and ``repairs`` are read from it.
        tool_calls: the calls the model asked for (empty for a final answer or a parse error).
        results: one :class:`ToolResult` per call, in the same order.
        error: the parse error (what was wrong) when the reply was unusable, else ``None``.
        model_seconds: wall time of the model call.
        prompt_tokens, completion_tokens: token usage reported by the model backend.
        finish_reason: the backend's stop reason (``"length"``: the reply was cut by the token
            limit), if known.
        origin: ``None`` for a step of the loop; for an extra model call a policy made, that
            policy's name (``"review"``: the final answer asked for again in a focused call;
            ``"best_effort"``: a final answer asked for after ``max_steps``).
        records: what the policies noted about this step, by policy name (JSON values; see
            each policy in :mod:`react_agent.policies`).
        notes: what the policies did here, in words, as ``[policy, label, text]`` (printed as
            ``label: text``; :class:`~react_agent.events.PolicyNote` events carry them live).
        in_history: the reply is part of the history a continued run goes on from (a policy
            may set a reply aside; a policy's extra call is no part of it, even one whose
            question and answer stay in ``RunResult.messages`` until a resume takes them out).
    """

    index: int
    raw_output: str = ""
    reply: Reply | None = None
    tool_calls: list[ToolCall] = field(default_factory=list)
    results: list[ToolResult] = field(default_factory=list)
    error: str | None = None
    model_seconds: float = 0.0
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    finish_reason: str | None = None
    origin: str | None = None
    records: dict[str, Any] = field(default_factory=dict)
    notes: list[list[str]] = field(default_factory=list)
    in_history: bool = True

    @property
    def thought(self) -> str | None:
        """The parsed thought, or ``None``."""
        return self.reply.thought if self.reply else None

    @property
    def final_answer(self) -> str | None:
        """The final answer given in this step, or ``None``."""
        return self.reply.final_answer if self.reply else None

    @property
    def stage(self) -> str | None:
        """The parser stage that succeeded (``direct``/``fenced``/``fallback``/``repaired``), or
        ``None`` when the reply was unusable."""
        return self.reply.stage if self.reply else None

    @property
    def repairs(self) -> list[str]:
        """What the parser cleaned or repaired."""
        return list(self.reply.repairs) if self.reply else []

    @property
    def observations(self) -> list[str]:
        """The observation text of each tool call, in order."""
        return [r.observation for r in self.results]

    def to_dict(self) -> dict[str, Any]:
        return {
            "index": self.index, "raw_output": self.raw_output, "thought": self.thought,
            "tool_calls": [c.to_dict() for c in self.tool_calls],
            "results": [r.to_dict() for r in self.results],
            "observations": self.observations, "final_answer": self.final_answer,
            "stage": self.stage, "repairs": self.repairs, "error": self.error,
            "model_seconds": round(self.model_seconds, 6),
            "prompt_tokens": self.prompt_tokens, "completion_tokens": self.completion_tokens,
            "finish_reason": self.finish_reason, "origin": self.origin,
            "records": self.records, "notes": self.notes, "in_history": self.in_history,
        }

    @classmethod
    def from_dict(cls, data: Any, where: str = "step") -> Step:
        """The inverse of :meth:`to_dict` (for saved runs, checkpoints and traces).

        Raises:
            ConfigError: ``data`` is not a saved step; the message names the field at fault
                under ``where``.
        """
        return check_shape(_StepShape, data, where).value()


class _CallShape(Shape):
    """A saved :class:`ToolCall`."""

    name: str
    args: dict[str, Any] | None = None

    def value(self) -> ToolCall:
        return ToolCall(self.name, self.args or {})


_ORIGIN_BEFORE: dict[str, tuple[str, bool]] = {
    "repeated": ("loop", False), "call_budget": ("loop", False),
    "ungrounded": ("ground_contacts", False), "set_aside": ("repeat", True),
}
"""The ``origin`` and ``skipped`` of a result saved before results had them, by its error: the
codes the loop and the built-in policies gave then."""


class _ToolResultShape(Shape):
    """A saved :class:`ToolResult` (:meth:`ToolResult.to_dict`); in a file written before
    results had ``origin`` and ``skipped``, they follow from the error (:data:`_ORIGIN_BEFORE`)."""

    name: str
    args: dict[str, Any] | None = None
    observation: str
    ok: bool
    error: str | None = None
    cleaned_args: dict[str, Any] | None = None
    cleaning: list[str] | None = None
    seconds: Seconds | None = None
    cleaning_kinds: list[str] | None = None
    origin: str | None = None
    skipped: bool | None = None

    def value(self) -> ToolResult:
        origin, skipped = self.origin, self.skipped
        if skipped is None:  # written before results had an origin
            origin, skipped = _ORIGIN_BEFORE.get(self.error or "", (None, False))
        return ToolResult(ToolCall(self.name, self.args or {}), self.observation, self.ok,
                          self.error, self.cleaned_args or {}, list(self.cleaning or []),
                          self.seconds or 0.0, list(self.cleaning_kinds or []), origin,
                          skipped)


class _StepShape(Shape):
    """A saved :class:`Step` (:meth:`Step.to_dict`), also with the fields of files written before
    policies were plug-ins (``best_effort``, ``review``, ``review_reasons``, ``repeat``,
    ``held_calls``, ``answer_probability``, ``answer_taken``)."""

    index: Count
    tool_calls: list[_CallShape]
    raw_output: str | None = None
    thought: str | None = None
    final_answer: str | None = None
    stage: str | None = None
    repairs: list[str] | None = None
    results: list[_ToolResultShape] | None = None
    error: str | None = None
    model_seconds: Seconds | None = None
    prompt_tokens: Count | None = None
    completion_tokens: Count | None = None
    finish_reason: str | None = None
    origin: str | None = None
    records: dict[str, Any] | None = None
    notes: list[Any] | None = None
    in_history: bool | None = None
    best_effort: bool | None = None
    review: bool | None = None
    review_reasons: list[str] | None = None
    repeat: bool | None = None
    held_calls: list[Any] | None = None
    answer_probability: Probability | None = None
    answer_taken: bool | None = None

    def value(self) -> Step:
        tool_calls = [c.value() for c in self.tool_calls]
        reply = None if self.stage is None else Reply(
            self.thought, tool_calls, self.final_answer, self.stage, tuple(self.repairs or ()))
        return Step(
            index=self.index, raw_output=self.raw_output or "", reply=reply,
            tool_calls=tool_calls, results=[r.value() for r in self.results or []],
            error=self.error, model_seconds=self.model_seconds or 0.0,
            prompt_tokens=self.prompt_tokens, completion_tokens=self.completion_tokens,
            finish_reason=self.finish_reason, **self._policy_fields(),
        )

    def _policy_fields(self) -> dict[str, Any]:
        """``origin``, ``records``, ``notes`` and ``in_history``, also from the older fields."""
        records = dict(self.records or {})
        origin = self.origin
        if self.best_effort:
            origin = "best_effort"
        if self.review:
            origin = "review"
            records.setdefault("review", {"reasons": list(self.review_reasons or [])})
        if self.repeat:
            records.setdefault("repeat", True)
        if self.held_calls:
            records.setdefault("held_calls", self.held_calls)
        if self.answer_probability is not None:
            records.setdefault("answer_floor", {"probability": self.answer_probability,
                                                "taken": bool(self.answer_taken)})
        notes = [[str(part) for part in note] for note in self.notes or []
                 if isinstance(note, list) and len(note) == 3]
        in_history = self.in_history
        if in_history is None:
            in_history = origin is None and not self.repeat
        return {"origin": origin, "records": records, "notes": notes, "in_history": in_history}


class MessageShape(Shape):
    """A saved :data:`Message`."""

    role: str
    content: str


@dataclass
class RunResult:
    """The outcome and the whole trajectory of one run (JSON-serialisable via :meth:`to_dict`).

    Attributes:
        task: the user's task.
        status: how the run ended, a :data:`Status`.
        final_answer: the answer, or ``None`` if the run ended otherwise.
        steps: every model call, in order, including unusable replies.
        error: what went wrong, in words a user can act on (``None`` for a final answer).
        messages: the conversation as sent to the model (system, user, assistant, ...).
        best_effort: the final answer was asked for after ``max_steps`` ran out (status stays
            ``max_steps``): it rests on what was observed so far and may be incomplete.
        tools: the names of the tools the model was shown (fewer than the toolbox's when
            routing picked the best matches for the task).
        output: the typed value of the final answer, of the run's ``output_type`` (a pydantic
            model, a dataclass, ...; its JSON form in a result read back from a file); ``None``
            without an output type, or when the final answer did not fit it (status
            ``output_invalid``, the answer's text kept in ``final_answer``).
        has_output: whether ``output`` holds a typed value: ``None`` is one where the output
            type allows JSON ``null``, so test this, not ``output is not None``.
    """

    task: str
    status: Status
    final_answer: str | None
    steps: list[Step]
    error: str | None = None
    messages: list[Message] = field(default_factory=list)
    best_effort: bool = False
    tools: list[str] = field(default_factory=list)
    output: Any = None
    has_output: bool = False

    @property
    def usage(self) -> dict[str, Any]:
        """Totals: ``prompt_tokens``, ``completion_tokens``, ``model_seconds``,
        ``tool_seconds``, ``model_calls``, ``tool_calls``."""
        return {
            "prompt_tokens": sum(s.prompt_tokens or 0 for s in self.steps),
            "completion_tokens": sum(s.completion_tokens or 0 for s in self.steps),
            "model_seconds": round(sum(s.model_seconds for s in self.steps), 6),
            "tool_seconds": round(sum(r.seconds for s in self.steps for r in s.results), 6),
            "model_calls": len(self.steps),
            "tool_calls": sum(not r.skipped for s in self.steps for r in s.results),
        }

    @property
    def stage_counts(self) -> dict[str, int]:
        """How many replies each parser stage recovered (``"error"`` for unusable ones)."""
        return dict(Counter(s.stage or "error" for s in self.steps))

    @property
    def tool_calls(self) -> list[ToolCall]:
        """Every tool call of the run, in order."""
        return [c for s in self.steps for c in s.tool_calls]

    @property
    def tool_results(self) -> list[ToolResult]:
        """Every tool result of the run, in order."""
        return [r for s in self.steps for r in s.results]

    def to_dict(self) -> dict[str, Any]:
        return {
            "task": self.task, "status": self.status, "final_answer": self.final_answer,
            "best_effort": self.best_effort, "error": self.error, "tools": self.tools,
            "output": to_jsonable_python(self.output), "has_output": self.has_output,
            "usage": self.usage,
            "stage_counts": self.stage_counts,
            "steps": [s.to_dict() for s in self.steps], "messages": self.messages,
        }

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, indent=indent)

    @classmethod
    def from_dict(cls, data: Any, where: str = "run") -> RunResult:
        """The inverse of :meth:`to_dict`.

        Raises:
            ConfigError: ``data`` is not a saved RunResult; the message names the field at
                fault under ``where``.
        """
        return check_shape(_RunShape, data, where).value()

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write :meth:`to_json` to ``path`` (UTF-8), atomically: a temporary file in the same
        folder is renamed over ``path``, so a crash never leaves half a file."""
        write_atomically(Path(path), self.to_json())

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> RunResult:
        """Read a file written by :meth:`save`.

        Raises:
            ConfigError: the file cannot be read or is not a saved RunResult (the message
                names the file and the field at fault).
        """
        return cls.from_dict(read_json(Path(path)), f"{path}: run")


class _RunShape(Shape):
    """A saved :class:`RunResult` (:meth:`RunResult.to_dict`)."""

    task: str
    status: Status
    steps: list[_StepShape]
    final_answer: str | None = None
    error: str | None = None
    messages: list[MessageShape] | None = None
    best_effort: bool | None = None
    tools: list[str] | None = None
    output: JsonValue = None
    has_output: bool | None = None

    def value(self) -> RunResult:
        return RunResult(
            task=self.task, status=self.status, final_answer=self.final_answer,
            steps=[s.value() for s in self.steps], error=self.error,
            messages=[{"role": m.role, "content": m.content} for m in self.messages or []],
            best_effort=bool(self.best_effort), tools=list(self.tools or []),
            output=self.output,
            has_output=self.output is not None if self.has_output is None else self.has_output,
        )
