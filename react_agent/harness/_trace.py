"""Trace files: a run written as JSON Lines while it happens, and read back for replay.

:class:`TraceWriter` is an event callback (``Agent(model, toolbox, callbacks=[TraceWriter(path)])``
or ``react-agent run --trace FILE``). Each record is one line, flushed at once, so a trace
survives a crash or Ctrl-C up to the last finished record. Records (all have ``type`` and
``time``, an ISO 8601 UTC timestamp):

- ``run_start``: ``task``, ``system_prompt``, ``tools`` (names), ``model``, ``framed`` (tool
  results framed as data).
- ``model_call``: ``step`` (1-based), ``messages`` and ``message_chars`` (how many messages,
  of how many characters in all, were sent),
  ``raw_output``, ``seconds``, ``prompt_tokens``, ``completion_tokens``, then what the parser
  made of it: ``stage`` and ``repairs``, ``thought``, ``tool_calls`` (``[{name, args}]``),
  ``final_answer``, or ``parse_error`` (the problem) when the reply was unusable;
  ``assistant_message`` (what the history kept of the reply) and ``feedback`` (the message
  sent back for an unusable reply); ``origin`` (the policy that made an extra call, else
  ``null``), ``records`` (what the policies recorded on the step, by policy), ``notes`` (what
  they did, in words, so far) and ``in_history`` (the reply stayed in the history).
- ``note``: ``step``, ``policy``, ``label``, ``text``: a policy acted (as printed).
- ``tool_call``: ``step``, ``name``, ``args`` (as written), ``cleaned_args``, ``cleaning``
  (and ``cleaning_kinds``: the same without the values), ``observation``, ``ok``, ``error``
  (``None`` or the failure kind), ``seconds``.
- ``observation``: ``step``, ``message`` (the user message that carried the step's
  observations).
- ``run_end``: ``status``, ``final_answer``, ``best_effort``, ``error``, ``usage`` and
  ``result`` (the whole :class:`RunResult` as ``to_dict()``).

A conversation writes one ``run_start`` ... ``run_end`` group per turn. :func:`read_trace` turns
a trace back into :class:`RunResult` objects, also when the last run never ended (then its
messages, the history a resume continues, are rebuilt from the records).
"""

from __future__ import annotations

import datetime as dt
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from .. import prompts
from .._persist import Count, Seconds, Shape, append_json_lines, check_shape, read_json_lines, shown
from ..engine import observation_framing, observation_message, resumable
from ..errors import ConfigError
from ..events import (
    Event,
    FinalAnswer,
    ModelCallStarted,
    ObservationSent,
    OutputRejected,
    ParseFailed,
    PolicyNote,
    ReplyParsed,
    RunFinished,
    RunStarted,
    ToolFinished,
    ToolStarted,
)
from ..parsing import strip_reasoning
from ..policies import default_policies
from ..types import RunResult, Step, ToolResult


class TraceWriter:
    """Writes a run's events to ``path`` as JSON Lines (see the module docs for the records).

    Args:
        path: the trace file; created (with its folder) or overwritten.
        model: the model's name, recorded in ``run_start``.
        append: add to the file instead of overwriting it (a continued run written to the
            trace of the run it continues; :func:`read_trace` puts them together).

    Raises:
        ConfigError: the file cannot be opened for writing.
    """

    def __init__(
        self, path: str | os.PathLike[str], model: str | None = None, append: bool = False
    ) -> None:
        self.path, self.model = Path(path), model
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            if append:
                self._file: IO[str] = append_json_lines(self.path)
            else:
                self._file = self.path.open(
                    "w", encoding="utf-8", errors="backslashreplace"  # see write_atomically
                )
        except OSError as exc:
            raise ConfigError(f"Cannot write the trace {self.path}: {exc.strerror or exc}") from exc
        self._sent: tuple[int, int] = (0, 0)

    def __call__(self, event: Event) -> None:
        if isinstance(event, RunStarted):
            self._write("run_start", task=event.task, system_prompt=event.system_prompt,
                        tools=list(event.tools), model=self.model,
                        resumed_steps=event.resumed_steps, framed=event.framed)
        elif isinstance(event, ModelCallStarted):
            self._sent = (event.message_count, event.message_chars)
        elif isinstance(event, (ReplyParsed, ParseFailed)):
            step = event.step
            reply = event.reply if isinstance(event, ReplyParsed) else None
            parsed = {
                "stage": step.stage, "repairs": step.repairs, "thought": step.thought,
                "tool_calls": [c.to_dict() for c in reply.tool_calls] if reply else [],
                "final_answer": step.final_answer, "parse_error": step.error,
                "assistant_message": (reply and reply.source) or strip_reasoning(step.raw_output),
                "feedback": event.message if isinstance(event, ParseFailed) else None,
            }
            self._write(
                "model_call", step=step.index, messages=self._sent[0],
                message_chars=self._sent[1], raw_output=step.raw_output,
                seconds=round(step.model_seconds, 6), prompt_tokens=step.prompt_tokens,
                completion_tokens=step.completion_tokens, finish_reason=step.finish_reason,
                origin=step.origin, records=step.records, notes=step.notes,
                in_history=step.in_history, **parsed,
            )
        elif isinstance(event, PolicyNote):
            self._write("note", step=event.step.index, policy=event.policy, label=event.label,
                        text=event.text)
        elif isinstance(event, ToolFinished):
            self._write("tool_call", step=event.step.index, **event.result.to_dict())
        elif isinstance(event, ObservationSent):
            self._write("observation", step=event.step.index, message=event.message)
        elif isinstance(event, RunFinished):
            r = event.result
            self._write("run_end", status=r.status, final_answer=r.final_answer,
                        best_effort=r.best_effort, error=r.error, usage=r.usage,
                        result=r.to_dict())

    def close(self) -> None:
        self._file.close()

    def __enter__(self) -> TraceWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _write(self, kind: str, **fields: Any) -> None:
        now = dt.datetime.now(dt.timezone.utc).isoformat(timespec="milliseconds")
        record = {"type": kind, "time": now, **fields}
        self._file.write(json.dumps(record, ensure_ascii=False, default=repr) + "\n")
        self._file.flush()


def read_trace(path: str | os.PathLike[str]) -> list[RunResult]:
    """The runs recorded in a trace file, in order.

    A run without its ``run_end`` record (the process was killed) is rebuilt from its
    ``model_call`` and ``tool_call`` records, with status ``interrupted`` and an error that
    says so; a continued run (``run --resume``) whose trace was appended to the same file is
    rebuilt on top of the steps of the run it continued. A cut-off last line is ignored, and so
    is a record of a type this version does not know.

    Raises:
        ConfigError: the file cannot be read, holds no ``run_start`` record, or a record is
            malformed (the message names the file, the line, the record and the field at fault).
    """
    runs: list[RunResult] = []
    start: _RunStart | None = None  # of the run being read
    records: list[_Read] = []
    for number, data in read_json_lines(path, "trace", skip_broken="last"):
        where = f"{path}, line {number}"
        if not isinstance(data, dict):
            raise ConfigError(f"{where}: expected a trace record (an object with a type), got "
                              f"{shown(data)}.")
        kind = data.get("type")
        shape = _RECORDS.get(kind) if isinstance(kind, str) else None
        if shape is None or (start is None and kind != "run_start"):
            continue
        where = f"{where}: {kind}"
        record = check_shape(shape, data, where)
        if isinstance(record, _RunStart):
            if start is not None:
                runs.append(_rebuild(start, records, runs))
            start, records = record, []
        elif isinstance(record, _RunEnd):
            runs.append(RunResult.from_dict(record.result, f"{where}.result"))
            start = None
        elif isinstance(record, _ModelCall):  # the step, read as a saved one
            records.append((record, Step.from_dict({
                **data, "index": record.step, "error": record.parse_error,
                "model_seconds": record.seconds, "results": []}, where)))
        elif isinstance(record, _ToolCall):
            records.append((record, ToolResult.from_dict(data, where)))
        else:
            records.append((record, None))
    if start is not None:
        runs.append(_rebuild(start, records, runs))
    if not runs:
        raise ConfigError(f"{path} holds no run (no run_start record); is it a trace?")
    return runs


class _RunStart(Shape):
    task: str
    system_prompt: str | None = None
    tools: list[str] | None = None
    model: str | None = None
    resumed_steps: Count | None = None
    framed: bool | None = None
    time: str | None = None


class _RunEnd(Shape):
    result: dict[str, Any]


class _StepRecord(Shape):
    """A record of one step of a run: its ``step`` number."""

    step: Count


class _ModelCall(_StepRecord):
    """``model_call``: the fields of a saved :class:`Step` (read by it) under the trace's names,
    and what the history kept."""

    seconds: Seconds | None = None
    parse_error: str | None = None
    assistant_message: str | None = None
    feedback: str | None = None


class _ToolCall(_StepRecord):
    """``tool_call``: the step number, and a saved :class:`ToolResult` (read by it)."""


class _Note(_StepRecord):
    policy: str
    label: str
    text: str


class _Observation(_StepRecord):
    message: str


_RECORDS: dict[str, type[Shape]] = {
    "run_start": _RunStart, "run_end": _RunEnd, "model_call": _ModelCall, "tool_call": _ToolCall,
    "note": _Note, "observation": _Observation,
}
"""The shape of each record type of a trace."""

_Read = tuple[Shape, Step | ToolResult | None]
"""A record of a run's steps, and the step or tool result it holds."""


def _rebuild(start: _RunStart, records: list[_Read], earlier: list[RunResult]) -> RunResult:
    """A RunResult from the records of a run that did not end: its steps, and the messages the
    model was sent (the history to resume from), rebuilt step by step; a continued run starts
    from the run before it in the file."""
    task, resumed = start.task, start.resumed_steps or 0
    steps: dict[int, Step] = {}
    calls: dict[int, _ModelCall] = {}
    observations: dict[int, str] = {}
    for r, read in records:
        if isinstance(r, _ModelCall) and isinstance(read, Step):
            calls[r.step], steps[r.step] = r, read
        elif isinstance(r, _ToolCall) and isinstance(read, ToolResult) and r.step in steps:
            steps[r.step].results.append(read)
        elif isinstance(r, _Note) and r.step in steps:
            note = [r.policy, r.label, r.text]
            if note not in steps[r.step].notes:
                steps[r.step].notes.append(note)
        elif isinstance(r, _Observation):
            observations[r.step] = r.message
    ordered = [steps[i] for i in sorted(steps)]
    if resumed and earlier:  # a continued run: the run it continued, as the resume began
        messages, before = resumable(earlier[-1], start.system_prompt or "",
                                     tuple(default_policies()))
        ordered = [*before[:resumed], *ordered]
    else:
        messages = [{"role": "system", "content": start.system_prompt or ""},
                    {"role": "user", "content": task}]
    # framed as run_start says; in a trace written before it said, as the run's recorded
    # observations were, or, with none, as that version did: one without the sent messages
    # predates framing
    framing = {observation_framing(o) for o in observations.values()} - {None}
    framed = start.framed if start.framed is not None else framing != {False} if framing \
        else any(c.assistant_message is not None for c in calls.values())
    for step in ordered[resumed if resumed and earlier else 0:]:
        if not step.in_history or step.index not in calls:
            continue
        record = calls[step.index]
        kept = record.assistant_message or strip_reasoning(step.raw_output)
        messages.append({"role": "assistant", "content": kept})
        answer = _answer_sent(step, record, observations.get(step.index), task, framed)
        if answer is None:
            break  # the run stopped during this step: a resume asks it again
        messages.append({"role": "user", "content": answer})
    return RunResult(
        task, "interrupted", None, ordered,
        error="The trace ends before the run did: the process stopped mid-run.",
        messages=messages,
    )


def _answer_sent(
    step: Step, record: _ModelCall, observation: str | None, task: str, framed: bool
) -> str | None:
    """The user message that followed ``step`` (the observations, or what was wrong with an
    unusable reply), from the trace; rebuilt where the trace ends before it was recorded, or
    was written before it was (``framed``: the run framed its observations, as its recorded
    observation messages were)."""
    if step.stage is None:
        return record.feedback or prompts.render("agent/parse_error", problem=step.error or "")
    if not step.tool_calls:
        return None
    if observation is None and step.results and len(step.results) == len(step.tool_calls):
        observation = observation_message(step.results, task, framed)
    return observation


def replay_events(result: RunResult, system_prompt: str = "") -> Iterator[Event]:
    """The events a live run would have given for ``result``, for printing a saved run. A
    policy's notes come after the reply they are about, or, on an extra call a policy made,
    before it."""
    system = system_prompt or next(
        (m["content"] for m in result.messages if m["role"] == "system"), ""
    )
    yield RunStarted(result.task, system)
    for n, step in enumerate(result.steps, 1):
        notes = [PolicyNote(step, *note) for note in step.notes]
        if step.origin is not None:
            yield from notes
        yield ModelCallStarted(step.index)
        if step.reply is None:
            yield ParseFailed(step, step.error or "")
        else:
            yield ReplyParsed(step, step.reply)
        if step.origin is None:
            yield from notes
        if step.in_history:
            for call in step.tool_calls:
                yield ToolStarted(step, call)
            for tool_result in step.results:
                yield ToolFinished(step, tool_result)
        rejected = step.records.get("output")
        problems = rejected.get("problems") if isinstance(rejected, dict) else None
        if step.final_answer is not None and isinstance(problems, list):
            yield OutputRejected(step, tuple(str(p) for p in problems), "")
        elif step.final_answer is not None and step.in_history and step.origin not in (
                "review", "best_effort"):  # (an answer a policy set aside is not in it)
            following = result.steps[n] if n < len(result.steps) else None
            draft = following is not None and following.origin == "review"
            yield FinalAnswer(step, step.final_answer, draft=draft,
                              reasons=_review_reasons(following) if draft else ())
        elif step.final_answer is not None and step.origin == "best_effort":
            yield FinalAnswer(step, step.final_answer, best_effort=True)
        if step.origin == "review" and result.final_answer is not None:
            yield FinalAnswer(step, result.final_answer)
    yield RunFinished(result)


def _review_reasons(step: Step | None) -> tuple[str, ...]:
    """Why the review asked again, from the record on its step (any JSON in a saved run)."""
    review = step.records.get("review") if step is not None else None
    reasons = review.get("reasons") if isinstance(review, dict) else None
    return tuple(str(r) for r in reasons) if isinstance(reasons, list) else ()
