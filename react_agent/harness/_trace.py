"""Trace files: a run written as JSON Lines while it happens, and read back for replay.

:class:`TraceWriter` is an event callback (``Agent(model, toolbox, callbacks=[TraceWriter(path)])``
or ``react-agent run --trace FILE``). Each record is one line, flushed at once, so a trace
survives a crash or Ctrl-C up to the last finished record. Records (all have ``type`` and
``time``, an ISO 8601 UTC timestamp):

- ``run_start``: ``task``, ``system_prompt``, ``tools`` (names), ``model``.
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
from .._persist import append_json_lines, read_json_lines
from .._protocol import observation_message
from ..agent._loop import resumable
from ..errors import ConfigError
from ..events import (
    Event,
    FinalAnswer,
    ModelCallStarted,
    ObservationSent,
    ParseFailed,
    PolicyNote,
    ReplyParsed,
    RunFinished,
    RunStarted,
    ToolFinished,
    ToolStarted,
)
from ..parsing._reply import strip_reasoning
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
                        resumed_steps=event.resumed_steps)
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
    rebuilt on top of the steps of the run it continued. A cut-off last line is ignored.

    Raises:
        ConfigError: the file cannot be read, holds no ``run_start`` record, or a record is
            malformed (the message names the file, the line and the field at fault).
    """
    runs: list[RunResult] = []
    current: list[tuple[int, dict[str, Any]]] | None = None
    for number, record in read_json_lines(path, "trace", skip_broken="last"):
        where = f"{path}, line {number}"
        kind = record.get("type") if isinstance(record, dict) else None
        if kind == "run_start":
            if current is not None:
                runs.append(_rebuild(current, runs, path))
            current = [(number, record)]
        elif current is not None and kind == "run_end":
            if not isinstance(record.get("result"), dict):
                raise ConfigError(f"{where}: a run_end record without its result.")
            runs.append(RunResult.from_dict(record["result"], f"{where}: result"))
            current = None
        elif current is not None:
            current.append((number, record))
    if current is not None:
        runs.append(_rebuild(current, runs, path))
    if not runs:
        raise ConfigError(f"{path} holds no run (no run_start record); is it a trace?")
    return runs


def _rebuild(
    records: list[tuple[int, dict[str, Any]]], earlier: list[RunResult],
    path: str | os.PathLike[str],
) -> RunResult:
    """A RunResult from the records of a run that did not end: its steps, and the messages the
    model was sent (the history to resume from), rebuilt step by step; a continued run starts
    from the run before it in the file."""
    number, start = records[0]
    try:
        task = start["task"]
        if not isinstance(task, str):
            raise TypeError("task is not a string")
        resumed = int(start.get("resumed_steps") or 0)
    except (KeyError, TypeError, ValueError) as exc:
        raise ConfigError(f"{path}, line {number}: a malformed run_start record ({exc}).") from exc
    steps: dict[int, Step] = {}
    calls: dict[int, dict[str, Any]] = {}
    observations: dict[int, str] = {}
    for number, r in records[1:]:
        where = f"{path}, line {number}"
        try:
            kind, index = r.get("type"), r.get("step")
            if kind not in ("model_call", "tool_call", "note", "observation"):
                continue
            if not isinstance(index, int):
                raise TypeError(f"its step is {index!r}, not a step number")
            if kind == "model_call":
                calls[index] = r
                steps[index] = Step.from_dict({
                    **r, "index": index, "error": r.get("parse_error"),
                    "model_seconds": r.get("seconds"), "results": [],
                }, where)
            elif kind == "tool_call" and index in steps:
                steps[index].results.append(ToolResult.from_dict(r, where))
            elif kind == "note" and index in steps:
                note = [str(r["policy"]), str(r["label"]), str(r["text"])]
                if note not in steps[index].notes:
                    steps[index].notes.append(note)
            elif kind == "observation" and isinstance(r.get("message"), str):
                observations[index] = r["message"]
        except (KeyError, TypeError, AttributeError) as exc:
            raise ConfigError(f"{where}: a malformed {r.get('type', 'trace')} record "
                              f"({type(exc).__name__}: {exc}).") from exc
    ordered = [steps[i] for i in sorted(steps)]
    if resumed and earlier:  # a continued run: the run it continued, as the resume began
        messages, before = resumable(earlier[-1], start.get("system_prompt") or "",
                                     tuple(default_policies()))
        ordered = [*before[:resumed], *ordered]
    else:
        messages = [{"role": "system", "content": str(start.get("system_prompt") or "")},
                    {"role": "user", "content": task}]
    for step in ordered[resumed if resumed and earlier else 0:]:
        if not step.in_history or step.index not in calls:
            continue
        record = calls[step.index]
        kept = record.get("assistant_message") or strip_reasoning(step.raw_output)
        messages.append({"role": "assistant", "content": str(kept)})
        answer = _answer_sent(step, record, observations.get(step.index), task)
        if answer is None:
            break  # the run stopped during this step: a resume asks it again
        messages.append({"role": "user", "content": answer})
    return RunResult(
        task, "interrupted", None, ordered,
        error="The trace ends before the run did: the process stopped mid-run.",
        messages=messages,
    )


def _answer_sent(
    step: Step, record: dict[str, Any], observation: str | None, task: str
) -> str | None:
    """The user message that followed ``step`` (the observations, or what was wrong with an
    unusable reply), from the trace; rebuilt for traces written before it was recorded."""
    if step.stage is None:
        return record.get("feedback") or prompts.render("agent/parse_error",
                                                        problem=step.error or "")
    if not step.tool_calls:
        return None
    if observation is None and step.results and len(step.results) == len(step.tool_calls):
        observation = observation_message(step.results, task)
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
        if step.final_answer is not None and step.origin is None:
            following = result.steps[n] if n < len(result.steps) else None
            reasons = following.records.get("review", {}).get("reasons", []) \
                if following is not None and following.origin == "review" else None
            yield FinalAnswer(step, step.final_answer, draft=reasons is not None,
                              reasons=tuple(reasons or ()))
        elif step.final_answer is not None and step.origin == "best_effort":
            yield FinalAnswer(step, step.final_answer, best_effort=True)
        if step.origin == "review" and result.final_answer is not None:
            yield FinalAnswer(step, result.final_answer)
    yield RunFinished(result)
